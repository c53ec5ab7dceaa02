/* catalogd-compatible content: /catalogs/{c}/api/v1/all and /metas, the JSON-lines
 * stream of a revision kept in memory with its gzip form. */
#include "api/http/handlers.h"

#include "service/base/strmap.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* The stream and its gzip form live in sealed memory files (memfd), mapped
 * read-only: the server sends them with sendfile (see queue in server.c),
 * and the mapping is the in-memory copy, so nothing is held twice. When a
 * memory file cannot be made they stay on the heap (fd -1). */
struct fbc_http_blob {
	atomic_int refs;
	char digest[80];
	char *data;
	size_t len;
	int fd;
	char *gz;
	size_t gz_len;
	int gz_fd;
	unsigned long used;
};

/* Move *data (heap, len bytes) into a sealed memory file mapped read-only:
 * *data becomes the mapping and the file is returned, or -1 (and *data
 * left as it was). */
static int to_memfd(char **data, size_t len)
{
	int fd;
	void *map;
	size_t off = 0;

	if (!*data || len == 0)
		return -1;
	fd = memfd_create("fbcd-all", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0)
		return -1;
	while (off < len) {
		ssize_t n = write(fd, *data + off, len - off);
		if (n <= 0)
			goto fail;
		off += (size_t)n;
	}
	if (fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) != 0)
		goto fail;
	map = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED)
		goto fail;
	free(*data);
	*data = map;
	return fd;
fail:
	close(fd);
	return -1;
}

static void blob_part_free(char *data, size_t len, int fd)
{
	if (fd >= 0) {
		munmap(data, len);
		close(fd);
	} else {
		free(data);
	}
}

static void blob_unref(void *p)
{
	struct fbc_http_blob *b = p;

	if (b && atomic_fetch_sub(&b->refs, 1) == 1) {
		blob_part_free(b->data, b->len, b->fd);
		blob_part_free(b->gz, b->gz_len, b->gz_fd);
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
	b->gz_fd = -1;
	fbc_buf_init(&gz, len + 65536);
	if (fbc_http_gzip(&gz, data, len, err) == 0)
		b->gz = fbc_buf_detach(&gz, &b->gz_len);
	fbc_buf_dispose(&gz);
	b->fd = to_memfd(&b->data, b->len);
	if (b->gz)
		b->gz_fd = to_memfd(&b->gz, b->gz_len);
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
	if (b->fd >= 0) {
		resp->file_body = b->data;
		resp->body_file = b->fd;
	}
	if (b->gz_fd >= 0) {
		resp->file_body_gz = b->gz;
		resp->body_gz_file = b->gz_fd;
	}
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
