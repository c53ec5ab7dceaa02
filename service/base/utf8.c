/* Go-compatible UTF-8 decoding, encoding and hex digits; see utf8.h. */
#include "service/base/utf8.h"

size_t fbc_utf8_decode(uint32_t *cp, const unsigned char *p, size_t avail)
{
	size_t n;
	unsigned lo = 0x80, hi = 0xbf;
	uint32_t c;

	if (avail == 0)
		return 0;
	if (p[0] < 0x80) {
		if (cp)
			*cp = p[0];
		return 1;
	}
	n = p[0] >= 0xf0 ? 4 : p[0] >= 0xe0 ? 3 : 2;
	if (p[0] < 0xc2 || p[0] > 0xf4 || avail < n)
		return 0;
	/* the second byte's range rules out overlong forms, surrogates and
	 * code points above U+10FFFF (Go's acceptRanges) */
	if (p[0] == 0xe0)
		lo = 0xa0;
	else if (p[0] == 0xed)
		hi = 0x9f;
	else if (p[0] == 0xf0)
		lo = 0x90;
	else if (p[0] == 0xf4)
		hi = 0x8f;
	if (p[1] < lo || p[1] > hi)
		return 0;
	c = p[0] & (n == 2 ? 0x1f : n == 3 ? 0x0f : 0x07);
	for (size_t i = 1; i < n; i++) {
		if (i > 1 && (p[i] < 0x80 || p[i] > 0xbf))
			return 0;
		c = c << 6 | (p[i] & 0x3f);
	}
	if (cp)
		*cp = c;
	return n;
}

bool fbc_utf8_valid(const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;

	for (size_t i = 0, k; i < n; i += k)
		if ((k = fbc_utf8_decode(NULL, p + i, n - i)) == 0)
			return false;
	return true;
}

size_t fbc_utf8_encode(char out[4], uint32_t cp)
{
	if (cp < 0x80) {
		out[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		out[0] = (char)(0xC0 | (cp >> 6));
		out[1] = (char)(0x80 | (cp & 0x3F));
		return 2;
	}
	if (cp < 0x10000) {
		out[0] = (char)(0xE0 | (cp >> 12));
		out[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
		out[2] = (char)(0x80 | (cp & 0x3F));
		return 3;
	}
	out[0] = (char)(0xF0 | (cp >> 18));
	out[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
	out[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
	out[3] = (char)(0x80 | (cp & 0x3F));
	return 4;
}

int fbc_hex_digit(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}
