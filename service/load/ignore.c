/*
 * .indexignore matching with go-git's gitignore semantics (pattern.go and
 * matcher.go as used by joelanford/ignore): see ignore.h and spec §1.2.
 */
#include "service/load/ignore.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SEGMENTS 256

typedef struct pattern {
	char **domain; /* components */
	size_t ndomain;
	char **segs; /* pattern split on '/' */
	size_t nsegs;
	bool inclusion;
	bool dir_only;
	bool is_glob; /* contained a '/': anchored, segment by segment */
} pattern;

struct fbc_ignore {
	pattern *pats;
	size_t npats;
	size_t cap;
};

static void free_strv(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

/* Split s[0..n) on '/' into a malloc'd vector (empty parts kept). */
static int split(char ***out, size_t *nout, const char *s, size_t n)
{
	size_t count = 1, k = 0;
	char **v;
	const char *p = s, *end = s + n;

	for (size_t i = 0; i < n; i++)
		if (s[i] == '/')
			count++;
	if (count > MAX_SEGMENTS)
		return FBC_ELIMIT;
	v = calloc(count, sizeof(*v));
	if (v == NULL)
		return FBC_ENOMEM;
	for (;;) {
		const char *q = memchr(p, '/', (size_t)(end - p));
		const char *e = q ? q : end;
		v[k] = strndup(p, (size_t)(e - p));
		if (v[k] == NULL) {
			free_strv(v, k);
			return FBC_ENOMEM;
		}
		k++;
		if (q == NULL)
			break;
		p = q + 1;
	}
	*out = v;
	*nout = k;
	return 0;
}

int fbc_ignore_create(fbc_ignore **out, fbc_error *err)
{
	fbc_ignore *ig = calloc(1, sizeof(*ig));
	int rc;

	if (ig == NULL)
		return fbc_error_set(err, FBC_ENOMEM, NULL, "out of memory");
	rc = fbc_ignore_add_pattern(ig, "", ".indexignore", err);
	if (rc != 0) {
		fbc_ignore_free(ig);
		return rc;
	}
	*out = ig;
	return 0;
}

void fbc_ignore_free(fbc_ignore *ig)
{
	if (ig == NULL)
		return;
	for (size_t i = 0; i < ig->npats; i++) {
		free_strv(ig->pats[i].domain, ig->pats[i].ndomain);
		free_strv(ig->pats[i].segs, ig->pats[i].nsegs);
	}
	free(ig->pats);
	free(ig);
}

static bool is_trim(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

int fbc_ignore_add_pattern(fbc_ignore *ig, const char *domain, const char *line, fbc_error *err)
{
	const char *s = line, *e = line + strlen(line);
	pattern p;
	int rc;

	memset(&p, 0, sizeof(p));
	while (s < e && is_trim(*s))
		s++;
	while (e > s && is_trim(e[-1]))
		e--;
	if (s == e || *s == '#')
		return 0;
	if (*s == '!') {
		p.inclusion = true;
		s++;
	}
	/* go-git trims trailing spaces unless escaped ("\ "); the line was
	 * already trimmed, so only an escaped space could remain */
	if (e > s && e[-1] == '/') {
		p.dir_only = true;
		e--;
	}
	p.is_glob = memchr(s, '/', (size_t)(e - s)) != NULL;
	rc = split(&p.segs, &p.nsegs, s, (size_t)(e - s));
	if (rc != 0)
		goto fail;
	if (domain[0] != 0) {
		rc = split(&p.domain, &p.ndomain, domain, strlen(domain));
		if (rc != 0)
			goto fail;
	}
	if (ig->npats == ig->cap) {
		size_t ncap = ig->cap ? ig->cap * 2 : 16;
		pattern *np = realloc(ig->pats, ncap * sizeof(*np));
		if (np == NULL) {
			rc = FBC_ENOMEM;
			goto fail;
		}
		ig->pats = np;
		ig->cap = ncap;
	}
	ig->pats[ig->npats++] = p;
	return 0;
fail:
	free_strv(p.segs, p.nsegs);
	free_strv(p.domain, p.ndomain);
	return fbc_error_set(err, rc, domain,
			     rc == FBC_ENOMEM ? "out of memory"
					      : "ignore pattern has too many segments");
}

int fbc_ignore_add_file(fbc_ignore *ig, const char *domain, const char *data, size_t len,
			fbc_error *err)
{
	const char *p = data, *end = data + len;
	char line[4096];

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *e = nl ? nl : end;
		size_t n = (size_t)(e - p);
		int rc;

		if (n >= sizeof(line))
			n = sizeof(line) - 1; /* no sane pattern is this long */
		memcpy(line, p, n);
		line[n] = 0;
		if (memchr(line, 0, n) == NULL) {
			rc = fbc_ignore_add_pattern(ig, domain, line, err);
			if (rc != 0)
				return rc;
		}
		p = nl ? nl + 1 : end;
	}
	return 0;
}

/* ---- filepath.Match ---- */

static size_t rune_len(const char *s)
{
	unsigned char c = (unsigned char)s[0];

	if (c < 0x80)
		return 1;
	if ((c & 0xe0) == 0xc0 && s[1] != 0)
		return 2;
	if ((c & 0xf0) == 0xe0 && s[1] != 0 && s[2] != 0)
		return 3;
	if ((c & 0xf8) == 0xf0 && s[1] != 0 && s[2] != 0 && s[3] != 0)
		return 4;
	return 1;
}

static uint32_t rune_at(const char *s, size_t *n)
{
	const unsigned char *u = (const unsigned char *)s;

	*n = rune_len(s);
	switch (*n) {
	case 2:
		return (uint32_t)(u[0] & 0x1f) << 6 | (u[1] & 0x3f);
	case 3:
		return (uint32_t)(u[0] & 0x0f) << 12 | (uint32_t)(u[1] & 0x3f) << 6 | (u[2] & 0x3f);
	case 4:
		return (uint32_t)(u[0] & 0x07) << 18 | (uint32_t)(u[1] & 0x3f) << 12 |
		       (uint32_t)(u[2] & 0x3f) << 6 | (u[3] & 0x3f);
	default:
		return u[0];
	}
}

/* One class bound (getEsc): returns false for a malformed pattern. */
static bool class_char(const char **pp, uint32_t *r)
{
	const char *p = *pp;
	size_t n;

	if (*p == 0 || *p == '-' || *p == ']')
		return false;
	if (*p == '\\') {
		p++;
		if (*p == 0)
			return false;
	}
	*r = rune_at(p, &n);
	*pp = p + n;
	return true;
}

/* Parse a class at *pp (just after '['); set *hit for rune r. */
static bool parse_class(const char **pp, uint32_t r, bool *hit)
{
	const char *p = *pp;
	bool neg = false, match = false;
	int nrange = 0;

	if (*p == '^') {
		neg = true;
		p++;
	}
	for (;;) {
		uint32_t lo, hi;
		if (*p == ']' && nrange > 0) {
			p++;
			break;
		}
		if (!class_char(&p, &lo))
			return false;
		hi = lo;
		if (*p == '-') {
			p++;
			if (!class_char(&p, &hi))
				return false;
		}
		if (lo <= r && r <= hi)
			match = true;
		nrange++;
	}
	*pp = p;
	*hit = match != neg;
	return true;
}

static bool pattern_valid(const char *p)
{
	while (*p) {
		if (*p == '\\') {
			if (p[1] == 0)
				return false;
			p += 2;
		} else if (*p == '[') {
			bool hit;
			p++;
			if (!parse_class(&p, 0, &hit))
				return false;
		} else {
			p++;
		}
	}
	return true;
}

static bool glob_rec(const char *p, const char *s, int budget)
{
	size_t n;

	if (budget <= 0)
		return false;
	while (*p) {
		switch (*p) {
		case '*':
			while (*p == '*')
				p++;
			if (*p == 0)
				return strchr(s, '/') == NULL;
			for (const char *t = s;; t++) {
				if (glob_rec(p, t, budget - 1))
					return true;
				if (*t == 0 || *t == '/')
					return false;
			}
		case '?':
			if (*s == 0 || *s == '/')
				return false;
			(void)rune_at(s, &n);
			s += n;
			p++;
			break;
		case '[': {
			bool hit = false;
			uint32_t r;
			if (*s == 0)
				return false;
			r = rune_at(s, &n);
			p++;
			if (!parse_class(&p, r, &hit) || !hit)
				return false;
			s += n;
			break;
		}
		case '\\':
			p++;
			__attribute__((fallthrough)); /* an escaped character matches literally */
		default:
			if (*p != *s)
				return false;
			p++;
			s++;
			break;
		}
	}
	return *s == 0;
}

bool fbc_ignore_glob(const char *pat, const char *name)
{
	if (!pattern_valid(pat))
		return false;
	return glob_rec(pat, name, 10000);
}

/* ---- go-git pattern.Match, for files (isDir = false) ---- */

static bool simple_name_match(const pattern *p, char **path, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (!fbc_ignore_glob(p->segs[0], path[i]))
			continue;
		if (p->dir_only && i == n - 1)
			return false;
		return true;
	}
	return false;
}

static bool glob_match(const pattern *p, char **path, size_t n)
{
	bool matched = false, can_traverse = false;

	for (size_t i = 0; i < p->nsegs; i++) {
		const char *seg = p->segs[i];
		if (seg[0] == 0) {
			can_traverse = false;
			continue;
		}
		if (strcmp(seg, "**") == 0) {
			if (i == p->nsegs - 1)
				break;
			can_traverse = true;
			continue;
		}
		if (strstr(seg, "**") != NULL)
			return false;
		if (n == 0)
			return false;
		if (can_traverse) {
			can_traverse = false;
			while (n > 0) {
				const char *e = path[0];
				path++;
				n--;
				if (fbc_ignore_glob(seg, e)) {
					matched = true;
					break;
				} else if (n == 0) {
					matched = false;
				}
			}
		} else {
			if (!fbc_ignore_glob(seg, path[0]))
				return false;
			matched = true;
			path++;
			n--;
		}
	}
	if (matched && p->dir_only && n == 0)
		matched = false;
	return matched;
}

static int pattern_match(const pattern *p, char **path, size_t n)
{
	if (n <= p->ndomain)
		return 0;
	for (size_t i = 0; i < p->ndomain; i++)
		if (strcmp(path[i], p->domain[i]) != 0)
			return 0;
	path += p->ndomain;
	n -= p->ndomain;
	if (p->is_glob ? !glob_match(p, path, n) : !simple_name_match(p, path, n))
		return 0;
	return p->inclusion ? 1 : -1;
}

bool fbc_ignore_match(const fbc_ignore *ig, const char *path)
{
	char **comps = NULL;
	size_t n = 0;
	bool ignored = false;

	if (split(&comps, &n, path, strlen(path)) != 0)
		return false; /* absurdly deep path: never ignore, the load reports it */
	for (size_t i = ig->npats; i-- > 0;) {
		int m = pattern_match(&ig->pats[i], comps, n);
		if (m != 0) {
			ignored = m < 0;
			break;
		}
	}
	free_strv(comps, n);
	return ignored;
}
