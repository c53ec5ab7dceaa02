/*
 * fbc_git_mirror: the bare mirror of a watched repository (pipeline.md §2),
 * kept with libgit2 under the data directory: created on first use, then
 * fetched with the tracked branches and the forge's review refs. Nothing is
 * checked out; readers open the mirror with fbc_git_open.
 *
 * Credentials are values read by the caller from their references just
 * before the call and only passed through to libgit2 (HTTPS token as the
 * password, SSH key file); they are never logged. One fetch per mirror at a
 * time is the caller's job (an advisory lock across replicas).
 * Thread-safety: separate mirrors may be fetched concurrently.
 */
#ifndef FBC_PIPELINE_GIT_MIRROR_H
#define FBC_PIPELINE_GIT_MIRROR_H

#include "service/base/error.h"

typedef struct fbc_git_mirror_opts {
	const char *url;	  /* https://, http://, ssh://, git@host:path, file:// */
	const char *review_refs;  /* the forge's review refspec (refs/pull/N/head), or NULL */
	const char *token;	  /* HTTPS password (token), or NULL */
	const char *token_user;	  /* user name sent with the token ("x-access-token") */
	const char *ssh_key_file; /* private key for ssh URLs, or NULL */
} fbc_git_mirror_opts;

/* Create the bare repository at path if needed and fetch
 * every branch (refs/heads/ to refs/heads/) and the review refs from opts->url, pruning
 * nothing. FBC_EUNAVAIL on network or authentication failures (retried as
 * jobs), FBC_EIO on local ones. */
int fbc_git_mirror_fetch(const char *path, const fbc_git_mirror_opts *opts, fbc_error *err);

/* Trust the PEM certificates of file instead of the system CAs for every
 * HTTPS fetch of this process (libgit2's TLS settings are process-wide).
 * Called once at start, before any fetch; keeps libgit2 initialised for the
 * life of the process so that the setting is never reset. NULL: the system
 * CAs. FBC_EINVAL when the file cannot be read as PEM certificates. */
int fbc_git_tls_init(const char *ca_file, fbc_error *err);

/* Author name and committer time of commit sha in the repository at path.
 * *author is malloc'd. FBC_ENOTFOUND when the commit is absent. */
int fbc_git_commit_info(char **author, long long *time, const char *path, const char *sha,
			fbc_error *err);

#endif
