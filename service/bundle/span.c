/*
 * Raw JSON text: where a value starts and ends, and opm's {type, value}
 * lists decoded from JSON text with the value bytes kept as written (Go's
 * json.RawMessage), for JSON metadata files and the olm.properties CSV
 * annotation (bundles.md §2.8, §3.2 P1).
 */
#include "service/bundle/internal.h"

#include <stdlib.h>
#include <string.h>

static size_t ws(const char *s, size_t n, size_t i)
{
	while (i < n && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r'))
		i++;
	return i;
}

static size_t skip_string(const char *s, size_t n, size_t i)
{
	for (i++; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c == '\\') {
			i++;
			continue;
		}
		if (c == '"')
			return i + 1;
		if (c < 0x20)
			return SIZE_MAX;
	}
	return SIZE_MAX;
}

static size_t skip_value(const char *s, size_t n, size_t i, int depth)
{
	if (depth > 1000 || i >= n)
		return SIZE_MAX;
	switch (s[i]) {
	case '"':
		return skip_string(s, n, i);
	case '{':
	case '[': {
		char close = s[i] == '{' ? '}' : ']';
		bool obj = s[i] == '{';
		i = ws(s, n, i + 1);
		if (i < n && s[i] == close)
			return i + 1;
		for (;;) {
			if (obj) {
				if (i >= n || s[i] != '"')
					return SIZE_MAX;
				i = skip_string(s, n, i);
				if (i == SIZE_MAX)
					return i;
				i = ws(s, n, i);
				if (i >= n || s[i] != ':')
					return SIZE_MAX;
				i = ws(s, n, i + 1);
			}
			i = skip_value(s, n, i, depth + 1);
			if (i == SIZE_MAX)
				return i;
			i = ws(s, n, i);
			if (i < n && s[i] == ',') {
				i = ws(s, n, i + 1);
				continue;
			}
			if (i < n && s[i] == close)
				return i + 1;
			return SIZE_MAX;
		}
	}
	default: {
		size_t st = i;
		while (i < n && (strchr("+-.eE", s[i]) || (s[i] >= '0' && s[i] <= '9') ||
				 (s[i] >= 'a' && s[i] <= 'z')))
			i++;
		if (i == st)
			return SIZE_MAX;
		if ((i - st == 4 && (!memcmp(s + st, "true", 4) || !memcmp(s + st, "null", 4))) ||
		    (i - st == 5 && !memcmp(s + st, "false", 5)))
			return i;
		if (s[st] == '-' || (s[st] >= '0' && s[st] <= '9'))
			return i;
		return SIZE_MAX;
	}
	}
}

size_t fbc_bundle_json_skip(const char *s, size_t n, size_t i, size_t *start)
{
	i = ws(s, n, i);
	if (start)
		*start = i;
	return skip_value(s, n, i, 0);
}

/* Decode the JSON string literal at s[a..z) (quotes included). */
static char *unquote(const char *s, size_t a, size_t z)
{
	json_t *j = json_loadb(s + a, z - a, JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL);
	char *r = NULL;

	if (j && json_is_string(j))
		r = strdup(json_string_value(j));
	json_decref(j);
	return r;
}

void fbc_bundle_rawprops_free(rawprop *p, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(p[i].type);
		free(p[i].value);
	}
	free(p);
}

/* Members of the object at s[i]: calls back with key span and value span. */
typedef int (*member_fn)(void *ctx, const char *s, size_t ka, size_t kz, size_t va, size_t vz);

static int members(const char *s, size_t n, size_t i, member_fn fn, void *ctx)
{
	int rc;

	i = ws(s, n, i);
	if (i >= n || s[i] != '{')
		return FBC_EINVAL;
	i = ws(s, n, i + 1);
	if (i < n && s[i] == '}')
		return 0;
	for (;;) {
		size_t ka = i, kz, va, vz;
		kz = skip_string(s, n, i);
		if (kz == SIZE_MAX)
			return FBC_EPARSE;
		i = ws(s, n, kz);
		if (i >= n || s[i] != ':')
			return FBC_EPARSE;
		vz = fbc_bundle_json_skip(s, n, i + 1, &va);
		if (vz == SIZE_MAX)
			return FBC_EPARSE;
		if ((rc = fn(ctx, s, ka, kz, va, vz)))
			return rc;
		i = ws(s, n, vz);
		if (i < n && s[i] == ',') {
			i = ws(s, n, i + 1);
			continue;
		}
		return i < n && s[i] == '}' ? 0 : FBC_EPARSE;
	}
}

static bool key_is(const char *s, size_t ka, size_t kz, const char *name)
{
	char *k = unquote(s, ka, kz);
	bool r = k && fbc_bundle_fold_eq(k, strlen(k), name);

	free(k);
	return r;
}

typedef struct find_ctx {
	const char *name;
	size_t va, vz;
	bool found;
} find_ctx;

static int find_cb(void *ctx, const char *s, size_t ka, size_t kz, size_t va, size_t vz)
{
	find_ctx *f = ctx;

	if (key_is(s, ka, kz, f->name)) {
		f->found = true;
		f->va = va;
		f->vz = vz;
	}
	return 0;
}

typedef struct entry_ctx {
	rawprop *p;
	bool type_error;
	bool have_type, have_value;
	size_t ta, tz, va, vz;
} entry_ctx;

static int entry_cb(void *ctx, const char *s, size_t ka, size_t kz, size_t va, size_t vz)
{
	entry_ctx *e = ctx;

	if (key_is(s, ka, kz, "type")) {
		e->have_type = true;
		e->ta = va;
		e->tz = vz;
	} else if (key_is(s, ka, kz, "value")) {
		e->have_value = true;
		e->va = va;
		e->vz = vz;
	}
	return 0;
}

int fbc_bundle_raw_list(rawprop **out, size_t *n, bool *type_error, const char *s, size_t len,
			const char *member)
{
	size_t a, z, i, cap = 0, cnt = 0;
	rawprop *list = NULL;
	int rc = 0;

	*type_error = false;
	z = fbc_bundle_json_skip(s, len, 0, &a);
	if (z == SIZE_MAX)
		return FBC_EPARSE;
	if (member != NULL) {
		find_ctx f = {member, 0, 0, false};
		if (s[a] != '{') {
			*type_error = true;
			return FBC_EPARSE;
		}
		if ((rc = members(s, len, a, find_cb, &f)))
			return rc;
		if (!f.found) {
			*out = NULL;
			*n = 0;
			return 0;
		}
		a = f.va;
		z = f.vz;
	}
	if (z - a == 4 && memcmp(s + a, "null", 4) == 0) {
		*out = NULL;
		*n = 0;
		return 0;
	}
	if (s[a] != '[') {
		*type_error = true;
		return FBC_EPARSE;
	}
	i = ws(s, len, a + 1);
	if (s[i] == ']')
		goto ok;
	for (;;) {
		size_t ea, ez = fbc_bundle_json_skip(s, len, i, &ea);
		entry_ctx e;
		rawprop *p;

		memset(&e, 0, sizeof(e));
		if (cnt == cap) {
			size_t nc = cap ? cap * 2 : 8;
			rawprop *nl = realloc(list, nc * sizeof(*nl));
			if (nl == NULL) {
				rc = FBC_ENOMEM;
				goto fail;
			}
			list = nl;
			cap = nc;
		}
		p = &list[cnt++];
		memset(p, 0, sizeof(*p));
		if (s[ea] == '{') {
			if ((rc = members(s, len, ea, entry_cb, &e)))
				goto fail;
		} else if (!(ez - ea == 4 && memcmp(s + ea, "null", 4) == 0)) {
			*type_error = true;
			rc = FBC_EPARSE;
			goto fail;
		}
		if (e.have_type && s[e.ta] == '"')
			p->type = unquote(s, e.ta, e.tz);
		else if (e.have_type && !(e.tz - e.ta == 4 && !memcmp(s + e.ta, "null", 4)))
			*type_error = true; /* Go leaves the field empty and goes on */
		if (p->type == NULL)
			p->type = strdup("");
		if (e.have_value) {
			p->len = e.vz - e.va;
			p->value = malloc(p->len + 1);
			if (p->value) {
				memcpy(p->value, s + e.va, p->len);
				p->value[p->len] = 0;
			}
		} else {
			p->value = strdup("null");
			p->len = 4;
		}
		if (p->type == NULL || p->value == NULL) {
			rc = FBC_ENOMEM;
			goto fail;
		}
		i = ws(s, len, ez);
		if (s[i] == ',') {
			i = ws(s, len, i + 1);
			continue;
		}
		break;
	}
ok:
	*out = list;
	*n = cnt;
	return 0;
fail:
	fbc_bundle_rawprops_free(list, cnt);
	return rc;
}
