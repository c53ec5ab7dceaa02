/*
 * fbc_forge_api: the one client for GitHub's and GitLab's REST APIs (check
 * runs, commit statuses, comments, merges — pipeline.md §6, §7), over
 * pipeline/net (connection reuse, Retry-After, 429/5xx retries, bounded
 * bodies, a request log without credentials).
 *
 *     fbc_forge_api *f;
 *     fbc_forge_api_open(&f, "github", "https://api.github.com", token, &err);
 *     json_t *out; long status;
 *     fbc_forge_api_call(f, "POST", "/repos/o/r/check-runs", body, &out, &status, &err);
 *
 * A call that gets an answer returns 0 whatever the status; the caller maps
 * it with fbc_forge_api_error (transient: 429, 5xx, an exhausted rate limit;
 * else permanent), which quotes the forge's own message. The token is sent
 * as GitHub's `Authorization: Bearer` or GitLab's `PRIVATE-TOKEN` and is
 * never logged or put in an error.
 * Ownership: the client copies the token (wiped at free). Thread-safety:
 * one client per thread.
 */
#ifndef FBC_PIPELINE_FORGE_API_H
#define FBC_PIPELINE_FORGE_API_H

#include "service/base/error.h"

#include <jansson.h>
#include <stdbool.h>

typedef struct fbc_forge_api fbc_forge_api;

/* kind "github" or "gitlab"; api the base URL (no trailing slash needed);
 * token may be NULL (anonymous); ca_file a PEM bundle trusted instead of
 * the system CAs, or NULL. */
int fbc_forge_api_open(fbc_forge_api **out, const char *kind, const char *api, const char *token,
		       const char *ca_file, fbc_error *err);
void fbc_forge_api_free(fbc_forge_api *f);
bool fbc_forge_api_gitlab(const fbc_forge_api *f);

/* method path (appended to the base URL) with an optional JSON body; *out
 * (may be NULL) receives the decoded JSON answer or NULL. */
int fbc_forge_api_call(fbc_forge_api *f, const char *method, const char *path, json_t *body,
		       json_t **out, long *status, fbc_error *err);
/* The error of a non-2xx answer: FBC_EUNAVAIL for 429, 5xx and a 403 with
 * an exhausted rate limit or a Retry-After (retried as a job), FBC_EINVAL
 * otherwise; the message names the call and quotes the forge's message. */
int fbc_forge_api_error(const fbc_forge_api *f, const char *what, long status, json_t *answer,
			fbc_error *err);
/* project as a path component: GitHub "owner/repo" as is, GitLab
 * URL-encoded ("group%2Fproject") unless numeric. malloc'd. */
char *fbc_forge_api_project(const fbc_forge_api *f, const char *project);

#endif
