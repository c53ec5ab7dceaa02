/* REST API handlers and the route table. */
#include "api/http_api.h"

#include "api/cli_util.h"
#include "api/http_content.h"
#include "service/base/strmap.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#define MAX_NAME_BYTES 253

/* ------------------------------------------------------------ blob cache */

struct fbc_http_blob {
	atomic_int refs;
	char digest[80];
	char *data;
	size_t len;
	char *gz;
	size_t gz_len;
	unsigned long used;
};

static void blob_unref(void *p)
{
	struct fbc_http_blob *b = p;

	if (b && atomic_fetch_sub(&b->refs, 1) == 1) {
		free(b->data);
		free(b->gz);
		free(b);
	}
}

int fbc_http_app_init(fbc_http_app *app, fbc_db *db, const char *tmp_dir, size_t cache_bytes,
		      unsigned rev_ttl_ms)
{
	memset(app, 0, sizeof(*app));
	app->db = db;
	app->tmp_dir = tmp_dir;
	app->rev_ttl_ms = rev_ttl_ms;
	if (cache_bytes && fbc_http_cache_create(&app->responses, cache_bytes, 100000) != 0)
		return FBC_ENOMEM;
	if (fbc_http_catcache_create(&app->catalogs, FBC_HTTP_RESOLVE_CACHE_ENTRIES,
				     FBC_HTTP_RESOLVE_CACHE_BYTES) != 0) {
		fbc_http_cache_free(app->responses);
		return FBC_ENOMEM;
	}
	if (pthread_mutex_init(&app->lock, NULL) != 0) {
		fbc_http_catcache_free(app->catalogs);
		fbc_http_cache_free(app->responses);
		return FBC_EINTERNAL;
	}
	return 0;
}

void fbc_http_app_dispose(fbc_http_app *app)
{
	if (!app)
		return;
	for (size_t i = 0; i < FBC_HTTP_ALL_CACHE_SLOTS; i++)
		blob_unref(app->all_cache[i]);
	fbc_http_cache_free(app->responses);
	fbc_http_catcache_free(app->catalogs);
	pthread_mutex_destroy(&app->lock);
}

static struct fbc_http_blob *cache_get(fbc_http_app *app, const char *digest)
{
	struct fbc_http_blob *found = NULL;

	pthread_mutex_lock(&app->lock);
	for (size_t i = 0; i < FBC_HTTP_ALL_CACHE_SLOTS; i++) {
		struct fbc_http_blob *b = app->all_cache[i];
		if (b && strcmp(b->digest, digest) == 0) {
			atomic_fetch_add(&b->refs, 1);
			b->used = ++app->tick;
			found = b;
			break;
		}
	}
	pthread_mutex_unlock(&app->lock);
	return found;
}

/* Insert b (the caller keeps its own reference). */
static void cache_put(fbc_http_app *app, struct fbc_http_blob *b)
{
	size_t victim = 0;
	struct fbc_http_blob *old;

	pthread_mutex_lock(&app->lock);
	for (size_t i = 0; i < FBC_HTTP_ALL_CACHE_SLOTS; i++) {
		if (!app->all_cache[i]) {
			victim = i;
			break;
		}
		if (strcmp(app->all_cache[i]->digest, b->digest) == 0) {
			pthread_mutex_unlock(&app->lock);
			return;
		}
		if (app->all_cache[i]->used < app->all_cache[victim]->used)
			victim = i;
	}
	old = app->all_cache[victim];
	atomic_fetch_add(&b->refs, 1);
	b->used = ++app->tick;
	app->all_cache[victim] = b;
	pthread_mutex_unlock(&app->lock);
	blob_unref(old);
}

/* -------------------------------------------------------------- helpers */

static fbc_http_app *APP(fbc_http_req *req)
{
	return req->app;
}

static void free_json(void *p)
{
	json_decref(p);
}

static void cache_store(fbc_http_req *req, fbc_http_resp *resp);

/* Answer with the db result: 200 + JSON, or a problem from err. */
static int reply_db(fbc_http_req *req, fbc_http_resp *resp, int rc, json_t *json,
		    const fbc_error *err)
{
	if (rc != 0)
		return fbc_http_problem_from_error(resp, req, err);
	rc = fbc_http_json(resp, req, 200, json);
	if (rc == 0)
		cache_store(req, resp);
	return rc;
}

static int parse_int64(int64_t *out, const char *s, int64_t min)
{
	char *end = NULL;
	long long v;

	if (!s || s[0] < '0' || s[0] > '9' || strlen(s) > 18)
		return FBC_EINVAL;
	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno || *end || v < min)
		return FBC_EINVAL;
	*out = v;
	return 0;
}

static int page_args(fbc_db_page *page, fbc_http_req *req, fbc_http_resp *resp)
{
	size_t limit;
	const char *cursor;
	int rc = fbc_http_page_args(&limit, &cursor, req, resp, FBC_DB_PAGE_DEFAULT,
				    FBC_DB_PAGE_MAX);
	if (rc != 0)
		return rc;
	page->limit = (unsigned)limit;
	page->cursor = cursor;
	return 0;
}

static int64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static bool rev_lookup(fbc_db_rev *out, fbc_http_app *app, const char *catalog, int64_t number)
{
	bool hit = false;
	int64_t now;

	if (!app->rev_ttl_ms || strlen(catalog) >= sizeof(app->revs[0].catalog))
		return false;
	now = now_ms();
	pthread_mutex_lock(&app->lock);
	for (size_t i = 0; i < FBC_HTTP_REV_CACHE_SLOTS; i++) {
		struct fbc_http_rev_slot *s = &app->revs[i];
		if (s->expires_ms > now && s->number == number && !strcmp(s->catalog, catalog)) {
			*out = s->rev;
			hit = true;
			break;
		}
	}
	pthread_mutex_unlock(&app->lock);
	return hit;
}

static void rev_store(fbc_http_app *app, const char *catalog, int64_t number, const fbc_db_rev *rev)
{
	if (!app->rev_ttl_ms || strlen(catalog) >= sizeof(app->revs[0].catalog))
		return;
	pthread_mutex_lock(&app->lock);
	struct fbc_http_rev_slot *s = &app->revs[app->rev_next++ % FBC_HTTP_REV_CACHE_SLOTS];
	snprintf(s->catalog, sizeof(s->catalog), "%s", catalog);
	s->number = number;
	s->rev = *rev;
	s->expires_ms = now_ms() + app->rev_ttl_ms;
	pthread_mutex_unlock(&app->lock);
}

/* This replica changed a catalog: forget every resolved revision. */
static void rev_forget_all(fbc_http_app *app)
{
	pthread_mutex_lock(&app->lock);
	for (size_t i = 0; i < FBC_HTTP_REV_CACHE_SLOTS; i++)
		app->revs[i].expires_ms = 0;
	pthread_mutex_unlock(&app->lock);
}

int fbc_http_app_revision(fbc_db_rev *out, fbc_http_app *app, const char *catalog, int64_t number,
			  fbc_error *err)
{
	fbc_db_rev rev;
	int rc;

	if (rev_lookup(out, app, catalog, number))
		return 0;
	rc = fbc_db_revision_resolve(&rev, app->db, catalog, number, err);
	if (rc != 0)
		return rc;
	rev_store(app, catalog, number, &rev);
	*out = rev;
	return 0;
}

/* Remember a successful revision-scoped answer (req->ctx holds its key). */
static void cache_store(fbc_http_req *req, fbc_http_resp *resp)
{
	fbc_http_app *app = APP(req);

	if (app->responses && req->ctx && resp->status == 200 && resp->body && !resp->release)
		fbc_http_cache_put(app->responses, req->ctx, resp->content_type, resp->body,
				   resp->body_len);
}

/* digest, method-independent path and the query arguments as received.
 * Path and arguments are already percent-decoded, so they may contain '?',
 * '&' and '=': each part is length-prefixed, or "/p/a%3Fx=1" and "/p/a?x=1"
 * would share an entry. */
static char *cache_key(fbc_http_req *req, const char *digest)
{
	fbc_buf b;
	char *key = NULL;

	fbc_buf_init(&b, 8192);
	int rc = fbc_buf_printf(&b, "%s %zu:%s", digest, strlen(req->path), req->path);
	for (size_t i = 0; !rc && i < req->n_query; i++) {
		const char *v = req->query[i].value ? req->query[i].value : "";
		rc = fbc_buf_printf(&b, " %zu:%s=%zu:%s", strlen(req->query[i].key),
				    req->query[i].key, strlen(v), v);
	}
	if (!rc)
		key = fbc_arena_strndup(req->arena, b.data, b.len);
	fbc_buf_dispose(&b);
	return key;
}

/* Resolve {catalog} and ?revision= (or a {revision} path parameter), set the
 * ETag. Returns 0 to go on, 1 when resp is complete (problem or 304). */
static int resolve_rev(fbc_db_rev *rev, fbc_http_req *req, fbc_http_resp *resp)
{
	const char *catalog = fbc_http_param(req, "catalog");
	const char *rs = fbc_http_param(req, "revision");
	int64_t number = 0;
	fbc_error err;

	if (!rs)
		rs = fbc_http_query(req, "revision");
	if (rs && parse_int64(&number, rs, 1) != 0) {
		fbc_http_problem(resp, req, 400, "bad_revision",
				 "revision: '%s' is not a revision number (1, 2, ...)", rs);
		return 1;
	}
	fbc_error_init(&err);
	if (!rev_lookup(rev, APP(req), catalog, number)) {
		if (fbc_db_revision_resolve(rev, APP(req)->db, catalog, number, &err) != 0) {
			if (err.code == FBC_ENOTFOUND)
				fbc_http_problem(resp, req, 404, "not_found", "%s", err.message);
			else
				fbc_http_problem_from_error(resp, req, &err);
			return 1;
		}
		rev_store(APP(req), catalog, number, rev);
	}
	resp->etag = fbc_arena_printf(req->arena, "\"%s\"", rev->digest);
	if (!resp->etag)
		return fbc_http_problem(resp, req, 500, "internal", "out of memory"), 1;
	if (fbc_http_etag_matches(req->if_none_match, resp->etag)) {
		fbc_http_body(resp, 304, NULL, NULL, 0);
		return 1;
	}
	if (APP(req)->responses) {
		char *key = cache_key(req, rev->digest);
		const fbc_http_cached *hit =
			key ? fbc_http_cache_get(APP(req)->responses, key) : NULL;
		if (hit) {
			fbc_http_body(resp, 200, hit->content_type, hit->data, hit->len);
			resp->body_gz = hit->gz;
			resp->body_gz_len = hit->gz_len;
			resp->release = fbc_http_cache_release;
			resp->release_ctx = (void *)(uintptr_t)hit;
			return 1;
		}
		req->ctx = key;
	}
	return 0;
}

/* ---------------------------------------------------------------- meta */

static int h_healthz(fbc_http_req *req, fbc_http_resp *resp)
{
	static const char ok[] = "{\"status\":\"ok\"}";
	(void)req;
	fbc_http_body(resp, 200, "application/json", ok, sizeof(ok) - 1);
	return 0;
}

static int h_readyz(fbc_http_req *req, fbc_http_resp *resp)
{
	static const char ok[] = "{\"status\":\"ready\"}";
	fbc_error err;

	fbc_error_init(&err);
	if (fbc_db_ready(APP(req)->db, &err) != 0) {
		/* libpq's text names the database host and port: log it only */
		fprintf(stderr, "fbcd: readyz: %s\n", err.message);
		return fbc_http_problem(resp, req, 503, "not_ready",
					"the database is not reachable");
	}
	fbc_http_body(resp, 200, "application/json", ok, sizeof(ok) - 1);
	return 0;
}

static int h_openapi(fbc_http_req *req, fbc_http_resp *resp)
{
	(void)req;
	fbc_http_body(resp, 200, "application/json", fbc_http_openapi_json,
		      fbc_http_openapi_json_len);
	return 0;
}

/* ------------------------------------------------------------ catalogs */

static int h_catalog_list(fbc_http_req *req, fbc_http_resp *resp)
{
	fbc_db_page page;
	json_t *out = NULL;
	fbc_error err;

	if (page_args(&page, req, resp) != 0)
		return 0;
	fbc_error_init(&err);
	int rc = fbc_db_catalog_list(&out, APP(req)->db, &page, &err);
	return reply_db(req, resp, rc, out, &err);
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

static int h_catalog_create(fbc_http_req *req, fbc_http_resp *resp)
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
	if (fbc_db_catalog_create(&out, APP(req)->db, &spec, &err) != 0)
		return fbc_http_problem_from_error(resp, req, &err);
	fbc_http_resp_header(resp, "Location",
			     fbc_arena_printf(req->arena, "/v1/catalogs/%s", spec.name));
	return fbc_http_json(resp, req, 201, out);
}

static int h_catalog_get(fbc_http_req *req, fbc_http_resp *resp)
{
	json_t *out = NULL;
	fbc_error err;

	fbc_error_init(&err);
	int rc = fbc_db_catalog_get(&out, APP(req)->db, fbc_http_param(req, "catalog"), &err);
	return reply_db(req, resp, rc, out, &err);
}

static int h_catalog_delete(fbc_http_req *req, fbc_http_resp *resp)
{
	fbc_error err;
	int rc;

	fbc_error_init(&err);
	rc = fbc_db_catalog_delete(APP(req)->db, fbc_http_param(req, "catalog"), &err);
	rev_forget_all(APP(req));
	if (rc != 0)
		return fbc_http_problem_from_error(resp, req, &err);
	fbc_http_body(resp, 204, NULL, NULL, 0);
	return 0;
}

/* -------------------------------------------------------------- content */

/* Load + validate the body. Returns 0 with *cat on success (valid), 1 when
 * resp holds the answer (bad body, or 422 with the findings). */
static int load_body(fbc_catalog **cat, json_t **report, fbc_http_req *req, fbc_http_resp *resp,
		     bool problem_on_invalid)
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
	if (fbc_http_content_load(&c, &diags, req->content_type, req->body, req->body_len,
				  APP(req)->tmp_dir, &err) != 0) {
		if (err.code == FBC_EINVAL || err.code == FBC_EPARSE)
			fbc_http_problem(resp, req, 400, "bad_content", "%s: %s", err.where,
					 err.message);
		else
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

static int h_content_put(fbc_http_req *req, fbc_http_resp *resp)
{
	const char *catalog = fbc_http_param(req, "catalog");
	fbc_catalog *cat = NULL;
	json_t *report = NULL, *out = NULL;
	bool created = false;
	fbc_error err;
	int rc;

	fbc_error_init(&err);
	/* a missing catalog is reported before the upload is parsed */
	if (fbc_db_catalog_get(&out, APP(req)->db, catalog, &err) != 0)
		return fbc_http_problem_from_error(resp, req, &err);
	json_decref(out);
	out = NULL;
	if (load_body(&cat, &report, req, resp, true) != 0)
		return 0;
	json_decref(report);
	rc = fbc_db_ingest(&out, &created, APP(req)->db, catalog, cat, &err);
	fbc_catalog_free(cat);
	rev_forget_all(APP(req));
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

static int h_validate(fbc_http_req *req, fbc_http_resp *resp)
{
	fbc_catalog *cat = NULL;
	json_t *report = NULL;

	if (load_body(&cat, &report, req, resp, false) != 0)
		return 0;
	fbc_catalog_free(cat);
	return fbc_http_json(resp, req, 200, report);
}

/* ------------------------------------------------------------ revisions */

static int h_revision_list(fbc_http_req *req, fbc_http_resp *resp)
{
	fbc_db_page page;
	json_t *out = NULL;
	fbc_error err;

	if (page_args(&page, req, resp) != 0)
		return 0;
	fbc_error_init(&err);
	int rc = fbc_db_revision_list(&out, APP(req)->db, fbc_http_param(req, "catalog"), &page,
				      &err);
	return reply_db(req, resp, rc, out, &err);
}

static int h_revision_get(fbc_http_req *req, fbc_http_resp *resp)
{
	const char *rs = fbc_http_param(req, "revision");
	int64_t number;
	json_t *out = NULL;
	fbc_error err;

	if (parse_int64(&number, rs, 1) != 0)
		return fbc_http_problem(resp, req, 400, "bad_revision",
					"revision: '%s' is not a revision number", rs);
	fbc_error_init(&err);
	int rc = fbc_db_revision_get(&out, APP(req)->db, fbc_http_param(req, "catalog"), number,
				     &err);
	if (rc == 0) {
		json_t *dg = json_object_get(out, "digest");
		if (json_is_string(dg))
			resp->etag = fbc_arena_printf(req->arena, "\"%s\"", json_string_value(dg));
	}
	return reply_db(req, resp, rc, out, &err);
}

/* ------------------------------------------------------------- packages */

/* "group/version/kind" or "kind"; empty parts mean "any". */
static int parse_gvk(fbc_db_gvk_filter *f, fbc_http_req *req, const char *s)
{
	const char *a = strchr(s, '/'), *b = a ? strchr(a + 1, '/') : NULL;

	memset(f, 0, sizeof(*f));
	if (!a) {
		f->kind = s;
	} else if (b && !strchr(b + 1, '/')) {
		f->group = fbc_arena_strndup(req->arena, s, (size_t)(a - s));
		f->version = fbc_arena_strndup(req->arena, a + 1, (size_t)(b - a - 1));
		f->kind = b + 1;
		if (!f->group[0])
			f->group = NULL;
		if (!f->version[0])
			f->version = NULL;
	} else {
		return FBC_EINVAL;
	}
	return f->kind[0] ? 0 : FBC_EINVAL;
}

static int h_package_list(fbc_http_req *req, fbc_http_resp *resp)
{
	fbc_db_rev rev;
	fbc_db_page page;
	fbc_db_package_filter f;
	const char *s;
	json_t *out = NULL;
	fbc_error err;

	if (page_args(&page, req, resp) != 0)
		return 0;
	memset(&f, 0, sizeof(f));
	f.deprecated = -1;
	f.name_prefix = fbc_http_query(req, "prefix");
	if ((s = fbc_http_query(req, "provides")) && parse_gvk(&f.provides, req, s) != 0)
		return fbc_http_problem(resp, req, 400, "bad_filter",
					"provides: expected group/version/kind or kind, got '%s'",
					s);
	if ((s = fbc_http_query(req, "requires")) && parse_gvk(&f.requires, req, s) != 0)
		return fbc_http_problem(resp, req, 400, "bad_filter",
					"requires: expected group/version/kind or kind, got '%s'",
					s);
	if ((s = fbc_http_query(req, "deprecated"))) {
		if (!strcmp(s, "true"))
			f.deprecated = 1;
		else if (!strcmp(s, "false"))
			f.deprecated = 0;
		else
			return fbc_http_problem(resp, req, 400, "bad_filter",
						"deprecated: expected true or false, got '%s'", s);
	}
	if (resolve_rev(&rev, req, resp))
		return 0;
	fbc_error_init(&err);
	int rc = fbc_db_package_list(&out, APP(req)->db, &rev, &f, &page, &err);
	return reply_db(req, resp, rc, out, &err);
}

static int h_package_get(fbc_http_req *req, fbc_http_resp *resp)
{
	fbc_db_rev rev;
	json_t *out = NULL;
	fbc_error err;

	if (resolve_rev(&rev, req, resp))
		return 0;
	fbc_error_init(&err);
	int rc = fbc_db_package_get(&out, APP(req)->db, &rev, fbc_http_param(req, "package"), &err);
	return reply_db(req, resp, rc, out, &err);
}

static int h_package_icon(fbc_http_req *req, fbc_http_resp *resp)
{
	fbc_db_rev rev;
	void *data = NULL;
	size_t len = 0;
	char *mt = NULL;
	fbc_error err;

	if (resolve_rev(&rev, req, resp))
		return 0;
	fbc_error_init(&err);
	if (fbc_db_icon_get(&data, &len, &mt, APP(req)->db, &rev, fbc_http_param(req, "package"),
			    &err) != 0)
		return fbc_http_problem_from_error(resp, req, &err);
	/* a failed defer frees its own pointer, not the other one */
	if (fbc_arena_defer(req->arena, free, mt) != 0) {
		free(data);
		return FBC_ENOMEM;
	}
	if (fbc_arena_defer(req->arena, free, data) != 0)
		return FBC_ENOMEM;
	/* the media type comes from catalog data: only pass through image types */
	const char *ct = (mt && strncasecmp(mt, "image/", 6) == 0 && !strpbrk(mt, "\r\n"))
				 ? mt
				 : "application/octet-stream";
	fbc_http_body(resp, 200, ct, data, len);
	cache_store(req, resp);
	return 0;
}

/* ------------------------------------------------------------- channels */

static int h_channel_list(fbc_http_req *req, fbc_http_resp *resp)
{
	fbc_db_rev rev;
	json_t *out = NULL;
	fbc_error err;

	if (resolve_rev(&rev, req, resp))
		return 0;
	fbc_error_init(&err);
	int rc =
		fbc_db_channel_list(&out, APP(req)->db, &rev, fbc_http_param(req, "package"), &err);
	return reply_db(req, resp, rc, out, &err);
}

static int h_channel_get(fbc_http_req *req, fbc_http_resp *resp)
{
	fbc_db_rev rev;
	json_t *out = NULL;
	fbc_error err;

	if (resolve_rev(&rev, req, resp))
		return 0;
	fbc_error_init(&err);
	int rc = fbc_db_channel_get(&out, APP(req)->db, &rev, fbc_http_param(req, "package"),
				    fbc_http_param(req, "channel"), &err);
	return reply_db(req, resp, rc, out, &err);
}

static int load_graph(json_t **graph, fbc_http_req *req, fbc_http_resp *resp)
{
	fbc_db_rev rev;
	fbc_error err;

	if (resolve_rev(&rev, req, resp))
		return 1;
	fbc_error_init(&err);
	if (fbc_db_channel_graph(graph, APP(req)->db, &rev, fbc_http_param(req, "package"),
				 fbc_http_param(req, "channel"), &err) != 0) {
		fbc_http_problem_from_error(resp, req, &err);
		return 1;
	}
	if (fbc_arena_defer(req->arena, free_json, *graph) != 0) {
		fbc_http_problem(resp, req, 500, "internal", "out of memory");
		return 1;
	}
	return 0;
}

static int h_channel_graph(fbc_http_req *req, fbc_http_resp *resp)
{
	const char *format = fbc_http_query(req, "format");
	json_t *graph = NULL;
	fbc_buf *b;
	fbc_error err;

	if (!format)
		format = "json";
	if (strcmp(format, "json") && strcmp(format, "dot") && strcmp(format, "mermaid"))
		return fbc_http_problem(resp, req, 400, "bad_format",
					"format: expected json, dot or mermaid, got '%s'", format);
	if (load_graph(&graph, req, resp))
		return 0;
	if (!strcmp(format, "json")) {
		json_incref(graph);
		if (fbc_http_json(resp, req, 200, graph) != 0)
			return FBC_ENOMEM;
		cache_store(req, resp);
		return 0;
	}
	b = fbc_arena_alloc(req->arena, sizeof(*b));
	if (!b)
		return FBC_ENOMEM;
	fbc_buf_init(b, 64u << 20);
	if (fbc_arena_defer(req->arena, (void (*)(void *))fbc_buf_dispose, b) != 0)
		return FBC_ENOMEM;
	fbc_error_init(&err);
	if (fbc_http_graph_format(b, graph, format, &err) != 0)
		return fbc_http_problem_from_error(resp, req, &err);
	fbc_http_body(resp, 200,
		      !strcmp(format, "dot") ? "text/vnd.graphviz; charset=utf-8"
					     : "text/vnd.mermaid; charset=utf-8",
		      b->data, b->len);
	cache_store(req, resp);
	return 0;
}

static int semantics_arg(const char **out, fbc_http_req *req, fbc_http_resp *resp)
{
	const char *s = fbc_http_query(req, "semantics");

	if (!s)
		s = "v1";
	if (strcmp(s, "classic") && strcmp(s, "v1")) {
		fbc_http_problem(resp, req, 400, "bad_semantics",
				 "semantics: expected classic or v1, got '%s'", s);
		return 1;
	}
	*out = s;
	return 0;
}

static int h_successors(fbc_http_req *req, fbc_http_resp *resp)
{
	const char *from = fbc_http_query(req, "from"), *sem;
	json_t *graph = NULL, *items = NULL;
	fbc_error err;

	if (semantics_arg(&sem, req, resp))
		return 0;
	if (!from || !from[0])
		return fbc_http_problem(resp, req, 400, "bad_request",
					"from: a bundle name or version is required");
	if (load_graph(&graph, req, resp))
		return 0;
	fbc_error_init(&err);
	if (fbc_http_graph_successors(&items, graph, from, sem, &err) != 0)
		return fbc_http_problem_from_error(resp, req, &err);
	if (fbc_http_list(resp, req, items, NULL) != 0)
		return FBC_ENOMEM;
	cache_store(req, resp);
	return 0;
}

static int h_upgrade_path(fbc_http_req *req, fbc_http_resp *resp)
{
	const char *from = fbc_http_query(req, "from"), *to = fbc_http_query(req, "to"), *sem;
	json_t *graph = NULL, *out = NULL;
	fbc_error err;

	if (semantics_arg(&sem, req, resp))
		return 0;
	if (!from || !from[0])
		return fbc_http_problem(resp, req, 400, "bad_request",
					"from: a bundle name or version is required");
	if (load_graph(&graph, req, resp))
		return 0;
	fbc_error_init(&err);
	if (fbc_http_graph_upgrade_path(&out, graph, from, to && to[0] ? to : NULL, sem, &err) != 0)
		return fbc_http_problem_from_error(resp, req, &err);
	return fbc_http_json(resp, req, 200, out);
}

/* -------------------------------------------------------------- bundles */

static int h_bundle_list(fbc_http_req *req, fbc_http_resp *resp)
{
	fbc_db_rev rev;
	fbc_db_page page;
	json_t *out = NULL;
	fbc_error err;

	if (page_args(&page, req, resp) != 0)
		return 0;
	if (resolve_rev(&rev, req, resp))
		return 0;
	fbc_error_init(&err);
	int rc = fbc_db_bundle_list(&out, APP(req)->db, &rev, fbc_http_param(req, "package"), &page,
				    &err);
	return reply_db(req, resp, rc, out, &err);
}

static int h_bundle_get(fbc_http_req *req, fbc_http_resp *resp)
{
	fbc_db_rev rev;
	json_t *out = NULL;
	fbc_error err;

	if (resolve_rev(&rev, req, resp))
		return 0;
	fbc_error_init(&err);
	int rc = fbc_db_bundle_get(&out, APP(req)->db, &rev, fbc_http_param(req, "package"),
				   fbc_http_param(req, "bundle"), &err);
	return reply_db(req, resp, rc, out, &err);
}

/* ------------------------------------------------ registry equivalents */

static int need_query(const char **out, fbc_http_req *req, fbc_http_resp *resp, const char *name)
{
	const char *v = fbc_http_query(req, name);
	if (!v || !v[0]) {
		fbc_http_problem(resp, req, 400, "bad_request", "%s: required", name);
		return 1;
	}
	*out = v;
	return 0;
}

static int gvk_args(fbc_db_gvk_filter *f, fbc_http_req *req, fbc_http_resp *resp)
{
	memset(f, 0, sizeof(*f));
	f->group = fbc_http_query(req, "group");
	f->version = fbc_http_query(req, "version");
	if (need_query(&f->kind, req, resp, "kind"))
		return 1;
	/* "plural" is accepted for gRPC parity; GVKs are matched without it */
	return 0;
}

#define REG_PRELUDE         \
	fbc_db_rev rev;     \
	json_t *out = NULL; \
	fbc_error err;      \
	fbc_error_init(&err);

static int h_reg_list_packages(fbc_http_req *req, fbc_http_resp *resp)
{
	REG_PRELUDE
	if (resolve_rev(&rev, req, resp))
		return 0;
	int rc = fbc_db_registry_list_packages(&out, APP(req)->db, &rev, &err);
	return reply_db(req, resp, rc, out, &err);
}

static int h_reg_get_package(fbc_http_req *req, fbc_http_resp *resp)
{
	REG_PRELUDE
	if (resolve_rev(&rev, req, resp))
		return 0;
	int rc = fbc_db_registry_get_package(&out, APP(req)->db, &rev,
					     fbc_http_param(req, "package"), &err);
	return reply_db(req, resp, rc, out, &err);
}

static int h_reg_get_bundle(fbc_http_req *req, fbc_http_resp *resp)
{
	const char *pkg, *ch, *csv;
	REG_PRELUDE
	if (need_query(&pkg, req, resp, "pkgName") || need_query(&ch, req, resp, "channelName") ||
	    need_query(&csv, req, resp, "csvName") || resolve_rev(&rev, req, resp))
		return 0;
	int rc = fbc_db_registry_get_bundle(&out, APP(req)->db, &rev, pkg, ch, csv, &err);
	return reply_db(req, resp, rc, out, &err);
}

static int h_reg_bundle_for_channel(fbc_http_req *req, fbc_http_resp *resp)
{
	const char *pkg, *ch;
	REG_PRELUDE
	if (need_query(&pkg, req, resp, "pkgName") || need_query(&ch, req, resp, "channelName") ||
	    resolve_rev(&rev, req, resp))
		return 0;
	int rc = fbc_db_registry_get_bundle_for_channel(&out, APP(req)->db, &rev, pkg, ch, &err);
	return reply_db(req, resp, rc, out, &err);
}

static int h_reg_entries_that_replace(fbc_http_req *req, fbc_http_resp *resp)
{
	const char *csv;
	REG_PRELUDE
	if (need_query(&csv, req, resp, "csvName") || resolve_rev(&rev, req, resp))
		return 0;
	int rc = fbc_db_registry_entries_that_replace(&out, APP(req)->db, &rev, csv, &err);
	return reply_db(req, resp, rc, out, &err);
}

static int h_reg_bundle_that_replaces(fbc_http_req *req, fbc_http_resp *resp)
{
	const char *pkg, *ch, *csv;
	REG_PRELUDE
	if (need_query(&csv, req, resp, "csvName") || need_query(&pkg, req, resp, "pkgName") ||
	    need_query(&ch, req, resp, "channelName") || resolve_rev(&rev, req, resp))
		return 0;
	int rc = fbc_db_registry_bundle_that_replaces(&out, APP(req)->db, &rev, csv, pkg, ch, &err);
	return reply_db(req, resp, rc, out, &err);
}

static int h_reg_entries_that_provide(fbc_http_req *req, fbc_http_resp *resp)
{
	fbc_db_gvk_filter g;
	REG_PRELUDE
	if (gvk_args(&g, req, resp) || resolve_rev(&rev, req, resp))
		return 0;
	int rc = fbc_db_registry_entries_that_provide(&out, APP(req)->db, &rev, &g, &err);
	return reply_db(req, resp, rc, out, &err);
}

static int h_reg_latest_entries_that_provide(fbc_http_req *req, fbc_http_resp *resp)
{
	fbc_db_gvk_filter g;
	REG_PRELUDE
	if (gvk_args(&g, req, resp) || resolve_rev(&rev, req, resp))
		return 0;
	int rc = fbc_db_registry_latest_entries_that_provide(&out, APP(req)->db, &rev, &g, &err);
	return reply_db(req, resp, rc, out, &err);
}

static int h_reg_default_bundle_that_provides(fbc_http_req *req, fbc_http_resp *resp)
{
	fbc_db_gvk_filter g;
	REG_PRELUDE
	if (gvk_args(&g, req, resp) || resolve_rev(&rev, req, resp))
		return 0;
	int rc = fbc_db_registry_default_bundle_that_provides(&out, APP(req)->db, &rev, &g, &err);
	return reply_db(req, resp, rc, out, &err);
}

static int h_reg_list_bundles(fbc_http_req *req, fbc_http_resp *resp)
{
	REG_PRELUDE
	if (resolve_rev(&rev, req, resp))
		return 0;
	int rc = fbc_db_registry_list_bundles(&out, APP(req)->db, &rev, &err);
	return reply_db(req, resp, rc, out, &err);
}

/* ----------------------------------------------------- catalogd content */

/* Single flight for the JSON-lines stream: when a new revision appears,
 * every poller misses at once, and each would fetch the whole stream from
 * PostgreSQL and gzip it (tens of MB and a second of CPU each, times the
 * thread pool). Misses on the same digest wait for the first instead;
 * striping keeps different revisions loading in parallel. */
#define ALL_LOAD_STRIPES 16
static pthread_mutex_t all_load_lock[ALL_LOAD_STRIPES] = {
	PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER,
	PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER,
	PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER,
	PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER,
	PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER,
	PTHREAD_MUTEX_INITIALIZER,
};

/* Fetch the stream of rev, gzip it once and cache it; *out is referenced. */
static int all_load(struct fbc_http_blob **out, fbc_http_app *app, const fbc_db_rev *rev,
		    fbc_error *err)
{
	struct fbc_http_blob *b;
	fbc_buf gz;
	char *data = NULL;
	size_t len = 0;
	int rc;

	if ((rc = fbc_db_all_get(&data, &len, app->db, rev, err)) != 0)
		return rc;
	b = calloc(1, sizeof(*b));
	if (!b) {
		free(data);
		return fbc_error_set(err, FBC_ENOMEM, "all", "out of memory");
	}
	atomic_init(&b->refs, 1);
	snprintf(b->digest, sizeof(b->digest), "%s", rev->digest);
	b->data = data;
	b->len = len;
	fbc_buf_init(&gz, len + 65536);
	if (fbc_http_gzip(&gz, data, len, err) == 0)
		b->gz = fbc_buf_detach(&gz, &b->gz_len);
	fbc_buf_dispose(&gz);
	cache_put(app, b);
	*out = b;
	return 0;
}

static int h_all(fbc_http_req *req, fbc_http_resp *resp)
{
	fbc_http_app *app = APP(req);
	struct fbc_http_blob *b;
	fbc_db_rev rev;
	fbc_error err;

	if (resolve_rev(&rev, req, resp))
		return 0;
	b = cache_get(app, rev.digest);
	if (!b) {
		pthread_mutex_t *lock =
			&all_load_lock[fbc_hash_bytes(rev.digest, strlen(rev.digest)) %
				       ALL_LOAD_STRIPES];
		int rc = 0;

		fbc_error_init(&err);
		pthread_mutex_lock(lock);
		b = cache_get(app, rev.digest); /* loaded while we waited? */
		if (!b)
			rc = all_load(&b, app, &rev, &err);
		pthread_mutex_unlock(lock);
		if (rc == FBC_ENOMEM)
			return rc;
		if (rc != 0)
			return fbc_http_problem_from_error(resp, req, &err);
	}
	fbc_http_body(resp, 200, "application/jsonl", b->data, b->len);
	resp->body_gz = b->gz;
	resp->body_gz_len = b->gz_len;
	resp->release = blob_unref;
	resp->release_ctx = b;
	return 0;
}

static int h_metas(fbc_http_req *req, fbc_http_resp *resp)
{
	const char *schema = NULL, *package = NULL, *name = NULL;
	fbc_db_rev rev;
	char *data = NULL;
	size_t len = 0;
	fbc_error err;

	for (size_t i = 0; i < req->n_query; i++) {
		const char *k = req->query[i].key;
		if (!strcmp(k, "schema"))
			schema = req->query[i].value;
		else if (!strcmp(k, "package"))
			package = req->query[i].value;
		else if (!strcmp(k, "name"))
			name = req->query[i].value;
		else if (strcmp(k, "revision"))
			return fbc_http_problem(resp, req, 400, "bad_request",
						"unknown query parameter '%s' (schema, package, "
						"name and revision are accepted)",
						k);
	}
	if (!schema && !package && !name)
		return h_all(req, resp);
	if (resolve_rev(&rev, req, resp))
		return 0;
	fbc_error_init(&err);
	if (fbc_db_metas_get(&data, &len, APP(req)->db, &rev, schema, package, name, &err) != 0)
		return fbc_http_problem_from_error(resp, req, &err);
	if (fbc_arena_defer(req->arena, free, data) != 0)
		return FBC_ENOMEM;
	fbc_http_body(resp, 200, "application/jsonl", data, len);
	cache_store(req, resp);
	return 0;
}

/* ----------------------------------------------------------------- auth */

int fbc_http_api_auth(void *appv, const char *authorization, unsigned *scopes, fbc_error *err)
{
	fbc_http_app *app = appv;
	fbc_db_scope s = FBC_DB_SCOPE_NONE;
	const char *tok;
	int rc;

	*scopes = 0;
	if (strncasecmp(authorization, "Bearer ", 7) != 0)
		return 0;
	tok = authorization + 7;
	while (*tok == ' ')
		tok++;
	if (!*tok || strlen(tok) > FBC_DB_TOKEN_MAX)
		return 0;
	rc = fbc_db_token_lookup(&s, app->db, tok, err);
	if (rc == FBC_EAUTH)
		return 0;
	if (rc != 0)
		return rc;
	switch (s) {
	case FBC_DB_SCOPE_ADMIN:
		*scopes = FBC_SCOPE_ADMIN | FBC_SCOPE_WRITE | FBC_SCOPE_READ;
		break;
	case FBC_DB_SCOPE_WRITE:
		*scopes = FBC_SCOPE_WRITE | FBC_SCOPE_READ;
		break;
	case FBC_DB_SCOPE_READ:
		*scopes = FBC_SCOPE_READ;
		break;
	default:
		break;
	}
	return 0;
}

/* ---------------------------------------------------------------- routes */

#define C  "/v1/catalogs/{catalog}"
#define P  C "/packages/{package}"
#define CH P "/channels/{channel}"
#define R  C "/registry"

static const fbc_http_route routes[] = {
	{"GET", "/healthz", h_healthz, FBC_SCOPE_NONE, "healthz"},
	{"GET", "/readyz", h_readyz, FBC_SCOPE_NONE, "readyz"},
	{"GET", "/openapi.json", h_openapi, FBC_SCOPE_NONE, "getOpenAPI"},
	{"POST", "/v1/validate", h_validate, FBC_SCOPE_READ, "validateContent"},
	{"POST", "/v1/resolve", fbc_http_api_resolve, FBC_SCOPE_READ, "resolve"},
	{"GET", "/v1/catalogs", h_catalog_list, FBC_SCOPE_READ, "listCatalogs"},
	{"POST", "/v1/catalogs", h_catalog_create, FBC_SCOPE_WRITE, "createCatalog"},
	{"GET", C, h_catalog_get, FBC_SCOPE_READ, "getCatalog"},
	{"DELETE", C, h_catalog_delete, FBC_SCOPE_ADMIN, "deleteCatalog"},
	{"PUT", C "/content", h_content_put, FBC_SCOPE_WRITE, "putCatalogContent"},
	{"GET", C "/revisions", h_revision_list, FBC_SCOPE_READ, "listRevisions"},
	{"GET", C "/revisions/{revision}", h_revision_get, FBC_SCOPE_READ, "getRevision"},
	{"GET", C "/packages", h_package_list, FBC_SCOPE_READ, "listPackages"},
	{"GET", P, h_package_get, FBC_SCOPE_READ, "getPackage"},
	{"GET", P "/icon", h_package_icon, FBC_SCOPE_READ, "getPackageIcon"},
	{"GET", P "/channels", h_channel_list, FBC_SCOPE_READ, "listChannels"},
	{"GET", CH, h_channel_get, FBC_SCOPE_READ, "getChannel"},
	{"GET", CH "/graph", h_channel_graph, FBC_SCOPE_READ, "getChannelGraph"},
	{"GET", CH "/successors", h_successors, FBC_SCOPE_READ, "getSuccessors"},
	{"GET", CH "/upgrade-path", h_upgrade_path, FBC_SCOPE_READ, "getUpgradePath"},
	{"GET", P "/bundles", h_bundle_list, FBC_SCOPE_READ, "listBundles"},
	{"GET", P "/bundles/{bundle}", h_bundle_get, FBC_SCOPE_READ, "getBundle"},
	{"GET", R "/packages", h_reg_list_packages, FBC_SCOPE_READ, "registryListPackages"},
	{"GET", R "/packages/{package}", h_reg_get_package, FBC_SCOPE_READ, "registryGetPackage"},
	{"GET", R "/bundle", h_reg_get_bundle, FBC_SCOPE_READ, "registryGetBundle"},
	{"GET", R "/bundle-for-channel", h_reg_bundle_for_channel, FBC_SCOPE_READ,
	 "registryGetBundleForChannel"},
	{"GET", R "/entries-that-replace", h_reg_entries_that_replace, FBC_SCOPE_READ,
	 "registryGetChannelEntriesThatReplace"},
	{"GET", R "/bundle-that-replaces", h_reg_bundle_that_replaces, FBC_SCOPE_READ,
	 "registryGetBundleThatReplaces"},
	{"GET", R "/entries-that-provide", h_reg_entries_that_provide, FBC_SCOPE_READ,
	 "registryGetChannelEntriesThatProvide"},
	{"GET", R "/latest-entries-that-provide", h_reg_latest_entries_that_provide, FBC_SCOPE_READ,
	 "registryGetLatestChannelEntriesThatProvide"},
	{"GET", R "/default-bundle-that-provides", h_reg_default_bundle_that_provides,
	 FBC_SCOPE_READ, "registryGetDefaultBundleThatProvides"},
	{"GET", R "/bundles", h_reg_list_bundles, FBC_SCOPE_READ, "registryListBundles"},
	{"GET", "/catalogs/{catalog}/api/v1/all", h_all, FBC_SCOPE_READ, "catalogdAll"},
	{"GET", "/catalogs/{catalog}/api/v1/metas", h_metas, FBC_SCOPE_READ, "catalogdMetas"},
};

const fbc_http_route *fbc_http_api_routes(size_t *n)
{
	*n = sizeof(routes) / sizeof(routes[0]);
	return routes;
}
