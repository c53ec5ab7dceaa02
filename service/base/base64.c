/* A port of Go's encoding/base64 decodeQuantum for StdEncoding. */
#include "service/base/base64.h"

#include "service/base/error.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

/* Standard alphabet value + 1; 0 for any other byte. */
static const unsigned char b64_plus1[256] = {
#define B(ch, v) [(unsigned char)(ch)] = (v) + 1
	B('A', 0),  B('B', 1),	B('C', 2),  B('D', 3),	B('E', 4),  B('F', 5),	B('G', 6),
	B('H', 7),  B('I', 8),	B('J', 9),  B('K', 10), B('L', 11), B('M', 12), B('N', 13),
	B('O', 14), B('P', 15), B('Q', 16), B('R', 17), B('S', 18), B('T', 19), B('U', 20),
	B('V', 21), B('W', 22), B('X', 23), B('Y', 24), B('Z', 25), B('a', 26), B('b', 27),
	B('c', 28), B('d', 29), B('e', 30), B('f', 31), B('g', 32), B('h', 33), B('i', 34),
	B('j', 35), B('k', 36), B('l', 37), B('m', 38), B('n', 39), B('o', 40), B('p', 41),
	B('q', 42), B('r', 43), B('s', 44), B('t', 45), B('u', 46), B('v', 47), B('w', 48),
	B('x', 49), B('y', 50), B('z', 51), B('0', 52), B('1', 53), B('2', 54), B('3', 55),
	B('4', 56), B('5', 57), B('6', 58), B('7', 59), B('8', 60), B('9', 61), B('+', 62),
	B('/', 63),
#undef B
};

static inline int b64val(unsigned char c)
{
	return (int)b64_plus1[c] - 1;
}

int fbc_base64_decode(unsigned char **out, size_t *out_len, size_t *bad_at, const char *s,
		      size_t len)
{
	const unsigned char *src = (const unsigned char *)s;
	unsigned char *dst = NULL;
	size_t si = 0, n = 0;

	if (out) {
		dst = malloc(len / 4 * 3 + 4);
		if (!dst)
			return FBC_ENOMEM;
	}
	/* Fast path: whole quanta of four alphabet bytes (no padding, no CR or
	 * LF) decode the same however they are read; the loop below, the exact
	 * port of Go, takes over at the first quantum that is anything else. */
	while (len - si >= 4) {
		int a = b64val(src[si]), b = b64val(src[si + 1]), c = b64val(src[si + 2]),
		    e = b64val(src[si + 3]);
		unsigned val;

		if ((a | b | c | e) < 0)
			break;
		val = (unsigned)a << 18 | (unsigned)b << 12 | (unsigned)c << 6 | (unsigned)e;
		if (dst) {
			dst[n] = (unsigned char)(val >> 16);
			dst[n + 1] = (unsigned char)(val >> 8);
			dst[n + 2] = (unsigned char)val;
		}
		n += 3;
		si += 4;
	}
	for (;;) {
		unsigned char dbuf[4] = {0, 0, 0, 0};
		int j, dlen = 4;
		bool done = false;
		size_t err_at = SIZE_MAX;

		for (j = 0; j < 4; j++) {
			unsigned char in;
			int val;

			if (si == len) {
				if (j == 0) {
					done = true;
					dlen = 0;
					break;
				}
				err_at = si - (size_t)j;
				goto fail;
			}
			in = src[si++];
			val = b64val(in);
			if (val >= 0) {
				dbuf[j] = (unsigned char)val;
				continue;
			}
			if (in == '\n' || in == '\r') {
				j--;
				continue;
			}
			if (in != '=') {
				err_at = si - 1;
				goto fail;
			}
			/* padding */
			if (j == 0 || j == 1) {
				err_at = si - 1;
				goto fail;
			}
			if (j == 2) {
				while (si < len && (src[si] == '\n' || src[si] == '\r'))
					si++;
				if (si == len) {
					err_at = len;
					goto fail;
				}
				if (src[si] != '=') {
					err_at = si - 1;
					goto fail;
				}
				si++;
			}
			while (si < len && (src[si] == '\n' || src[si] == '\r'))
				si++;
			if (si < len) {
				err_at = si;
				goto fail;
			}
			dlen = j;
			done = true;
			break;
		}
		if (dlen > 0) {
			unsigned val = (unsigned)dbuf[0] << 18 | (unsigned)dbuf[1] << 12 |
				       (unsigned)dbuf[2] << 6 | dbuf[3];

			if (dst) {
				dst[n] = (unsigned char)(val >> 16);
				if (dlen > 2)
					dst[n + 1] = (unsigned char)(val >> 8);
				if (dlen > 3)
					dst[n + 2] = (unsigned char)val;
			}
			n += (size_t)dlen - 1;
		}
		if (done)
			break;
		continue;
	fail:
		free(dst);
		if (bad_at)
			*bad_at = err_at;
		return FBC_EPARSE;
	}
	if (dst) {
		dst[n] = '\0';
		*out = dst;
	}
	if (out_len)
		*out_len = n;
	return 0;
}
