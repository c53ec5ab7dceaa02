/*
 * fbc_ignore: the `.indexignore` matcher of the FBC loader (spec
 * fbc-validation.md §1.2), with the go-git gitignore dialect that opm uses:
 * patterns carry a domain (the directory holding the .indexignore), name
 * patterns vs anchored patterns, `**`, dir-only `x/`, negation `!x`, globs
 * `*` `?` `[...]` per path segment, and last-match-wins over all patterns
 * in the order they were added.
 *
 * Owns copies of everything added. Build on one thread; once built,
 * fbc_ignore_match may be called concurrently.
 */
#ifndef FBC_LOAD_IGNORE_H
#define FBC_LOAD_IGNORE_H

#include "service/base/error.h"

#include <stdbool.h>
#include <stddef.h>

typedef struct fbc_ignore fbc_ignore;

/* A matcher holding the implicit root pattern `.indexignore`. */
int fbc_ignore_create(fbc_ignore **out, fbc_error *err);
void fbc_ignore_free(fbc_ignore *ig);

/* Add one pattern line as written (it is trimmed; blank lines and `#`
 * comments are skipped). domain: slash-separated directory relative to
 * the root, "" for the root itself. */
int fbc_ignore_add_pattern(fbc_ignore *ig, const char *domain, const char *line, fbc_error *err);

/* Add every line of an .indexignore file found in directory `domain`. */
int fbc_ignore_add_file(fbc_ignore *ig, const char *domain, const char *data, size_t len,
			fbc_error *err);

/* True when the file at `path` (slash-separated, relative to the root) is
 * ignored. Directories are never matched: the loader never prunes. */
bool fbc_ignore_match(const fbc_ignore *ig, const char *path);

/* filepath.Match-style glob for one path segment (exposed for tests). A
 * malformed pattern matches nothing. */
bool fbc_ignore_glob(const char *pattern, const char *name);

#endif
