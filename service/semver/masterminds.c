/*
 * Masterminds/semver v3 (3.4.x) NewConstraint and Constraints.Check, with
 * IncludePrerelease=false (operator-controller's setting).
 *
 * Parsing runs the library's own regular expressions through gore (Go
 * leftmost-first semantics), then follows NewConstraint: rewriteRange
 * (hyphen ranges), strings.Split on "||", validConstraintRegex on each
 * group, findConstraintRegex to cut it into comparators, parseConstraint,
 * and coerceNewVersion for the operand. The checks are ports of the
 * constraint* functions; a pre-release version is only considered by a
 * group when one of the group's comparators carries a pre-release.
 */
#include "service/semver/gore.h"
#include "service/semver/semver_int.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CV_RE                                                        \
	"v?([0-9|x|X|\\*]+)(\\.[0-9|x|X|\\*]+)?(\\.[0-9|x|X|\\*]+)?" \
	"(-([0-9A-Za-z\\-]+(\\.[0-9A-Za-z\\-]+)*))?"                 \
	"(\\+([0-9A-Za-z\\-]+(\\.[0-9A-Za-z\\-]+)*))?"
#define OPS_RE "=||!=|>|<|>=|=>|<=|=<|~|~>|\\^"

static const char constraint_re[] = "^\\s*(" OPS_RE ")\\s*(" CV_RE ")\\s*$";
static const char range_re[] = "\\s*(" CV_RE ")\\s+-\\s+(" CV_RE ")\\s*";
static const char find_re[] = "(" OPS_RE ")\\s*(" CV_RE ")";
static const char valid_re[] =
	"^(\\s*(" OPS_RE ")\\s*(" CV_RE ")\\s*)((?:\\s+|,\\s*)(" OPS_RE ")\\s*(" CV_RE ")\\s*)*$";

struct regexes {
	gore *constraint, *range, *find, *valid;
};

static void regexes_free(struct regexes *r)
{
	gore_free(r->constraint);
	gore_free(r->range);
	gore_free(r->find);
	gore_free(r->valid);
	memset(r, 0, sizeof(*r));
}

static int regexes_compile(struct regexes *r)
{
	memset(r, 0, sizeof(*r));
	if (gore_compile(&r->constraint, constraint_re) || gore_compile(&r->range, range_re) ||
	    gore_compile(&r->find, find_re) || gore_compile(&r->valid, valid_re)) {
		regexes_free(r);
		return FBC_ENOMEM;
	}
	return 0;
}

/* Compiled once; the programs are immutable afterwards, so concurrent parses
 * share them. If that first compile ran out of memory, each parse compiles
 * its own copy instead (static_ok stays false). */
static struct regexes static_re;
static bool static_ok;
static pthread_once_t static_once = PTHREAD_ONCE_INIT;

static void static_init(void)
{
	static_ok = regexes_compile(&static_re) == 0;
}

/* *use points at the shared set or at *own (which the caller frees). */
static int regexes_get(const struct regexes **use, struct regexes *own)
{
	int rc;

	memset(own, 0, sizeof(*own));
	pthread_once(&static_once, static_init);
	if (static_ok) {
		*use = &static_re;
		return 0;
	}
	rc = regexes_compile(own);
	if (rc == 0)
		*use = own;
	return rc;
}

/* A growable NUL-terminated string with a hard cap. */
struct sbuf {
	char *p;
	size_t n, cap;
};

static int sb_add(struct sbuf *b, const char *s, size_t n)
{
	if (n >= FBC_SEMVER_RANGE_MAX * 4 || b->n + n + 1 > FBC_SEMVER_RANGE_MAX * 4)
		return FBC_ELIMIT;
	if (b->n + n + 1 > b->cap) {
		size_t nc = b->cap ? b->cap : 64;
		char *np;
		while (nc < b->n + n + 1)
			nc *= 2;
		np = realloc(b->p, nc);
		if (!np)
			return FBC_ENOMEM;
		b->p = np;
		b->cap = nc;
	}
	memcpy(b->p + b->n, s, n);
	b->n += n;
	b->p[b->n] = '\0';
	return 0;
}

static int sb_adds(struct sbuf *b, const char *s)
{
	return sb_add(b, s, strlen(s));
}

/* ---- coerceNewVersion --------------------------------------------------- */

static size_t span_digits(const char *p, size_t n)
{
	size_t i = 0;
	while (i < n && p[i] >= '0' && p[i] <= '9')
		i++;
	return i;
}

static size_t span_idents(const char *p, size_t n)
{
	/* [0-9A-Za-z-]+(\.[0-9A-Za-z-]+)* */
	size_t i = 0;
	for (;;) {
		size_t s = i;
		while (i < n && ((p[i] >= '0' && p[i] <= '9') || (p[i] >= 'a' && p[i] <= 'z') ||
				 (p[i] >= 'A' && p[i] <= 'Z') || p[i] == '-'))
			i++;
		if (i == s)
			return s == 0 ? 0 : s - 1; /* drop the dangling dot */
		if (i < n && p[i] == '.' && i + 1 < n)
			i++;
		else
			return i;
	}
}

static bool parse_u64_str(uint64_t *out, const char *p, size_t n)
{
	uint64_t v = 0;
	if (n == 0)
		return false;
	for (size_t i = 0; i < n; i++) {
		unsigned d = (unsigned)(p[i] - '0');
		if (d > 9 || v > (UINT64_MAX - d) / 10)
			return false;
		v = v * 10 + d;
	}
	*out = v;
	return true;
}

/* validatePrerelease / validateMetadata beyond what the regex checked:
 * a numeric pre-release identifier may not have a leading zero. */
static bool pre_ok(const char *p, size_t n)
{
	size_t i = 0;
	while (i <= n) {
		size_t s = i;
		bool digits = true;
		while (i < n && p[i] != '.') {
			if (p[i] < '0' || p[i] > '9')
				digits = false;
			i++;
		}
		if (i == s)
			return false;
		if (digits && i - s > 1 && p[s] == '0')
			return false;
		i++;
	}
	return true;
}

/* Masterminds NewVersion with CoerceNewVersion=true: the loose regex
 * ^v?([0-9]+)(\.[0-9]+)?(\.[0-9]+)?(-PRE)?(\+META)?$ and leading zeros in the
 * numbers allowed. pre/build of *out point into s. */
static int mm_new_version(fbc_semver *out, const char *s, size_t n)
{
	fbc_semver v = {0};
	size_t i = 0, k;

	if (i < n && s[i] == 'v')
		i++;
	k = span_digits(s + i, n - i);
	if (k == 0 || !parse_u64_str(&v.major, s + i, k))
		return -1;
	i += k;
	if (i < n && s[i] == '.' && (k = span_digits(s + i + 1, n - i - 1)) > 0) {
		if (!parse_u64_str(&v.minor, s + i + 1, k))
			return -1;
		i += 1 + k;
		if (i < n && s[i] == '.' && (k = span_digits(s + i + 1, n - i - 1)) > 0) {
			if (!parse_u64_str(&v.patch, s + i + 1, k))
				return -1;
			i += 1 + k;
		}
	}
	if (i < n && s[i] == '-' && (k = span_idents(s + i + 1, n - i - 1)) > 0) {
		v.pre = s + i + 1;
		v.pre_len = k;
		i += 1 + k;
		if (!pre_ok(v.pre, v.pre_len))
			return -1;
	}
	if (i < n && s[i] == '+' && (k = span_idents(s + i + 1, n - i - 1)) > 0) {
		v.build = s + i + 1;
		v.build_len = k;
		i += 1 + k;
	}
	if (i != n)
		return -1;
	*out = v;
	return 0;
}

/* ---- parseConstraint ---------------------------------------------------- */

static bool is_x(const char *p, size_t n)
{
	return n == 1 && (p[0] == 'x' || p[0] == 'X' || p[0] == '*');
}

static bool cap_is(const char *s, const long *c, int g, const char *lit)
{
	size_t n = c[2 * g] < 0 ? 0 : (size_t)(c[2 * g + 1] - c[2 * g]);
	return strlen(lit) == n && (n == 0 || memcmp(s + c[2 * g], lit, n) == 0);
}

static size_t cap_len(const long *c, int g)
{
	return c[2 * g] < 0 ? 0 : (size_t)(c[2 * g + 1] - c[2 * g]);
}

static const char *cap_ptr(const char *s, const long *c, int g)
{
	return c[2 * g] < 0 ? s : s + c[2 * g];
}

static enum term_op op_for(const char *s, const long *c)
{
	if (cap_is(s, c, 1, "!="))
		return MM_NE;
	if (cap_is(s, c, 1, ">"))
		return MM_GT;
	if (cap_is(s, c, 1, "<"))
		return MM_LT;
	if (cap_is(s, c, 1, ">=") || cap_is(s, c, 1, "=>"))
		return MM_GE;
	if (cap_is(s, c, 1, "<=") || cap_is(s, c, 1, "=<"))
		return MM_LE;
	if (cap_is(s, c, 1, "~") || cap_is(s, c, 1, "~>"))
		return MM_TILDE;
	if (cap_is(s, c, 1, "^"))
		return MM_CARET;
	return MM_TILDE_OR_EQ; /* "" and "=" */
}

static int parse_constraint(struct fbc_semver_range *r, const struct regexes *re, const char *s,
			    size_t n, fbc_error *err)
{
	long caps[2 * 64];
	struct sbuf ver = {0};
	bool dirty = false, minor_dirty = false, patch_dirty = false;
	const char *m4, *m5;
	size_t m4n, m5n;
	struct range_term *t = NULL;
	fbc_semver con;
	int rc;

	rc = gore_search(re->constraint, s, n, 0, caps);
	if (rc < 0)
		return FBC_ENOMEM;
	if (rc == 0)
		return fbc_error_set(err, FBC_EPARSE, NULL, "improper constraint: %.*s", (int)n, s);

	m4 = cap_ptr(s, caps, 4);
	m4n = cap_len(caps, 4);
	m5 = cap_ptr(s, caps, 5);
	m5n = cap_len(caps, 5);
	if (m4n > 0) {
		m4++;
		m4n--;
	}
	if (m5n > 0) {
		m5++;
		m5n--;
	}
	if (is_x(cap_ptr(s, caps, 3), cap_len(caps, 3)) || cap_len(caps, 3) == 0) {
		dirty = true;
		rc = sb_adds(&ver, "0.0.0");
		if (!rc)
			rc = sb_add(&ver, cap_ptr(s, caps, 6), cap_len(caps, 6));
	} else if (is_x(m4, m4n) || cap_len(caps, 4) == 0) {
		minor_dirty = dirty = true;
		rc = sb_add(&ver, cap_ptr(s, caps, 3), cap_len(caps, 3));
		if (!rc)
			rc = sb_adds(&ver, ".0.0");
		if (!rc)
			rc = sb_add(&ver, cap_ptr(s, caps, 6), cap_len(caps, 6));
	} else if (is_x(m5, m5n) || cap_len(caps, 5) == 0) {
		patch_dirty = dirty = true;
		rc = sb_add(&ver, cap_ptr(s, caps, 3), cap_len(caps, 3));
		if (!rc)
			rc = sb_add(&ver, cap_ptr(s, caps, 4), cap_len(caps, 4));
		if (!rc)
			rc = sb_adds(&ver, ".0");
		if (!rc)
			rc = sb_add(&ver, cap_ptr(s, caps, 6), cap_len(caps, 6));
	} else {
		rc = sb_add(&ver, cap_ptr(s, caps, 2), cap_len(caps, 2));
	}
	if (rc)
		goto done;
	if (mm_new_version(&con, ver.p, ver.n) != 0) {
		/* e.g. a '|' inside a number, or a number beyond uint64 */
		rc = fbc_error_set(err, FBC_EPARSE, NULL, "constraint parser error");
		goto done;
	}
	rc = range_add_term(r, op_for(s, caps), &con, ver.p, ver.n, &t);
	if (rc)
		goto done;
	t->dirty = dirty;
	t->minor_dirty = minor_dirty;
	t->patch_dirty = patch_dirty;
	if (con.pre && con.pre_len)
		r->groups[r->ngroups - 1].has_pre = true;
done:
	free(ver.p);
	return rc;
}

/* rewriteRange: every "A - B" becomes ">= A, <= B " (first occurrence of the
 * matched text each time, as strings.Replace(o, v[0], t, 1) does). */
static int rewrite_range(struct sbuf *out, const struct regexes *re, const char *s)
{
	size_t len = strlen(s), from = 0;
	long caps[2 * 64];
	int rc = sb_adds(out, s);

	while (!rc && from <= len) {
		struct sbuf t = {0}, o = {0};
		const char *hit;
		size_t mlen;
		int m = gore_search(re->range, s, len, from, caps);

		if (m < 0)
			return FBC_ENOMEM;
		if (m == 0)
			break;
		mlen = (size_t)(caps[1] - caps[0]);
		rc = sb_adds(&t, ">= ");
		if (!rc)
			rc = sb_add(&t, cap_ptr(s, caps, 1), cap_len(caps, 1));
		if (!rc)
			rc = sb_adds(&t, ", <= ");
		if (!rc)
			rc = sb_add(&t, cap_ptr(s, caps, 11), cap_len(caps, 11));
		if (!rc)
			rc = sb_adds(&t, " ");
		if (!rc) {
			hit = mlen ? memmem(out->p, out->n, s + caps[0], mlen) : out->p;
			if (hit) {
				size_t at = (size_t)(hit - out->p);
				rc = sb_add(&o, out->p, at);
				if (!rc)
					rc = sb_add(&o, t.p, t.n);
				if (!rc)
					rc = sb_add(&o, out->p + at + mlen, out->n - at - mlen);
				if (!rc) {
					free(out->p);
					*out = o;
					o.p = NULL;
				}
			}
		}
		free(t.p);
		free(o.p);
		/* FindAll: continue after this match; an empty match moves on one byte */
		from = (size_t)caps[1] > from ? (size_t)caps[1] : from + 1;
	}
	return rc;
}

static int mm_error(int rc, fbc_error *err)
{
	if (rc == FBC_ENOMEM)
		return fbc_error_set(err, FBC_ENOMEM, NULL, "out of memory parsing a range");
	if (rc == FBC_ELIMIT)
		return fbc_error_set(err, FBC_ELIMIT, NULL,
				     "range has more than %d comparators or %d groups",
				     FBC_SEMVER_RANGE_TERMS_MAX, FBC_SEMVER_RANGE_GROUPS_MAX);
	return rc;
}

int fbc_semver_range_parse_masterminds(fbc_semver_range **out, const char *s, fbc_error *err)
{
	struct regexes own;
	const struct regexes *re = NULL;
	struct sbuf c = {0};
	struct fbc_semver_range *r = NULL;
	long caps[2 * 64];
	const char *p, *end;
	int rc;

	if (!s)
		return fbc_error_set(err, FBC_EINVAL, NULL, "range string is NULL");
	if (strlen(s) > FBC_SEMVER_RANGE_MAX)
		return fbc_error_set(err, FBC_ELIMIT, NULL, "range is longer than %d bytes",
				     FBC_SEMVER_RANGE_MAX);
	rc = regexes_get(&re, &own);
	if (rc)
		return mm_error(rc, err);
	rc = rewrite_range(&c, re, s);
	if (rc) {
		rc = mm_error(rc, err);
		goto done;
	}
	rc = range_new(&r, DIALECT_MASTERMINDS);
	if (rc) {
		rc = mm_error(rc, err);
		goto done;
	}
	/* strings.Split(c, "||") */
	p = c.p;
	end = c.p + c.n;
	for (;;) {
		const char *bar = memmem(p, (size_t)(end - p), "||", 2);
		const char *ge = bar ? bar : end;
		size_t gn = (size_t)(ge - p), from = 0;
		int m;

		rc = range_add_group(r);
		if (rc) {
			rc = mm_error(rc, err);
			goto done;
		}
		m = gore_search(re->valid, p, gn, 0, caps);
		if (m < 0) {
			rc = mm_error(FBC_ENOMEM, err);
			goto done;
		}
		if (m == 0) {
			rc = fbc_error_set(err, FBC_EPARSE, NULL, "improper constraint: %.*s",
					   (int)gn, p);
			goto done;
		}
		/* findConstraintRegex.FindAllString; validation guarantees a hit */
		while (from <= gn) {
			m = gore_search(re->find, p, gn, from, caps);
			if (m < 0) {
				rc = mm_error(FBC_ENOMEM, err);
				goto done;
			}
			if (m == 0)
				break;
			rc = parse_constraint(r, re, p + caps[0], (size_t)(caps[1] - caps[0]), err);
			if (rc) {
				rc = mm_error(rc, err);
				goto done;
			}
			from = (size_t)caps[1] > from ? (size_t)caps[1] : from + 1;
		}
		if (!bar)
			break;
		p = bar + 2;
	}
	*out = r;
	r = NULL;
done:
	fbc_semver_range_free(r);
	free(c.p);
	regexes_free(&own);
	return rc;
}

/* ---- Check -------------------------------------------------------------- */

static bool has_pre(const fbc_semver *v)
{
	return v->pre && v->pre_len > 0;
}

static bool tilde(const struct range_term *t, const fbc_semver *v)
{
	const fbc_semver *c = &t->v;

	if (fbc_semver_compare(v, c) < 0)
		return false;
	if (c->major == 0 && c->minor == 0 && c->patch == 0 && !t->minor_dirty && !t->patch_dirty)
		return true;
	if (v->major != c->major)
		return false;
	if (v->minor != c->minor && !t->minor_dirty)
		return false;
	return true;
}

bool mm_term_matches(const struct range_term *t, const fbc_semver *v, bool include_pre)
{
	const fbc_semver *c = &t->v;
	int cmp;

	/* the group-level pre-release rule, checked first by every operator */
	if (has_pre(v) && !include_pre)
		return false;
	cmp = fbc_semver_compare(v, c);

	switch (t->op) {
	case MM_NE:
		if (t->dirty) {
			if (c->major != v->major)
				return true;
			if (c->minor != v->minor && !t->minor_dirty)
				return true;
			else if (t->minor_dirty)
				return false;
			else if (c->patch != v->patch && !t->patch_dirty)
				return true;
			else if (t->patch_dirty) {
				if (has_pre(v) || has_pre(c))
					return semver_compare_pre(v->pre ? v->pre : "",
								  v->pre ? v->pre_len : 0,
								  c->pre ? c->pre : "",
								  c->pre ? c->pre_len : 0) != 0;
				return false;
			}
		}
		return cmp != 0;
	case MM_GT:
		if (!t->dirty)
			return cmp > 0;
		if (v->major > c->major)
			return true;
		if (v->major < c->major)
			return false;
		if (t->minor_dirty)
			return false;
		if (t->patch_dirty)
			return v->minor > c->minor;
		return cmp > 0;
	case MM_LT:
		return cmp < 0;
	case MM_GE:
		return cmp >= 0;
	case MM_LE:
		if (!t->dirty)
			return cmp <= 0;
		if (v->major > c->major)
			return false;
		if (v->major == c->major && v->minor > c->minor && !t->minor_dirty)
			return false;
		return true;
	case MM_TILDE:
		return tilde(t, v);
	case MM_TILDE_OR_EQ:
		if (t->dirty)
			return tilde(t, v);
		return cmp == 0;
	case MM_CARET:
		if (cmp < 0)
			return false;
		if (c->major > 0 || t->minor_dirty)
			return v->major == c->major;
		if (c->major == 0 && v->major > 0)
			return false;
		if (c->minor > 0 || t->patch_dirty)
			return v->minor == c->minor;
		if (c->minor == 0 && v->minor > 0)
			return false;
		return c->patch == v->patch;
	default:
		return false;
	}
}
