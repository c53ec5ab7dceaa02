/*
 * Entry points of service/template: type dispatch (§1.1), output writers
 * (§6, §6.9), comparison with a committed file, and the community
 * conventions of §5 (migrate level per catalog, ci.yaml mapping).
 */
#include "service/template/internal.h"
#include "service/gojson/gojson.h"
#include "service/goyaml/goyaml.h"
#include "service/load/load.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int fbc_template_type_parse(fbc_template_type *out, const char *s, fbc_error *err)
{
	if (strcmp(s, "basic") == 0)
		*out = FBC_TEMPLATE_BASIC;
	else if (strcmp(s, "semver") == 0)
		*out = FBC_TEMPLATE_SEMVER;
	else
		return fbc_error_set(err, FBC_EINVAL, NULL,
				     "unknown template type \"%s\" (basic or semver)", s);
	return 0;
}

int fbc_semver_rules_parse(fbc_semver_rules *out, const char *s, fbc_error *err)
{
	if (strcmp(s, "v1.71") == 0)
		*out = FBC_SEMVER_RULES_V171;
	else if (strcmp(s, "v1.46") == 0)
		*out = FBC_SEMVER_RULES_V146;
	else
		return fbc_error_set(err, FBC_EINVAL, NULL,
				     "unknown semver rules \"%s\" (v1.71 or v1.46)", s);
	return 0;
}

void fbc_template_result_dispose(fbc_template_result *r)
{
	if (r == NULL)
		return;
	json_decref(r->blobs);
	r->blobs = NULL;
}

int fbc_template_render(fbc_template_result *r, const char *data, size_t len,
			const fbc_template_opts *opts, fbc_template_sources *src, fbc_error *err)
{
	json_t *doc = NULL;
	const char *file = opts->file ? opts->file : "-";
	fbc_template_opts o = *opts;
	o.file = file;
	r->blobs = NULL;
	int rc = tpl_decode(&doc, data, len, file, err);
	if (rc != 0)
		return rc;
	fbc_template_type type = opts->type;
	if (type == FBC_TEMPLATE_AUTO) {
		json_t *s = json_is_object(doc) ? tpl_fold_get(doc, "schema", NULL) : NULL;
		const char *schema = json_string_value(s);
		if (schema == NULL || schema[0] == '\0') {
			rc = tpl_fail(err, FBC_EINVAL, file, 1,
				      "template input missing required 'schema' field");
			goto done;
		}
		if (strcmp(schema, "olm.template.basic") == 0) {
			type = FBC_TEMPLATE_BASIC;
		} else if (strcmp(schema, "olm.semver") == 0) {
			type = FBC_TEMPLATE_SEMVER;
		} else {
			rc = tpl_fail(err, FBC_EINVAL, file, tpl_line_of(data, len, schema, 0),
				      "unknown template schema: %s", schema);
			goto done;
		}
	}
	if (type == FBC_TEMPLATE_BASIC)
		rc = tpl_render_basic(r, doc, data, len, &o, src, err);
	else
		rc = tpl_render_semver(r, doc, data, len, &o, src, err);
done:
	json_decref(doc);
	return rc;
}

int fbc_template_write_yaml(fbc_buf *out, const fbc_template_result *r, fbc_error *err)
{
	size_t i;
	json_t *b;
	json_array_foreach(r->blobs, i, b)
	{
		int rc = fbc_goyaml_emit_document(out, b, err);
		if (rc != 0)
			return rc;
	}
	return 0;
}

int fbc_template_render_yaml(fbc_buf *out, const char *data, size_t len,
			     const fbc_template_opts *opts, fbc_template_sources *src,
			     fbc_error *err)
{
	fbc_template_result r = {NULL};
	int rc = fbc_template_render(&r, data, len, opts, src, err);
	if (rc == 0)
		rc = fbc_template_write_yaml(out, &r, err);
	fbc_template_result_dispose(&r);
	return rc;
}

int fbc_template_render_tree_yaml(fbc_buf *out, fbc_tree *t, const char *path,
				  fbc_template_type type, const char *catalog,
				  fbc_semver_rules rules, fbc_template_sources *src, fbc_error *err)
{
	fbc_tree_blob b;
	int rc = fbc_tree_read(t, &b, path, 64u << 20, err);
	if (rc != 0) {
		fbc_error_prefix(err, "unable to open \"%s\"", path);
		return rc;
	}
	fbc_template_opts o = {type, fbc_template_catalog_migrate(catalog), rules, path};
	rc = fbc_template_render_yaml(out, b.data ? b.data : "", b.len, &o, src, err);
	fbc_tree_blob_release(t, &b);
	return rc;
}

/* --- JSON (§6.9): struct field order, compact, then Go's Indent --- */

static int put_value(fbc_buf *b, const json_t *v, bool sort);

static int put_keys(fbc_buf *b, const json_t *o, const char *const *order, bool sort_rest)
{
	int rc = fbc_buf_putc(b, '{');
	bool first = true;
	if (order != NULL) {
		for (size_t i = 0; order[i] != NULL && rc == 0; i++) {
			json_t *v = json_object_get(o, order[i]);
			if (v == NULL)
				continue;
			if (!first)
				rc = fbc_buf_putc(b, ',');
			first = false;
			if (rc == 0)
				rc = fbc_gojson_string(b, order[i], strlen(order[i]), false);
			if (rc == 0)
				rc = fbc_buf_putc(b, ':');
			if (rc == 0)
				rc = put_value(b, v, false);
		}
	} else {
		size_t n = json_object_size(o), k = 0;
		const char **keys = calloc(n ? n : 1, sizeof(*keys));
		const char *key;
		json_t *v;
		if (keys == NULL)
			return FBC_ENOMEM;
		json_object_foreach((json_t *)o, key, v) keys[k++] = key;
		if (sort_rest) {
			for (size_t i = 1; i < k; i++)
				for (size_t j = i; j > 0 && strcmp(keys[j - 1], keys[j]) > 0; j--) {
					const char *t = keys[j];
					keys[j] = keys[j - 1];
					keys[j - 1] = t;
				}
		}
		for (size_t i = 0; i < k && rc == 0; i++) {
			if (!first)
				rc = fbc_buf_putc(b, ',');
			first = false;
			if (rc == 0)
				rc = fbc_gojson_string(b, keys[i], strlen(keys[i]), false);
			if (rc == 0)
				rc = fbc_buf_putc(b, ':');
			if (rc == 0)
				rc = put_value(b, json_object_get(o, keys[i]), sort_rest);
		}
		free(keys);
	}
	if (rc == 0)
		rc = fbc_buf_putc(b, '}');
	return rc;
}

static int put_value(fbc_buf *b, const json_t *v, bool sort)
{
	char num[64];
	switch (json_typeof(v)) {
	case JSON_OBJECT:
		return put_keys(b, v, NULL, sort);
	case JSON_ARRAY: {
		int rc = fbc_buf_putc(b, '[');
		for (size_t i = 0; i < json_array_size(v) && rc == 0; i++) {
			if (i > 0)
				rc = fbc_buf_putc(b, ',');
			if (rc == 0)
				rc = put_value(b, json_array_get(v, i), sort);
		}
		return rc ? rc : fbc_buf_putc(b, ']');
	}
	case JSON_STRING:
		return fbc_gojson_string(b, json_string_value(v), json_string_length(v), false);
	case JSON_INTEGER:
		snprintf(num, sizeof(num), "%lld", (long long)json_integer_value(v));
		return fbc_buf_puts(b, num);
	case JSON_REAL:
		return fbc_gojson_number(b, json_real_value(v));
	case JSON_TRUE:
		return fbc_buf_puts(b, "true");
	case JSON_FALSE:
		return fbc_buf_puts(b, "false");
	default:
		return fbc_buf_puts(b, "null");
	}
}

static int put_entries(fbc_buf *b, const json_t *entries)
{
	static const char *const eorder[] = {"name", "replaces", "skips", "skipRange", NULL};
	if (!json_is_array(entries))
		return fbc_buf_puts(b, "null");
	int rc = fbc_buf_putc(b, '[');
	for (size_t i = 0; i < json_array_size(entries) && rc == 0; i++) {
		if (i > 0)
			rc = fbc_buf_putc(b, ',');
		if (rc == 0)
			rc = put_keys(b, json_array_get(entries, i), eorder, false);
	}
	return rc ? rc : fbc_buf_putc(b, ']');
}

static int put_blob(fbc_buf *b, const json_t *blob)
{
	static const char *const porder[] = {
		"schema", "name", "defaultChannel", "icon", "description", "properties", NULL};
	static const char *const border[] = {"schema",	   "name",	    "package", "image",
					     "properties", "relatedImages", NULL};
	static const char *const dorder[] = {"schema", "package", "entries", NULL};
	const char *schema = json_string_value(json_object_get(blob, "schema"));
	if (schema == NULL)
		schema = "";
	if (strcmp(schema, "olm.package") == 0) {
		json_t *copy = json_copy((json_t *)blob);
		json_t *icon = json_object_get(copy, "icon");
		if (json_is_object(icon)) {
			json_t *ic = json_pack("{s:O,s:O}", "base64data",
					       json_object_get(icon, "base64data"), "mediatype",
					       json_object_get(icon, "mediatype"));
			json_object_set_new(copy, "icon", ic);
		}
		int rc = put_keys(b, copy, porder, false);
		json_decref(copy);
		return rc;
	}
	if (strcmp(schema, "olm.channel") == 0) {
		int rc = fbc_buf_puts(b, "{\"schema\":\"olm.channel\",\"name\":");
		const json_t *n = json_object_get(blob, "name"),
			     *p = json_object_get(blob, "package");
		if (rc == 0)
			rc = put_value(b, n ? n : json_string(""), false);
		if (rc == 0)
			rc = fbc_buf_puts(b, ",\"package\":");
		if (rc == 0)
			rc = put_value(b, p, false);
		if (rc == 0)
			rc = fbc_buf_puts(b, ",\"entries\":");
		if (rc == 0)
			rc = put_entries(b, json_object_get(blob, "entries"));
		json_t *props = json_object_get(blob, "properties");
		if (rc == 0 && props != NULL) {
			rc = fbc_buf_puts(b, ",\"properties\":");
			if (rc == 0)
				rc = put_value(b, props, false);
		}
		return rc ? rc : fbc_buf_putc(b, '}');
	}
	if (strcmp(schema, "olm.bundle") == 0)
		return put_keys(b, blob, border, false);
	if (strcmp(schema, "olm.deprecations") == 0)
		return put_keys(b, blob, dorder, false);
	return put_keys(b, blob, NULL, true);
}

int fbc_template_write_json(fbc_buf *out, const fbc_template_result *r, fbc_error *err)
{
	size_t i;
	json_t *blob;
	fbc_buf c;
	fbc_buf_init(&c, 0);
	int rc = 0;
	json_array_foreach(r->blobs, i, blob)
	{
		fbc_buf_reset(&c);
		rc = put_blob(&c, blob);
		if (rc == 0)
			rc = fbc_gojson_indent(out, c.data, c.len, "    ");
		if (rc == 0)
			rc = fbc_buf_putc(out, '\n');
		if (rc != 0)
			break;
	}
	fbc_buf_dispose(&c);
	if (rc != 0)
		return fbc_error_set(err, rc, NULL, "writing JSON: %s", fbc_error_code_name(rc));
	return 0;
}

/* --- comparison --- */

/* offsets of document starts ("---" at a line start) */
static size_t doc_starts(const char *s, size_t n, size_t *starts, size_t cap)
{
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		if ((i == 0 || s[i - 1] == '\n') && i + 3 <= n && memcmp(s + i, "---", 3) == 0 &&
		    (i + 3 == n || s[i + 3] == '\n' || s[i + 3] == ' ')) {
			if (k < cap)
				starts[k] = i;
			k++;
		}
	}
	return k;
}

static size_t line_at(const char *s, size_t off)
{
	size_t line = 1;
	for (size_t i = 0; i < off; i++)
		line += s[i] == '\n';
	return line;
}

void fbc_template_compare(fbc_template_diff *out, const char *rendered, size_t rlen,
			  const char *committed, size_t clen)
{
	memset(out, 0, sizeof(*out));
	if (rlen == clen && memcmp(rendered, committed, rlen) == 0) {
		out->same = true;
		return;
	}
	size_t i = 0;
	while (i < rlen && i < clen && rendered[i] == committed[i])
		i++;
	/* the document containing offset i in each text */
	size_t cdoc = 0, cstart = 0, rstart = 0;
	for (size_t k = 0; k < i && k < clen; k++)
		if ((k == 0 || committed[k - 1] == '\n') && k + 3 <= clen &&
		    memcmp(committed + k, "---", 3) == 0) {
			cdoc++;
			cstart = k;
		}
	for (size_t k = 0; k <= i && k < rlen; k++)
		if ((k == 0 || rendered[k - 1] == '\n') && k + 3 <= rlen &&
		    memcmp(rendered + k, "---", 3) == 0)
			rstart = k;
	(void)doc_starts;
	out->blob = cdoc > 0 ? cdoc - 1 : 0;
	out->line = line_at(committed, i < clen ? cstart : clen);
	out->rendered_line = line_at(rendered, i < rlen ? rstart : rlen);
}

/* --- community conventions --- */

fbc_bundle_migrate fbc_template_catalog_migrate(const char *catalog)
{
	const char *p = catalog;
	if (*p == 'v')
		p++;
	unsigned long maj = 0, min = 0;
	const char *q = p;
	while (*q >= '0' && *q <= '9')
		maj = maj * 10 + (unsigned long)(*q++ - '0');
	if (q == p || *q != '.' || maj > 1000000)
		return FBC_BUNDLE_MIGRATE_NONE;
	const char *r = ++q;
	while (*q >= '0' && *q <= '9' && min < 1000000)
		min = min * 10 + (unsigned long)(*q++ - '0');
	if (q == r || *q != '\0')
		return FBC_BUNDLE_MIGRATE_NONE;
	if (maj > 4 || (maj == 4 && min >= 17))
		return FBC_BUNDLE_MIGRATE_CSV_METADATA;
	return FBC_BUNDLE_MIGRATE_NONE;
}

void fbc_template_ci_dispose(fbc_template_ci *ci)
{
	if (ci == NULL)
		return;
	for (size_t i = 0; i < ci->nmaps; i++) {
		free(ci->maps[i].template_name);
		for (size_t k = 0; k < ci->maps[i].ncatalogs; k++)
			free(ci->maps[i].catalogs[k]);
		free(ci->maps[i].catalogs);
	}
	free(ci->maps);
	memset(ci, 0, sizeof(*ci));
}

static char *scalar_text(const json_t *v)
{
	char num[64];
	if (json_is_string(v))
		return strdup(json_string_value(v));
	if (json_is_integer(v)) {
		snprintf(num, sizeof(num), "%lld", (long long)json_integer_value(v));
		return strdup(num);
	}
	if (json_is_real(v)) {
		fbc_goyaml_format_float(num, sizeof(num), json_real_value(v));
		return strdup(num);
	}
	return NULL;
}

int fbc_template_ci_parse(fbc_template_ci *out, const char *data, size_t len, const char *file,
			  fbc_error *err)
{
	json_t *doc = NULL;
	fbc_load_limits lim;
	fbc_load_limits_default(&lim);
	memset(out, 0, sizeof(*out));
	int rc = fbc_yaml_doc_to_json(&doc, NULL, data, len, &lim, err);
	if (rc != 0) {
		char msg[FBC_ERROR_MESSAGE_MAX];
		snprintf(msg, sizeof(msg), "%s", err->message);
		return fbc_error_set(err, rc, file, "%s", msg);
	}
	json_t *fbc = json_object_get(doc, "fbc");
	if (fbc == NULL || json_is_null(fbc))
		goto done;
	if (!json_is_object(fbc)) {
		rc = tpl_fail(err, FBC_EINVAL, file, tpl_line_of(data, len, "fbc:", 0),
			      "fbc: must be a mapping");
		goto done;
	}
	out->enabled = json_is_true(json_object_get(fbc, "enabled"));
	json_t *maps = json_object_get(fbc, "catalog_mapping");
	if (maps == NULL || json_is_null(maps))
		goto done;
	if (!json_is_array(maps)) {
		rc = tpl_fail(err, FBC_EINVAL, file, tpl_line_of(data, len, "catalog_mapping", 0),
			      "fbc.catalog_mapping: must be a list");
		goto done;
	}
	out->maps = calloc(json_array_size(maps) + 1, sizeof(*out->maps));
	if (out->maps == NULL) {
		rc = fbc_error_set(err, FBC_ENOMEM, NULL, "out of memory");
		goto done;
	}
	size_t i;
	json_t *m;
	json_array_foreach(maps, i, m)
	{
		const char *tn = json_string_value(json_object_get(m, "template_name"));
		const char *ty = json_string_value(json_object_get(m, "type"));
		json_t *cn = json_object_get(m, "catalog_names");
		int line = tn ? tpl_line_of(data, len, tn, 0)
			      : tpl_line_of(data, len, "catalog_mapping", 0);
		if (tn == NULL || tn[0] == '\0') {
			rc = tpl_fail(err, FBC_EINVAL, file, line,
				      "fbc.catalog_mapping[%zu].template_name: required string", i);
			goto done;
		}
		fbc_template_mapping *mp = &out->maps[out->nmaps];
		if (ty != NULL && strcmp(ty, "olm.template.basic") == 0)
			mp->type = FBC_TEMPLATE_BASIC;
		else if (ty != NULL && strcmp(ty, "olm.semver") == 0)
			mp->type = FBC_TEMPLATE_SEMVER;
		else {
			rc = tpl_fail(err, FBC_EINVAL, file, line,
				      "fbc.catalog_mapping[%zu].type: \"%s\" is not "
				      "olm.template.basic or olm.semver",
				      i, ty ? ty : "");
			goto done;
		}
		if (!json_is_array(cn) || json_array_size(cn) == 0) {
			rc = tpl_fail(err, FBC_EINVAL, file, line,
				      "fbc.catalog_mapping[%zu].catalog_names: required non-empty "
				      "list",
				      i);
			goto done;
		}
		mp->template_name = strdup(tn);
		mp->catalogs = calloc(json_array_size(cn), sizeof(char *));
		out->nmaps++;
		if (mp->template_name == NULL || mp->catalogs == NULL) {
			rc = fbc_error_set(err, FBC_ENOMEM, NULL, "out of memory");
			goto done;
		}
		size_t k;
		json_t *c;
		json_array_foreach(cn, k, c)
		{
			char *s = scalar_text(c);
			if (s == NULL) {
				rc = tpl_fail(err, FBC_EINVAL, file, line,
					      "fbc.catalog_mapping[%zu].catalog_names[%zu]: not a "
					      "string",
					      i, k);
				goto done;
			}
			mp->catalogs[mp->ncatalogs++] = s;
		}
	}
done:
	json_decref(doc);
	if (rc != 0)
		fbc_template_ci_dispose(out);
	return rc;
}
