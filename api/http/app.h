/*
 * The fbcd REST API: the route table (one row per operation of
 * openapi/openapi.yaml) and the application context its handlers share.
 *
 * Handlers are thin: they parse and check the request, resolve the catalog
 * revision (?revision=, default the current one), answer 304 when the
 * client's If-None-Match names that revision's digest, and serialise what
 * the database layer (db/db.h) returns. The JSON-lines stream of a revision
 * (/api/v1/all) is cached in memory by content digest, with its gzip form,
 * because revisions are immutable.
 *
 * Ownership: the app borrows db; fbc_http_app_dispose frees the cache and
 * stops the thread that refreshes expired revisions (db must outlive it).
 * Thread-safety: handlers run concurrently; the cache has its own lock.
 */
#ifndef FBC_API_HTTP_APP_H
#define FBC_API_HTTP_APP_H

#include "api/http/http.h"
#include "api/http/cache.h"
#include "api/http/catcache.h"
#include "db/db.h"

#include <pthread.h>

#define FBC_HTTP_ALL_CACHE_SLOTS 8
#define FBC_HTTP_REV_CACHE_SLOTS 64
/* Loaded catalogs kept for resolution (a loaded community catalog of 37
 * packages takes a few tens of MB). */
#define FBC_HTTP_RESOLVE_CACHE_ENTRIES 8
#define FBC_HTTP_RESOLVE_CACHE_BYTES   ((size_t)1 << 30)

struct fbc_http_blob;

/* catalog + revision number (0 = current) -> resolved revision, for a short
 * time: saves a database round trip per read. The current revision of a
 * catalog changed by another replica is seen after at most rev_ttl_ms; this
 * replica's own writes clear the table at once. */
struct fbc_http_rev_slot {
	char catalog[256];
	int64_t number;
	fbc_db_rev rev;
	int64_t expires_ms; /* 0 = empty */
	/* Past expires_ms the entry is still served (up to stale_ms) while the
	 * refresher thread looks it up again: a database that is slow or frozen
	 * delays no read that has a revision to serve. Without the thread (no
	 * database, no TTL) the request that finds it expired looks it up. */
	int64_t stale_ms;
	int64_t retry_ms; /* after a failed refresh, none before this */
	bool refreshing;  /* queued for the refresher or being looked up */
	bool queued;	  /* waiting for the refresher */
};

typedef struct fbc_http_app {
	fbc_db *db;
	const char *tmp_dir; /* where uploads are extracted */
	pthread_mutex_t lock;
	struct fbc_http_blob *all_cache[FBC_HTTP_ALL_CACHE_SLOTS];
	unsigned long tick;
	struct fbc_http_rev_slot revs[FBC_HTTP_REV_CACHE_SLOTS];
	size_t rev_next;
	unsigned rev_ttl_ms; /* 0 disables the revision table */
	/* the refresher thread (under lock): started by fbc_http_app_init when
	 * there is a database and a TTL, stopped by fbc_http_app_dispose */
	pthread_t refresher;
	pthread_cond_t refresh_cond;
	bool refresher_running, refresher_stop;
	unsigned long rev_gen;	     /* bumped by fbc_http_app_forget_revisions */
	fbc_http_cache *responses;   /* NULL disables the response cache */
	fbc_http_catcache *catalogs; /* loaded revisions for POST /v1/resolve */
	bool metrics_auth;	     /* GET /metrics needs the read scope */
	/* catalog gauges of GET /metrics, refreshed at most every few seconds */
	pthread_mutex_t gauges_lock;
	json_t *gauges;
	json_t *job_counts; /* fbcd_jobs: [{kind, state, count}], refreshed with gauges */
	int64_t gauges_at_ms;
} fbc_http_app;

/* cache_bytes 0 disables the response cache. */
int fbc_http_app_init(fbc_http_app *app, fbc_db *db, const char *tmp_dir, size_t cache_bytes,
		      unsigned rev_ttl_ms);
void fbc_http_app_dispose(fbc_http_app *app);

/* catalog + revision number (0 = current) -> revision, through the short-lived
 * table above (FBC_ENOTFOUND when either does not exist). */
int fbc_http_app_revision(fbc_db_rev *out, fbc_http_app *app, const char *catalog, int64_t number,
			  fbc_error *err);

/* POST /v1/resolve (http_resolve.c): the `fbcd resolve --input` body, with
 * catalogs inline ("fbc") or registered ({"name", "revision"?}); "path"
 * catalogs are refused. Registered revisions are loaded once into
 * app->catalogs. */
int fbc_http_api_resolve(fbc_http_req *req, fbc_http_resp *resp);

/* GET /metrics collectors of this app (database pool, catalog gauges): added
 * by fbc_http_app_metrics_start, removed by fbc_http_app_dispose. */
int fbc_http_app_metrics_start(fbc_http_app *app);

/* The route table (static, read-only). */
const fbc_http_route *fbc_http_api_routes(size_t *n);

/* fbc_http_auth_fn for the server: "Bearer <token>" looked up in the db. */
int fbc_http_api_auth(void *app, const char *authorization, unsigned *scopes, fbc_error *err);

/* The embedded OpenAPI document as JSON (generated from openapi/openapi.yaml). */
extern const char fbc_http_openapi_json[];
extern const size_t fbc_http_openapi_json_len;

/* Upgrade-graph helpers (http_graph.c), on the JSON of fbc_db_channel_graph.
 * format: "dot", "mermaid", or "svg" for the annotated DOT that graph_svg.c
 * lays out (head, deprecated, stranded entries drawn apart). */
int fbc_http_graph_format(fbc_buf *out, const json_t *graph, const char *format, fbc_error *err);
/* semantics "classic" or "v1". Items are {"name","version","via":[kinds]}. */
int fbc_http_graph_successors(json_t **out, const json_t *graph, const char *from,
			      const char *semantics, fbc_error *err);
/* The steps from `from` to `to` (NULL: the head for classic, the highest
 * version reachable for v1), both ends included. */
int fbc_http_graph_upgrade_path(json_t **out, const json_t *graph, const char *from, const char *to,
				const char *semantics, fbc_error *err);

#endif
