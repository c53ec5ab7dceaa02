/* GET /metrics: the process-wide registry (service/base/metrics.h) plus what
 * this app adds at scrape time: the database pool and each catalog's
 * current revision, packages and bundles. */
#include "api/http/handlers.h"
#include "db/gitops.h"

#include "service/base/metrics.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Catalog gauges come from the database; a scrape reuses them for this long
 * so that frequent scrapes cost no query and a slow database delays a
 * scrape at most once per period (with the previous figures). */
#define GAUGES_TTL_MS 5000

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int collect_pool(void *ctx, fbc_buf *out)
{
	fbc_http_app *app = ctx;
	fbc_db_stats st;
	int rc;

	fbc_db_stats_get(app->db, &st);
	rc = fbc_metrics_put_header(out, "fbcd_db_connections",
				    "Database connections of the pool, by state.",
				    FBC_METRIC_GAUGE);
	if (!rc)
		rc = fbc_metrics_put_sample(out, "fbcd_db_connections",
					    (const char *[]){"state", "in_use", NULL},
					    (double)(st.open - st.idle));
	if (!rc)
		rc = fbc_metrics_put_sample(out, "fbcd_db_connections",
					    (const char *[]){"state", "idle", NULL},
					    (double)st.idle);
	if (!rc)
		rc = fbc_metrics_put_header(out, "fbcd_db_reconnects_total",
					    "Pooled connections replaced after they broke.",
					    FBC_METRIC_COUNTER);
	if (!rc)
		rc = fbc_metrics_put_sample(out, "fbcd_db_reconnects_total", NULL,
					    (double)st.resets);
	return rc;
}

static int put_gauge(fbc_buf *out, json_t *list, const char *name, const char *help,
		     const char *field)
{
	size_t i;
	json_t *c;
	int rc = fbc_metrics_put_header(out, name, help, FBC_METRIC_GAUGE);

	json_array_foreach(list, i, c)
	{
		const char *cat = json_string_value(json_object_get(c, "name"));
		json_t *v = json_object_get(c, field);

		if (rc || !cat || !json_is_number(v))
			continue;
		rc = fbc_metrics_put_sample(out, name, (const char *[]){"catalog", cat, NULL},
					    json_number_value(v));
	}
	return rc;
}

static int collect_catalogs(void *ctx, fbc_buf *out)
{
	fbc_http_app *app = ctx;
	json_t *list = NULL;
	fbc_error err;
	int rc;

	pthread_mutex_lock(&app->gauges_lock);
	if (!app->gauges || now_ms() - app->gauges_at_ms >= GAUGES_TTL_MS) {
		fbc_error_init(&err);
		if (fbc_db_catalog_gauges(&list, app->db, &err) == 0) {
			json_decref(app->gauges);
			app->gauges = list;
		}
		json_t *jobs = NULL;
		fbc_error_init(&err);
		if (fbc_db_job_counts(&jobs, app->db, &err) == 0) {
			json_decref(app->job_counts);
			app->job_counts = jobs;
		}
		app->gauges_at_ms = now_ms(); /* a failure is retried a period later */
	}
	list = json_incref(app->gauges);
	json_t *jobs = json_incref(app->job_counts);
	pthread_mutex_unlock(&app->gauges_lock);
	if (jobs) {
		size_t i;
		json_t *j;
		rc = fbc_metrics_put_header(
			out, "fbcd_jobs", "Jobs in the queue by kind and state.", FBC_METRIC_GAUGE);
		json_array_foreach(jobs, i, j)
		{
			const char *k = json_string_value(json_object_get(j, "kind")),
				   *st = json_string_value(json_object_get(j, "state"));
			if (rc || !k || !st)
				continue;
			rc = fbc_metrics_put_sample(out, "fbcd_jobs",
						    (const char *[]){"kind", k, "state", st, NULL},
						    json_number_value(json_object_get(j, "count")));
		}
		json_decref(jobs);
		if (rc) {
			json_decref(list);
			return rc;
		}
	}
	if (!list)
		return 0;
	rc = put_gauge(out, list, "fbcd_catalog_revision", "Current revision number of a catalog.",
		       "revision");
	if (!rc)
		rc = put_gauge(out, list, "fbcd_catalog_packages",
			       "Packages in a catalog's current revision.", "packages");
	if (!rc)
		rc = put_gauge(out, list, "fbcd_catalog_bundles",
			       "Bundles in a catalog's current revision.", "bundles");
	json_decref(list);
	return rc;
}

int fbc_http_app_metrics_start(fbc_http_app *app)
{
	int rc = fbc_metrics_add_collector(collect_pool, app);

	if (!rc)
		rc = fbc_metrics_add_collector(collect_catalogs, app);
	return rc;
}

void fbc_http_app_metrics_stop(fbc_http_app *app)
{
	fbc_metrics_remove_collector(collect_pool, app);
	fbc_metrics_remove_collector(collect_catalogs, app);
	json_decref(app->gauges);
	app->gauges = NULL;
	json_decref(app->job_counts);
	app->job_counts = NULL;
}

int fbc_http_metrics(fbc_http_req *req, fbc_http_resp *resp)
{
	fbc_buf b;
	char *text;
	size_t len;

	if (app_of(req)->metrics_auth && !(req->scopes & (FBC_SCOPE_READ | FBC_SCOPE_ADMIN))) {
		fbc_http_resp_header(resp, "WWW-Authenticate", "Bearer realm=\"fbcd\"");
		return fbc_http_problem(resp, req, 401, "unauthorized",
					"the metrics need a token with the 'read' scope");
	}
	fbc_buf_init(&b, 64u << 20);
	if (fbc_metrics_write(&b) != 0) {
		fbc_buf_dispose(&b);
		return fbc_http_problem(resp, req, 500, "internal", "cannot write the metrics");
	}
	text = fbc_buf_detach(&b, &len);
	if (!text || fbc_arena_defer(req->arena, free, text) != 0) {
		free(text);
		return FBC_ENOMEM;
	}
	fbc_http_body(resp, 200, "text/plain; version=0.0.4; charset=utf-8", text, len);
	return 0;
}
