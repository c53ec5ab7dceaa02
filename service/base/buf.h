/*
 * fbc_buf: a growable byte buffer with a hard maximum size.
 *
 * Used for request bodies, file contents and generated text. Every append
 * is checked: exceeding `max` returns FBC_ELIMIT and leaves the buffer as it
 * was. The data is always NUL-terminated (the NUL is not counted in len).
 * Caller-allocated value type: fbc_buf_init, then fbc_buf_dispose.
 * Not thread-safe; one owner at a time.
 */
#ifndef FBC_BASE_BUF_H
#define FBC_BASE_BUF_H

#include <stdarg.h>
#include <stddef.h>

typedef struct fbc_buf {
	char *data; /* NULL until the first append */
	size_t len;
	size_t cap;
	size_t max; /* hard limit on len; 0 means SIZE_MAX / 2 */
} fbc_buf;

void fbc_buf_init(fbc_buf *b, size_t max);
void fbc_buf_dispose(fbc_buf *b);
void fbc_buf_reset(fbc_buf *b); /* len = 0, memory kept */

int fbc_buf_reserve(fbc_buf *b, size_t extra);
int fbc_buf_append(fbc_buf *b, const void *p, size_t n);
int fbc_buf_puts(fbc_buf *b, const char *s);
int fbc_buf_putc(fbc_buf *b, char c);
int fbc_buf_printf(fbc_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int fbc_buf_vprintf(fbc_buf *b, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));

/* Append s as a JSON string literal (quotes included, no HTML escaping). */
int fbc_buf_put_json_string(fbc_buf *b, const char *s, size_t n);

/* Give the data to the caller (free() it); the buffer becomes empty.
 * Returns an empty allocated string when nothing was appended; NULL on OOM. */
char *fbc_buf_detach(fbc_buf *b, size_t *len_out);

#endif
