/* Catalogs: list, create, read, delete; content pushes, validation, revisions. */
#include "api/http/handlers.h"
#include "api/cli/util.h"
#include "api/http/content.h"
#include "service/base/metrics.h"

#include <stdbool.h>
#include <string.h>
#include <time.h>

static const double ingest_buckets[] = {0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300};
static const fbc_metric_def m_ingest = {
	.name = "fbcd_catalog_ingest_duration_seconds",
	.help = "Time to store a catalog's content as a revision (outcome created, unchanged, "
		"failed).",
	.type = FBC_METRIC_HISTOGRAM,
	.labels = {"outcome"},
	.buckets = ingest_buckets,
	.n_buckets = sizeof(ingest_buckets) / sizeof(ingest_buckets[0])};

int fbc_http_catalog_list(fbc_http_req *req, fbc_http_resp *resp)
{
	fbc_db_page page;
	json_t *out = NULL;
	fbc_error err;

	if (fbc_http_page_db(&page, req, resp) != 0)
		return 0;
	fbc_error_init(&err);
	int rc = fbc_db_catalog_list(&out, app_of(req)->db, &page, &err);
	return fbc_http_reply_db(req, resp, rc, out, &err);
}

static const char *opt_string(json_t *o, const char *key, bool *bad)
{
	json_t *v = json_object_get(o, key);
	if (!v || json_is_null(v))
		return NULL;
	if (!json_is_string(v)) {
		*bad = true;
		return NULL;
	}
	return json_string_value(v);
}

int fbc_http_catalog_create(fbc_http_req *req, fbc_http_resp *resp)
{
	json_t *body = NULL, *out = NULL, *v;
	fbc_db_catalog_spec spec;
	fbc_error err;
	bool bad = false;
	const char *key;

	if (fbc_http_read_json_object(&body, req, resp) != 0)
		return 0;
	json_object_foreach(body, key, v)
	{
		if (strcmp(key, "name") && strcmp(key, "priority") && strcmp(key, "displayName") &&
		    strcmp(key, "source"))
			return fbc_http_problem(resp, req, 400, "bad_request",
						"body: unknown field '%s'", key);
	}
	memset(&spec, 0, sizeof(spec));
	spec.name = opt_string(body, "name", &bad);
	spec.display_name = opt_string(body, "displayName", &bad);
	spec.source = opt_string(body, "source", &bad);
	if (bad)
		return fbc_http_problem(resp, req, 400, "bad_request",
					"body: name, displayName and source must be strings");
	if (!spec.name || !spec.name[0])
		return fbc_http_problem(resp, req, 400, "bad_request", "body: 'name' is required");
	v = json_object_get(body, "priority");
	if (v && !json_is_null(v)) {
		if (!json_is_integer(v) || json_integer_value(v) < -2147483647 ||
		    json_integer_value(v) > 2147483647)
			return fbc_http_problem(resp, req, 400, "bad_request",
						"body: 'priority' must be a 32-bit integer");
		spec.priority = (int)json_integer_value(v);
	}
	fbc_error_init(&err);
	if (fbc_db_catalog_create(&out, app_of(req)->db, &spec, &err) != 0)
		return fbc_http_problem_from_error(resp, req, &err);
	fbc_http_resp_header(resp, "Location",
			     fbc_arena_printf(req->arena, "/v1/catalogs/%s", spec.name));
	return fbc_http_json(resp, req, 201, out);
}

int fbc_http_catalog_get(fbc_http_req *req, fbc_http_resp *resp)
{
	json_t *out = NULL;
	fbc_error err;

	fbc_error_init(&err);
	int rc = fbc_db_catalog_get(&out, app_of(req)->db, fbc_http_param(req, "catalog"), &err);
	return fbc_http_reply_db(req, resp, rc, out, &err);
}

int fbc_http_catalog_delete(fbc_http_req *req, fbc_http_resp *resp)
{
	fbc_error err;
	int rc;

	fbc_error_init(&err);
	rc = fbc_db_catalog_delete(app_of(req)->db, fbc_http_param(req, "catalog"), &err);
	fbc_http_app_forget_revisions(app_of(req));
	if (rc != 0)
		return fbc_http_problem_from_error(resp, req, &err);
	fbc_http_body(resp, 204, NULL, NULL, 0);
	return 0;
}

/* -------------------------------------------------------------- content */

/* Load + validate the body. Returns 0 with *cat on success (valid), 1 when
 * resp holds the answer (bad body, or 422 with the findings). validate_only:
 * the catalog is not stored (fbc_http_content_load). */
static int load_body(fbc_catalog **cat, json_t **report, fbc_http_req *req, fbc_http_resp *resp,
		     bool problem_on_invalid, bool validate_only)
{
	fbc_diags diags;
	fbc_error err;
	fbc_buf js;
	fbc_catalog *c = NULL;
	json_t *rep = NULL;
	int ret = 1;

	fbc_buf_init(&js, 0);
	if (fbc_diags_init(&diags, 1000) != 0) {
		fbc_http_problem(resp, req, 500, "internal", "out of memory");
		return 1;
	}
	fbc_error_init(&err);
	if (!req->body || req->body_len == 0) {
		fbc_http_problem(resp, req, 400, "bad_request", "the request body is empty");
		goto done;
	}
	if (fbc_http_content_kind(req->content_type) == FBC_CONTENT_UNKNOWN) {
		fbc_http_problem(resp, req, 415, "unsupported_media_type",
				 "Content-Type '%s' is not application/gzip (tar.gz), "
				 "application/x-tar, application/jsonl or application/yaml",
				 req->content_type ? req->content_type : "(none)");
		goto done;
	}
	fbc_untar_limits lim;
	fbc_untar_limits_default(&lim);
	if (req->max_extract)
		lim.max_total_bytes = req->max_extract;
	lim.budget = req->budget;
	if (fbc_http_content_load(&c, &diags, req->content_type, req->body, req->body_len,
				  app_of(req)->tmp_dir, &lim, validate_only, &err) != 0) {
		if (err.code == FBC_EINVAL || err.code == FBC_EPARSE) {
			fbc_http_problem(resp, req, 400, "bad_content", "%s: %s", err.where,
					 err.message);
		} else if (err.code == FBC_EUNAVAIL) {
			fbc_http_resp_header(resp, "Retry-After", "5");
			fbc_http_problem(resp, req, 503, "busy", "%s", err.message);
		} else
			fbc_http_problem_from_error(resp, req, &err);
		goto done;
	}
	bool valid = fbc_diags_count(&diags) == 0 && diags.dropped == 0;
	json_error_t jerr;
	if (fbc_cli_format_diags_json(&js, &diags, valid) != 0 ||
	    !(rep = json_loadb(js.data, js.len, 0, &jerr))) {
		fbc_http_problem(resp, req, 500, "internal", "cannot format the findings");
		goto done;
	}
	if (!valid && problem_on_invalid) {
		fbc_http_problem_ext(resp, req, 422, "invalid_catalog", rep,
				     "the catalog is not valid; nothing was stored");
		rep = NULL;
		goto done;
	}
	*report = rep;
	rep = NULL;
	*cat = c;
	c = NULL;
	ret = 0;
done:
	json_decref(rep);
	fbc_catalog_free(c);
	fbc_buf_dispose(&js);
	fbc_diags_dispose(&diags);
	return ret;
}

int fbc_http_content_put(fbc_http_req *req, fbc_http_resp *resp)
{
	struct timespec t0, t1;
	const char *catalog = fbc_http_param(req, "catalog");
	fbc_catalog *cat = NULL;
	json_t *report = NULL, *out = NULL;
	bool created = false;
	fbc_error err;
	int rc;

	fbc_error_init(&err);
	/* a missing catalog is reported before the upload is parsed */
	if (fbc_db_catalog_get(&out, app_of(req)->db, catalog, &err) != 0)
		return fbc_http_problem_from_error(resp, req, &err);
	json_decref(out);
	out = NULL;
	if (load_body(&cat, &report, req, resp, true, false) != 0)
		return 0;
	json_decref(report);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	rc = fbc_db_ingest(&out, &created, app_of(req)->db, catalog, cat, &err);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	fbc_metric_observe(&m_ingest,
			   (const char *[]){rc != 0   ? "failed"
					    : created ? "created"
						      : "unchanged"},
			   (double)(t1.tv_sec - t0.tv_sec) +
				   (double)(t1.tv_nsec - t0.tv_nsec) / 1e9);
	fbc_catalog_free(cat);
	fbc_http_app_forget_revisions(app_of(req));
	if (rc != 0)
		return fbc_http_problem_from_error(resp, req, &err);
	json_t *num = json_object_get(out, "revision");
	fbc_http_resp_header(
		resp, "Location",
		fbc_arena_printf(req->arena, "/v1/catalogs/%s/revisions/%lld", catalog,
				 (long long)(json_is_integer(num) ? json_integer_value(num) : 0)));
	json_t *dg = json_object_get(out, "digest");
	if (json_is_string(dg))
		resp->etag = fbc_arena_printf(req->arena, "\"%s\"", json_string_value(dg));
	return fbc_http_json(resp, req, created ? 201 : 200, out);
}

int fbc_http_validate(fbc_http_req *req, fbc_http_resp *resp)
{
	fbc_catalog *cat = NULL;
	json_t *report = NULL;

	if (load_body(&cat, &report, req, resp, false, true) != 0)
		return 0;
	fbc_catalog_free(cat);
	return fbc_http_json(resp, req, 200, report);
}

/* ------------------------------------------------------------ revisions */

int fbc_http_revision_list(fbc_http_req *req, fbc_http_resp *resp)
{
	fbc_db_page page;
	json_t *out = NULL;
	fbc_error err;

	if (fbc_http_page_db(&page, req, resp) != 0)
		return 0;
	fbc_error_init(&err);
	int rc = fbc_db_revision_list(&out, app_of(req)->db, fbc_http_param(req, "catalog"), &page,
				      &err);
	return fbc_http_reply_db(req, resp, rc, out, &err);
}

int fbc_http_revision_get(fbc_http_req *req, fbc_http_resp *resp)
{
	const char *rs = fbc_http_param(req, "revision");
	int64_t number;
	json_t *out = NULL;
	fbc_error err;

	if (fbc_http_parse_int64(&number, rs, 1) != 0)
		return fbc_http_problem(resp, req, 400, "bad_revision",
					"revision: '%s' is not a revision number", rs);
	fbc_error_init(&err);
	int rc = fbc_db_revision_get(&out, app_of(req)->db, fbc_http_param(req, "catalog"), number,
				     &err);
	if (rc == 0) {
		json_t *dg = json_object_get(out, "digest");
		if (json_is_string(dg))
			resp->etag = fbc_arena_printf(req->arena, "\"%s\"", json_string_value(dg));
	}
	return fbc_http_reply_db(req, resp, rc, out, &err);
}
