/*
 * Container image references (spec fbc-validation.md §2.6, rules C14/C15):
 * the docker reference grammar with normalisation, as
 * reference.ParseNormalizedNamed (go.podman.io/image/v5) accepts it.
 *
 * Pure functions without global state: thread-safe.
 */
#ifndef FBC_FBC_IMAGEREF_H
#define FBC_FBC_IMAGEREF_H

#include "service/base/error.h"

#include <stddef.h>

/* A parsed, normalised reference. Fields are NUL-terminated copies. */
typedef struct fbc_imageref {
	char domain[256]; /* "docker.io" when the reference names none */
	char path[256];	  /* repository path, "library/" added for docker.io one-component names */
	char tag[129];	  /* "" when absent */
	char digest[256]; /* "algo:hex", "" when absent */
} fbc_imageref;

/* Parse and validate s. Returns 0, or FBC_EINVAL with err->message holding
 * the docker library's error text (e.g. "invalid reference format",
 * "repository name must be lowercase"). out may be NULL. */
int fbc_imageref_parse(fbc_imageref *out, const char *s, fbc_error *err);

#endif
