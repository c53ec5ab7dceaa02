/*
 * A fast path for the JSON streams of catalogs: one top-level object read
 * into the json_t jansson's json_loadb (JSON_DECODE_ANY |
 * JSON_DISABLE_EOF_CHECK) would build from the same bytes, with the same key
 * order, consuming the same bytes. It handles what catalogs are made of —
 * objects, arrays, strings (valid UTF-8, no control characters; escapes
 * decoded as jansson decodes them), integers of up to 18 digits, true, false,
 * null — and scans strings 32 bytes at a time (AVX2) or 8 (a word) instead of one character,
 * which is where jansson spends its time on catalogs full of base64 bundle
 * objects. Anything else (\u0000 or a lone surrogate, a fraction or exponent,
 * a duplicate key, deep nesting, any syntax error) makes it give up, and the caller parses the
 * value with jansson as before, so findings and their messages are jansson's. The fuzz target
 * json_fast checks that every value it accepts equals jansson's.
 */
#include "service/base/base64.h"
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
__attribute__((target("avx2"))) static bool skip_space_avx2(jf *j)
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

static void skip_space(jf *j)
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
static size_t utf8_len(const unsigned char *s, const unsigned char *end)
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
static bool plain_ok(const unsigned char *c, const unsigned char *end)
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

static int hex4(const unsigned char *h)
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
static json_t *escaped_string(jf *j, const unsigned char *q)
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
__attribute__((target("avx2"))) static const unsigned char *
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
static const unsigned char *skip_plain(const unsigned char *c, const unsigned char *end)
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
static bool scan_string(jf *j, const char **s, size_t *n, bool *esc)
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

/* A string value at j->p, escapes decoded. */
static json_t *string(jf *j)
{
	const char *s;
	size_t n;
	bool esc;

	json_t *v;

	if (scan_string(j, &s, &n, &esc)) {
		v = json_stringn_nocheck(s, n);
	} else if (esc && (v = escaped_string(j, j->p + 1)) != NULL) {
		n = json_string_length(v);
	} else {
		return NULL;
	}
	if (n > j->longest)
		j->longest = n;
	return v;
}

static json_t *value(jf *j, int depth);

/* An integer at j->p as the fast path reads them (false: anything else). */
static bool integer(jf *j, long long *out)
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

static json_t *number(jf *j)
{
	long long v;

	return integer(j, &v) ? json_integer(v) : NULL;
}

/* Whether word is at j->p (then passed). */
static bool word_at(jf *j, const char *word)
{
	size_t n = strlen(word);

	if ((size_t)(j->end - j->p) < n || memcmp(j->p, word, n) != 0)
		return false;
	j->p += n;
	return true;
}

static json_t *literal(jf *j, const char *word, json_t *v)
{
	return word_at(j, word) ? v : NULL;
}

/* After a member or element: 1 at the closing `close` (consumed), 0 after a ',' (consumed,
 * spaces skipped), -1 on anything else. */
static int after_item(jf *j, char close)
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

static json_t *array(jf *j, int depth)
{
	json_t *a = json_array();

	if (depth > j->deepest)
		j->deepest = depth;
	j->p++; /* [ */
	skip_space(j);
	if (j->p < j->end && *j->p == ']') {
		j->p++;
		return a;
	}
	while (a) {
		json_t *v = value(j, depth + 1);

		int at;

		if (!v || json_array_append_new(a, v) != 0 || (at = after_item(j, ']')) < 0)
			break;
		if (at == 1)
			return a;
	}
	json_decref(a);
	return NULL;
}

/* ------------------------------------------------------------------ */
/* Skimming: a value checked against a Go type on the raw text. Each
 * function returns true only when the value is one the fast path reads
 * (fbc_json_fast_object) and decodes into the type the way the tree check
 * (service/fbc fbc_gt_check) would find; anything else, false: the caller
 * builds the value as usual and the tree check gives its verdict. Every
 * member is checked, duplicates included (the tree keeps the last one: a
 * value all of whose members decode has its last ones decode). Strings and
 * depths are measured as the tree walk would, and past a limit it is false
 * (so the blob's verdict on the limits is the rest's). */

static bool skim_measure(jf *j, size_t n)
{
	if (n > j->lim->max_string_bytes)
		return false;
	if (n > j->longest)
		j->longest = n;
	return true;
}

/* A string at j->p: its raw bytes (*s, *n) and *esc false, or with escapes
 * *esc true and *n its decoded length. */
static bool skim_string(jf *j, const char **s, size_t *n, bool *esc)
{
	json_t *v;

	if (j->p >= j->end || *j->p != '"')
		return false;
	if (scan_string(j, s, n, esc))
		return skim_measure(j, *n);
	if (!*esc || !(v = escaped_string(j, j->p + 1)))
		return false;
	*n = json_string_length(v);
	json_decref(v);
	return skim_measure(j, *n);
}

static bool skim_container(jf *j, int depth)
{
	if (depth > MAX_DEPTH || (size_t)depth > j->lim->max_depth)
		return false;
	if (depth > j->deepest)
		j->deepest = depth;
	j->p++;
	skip_space(j);
	return true;
}

/* t NULL: any JSON (json.RawMessage, or a member no field takes). */
static bool skim_value(jf *j, const fbc_gt_type *t, int depth)
{
	const char *s;
	size_t n, bad;
	bool esc, any = !t || t->kind == FBC_GT_ANY;
	long long iv;
	int at;

	if (depth > MAX_DEPTH || j->p >= j->end)
		return false;
	switch (*j->p) {
	case 'n':
		return word_at(j, "null"); /* null leaves the zero value */
	case 't':
		return word_at(j, "true") && (any || t->kind == FBC_GT_BOOL);
	case 'f':
		return word_at(j, "false") && (any || t->kind == FBC_GT_BOOL);
	case '"':
		if (!skim_string(j, &s, &n, &esc))
			return false;
		if (any || t->kind == FBC_GT_STRING)
			return true;
		return t->kind == FBC_GT_BYTES && !esc &&
		       fbc_base64_decode(NULL, NULL, &bad, s, n) == 0;
	case '[':
		if (!any && t->kind != FBC_GT_ARRAY)
			return false;
		if (!skim_container(j, depth))
			return false;
		if (j->p < j->end && *j->p == ']') {
			j->p++;
			return true;
		}
		do {
			if (!skim_value(j, any ? NULL : t->elem, depth + 1))
				return false;
		} while ((at = after_item(j, ']')) == 0);
		return at == 1;
	case '{':
		if (!any && t->kind != FBC_GT_STRUCT && t->kind != FBC_GT_MAP)
			return false;
		if (!skim_container(j, depth))
			return false;
		if (j->p < j->end && *j->p == '}') {
			j->p++;
			return true;
		}
		do {
			const fbc_gt_type *mt = NULL;

			if (!skim_string(j, &s, &n, &esc))
				return false;
			if (!any && t->kind == FBC_GT_MAP) {
				mt = t->elem;
			} else if (!any) {
				const fbc_gt_field *f;

				if (esc)
					return false; /* the field's name: left to the tree */
				f = fbc_gt_find_field(t, s, n);
				mt = f ? f->type : NULL;
			}
			skip_space(j);
			if (j->p >= j->end || *j->p != ':')
				return false;
			j->p++;
			skip_space(j);
			if (!skim_value(j, mt, depth + 1))
				return false;
		} while ((at = after_item(j, '}')) == 0);
		return at == 1;
	default:
		if (*j->p != '-' && (*j->p < '0' || *j->p > '9'))
			return false;
		if (!integer(j, &iv))
			return false;
		return any || (t->kind == FBC_GT_INT && iv >= INT32_MIN && iv <= INT32_MAX);
	}
}

/* {"data": S} exactly, S base64 (no escapes) of bytes whose first one after
 * white space is '{' (what service/fbc's bundle-object reading needs no more
 * of in a catalog loaded to be validated). */
static bool skim_base64_json(jf *j, int depth)
{
	const char *s;
	size_t n, bad, head, out_len = 0, i = 0;
	unsigned char *out = NULL;
	bool esc, json;

	if (j->p >= j->end || *j->p != '{' || !skim_container(j, depth))
		return false;
	if (!skim_string(j, &s, &n, &esc) || esc || n != 4 || memcmp(s, "data", 4) != 0)
		return false;
	skip_space(j);
	if (j->p >= j->end || *j->p != ':')
		return false;
	j->p++;
	skip_space(j);
	if (!skim_string(j, &s, &n, &esc) || esc || fbc_base64_decode(NULL, NULL, &bad, s, n))
		return false;
	/* the first bytes are enough (64 characters: whole groups, no padding
	 * unless they are all of it) */
	head = n < 64 ? n : 64;
	if (fbc_base64_decode(&out, &out_len, &bad, s, head))
		return false;
	while (i < out_len && (out[i] == ' ' || out[i] == '\t' || out[i] == '\n' ||
			       out[i] == '\r' || out[i] == '\v' || out[i] == '\f'))
		i++;
	json = i < out_len && out[i] == '{';
	free(out);
	return json && after_item(j, '}') == 1;
}

/* The skim type of a property object o whose only member so far is "type",
 * NULL when none. */
static const fbc_load_skim_type *skim_type_of(const jf *j, json_t *o)
{
	void *it = json_object_iter(o);
	const char *t;

	if (json_object_size(o) != 1 || strcmp(json_object_iter_key(it), "type") != 0 ||
	    !(t = json_string_value(json_object_iter_value(it))))
		return NULL;
	for (size_t i = 0; i < j->skim->n_types; i++) {
		if (strcmp(t, j->skim->types[i].type) == 0)
			return &j->skim->types[i];
	}
	return NULL;
}

/* The placeholder of a property value at j->p that checks out and ends its
 * object, listed in j->skimmed; NULL, j as it was, otherwise. */
static json_t *skim_property_value(jf *j, json_t *o, const fbc_load_skim_type *st, int depth)
{
	jf saved = *j;
	const unsigned char *start = j->p, *after;
	fbc_json_skimmed *r;
	json_t *ph;
	size_t used;
	int lines;
	bool ok = st->base64_json ? skim_base64_json(j, depth) : skim_value(j, st->go, depth);

	if (ok) {
		/* a peek: "value" must be the last member (the caller reads on from after) */
		after = j->p;
		lines = j->lines;
		skip_space(j);
		ok = j->p < j->end && *j->p == '}';
		j->p = after;
		j->lines = lines;
	}
	if (ok && (ph = fbc_json_fast_object(st->placeholder, strlen(st->placeholder), &used))) {
		if ((r = fbc_vec_push(j->skimmed)) != NULL) {
			r->obj = o;
			r->key = "value";
			r->text = (const char *)start;
			r->len = (size_t)(after - start);
			return ph;
		}
		json_decref(ph);
	}
	*j = saved;
	return NULL;
}

/* One element of a skimmed relatedImages array at j->p (see fbc_load_skim). */
static bool skim_related_image(jf *j, int depth)
{
	bool seen_name = false, seen_image = false;
	char buf[1024];
	const char *s;
	size_t n;
	bool esc;
	int at;

	if (j->p >= j->end || *j->p != '{' || !skim_container(j, depth))
		return false;
	if (j->p < j->end && *j->p == '}') {
		j->p++;
		return true;
	}
	do {
		bool image;

		if (!skim_string(j, &s, &n, &esc) || esc)
			return false;
		image = n == 5 && memcmp(s, "image", 5) == 0;
		if (image ? seen_image : (n != 4 || memcmp(s, "name", 4) != 0 || seen_name))
			return false; /* another member, or twice: left to the tree */
		seen_image |= image;
		seen_name |= !image;
		skip_space(j);
		if (j->p >= j->end || *j->p != ':')
			return false;
		j->p++;
		skip_space(j);
		if (!skim_string(j, &s, &n, &esc) || esc)
			return false;
		if (image && n > 0) {
			if (n >= sizeof(buf))
				return false;
			memcpy(buf, s, n);
			buf[n] = '\0';
			if (!j->skim->related_image_ok(buf, n))
				return false;
		}
	} while ((at = after_item(j, '}')) == 0);
	return at == 1;
}

/* The placeholder [] of a top-level relatedImages array at j->p that
 * checks out, listed in j->skimmed; NULL, j as it was, otherwise. */
static json_t *skim_related_images(jf *j, json_t *o, int depth)
{
	jf saved = *j;
	const unsigned char *start = j->p;
	fbc_json_skimmed *r;
	json_t *ph;
	int at = 0;

	if (!skim_container(j, depth))
		goto fail;
	if (j->p < j->end && *j->p == ']') {
		j->p++;
	} else {
		while (at == 0) {
			if (!skim_related_image(j, depth + 1) || (at = after_item(j, ']')) < 0)
				goto fail;
		}
	}
	if ((ph = json_array()) != NULL) {
		if ((r = fbc_vec_push(j->skimmed)) != NULL) {
			r->obj = o;
			r->key = "relatedImages";
			r->text = (const char *)start;
			r->len = (size_t)(j->p - start);
			return ph;
		}
		json_decref(ph);
	}
fail:
	*j = saved;
	return NULL;
}

static json_t *object(jf *j, int depth)
{
	json_t *o = json_object();

	if (depth > j->deepest)
		j->deepest = depth;
	j->p++; /* { */
	skip_space(j);
	if (j->p < j->end && *j->p == '}') {
		j->p++;
		return o;
	}
	while (o) {
		const char *k;
		size_t kn, before;
		bool esc;
		json_t *v, *ks = NULL;
		int rc;

		if (j->p >= j->end || *j->p != '"')
			break;
		if (!scan_string(j, &k, &kn, &esc)) {
			/* a key with escapes: decoded; jansson's keys hold no NUL */
			if (!esc || !(ks = escaped_string(j, j->p + 1)))
				break;
			k = json_string_value(ks);
			kn = strlen(k);
		}
		if (kn > j->longest)
			j->longest = kn;
		skip_space(j);
		v = NULL;
		if (j->p < j->end && *j->p == ':') {
			const fbc_load_skim_type *st;

			j->p++;
			skip_space(j);
			if (j->skim && j->in_props && depth == 3 && kn == 5 &&
			    memcmp(k, "value", 5) == 0 && (st = skim_type_of(j, o)))
				v = skim_property_value(j, o, st, depth + 1);
			if (j->skim && j->skim->related_image_ok && depth == 1 && kn == 13 &&
			    memcmp(k, "relatedImages", 13) == 0 && j->p < j->end && *j->p == '[')
				v = skim_related_images(j, o, depth + 1);
			if (!v && j->skim && depth == 1 && kn == 10 &&
			    memcmp(k, "properties", 10) == 0 && j->p < j->end && *j->p == '[') {
				j->in_props = true;
				v = value(j, depth + 1);
				j->in_props = false;
			} else if (!v) {
				v = value(j, depth + 1);
			}
		}
		if (!v) {
			json_decref(ks);
			break;
		}
		/* the key straight from the input (jansson copies it) */
		before = json_object_size(o);
		rc = json_object_setn_new_nocheck(o, k, kn, v);
		json_decref(ks);
		if (rc != 0 || json_object_size(o) != before + 1)
			break; /* a duplicate key: jansson's rules decide */
		if ((rc = after_item(j, '}')) < 0)
			break;
		if (rc == 1)
			return o;
	}
	json_decref(o);
	return NULL;
}

static json_t *value(jf *j, int depth)
{
	if (depth > MAX_DEPTH || j->p >= j->end)
		return NULL;
	switch (*j->p) {
	case '{':
		return object(j, depth);
	case '[':
		return array(j, depth);
	case '"':
		return string(j);
	case 't':
		return literal(j, "true", json_true());
	case 'f':
		return literal(j, "false", json_false());
	case 'n':
		return literal(j, "null", json_null());
	default:
		return (*j->p == '-' || (*j->p >= '0' && *j->p <= '9')) ? number(j) : NULL;
	}
}

json_t *fbc_json_fast_parse(const char *data, size_t len, const fbc_load_limits *lim,
			    fbc_json_fast_info *info)
{
	jf j = {.p = (const unsigned char *)data,
		.end = (const unsigned char *)data + len,
		.lim = lim,
		.skim = lim && info->skimmed ? info->skim : NULL,
		.skimmed = info->skimmed};
	size_t listed = info->skimmed ? info->skimmed->len : 0;
	json_t *v;

	if (len == 0 || data[0] != '{')
		return NULL;
	if (!(v = object(&j, 1))) {
		if (info->skimmed)
			info->skimmed->len = listed; /* their objects are gone */
		return NULL;
	}
	info->consumed = (size_t)(j.p - (const unsigned char *)data);
	info->within =
		lim && (size_t)j.deepest <= lim->max_depth && j.longest <= lim->max_string_bytes;
	info->lines = j.lines;
	return v;
}

int fbc_json_fast_unskim(fbc_vec *skimmed)
{
	for (size_t i = 0; i < skimmed->len; i++) {
		fbc_json_skimmed *r = FBC_VEC_AT(skimmed, fbc_json_skimmed, i);
		jf j = {.p = (const unsigned char *)r->text,
			.end = (const unsigned char *)r->text + r->len};
		json_t *v = value(&j, 1);
		json_error_t jerr;

		/* a value with a duplicate key: jansson's, as the whole blob's would be */
		if (!v)
			v = json_loadb(r->text, r->len, JSON_DECODE_ANY, &jerr);
		if (!v || json_object_set_new_nocheck(r->obj, r->key, v) != 0)
			return FBC_ENOMEM;
	}
	skimmed->len = 0;
	return 0;
}

json_t *fbc_json_fast_object(const char *data, size_t len, size_t *consumed)
{
	fbc_json_fast_info info = {0};
	json_t *v = fbc_json_fast_parse(data, len, NULL, &info);

	if (v)
		*consumed = info.consumed;
	return v;
}
