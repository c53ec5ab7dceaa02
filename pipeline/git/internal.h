/*
 * Private to pipeline/git: the handle and helpers shared by git.c and
 * tree.c. Functions named *_locked expect the handle's mutex held.
 */
#ifndef FBC_PIPELINE_GIT_INTERNAL_H
#define FBC_PIPELINE_GIT_INTERNAL_H

#include "pipeline/git/git.h"

#include <git2.h>
#include <pthread.h>

struct fbc_git {
	git_repository *repo;
	char *path;
	pthread_mutex_t mu;
	unsigned refs; /* the opener plus every open tree */
};

void fbc_git_lock(fbc_git *g);
void fbc_git_unlock(fbc_git *g);
void fbc_git_ref(fbc_git *g);
/* Map libgit2's last error (lgrc its return code) to an fbc_error. */
int fbc_git_fail(fbc_error *err, int lgrc, const char *where, const char *what);
void fbc_git_hex(char out[FBC_GIT_ID_MAX], const git_oid *oid);
fbc_tree_kind fbc_git_kind(unsigned mode);
int fbc_git_commit_locked(git_commit **out, fbc_git *g, const char *rev, fbc_error *err);
/* Look a blob up after checking its size in the object header (no inflation
 * of a blob over max). */
int fbc_git_blob_locked(git_blob **out, fbc_git *g, const git_oid *id, const char *path, size_t max,
			fbc_error *err);

#endif
