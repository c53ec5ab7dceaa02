/*
 * Secrets by reference (pipeline.md §2): a repository names a file or an
 * environment variable; the value is read here, when it is used, and never
 * stored, logged or copied into a job. Errors name the reference, never the
 * content. Thread-safe (getenv is only read).
 */
#ifndef FBC_PIPELINE_FORGE_SECRET_H
#define FBC_PIPELINE_FORGE_SECRET_H

#include "service/base/error.h"

#define FBC_SECRET_MAX 65536

/* Read the secret named by file (preferred when both are set) or env.
 * Trailing newlines of a file are dropped. *out is malloc'd; release it with
 * fbc_secret_free (which wipes it). FBC_ENOTFOUND when neither is set or the
 * variable is unset/empty, FBC_EIO when the file cannot be read. */
int fbc_secret_read(char **out, const char *file, const char *env, fbc_error *err);
void fbc_secret_free(char *secret);

#endif
