/*
 * Reading a load's files (internal to service/load): from a tree, or for a
 * directory tree straight from disk into a reusable mapped buffer.
 */
#ifndef FBC_LOAD_SOURCE_H
#define FBC_LOAD_SOURCE_H

#include "service/base/tree.h"

#include <stdbool.h>
#include <stddef.h>

/* A parser thread's file buffer, reused from one file to the next so that
 * its pages are provided once, not once a file: a data_alloc'd mapping of
 * size bytes (0: none yet), unmapped when the load ends. */
typedef struct fbc_load_rbuf {
	char *p;
	size_t size;
} fbc_load_rbuf;

/* Unmap rb's buffer (it may be reused after). */
void fbc_load_rbuf_dispose(fbc_load_rbuf *rb);

/* Where a load reads file bytes: through the tree, or straight from disk
 * for a directory tree (same bytes; read_file keeps contents out of the
 * malloc heap, see data_alloc). */
typedef struct fbc_load_source {
	fbc_tree *t;
	const char *disk; /* fbc_tree_dir_path(t), or NULL */
} fbc_load_source;

typedef struct fbc_load_src_data {
	const char *data;
	size_t len;
	fbc_load_rbuf own;  /* read_file's buffer when the caller lends none */
	fbc_tree_blob blob; /* the tree's blob (other backends) */
} fbc_load_src_data;

/* The reason in a tree backend's message ("cannot open: No such file" ->
 * "No such file"), as findings put it. */
const char *fbc_load_tree_reason(const fbc_error *e);

/* Read path (root-relative, no link) of at most max bytes, from disk into
 * rb's buffer (NULL: one of its own). Returns 0, FBC_ELIMIT, FBC_ENOMEM or
 * another code with *reason set to why. */
int fbc_load_src_read(const fbc_load_source *src, fbc_load_src_data *out, fbc_load_rbuf *rb,
		      const char *path, size_t max, char *reason, size_t reason_len);
void fbc_load_src_release(const fbc_load_source *src, fbc_load_src_data *d);

#endif
