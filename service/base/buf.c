#include "service/base/buf.h"

#include "service/base/error.h"
#include "service/base/utf8.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void fbc_buf_init(fbc_buf *b, size_t max)
{
	b->data = NULL;
	b->len = 0;
	b->cap = 0;
	b->max = max ? max : SIZE_MAX / 2;
}

void fbc_buf_dispose(fbc_buf *b)
{
	if (!b)
		return;
	free(b->data);
	b->data = NULL;
	b->len = 0;
	b->cap = 0;
}

void fbc_buf_reset(fbc_buf *b)
{
	b->len = 0;
	if (b->data)
		b->data[0] = '\0';
}

int fbc_buf_reserve(fbc_buf *b, size_t extra)
{
	size_t need, ncap;
	char *p;

	if (extra > b->max || b->len > b->max - extra)
		return FBC_ELIMIT;
	need = b->len + extra + 1;
	if (need <= b->cap)
		return 0;
	ncap = b->cap ? b->cap : 64;
	while (ncap < need)
		ncap = ncap > SIZE_MAX / 2 ? need : ncap * 2;
	p = realloc(b->data, ncap);
	if (!p)
		return FBC_ENOMEM;
	b->data = p;
	b->cap = ncap;
	return 0;
}

int fbc_buf_append(fbc_buf *b, const void *p, size_t n)
{
	int rc = fbc_buf_reserve(b, n);

	if (rc)
		return rc;
	if (n)
		memcpy(b->data + b->len, p, n);
	b->len += n;
	b->data[b->len] = '\0';
	return 0;
}

int fbc_buf_puts(fbc_buf *b, const char *s)
{
	return fbc_buf_append(b, s, strlen(s));
}

int fbc_buf_putc(fbc_buf *b, char c)
{
	return fbc_buf_append(b, &c, 1);
}

int fbc_buf_vprintf(fbc_buf *b, const char *fmt, va_list ap)
{
	va_list ap2;
	int n, rc;

	va_copy(ap2, ap);
	n = vsnprintf(NULL, 0, fmt, ap2);
	va_end(ap2);
	if (n < 0)
		return FBC_EINVAL;
	rc = fbc_buf_reserve(b, (size_t)n);
	if (rc)
		return rc;
	vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
	b->len += (size_t)n;
	return 0;
}

int fbc_buf_printf(fbc_buf *b, const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = fbc_buf_vprintf(b, fmt, ap);
	va_end(ap);
	return rc;
}

int fbc_buf_put_json_string(fbc_buf *b, const char *s, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	size_t i, start = 0;
	int rc;

	if ((rc = fbc_buf_putc(b, '"')))
		return rc;
	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		char esc[7];
		size_t elen = 2;

		if (c >= 0x80) {
			/* JSON text must be UTF-8: bytes that are not (file names,
			 * raw input quoted in a message) become U+FFFD */
			size_t k = fbc_utf8_decode(NULL, (const unsigned char *)s + i, n - i);

			if (k > 0) {
				i += k - 1;
				continue;
			}
			if ((rc = fbc_buf_append(b, s + start, i - start)) ||
			    (rc = fbc_buf_append(b, "\\ufffd", 6)))
				return rc;
			start = i + 1;
			continue;
		}
		if (c >= 0x20 && c != '"' && c != '\\')
			continue;
		if ((rc = fbc_buf_append(b, s + start, i - start)))
			return rc;
		esc[0] = '\\';
		switch (c) {
		case '"':
			esc[1] = '"';
			break;
		case '\\':
			esc[1] = '\\';
			break;
		case '\n':
			esc[1] = 'n';
			break;
		case '\r':
			esc[1] = 'r';
			break;
		case '\t':
			esc[1] = 't';
			break;
		case '\b':
			esc[1] = 'b';
			break;
		case '\f':
			esc[1] = 'f';
			break;
		default:
			esc[1] = 'u';
			esc[2] = '0';
			esc[3] = '0';
			esc[4] = hex[c >> 4];
			esc[5] = hex[c & 15];
			elen = 6;
			break;
		}
		if ((rc = fbc_buf_append(b, esc, elen)))
			return rc;
		start = i + 1;
	}
	if ((rc = fbc_buf_append(b, s + start, n - start)))
		return rc;
	return fbc_buf_putc(b, '"');
}

char *fbc_buf_detach(fbc_buf *b, size_t *len_out)
{
	char *p = b->data;

	if (!p) {
		p = malloc(1);
		if (!p)
			return NULL;
		p[0] = '\0';
	}
	if (len_out)
		*len_out = b->len;
	b->data = NULL;
	b->len = 0;
	b->cap = 0;
	return p;
}
