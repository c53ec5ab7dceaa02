/*
 * fbc_strmap: an open-addressing hash map from NUL-terminated string keys to
 * void* values. Keys are borrowed (the caller keeps them alive, typically in
 * an arena); values are opaque. Insertion order is not kept.
 * Not thread-safe for writers; concurrent readers are fine once built.
 */
#ifndef FBC_BASE_STRMAP_H
#define FBC_BASE_STRMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct fbc_strmap_slot {
	const char *key;
	void *value;
	uint64_t hash;
} fbc_strmap_slot;

typedef struct fbc_strmap {
	fbc_strmap_slot *slots;
	size_t cap; /* power of two or 0 */
	size_t count;
} fbc_strmap;

void fbc_strmap_init(fbc_strmap *m);
void fbc_strmap_dispose(fbc_strmap *m);

/* Insert or replace. If `old` is non-NULL it receives the previous value (or NULL). */
int fbc_strmap_put(fbc_strmap *m, const char *key, void *value, void **old);
/* Insert only if absent; returns 1 if inserted, 0 if present (value untouched), <0 on error. */
int fbc_strmap_add(fbc_strmap *m, const char *key, void *value);
void *fbc_strmap_get(const fbc_strmap *m, const char *key);
bool fbc_strmap_has(const fbc_strmap *m, const char *key);

/* Iterate: `for (size_t it = 0; fbc_strmap_next(m, &it, &k, &v);)`. */
bool fbc_strmap_next(const fbc_strmap *m, size_t *it, const char **key, void **value);

uint64_t fbc_hash_bytes(const void *p, size_t n); /* FNV-1a 64 */

#endif
