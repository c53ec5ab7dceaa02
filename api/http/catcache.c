/* Loaded catalogs for resolution, by revision digest (LRU, single-flight loads). */
#include "api/http/catcache.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_ENTRIES 8
#define DEFAULT_BYTES	((size_t)1 << 30)
#define DIGEST_MAX	128

enum { LOADING, READY, FAILED };

struct entry {
	fbc_http_catentry pub; /* first: callers get &pub */
	struct entry *prev, *next;
	atomic_int refs; /* one for the table while listed, one per user or waiter */
	int state;	 /* under the cache lock */
	bool listed;
	unsigned long used;
	fbc_catalog *cat;
	fbc_resolve_index *ix;
	fbc_error err; /* the load's failure, for the waiters */
	char digest[DIGEST_MAX];
};

struct fbc_http_catcache {
	pthread_mutex_t lock;
	pthread_cond_t loaded;
	struct entry *head; /* listed entries, any order (few of them) */
	size_t count, bytes, max_entries, max_bytes;
	unsigned long tick, hits, misses, waits, evictions;
};

static void entry_unref(struct entry *e)
{
	if (e && atomic_fetch_sub(&e->refs, 1) == 1) {
		fbc_resolve_index_free(e->ix);
		fbc_catalog_free(e->cat);
		free(e);
	}
}

void fbc_http_catcache_release(const fbc_http_catentry *pub)
{
	entry_unref((struct entry *)(uintptr_t)pub);
}

int fbc_http_catcache_create(fbc_http_catcache **out, size_t max_entries, size_t max_bytes)
{
	fbc_http_catcache *c = calloc(1, sizeof(*c));

	if (!c)
		return FBC_ENOMEM;
	if (pthread_mutex_init(&c->lock, NULL) != 0) {
		free(c);
		return FBC_EINTERNAL;
	}
	if (pthread_cond_init(&c->loaded, NULL) != 0) {
		pthread_mutex_destroy(&c->lock);
		free(c);
		return FBC_EINTERNAL;
	}
	c->max_entries = max_entries ? max_entries : DEFAULT_ENTRIES;
	c->max_bytes = max_bytes ? max_bytes : DEFAULT_BYTES;
	*out = c;
	return 0;
}

/* Under the lock: take e out of the table (its table reference is returned
 * to the caller, who drops it after unlocking). */
static void unlist(fbc_http_catcache *c, struct entry *e)
{
	if (e->prev)
		e->prev->next = e->next;
	else
		c->head = e->next;
	if (e->next)
		e->next->prev = e->prev;
	e->prev = e->next = NULL;
	e->listed = false;
	c->count--;
	if (e->state == READY)
		c->bytes -= e->pub.bytes;
}

void fbc_http_catcache_free(fbc_http_catcache *c)
{
	if (!c)
		return;
	while (c->head) {
		struct entry *e = c->head;
		unlist(c, e);
		entry_unref(e);
	}
	pthread_cond_destroy(&c->loaded);
	pthread_mutex_destroy(&c->lock);
	free(c);
}

/* Under the lock: the least recently used ready entry other than keep. */
static struct entry *lru_victim(fbc_http_catcache *c, const struct entry *keep)
{
	struct entry *v = NULL;

	for (struct entry *e = c->head; e; e = e->next)
		if (e != keep && e->state == READY && (!v || e->used < v->used))
			v = e;
	return v;
}

static int load_entry(struct entry *e, fbc_http_catload_fn load, void *ctx, fbc_error *err)
{
	int rc = load(&e->cat, ctx, err);

	if (rc != 0)
		return rc < 0 ? rc : FBC_EINTERNAL;
	if (!e->cat || !e->cat->linked)
		return fbc_error_set(err, FBC_EINTERNAL, e->digest,
				     "the catalog loader returned no linked catalog");
	rc = fbc_resolve_index_build(&e->ix, e->cat, err);
	if (rc != 0)
		return rc;
	e->pub.catalog = e->cat;
	e->pub.index = e->ix;
	e->pub.bytes = fbc_arena_used(e->cat->arena);
	return 0;
}

int fbc_http_catcache_acquire(const fbc_http_catentry **out, fbc_http_catcache *c,
			      const char *digest, fbc_http_catload_fn load, void *ctx,
			      fbc_error *err)
{
	struct entry *e, *drop[DEFAULT_ENTRIES * 8];
	size_t n_drop = 0;
	int rc;

	if (strlen(digest) >= DIGEST_MAX)
		return fbc_error_set(err, FBC_EINVAL, "digest", "digest longer than %d bytes",
				     DIGEST_MAX - 1);
	pthread_mutex_lock(&c->lock);
	for (e = c->head; e; e = e->next)
		if (strcmp(e->digest, digest) == 0)
			break;
	if (e) {
		atomic_fetch_add(&e->refs, 1);
		if (e->state == LOADING) {
			c->waits++;
			while (e->state == LOADING)
				pthread_cond_wait(&c->loaded, &c->lock);
		} else {
			c->hits++;
		}
		if (e->state == READY) {
			e->used = ++c->tick;
			pthread_mutex_unlock(&c->lock);
			*out = &e->pub;
			return 0;
		}
		/* the load we waited for failed: report its error */
		pthread_mutex_unlock(&c->lock);
		if (err)
			*err = e->err;
		rc = e->err.code ? e->err.code : FBC_EINTERNAL;
		entry_unref(e);
		return rc;
	}
	c->misses++;
	e = calloc(1, sizeof(*e));
	if (!e) {
		pthread_mutex_unlock(&c->lock);
		return fbc_error_set(err, FBC_ENOMEM, NULL, "out of memory");
	}
	snprintf(e->digest, sizeof(e->digest), "%s", digest);
	atomic_init(&e->refs, 2); /* the table and this caller */
	e->state = LOADING;
	e->listed = true;
	e->next = c->head;
	if (c->head)
		c->head->prev = e;
	c->head = e;
	c->count++;
	pthread_mutex_unlock(&c->lock);

	fbc_error_init(&e->err);
	rc = load_entry(e, load, ctx, &e->err);

	pthread_mutex_lock(&c->lock);
	if (rc != 0) {
		if (!e->err.code)
			e->err.code = rc;
		e->state = FAILED;
		unlist(c, e);
		drop[n_drop++] = e; /* the table's reference */
	} else {
		e->state = READY;
		e->used = ++c->tick;
		c->bytes += e->pub.bytes;
		/* evict down to the bounds; entries in use stay alive through their
		 * users' references */
		while ((c->count > c->max_entries || c->bytes > c->max_bytes) &&
		       n_drop < sizeof(drop) / sizeof(drop[0])) {
			struct entry *v = lru_victim(c, e);
			if (!v) {
				if (c->bytes > c->max_bytes) {
					/* e alone is over the budget: use it once */
					unlist(c, e);
					drop[n_drop++] = e;
				}
				break;
			}
			unlist(c, v);
			c->evictions++;
			drop[n_drop++] = v;
		}
	}
	pthread_cond_broadcast(&c->loaded);
	pthread_mutex_unlock(&c->lock);
	for (size_t i = 0; i < n_drop; i++)
		entry_unref(drop[i]);
	if (rc != 0) {
		if (err)
			*err = e->err;
		entry_unref(e);
		return rc;
	}
	*out = &e->pub;
	return 0;
}

void fbc_http_catcache_stats_get(fbc_http_catcache *c, fbc_http_catcache_stats *out)
{
	pthread_mutex_lock(&c->lock);
	out->entries = c->count;
	out->bytes = c->bytes;
	out->hits = c->hits;
	out->misses = c->misses;
	out->waits = c->waits;
	out->evictions = c->evictions;
	pthread_mutex_unlock(&c->lock);
}
