/*
 * fbc_tree: a read-only tree of files. It is the one way service/ code reads
 * catalogs, bundle directories and templates, whatever holds them: a
 * directory on disk (fbc_tree_open_dir), files in memory (fbc_tree_open_mem,
 * for tests and uploads), or a git tree at some commit (implemented over
 * libgit2 in pipeline/git; service/ never sees libgit2 types).
 *
 * Paths are relative to the tree's root, '/'-separated, with no leading "/"
 * or "./" and no "." or ".." components; "" names the root itself.
 *
 * Entries are reported as they are stored (lstat level): a symbolic link is
 * FBC_TREE_LINK; fbc_tree_follow resolves it, inside the root only (a link
 * whose target leaves the root is an error, never followed).
 *
 * Content ids: a backend that knows a stable id for an entry's content (git:
 * the blob or tree object id in hex) fills `id`; equal ids mean equal content
 * (for directories: equal whole subtrees). An empty id means "unknown": the
 * caller hashes bytes itself if it wants to cache.
 *
 * Ownership: an fbc_tree is opaque and owned by whoever opened it
 * (fbc_tree_free). Entry names returned by fbc_tree_list are owned by the
 * vec (fbc_tree_entries_dispose). fbc_tree_read returns a blob to release
 * with fbc_tree_blob_release before the tree is freed.
 * Thread-safety: list, follow and read may be called from several threads at
 * once on the same tree (the loader parses on a thread pool); backends
 * serialise internally where their library needs it. open/free are not.
 */
#ifndef FBC_BASE_TREE_H
#define FBC_BASE_TREE_H

#include "service/base/error.h"
#include "service/base/vec.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum fbc_tree_kind {
	FBC_TREE_FILE = 1, /* a regular file */
	FBC_TREE_DIR = 2,  /* a directory (git: a tree) */
	FBC_TREE_LINK = 3, /* a symbolic link, not followed */
	FBC_TREE_OTHER = 4 /* FIFO, socket, device, git submodule: never read */
} fbc_tree_kind;

#define FBC_TREE_ID_MAX 65 /* hex digits of a SHA-256 object id, plus NUL */

typedef struct fbc_tree_entry {
	char *name;		  /* one path component (list) or a root-relative path (follow) */
	fbc_tree_kind kind;	  /* FBC_TREE_* */
	uint64_t size;		  /* FBC_TREE_FILE: size in bytes; 0 otherwise */
	char id[FBC_TREE_ID_MAX]; /* content id, "" when the backend has none */
} fbc_tree_entry;

typedef struct fbc_tree_blob {
	const char *data; /* len bytes, not NUL-terminated; NULL when len is 0 */
	size_t len;
	void *priv; /* the backend's handle, for release */
} fbc_tree_blob;

typedef struct fbc_tree fbc_tree;

/* What a backend implements (for pipeline/git and tests). `self` is the
 * backend's state, given to fbc_tree_create. */
typedef struct fbc_tree_ops {
	/* Entries of directory `dir`, appended to `out` (a vec of
	 * fbc_tree_entry, names malloc'd) in any order. FBC_ENOTFOUND if dir
	 * does not exist, FBC_EINVAL if it is not a directory. */
	int (*list)(void *self, fbc_vec *out, const char *dir, fbc_error *err);
	/* Resolve `path` through symbolic links (in the path's directories too)
	 * to what it names: out->name is the malloc'd root-relative path of the
	 * target, out->kind its kind (never LINK), size and id as for list.
	 * FBC_ENOTFOUND when it does not exist (dangling), FBC_EINVAL when it
	 * resolves outside the root, FBC_ELIMIT on a loop (more than 40 links). */
	int (*follow)(void *self, fbc_tree_entry *out, const char *path, fbc_error *err);
	/* Read regular file `path` (not a link: follow first). FBC_ELIMIT with
	 * nothing read when it is larger than max bytes. */
	int (*read)(void *self, fbc_tree_blob *out, const char *path, size_t max, fbc_error *err);
	void (*release)(void *self, fbc_tree_blob *blob);
	void (*free)(void *self);
} fbc_tree_ops;

/* Wrap a backend: *out takes ownership of self (ops->free(self) on
 * fbc_tree_free, also when this fails). label names the tree in messages
 * (a directory path, "repo@commit"); copied. */
int fbc_tree_create(fbc_tree **out, const fbc_tree_ops *ops, void *self, const char *label,
		    fbc_error *err);
void fbc_tree_free(fbc_tree *t);
const char *fbc_tree_label(const fbc_tree *t);

/* A directory on disk. FBC_ENOTFOUND / FBC_EINVAL when root is missing or
 * not a directory. Ids are empty. */
int fbc_tree_open_dir(fbc_tree **out, const char *root, fbc_error *err);
/* The disk path of a tree opened with fbc_tree_open_dir; NULL for any
 * other backend (sub-views included). */
const char *fbc_tree_dir_path(const fbc_tree *t);

/* Files in memory: paths[i] holds data[i] (lens[i] bytes); directories are
 * implied by the paths. Everything is copied. A path ending in "@" followed
 * by nothing is not special: links cannot be made here (tests needing links
 * use a directory). */
int fbc_tree_open_mem(fbc_tree **out, const char *const *paths, const char *const *data,
		      const size_t *lens, size_t n, const char *label, fbc_error *err);

/* A view of directory `dir` of t as a tree of its own (paths relative to
 * dir; links may not leave dir). t must outlive the view. The label is
 * "<t's label>/<dir>". */
int fbc_tree_sub(fbc_tree **out, fbc_tree *t, const char *dir, fbc_error *err);

int fbc_tree_list(fbc_tree *t, fbc_vec *out, const char *dir, fbc_error *err);
int fbc_tree_follow(fbc_tree *t, fbc_tree_entry *out, const char *path, fbc_error *err);
int fbc_tree_read(fbc_tree *t, fbc_tree_blob *out, const char *path, size_t max, fbc_error *err);
void fbc_tree_blob_release(fbc_tree *t, fbc_tree_blob *blob);

/* Kind, size and id of one path without following a final link (the
 * parent directories must be real directories). FBC_ENOTFOUND if absent. */
int fbc_tree_stat(fbc_tree *t, fbc_tree_entry *out, const char *path, fbc_error *err);

/* Release the names of a vec of fbc_tree_entry and the vec itself. */
void fbc_tree_entries_dispose(fbc_vec *entries);
void fbc_tree_entry_dispose(fbc_tree_entry *e);
/* Sort a vec of fbc_tree_entry by name, bytewise (Go's fs.ReadDir order). */
void fbc_tree_entries_sort(fbc_vec *entries);

/* Join a directory and a name into a malloc'd path ("" + "a" = "a"). NULL on
 * out-of-memory. */
char *fbc_tree_join(const char *dir, const char *name);

#endif
