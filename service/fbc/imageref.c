/*
 * Docker image reference parsing (normalised names), a hand-written matcher
 * for the reference grammar's regular expressions.
 */
#include "service/fbc/imageref.h"

#include <ctype.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#define NAME_MAX_TOTAL 255
#define WORK_MAX       4096

static bool is_lower_alnum(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

/* ASCII only, as the grammar's classes are (and whatever the locale) */
static bool is_alnum(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

static bool is_hex(char c)
{
	return (c >= '0' && c <= '9') || ((c | 0x20) >= 'a' && (c | 0x20) <= 'f');
}

/* Whether s[0..n) is all hex digits (lower only: [0-9a-f]). Branch-free per
 * byte: the digits of a digest are random, a branch per class mispredicts;
 * 16 bytes at a time with SSE2 (every x86-64 has it): a digest is checked
 * twice per image reference, and catalogs hold hundreds of thousands. */
static bool all_hex(const char *s, size_t n, bool lower_only)
{
	unsigned bad = 0, fold = lower_only ? 0 : 0x20;
	size_t i = 0;

#ifdef __SSE2__
	const __m128i zero = _mm_set1_epi8('0'), nine = _mm_set1_epi8(9), a = _mm_set1_epi8('a'),
		      five = _mm_set1_epi8(5), f = _mm_set1_epi8((char)fold);

	for (; i + 16 <= n; i += 16) {
		__m128i v = _mm_loadu_si128((const __m128i *)(const void *)(s + i));
		/* unsigned x < k+1 as min(x, k) == x, on the wrapped differences */
		__m128i d = _mm_sub_epi8(v, zero), l = _mm_sub_epi8(_mm_or_si128(v, f), a);
		__m128i ok = _mm_or_si128(_mm_cmpeq_epi8(_mm_min_epu8(d, nine), d),
					  _mm_cmpeq_epi8(_mm_min_epu8(l, five), l));

		if (_mm_movemask_epi8(ok) != 0xffff)
			return false;
	}
#endif
	for (; i < n; i++) {
		unsigned c = (unsigned char)s[i];

		bad |= !((c - '0' < 10) | ((c | fold) - 'a' < 6));
	}
	return bad == 0;
}

/* [a-z0-9]+(?:(?:[._]|__|[-]+)[a-z0-9]+)* over s[0..n) */
static bool path_component(const char *s, size_t n)
{
	size_t i = 0;

	if (n == 0 || !is_lower_alnum(s[0]))
		return false;
	while (i < n) {
		while (i < n && is_lower_alnum(s[i]))
			i++;
		if (i == n)
			return true;
		if (s[i] == '.') {
			i++;
		} else if (s[i] == '_') {
			i++;
			if (i < n && s[i] == '_')
				i++;
		} else if (s[i] == '-') {
			while (i < n && s[i] == '-')
				i++;
		} else {
			return false;
		}
		if (i == n || !is_lower_alnum(s[i]))
			return false;
	}
	return true;
}

static bool path_components(const char *s, size_t n)
{
	size_t start = 0, i;

	for (i = 0; i <= n; i++) {
		if (i == n || s[i] == '/') {
			if (!path_component(s + start, i - start))
				return false;
			start = i + 1;
		}
	}
	return true;
}

/* (?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9]) */
static bool domain_component(const char *s, size_t n)
{
	size_t i;

	if (n == 0 || !is_alnum(s[0]) || !is_alnum(s[n - 1]))
		return false;
	for (i = 0; i < n; i++) {
		if (!is_alnum(s[i]) && s[i] != '-')
			return false;
	}
	return true;
}

static bool domain(const char *s, size_t n)
{
	size_t host_end = n, i, start = 0;

	if (n == 0)
		return false;
	if (s[0] == '[') {
		const char *close = memchr(s, ']', n);

		if (!close || close == s + 1)
			return false;
		for (i = 1; s + i < close; i++) {
			if (!is_hex(s[i]) && s[i] != ':')
				return false;
		}
		host_end = (size_t)(close - s) + 1;
	} else {
		const char *colon = memchr(s, ':', n);

		if (colon)
			host_end = (size_t)(colon - s);
		for (i = 0; i <= host_end; i++) {
			if (i == host_end || s[i] == '.') {
				if (!domain_component(s + start, i - start))
					return false;
				start = i + 1;
			}
		}
	}
	if (host_end == n)
		return true;
	if (s[host_end] != ':' || host_end + 1 == n)
		return false;
	for (i = host_end + 1; i < n; i++) {
		if (!isdigit((unsigned char)s[i]))
			return false;
	}
	return true;
}

/* NameRegexp: (?:domain/)?component(?:/component)* */
static bool name_matches(const char *s, size_t n)
{
	const char *slash = memchr(s, '/', n);

	if (path_components(s, n))
		return true;
	return slash && domain(s, (size_t)(slash - s)) &&
	       path_components(slash + 1, n - (size_t)(slash - s) - 1);
}

/* [\w][\w.-]{0,127} */
static bool tag_matches(const char *s, size_t n)
{
	size_t i;

	if (n == 0 || n > 128 || !(is_alnum(s[0]) || s[0] == '_'))
		return false;
	for (i = 1; i < n; i++) {
		if (!(is_alnum(s[i]) || s[i] == '_' || s[i] == '.' || s[i] == '-'))
			return false;
	}
	return true;
}

/* [A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*[:][[:xdigit:]]{32,} */
static bool digest_matches(const char *s)
{
	const char *colon = strchr(s, ':');
	size_t i, n;

	if (!colon || colon == s)
		return false;
	n = (size_t)(colon - s);
	for (i = 0; i < n;) {
		if (!isalpha((unsigned char)s[i]))
			return false;
		i++;
		while (i < n && is_alnum(s[i]))
			i++;
		if (i < n) {
			if (!strchr("-_+.", s[i]))
				return false;
			i++;
			if (i == n)
				return false;
		}
	}
	n = strlen(colon + 1);
	return n >= 32 && all_hex(colon + 1, n, false);
}

/* The anchored ReferenceRegexp; on a match, the name/tag/digest split. */
static bool reference_matches(const char *s, size_t *name_len, const char **tag, size_t *tag_len,
			      const char **dig)
{
	const char *at = strchr(s, '@');
	size_t rest = at ? (size_t)(at - s) : strlen(s);
	const char *colon = NULL;
	size_t i;

	*tag = NULL;
	*tag_len = 0;
	*dig = NULL;
	if (at) {
		if (!digest_matches(at + 1))
			return false;
		*dig = at + 1;
	}
	for (i = rest; i > 0; i--) {
		if (s[i - 1] == '/')
			break;
		if (s[i - 1] == ':') {
			colon = s + i - 1;
			break;
		}
	}
	if (colon) {
		*tag = colon + 1;
		*tag_len = rest - (size_t)(colon - s) - 1;
		if (!tag_matches(*tag, *tag_len))
			return false;
		rest = (size_t)(colon - s);
	}
	*name_len = rest;
	return name_matches(s, rest);
}

static int fail(fbc_error *err, const char *msg)
{
	return fbc_error_set(err, FBC_EINVAL, NULL, "%s", msg);
}

static int check_digest(const char *d, fbc_error *err)
{
	const char *colon = strchr(d, ':');
	size_t alen = (size_t)(colon - d), hexlen = strlen(colon + 1), want;

	if (alen == 6 && strncmp(d, "sha256", 6) == 0)
		want = 64;
	else if (alen == 6 && strncmp(d, "sha384", 6) == 0)
		want = 96;
	else if (alen == 6 && strncmp(d, "sha512", 6) == 0)
		want = 128;
	else
		return fail(err, "unsupported digest algorithm");
	if (hexlen != want)
		return fail(err, "invalid checksum digest length");
	if (!all_hex(colon + 1, hexlen, true))
		return fail(err, "invalid checksum digest format");
	return 0;
}

int fbc_imageref_parse(fbc_imageref *out, const char *s, fbc_error *err)
{
	char full[WORK_MAX], lower[WORK_MAX], dom[WORK_MAX];
	const char *slash, *rem, *tag, *dig;
	size_t i, n = strlen(s), name_len, tag_len, remote_len, dom_len, rem_len;
	bool is_default;
	int rc;

	if (n == 64) {
		for (i = 0;
		     i < 64 && ((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')); i++)
			;
		if (i == 64)
			return fbc_error_set(err, FBC_EINVAL, NULL,
					     "invalid repository name (%s), cannot specify 64-byte "
					     "hexadecimal strings",
					     s);
	}
	if (n >= WORK_MAX - 32)
		return fail(err, "repository name must not be more than 255 characters");
	/* splitDockerDomain */
	slash = strchr(s, '/');
	is_default = true;
	if (slash) {
		size_t dl = (size_t)(slash - s);
		bool has_upper = false, has_dot_colon = memchr(s, '.', dl) || memchr(s, ':', dl);

		for (i = 0; i < dl; i++)
			has_upper = has_upper || isupper((unsigned char)s[i]);
		if (has_dot_colon || (dl == 9 && strncmp(s, "localhost", 9) == 0) || has_upper)
			is_default = false;
	}
	if (is_default) {
		dom_len = 0;
		rem = s;
	} else {
		dom_len = (size_t)(slash - s);
		rem = slash + 1;
	}
	if (dom_len == 0 || (dom_len == 15 && memcmp(s, "index.docker.io", 15) == 0))
		memcpy(dom, "docker.io", dom_len = 9);
	else
		memcpy(dom, s, dom_len);
	dom[dom_len] = '\0';
	/* full = dom "/" rem, or dom "/library/" rem for an official image (n is
	 * bounded above: it fits) */
	rem_len = n - (size_t)(rem - s);
	memcpy(full, dom, dom_len);
	i = dom_len;
	if (dom_len == 9 && memcmp(dom, "docker.io", 9) == 0 && !memchr(rem, '/', rem_len)) {
		memcpy(full + i, "/library/", 9);
		i += 9;
	} else {
		full[i++] = '/';
	}
	memcpy(full + i, rem, rem_len + 1);
	/* the lowercase check covers the remainder up to the first ':' */
	remote_len = strcspn(rem, ":");
	for (i = 0; i < remote_len; i++) {
		if (isupper((unsigned char)rem[i])) {
			const char *r = full + strlen(dom) + 1;

			return fbc_error_set(
				err, FBC_EINVAL, NULL,
				"invalid reference format: repository name (%.*s) must "
				"be lowercase",
				(int)strcspn(r, ":"), r);
		}
	}
	/* reference.Parse */
	if (!reference_matches(full, &name_len, &tag, &tag_len, &dig)) {
		for (i = 0; full[i]; i++)
			lower[i] = (char)tolower((unsigned char)full[i]);
		lower[i] = '\0';
		if (reference_matches(lower, &name_len, &tag, &tag_len, &dig))
			return fail(err, "repository name must be lowercase");
		return fail(err, "invalid reference format");
	}
	if (name_len > NAME_MAX_TOTAL)
		return fail(err, "repository name must not be more than 255 characters");
	if (dig && (rc = check_digest(dig, err)))
		return rc;
	if (out) {
		const char *p = full + strlen(dom) + 1;

		memset(out, 0, sizeof(*out));
		snprintf(out->domain, sizeof(out->domain), "%s", dom);
		snprintf(out->path, sizeof(out->path), "%.*s", (int)(name_len - strlen(dom) - 1),
			 p);
		if (tag)
			snprintf(out->tag, sizeof(out->tag), "%.*s", (int)tag_len, tag);
		if (dig)
			snprintf(out->digest, sizeof(out->digest), "%s", dig);
	}
	return 0;
}
