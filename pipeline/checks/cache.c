/*
 * fbc_checks_cache: loaded and validated catalogs keyed by the git tree id of their
 * directory, and byte entries by key (the add-mode builds, amcache.c). A catalog whose tree is
 * unchanged (between base and head, or between runs) is parsed and validated once. Entries
 * are immutable once inserted and reference-counted; unreferenced ones are evicted least
 * recently used first past the byte bound.
 *
 * Byte entries also live on disk when the cache has a directory (disk.c): that is how one
 * `fbcd pr check` process reuses what an earlier one built.
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
	char *data; /* a byte entry ("b:" ids): data, len */
	size_t len;
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
	chk_disk *disk;		  /* NULL: memory only */
	fbc_catalog_cache *files; /* decoded catalog files by blob id (service/fbc) */
};

int fbc_checks_cache_create(fbc_checks_cache **out, size_t max_bytes, const char *dir,
			    fbc_error *err)
{
	fbc_checks_cache *cc;

	if (!(cc = calloc(1, sizeof(*cc))))
		return fbc_error_set(err, FBC_ENOMEM, "", "out of memory");
	if (dir && chk_disk_open(&cc->disk, dir, 0, err) != 0) {
		free(cc);
		return err->code;
	}
	cc->max_bytes = max_bytes ? max_bytes : (size_t)256 << 20;
	if (fbc_catalog_cache_create(&cc->files, cc->max_bytes, err) != 0) {
		chk_disk_close(cc->disk);
		free(cc);
		return err->code;
	}
	pthread_mutex_init(&cc->mu, NULL);
	*out = cc;
	return 0;
}

fbc_catalog_cache *chk_cache_files(fbc_checks_cache *cc)
{
	return cc->files;
}

void fbc_checks_cache_set_disk_max(fbc_checks_cache *cc, uint64_t bytes)
{
	if (cc->disk)
		chk_disk_set_max(cc->disk, bytes);
}

const char *fbc_checks_cache_dir(const fbc_checks_cache *cc)
{
	return cc->disk ? chk_disk_path(cc->disk) : NULL;
}

static void entry_free(chk_cache_entry *e)
{
	fbc_catalog_free(e->cat);
	fbc_diags_dispose(&e->diags);
	free(e->data);
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
	chk_disk_close(cc->disk);
	fbc_catalog_cache_free(cc->files);
	free(cc);
}

void fbc_checks_cache_stats(const fbc_checks_cache *cc, size_t *entries, size_t *bytes,
			    size_t *hits, size_t *misses)
{
	fbc_checks_cache *m = (fbc_checks_cache *)cc; /* the lock only */

	pthread_mutex_lock(&m->mu);
	*entries = cc->n;
	*bytes = cc->bytes;
	*hits = cc->hits;
	*misses = cc->misses;
	pthread_mutex_unlock(&m->mu);
}

chk_cache_entry *chk_cache_get(fbc_checks_cache *cc, const char *id)
{
	chk_cache_entry *found = NULL;

	pthread_mutex_lock(&cc->mu);
	for (chk_cache_entry *e = cc->head; e; e = e->next)
		if (!e->data && strcmp(e->id, id) == 0) {
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

/* Put e at the head, as the most recently used, and evict past the bound. */
static void insert_locked(fbc_checks_cache *cc, chk_cache_entry *e)
{
	e->used = ++cc->tick;
	e->next = cc->head;
	cc->head = e;
	cc->bytes += e->bytes;
	cc->n++;
	evict_locked(cc);
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
	insert_locked(cc, e);
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

/* The memory layer's copy of byte entry key, or NULL (the caller holds cc->mu). */
static chk_cache_entry *bytes_find_locked(fbc_checks_cache *cc, const char *key)
{
	for (chk_cache_entry *e = cc->head; e; e = e->next)
		if (e->data && strcmp(e->id + 2, key) == 0)
			return e;
	return NULL;
}

static void bytes_insert(fbc_checks_cache *cc, const char *key, const char *data, size_t len)
{
	chk_cache_entry *e = calloc(1, sizeof(*e));

	if (!e || !(e->data = malloc(len ? len : 1))) {
		free(e);
		return; /* a cache: not keeping it is fine */
	}
	memcpy(e->data, data, len);
	e->len = len;
	snprintf(e->id, sizeof(e->id), "b:%s", key);
	e->bytes = 256 + len;
	pthread_mutex_lock(&cc->mu);
	if (bytes_find_locked(cc, key)) {
		pthread_mutex_unlock(&cc->mu);
		entry_free(e);
		return;
	}
	insert_locked(cc, e);
	pthread_mutex_unlock(&cc->mu);
}

int chk_cache_bytes_get(fbc_checks_cache *cc, const char *key, char **data, size_t *len)
{
	chk_cache_entry *e;

	*data = NULL;
	*len = 0;
	if (strlen(key) + 3 > sizeof(e->id))
		return FBC_EINVAL;
	pthread_mutex_lock(&cc->mu);
	if ((e = bytes_find_locked(cc, key))) {
		if ((*data = malloc(e->len ? e->len : 1))) {
			memcpy(*data, e->data, e->len);
			*len = e->len;
		}
		e->used = ++cc->tick;
	}
	pthread_mutex_unlock(&cc->mu);
	if (e)
		return *data ? 0 : FBC_ENOMEM;
	if (cc->disk && chk_disk_get(cc->disk, key, data, len) == 0) {
		bytes_insert(cc, key, *data, *len);
		return 0;
	}
	return FBC_ENOTFOUND;
}

void chk_cache_count(fbc_checks_cache *cc, bool hit)
{
	pthread_mutex_lock(&cc->mu);
	if (hit)
		cc->hits++;
	else
		cc->misses++;
	pthread_mutex_unlock(&cc->mu);
}

void chk_cache_bytes_put(fbc_checks_cache *cc, const char *key, const char *data, size_t len)
{
	if (strlen(key) + 3 > FBC_GIT_ID_MAX)
		return;
	bytes_insert(cc, key, data, len);
	if (cc->disk)
		chk_disk_put(cc->disk, key, data, len);
}
