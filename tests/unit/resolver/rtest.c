#include "tests/unit/resolver/rtest.h"

#include "service/resolver/resolver.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

json_t *rtest_resolve(json_t *input, const char *base_dir)
{
	fbc_resolve_request *req = NULL;
	fbc_resolve_result *res = NULL;
	fbc_catalog **cats = NULL;
	json_t *out = NULL;
	fbc_error err;

	fbc_error_init(&err);
	if (fbc_resolve_request_parse(&req, input, NULL, &err) < 0) {
		fprintf(stderr, "request: %s: %s\n", err.where, err.message);
		return NULL;
	}
	cats = calloc(req->n_catalogs + 1, sizeof(*cats));
	for (size_t k = 0; cats && k < req->n_catalogs; k++) {
		fbc_resolve_catalog *c = &req->catalogs[k];
		fbc_diags d;
		int rc;

		fbc_diags_init(&d, 0);
		if (c->path) {
			char path[4096];
			if (base_dir && c->path[0] != '/')
				snprintf(path, sizeof(path), "%s/%s", base_dir, c->path);
			else
				snprintf(path, sizeof(path), "%s", c->path);
			rc = fbc_catalog_load_dir(&cats[k], path, NULL, &d, &err);
		} else {
			rc = fbc_resolve_catalog_from_blobs(&cats[k], c->fbc, c->name, &d, &err);
		}
		for (size_t i = 0; i < fbc_diags_count(&d); i++)
			fprintf(stderr, "catalog %s: finding %s: %s\n", c->name,
				fbc_diags_at(&d, i)->code, fbc_diags_at(&d, i)->message);
		fbc_diags_dispose(&d);
		if (rc < 0) {
			fprintf(stderr, "catalog %s: %s\n", c->name, err.message);
			goto done;
		}
		c->catalog = cats[k];
	}
	if (fbc_resolve(&res, req, NULL, &err) < 0) {
		fprintf(stderr, "resolve: %s\n", err.message);
		goto done;
	}
	if (fbc_resolve_result_to_json(&out, res, true, &err) < 0)
		out = NULL;
done:
	fbc_resolve_result_free(res);
	for (size_t k = 0; cats && k < req->n_catalogs; k++)
		fbc_catalog_free(cats[k]);
	free(cats);
	fbc_resolve_request_free(req);
	return out;
}

json_t *rtest_resolve_text(const char *text)
{
	json_error_t je;
	json_t *in = json_loads(text, 0, &je), *out;

	if (!in) {
		fprintf(stderr, "test input: line %d: %s\n", je.line, je.text);
		return NULL;
	}
	out = rtest_resolve(in, NULL);
	json_decref(in);
	return out;
}

static bool match(const json_t *e, const json_t *a, char *why, size_t n, const char *path)
{
	char sub[512];

	if (json_is_string(e) && json_string_value(e)[0] == '~') {
		if (json_is_string(a) && strstr(json_string_value(a), json_string_value(e) + 1))
			return true;
		snprintf(why, n, "%s: no substring \"%s\"", path, json_string_value(e) + 1);
		return false;
	}
	if (json_is_object(e)) {
		const char *k;
		json_t *v;
		if (!json_is_object(a)) {
			snprintf(why, n, "%s: not an object", path);
			return false;
		}
		json_object_foreach((json_t *)e, k, v)
		{
			snprintf(sub, sizeof(sub), "%s.%s", path, k);
			if (!match(v, json_object_get(a, k), why, n, sub))
				return false;
		}
		return true;
	}
	if (json_is_array(e)) {
		if (!json_is_array(a) || json_array_size(a) != json_array_size(e)) {
			snprintf(why, n, "%s: array of %zu expected", path, json_array_size(e));
			return false;
		}
		for (size_t i = 0; i < json_array_size(e); i++) {
			snprintf(sub, sizeof(sub), "%s[%zu]", path, i);
			if (!match(json_array_get(e, i), json_array_get(a, i), why, n, sub))
				return false;
		}
		return true;
	}
	if (!a || !json_equal((json_t *)e, (json_t *)a)) {
		snprintf(why, n, "%s: value differs", path);
		return false;
	}
	return true;
}

bool rtest_match(const json_t *expected, const json_t *actual, char *why, size_t why_size)
{
	return match(expected, actual, why, why_size, "$");
}

static int cmp(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

const char *rtest_selected(const json_t *result)
{
	static char buf[8192];
	const char *names[512];
	json_t *sel = json_object_get(result, "selected");
	size_t n = 0, len = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < json_array_size(sel) && n < 512; i++)
		names[n++] = json_string_value(json_object_get(json_array_get(sel, i), "bundle"));
	qsort(names, n, sizeof(*names), cmp);
	for (size_t i = 0; i < n; i++)
		len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%s%s", i ? " " : "",
					names[i] ? names[i] : "?");
	return buf;
}
