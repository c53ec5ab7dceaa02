/* A port of Go's encoding/base64 decodeQuantum for StdEncoding. */
#include "service/base/base64.h"

#include "service/base/buf.h"
#include "service/base/error.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define B64_AVX2 1
#endif

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

#ifdef B64_AVX2
static inline __m256i in_range(__m256i c, char lo, char hi)
	__attribute__((target("avx2"), always_inline));
static inline __m256i in_range(__m256i c, char lo, char hi)
{
	/* signed compares: bytes 0x80-0xff are negative, outside every range */
	return _mm256_and_si256(_mm256_cmpgt_epi8(c, _mm256_set1_epi8((char)(lo - 1))),
				_mm256_cmpgt_epi8(_mm256_set1_epi8((char)(hi + 1)), c));
}

/* Whole blocks of 32 alphabet bytes (24 bytes out each, to dst unless NULL),
 * stopping before the first block holding anything else; returns the input
 * bytes consumed and adds the bytes written to *n. The same bytes as the
 * scalar loops for the same input: only a block with no padding, CR or LF
 * is taken. */
__attribute__((target("avx2"))) static size_t b64_avx2(const unsigned char *src, size_t len,
						       unsigned char *dst, size_t *n)
{
	/* value = byte + shift[high nibble]: '+' 0x2b +19 = 62, '0'-'9' +4,
	 * 'A'-'Z' -65, 'a'-'z' -71; '/' (also high nibble 2) +16, fixed below */
	const __m256i shift =
		_mm256_setr_epi8(0, 0, 19, 4, -65, -65, -71, -71, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 19,
				 4, -65, -65, -71, -71, 0, 0, 0, 0, 0, 0, 0, 0);
	/* per 32-bit group a<<18|b<<12|c<<6|d, its three bytes high first */
	const __m256i order =
		_mm256_setr_epi8(2, 1, 0, 6, 5, 4, 10, 9, 8, 14, 13, 12, -1, -1, -1, -1, 2, 1, 0, 6,
				 5, 4, 10, 9, 8, 14, 13, 12, -1, -1, -1, -1);
	size_t si = 0;

	while (len - si >= 32) {
		__m256i c = _mm256_loadu_si256((const __m256i *)(src + si));
		__m256i slash = _mm256_cmpeq_epi8(c, _mm256_set1_epi8('/'));
		__m256i ok = _mm256_or_si256(
			_mm256_or_si256(in_range(c, 'A', 'Z'), in_range(c, 'a', 'z')),
			_mm256_or_si256(in_range(c, '0', '9'),
					_mm256_or_si256(slash, _mm256_cmpeq_epi8(
								       c, _mm256_set1_epi8('+')))));

		if ((unsigned)_mm256_movemask_epi8(ok) != 0xffffffffu)
			break;
		if (dst) {
			__m256i hi =
				_mm256_and_si256(_mm256_srli_epi32(c, 4), _mm256_set1_epi8(0x0f));
			__m256i sh = _mm256_add_epi8(_mm256_shuffle_epi8(shift, hi),
						     _mm256_and_si256(slash, _mm256_set1_epi8(-3)));
			__m256i v = _mm256_add_epi8(c, sh);

			v = _mm256_maddubs_epi16(v, _mm256_set1_epi32(0x01400140));
			v = _mm256_madd_epi16(v, _mm256_set1_epi32(0x00011000));
			v = _mm256_shuffle_epi8(v, order);
			v = _mm256_permutevar8x32_epi32(v,
							_mm256_setr_epi32(0, 1, 2, 4, 5, 6, 7, 7));
			_mm_storeu_si128((__m128i *)(dst + *n), _mm256_castsi256_si128(v));
			_mm_storel_epi64((__m128i *)(dst + *n + 16),
					 _mm256_extracti128_si256(v, 1));
		}
		*n += 24;
		si += 32;
	}
	return si;
}
#endif

/* into: NULL, or room for len / 4 * 3 + 4 bytes to decode into instead of a
 * new allocation (then left to the caller on failure too). */
static int decode(unsigned char **out, size_t *out_len, size_t *bad_at, const char *s, size_t len,
		  bool simd, unsigned char *into)
{
	const unsigned char *src = (const unsigned char *)s;
	unsigned char *dst = into;
	size_t si = 0, n = 0;

	if (out && !dst) {
		dst = malloc(len / 4 * 3 + 4);
		if (!dst)
			return FBC_ENOMEM;
	}
	/* Fast path: whole quanta of four alphabet bytes (no padding, no CR or
	 * LF) decode the same however they are read; the loop below, the exact
	 * port of Go, takes over at the first quantum that is anything else. */
#ifdef B64_AVX2
	if (simd && len >= 64 && __builtin_cpu_supports("avx2"))
		si = b64_avx2(src, len, dst, &n);
#endif
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
		if (dst != into)
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

int fbc_base64_decode(unsigned char **out, size_t *out_len, size_t *bad_at, const char *s,
		      size_t len)
{
	return decode(out, out_len, bad_at, s, len, true, NULL);
}

int fbc_base64_decode_portable(unsigned char **out, size_t *out_len, size_t *bad_at, const char *s,
			       size_t len)
{
	return decode(out, out_len, bad_at, s, len, false, NULL);
}

int fbc_base64_decode_buf(fbc_buf *buf, size_t *bad_at, const char *s, size_t len)
{
	unsigned char *out;
	size_t n = 0;
	int rc;

	fbc_buf_reset(buf);
	if ((rc = fbc_buf_reserve(buf, len / 4 * 3 + 4)))
		return rc;
	rc = decode(&out, &n, bad_at, s, len, true, (unsigned char *)buf->data);
	if (rc == 0)
		buf->len = n;
	return rc;
}
