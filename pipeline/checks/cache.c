/*
 * fbc_checks_cache: loaded and validated catalogs keyed by the git tree id of their
 * directory. A catalog whose tree is unchanged (between base and head, or between runs) is
 * parsed and validated once. Entries are immutable once inserted and reference-counted;
 * unreferenced ones are evicted least recently used first past the byte bound.
 */
#include "pipeline/checks/internal.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct chk_cache_entry {
	char id[FBC_GIT_ID_MAX];
	fbc_catalog *cat;
	fbc_diags diags;
	char load_error[512];
	unsigned refs;
	size_t bytes;
	uint64_t used;
	chk_cache_entry *next;
};

struct fbc_checks_cache {
	pthread_mutex_t mu;
	chk_cache_entry *head;
	size_t bytes, max_bytes, n;
	uint64_t tick;
	size_t hits, misses;
};

int fbc_checks_cache_create(fbc_checks_cache **out, size_t max_bytes, const char *dir,
			    fbc_error *err)
{
	fbc_checks_cache *cc;

	if (dir)
		return fbc_error_set(err, FBC_EINVAL, dir,
				     "an on-disk check cache is not supported yet");
	if (!(cc = calloc(1, sizeof(*cc))))
		return fbc_error_set(err, FBC_ENOMEM, "", "out of memory");
	pthread_mutex_init(&cc->mu, NULL);
	cc->max_bytes = max_bytes ? max_bytes : (size_t)256 << 20;
	*out = cc;
	return 0;
}

static void entry_free(chk_cache_entry *e)
{
	fbc_catalog_free(e->cat);
	fbc_diags_dispose(&e->diags);
	free(e);
}

void fbc_checks_cache_free(fbc_checks_cache *cc)
{
	if (!cc)
		return;
	for (chk_cache_entry *e = cc->head, *n; e; e = n) {
		n = e->next;
		entry_free(e);
	}
	pthread_mutex_destroy(&cc->mu);
	free(cc);
}

void fbc_checks_cache_stats(const fbc_checks_cache *cc, size_t *entries, size_t *bytes,
			    size_t *hits, size_t *misses)
{
	*entries = cc->n;
	*bytes = cc->bytes;
	*hits = cc->hits;
	*misses = cc->misses;
}

chk_cache_entry *chk_cache_get(fbc_checks_cache *cc, const char *id)
{
	chk_cache_entry *found = NULL;

	pthread_mutex_lock(&cc->mu);
	for (chk_cache_entry *e = cc->head; e; e = e->next)
		if (strcmp(e->id, id) == 0) {
			found = e;
			e->refs++;
			e->used = ++cc->tick;
			break;
		}
	if (found)
		cc->hits++;
	else
		cc->misses++;
	pthread_mutex_unlock(&cc->mu);
	return found;
}

/* Evict unreferenced entries, least recently used first, while over the bound. */
static void evict_locked(fbc_checks_cache *cc)
{
	while (cc->bytes > cc->max_bytes) {
		chk_cache_entry **victim = NULL;

		for (chk_cache_entry **p = &cc->head; *p; p = &(*p)->next)
			if ((*p)->refs == 0 && (!victim || (*p)->used < (*victim)->used))
				victim = p;
		if (!victim)
			return;
		{
			chk_cache_entry *e = *victim;

			*victim = e->next;
			cc->bytes -= e->bytes;
			cc->n--;
			entry_free(e);
		}
	}
}

int chk_cache_put(chk_cache_entry **out, fbc_checks_cache *cc, const char *id, fbc_catalog *cat,
		  fbc_diags *diags, const char *load_error, fbc_error *err)
{
	chk_cache_entry *e = calloc(1, sizeof(*e));

	if (!e) {
		fbc_catalog_free(cat);
		fbc_diags_dispose(diags);
		return fbc_error_set(err, FBC_ENOMEM, id, "out of memory");
	}
	snprintf(e->id, sizeof(e->id), "%s", id);
	e->cat = cat;
	e->diags = *diags;
	memset(diags, 0, sizeof(*diags));
	snprintf(e->load_error, sizeof(e->load_error), "%s", load_error ? load_error : "");
	e->refs = 1;
	e->bytes = 4096 + (cat ? fbc_arena_used(cat->arena) : 0) +
		   (e->diags.arena ? fbc_arena_used(e->diags.arena) : 0);
	pthread_mutex_lock(&cc->mu);
	e->used = ++cc->tick;
	e->next = cc->head;
	cc->head = e;
	cc->bytes += e->bytes;
	cc->n++;
	evict_locked(cc);
	pthread_mutex_unlock(&cc->mu);
	*out = e;
	return 0;
}

void chk_cache_release(fbc_checks_cache *cc, chk_cache_entry *e)
{
	if (!e)
		return;
	pthread_mutex_lock(&cc->mu);
	e->refs--;
	evict_locked(cc);
	pthread_mutex_unlock(&cc->mu);
}

fbc_catalog *chk_cache_catalog(const chk_cache_entry *e)
{
	return e->cat;
}

fbc_diags *chk_cache_diags(chk_cache_entry *e)
{
	return &e->diags;
}

const char *chk_cache_error(const chk_cache_entry *e)
{
	return e->load_error;
}
