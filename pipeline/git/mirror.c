/* Bare mirrors fetched with libgit2 (see mirror.h). */
#include "pipeline/git/mirror.h"

#include <errno.h>
#include <git2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct cred_state {
	const fbc_git_mirror_opts *opts;
	int tries;
};

static int credentials(git_credential **out, const char *url, const char *user_from_url,
		       unsigned int allowed, void *payload)
{
	struct cred_state *st = payload;

	(void)url;
	if (++st->tries > 3)
		return GIT_EAUTH; /* refused: do not loop */
	if ((allowed & GIT_CREDENTIAL_SSH_KEY) && st->opts->ssh_key_file)
		return git_credential_ssh_key_new(out, user_from_url ? user_from_url : "git", NULL,
						  st->opts->ssh_key_file, NULL);
	if ((allowed & GIT_CREDENTIAL_USERPASS_PLAINTEXT) && st->opts->token)
		return git_credential_userpass_plaintext_new(
			out, st->opts->token_user ? st->opts->token_user : "x-access-token",
			st->opts->token);
	return GIT_PASSTHROUGH;
}

static int git_fail(fbc_error *err, int code, const char *path, const char *what)
{
	const git_error *e = git_error_last();
	return fbc_error_set(err, code, path, "%s: %s", what,
			     e && e->message ? e->message : "failed");
}

int fbc_git_tls_init(const char *ca_file, fbc_error *err)
{
	FILE *f;

	if (!ca_file)
		return 0;
	/* a clear error for a missing file before libgit2's terse one */
	if (!(f = fopen(ca_file, "r")))
		return fbc_error_set(err, FBC_EINVAL, ca_file, "cannot read the CA file: %s",
				     strerror(errno));
	fclose(f);
	if (git_libgit2_init() < 0) /* never shut down: the setting would go with it */
		return fbc_error_set(err, FBC_EINTERNAL, ca_file, "cannot initialise libgit2");
	if (git_libgit2_opts(GIT_OPT_SET_SSL_CERT_LOCATIONS, ca_file, NULL) < 0)
		return git_fail(err, FBC_EINVAL, ca_file, "not a PEM certificate bundle");
	return 0;
}

int fbc_git_mirror_fetch(const char *path, const fbc_git_mirror_opts *opts, fbc_error *err)
{
	git_repository *repo = NULL;
	git_remote *remote = NULL;
	git_fetch_options fo;
	struct cred_state st = {opts, 0};
	static char heads[] = "+refs/heads/*:refs/heads/*";
	char review[256];
	char *specs[2] = {heads, NULL};
	git_strarray refspecs = {specs, 1};
	int rc = 0;

	if (!opts->url || !*opts->url)
		return fbc_error_set(err, FBC_EINVAL, path, "no URL to fetch from");
	if (git_libgit2_init() < 0)
		return fbc_error_set(err, FBC_EINTERNAL, path, "cannot initialise libgit2");
	if (git_repository_open_bare(&repo, path) < 0 && git_repository_init(&repo, path, 1) < 0) {
		rc = git_fail(err, FBC_EIO, path, "cannot create the mirror");
		goto done;
	}
	if (git_remote_create_anonymous(&remote, repo, opts->url) < 0) {
		rc = git_fail(err, FBC_EINVAL, path, "bad remote URL");
		goto done;
	}
	if (opts->review_refs) {
		snprintf(review, sizeof(review), "%s", opts->review_refs);
		specs[1] = review;
		refspecs.count = 2;
	}
	git_fetch_options_init(&fo, GIT_FETCH_OPTIONS_VERSION);
	fo.callbacks.credentials = credentials;
	fo.callbacks.payload = &st;
	fo.prune = GIT_FETCH_NO_PRUNE;
	fo.download_tags = GIT_REMOTE_DOWNLOAD_TAGS_NONE;
	if (git_remote_fetch(remote, &refspecs, &fo, "fbcd mirror fetch") < 0) {
		rc = git_fail(err, FBC_EUNAVAIL, path, "fetch failed");
		goto done;
	}
done:
	git_remote_free(remote);
	git_repository_free(repo);
	git_libgit2_shutdown();
	return rc;
}

int fbc_git_commit_info(char **author, long long *time, const char *path, const char *sha,
			fbc_error *err)
{
	git_repository *repo = NULL;
	git_commit *c = NULL;
	git_oid oid;
	int rc = 0;

	if (git_libgit2_init() < 0)
		return fbc_error_set(err, FBC_EINTERNAL, path, "cannot initialise libgit2");
	if (git_repository_open_bare(&repo, path) < 0) {
		rc = git_fail(err, FBC_EIO, path, "cannot open the mirror");
		goto done;
	}
	if (git_oid_fromstrp(&oid, sha) < 0 || git_commit_lookup(&c, repo, &oid) < 0) {
		rc = fbc_error_set(err, FBC_ENOTFOUND, sha, "no such commit in the mirror");
		goto done;
	}
	const git_signature *a = git_commit_author(c);
	if (!(*author = strdup(a && a->name ? a->name : ""))) {
		rc = fbc_error_set(err, FBC_ENOMEM, sha, "out of memory");
		goto done;
	}
	*time = (long long)git_commit_time(c);
done:
	git_commit_free(c);
	git_repository_free(repo);
	git_libgit2_shutdown();
	return rc;
}
