/* catalogd-compatible content: /catalogs/{c}/api/v1/all and /metas, the JSON-lines
 * stream of a revision kept in memory with its gzip form. */
#include "api/http/handlers.h"

#include "service/base/strmap.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

int fbc_http_catalogd_all(fbc_http_req *req, fbc_http_resp *resp)
{
	fbc_http_app *app = app_of(req);
	struct fbc_http_blob *b;
	fbc_db_rev rev;
	fbc_error err;

	if (fbc_http_resolve_rev(&rev, req, resp))
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

int fbc_http_catalogd_metas(fbc_http_req *req, fbc_http_resp *resp)
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
		return fbc_http_catalogd_all(req, resp);
	if (fbc_http_resolve_rev(&rev, req, resp))
		return 0;
	fbc_error_init(&err);
	if (fbc_db_metas_get(&data, &len, app_of(req)->db, &rev, schema, package, name, &err) != 0)
		return fbc_http_problem_from_error(resp, req, &err);
	if (fbc_arena_defer(req->arena, free, data) != 0)
		return FBC_ENOMEM;
	fbc_http_body(resp, 200, "application/jsonl", data, len);
	fbc_http_cache_store(req, resp);
	return 0;
}

void fbc_http_catalogd_dispose(fbc_http_app *app)
{
	for (size_t i = 0; i < FBC_HTTP_ALL_CACHE_SLOTS; i++) {
		blob_unref(app->all_cache[i]);
		app->all_cache[i] = NULL;
	}
}
