/*
 * fbc_diags: the list of catalog findings (validation errors) that loading
 * and validation produce. Each finding has a stable rule code (L1..L12,
 * C1..C28, V1..V12, or an fbcd code such as "LIMIT"), a message, the file
 * and line of the blob at fault, and the package, channel and bundle where
 * they apply.
 *
 * Unlike an fbc_error (which aborts an operation), diags accumulate: a
 * catalog can have many. The list owns all its strings (an internal arena).
 * Not thread-safe: one writer at a time.
 */
#ifndef FBC_BASE_DIAG_H
#define FBC_BASE_DIAG_H

#include "service/base/arena.h"
#include "service/base/vec.h"

#include <stdarg.h>
#include <stddef.h>

typedef struct fbc_loc {
	const char *file; /* slash-separated, relative to the catalog root; NULL if unknown */
	int line;	  /* 1-based line where the blob starts; 0 if unknown */
} fbc_loc;

typedef struct fbc_diag {
	const char *code;    /* "V4", ... */
	const char *message; /* one line, no trailing newline */
	const char *file;    /* may be NULL */
	int line;	     /* 0 if unknown */
	const char *package; /* NULL when not applicable */
	const char *channel;
	const char *bundle;
} fbc_diag;

typedef struct fbc_diags {
	fbc_vec items; /* of fbc_diag */
	fbc_arena *arena;
	size_t max;	/* at most this many are kept (0 = 10000) */
	size_t dropped; /* findings beyond max, counted but not kept */
} fbc_diags;

int fbc_diags_init(fbc_diags *d, size_t max);
void fbc_diags_dispose(fbc_diags *d);

/* Record a finding. Strings are copied. pkg/channel/bundle may be NULL.
 * Returns 0 or FBC_ENOMEM. */
int fbc_diags_add(fbc_diags *d, const char *code, const fbc_loc *loc, const char *pkg,
		  const char *channel, const char *bundle, const char *fmt, ...)
	__attribute__((format(printf, 7, 8)));
int fbc_diags_vadd(fbc_diags *d, const char *code, const fbc_loc *loc, const char *pkg,
		   const char *channel, const char *bundle, const char *fmt, va_list ap)
	__attribute__((format(printf, 7, 0)));

/* Append every finding of `from` to d, in order, as if each were added to d
 * (d's max applies; from's dropped count is added to d's). 0 or FBC_ENOMEM. */
int fbc_diags_append(fbc_diags *d, const fbc_diags *from);

/* Sort deterministically (file, line, package, channel, bundle, code, message)
 * and drop exact duplicates (a bundle in several channels is reported once). */
void fbc_diags_sort(fbc_diags *d);

static inline size_t fbc_diags_count(const fbc_diags *d)
{
	return d->items.len;
}
static inline const fbc_diag *fbc_diags_at(const fbc_diags *d, size_t i)
{
	return &((const fbc_diag *)d->items.items)[i];
}

#endif
