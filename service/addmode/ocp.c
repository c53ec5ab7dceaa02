/*
 * The com.redhat.openshift.versions grammar (ocp.h).
 */
#include "service/addmode/ocp.h"

#include <stdint.h>
#include <string.h>

#define PARTS 4

typedef struct ocpv {
	uint32_t p[PARTS];
} ocpv;

static int cmpv(const ocpv *a, const ocpv *b)
{
	size_t i;

	for (i = 0; i < PARTS; i++) {
		if (a->p[i] != b->p[i])
			return a->p[i] < b->p[i] ? -1 : 1;
	}
	return 0;
}

/* N(.N)* in s[0..n), blanks around allowed. */
static bool parse_version(ocpv *out, const char *s, size_t n)
{
	size_t i = 0, part = 0;

	while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t'))
		n--;
	while (i < n && (s[i] == ' ' || s[i] == '\t'))
		i++;
	memset(out, 0, sizeof(*out));
	if (i == n)
		return false;
	for (;;) {
		size_t digits = 0;
		uint32_t v = 0;

		while (i < n && s[i] >= '0' && s[i] <= '9') {
			if (++digits > 6)
				return false;
			v = v * 10 + (uint32_t)(s[i] - '0');
			i++;
		}
		if (digits == 0 || part >= PARTS)
			return false;
		out->p[part++] = v;
		if (i == n)
			return true;
		if (s[i] != '.')
			return false;
		i++;
	}
}

bool fbc_ocp_catalog_name(const char *catalog)
{
	ocpv v;

	return catalog && catalog[0] == 'v' && parse_version(&v, catalog + 1, strlen(catalog + 1));
}

static int bad(fbc_error *err, const char *label, const char *why)
{
	return fbc_error_set(err, FBC_EPARSE, "com.redhat.openshift.versions",
			     "invalid com.redhat.openshift.versions label \"%s\": %s", label, why);
}

int fbc_ocp_label_admits(bool *out, const char *label, const char *catalog, unsigned flags,
			 fbc_error *err)
{
	char s[FBC_OCP_LABEL_MAX + 1];
	size_t i, n = 0, len;
	ocpv want, a, b;
	const char *c = catalog ? catalog : "";
	bool admits = false, had_v = false;

	if (c[0] == 'v')
		c++;
	if (!parse_version(&want, c, strlen(c)))
		return fbc_error_set(err, FBC_EPARSE, "catalog",
				     "catalog \"%s\" is not an OpenShift version (v4.NN)",
				     catalog ? catalog : "");
	if (!label) {
		*out = true;
		return 0;
	}
	len = strlen(label);
	if (len > FBC_OCP_LABEL_MAX)
		return fbc_error_set(err, FBC_ELIMIT, "com.redhat.openshift.versions",
				     "com.redhat.openshift.versions label longer than %d bytes",
				     FBC_OCP_LABEL_MAX);
	for (i = 0; i < len; i++) {
		if (label[i] == 'v') {
			had_v = true;
			continue;
		}
		s[n++] = label[i];
	}
	s[n] = '\0';
	while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t'))
		s[--n] = '\0';
	i = 0;
	while (i < n && (s[i] == ' ' || s[i] == '\t'))
		i++;
	if (i == n) {
		*out = true; /* empty: as if absent */
		return 0;
	}
	if ((flags & FBC_OCP_VLESS_ADMITS_ALL) && !had_v) {
		/* P-5, but only for a label that would parse */
		bool dummy;

		if (fbc_ocp_label_admits(&dummy, label, catalog, 0, err) != 0)
			return err ? err->code : FBC_EPARSE;
		*out = true;
		return 0;
	}
	{
		const char *t = s + i;
		size_t tn = n - i;

		if (memchr(t, '|', tn)) {
			size_t start = 0, j;

			for (j = 0; j <= tn; j++) {
				const char *part;
				size_t pn;

				if (j < tn && t[j] != '|')
					continue;
				part = t + start;
				pn = j - start;
				while (pn && (*part == ' ' || *part == '\t')) {
					part++;
					pn--;
				}
				if (pn >= 2 && part[0] == '>' && part[1] == '=') {
					if (!parse_version(&a, part + 2, pn - 2))
						return bad(err, label, "a part is not >=VERSION");
					admits = admits || cmpv(&a, &want) <= 0;
				} else if (pn >= 1 && part[0] == '=') {
					if (!parse_version(&a, part + 1, pn - 1))
						return bad(err, label, "a part is not =VERSION");
					admits = admits || cmpv(&a, &want) == 0;
				} else {
					return bad(
						err, label,
						"every part of a | list must start with = or >=");
				}
				start = j + 1;
			}
		} else if (t[0] == '=') {
			if (!parse_version(&a, t + 1, tn - 1))
				return bad(err, label, "=VERSION expected");
			admits = cmpv(&a, &want) == 0;
		} else if (memchr(t, '-', tn)) {
			const char *dash = memchr(t, '-', tn);
			size_t an = (size_t)(dash - t);

			if (memchr(dash + 1, '-', tn - an - 1))
				return bad(err, label, "more than one '-'");
			if (!parse_version(&a, t, an) || !parse_version(&b, dash + 1, tn - an - 1))
				return bad(err, label, "VERSION-VERSION expected");
			admits = cmpv(&a, &want) <= 0 && cmpv(&want, &b) <= 0;
		} else if (memchr(t, ',', tn)) {
			size_t start = 0, j;
			bool have = false;
			ocpv lo;

			memset(&lo, 0, sizeof(lo));
			for (j = 0; j <= tn; j++) {
				if (j < tn && t[j] != ',')
					continue;
				if (!parse_version(&a, t + start, j - start))
					return bad(err, label, "a list of versions expected");
				if (!have || cmpv(&a, &lo) < 0)
					lo = a;
				have = true;
				start = j + 1;
			}
			admits = cmpv(&lo, &want) <= 0;
		} else {
			if (!parse_version(&a, t, tn))
				return bad(err, label, "a version (v4.NN) expected");
			admits = cmpv(&a, &want) <= 0;
		}
	}
	*out = admits;
	return 0;
}
