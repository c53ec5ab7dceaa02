/*
 * blang/semver v4.0.0 ParseRange, reproduced step by step (splitAndTrim,
 * splitORParts, expandWildcardVersion, splitComparatorVersion,
 * buildVersionRange) because OLM's behaviour on odd input is whatever those
 * string manipulations happen to do: one-character tokens vanish, `1.x.x`
 * becomes a patch wildcard, unknown operators before an `x` are dropped.
 *
 * Known difference: Go's unicode.IsDigit also accepts non-ASCII digits when
 * looking for the start of the version; here only 0-9 count. Such input is
 * rejected either way, only the message differs.
 */
#include "service/semver/semver_int.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A list of malloc'd NUL-terminated strings. */
struct strv {
	char **s;
	size_t n, cap;
};

static void strv_dispose(struct strv *v)
{
	for (size_t i = 0; i < v->n; i++)
		free(v->s[i]);
	free(v->s);
	v->s = NULL;
	v->n = v->cap = 0;
}

/* Take ownership of s (freed on failure). */
static int strv_push_owned(struct strv *v, char *s)
{
	if (!s)
		return FBC_ENOMEM;
	if (v->n >= FBC_SEMVER_RANGE_TERMS_MAX) {
		free(s);
		return FBC_ELIMIT;
	}
	if (v->n == v->cap) {
		size_t nc = v->cap ? v->cap * 2 : 8;
		char **ns = realloc(v->s, nc * sizeof(*ns));
		if (!ns) {
			free(s);
			return FBC_ENOMEM;
		}
		v->s = ns;
		v->cap = nc;
	}
	v->s[v->n++] = s;
	return 0;
}

static char *dup_n(const char *p, size_t n)
{
	char *s = malloc(n + 1);
	if (s) {
		memcpy(s, p, n);
		s[n] = '\0';
	}
	return s;
}

static char *concat2(const char *a, const char *b)
{
	size_t an = strlen(a), bn = strlen(b);
	char *s = malloc(an + bn + 1);
	if (s) {
		memcpy(s, a, an);
		memcpy(s + an, b, bn + 1);
	}
	return s;
}

static int limit_error(int rc, fbc_error *err)
{
	if (rc == FBC_ELIMIT)
		return fbc_error_set(err, FBC_ELIMIT, NULL,
				     "range has more than %d comparators or %d groups",
				     FBC_SEMVER_RANGE_TERMS_MAX, FBC_SEMVER_RANGE_GROUPS_MAX);
	if (rc == FBC_ENOMEM)
		return fbc_error_set(err, FBC_ENOMEM, NULL, "out of memory parsing a range");
	return rc;
}

/* splitAndTrim: split on ' ' unless the last non-space byte was > < or =;
 * pieces shorter than two bytes are dropped; spaces inside a piece removed. */
static int split_and_trim(struct strv *out, const char *s)
{
	size_t len = strlen(s), last = 0;
	char last_char = 0;
	int rc;

	for (size_t i = 0; i <= len; i++) {
		bool at_end = i == len;
		size_t piece_end;

		if (!at_end) {
			if (s[i] != ' ') {
				last_char = s[i];
				continue;
			}
			if (last_char == '>' || last_char == '<' || last_char == '=')
				continue;
			/* Go: if last < i-1 (i.e. the piece has at least two bytes) */
			piece_end = i;
			if (!(last + 1 < i)) {
				last = i + 1;
				continue;
			}
		} else {
			/* Go: if last < len(s)-1 */
			if (!(last + 1 < len))
				break;
			piece_end = len;
		}
		{
			char *t = malloc(piece_end - last + 1);
			size_t o = 0;
			if (!t)
				return FBC_ENOMEM;
			for (size_t k = last; k < piece_end; k++)
				if (s[k] != ' ')
					t[o++] = s[k];
			t[o] = '\0';
			rc = strv_push_owned(out, t);
			if (rc)
				return rc;
		}
		last = i + 1;
	}
	return 0;
}

/* index of the first ASCII digit, or -1 */
static long first_digit(const char *s)
{
	for (size_t i = 0; s[i]; i++)
		if (s[i] >= '0' && s[i] <= '9')
			return (long)i;
	return -1;
}

/* splitComparatorVersion; op is TrimSpace'd and written to op (NUL-terminated,
 * truncated to opcap which is fine because a long op is invalid anyway). */
static int split_comparator_version(const char *ap, const char **op, size_t *opn, const char **ver,
				    fbc_error *err)
{
	long i = first_digit(ap);
	char q[QUOTE_MAX];

	if (i < 0)
		return fbc_error_set(err, FBC_EPARSE, NULL, "Could not get version from string: %s",
				     go_quote(q, ap, strlen(ap)));
	*op = ap;
	*opn = (size_t)i;
	go_trim_space(op, opn);
	*ver = ap + i;
	return 0;
}

static bool op_is(const char *op, size_t n, const char *lit)
{
	return strlen(lit) == n && memcmp(op, lit, n) == 0;
}

/* strings.Replace(s, old, new, 1) */
static char *replace_first(const char *s, const char *old, const char *rep)
{
	const char *hit = strstr(s, old);
	size_t sn = strlen(s), on = strlen(old), rn = strlen(rep);
	char *r;

	if (!hit)
		return dup_n(s, sn);
	r = malloc(sn - on + rn + 1);
	if (!r)
		return NULL;
	memcpy(r, s, (size_t)(hit - s));
	memcpy(r + (hit - s), rep, rn);
	memcpy(r + (hit - s) + rn, hit + on, sn - (size_t)(hit - s) - on + 1);
	return r;
}

static size_t count_char(const char *s, char c)
{
	size_t n = 0;
	for (; *s; s++)
		n += *s == c;
	return n;
}

/* strconv.Atoi on a 64-bit platform: optional sign, decimal digits, int64. */
static bool go_atoi(int64_t *out, const char *p, size_t n)
{
	bool neg = false;
	uint64_t v = 0, lim;

	if (n > 0 && (p[0] == '+' || p[0] == '-')) {
		neg = p[0] == '-';
		p++;
		n--;
	}
	if (n == 0)
		return false;
	lim = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
	for (size_t i = 0; i < n; i++) {
		unsigned d;
		if (p[i] < '0' || p[i] > '9')
			return false;
		d = (unsigned)(p[i] - '0');
		if (v > (lim - d) / 10)
			return false;
		v = v * 10 + d;
	}
	*out = neg ? (int64_t)(0 - v) : (int64_t)v;
	return true;
}

/* incrementMajorVersion / incrementMinorVersion: "" when Atoi fails. */
static char *increment_part(const char *v, size_t which)
{
	const char *p = v, *start = NULL, *end = NULL;
	size_t idx = 0;
	int64_t num;
	char nb[32];
	size_t vn = strlen(v), nn;
	char *r;

	for (;;) {
		const char *dot = strchr(p, '.');
		const char *e = dot ? dot : v + vn;
		if (idx == which) {
			start = p;
			end = e;
			break;
		}
		if (!dot)
			break;
		p = dot + 1;
		idx++;
	}
	if (!start || !go_atoi(&num, start, (size_t)(end - start)))
		return dup_n("", 0);
	/* i + 1 wraps like Go's int */
	num = (int64_t)((uint64_t)num + 1u);
	snprintf(nb, sizeof(nb), "%lld", (long long)num);
	nn = strlen(nb);
	r = malloc(vn - (size_t)(end - start) + nn + 1);
	if (!r)
		return NULL;
	memcpy(r, v, (size_t)(start - v));
	memcpy(r + (start - v), nb, nn);
	memcpy(r + (start - v) + nn, end, vn - (size_t)(end - v) + 1);
	return r;
}

enum wildcard { WC_NONE, WC_MAJOR, WC_MINOR, WC_PATCH };

static enum wildcard wildcard_type(const char *v)
{
	size_t nparts = count_char(v, '.') + 1;
	const char *lastdot = strrchr(v, '.');
	const char *lastp = lastdot ? lastdot + 1 : v;

	if (strcmp(lastp, "x") != 0)
		return WC_NONE;
	switch (nparts) {
	case 1:
		return WC_MAJOR;
	case 2:
		return WC_MINOR;
	case 3:
		return WC_PATCH;
	default:
		return WC_NONE;
	}
}

/* createVersionFromWildcard */
static char *flatten_wildcard(const char *v)
{
	char *a = replace_first(v, ".x.x", ".x"), *b, *c;
	if (!a)
		return NULL;
	b = replace_first(a, ".x", ".0");
	free(a);
	if (!b)
		return NULL;
	if (count_char(b, '.') + 1 == 2) {
		c = concat2(b, ".0");
		free(b);
		return c;
	}
	return b;
}

/* expandWildcardVersion for one token; pushes 1 or 2 tokens onto out. */
static int expand_token(struct strv *out, const char *ap, fbc_error *err)
{
	const char *op = NULL, *ver = NULL;
	size_t opn;
	char *flat = NULL, *result_ver = NULL;
	const char *result_op = "";
	bool inc = false;
	enum wildcard wt;
	int rc;

	if (!strchr(ap, 'x'))
		return limit_error(strv_push_owned(out, dup_n(ap, strlen(ap))), err);

	rc = split_comparator_version(ap, &op, &opn, &ver, err);
	if (rc)
		return rc;
	wt = wildcard_type(ver);
	flat = flatten_wildcard(ver);
	if (!flat) {
		rc = FBC_ENOMEM;
		goto done;
	}
	if (op_is(op, opn, ">")) {
		result_op = ">=";
		inc = true;
	} else if (op_is(op, opn, ">=")) {
		result_op = ">=";
	} else if (op_is(op, opn, "<")) {
		result_op = "<";
	} else if (op_is(op, opn, "<=")) {
		result_op = "<";
		inc = true;
	} else if (op_is(op, opn, "") || op_is(op, opn, "=") || op_is(op, opn, "==")) {
		rc = strv_push_owned(out, concat2(">=", flat));
		if (rc)
			goto done;
		result_op = "<";
		inc = true;
	} else if (op_is(op, opn, "!=") || op_is(op, opn, "!")) {
		rc = strv_push_owned(out, concat2("<", flat));
		if (rc)
			goto done;
		result_op = ">=";
		inc = true;
	}
	if (inc) {
		if (wt == WC_PATCH)
			result_ver = increment_part(flat, 1);
		else if (wt == WC_MINOR)
			result_ver = increment_part(flat, 0);
		else
			result_ver = dup_n("", 0);
	} else {
		result_ver = dup_n(flat, strlen(flat));
	}
	if (!result_ver) {
		rc = FBC_ENOMEM;
		goto done;
	}
	rc = strv_push_owned(out, concat2(result_op, result_ver));
done:
	free(flat);
	free(result_ver);
	return rc ? limit_error(rc, err) : 0;
}

static int comparator_op(enum term_op *out, const char *op, size_t n)
{
	if (op_is(op, n, "") || op_is(op, n, "=") || op_is(op, n, "=="))
		*out = OP_EQ;
	else if (op_is(op, n, ">"))
		*out = OP_GT;
	else if (op_is(op, n, ">="))
		*out = OP_GE;
	else if (op_is(op, n, "<"))
		*out = OP_LT;
	else if (op_is(op, n, "<="))
		*out = OP_LE;
	else if (op_is(op, n, "!") || op_is(op, n, "!="))
		*out = OP_NE;
	else
		return -1;
	return 0;
}

/* splitComparatorVersion + buildVersionRange for one expanded token. */
static int build_term(struct fbc_semver_range *r, const char *ap, fbc_error *err)
{
	const char *op = NULL, *ver = NULL;
	size_t opn, vn;
	enum term_op top;
	fbc_semver v;
	fbc_error perr;
	char q1[QUOTE_MAX], q2[QUOTE_MAX], q3[QUOTE_MAX];
	char joined[FBC_SEMVER_RANGE_MAX + 64];
	int rc;

	rc = split_comparator_version(ap, &op, &opn, &ver, err);
	if (rc)
		return rc;
	vn = strlen(ver);
	snprintf(joined, sizeof(joined), "%.*s%s", (int)opn, op, ver);
	if (comparator_op(&top, op, opn) != 0)
		return fbc_error_set(
			err, FBC_EPARSE, NULL,
			"Could not parse Range %s: Could not parse comparator %s in %s",
			go_quote(q1, ap, strlen(ap)), go_quote(q2, op, opn),
			go_quote(q3, joined, strlen(joined)));
	fbc_error_init(&perr);
	if (fbc_semver_parse(&v, ver, vn, &perr) != 0)
		return fbc_error_set(
			err, FBC_EPARSE, NULL,
			"Could not parse Range %s: Could not parse version %s in %s: %s",
			go_quote(q1, ap, strlen(ap)), go_quote(q2, ver, vn),
			go_quote(q3, joined, strlen(joined)), perr.message);
	rc = range_add_term(r, top, &v, ver, vn, NULL);
	return rc ? limit_error(rc, err) : 0;
}

int fbc_semver_range_parse_blang(fbc_semver_range **out, const char *s, fbc_error *err)
{
	struct strv parts = {0}, expanded = {0};
	size_t *group_end = NULL, ngroups = 0, last = 0;
	size_t *egroup_end = NULL;
	struct fbc_semver_range *r = NULL;
	int rc = 0;

	if (!s)
		return fbc_error_set(err, FBC_EINVAL, NULL, "range string is NULL");
	if (strlen(s) > FBC_SEMVER_RANGE_MAX)
		return fbc_error_set(err, FBC_ELIMIT, NULL, "range is longer than %d bytes",
				     FBC_SEMVER_RANGE_MAX);
	rc = split_and_trim(&parts, s);
	if (rc) {
		rc = limit_error(rc, err);
		goto done;
	}

	/* splitORParts: group_end[k] is the index one past group k's last part */
	group_end = calloc(parts.n + 1, sizeof(*group_end));
	egroup_end = calloc(parts.n + 1, sizeof(*egroup_end));
	if (!group_end || !egroup_end) {
		rc = limit_error(FBC_ENOMEM, err);
		goto done;
	}
	for (size_t i = 0; i < parts.n; i++) {
		if (strcmp(parts.s[i], "||") == 0) {
			if (i == 0) {
				rc = fbc_error_set(err, FBC_EPARSE, NULL,
						   "First element in range is '||'");
				goto done;
			}
			group_end[ngroups++] = i;
			last = i + 1;
		}
	}
	if (last == parts.n) {
		rc = fbc_error_set(err, FBC_EPARSE, NULL, "Last element in range is '||'");
		goto done;
	}
	group_end[ngroups++] = parts.n;
	if (ngroups > FBC_SEMVER_RANGE_GROUPS_MAX) {
		rc = limit_error(FBC_ELIMIT, err);
		goto done;
	}

	/* expandWildcardVersion over all groups before any comparator is built,
	 * so its errors come first as in blang */
	{
		size_t start = 0;
		for (size_t g = 0; g < ngroups; g++) {
			for (size_t i = start; i < group_end[g]; i++) {
				rc = expand_token(&expanded, parts.s[i], err);
				if (rc)
					goto done;
			}
			egroup_end[g] = expanded.n;
			start = group_end[g] + 1;
		}
	}

	rc = range_new(&r, DIALECT_BLANG);
	if (rc) {
		rc = limit_error(rc, err);
		goto done;
	}
	{
		size_t start = 0;
		for (size_t g = 0; g < ngroups; g++) {
			rc = range_add_group(r);
			if (rc) {
				rc = limit_error(rc, err);
				goto done;
			}
			/* An empty group (from "a || || b") parses in blang but
			 * would panic when evaluated; here it matches nothing. */
			for (size_t i = start; i < egroup_end[g]; i++) {
				rc = build_term(r, expanded.s[i], err);
				if (rc)
					goto done;
			}
			start = egroup_end[g];
		}
	}
	*out = r;
	r = NULL;
done:
	fbc_semver_range_free(r);
	free(group_end);
	free(egroup_end);
	strv_dispose(&parts);
	strv_dispose(&expanded);
	return rc;
}

bool blang_term_matches(const struct range_term *t, const fbc_semver *v)
{
	int c = fbc_semver_compare(v, &t->v);

	switch (t->op) {
	case OP_EQ:
		return c == 0;
	case OP_NE:
		return c != 0;
	case OP_GT:
		return c > 0;
	case OP_GE:
		return c >= 0;
	case OP_LT:
		return c < 0;
	case OP_LE:
		return c <= 0;
	default:
		return false;
	}
}
