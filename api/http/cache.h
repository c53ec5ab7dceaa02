/*
 * fbc_http_cache: finished response bodies of catalog reads, keyed by the
 * revision's content digest plus the request path and query. Revisions are
 * immutable, so an entry never goes stale; the cache is bounded in bytes
 * and entries, and the least recently used entries are evicted.
 *
 * Each entry keeps the body and, for bodies of 1400 bytes or more, its gzip
 * form computed once at insertion. A looked-up entry is referenced: pass it
 * to fbc_http_cache_release (which fits fbc_http_resp.release) when the
 * response is done; eviction never frees an entry still in use.
 * Thread-safety: all functions may be called from any thread.
 */
#ifndef FBC_API_HTTP_CACHE_H
#define FBC_API_HTTP_CACHE_H

#include <stddef.h>

typedef struct fbc_http_cache fbc_http_cache;

typedef struct fbc_http_cached {
	const char *content_type;
	const char *data;
	size_t len;
	const char *gz; /* NULL when not compressed */
	size_t gz_len;
} fbc_http_cached;

int fbc_http_cache_create(fbc_http_cache **out, size_t max_bytes, size_t max_entries);
void fbc_http_cache_free(fbc_http_cache *c);

/* A referenced entry, or NULL. */
const fbc_http_cached *fbc_http_cache_get(fbc_http_cache *c, const char *key);
void fbc_http_cache_release(void *entry);

/* Copy and insert (replacing nothing: an existing key is left as is).
 * Bodies larger than an eighth of the budget are not cached. */
int fbc_http_cache_put(fbc_http_cache *c, const char *key, const char *content_type,
		       const char *data, size_t len);

/* Counters for tests. */
size_t fbc_http_cache_count(fbc_http_cache *c);

#endif
