/*
 * POST /v1/resolve: `fbcd resolve --input` over HTTP.
 *
 * The body is the resolver's request format (service/resolver/resolver.h)
 * where a catalog is either inline ({"name", "priority"?, "fbc": [...]}) or
 * a catalog registered in the service ({"name", "revision"?, "priority"?}:
 * the current revision and the registered priority unless given). "path"
 * catalogs are refused: a server must not read directories named by its
 * clients. Registered catalogs are rewritten to empty inline ones before the
 * resolver's parser sees the body (so that every other field keeps the
 * resolver's own checks and messages), then pointed at the loaded revision
 * from app->catalogs.
 */
#include "api/http/app.h"
#include "service/base/metrics.h"

#include "service/load/load.h"
#include "service/resolver/resolver.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* OLM's name for the time a resolution takes (outcome succeeded | failed),
 * and fbcd's count by semantics and outcome. */
static const fbc_metric_def m_resolution = {
	.name = "olm_resolution_duration_seconds",
	.help = "The duration of a dependency resolution attempt.",
	.type = FBC_METRIC_HISTOGRAM,
	.labels = {"outcome"},
	.buckets = fbc_metrics_default_buckets,
	.n_buckets = FBC_METRICS_DEFAULT_BUCKETS_N};
static const fbc_metric_def m_resolutions = {
	.name = "fbcd_resolutions_total",
	.help = "Resolutions served, by semantics and outcome (satisfiable, unsatisfiable, error, "
		"failed).",
	.type = FBC_METRIC_COUNTER,
	.labels = {"semantics", "outcome"}};

/* What the body said about catalogs[i] beyond the resolver's format. */
struct cat_spec {
	bool registered;
	bool has_priority;
	int64_t revision; /* 0 = current */
};

/* ------------------------------------------------ loading a stored revision */

struct load_ctx {
	fbc_db *db;
	const fbc_db_rev *rev;
	fbc_catalog *cat;
	fbc_diags *diags;
};

static int add_meta(void *ctx, const fbc_meta *meta, fbc_error *err)
{
	struct load_ctx *lc = ctx;
	return fbc_catalog_add_meta(lc->cat, meta, lc->diags, err);
}

/* The revision's canonical JSON-lines stream, parsed and linked. The stream
 * was validated at ingest; it is loaded like an upload of one file. */
static int load_revision(fbc_catalog **out, void *ctx, fbc_error *err)
{
	struct load_ctx *lc = ctx;
	fbc_load_limits lim;
	fbc_catalog *cat = NULL;
	fbc_diags diags;
	char *data = NULL;
	size_t len = 0;
	int rc;

	if (fbc_diags_init(&diags, 100) != 0)
		return fbc_error_set(err, FBC_ENOMEM, NULL, "out of memory");
	rc = fbc_db_all_get(&data, &len, lc->db, lc->rev, err);
	if (rc != 0)
		goto done;
	fbc_load_limits_default(&lim);
	/* one stream holds the whole revision: the per-file bound is the tree's */
	if (len > lim.max_file_bytes)
		lim.max_file_bytes = len;
	if (len > lim.max_total_bytes)
		lim.max_total_bytes = len;
	if ((rc = fbc_catalog_create(&cat, &lim, err)) != 0)
		goto done;
	lc->cat = cat;
	lc->diags = &diags;
	rc = fbc_load_buffer("catalog.json", data ? data : "", len, &lim, add_meta, lc, &diags,
			     err);
	if (rc != 0)
		goto done;
	if (fbc_diags_count(&diags) > 0) {
		const fbc_diag *d = fbc_diags_at(&diags, 0);
		rc = fbc_error_set(err, FBC_EINTERNAL, lc->rev->digest,
				   "the stored revision does not load cleanly: %s", d->message);
		goto done;
	}
	if ((rc = fbc_catalog_link(cat, err)) != 0)
		goto done;
	*out = cat;
	cat = NULL;
done:
	fbc_catalog_free(cat);
	free(data);
	fbc_diags_dispose(&diags);
	return rc;
}

/* ------------------------------------------------------------ the body */

static int problem_at(fbc_http_resp *resp, fbc_http_req *req, int status, const char *code,
		      size_t i, const char *msg)
{
	return fbc_http_problem(resp, req, status, code, "catalogs[%zu]: %s", i, msg);
}

/* Copy body with registered catalogs replaced by {"name", "priority"?,
 * "fbc": []}, recording what was registered in specs (one per element).
 * Returns 0, or 1 when resp holds a problem. Elements that are not objects
 * and a missing "catalogs" are passed on for the resolver's parser to
 * report. */
static int rewrite_body(json_t **out, struct cat_spec **specs_out, json_t *body,
			size_t max_catalogs, fbc_http_req *req, fbc_http_resp *resp)
{
	json_t *cats = json_object_get(body, "catalogs"), *copy = NULL, *ncats = NULL;
	struct cat_spec *specs = NULL;
	size_t n = json_is_array(cats) ? json_array_size(cats) : 0;
	int ret = 1;

	/* Bound the work before copying: the resolver would refuse this list
	 * anyway, but only after we had duplicated every element. */
	if (n > max_catalogs) {
		fbc_http_problem(resp, req, 413, "too_large",
				 "catalogs: %zu catalogs, more than the limit of %zu", n,
				 max_catalogs);
		return 1;
	}
	copy = json_copy(body);
	specs = fbc_arena_calloc(req->arena, n ? n : 1, sizeof(*specs));
	if (!copy || !specs)
		goto oom;
	if (!json_is_array(cats)) {
		*out = copy;
		*specs_out = specs;
		return 0;
	}
	if (!(ncats = json_array()))
		goto oom;
	for (size_t i = 0; i < n; i++) {
		json_t *c = json_array_get(cats, i), *rev, *fbc, *nc;

		if (!json_is_object(c)) {
			if (json_array_append(ncats, c) != 0)
				goto oom;
			continue;
		}
		if (json_object_get(c, "path")) {
			problem_at(resp, req, 400, "path_not_allowed", i,
				   "\"path\" catalogs are not accepted over HTTP (the server does "
				   "not read local directories); give the catalog inline as "
				   "\"fbc\": [blobs] or by its registered name");
			goto done;
		}
		fbc = json_object_get(c, "fbc");
		rev = json_object_get(c, "revision");
		if (rev && json_is_null(rev))
			rev = NULL;
		if (fbc && !json_is_null(fbc)) {
			if (rev) {
				problem_at(resp, req, 400, "bad_resolve_request", i,
					   "\"revision\" applies to registered catalogs only, not "
					   "to inline \"fbc\" ones");
				goto done;
			}
			if (json_array_append(ncats, c) != 0)
				goto oom;
			continue;
		}
		specs[i].registered = true;
		if (rev) {
			if (!json_is_integer(rev) || json_integer_value(rev) < 1) {
				problem_at(resp, req, 400, "bad_revision", i,
					   "\"revision\" must be a revision number (1, 2, ...)");
				goto done;
			}
			specs[i].revision = json_integer_value(rev);
		}
		specs[i].has_priority = json_object_get(c, "priority") &&
					!json_is_null(json_object_get(c, "priority"));
		if (!(nc = json_copy(c)))
			goto oom;
		json_object_del(nc, "revision");
		if (json_object_set_new(nc, "fbc", json_array()) != 0 ||
		    json_array_append_new(ncats, nc) != 0)
			goto oom;
	}
	if (json_object_set_new(copy, "catalogs", ncats) != 0) {
		ncats = NULL;
		goto oom;
	}
	ncats = NULL;
	*out = copy;
	copy = NULL;
	*specs_out = specs;
	ret = 0;
	goto done;
oom:
	fbc_http_problem(resp, req, 500, "internal", "out of memory");
done:
	json_decref(ncats);
	json_decref(copy);
	return ret;
}

/* A registered catalog: its revision, loaded (from the cache), and its
 * priority unless the body gave one. Returns 0, or 1 when resp holds a
 * problem. */
static int attach_registered(const fbc_http_catentry **held, fbc_resolve_catalog *c,
			     const struct cat_spec *spec, size_t i, fbc_http_req *req,
			     fbc_http_resp *resp)
{
	fbc_http_app *app = req->app;
	struct load_ctx lc;
	fbc_db_rev rev;
	fbc_error err;
	json_t *info = NULL;

	fbc_error_init(&err);
	if (fbc_http_app_revision(&rev, app, c->name, spec->revision, &err) != 0)
		goto fail;
	if (!spec->has_priority) {
		json_t *p;

		if (fbc_db_catalog_get(&info, app->db, c->name, &err) != 0)
			goto fail;
		p = json_object_get(info, "priority");
		c->priority = json_is_integer(p) ? (int)json_integer_value(p) : 0;
		json_decref(info);
	}
	memset(&lc, 0, sizeof(lc));
	lc.db = app->db;
	lc.rev = &rev;
	if (fbc_http_catcache_acquire(held, app->catalogs, rev.digest, load_revision, &lc, &err) !=
	    0)
		goto fail;
	c->catalog = (*held)->catalog;
	c->index = (*held)->index;
	return 0;
fail:
	if (err.code == FBC_ENOTFOUND)
		fbc_http_problem(resp, req, 404, "catalog_not_found", "catalogs[%zu] (%s): %s", i,
				 c->name, err.message);
	else
		fbc_http_problem_from_error(resp, req, &err);
	return 1;
}

static int stats_arg(bool *out, fbc_http_req *req, fbc_http_resp *resp)
{
	const char *s = fbc_http_query(req, "stats");

	*out = false;
	if (!s || !strcmp(s, "false"))
		return 0;
	if (!strcmp(s, "true")) {
		*out = true;
		return 0;
	}
	fbc_http_problem(resp, req, 400, "bad_request", "stats: expected true or false, got '%s'",
			 s);
	return 1;
}

int fbc_http_api_resolve(fbc_http_req *req, fbc_http_resp *resp)
{
	const fbc_http_catentry **held = NULL;
	fbc_resolve_request *rr = NULL;
	fbc_resolve_result *res = NULL;
	fbc_catalog **owned = NULL;
	struct cat_spec *specs = NULL;
	json_t *body = NULL, *parsed = NULL, *out = NULL;
	fbc_resolve_limits lim;
	struct timespec t0, t1;
	fbc_error err;
	bool stats;
	int rc = 0;

	fbc_error_init(&err);
	fbc_resolve_limits_default(&lim);
	if (stats_arg(&stats, req, resp) || fbc_http_read_json_object(&body, req, resp) != 0)
		return 0;
	if (rewrite_body(&parsed, &specs, body, lim.max_catalogs, req, resp) != 0)
		return 0;
	if (fbc_resolve_request_parse(&rr, parsed, &lim, &err) != 0) {
		if (err.code == FBC_ENOMEM)
			rc = err.code;
		else
			fbc_http_problem(
				resp, req, err.code == FBC_ELIMIT ? 413 : 400,
				err.code == FBC_ELIMIT ? "too_large" : "bad_resolve_request",
				"%s%s%s", err.where, err.where[0] ? ": " : "", err.message);
		goto done;
	}
	held = calloc(rr->n_catalogs + 1, sizeof(*held));
	owned = calloc(rr->n_catalogs + 1, sizeof(*owned));
	if (!held || !owned) {
		rc = FBC_ENOMEM;
		goto done;
	}
	for (size_t i = 0; i < rr->n_catalogs; i++) {
		fbc_resolve_catalog *c = &rr->catalogs[i];

		if (specs[i].registered) {
			if (attach_registered(&held[i], c, &specs[i], i, req, resp) != 0)
				goto done;
			continue;
		}
		if (fbc_resolve_catalog_from_blobs(&owned[i], c->fbc, c->name, NULL, &err) != 0) {
			if (err.code == FBC_ENOMEM)
				rc = err.code;
			else
				fbc_http_problem(resp, req, 400, "bad_catalog",
						 "catalogs[%zu] (%s): %s", i, c->name, err.message);
			goto done;
		}
		c->catalog = owned[i];
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	rc = fbc_resolve(&res, rr, &lim, &err);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	{
		const char *outcome = rc != 0		 ? "failed"
				      : res->satisfiable ? "satisfiable"
				      : strcmp(res->kind ? res->kind : "", "conflict") == 0
					      ? "unsatisfiable"
					      : "error";
		double secs =
			(double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;

		fbc_metric_observe(
			&m_resolution,
			(const char *[]){rc == 0 && res->satisfiable ? "succeeded" : "failed"},
			secs);
		fbc_metric_add(&m_resolutions,
			       (const char *[]){fbc_resolve_semantics_name(rr->semantics), outcome},
			       1);
	}
	rc = 0;
	if (!res || fbc_resolve_result_to_json(&out, res, stats, &err) != 0) {
		if (err.code == FBC_ENOMEM)
			rc = err.code;
		else
			fbc_http_problem_from_error(resp, req, &err);
		goto done;
	}
	rc = fbc_http_json(resp, req, 200, out);
	out = NULL;
done:
	json_decref(out);
	fbc_resolve_result_free(res);
	if (rr) {
		for (size_t i = 0; i < rr->n_catalogs; i++) {
			fbc_catalog_free(owned ? owned[i] : NULL);
			fbc_http_catcache_release(held ? held[i] : NULL);
		}
	}
	free(owned);
	free(held);
	fbc_resolve_request_free(rr);
	json_decref(parsed);
	return rc;
}
