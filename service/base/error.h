/*
 * fbc_error: the caller-owned error record every fallible function fills.
 *
 * Functions return 0 on success or a negative FBC_E* code; detail (which
 * file, field or path, and why) goes into an fbc_error passed last. The
 * record is a fixed-size value so that even out-of-memory can be reported
 * without allocating. No thread-local state: safe to use from any thread as
 * long as each thread has its own record.
 */
#ifndef FBC_BASE_ERROR_H
#define FBC_BASE_ERROR_H

#include <stddef.h>

enum {
	FBC_OK = 0,
	FBC_ENOMEM = -1,    /* allocation failed */
	FBC_EINVAL = -2,    /* invalid argument or input */
	FBC_EIO = -3,	    /* operating-system I/O failure */
	FBC_ELIMIT = -4,    /* an input bound was exceeded */
	FBC_ENOTFOUND = -5, /* a named thing does not exist */
	FBC_EPARSE = -6,    /* syntax error in some input */
	FBC_ECONFLICT = -7, /* state conflict (duplicate, concurrent change) */
	FBC_EINTERNAL = -8, /* a failure of a library we call */
	FBC_EUNAVAIL = -9,  /* a dependency (database, network peer) is unavailable */
	FBC_EAUTH = -10,    /* missing or insufficient credentials */
};

#define FBC_ERROR_WHERE_MAX   512
#define FBC_ERROR_MESSAGE_MAX 1024

typedef struct fbc_error {
	int code;			 /* FBC_E*, 0 when unset */
	char where[FBC_ERROR_WHERE_MAX]; /* file, field or path; may be empty */
	char message[FBC_ERROR_MESSAGE_MAX];
} fbc_error;

void fbc_error_init(fbc_error *err);

/* Fill err (if non-NULL) and return code, so callers can `return fbc_error_set(...)`.
 * where may be NULL. Over-long text is truncated, never overflowed. */
int fbc_error_set(fbc_error *err, int code, const char *where, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* Prefix the existing message with "prefix: " (context added by an outer layer). */
void fbc_error_prefix(fbc_error *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Stable short name of a code: "ENOMEM", "EINVAL", ... */
const char *fbc_error_code_name(int code);

#endif
