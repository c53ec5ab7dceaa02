/*
 * The JSON fast path's scanner (internal to service/load): the parse state
 * and the primitives the tree builder (jsonfast.c) and the skimmer
 * (jsonskim.c) share — white space with newlines counted, strings scanned 32
 * or 8 bytes at a time, escapes decoded as jansson decodes them, integers,
 * literals, separators — inline in both.
 */
#ifndef FBC_LOAD_JSONSCAN_H
#define FBC_LOAD_JSONSCAN_H

#include "service/base/utf8.h"
#include "service/load/internal.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define JF_AVX2 1
#endif

#define MAX_DEPTH 256 /* jansson allows 2048; deeper values take the slow path */

typedef struct jf {
	const unsigned char *p, *end;
	int deepest;	/* the deepest container's depth (the top-level object: 1) */
	size_t longest; /* the longest string or key, decoded */
	int lines;	/* newlines passed (strings hold none: a control character) */
	/* skimming (fbc_load_skim): NULL skim, none */
	const fbc_load_limits *lim;
	const fbc_load_skim *skim;
	fbc_vec *skimmed;
	bool in_props; /* inside the top-level object's "properties" array */
} jf;

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
/* 0x80 in each byte of w that equals c, 0 in the others (exact, no carries). */
static inline uint64_t byte_eq(uint64_t w, unsigned char c)
{
	const uint64_t low7 = FBC_WORD_ONES * 0x7f;
	uint64_t x = w ^ (FBC_WORD_ONES * c);

	return ~(((x & low7) + low7) | x) & (FBC_WORD_ONES * 0x80);
}
#endif

/* Newlines among 0x80 flags (few: no popcount, which is a libgcc call
 * without -mpopcnt). */
static inline int count_flags(uint64_t f)
{
	int n = 0;

	for (; f; f &= f - 1)
		n++;
	return n;
}

#ifdef JF_AVX2
/* White space from j->p, 32 bytes at a time: true when it found its end. */
__attribute__((target("avx2"))) static inline bool skip_space_avx2(jf *j)
{
	while (j->end - j->p >= 32) {
		__m256i v = _mm256_loadu_si256((const __m256i *)j->p);
		__m256i nlv = _mm256_cmpeq_epi8(v, _mm256_set1_epi8('\n'));
		__m256i ws = _mm256_or_si256(
			_mm256_or_si256(nlv, _mm256_cmpeq_epi8(v, _mm256_set1_epi8(' '))),
			_mm256_or_si256(_mm256_cmpeq_epi8(v, _mm256_set1_epi8('\t')),
					_mm256_cmpeq_epi8(v, _mm256_set1_epi8('\r'))));
		uint32_t stop = ~(uint32_t)_mm256_movemask_epi8(ws);
		uint32_t nl = (uint32_t)_mm256_movemask_epi8(nlv);

		if (stop) {
			unsigned k = (unsigned)__builtin_ctz(stop);

			for (nl &= (k ? ~0u >> (32 - k) : 0); nl; nl &= nl - 1)
				j->lines++;
			j->p += k;
			return true;
		}
		for (; nl; nl &= nl - 1)
			j->lines++;
		j->p += 32;
	}
	return false;
}
#endif

static inline void skip_space(jf *j)
{
	if (j->p < j->end && j->p[0] > ' ')
		return; /* the usual case: no white space */
	if (j->end - j->p >= 2 && j->p[0] == ' ' && j->p[1] > ' ') {
		j->p++; /* the next usual one: `"key": value` */
		return;
	}
#ifdef JF_AVX2
	if (j->end - j->p >= 32 && __builtin_cpu_supports("avx2") && skip_space_avx2(j))
		return;
#endif
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	/* pretty-printed JSON: a newline and indentation, 8 bytes at a time */
	while (j->end - j->p >= 8) {
		uint64_t w, nl, stop;

		memcpy(&w, j->p, 8);
		nl = byte_eq(w, '\n');
		stop = ~(nl | byte_eq(w, ' ') | byte_eq(w, '\t') | byte_eq(w, '\r')) &
		       (FBC_WORD_ONES * 0x80);
		if (stop) {
			unsigned k = (unsigned)__builtin_ctzll(stop) / 8; /* the first other byte */

			nl &= k ? ~(uint64_t)0 >> (64 - 8 * k) : 0;
			j->lines += count_flags(nl);
			j->p += k;
			return;
		}
		j->lines += count_flags(nl);
		j->p += 8;
	}
#endif
	for (; j->p < j->end; j->p++) {
		if (*j->p == '\n')
			j->lines++;
		else if (*j->p != ' ' && *j->p != '\t' && *j->p != '\r')
			break;
	}
}

/* jansson's UTF-8 rules (utf.c): no overlong forms, no surrogates, nothing above U+10FFFF. */
static inline size_t utf8_len(const unsigned char *s, const unsigned char *end)
{
	unsigned c = s[0];
	size_t n;
	uint32_t v;

	if (c < 0xC2 || c > 0xF4)
		return 0;
	n = c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
	if ((size_t)(end - s) < n)
		return 0;
	v = c & (n == 2 ? 0x1F : n == 3 ? 0x0F : 0x07);
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xC0) != 0x80)
			return 0;
		v = (v << 6) | (s[i] & 0x3F);
	}
	if ((n == 3 && v < 0x800) || (n == 4 && v < 0x10000) || v > 0x10FFFF ||
	    (v >= 0xD800 && v <= 0xDFFF))
		return 0;
	return n;
}

/* Check bytes [c, end) for jansson's rules: no control character, valid UTF-8. */
static inline bool plain_ok(const unsigned char *c, const unsigned char *end)
{
	while (c < end) {
		size_t k;

		/* eight ASCII bytes at a time, none below 0x20 */
		while (end - c >= 8) {
			uint64_t w;

			memcpy(&w, c, 8);
			if (fbc_word_has_high(w) || fbc_word_has_below(w, 0x20))
				break;
			c += 8;
		}
		if (c >= end)
			break;
		if (*c < 0x20)
			return false;
		if (*c < 0x80) {
			c++;
			continue;
		}
		if ((k = utf8_len(c, end)) == 0)
			return false;
		c += k;
	}
	return true;
}

static inline int hex4(const unsigned char *h)
{
	int v = 0;

	for (int i = 0; i < 4; i++) {
		int d = fbc_hex_digit(h[i]);

		if (d < 0)
			return -1;
		v = v << 4 | d;
	}
	return v;
}

/* A string with escapes from q (after the opening quote): decoded into a new json_t as
 * jansson decodes it (\u0000 and lone surrogates are errors there: left to it). */
static inline json_t *escaped_string(jf *j, const unsigned char *q)
{
	size_t cap = (size_t)(j->end - q);
	char *buf = malloc(cap ? cap : 1), *o = buf;
	const unsigned char *c = q;
	json_t *v = NULL;

	if (!buf)
		return NULL;
	while (c < j->end) {
		const unsigned char *run = c;
		int u, lo;

		while (c < j->end && *c != '"' && *c != '\\')
			c++;
		if (c >= j->end || !plain_ok(run, c))
			goto done;
		memcpy(o, run, (size_t)(c - run));
		o += c - run;
		if (*c == '"') {
			j->p = c + 1;
			v = json_stringn_nocheck(buf, (size_t)(o - buf));
			goto done;
		}
		if (++c >= j->end)
			goto done;
		switch (*c++) {
		case '"':
			*o++ = '"';
			break;
		case '\\':
			*o++ = '\\';
			break;
		case '/':
			*o++ = '/';
			break;
		case 'b':
			*o++ = '\b';
			break;
		case 'f':
			*o++ = '\f';
			break;
		case 'n':
			*o++ = '\n';
			break;
		case 'r':
			*o++ = '\r';
			break;
		case 't':
			*o++ = '\t';
			break;
		case 'u':
			if (j->end - c < 4 || (u = hex4(c)) <= 0)
				goto done; /* bad hex, or \u0000 */
			c += 4;
			if (u >= 0xDC00 && u <= 0xDFFF)
				goto done;
			if (u >= 0xD800 && u <= 0xDBFF) {
				if (j->end - c < 6 || c[0] != '\\' || c[1] != 'u' ||
				    (lo = hex4(c + 2)) < 0xDC00 || lo > 0xDFFF)
					goto done;
				c += 6;
				u = 0x10000 + ((u - 0xD800) << 10) + (lo - 0xDC00);
			}
			o += fbc_utf8_encode(o, (uint32_t)u);
			break;
		default:
			goto done;
		}
	}
done:
	free(buf);
	return v;
}

#ifdef JF_AVX2
/* skip_plain for whole 32-byte blocks: the block holding the first byte that
 * needs a look, or the last whole block's end. */
__attribute__((target("avx2"))) static inline const unsigned char *
skip_plain_avx2(const unsigned char *c, const unsigned char *end)
{
	while (end - c >= 32) {
		__m256i v = _mm256_loadu_si256((const __m256i *)c);
		/* signed: bytes 0x80-0xff are negative, so "below 0x20" takes them too */
		__m256i m = _mm256_or_si256(
			_mm256_cmpgt_epi8(_mm256_set1_epi8(0x20), v),
			_mm256_or_si256(_mm256_cmpeq_epi8(v, _mm256_set1_epi8('"')),
					_mm256_cmpeq_epi8(v, _mm256_set1_epi8('\\'))));
		unsigned mask = (unsigned)_mm256_movemask_epi8(m);

		if (mask)
			return c + __builtin_ctz(mask);
		c += 32;
	}
	return c;
}
#endif

/* The first byte in [c, end) that is '"', '\\', a control character or not
 * ASCII; end when there is none. */
static inline const unsigned char *skip_plain(const unsigned char *c, const unsigned char *end)
{
#ifdef JF_AVX2
	if (end - c >= 32 && __builtin_cpu_supports("avx2"))
		c = skip_plain_avx2(c, end);
#endif
	for (uint64_t w; end - c >= 8; c += 8) {
		memcpy(&w, c, 8);
		if (fbc_word_has_high(w) || fbc_word_has_below(w, 0x20) ||
		    fbc_word_has_byte(w, '"') || fbc_word_has_byte(w, '\\'))
			break;
	}
	while (c < end && *c >= 0x20 && *c < 0x80 && *c != '"' && *c != '\\')
		c++;
	return c;
}

/* A string at j->p ('"') without escapes: its bytes [*s, *s + *n), j->p past the closing
 * quote. False when it has escapes (*esc set) or breaks jansson's rules (one pass: the
 * closing quote, a backslash, a control character or bad UTF-8, whichever comes first;
 * a string with both a backslash and a bad byte gives up either way). */
static inline bool scan_string(jf *j, const char **s, size_t *n, bool *esc)
{
	const unsigned char *q = j->p + 1, *c = q;

	*esc = false;
	for (;;) {
		size_t k;

		c = skip_plain(c, j->end);
		if (c >= j->end || *c < 0x20)
			return false;
		if (*c == '"')
			break;
		if (*c == '\\') {
			*esc = true;
			return false;
		}
		/* a sequence cannot hold the closing quote: its bytes are 0x80 and above */
		if ((k = utf8_len(c, j->end)) == 0)
			return false;
		c += k;
	}
	*s = (const char *)q;
	*n = (size_t)(c - q);
	j->p = c + 1;
	return true;
}

/* An integer at j->p as the fast path reads them (false: anything else). */
static inline bool integer(jf *j, long long *out)
{
	const unsigned char *d;
	long long v = 0;
	bool neg = false;

	if (*j->p == '-') {
		neg = true;
		j->p++;
	}
	d = j->p;
	while (j->p < j->end && *j->p >= '0' && *j->p <= '9')
		j->p++;
	if (j->p == d || j->p - d > 18 || (*d == '0' && j->p - d > 1))
		return false; /* no digit, possibly too big, or a leading zero */
	if (j->p < j->end && (*j->p == '.' || *j->p == 'e' || *j->p == 'E'))
		return false; /* a real: jansson's strtod */
	for (const unsigned char *c = d; c < j->p; c++)
		v = v * 10 + (*c - '0'); /* 18 digits: no overflow */
	*out = neg ? -v : v;
	return true;
}

/* Whether word is at j->p (then passed). */
static inline bool word_at(jf *j, const char *word)
{
	size_t n = strlen(word);

	if ((size_t)(j->end - j->p) < n || memcmp(j->p, word, n) != 0)
		return false;
	j->p += n;
	return true;
}

/* After a member or element: 1 at the closing `close` (consumed), 0 after a ',' (consumed,
 * spaces skipped), -1 on anything else. */
static inline int after_item(jf *j, char close)
{
	skip_space(j);
	if (j->p >= j->end)
		return -1;
	if (*j->p == close) {
		j->p++;
		return 1;
	}
	if (*j->p != ',')
		return -1;
	j->p++;
	skip_space(j);
	return 0;
}

/* Skimming (jsonskim.c): the skim type of a property object o whose only
 * member so far is "type", NULL when none; the placeholder of a property
 * value at j->p that checks out and ends its object, or of a top-level
 * relatedImages array at j->p that checks out, listed in j->skimmed (NULL, j
 * as it was, otherwise). */
const fbc_load_skim_type *fbc_json_skim_type_of(const jf *j, json_t *o);
json_t *fbc_json_skim_property_value(jf *j, json_t *o, const fbc_load_skim_type *st, int depth);
json_t *fbc_json_skim_related_images(jf *j, json_t *o, int depth);

#endif
