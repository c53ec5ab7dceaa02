/*
 * Base64 decoding exactly as Go's base64.StdEncoding.DecodeString: the
 * standard alphabet, padding required, CR and LF skipped anywhere, and on
 * failure the input byte offset Go reports ("illegal base64 data at input
 * byte N"). Used for FBC icons and olm.bundle.object data, and for YAML
 * !!binary scalars (go-yaml decodes those with the same function).
 * Pure functions; thread-safe.
 */
#ifndef FBC_BASE_BASE64_H
#define FBC_BASE_BASE64_H

#include "service/base/buf.h"

#include <stddef.h>

/* On success *out (malloc'd, NUL-terminated; out may be NULL to only
 * validate) and *out_len; on failure returns FBC_EPARSE and *bad_at is the
 * input byte Go reports. FBC_ENOMEM on OOM. */
int fbc_base64_decode(unsigned char **out, size_t *out_len, size_t *bad_at, const char *s,
		      size_t len);

/* The same into buf, its contents replaced (buf->len the decoded bytes, a
 * NUL after them): no allocation once buf is large enough, so that a loop
 * decoding many values reuses one buffer. FBC_ELIMIT past buf's max. */
int fbc_base64_decode_buf(fbc_buf *buf, size_t *bad_at, const char *s, size_t len);

/* The same without the vector loop (AVX2 on x86-64 when the CPU has it):
 * the reference the tests and the fuzz target compare it with. */
int fbc_base64_decode_portable(unsigned char **out, size_t *out_len, size_t *bad_at, const char *s,
			       size_t len);

#endif
