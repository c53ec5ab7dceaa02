/* The application context handlers share: caches, revision resolution, small helpers. */
#include "api/http/handlers.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

static void *rev_refresher(void *arg);

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
	if (pthread_mutex_init(&app->gauges_lock, NULL) != 0) {
		pthread_mutex_destroy(&app->lock);
		fbc_http_catcache_free(app->catalogs);
		fbc_http_cache_free(app->responses);
		return FBC_EINTERNAL;
	}
	if (pthread_cond_init(&app->refresh_cond, NULL) != 0) {
		pthread_mutex_destroy(&app->gauges_lock);
		pthread_mutex_destroy(&app->lock);
		fbc_http_catcache_free(app->catalogs);
		fbc_http_cache_free(app->responses);
		return FBC_EINTERNAL;
	}
	/* without the thread, expired revisions are looked up by a request */
	if (db && rev_ttl_ms)
		app->refresher_running =
			pthread_create(&app->refresher, NULL, rev_refresher, app) == 0;
	return 0;
}

void fbc_http_app_dispose(fbc_http_app *app)
{
	if (!app)
		return;
	if (app->refresher_running) {
		pthread_mutex_lock(&app->lock);
		app->refresher_stop = true;
		pthread_cond_signal(&app->refresh_cond);
		pthread_mutex_unlock(&app->lock);
		pthread_join(app->refresher, NULL);
		app->refresher_running = false;
	}
	pthread_cond_destroy(&app->refresh_cond);
	fbc_http_app_metrics_stop(app);
	fbc_http_catalogd_dispose(app);
	fbc_http_cache_free(app->responses);
	fbc_http_catcache_free(app->catalogs);
	pthread_mutex_destroy(&app->gauges_lock);
	pthread_mutex_destroy(&app->lock);
}

void fbc_http_free_json(void *p)
{
	json_decref(p);
}

/* Answer with the db result: 200 + JSON, or a problem from err. */
int fbc_http_reply_db(fbc_http_req *req, fbc_http_resp *resp, int rc, json_t *json,
		      const fbc_error *err)
{
	if (rc != 0)
		return fbc_http_problem_from_error(resp, req, err);
	rc = fbc_http_json(resp, req, 200, json);
	if (rc == 0)
		fbc_http_cache_store(req, resp);
	return rc;
}

int fbc_http_parse_int64(int64_t *out, const char *s, int64_t min)
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

int fbc_http_page_db(fbc_db_page *page, fbc_http_req *req, fbc_http_resp *resp)
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

/* How long past its TTL a resolved revision may still be served while it
 * is looked up again, and how long after a failed lookup the next one. */
#define REV_STALE_MS 30000
#define REV_RETRY_MS 250

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
		if (!s->expires_ms || s->number != number || strcmp(s->catalog, catalog) != 0)
			continue;
		if (s->expires_ms > now || (s->refreshing && s->stale_ms > now)) {
			*out = s->rev;
			hit = true;
		} else if (s->stale_ms > now && app->refresher_running) {
			*out = s->rev;
			hit = true;
			if (s->retry_ms <= now) {
				s->refreshing = s->queued = true;
				pthread_cond_signal(&app->refresh_cond);
			}
		} else if (s->stale_ms > now) {
			s->refreshing = true; /* this caller looks it up again */
		}
		break;
	}
	pthread_mutex_unlock(&app->lock);
	return hit;
}

/* The lookup of a stale entry failed: let the next request try again. */
static void rev_refresh_failed(fbc_http_app *app, const char *catalog, int64_t number)
{
	pthread_mutex_lock(&app->lock);
	for (size_t i = 0; i < FBC_HTTP_REV_CACHE_SLOTS; i++) {
		struct fbc_http_rev_slot *s = &app->revs[i];
		if (s->expires_ms && s->number == number && !strcmp(s->catalog, catalog))
			s->refreshing = false;
	}
	pthread_mutex_unlock(&app->lock);
}

/* Under app->lock. */
static void rev_store_locked(fbc_http_app *app, const char *catalog, int64_t number,
			     const fbc_db_rev *rev)
{
	struct fbc_http_rev_slot *s = NULL;

	if (!app->rev_ttl_ms || strlen(catalog) >= sizeof(app->revs[0].catalog))
		return;
	for (size_t i = 0; i < FBC_HTTP_REV_CACHE_SLOTS && !s; i++)
		if (app->revs[i].expires_ms && app->revs[i].number == number &&
		    !strcmp(app->revs[i].catalog, catalog))
			s = &app->revs[i]; /* refreshed in place: one slot per key */
	if (!s)
		s = &app->revs[app->rev_next++ % FBC_HTTP_REV_CACHE_SLOTS];
	snprintf(s->catalog, sizeof(s->catalog), "%s", catalog);
	s->number = number;
	s->rev = *rev;
	s->expires_ms = now_ms() + app->rev_ttl_ms;
	s->stale_ms = s->expires_ms + REV_STALE_MS;
	s->retry_ms = 0;
	s->refreshing = s->queued = false;
}

static void rev_store(fbc_http_app *app, const char *catalog, int64_t number, const fbc_db_rev *rev)
{
	pthread_mutex_lock(&app->lock);
	rev_store_locked(app, catalog, number, rev);
	pthread_mutex_unlock(&app->lock);
}

/* This replica changed a catalog: forget every resolved revision (and what
 * a refresh in flight read before the change). */
void fbc_http_app_forget_revisions(fbc_http_app *app)
{
	pthread_mutex_lock(&app->lock);
	for (size_t i = 0; i < FBC_HTTP_REV_CACHE_SLOTS; i++)
		app->revs[i].expires_ms = 0;
	app->rev_gen++;
	pthread_mutex_unlock(&app->lock);
}

/* The refresher thread: looks up again, one at a time, the revisions that
 * requests found expired and went on serving. A failure leaves the entry
 * as it was, served until stale_ms, and lets a request queue it again
 * REV_RETRY_MS later; a catalog or revision that no longer exists is
 * forgotten, so that the next request answers 404 from the database. */
static void *rev_refresher(void *arg)
{
	fbc_http_app *app = arg;

	pthread_mutex_lock(&app->lock);
	while (!app->refresher_stop) {
		struct fbc_http_rev_slot *s = NULL;
		char catalog[sizeof(app->revs[0].catalog)];
		int64_t number;
		unsigned long gen;
		fbc_db_rev rev;
		fbc_error err;
		int rc;

		for (size_t i = 0; i < FBC_HTTP_REV_CACHE_SLOTS && !s; i++)
			if (app->revs[i].queued)
				s = &app->revs[i];
		if (!s) {
			pthread_cond_wait(&app->refresh_cond, &app->lock);
			continue;
		}
		s->queued = false;
		memcpy(catalog, s->catalog, sizeof(catalog));
		number = s->number;
		gen = app->rev_gen;
		pthread_mutex_unlock(&app->lock);
		fbc_error_init(&err);
		rc = fbc_db_revision_resolve(&rev, app->db, catalog, number, &err);
		pthread_mutex_lock(&app->lock);
		if (rc == 0 && gen == app->rev_gen) {
			rev_store_locked(app, catalog, number, &rev);
			continue;
		}
		for (size_t i = 0; i < FBC_HTTP_REV_CACHE_SLOTS; i++) {
			s = &app->revs[i];
			if (!s->expires_ms || s->number != number || strcmp(s->catalog, catalog))
				continue;
			if (rc == FBC_ENOTFOUND)
				s->expires_ms = 0;
			s->refreshing = s->queued = false;
			s->retry_ms = rc != 0 ? now_ms() + REV_RETRY_MS : 0;
		}
	}
	pthread_mutex_unlock(&app->lock);
	return NULL;
}

int fbc_http_app_revision(fbc_db_rev *out, fbc_http_app *app, const char *catalog, int64_t number,
			  fbc_error *err)
{
	fbc_db_rev rev;
	int rc;

	if (rev_lookup(out, app, catalog, number))
		return 0;
	rc = fbc_db_revision_resolve(&rev, app->db, catalog, number, err);
	if (rc != 0) {
		rev_refresh_failed(app, catalog, number);
		return rc;
	}
	rev_store(app, catalog, number, &rev);
	*out = rev;
	return 0;
}

/* Remember a successful revision-scoped answer (req->ctx holds its key). */
void fbc_http_cache_store(fbc_http_req *req, fbc_http_resp *resp)
{
	fbc_http_app *app = app_of(req);

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
int fbc_http_resolve_rev(fbc_db_rev *rev, fbc_http_req *req, fbc_http_resp *resp)
{
	const char *catalog = fbc_http_param(req, "catalog");
	const char *rs = fbc_http_param(req, "revision");
	int64_t number = 0;
	fbc_error err;

	if (!rs)
		rs = fbc_http_query(req, "revision");
	if (rs && fbc_http_parse_int64(&number, rs, 1) != 0) {
		fbc_http_problem(resp, req, 400, "bad_revision",
				 "revision: '%s' is not a revision number (1, 2, ...)", rs);
		return 1;
	}
	fbc_error_init(&err);
	if (!rev_lookup(rev, app_of(req), catalog, number)) {
		if (fbc_db_revision_resolve(rev, app_of(req)->db, catalog, number, &err) != 0) {
			if (err.code == FBC_ENOTFOUND)
				fbc_http_problem(resp, req, 404, "not_found", "%s", err.message);
			else
				fbc_http_problem_from_error(resp, req, &err);
			return 1;
		}
		rev_store(app_of(req), catalog, number, rev);
	}
	resp->etag = fbc_arena_printf(req->arena, "\"%s\"", rev->digest);
	if (!resp->etag)
		return fbc_http_problem(resp, req, 500, "internal", "out of memory"), 1;
	if (fbc_http_etag_matches(req->if_none_match, resp->etag)) {
		fbc_http_body(resp, 304, NULL, NULL, 0);
		return 1;
	}
	if (app_of(req)->responses) {
		char *key = cache_key(req, rev->digest);
		const fbc_http_cached *hit =
			key ? fbc_http_cache_get(app_of(req)->responses, key) : NULL;
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

/* "group/version/kind" or "kind"; empty parts mean "any". */
int fbc_http_parse_gvk(fbc_db_gvk_filter *f, fbc_http_req *req, const char *s)
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
