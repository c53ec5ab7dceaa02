/*
 * Versions (blang/semver v4 Parse and ParseTolerant), SemVer 2.0 precedence,
 * OLM releases, and the pieces of a range both grammars share.
 *
 * Error messages reproduce blang's wording so that a message shown by fbcd
 * can be matched against one shown by opm.
 */
#include "service/semver/semver_int.h"
#include "service/base/utf8.h"

#include <assert.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- Go string helpers ------------------------------------------------- */

static bool is_unicode_space(uint32_t r)
{
	switch (r) {
	case '\t':
	case '\n':
	case '\v':
	case '\f':
	case '\r':
	case ' ':
	case 0x85:
	case 0xa0:
	case 0x1680:
	case 0x2028:
	case 0x2029:
	case 0x202f:
	case 0x205f:
	case 0x3000:
		return true;
	default:
		return r >= 0x2000 && r <= 0x200a;
	}
}

void go_trim_space(const char **p, size_t *n)
{
	const unsigned char *s = (const unsigned char *)*p;
	size_t len = *n;
	uint32_t r;
	size_t w;

	while (len > 0 && (w = fbc_utf8_decode(&r, s, len)) > 0 && is_unicode_space(r)) {
		s += w;
		len -= w;
	}
	while (len > 0) {
		/* find the start of the last rune (at most 4 bytes back) */
		size_t k = 1;
		while (k < 4 && k < len && (s[len - k] & 0xc0) == 0x80)
			k++;
		w = fbc_utf8_decode(&r, s + len - k, k);
		if (w != k || !is_unicode_space(r))
			break;
		len -= k;
	}
	*p = (const char *)s;
	*n = len;
}

const char *go_quote(char dst[QUOTE_MAX], const char *s, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *p = (const unsigned char *)s;
	size_t o = 0, i = 0;
	/* room for the closing quote, "..." and NUL */
	const size_t limit = QUOTE_MAX - 6;

	dst[o++] = '"';
	while (i < n) {
		char tmp[12];
		size_t tl = 0, w;
		uint32_t r = 0;

		w = fbc_utf8_decode(&r, p + i, n - i);
		if (w == 0) {
			tmp[tl++] = '\\';
			tmp[tl++] = 'x';
			tmp[tl++] = hex[p[i] >> 4];
			tmp[tl++] = hex[p[i] & 15];
			w = 1;
		} else if (r == '"' || r == '\\') {
			tmp[tl++] = '\\';
			tmp[tl++] = (char)r;
		} else if (r >= 0x20 && r < 0x7f) {
			tmp[tl++] = (char)r;
		} else if (r < 0x80) {
			const char *esc = NULL;
			switch (r) {
			case '\a':
				esc = "\\a";
				break;
			case '\b':
				esc = "\\b";
				break;
			case '\f':
				esc = "\\f";
				break;
			case '\n':
				esc = "\\n";
				break;
			case '\r':
				esc = "\\r";
				break;
			case '\t':
				esc = "\\t";
				break;
			case '\v':
				esc = "\\v";
				break;
			default:
				break;
			}
			if (esc) {
				tmp[tl++] = esc[0];
				tmp[tl++] = esc[1];
			} else {
				tmp[tl++] = '\\';
				tmp[tl++] = 'x';
				tmp[tl++] = hex[r >> 4];
				tmp[tl++] = hex[r & 15];
			}
		} else if (r <= 0xa0 || r == 0xad) {
			/* C1 controls, NBSP and soft hyphen are not printable in Go */
			tmp[tl++] = '\\';
			tmp[tl++] = 'u';
			tmp[tl++] = '0';
			tmp[tl++] = '0';
			tmp[tl++] = hex[(r >> 4) & 15];
			tmp[tl++] = hex[r & 15];
		} else {
			memcpy(tmp, p + i, w);
			tl = w;
		}
		if (o + tl > limit) {
			memcpy(dst + o, "...", 3);
			o += 3;
			break;
		}
		memcpy(dst + o, tmp, tl);
		o += tl;
		i += w;
	}
	dst[o++] = '"';
	dst[o] = '\0';
	return dst;
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static bool is_alnum_dash(char c)
{
	return is_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '-';
}

static bool all_digits(const char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!is_digit(p[i]))
			return false;
	return true;
}

static bool all_alnum_dash(const char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!is_alnum_dash(p[i]))
			return false;
	return true;
}

static const char *memchr_c(const char *p, size_t n, char c)
{
	return n ? memchr(p, c, n) : NULL;
}

/* strconv.ParseUint(s, 10, 64): 0, or -1 for invalid syntax, -2 for out of range. */
static int parse_u64(uint64_t *out, const char *p, size_t n)
{
	uint64_t v = 0;

	if (n == 0)
		return -1;
	for (size_t i = 0; i < n; i++) {
		unsigned d;
		if (!is_digit(p[i]))
			return -1;
		d = (unsigned)(p[i] - '0');
		if (v > (UINT64_MAX - d) / 10) {
			/* Go still reports a syntax error if a later byte is bad */
			for (size_t j = i; j < n; j++)
				if (!is_digit(p[j]))
					return -1;
			return -2;
		}
		v = v * 10 + d;
	}
	*out = v;
	return 0;
}

static int parse_u64_error(fbc_error *err, const char *p, size_t n, int rc)
{
	char q[QUOTE_MAX];
	return fbc_error_set(err, FBC_EPARSE, NULL, "strconv.ParseUint: parsing %s: %s",
			     go_quote(q, p, n), rc == -2 ? "value out of range" : "invalid syntax");
}

/* ---- blang Parse -------------------------------------------------------- */

static int parse_number(uint64_t *out, const char *p, size_t n, const char *lower,
			const char *upper, fbc_error *err)
{
	char q[QUOTE_MAX];
	int rc;

	if (!all_digits(p, n))
		return fbc_error_set(err, FBC_EPARSE, NULL,
				     "Invalid character(s) found in %s number %s", lower,
				     go_quote(q, p, n));
	if (n > 1 && p[0] == '0')
		return fbc_error_set(err, FBC_EPARSE, NULL,
				     "%s number must not contain leading zeroes %s", upper,
				     go_quote(q, p, n));
	rc = parse_u64(out, p, n);
	if (rc != 0)
		return parse_u64_error(err, p, n, rc);
	return 0;
}

/* blang NewPRVersion on one identifier. */
static int check_pre_ident(const char *p, size_t n, fbc_error *err)
{
	char q[QUOTE_MAX];
	uint64_t dummy;
	int rc;

	if (n == 0)
		return fbc_error_set(err, FBC_EPARSE, NULL, "Prerelease is empty");
	if (all_digits(p, n)) {
		if (n > 1 && p[0] == '0')
			return fbc_error_set(
				err, FBC_EPARSE, NULL,
				"Numeric PreRelease version must not contain leading zeroes %s",
				go_quote(q, p, n));
		rc = parse_u64(&dummy, p, n);
		if (rc != 0)
			return parse_u64_error(err, p, n, rc);
		return 0;
	}
	if (!all_alnum_dash(p, n))
		return fbc_error_set(err, FBC_EPARSE, NULL,
				     "Invalid character(s) found in prerelease %s",
				     go_quote(q, p, n));
	return 0;
}

int fbc_semver_parse(fbc_semver *out, const char *s, size_t len, fbc_error *err)
{
	fbc_semver v = {0};
	const char *d1, *d2, *rest, *plus, *minus, *patch, *end;
	size_t rest_len, patch_len;
	char q[QUOTE_MAX];
	int rc;

	if (len == 0)
		return fbc_error_set(err, FBC_EPARSE, NULL, "Version string empty");
	if (len > FBC_SEMVER_VERSION_MAX)
		return fbc_error_set(err, FBC_ELIMIT, NULL,
				     "version string is longer than %d bytes",
				     FBC_SEMVER_VERSION_MAX);
	end = s + len;
	d1 = memchr_c(s, len, '.');
	d2 = d1 ? memchr_c(d1 + 1, (size_t)(end - d1 - 1), '.') : NULL;
	if (!d2)
		return fbc_error_set(err, FBC_EPARSE, NULL, "No Major.Minor.Patch elements found");

	rc = parse_number(&v.major, s, (size_t)(d1 - s), "major", "Major", err);
	if (rc)
		return rc;
	rc = parse_number(&v.minor, d1 + 1, (size_t)(d2 - d1 - 1), "minor", "Minor", err);
	if (rc)
		return rc;

	rest = d2 + 1;
	rest_len = (size_t)(end - rest);
	patch = rest;
	patch_len = rest_len;
	plus = memchr_c(patch, patch_len, '+');
	if (plus) {
		v.build = plus + 1;
		v.build_len = (size_t)(end - plus - 1);
		patch_len = (size_t)(plus - patch);
	}
	minus = memchr_c(patch, patch_len, '-');
	if (minus) {
		v.pre = minus + 1;
		v.pre_len = (size_t)(patch + patch_len - minus - 1);
		patch_len = (size_t)(minus - patch);
	}
	rc = parse_number(&v.patch, patch, patch_len, "patch", "Patch", err);
	if (rc)
		return rc;

	if (v.pre) {
		const char *p = v.pre, *pend = v.pre + v.pre_len;
		for (;;) {
			const char *dot = memchr_c(p, (size_t)(pend - p), '.');
			const char *ie = dot ? dot : pend;
			rc = check_pre_ident(p, (size_t)(ie - p), err);
			if (rc)
				return rc;
			if (!dot)
				break;
			p = dot + 1;
		}
	}
	if (v.build) {
		const char *p = v.build, *bend = v.build + v.build_len;
		for (;;) {
			const char *dot = memchr_c(p, (size_t)(bend - p), '.');
			const char *ie = dot ? dot : bend;
			if (ie == p)
				return fbc_error_set(err, FBC_EPARSE, NULL,
						     "Build meta data is empty");
			if (!all_alnum_dash(p, (size_t)(ie - p)))
				return fbc_error_set(
					err, FBC_EPARSE, NULL,
					"Invalid character(s) found in build meta data %s",
					go_quote(q, p, (size_t)(ie - p)));
			if (!dot)
				break;
			p = dot + 1;
		}
	}
	*out = v;
	return 0;
}

int fbc_semver_parse_tolerant(fbc_semver *out, const char *s, size_t len, fbc_error *err)
{
	/* normalised copy: at most one "0" added per part plus ".0.0" padding */
	char norm[FBC_SEMVER_VERSION_MAX + 16];
	const char *t = s, *parts[3], *tend;
	size_t tn = len, plen[3], nparts = 0, o = 0;
	fbc_semver v;
	int rc;

	if (len > FBC_SEMVER_VERSION_MAX)
		return fbc_error_set(err, FBC_ELIMIT, NULL,
				     "version string is longer than %d bytes",
				     FBC_SEMVER_VERSION_MAX);
	go_trim_space(&t, &tn);
	if (tn > 0 && t[0] == 'v') {
		t++;
		tn--;
	}
	tend = t + tn;

	/* strings.SplitN(s, ".", 3) */
	{
		const char *p = t;
		while (nparts < 2) {
			const char *dot = memchr_c(p, (size_t)(tend - p), '.');
			if (!dot)
				break;
			parts[nparts] = p;
			plen[nparts] = (size_t)(dot - p);
			nparts++;
			p = dot + 1;
		}
		parts[nparts] = p;
		plen[nparts] = (size_t)(tend - p);
		nparts++;
	}
	/* strip leading zeros, keeping a 0 before a non-digit */
	for (size_t i = 0; i < nparts; i++) {
		if (plen[i] > 1) {
			const char *p = parts[i];
			size_t n = plen[i];
			while (n > 0 && p[0] == '0') {
				p++;
				n--;
			}
			if (i > 0)
				norm[o++] = '.';
			if (n == 0 || !is_digit(p[0]))
				norm[o++] = '0';
			memcpy(norm + o, p, n);
			o += n;
		} else {
			if (i > 0)
				norm[o++] = '.';
			memcpy(norm + o, parts[i], plen[i]);
			o += plen[i];
		}
	}
	if (nparts < 3) {
		if (memchr_c(parts[nparts - 1], plen[nparts - 1], '+') ||
		    memchr_c(parts[nparts - 1], plen[nparts - 1], '-'))
			return fbc_error_set(
				err, FBC_EPARSE, NULL,
				"Short version cannot contain PreRelease/Build meta data");
		for (size_t i = nparts; i < 3; i++) {
			norm[o++] = '.';
			norm[o++] = '0';
		}
	}
	rc = fbc_semver_parse(&v, norm, o, err);
	if (rc)
		return rc;
	/* pre-release and build are a suffix left untouched by normalisation,
	 * so point them back into the caller's string */
	if (v.pre)
		v.pre = tend - (size_t)(norm + o - v.pre);
	if (v.build)
		v.build = tend - (size_t)(norm + o - v.build);
	*out = v;
	return 0;
}

/* ---- precedence --------------------------------------------------------- */

static int cmp_u64(uint64_t a, uint64_t b)
{
	return a < b ? -1 : a > b ? 1 : 0;
}

/* One identifier, as Masterminds comparePrePart (which agrees with blang on
 * valid input): "" sorts first, numbers before words, words bytewise. */
static int compare_pre_part(const char *s, size_t sn, const char *o, size_t on)
{
	uint64_t si = 0, oi = 0;
	bool snum, onum;
	int c;

	if (sn == on && (sn == 0 || memcmp(s, o, sn) == 0))
		return 0;
	if (sn == 0)
		return -1;
	if (on == 0)
		return 1;
	snum = parse_u64(&si, s, sn) == 0;
	onum = parse_u64(&oi, o, on) == 0;
	if (!snum && !onum) {
		c = memcmp(s, o, sn < on ? sn : on);
		if (c == 0)
			c = sn < on ? -1 : 1;
		return c < 0 ? -1 : 1;
	}
	if (!onum)
		return -1;
	if (!snum)
		return 1;
	return cmp_u64(si, oi);
}

int semver_compare_pre(const char *a, size_t an, const char *b, size_t bn)
{
	const char *ae = a + an, *be = b + bn;
	bool a_done = false, b_done = false;

	for (;;) {
		const char *ad = a_done ? NULL : memchr_c(a, (size_t)(ae - a), '.');
		const char *bd = b_done ? NULL : memchr_c(b, (size_t)(be - b), '.');
		size_t al = a_done ? 0 : (size_t)((ad ? ad : ae) - a);
		size_t bl = b_done ? 0 : (size_t)((bd ? bd : be) - b);
		int c = compare_pre_part(a, al, b, bl);

		if (c != 0)
			return c;
		if (!ad)
			a_done = true;
		else
			a = ad + 1;
		if (!bd)
			b_done = true;
		else
			b = bd + 1;
		if (a_done && b_done)
			return 0;
	}
}

int fbc_semver_compare(const fbc_semver *a, const fbc_semver *b)
{
	int c;
	bool ap = a->pre && a->pre_len > 0, bp = b->pre && b->pre_len > 0;

	if ((c = cmp_u64(a->major, b->major)) != 0)
		return c;
	if ((c = cmp_u64(a->minor, b->minor)) != 0)
		return c;
	if ((c = cmp_u64(a->patch, b->patch)) != 0)
		return c;
	if (!ap && !bp)
		return 0;
	if (!ap)
		return 1;
	if (!bp)
		return -1;
	return semver_compare_pre(a->pre, a->pre_len, b->pre, b->pre_len);
}

size_t fbc_semver_format(const fbc_semver *v, char *buf, size_t size)
{
	int pre_len = v->pre && v->pre_len ? (int)v->pre_len : 0;
	int build_len = v->build && v->build_len ? (int)v->build_len : 0;
	int n = snprintf(buf, size, "%llu.%llu.%llu%s%.*s%s%.*s", (unsigned long long)v->major,
			 (unsigned long long)v->minor, (unsigned long long)v->patch,
			 pre_len ? "-" : "", pre_len, pre_len ? v->pre : "", build_len ? "+" : "",
			 build_len, build_len ? v->build : "");
	return n < 0 ? 0 : (size_t)n;
}

/* ---- releases (operator-registry model.NewRelease) ----------------------- */

#define RELEASE_MAX 20

int fbc_release_validate(const char *s, size_t len, fbc_error *err)
{
	char q[QUOTE_MAX];
	char joined[FBC_ERROR_MESSAGE_MAX];
	size_t jo = 0, idx = 0;
	const char *p = s, *end = s + len;
	bool bad = false;

	if (len == 0)
		return 0;
	if (len > RELEASE_MAX)
		return fbc_error_set(err, FBC_EPARSE, NULL,
				     "invalid release %s: exceeds maximum length of %d characters",
				     go_quote(q, s, len), RELEASE_MAX);
	joined[0] = '\0';
	for (;; idx++) {
		const char *dot = memchr_c(p, (size_t)(end - p), '.');
		const char *ie = dot ? dot : end;
		fbc_error e;

		fbc_error_init(&e);
		if (check_pre_ident(p, (size_t)(ie - p), &e) != 0) {
			/* errors.Join: one line per failing segment */
			int n = snprintf(joined + jo, sizeof(joined) - jo, "%ssegment %zu: %s",
					 bad ? "\n" : "", idx, e.message);
			if (n > 0)
				jo += (size_t)n < sizeof(joined) - jo ? (size_t)n
								      : sizeof(joined) - jo - 1;
			bad = true;
		}
		if (!dot)
			break;
		p = dot + 1;
	}
	if (bad)
		return fbc_error_set(err, FBC_EPARSE, NULL, "invalid release %s: %s",
				     go_quote(q, s, len), joined);
	return 0;
}

int fbc_release_compare(const char *a, const char *b)
{
	size_t an = a ? strlen(a) : 0, bn = b ? strlen(b) : 0;

	if (an == 0 && bn == 0)
		return 0;
	if (an == 0)
		return -1;
	if (bn == 0)
		return 1;
	return semver_compare_pre(a, an, b, bn);
}

/* ---- ranges: shared storage -------------------------------------------- */

int range_new(struct fbc_semver_range **out, enum range_dialect d)
{
	struct fbc_semver_range *r = calloc(1, sizeof(*r));
	if (!r)
		return FBC_ENOMEM;
	r->dialect = d;
	*out = r;
	return 0;
}

int range_add_group(struct fbc_semver_range *r)
{
	if (r->ngroups >= FBC_SEMVER_RANGE_GROUPS_MAX)
		return FBC_ELIMIT;
	if (r->ngroups == r->cap_groups) {
		size_t nc = r->cap_groups ? r->cap_groups * 2 : 4;
		struct range_group *g = realloc(r->groups, nc * sizeof(*g));
		if (!g)
			return FBC_ENOMEM;
		r->groups = g;
		r->cap_groups = nc;
	}
	r->groups[r->ngroups].first = r->nterms;
	r->groups[r->ngroups].count = 0;
	r->groups[r->ngroups].has_pre = false;
	r->ngroups++;
	return 0;
}

int range_add_term(struct fbc_semver_range *r, enum term_op op, const fbc_semver *v,
		   const char *text, size_t len, struct range_term **out_term)
{
	struct range_term *t;
	char *copy;

	assert(r->ngroups > 0);
	if (r->nterms >= FBC_SEMVER_RANGE_TERMS_MAX)
		return FBC_ELIMIT;
	if (r->nterms == r->cap_terms) {
		size_t nc = r->cap_terms ? r->cap_terms * 2 : 8;
		struct range_term *nt = realloc(r->terms, nc * sizeof(*nt));
		if (!nt)
			return FBC_ENOMEM;
		r->terms = nt;
		r->cap_terms = nc;
	}
	copy = malloc(len + 1);
	if (!copy)
		return FBC_ENOMEM;
	memcpy(copy, text, len);
	copy[len] = '\0';
	t = &r->terms[r->nterms];
	memset(t, 0, sizeof(*t));
	t->op = op;
	t->text = copy;
	t->v = *v;
	/* rebase borrowed pointers from the parse buffer into our copy */
	if (v->pre && v->pre >= text && v->pre <= text + len)
		t->v.pre = copy + (v->pre - text);
	if (v->build && v->build >= text && v->build <= text + len)
		t->v.build = copy + (v->build - text);
	r->nterms++;
	r->groups[r->ngroups - 1].count++;
	if (out_term)
		*out_term = t;
	return 0;
}

void fbc_semver_range_free(fbc_semver_range *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->nterms; i++)
		free(r->terms[i].text);
	free(r->terms);
	free(r->groups);
	free(r);
}

bool fbc_semver_range_contains(const fbc_semver_range *r, const fbc_semver *v)
{
	if (!r || !v)
		return false;
	for (size_t g = 0; g < r->ngroups; g++) {
		const struct range_group *grp = &r->groups[g];
		bool ok = grp->count > 0;

		for (size_t i = 0; ok && i < grp->count; i++) {
			const struct range_term *t = &r->terms[grp->first + i];
			if (r->dialect == DIALECT_BLANG)
				ok = blang_term_matches(t, v);
			else
				ok = mm_term_matches(t, v, grp->has_pre);
		}
		if (ok)
			return true;
	}
	return false;
}
