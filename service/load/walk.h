/*
 * The loader's walk of a tree (internal to service/load): files in lexical
 * order (§1.1), .indexignore (§1.2), the tree-wide limits; each file an
 * entry the parser threads fill and the loading thread delivers.
 */
#ifndef FBC_LOAD_WALK_H
#define FBC_LOAD_WALK_H

#include "service/load/ignore.h"
#include "service/load/internal.h"
#include "service/load/source.h"

#include <stdbool.h>
#include <stddef.h>

typedef struct fbc_load_entry {
	char *rel;		  /* slash-separated, relative to the root */
	char *path;		  /* tree path to read (a link's target), root-relative */
	char *finding;		  /* non-NULL: not a loadable file, report this (L1) */
	const char *code;	  /* of the finding */
	size_t size;		  /* from the tree listing, for max_total_bytes */
	char id[FBC_TREE_ID_MAX]; /* content id from the tree ("" unknown): the file cache's key */
	fbc_vec items;		  /* of fbc_load_item, filled by the parser */
	int rc;			  /* FBC_ENOMEM from the parser */
	bool done;
	bool decided; /* no .indexignore pattern read later can match it */
} fbc_load_entry;

typedef struct fbc_load_walk {
	fbc_tree *t;
	fbc_vec entries; /* of fbc_load_entry *, in walk order (NULL: moved to kept) */
	fbc_ignore *ig;
	const fbc_load_limits *lim;
	size_t seen;	   /* entries found, to stop a runaway walk */
	size_t ig_pending; /* directories being walked whose .indexignore is not read yet */
	fbc_error *err;
	/* selection (.indexignore, max_files, max_total_bytes), in walk order */
	fbc_vec kept;	 /* of fbc_load_entry *: the files loaded, in walk order */
	size_t selected; /* entries[0, selected) are kept or dropped */
	size_t total;	 /* bytes of the kept */
	bool limited;	 /* a LIMIT entry is kept: nothing after it is */
	/* called after each directory (the pool takes what was selected) */
	int (*progress)(void *ctx);
	void *progress_ctx;
	bool stop; /* the load ends: walk no further */
} fbc_load_walk;

/* Walk the directory rel (recursively) into w->entries, reading every
 * .indexignore; w->progress after each directory. 0 or a hard error (a
 * file that cannot be read is an entry with its finding). */
int fbc_load_walk_dir(fbc_load_walk *w, const fbc_load_source *src, const char *rel);
/* Keep or drop the walk's entries in order, as far as each is decided (all
 * of them: the walk is over): .indexignore, then max_files and
 * max_total_bytes; a LIMIT entry is the last one kept. */
int fbc_load_walk_select(fbc_load_walk *w, bool all);
/* Entries (fbc_load_entry *; NULL slots skipped) and the vector. */
void fbc_load_entries_dispose(fbc_vec *v, const fbc_load_stage *stage);

#endif
