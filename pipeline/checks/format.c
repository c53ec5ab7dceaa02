/* The one place check results are formatted: the §5 JSON document and the text report. */
#include "pipeline/checks/internal.h"

#include "service/base/utf8.h"

#include <stdlib.h>
#include <string.h>

/* A JSON string of s; bytes that are not UTF-8 (a file name, a message quoting input)
 * become U+FFFD, since JSON strings must be UTF-8. */
static json_t *jstr(const char *s)
{
	size_t n = s ? strlen(s) : 0;
	char *copy, *w;
	json_t *j;

	if (!s)
		return json_string("");
	if (fbc_utf8_valid(s, n))
		return json_stringn(s, n);
	if (!(copy = malloc(n * 3 + 1)))
		return NULL;
	w = copy;
	for (size_t i = 0; i < n;) {
		uint32_t cp;
		size_t k = fbc_utf8_decode(&cp, (const unsigned char *)s + i, n - i);

		if (k == 0) {
			memcpy(w, "\xef\xbf\xbd", 3);
			w += 3;
			i++;
		} else {
			memcpy(w, s + i, k);
			w += k;
			i += k;
		}
	}
	j = json_stringn(copy, (size_t)(w - copy));
	free(copy);
	return j;
}

static json_t *str_array(const char *const *items, size_t n)
{
	json_t *a = json_array();

	for (size_t i = 0; a && i < n; i++)
		if (json_array_append_new(a, jstr(items[i])) != 0) {
			json_decref(a);
			return NULL;
		}
	return a;
}

int fbc_checks_result_json(json_t **out, const fbc_checks_result *r, fbc_error *err)
{
	json_t *doc = NULL, *changes, *bundles, *checks, *timings, *tchecks;

	doc = json_pack("{s:s, s:s, s:s, s:o?, s:s, s:s}", "base", r->base, "head", r->head,
			"mergeBase", r->merge_base, "author", jstr(r->author), "layout",
			r->layout ? r->layout : "plain", "conclusion",
			fbc_check_conclusion_name(r->conclusion));
	bundles = json_pack(
		"{s:o?, s:o?, s:o?}", "added",
		str_array(r->changes.bundles_added, r->changes.n_bundles_added), "modified",
		str_array(r->changes.bundles_modified, r->changes.n_bundles_modified), "deleted",
		str_array(r->changes.bundles_deleted, r->changes.n_bundles_deleted));
	changes =
		json_pack("{s:o?, s:o?, s:o?, s:o?, s:o?}", "packages",
			  str_array(r->changes.packages, r->changes.n_packages), "bundles", bundles,
			  "catalogs", str_array(r->changes.catalogs, r->changes.n_catalogs),
			  "templates", str_array(r->changes.templates, r->changes.n_templates),
			  "other", str_array(r->changes.other, r->changes.n_other));
	checks = json_array();
	tchecks = json_object();
	timings = json_pack("{s:I, s:o?}", "totalMs", (json_int_t)(r->total_ms + 0.5), "checks",
			    tchecks);
	if (timings && r->cache_used)
		json_object_set_new(timings, "cache",
				    json_pack("{s:I, s:I}", "hits", (json_int_t)r->cache_hits,
					      "misses", (json_int_t)r->cache_misses));
	if (!doc || !changes || !checks || !timings) {
		json_decref(doc);
		json_decref(changes);
		json_decref(checks);
		json_decref(timings);
		return fbc_error_set(err, FBC_ENOMEM, "", "out of memory");
	}
	json_object_set_new(doc, "changes", changes);
	json_object_set_new(doc, "checks", checks);
	json_object_set_new(doc, "timings", timings);
	for (size_t i = 0; i < r->n_checks; i++) {
		const fbc_check_result *c = &r->checks[i];
		json_t *anns = json_array(), *cj;

		for (size_t k = 0; anns && k < c->n_findings; k++) {
			const fbc_finding *f = &c->findings[k];
			json_t *a = json_pack("{s:o?, s:i, s:s, s:o?, s:o?}", "path", jstr(f->path),
					      "line", f->line > 0 ? f->line : 1, "level",
					      fbc_check_level_name(f->level), "code", jstr(f->code),
					      "message", jstr(f->message));

			if (!a || json_array_append_new(anns, a) != 0) {
				json_decref(anns);
				anns = NULL;
			}
		}
		cj = json_pack("{s:s, s:s, s:o?, s:o?}", "id", c->id, "conclusion",
			       fbc_check_conclusion_name(c->conclusion), "summary",
			       jstr(c->summary), "annotations", anns);
		if (!anns || !cj || json_array_append_new(checks, cj) != 0 ||
		    json_object_set_new(tchecks, c->id, json_integer((json_int_t)(c->ms + 0.5)))) {
			json_decref(doc);
			return fbc_error_set(err, FBC_ENOMEM, "", "out of memory");
		}
	}
	*out = doc;
	return 0;
}

int fbc_checks_result_text(fbc_buf *out, const fbc_checks_result *r, fbc_error *err)
{
	int rc = 0;

	for (size_t i = 0; i < r->n_checks && rc == 0; i++) {
		const fbc_check_result *c = &r->checks[i];

		for (size_t k = 0; k < c->n_findings && rc == 0; k++) {
			const fbc_finding *f = &c->findings[k];

			rc = fbc_buf_printf(out, "%s:%d: %s: %s/%s: %s\n", *f->path ? f->path : ".",
					    f->line > 0 ? f->line : 1,
					    fbc_check_level_name(f->level), c->id, f->code,
					    f->message);
		}
	}
	if (rc == 0)
		rc = fbc_buf_printf(out, "\n%-12s %-16s %8s %8s  %s\n", "check", "conclusion",
				    "findings", "ms", "summary");
	for (size_t i = 0; i < r->n_checks && rc == 0; i++) {
		const fbc_check_result *c = &r->checks[i];

		rc = fbc_buf_printf(out, "%-12s %-16s %8zu %8.0f  %s\n", c->id,
				    fbc_check_conclusion_name(c->conclusion), c->n_findings, c->ms,
				    c->summary ? c->summary : "");
	}
	if (rc == 0)
		rc = fbc_buf_printf(out,
				    "\nconclusion: %s (%.12s..%.12s, merge base %.12s, %.0f ms)\n",
				    fbc_check_conclusion_name(r->conclusion), r->base, r->head,
				    r->merge_base, r->total_ms);
	return rc ? fbc_error_set(err, rc, "", "cannot format the report") : 0;
}
