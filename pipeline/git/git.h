/*
 * fbc_git: the one module that sees libgit2. It opens a repository (bare or
 * not, never checked out), resolves revisions, finds merge bases, diffs the
 * trees of two commits, reads blobs, walks history, and exposes the tree of a
 * commit as an fbc_tree (service/base/tree.h) so that the loader, bundle and
 * template code read a git commit exactly as they read a directory.
 *
 * Ids are object ids in lowercase hex (FBC_GIT_ID_MAX with the NUL). Every
 * libgit2 failure becomes an fbc_error naming the revision or path and
 * libgit2's message; a missing object (shallow or corrupt repository) is
 * FBC_ENOTFOUND or FBC_EIO, never a crash.
 *
 * Ownership: fbc_git_open returns an opaque handle (fbc_git_free). Trees
 * opened with fbc_git_tree_open hold a reference on the handle, so they may
 * outlive the caller's own reference (the handle is freed with its last
 * tree). Vectors filled by the listing functions are released with their
 * _dispose function.
 * Thread-safety: every function may be called from several threads on the
 * same handle; calls into libgit2 are serialised by a mutex per handle
 * (libgit2 objects are not safe to share between threads), so parallel
 * readers contend on object lookup and inflation only.
 */
#ifndef FBC_PIPELINE_GIT_H
#define FBC_PIPELINE_GIT_H

#include "service/base/error.h"
#include "service/base/tree.h"
#include "service/base/vec.h"

#include <stddef.h>
#include <stdint.h>

#define FBC_GIT_ID_MAX FBC_TREE_ID_MAX

typedef struct fbc_git fbc_git;

/* Open the repository at path: a work tree (its .git is found), a .git
 * directory or a bare repository. FBC_ENOTFOUND when there is none. */
int fbc_git_open(fbc_git **out, const char *path, fbc_error *err);
void fbc_git_free(fbc_git *g);
/* The path given to fbc_git_open (for messages). */
const char *fbc_git_path(const fbc_git *g);

/* Resolve rev (anything git rev-parse accepts: sha, prefix, branch, tag,
 * "HEAD~2", "refs/pull/1/head") to a commit id. FBC_ENOTFOUND when it names
 * nothing, FBC_EINVAL when it names something that is not a commit. */
int fbc_git_resolve(char out[FBC_GIT_ID_MAX], fbc_git *g, const char *rev, fbc_error *err);

/* The committer time of commit rev (seconds since the epoch). */
int fbc_git_commit_time(int64_t *out, fbc_git *g, const char *rev, fbc_error *err);

/* The merge base of two commits (ids or revs). FBC_ENOTFOUND when the
 * histories are unrelated (or cut by a shallow clone). */
int fbc_git_merge_base(char out[FBC_GIT_ID_MAX], fbc_git *g, const char *a, const char *b,
		       fbc_error *err);

/* The id of the tree of commit rev, or of the object at path in it ("" for
 * the root tree). kind (may be NULL) receives FBC_TREE_DIR, FILE, LINK or
 * OTHER. FBC_ENOTFOUND when the path does not exist. */
int fbc_git_object_id(char out[FBC_GIT_ID_MAX], fbc_tree_kind *kind, fbc_git *g, const char *rev,
		      const char *path, fbc_error *err);

typedef enum fbc_git_status {
	FBC_GIT_ADDED = 'A',
	FBC_GIT_MODIFIED = 'M',
	FBC_GIT_DELETED = 'D',
	FBC_GIT_RENAMED = 'R',
	FBC_GIT_TYPECHANGE = 'T'
} fbc_git_status;

typedef struct fbc_git_change {
	fbc_git_status status;
	char *old_path;		     /* NULL for ADDED */
	char *new_path;		     /* NULL for DELETED */
	char old_id[FBC_GIT_ID_MAX]; /* "" for ADDED */
	char new_id[FBC_GIT_ID_MAX]; /* "" for DELETED */
	uint32_t old_mode, new_mode; /* git file modes (0100644, 0120000, 0160000...) */
} fbc_git_change;

/* Files changed from commit `from` to commit `to` (revs), appended to out
 * (a vec of fbc_git_change, initialised by the caller) sorted by path.
 * Renames are detected (50% similarity, as git's default). */
int fbc_git_diff(fbc_vec *out, fbc_git *g, const char *from, const char *to, fbc_error *err);
void fbc_git_changes_dispose(fbc_vec *changes);
/* The path a change is about: new_path, or old_path for a deletion. */
const char *fbc_git_change_path(const fbc_git_change *c);

/* Read the blob at path in commit rev (links are not followed). *data is
 * malloc'd (NUL-terminated, not counted in *len). FBC_ELIMIT when larger than
 * max, FBC_ENOTFOUND when absent, FBC_EINVAL when not a blob. */
int fbc_git_read(char **data, size_t *len, fbc_git *g, const char *rev, const char *path,
		 size_t max, fbc_error *err);

/* The tree of commit rev as an fbc_tree: list, follow and read as the
 * directory backend (ids are object ids, symlinks resolved inside the root
 * only, submodules are FBC_TREE_OTHER). The label is "<repo>@<short id>". */
int fbc_git_tree_open(fbc_tree **out, fbc_git *g, const char *rev, fbc_error *err);

typedef struct fbc_git_commit {
	char id[FBC_GIT_ID_MAX];
	int64_t time;  /* committer time, seconds since the epoch */
	char *summary; /* first line of the message */
	char *author;  /* author name */
	unsigned parents;
} fbc_git_commit;

/* The commits reachable from rev, oldest first (topological order), at most
 * max (0 = no limit; FBC_ELIMIT when there are more); first_parent follows
 * only first parents (the history of a branch as merged). */
int fbc_git_log(fbc_vec *out, fbc_git *g, const char *rev, int first_parent, size_t max,
		fbc_error *err);
void fbc_git_commits_dispose(fbc_vec *commits);

typedef struct fbc_git_added {
	char *path; /* a directory directly under the prefix */
	char commit[FBC_GIT_ID_MAX];
	int64_t time;
} fbc_git_added;

/* For each directory directly under `prefix` at rev (e.g. "operators/foo"
 * gives its bundle directories), the first commit on rev's first-parent
 * history whose tree has it, in order of that commit then name (the order
 * bundles were added). Directories deleted by rev are not listed. */
int fbc_git_first_added(fbc_vec *out, fbc_git *g, const char *rev, const char *prefix,
			fbc_error *err);
void fbc_git_added_dispose(fbc_vec *added);

#endif
