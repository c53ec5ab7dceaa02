/*
 * Private to api/http: what the resource files (one per resource: catalogs,
 * packages, registry, catalogd, health, resolve, ...) share — the helpers of
 * app.c and the handlers the route table (routes.c) points at.
 *
 * Handlers run concurrently on the server's threads; everything here is
 * reentrant. Not a contract outside api/http.
 */
#ifndef FBC_API_HTTP_HANDLERS_H
#define FBC_API_HTTP_HANDLERS_H

#include "api/http/app.h"

#include <stdbool.h>
#include <stdint.h>

static inline fbc_http_app *app_of(fbc_http_req *req)
{
	return req->app;
}

/* fbc_arena_defer callback releasing a json_t. */
void fbc_http_free_json(void *p);
/* Answer with a db result: 200 + JSON (remembered in the response cache
 * when the request is revision-scoped), or a problem from err. */
int fbc_http_reply_db(fbc_http_req *req, fbc_http_resp *resp, int rc, json_t *json,
		      const fbc_error *err);
/* A decimal integer >= min, at most 18 digits. FBC_EINVAL otherwise. */
int fbc_http_parse_int64(int64_t *out, const char *s, int64_t min);
/* ?limit= and ?cursor= as a db page; non-zero when resp holds a 400. */
int fbc_http_page_db(fbc_db_page *page, fbc_http_req *req, fbc_http_resp *resp);
/* This replica changed a catalog: forget every resolved revision. */
void fbc_http_app_forget_revisions(fbc_http_app *app);
/* Remember a successful revision-scoped answer (req->ctx holds its key). */
void fbc_http_cache_store(fbc_http_req *req, fbc_http_resp *resp);
/* Resolve {catalog} and ?revision= (or a {revision} path parameter), set the
 * ETag. Returns 0 to go on, 1 when resp is complete (problem, 304 or a
 * cached answer). */
int fbc_http_resolve_rev(fbc_db_rev *rev, fbc_http_req *req, fbc_http_resp *resp);
/* "group/version/kind" or "kind"; empty parts mean "any". */
int fbc_http_parse_gvk(fbc_db_gvk_filter *f, fbc_http_req *req, const char *s);
/* graph_svg.c: DOT text (of a channel with `nodes` entries) drawn as SVG by
 * Graphviz. FBC_ELIMIT over FBC_HTTP_SVG_MAX_NODES entries or when the
 * picture exceeds out's bound. Serialised: Graphviz is not thread-safe. */
#define FBC_HTTP_SVG_MAX_NODES 2000
int fbc_http_graph_svg(fbc_buf *out, const char *dot, size_t nodes, fbc_error *err);

/* metrics.c: GET /metrics, and removing this app's collectors. */
int fbc_http_metrics(fbc_http_req *req, fbc_http_resp *resp);
void fbc_http_app_metrics_stop(fbc_http_app *app);
/* Release the /api/v1/all streams kept by catalogd.c. */
void fbc_http_catalogd_dispose(fbc_http_app *app);

/* health.c */
int fbc_http_healthz(fbc_http_req *req, fbc_http_resp *resp);
int fbc_http_openapi(fbc_http_req *req, fbc_http_resp *resp);
int fbc_http_readyz(fbc_http_req *req, fbc_http_resp *resp);

/* ui.c */
int fbc_http_ui_index(fbc_http_req *req, fbc_http_resp *resp);
int fbc_http_ui_file_get(fbc_http_req *req, fbc_http_resp *resp);

/* catalogs.c */
int fbc_http_catalog_create(fbc_http_req *req, fbc_http_resp *resp);
int fbc_http_catalog_delete(fbc_http_req *req, fbc_http_resp *resp);
int fbc_http_catalog_get(fbc_http_req *req, fbc_http_resp *resp);
int fbc_http_catalog_list(fbc_http_req *req, fbc_http_resp *resp);
int fbc_http_content_put(fbc_http_req *req, fbc_http_resp *resp);
int fbc_http_revision_get(fbc_http_req *req, fbc_http_resp *resp);
int fbc_http_revision_list(fbc_http_req *req, fbc_http_resp *resp);
int fbc_http_validate(fbc_http_req *req, fbc_http_resp *resp);

/* packages.c */
int fbc_http_bundle_get(fbc_http_req *req, fbc_http_resp *resp);
int fbc_http_bundle_list(fbc_http_req *req, fbc_http_resp *resp);
int fbc_http_channel_get(fbc_http_req *req, fbc_http_resp *resp);
int fbc_http_channel_graph(fbc_http_req *req, fbc_http_resp *resp);
int fbc_http_channel_list(fbc_http_req *req, fbc_http_resp *resp);
int fbc_http_package_get(fbc_http_req *req, fbc_http_resp *resp);
int fbc_http_package_icon(fbc_http_req *req, fbc_http_resp *resp);
int fbc_http_package_list(fbc_http_req *req, fbc_http_resp *resp);
int fbc_http_successors(fbc_http_req *req, fbc_http_resp *resp);
int fbc_http_upgrade_path(fbc_http_req *req, fbc_http_resp *resp);

/* registry.c */
int fbc_http_reg_bundle_for_channel(fbc_http_req *req, fbc_http_resp *resp);
int fbc_http_reg_bundle_that_replaces(fbc_http_req *req, fbc_http_resp *resp);
int fbc_http_reg_default_bundle_that_provides(fbc_http_req *req, fbc_http_resp *resp);
int fbc_http_reg_entries_that_provide(fbc_http_req *req, fbc_http_resp *resp);
int fbc_http_reg_entries_that_replace(fbc_http_req *req, fbc_http_resp *resp);
int fbc_http_reg_get_bundle(fbc_http_req *req, fbc_http_resp *resp);
int fbc_http_reg_get_package(fbc_http_req *req, fbc_http_resp *resp);
int fbc_http_reg_latest_entries_that_provide(fbc_http_req *req, fbc_http_resp *resp);
int fbc_http_reg_list_bundles(fbc_http_req *req, fbc_http_resp *resp);
int fbc_http_reg_list_packages(fbc_http_req *req, fbc_http_resp *resp);

/* repositories.c */
int fbc_http_bundle_history(fbc_http_req *req, fbc_http_resp *resp);
int fbc_http_commit_get(fbc_http_req *req, fbc_http_resp *resp);
int fbc_http_pull_list(fbc_http_req *req, fbc_http_resp *resp);
int fbc_http_pull_get(fbc_http_req *req, fbc_http_resp *resp);
int fbc_http_repo_create(fbc_http_req *req, fbc_http_resp *resp);
int fbc_http_repo_delete(fbc_http_req *req, fbc_http_resp *resp);
int fbc_http_repo_get(fbc_http_req *req, fbc_http_resp *resp);
int fbc_http_repo_list(fbc_http_req *req, fbc_http_resp *resp);
int fbc_http_repo_patch(fbc_http_req *req, fbc_http_resp *resp);

/* webhooks.c */
int fbc_http_webhook_github(fbc_http_req *req, fbc_http_resp *resp);
int fbc_http_webhook_gitlab(fbc_http_req *req, fbc_http_resp *resp);

/* jobs.c */
int fbc_http_job_cancel(fbc_http_req *req, fbc_http_resp *resp);
int fbc_http_job_get(fbc_http_req *req, fbc_http_resp *resp);
int fbc_http_job_list(fbc_http_req *req, fbc_http_resp *resp);
int fbc_http_job_retry(fbc_http_req *req, fbc_http_resp *resp);

/* catalogd.c */
int fbc_http_catalogd_all(fbc_http_req *req, fbc_http_resp *resp);
int fbc_http_catalogd_metas(fbc_http_req *req, fbc_http_resp *resp);
/* repositories.c: the publish targets of a repository document. */
int fbc_http_repo_publish_check(json_t *spec, fbc_error *err);

/* images.c */
int fbc_http_image_list(fbc_http_req *req, fbc_http_resp *resp);
int fbc_http_image_get(fbc_http_req *req, fbc_http_resp *resp);
int fbc_http_image_publish(fbc_http_req *req, fbc_http_resp *resp);

#endif
