/* Shared helpers of service/template: Go-style field lookup, template
 * decoding, error locations, output order (templates.md §2.4). */
#include "service/template/internal.h"
#include "service/base/base64.h"
#include "service/gojson/gojson.h"
#include "service/load/load.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

json_t *tpl_fold_get(const json_t *obj, const char *name, const char **key_out)
{
	const char *k, *best = NULL;
	json_t *v, *bestv = NULL;
	json_object_foreach((json_t *)obj, k, v)
	{
		if (strcasecmp(k, name) != 0)
			continue;
		if (best == NULL || strcmp(k, best) > 0) {
			best = k;
			bestv = v;
		}
	}
	if (key_out != NULL)
		*key_out = best;
	return bestv;
}

bool tpl_fold_known(const char *key, const char *const *names)
{
	for (size_t i = 0; names[i] != NULL; i++)
		if (strcasecmp(key, names[i]) == 0)
			return true;
	return false;
}

int tpl_fail(fbc_error *err, int code, const char *file, int line, const char *fmt, ...)
{
	char where[FBC_ERROR_WHERE_MAX];
	char msg[FBC_ERROR_MESSAGE_MAX];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (line > 0)
		snprintf(where, sizeof(where), "%s:%d", file ? file : "-", line);
	else
		snprintf(where, sizeof(where), "%s", file ? file : "-");
	return fbc_error_set(err, code, where, "%s", msg);
}

int tpl_line_of(const char *text, size_t len, const char *needle, size_t nth)
{
	size_t nl = strlen(needle);
	const char *first = NULL, *hit = NULL;
	size_t count = 0;
	if (nl == 0 || text == NULL)
		return 1;
	for (const char *p = text; p + nl <= text + len;) {
		const char *q = memmem(p, (size_t)(text + len - p), needle, nl);
		if (q == NULL)
			break;
		if (first == NULL)
			first = q;
		if (count++ == nth) {
			hit = q;
			break;
		}
		p = q + 1;
	}
	if (hit == NULL)
		hit = first;
	if (hit == NULL)
		return 1;
	int line = 1;
	for (const char *p = text; p < hit; p++)
		line += *p == '\n';
	return line;
}

int tpl_decode(json_t **out, const char *data, size_t len, const char *file, fbc_error *err)
{
	fbc_load_limits lim;
	fbc_load_limits_default(&lim);
	size_t i = 0;
	while (i < len && (data[i] == ' ' || data[i] == '\t' || data[i] == '\n' || data[i] == '\r'))
		i++;
	int rc;
	int line = 0;
	if (i < len && data[i] == '{')
		rc = fbc_yaml_to_json(out, data, len, &lim, err);
	else
		rc = fbc_yaml_doc_to_json(out, &line, data, len, &lim, err);
	if (rc != 0) {
		char where[FBC_ERROR_WHERE_MAX];
		const char *ln = strstr(err->message, "line ");
		long lno = ln != NULL ? strtol(ln + 5, NULL, 10) : 0;
		snprintf(where, sizeof(where), "%s:%ld", file, lno > 0 ? lno : 1L);
		char msg[FBC_ERROR_MESSAGE_MAX];
		snprintf(msg, sizeof(msg), "decoding template schema: %s", err->message);
		fbc_error_set(err, rc, where, "%s", msg);
	}
	return rc;
}

int tpl_icon_canonical(json_t **out, const json_t *b64, fbc_error *err)
{
	if (b64 == NULL || json_is_null(b64)) {
		*out = json_null();
		return 0;
	}
	if (!json_is_string(b64))
		return fbc_error_set(err, FBC_EINVAL, NULL,
				     "json: cannot unmarshal %s into Go struct field "
				     "Icon.icon.base64data of type []uint8",
				     json_is_number(b64) ? "number" : "value");
	unsigned char *raw = NULL;
	size_t rawlen = 0, bad = 0;
	int rc = fbc_base64_decode(&raw, &rawlen, &bad, json_string_value(b64),
				   json_string_length(b64));
	if (rc == FBC_EPARSE)
		return fbc_error_set(err, FBC_EINVAL, NULL, "illegal base64 data at input byte %zu",
				     bad);
	if (rc != 0)
		return fbc_error_set(err, rc, NULL, "out of memory");
	fbc_buf b;
	fbc_buf_init(&b, 0);
	rc = fbc_gojson_base64(&b, raw, rawlen);
	free(raw);
	if (rc != 0) {
		fbc_buf_dispose(&b);
		return fbc_error_set(err, rc, NULL, "out of memory");
	}
	*out = json_stringn(b.data ? b.data : "", b.len);
	fbc_buf_dispose(&b);
	return *out ? 0 : fbc_error_set(err, FBC_ENOMEM, NULL, "out of memory");
}

/* --- output order (§2.4) --- */

static const char *pkg_of(const json_t *blob, bool is_package)
{
	const char *p = json_string_value(json_object_get(blob, is_package ? "name" : "package"));
	return p ? p : "";
}

static int cmp_name(const void *a, const void *b)
{
	const char *x = json_string_value(json_object_get(*(json_t *const *)a, "name"));
	const char *y = json_string_value(json_object_get(*(json_t *const *)b, "name"));
	return strcmp(x ? x : "", y ? y : "");
}

static int cmp_schema(const void *a, const void *b)
{
	const char *x = json_string_value(json_object_get(*(json_t *const *)a, "schema"));
	const char *y = json_string_value(json_object_get(*(json_t *const *)b, "schema"));
	return strcmp(x ? x : "", y ? y : "");
}

/* Stable insertion-merge sort of a small array of pointers. */
static void stable_sort(json_t **v, size_t n, int (*cmp)(const void *, const void *))
{
	for (size_t i = 1; i < n; i++) {
		json_t *x = v[i];
		size_t j = i;
		while (j > 0 && cmp(&v[j - 1], &x) > 0) {
			v[j] = v[j - 1];
			j--;
		}
		v[j] = x;
	}
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static int append_pkg(json_t *out, const json_t *list, const char *pkg, bool is_package,
		      int (*cmp)(const void *, const void *))
{
	size_t n = json_array_size(list), k = 0;
	json_t **sel = calloc(n ? n : 1, sizeof(*sel));
	if (sel == NULL)
		return FBC_ENOMEM;
	for (size_t i = 0; i < n; i++) {
		json_t *b = json_array_get(list, i);
		if (strcmp(pkg_of(b, is_package), pkg) == 0)
			sel[k++] = b;
	}
	if (cmp != NULL)
		stable_sort(sel, k, cmp);
	for (size_t i = 0; i < k; i++)
		json_array_append(out, sel[i]);
	free(sel);
	return 0;
}

int tpl_order(json_t **out, json_t *packages, json_t *channels, json_t *bundles, json_t *others,
	      json_t *deprecations, fbc_error *err)
{
	json_t *res = json_array();
	const json_t *lists[5] = {packages, channels, bundles, others, deprecations};
	size_t total = 0;
	for (int l = 0; l < 5; l++)
		total += json_array_size(lists[l]);
	const char **names = calloc(total ? total : 1, sizeof(*names));
	size_t nn = 0;
	int rc = 0;
	if (res == NULL || names == NULL) {
		rc = FBC_ENOMEM;
		goto done;
	}
	for (int l = 0; l < 5; l++) {
		size_t i;
		json_t *b;
		json_array_foreach(lists[l], i, b)
		{
			const char *p = pkg_of(b, l == 0);
			if (p[0] != '\0')
				names[nn++] = p;
		}
	}
	qsort(names, nn, sizeof(*names), cmp_str);
	for (size_t i = 0; i < nn && rc == 0; i++) {
		if (i > 0 && strcmp(names[i], names[i - 1]) == 0)
			continue;
		const char *p = names[i];
		rc = append_pkg(res, packages, p, true, NULL);
		if (rc == 0)
			rc = append_pkg(res, channels, p, false, cmp_name);
		if (rc == 0)
			rc = append_pkg(res, bundles, p, false, cmp_name);
		if (rc == 0)
			rc = append_pkg(res, others, p, false, cmp_schema);
		if (rc == 0)
			rc = append_pkg(res, deprecations, p, false, NULL);
	}
	if (rc == 0)
		rc = append_pkg(res, others, "", false, NULL);
done:
	free(names);
	if (rc != 0) {
		json_decref(res);
		return fbc_error_set(err, rc, NULL, "out of memory");
	}
	*out = res;
	return 0;
}
