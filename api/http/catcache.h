/*
 * fbc_http_catcache: loaded, linked catalogs (with their resolver GVK index)
 * keyed by the revision's content digest, for POST /v1/resolve. Loading a
 * stored revision (parse the canonical stream, link, index) takes hundreds
 * of milliseconds on a real catalog; a resolution over a loaded one takes
 * milliseconds, so loaded catalogs are kept. Revisions are immutable, so an
 * entry never goes stale and needs no invalidation.
 *
 * Bounded in entries and in bytes (the catalog arena's size); the least
 * recently used entries are evicted first. A miss is loaded once: callers
 * asking for a digest that is being loaded wait for that load instead of
 * starting their own (a cold cache under concurrent requests would otherwise
 * hold one copy per thread).
 *
 * Ownership: fbc_http_catcache_acquire returns a referenced entry; give it
 * back with fbc_http_catcache_release when the resolution is done. Eviction
 * only drops the table's reference, so an entry in use is never freed under
 * its user. The catalog given by the loader becomes the cache's.
 * Thread-safety: every function may be called from any thread; the entries'
 * catalogs and indexes are read-only once published.
 */
#ifndef FBC_API_HTTP_CATCACHE_H
#define FBC_API_HTTP_CATCACHE_H

#include "service/base/error.h"
#include "service/fbc/model.h"
#include "service/resolver/resolver.h"

#include <stddef.h>

typedef struct fbc_http_catcache fbc_http_catcache;

typedef struct fbc_http_catentry {
	const fbc_catalog *catalog;	/* linked */
	const fbc_resolve_index *index; /* built for catalog */
	size_t bytes;			/* the catalog arena's size */
} fbc_http_catentry;

/* Produce a new linked catalog for a digest (the cache takes it). Runs on
 * the calling thread, without the cache lock. */
typedef int (*fbc_http_catload_fn)(fbc_catalog **out, void *ctx, fbc_error *err);

typedef struct fbc_http_catcache_stats {
	size_t entries, bytes;
	unsigned long hits, misses, waits, evictions;
} fbc_http_catcache_stats;

/* max_entries 0 = 8, max_bytes 0 = 1 GiB. A catalog larger than max_bytes on
 * its own is used once and not kept. */
int fbc_http_catcache_create(fbc_http_catcache **out, size_t max_entries, size_t max_bytes);
/* The caller guarantees no entry is still acquired. Accepts NULL. */
void fbc_http_catcache_free(fbc_http_catcache *c);

/* The entry for digest, loaded with load(ctx) on a miss. A failed load is
 * reported to its caller and to everyone who waited for it, and nothing is
 * cached. digest is at most 127 bytes. */
int fbc_http_catcache_acquire(const fbc_http_catentry **out, fbc_http_catcache *c,
			      const char *digest, fbc_http_catload_fn load, void *ctx,
			      fbc_error *err);
/* Accepts NULL. */
void fbc_http_catcache_release(const fbc_http_catentry *e);

void fbc_http_catcache_stats_get(fbc_http_catcache *c, fbc_http_catcache_stats *out);

#endif
