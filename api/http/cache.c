/* Response cache for immutable catalog revisions (LRU, bounded). */
#include "api/http/cache.h"

#include "api/http/http.h"
#include "service/base/strmap.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#define N_BUCKETS      4096
#define GZIP_MIN_BYTES 1400

struct entry {
	fbc_http_cached pub; /* first: callers get &pub */
	struct entry *next;  /* bucket chain */
	/* recency list, most recent first: eviction is O(1), not a scan of the
	 * table under the lock (keys differ by any query argument, so a client
	 * can fill the table at will) */
	struct entry *newer, *older;
	atomic_int refs; /* one for the table, one per response in flight */
	uint64_t hash;
	size_t cost;
	char *key;
};

struct fbc_http_cache {
	pthread_mutex_t lock;
	struct entry *buckets[N_BUCKETS];
	struct entry *newest, *oldest;
	size_t bytes, count, max_bytes, max_entries;
};

/* lock held */
static void lru_unlink(fbc_http_cache *c, struct entry *e)
{
	if (e->newer)
		e->newer->older = e->older;
	else
		c->newest = e->older;
	if (e->older)
		e->older->newer = e->newer;
	else
		c->oldest = e->newer;
	e->newer = e->older = NULL;
}

/* lock held */
static void lru_push(fbc_http_cache *c, struct entry *e)
{
	e->newer = NULL;
	e->older = c->newest;
	if (c->newest)
		c->newest->newer = e;
	else
		c->oldest = e;
	c->newest = e;
}

static void entry_free(struct entry *e)
{
	free((void *)e->pub.data);
	free((void *)e->pub.gz);
	free((void *)e->pub.content_type);
	free(e->key);
	free(e);
}

void fbc_http_cache_release(void *p)
{
	struct entry *e = p;
	if (e && atomic_fetch_sub(&e->refs, 1) == 1)
		entry_free(e);
}

int fbc_http_cache_create(fbc_http_cache **out, size_t max_bytes, size_t max_entries)
{
	fbc_http_cache *c = calloc(1, sizeof(*c));
	if (!c)
		return FBC_ENOMEM;
	if (pthread_mutex_init(&c->lock, NULL) != 0) {
		free(c);
		return FBC_EINTERNAL;
	}
	c->max_bytes = max_bytes;
	c->max_entries = max_entries;
	*out = c;
	return 0;
}

void fbc_http_cache_free(fbc_http_cache *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < N_BUCKETS; i++) {
		struct entry *e = c->buckets[i], *n;
		for (; e; e = n) {
			n = e->next;
			fbc_http_cache_release(e);
		}
	}
	pthread_mutex_destroy(&c->lock);
	free(c);
}

const fbc_http_cached *fbc_http_cache_get(fbc_http_cache *c, const char *key)
{
	uint64_t h = fbc_hash_bytes(key, strlen(key));
	struct entry *e;

	pthread_mutex_lock(&c->lock);
	for (e = c->buckets[h % N_BUCKETS]; e; e = e->next) {
		if (e->hash == h && strcmp(e->key, key) == 0) {
			atomic_fetch_add(&e->refs, 1);
			lru_unlink(c, e);
			lru_push(c, e);
			break;
		}
	}
	pthread_mutex_unlock(&c->lock);
	return e ? &e->pub : NULL;
}

/* Unlink the least recently used entry (lock held). */
static void evict_one(fbc_http_cache *c)
{
	struct entry *e = c->oldest, **pp;

	if (!e)
		return;
	for (pp = &c->buckets[e->hash % N_BUCKETS]; *pp != e; pp = &(*pp)->next)
		;
	*pp = e->next;
	lru_unlink(c, e);
	c->bytes -= e->cost;
	c->count--;
	fbc_http_cache_release(e);
}

int fbc_http_cache_put(fbc_http_cache *c, const char *key, const char *content_type,
		       const char *data, size_t len)
{
	struct entry *e = NULL;
	fbc_buf gz;
	fbc_error err;
	int rc = FBC_ENOMEM;

	fbc_buf_init(&gz, len + 1024);
	if (len > c->max_bytes / 8)
		return 0;
	e = calloc(1, sizeof(*e));
	if (!e)
		goto done;
	e->key = strdup(key);
	e->pub.content_type = strdup(content_type ? content_type : "application/octet-stream");
	char *d = malloc(len + 1);
	if (!e->key || !e->pub.content_type || !d) {
		free(d);
		goto done;
	}
	memcpy(d, data, len);
	d[len] = '\0';
	e->pub.data = d;
	e->pub.len = len;
	if (len >= GZIP_MIN_BYTES && fbc_http_gzip(&gz, data, len, &err) == 0 && gz.len < len)
		e->pub.gz = fbc_buf_detach(&gz, &e->pub.gz_len);
	e->hash = fbc_hash_bytes(key, strlen(key));
	e->cost = len + e->pub.gz_len + strlen(key) + sizeof(*e);
	atomic_init(&e->refs, 1);

	pthread_mutex_lock(&c->lock);
	for (struct entry *x = c->buckets[e->hash % N_BUCKETS]; x; x = x->next) {
		if (x->hash == e->hash && strcmp(x->key, key) == 0) {
			pthread_mutex_unlock(&c->lock);
			rc = 0;
			goto done; /* someone else was faster */
		}
	}
	while (c->count > 0 && (c->bytes + e->cost > c->max_bytes || c->count + 1 > c->max_entries))
		evict_one(c);
	lru_push(c, e);
	e->next = c->buckets[e->hash % N_BUCKETS];
	c->buckets[e->hash % N_BUCKETS] = e;
	c->bytes += e->cost;
	c->count++;
	pthread_mutex_unlock(&c->lock);
	e = NULL;
	rc = 0;
done:
	if (e)
		entry_free(e);
	fbc_buf_dispose(&gz);
	return rc;
}

size_t fbc_http_cache_count(fbc_http_cache *c)
{
	size_t n;
	pthread_mutex_lock(&c->lock);
	n = c->count;
	pthread_mutex_unlock(&c->lock);
	return n;
}
