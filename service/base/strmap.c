#include "service/base/strmap.h"

#include "service/base/error.h"

#include <stdlib.h>
#include <string.h>

uint64_t fbc_hash_bytes(const void *p, size_t n)
{
	const unsigned char *s = p;
	uint64_t h = 1469598103934665603ULL;
	size_t i;

	for (i = 0; i < n; i++) {
		h ^= s[i];
		h *= 1099511628211ULL;
	}
	return h;
}

/* The maps' own hash (not fbc_hash_bytes, which is also a checksum on disk
 * and must not change): eight bytes a step, then murmur3's finaliser, whose
 * low bits (the slot) depend on every byte. Iteration order follows it; no
 * caller depends on that order (they sort, or free). */
static uint64_t key_hash(const char *key, size_t n)
{
	const uint64_t k = 0xff51afd7ed558ccdULL;
	uint64_t h = 0x9e3779b97f4a7c15ULL ^ n, w;

	for (; n >= 8; n -= 8, key += 8) {
		memcpy(&w, key, 8);
		h = (h ^ w) * k;
		h ^= h >> 32;
	}
	if (n > 0) {
		w = 0;
		memcpy(&w, key, n);
		h = (h ^ w) * k;
		h ^= h >> 32;
	}
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ULL;
	h ^= h >> 33;
	return h;
}

void fbc_strmap_init(fbc_strmap *m)
{
	m->slots = NULL;
	m->cap = 0;
	m->count = 0;
}

void fbc_strmap_dispose(fbc_strmap *m)
{
	if (!m)
		return;
	free(m->slots);
	fbc_strmap_init(m);
}

static fbc_strmap_slot *find(const fbc_strmap *m, const char *key, uint64_t h)
{
	size_t mask = m->cap - 1, i = (size_t)h & mask;

	for (;;) {
		fbc_strmap_slot *s = &m->slots[i];

		if (!s->key || (s->hash == h && strcmp(s->key, key) == 0))
			return s;
		i = (i + 1) & mask;
	}
}

static int grow(fbc_strmap *m)
{
	size_t ncap = m->cap ? m->cap * 2 : 16, i;
	fbc_strmap_slot *old = m->slots;
	size_t ocap = m->cap;

	m->slots = calloc(ncap, sizeof(*m->slots));
	if (!m->slots) {
		m->slots = old;
		return FBC_ENOMEM;
	}
	m->cap = ncap;
	for (i = 0; i < ocap; i++) {
		if (old[i].key)
			*find(m, old[i].key, old[i].hash) = old[i];
	}
	free(old);
	return 0;
}

static int upsert(fbc_strmap *m, const char *key, void *value, void **old, bool replace)
{
	uint64_t h = key_hash(key, strlen(key));
	fbc_strmap_slot *s;
	int rc;

	if ((m->count + 1) * 4 > m->cap * 3 && (rc = grow(m)))
		return rc;
	s = find(m, key, h);
	if (s->key) {
		if (old)
			*old = s->value;
		if (replace)
			s->value = value;
		return 0;
	}
	if (old)
		*old = NULL;
	s->key = key;
	s->value = value;
	s->hash = h;
	m->count++;
	return 1;
}

int fbc_strmap_put(fbc_strmap *m, const char *key, void *value, void **old)
{
	int rc = upsert(m, key, value, old, true);

	return rc < 0 ? rc : 0;
}

int fbc_strmap_add(fbc_strmap *m, const char *key, void *value)
{
	return upsert(m, key, value, NULL, false);
}

void *fbc_strmap_get(const fbc_strmap *m, const char *key)
{
	fbc_strmap_slot *s;

	if (!m->cap)
		return NULL;
	s = find(m, key, key_hash(key, strlen(key)));
	return s->key ? s->value : NULL;
}

bool fbc_strmap_has(const fbc_strmap *m, const char *key)
{
	if (!m->cap)
		return false;
	return find(m, key, key_hash(key, strlen(key)))->key != NULL;
}

bool fbc_strmap_next(const fbc_strmap *m, size_t *it, const char **key, void **value)
{
	while (*it < m->cap) {
		fbc_strmap_slot *s = &m->slots[(*it)++];

		if (s->key) {
			if (key)
				*key = s->key;
			if (value)
				*value = s->value;
			return true;
		}
	}
	return false;
}
