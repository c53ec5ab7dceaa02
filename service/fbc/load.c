/*
 * Loading a catalog from a tree (parse and decode on the loader's threads,
 * commit in order, link), and the file cache that lets later loads reuse the
 * decoded records of files they share with earlier ones.
 *
 * Records are decoded on the parser threads into per-worker arenas. Those
 * arenas belong to a reference-counted set: the catalog holds one reference,
 * and a file cache holds one for every file whose records it keeps. Records a
 * cache keeps are never linked in place: every catalog that uses them commits
 * a copy of each record (the fields linking writes, and a channel's entries),
 * so one decoded file may serve any number of catalogs at once.
 */
#include "service/fbc/imageref.h"
#include "service/fbc/internal.h"
#include "service/fbc/model.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The worker arenas of one load. */
typedef struct arena_set {
	int refs; /* atomic */
	fbc_arena *a[FBC_LOAD_MAX_WORKERS];
	size_t bytes; /* of the files decoded into it that a cache keeps */
} arena_set;

static arena_set *set_ref(arena_set *s)
{
	__atomic_add_fetch(&s->refs, 1, __ATOMIC_RELAXED);
	return s;
}

static void set_unref(void *p)
{
	arena_set *s = p;

	if (!s || __atomic_sub_fetch(&s->refs, 1, __ATOMIC_ACQ_REL) != 0)
		return;
	for (size_t i = 0; i < FBC_LOAD_MAX_WORKERS; i++)
		fbc_arena_free(s->a[i]);
	free(s);
}

/* ------------------------------------------------------------------ */

typedef struct centry {
	char *key;
	arena_set *set; /* a reference: the records live there */
	fbc_load_result *res;
	size_t n;
	size_t bytes;
	uint64_t used; /* tick of the last use, for LRU */
	bool dead;     /* chosen for eviction */
} centry;

struct fbc_catalog_cache {
	pthread_mutex_t mu;
	fbc_strmap map; /* key -> centry * (keys borrowed from the entries) */
	size_t max_bytes, bytes, entries;
	size_t hits, misses;
	uint64_t tick;
};

int fbc_catalog_cache_create(fbc_catalog_cache **out, size_t max_bytes, fbc_error *err)
{
	fbc_catalog_cache *c = calloc(1, sizeof(*c));

	*out = NULL;
	if (!c)
		return fbc_error_set(err, FBC_ENOMEM, NULL, "out of memory");
	pthread_mutex_init(&c->mu, NULL);
	fbc_strmap_init(&c->map);
	c->max_bytes = max_bytes ? max_bytes : (size_t)256 << 20;
	*out = c;
	return 0;
}

static void centry_free(centry *e)
{
	if (!e)
		return;
	for (size_t i = 0; i < e->n; i++)
		free((char *)e->res[i].message);
	free(e->res);
	set_unref(e->set);
	free(e->key);
	free(e);
}

void fbc_catalog_cache_free(fbc_catalog_cache *c)
{
	size_t it = 0;
	const char *k;
	void *v;

	if (!c)
		return;
	while (fbc_strmap_next(&c->map, &it, &k, &v))
		centry_free(v);
	fbc_strmap_dispose(&c->map);
	pthread_mutex_destroy(&c->mu);
	free(c);
}

void fbc_catalog_cache_stats(fbc_catalog_cache *c, size_t *files, size_t *bytes, size_t *hits,
			     size_t *misses)
{
	pthread_mutex_lock(&c->mu);
	if (files)
		*files = c->entries;
	if (bytes)
		*bytes = c->bytes;
	if (hits)
		*hits = c->hits;
	if (misses)
		*misses = c->misses;
	pthread_mutex_unlock(&c->mu);
}

/* Least recently used entries out until the cache is within its bound; the map is rebuilt
 * without them (fbc_strmap has no delete). Locked. */
static void evict(fbc_catalog_cache *c)
{
	size_t it, n_dead = 0, bytes = 0;
	const char *k;
	void *v;
	fbc_strmap m;

	while (c->bytes - bytes > c->max_bytes && n_dead < c->entries) {
		centry *victim = NULL;

		it = 0;
		while (fbc_strmap_next(&c->map, &it, &k, &v))
			if (!((centry *)v)->dead && (!victim || ((centry *)v)->used < victim->used))
				victim = v;
		victim->dead = true;
		bytes += victim->bytes;
		n_dead++;
	}
	if (!n_dead)
		return;
	fbc_strmap_init(&m);
	it = 0;
	while (fbc_strmap_next(&c->map, &it, &k, &v))
		if (!((centry *)v)->dead && fbc_strmap_put(&m, k, v, NULL) != 0)
			break;
	if (m.count != c->entries - n_dead) { /* out of memory: nothing evicted this time */
		fbc_strmap_dispose(&m);
		it = 0;
		while (fbc_strmap_next(&c->map, &it, &k, &v))
			((centry *)v)->dead = false;
		return;
	}
	it = 0;
	while (fbc_strmap_next(&c->map, &it, &k, &v))
		if (((centry *)v)->dead)
			centry_free(v);
	fbc_strmap_dispose(&c->map);
	c->map = m;
	c->bytes -= bytes;
	c->entries -= n_dead;
}

/* ------------------------------------------------------------------ */

/* Per parser thread: the arena its records go to and a scratch buffer for
 * canonical JSON. */
typedef struct load_ctx {
	fbc_catalog *cat;
	fbc_diags *diags;
	arena_set *set; /* this load's worker arenas */
	fbc_buf scratch[FBC_LOAD_MAX_WORKERS];
	fbc_catalog_cache *cc; /* NULL: no file cache */
	char key_suffix[160];  /* what else the decoded records depend on */
	pthread_mutex_t mu;    /* guards used */
	fbc_vec used;	       /* of arena_set *: references to other loads' sets */
} load_ctx;

static void *prepare(void *ctx, unsigned worker, const fbc_meta *meta)
{
	load_ctx *lc = ctx;

	/* chunks from 256 KiB (a small catalog's records) doubling to 8 MiB (a
	 * large one's, in huge pages); big values get their own chunk anyway */
	if (!lc->set->a[worker] &&
	    fbc_arena_create_growing(&lc->set->a[worker], 256 * 1024, (size_t)8 << 20))
		return NULL;
	return fbc_catalog_prepare_meta(lc->cat, lc->set->a[worker], &lc->scratch[worker], meta);
}

static int on_meta(void *ctx, const fbc_meta *meta, fbc_error *err)
{
	load_ctx *lc = ctx;

	return fbc_catalog_commit_meta(lc->cat, meta, lc->diags, err);
}

static char *cache_key(const load_ctx *lc, const char *id)
{
	size_t n = strlen(id) + strlen(lc->key_suffix) + 2;
	char *k = malloc(n);

	if (k)
		snprintf(k, n, "%s\n%s", id, lc->key_suffix);
	return k;
}

static bool lookup(void *ctx, const char *id, fbc_load_result **out, size_t *n)
{
	load_ctx *lc = ctx;
	char *key = cache_key(lc, id);
	fbc_load_result *res = NULL;
	centry *e;
	arena_set **slot;
	bool hit = false;

	if (!key)
		return false;
	pthread_mutex_lock(&lc->cc->mu);
	if (!(e = fbc_strmap_get(&lc->cc->map, key))) {
		lc->cc->misses++;
		goto done;
	}
	if (!(res = calloc(e->n ? e->n : 1, sizeof(*res))))
		goto done;
	for (size_t i = 0; i < e->n; i++) {
		res[i] = e->res[i];
		if (e->res[i].message && !(res[i].message = strdup(e->res[i].message))) {
			while (i-- > 0)
				free((char *)res[i].message);
			goto done;
		}
	}
	/* this catalog will point into e's arenas: it holds them */
	pthread_mutex_lock(&lc->mu);
	slot = fbc_vec_push(&lc->used);
	if (slot)
		*slot = set_ref(e->set);
	pthread_mutex_unlock(&lc->mu);
	if (!slot) {
		for (size_t i = 0; i < e->n; i++)
			free((char *)res[i].message);
		goto done;
	}
	e->used = ++lc->cc->tick;
	lc->cc->hits++;
	*out = res;
	*n = e->n;
	res = NULL;
	hit = true;
done:
	pthread_mutex_unlock(&lc->cc->mu);
	free(res);
	free(key);
	return hit;
}

static void store(void *ctx, const char *id, size_t bytes, const fbc_load_result *res, size_t n)
{
	load_ctx *lc = ctx;
	centry *e = calloc(1, sizeof(*e));
	int added;

	if (!e || !(e->key = cache_key(lc, id)) || !(e->res = calloc(n ? n : 1, sizeof(*e->res)))) {
		centry_free(e);
		return;
	}
	for (size_t i = 0; i < n; i++) {
		e->res[i] = res[i];
		e->res[i].message = NULL;
		if (res[i].message && !(e->res[i].message = strdup(res[i].message))) {
			e->n = i;
			centry_free(e);
			return;
		}
	}
	e->n = n;
	/* what the cache accounts: the file's bytes (its records take about as much) */
	e->bytes = bytes + n * 64 + 256;
	e->set = set_ref(lc->set);
	pthread_mutex_lock(&lc->cc->mu);
	/* another load may have stored it first */
	added = !fbc_strmap_get(&lc->cc->map, e->key) &&
		fbc_strmap_put(&lc->cc->map, e->key, e, NULL) == 0;
	if (added) {
		e->used = ++lc->cc->tick;
		lc->cc->bytes += e->bytes;
		lc->cc->entries++;
		evict(lc->cc);
		e = NULL;
	}
	pthread_mutex_unlock(&lc->cc->mu);
	centry_free(e);
}

int fbc_catalog_load_dir(fbc_catalog **out, const char *root, const fbc_load_limits *lim,
			 fbc_diags *diags, fbc_error *err)
{
	fbc_tree *t = NULL;
	int rc = fbc_load_open_dir(&t, root, err); /* the messages fbc_load_dir gives */

	if (rc == 0)
		rc = fbc_catalog_load_tree(out, t, lim, diags, err);
	fbc_tree_free(t);
	return rc;
}

/* A catalog loaded to be validated (validate_only) keeps neither a bundle's
 * olm.csv.metadata value that decodes (C11) nor its olm.bundle.object values
 * (of which validation only asks L11's questions; JSON data is not parsed),
 * so the loader need not build those values when they check out on the raw
 * text: decode then sees a placeholder that gives the same answers. A lean
 * load (validate_lean) derives no GVKs either: the olm.gvk and
 * olm.gvk.required values that decode are skimmed too (olm.package and
 * olm.package.required values are still read, for the derived fields). */
static const fbc_load_skim_type skim_types[] = {
	{"olm.csv.metadata", &fbc_gt_prop_csv_metadata, false, "{}"},
	{"olm.bundle.object", &fbc_gt_prop_bundle_object, true, "{\"data\":\"e30=\"}"}, /* {} */
	{"olm.gvk", &fbc_gt_prop_gvk, false, "{}"},
	{"olm.gvk.required", &fbc_gt_prop_gvk_required, false, "{}"},
};
/* A lean load keeps no image that parses: nor, when every one of a bundle's
 * related images parses (and the array is plainly a []RelatedImage), is the
 * array built (decode's images_parse then asks about the bundle's image). */
static bool image_parses(const char *image, size_t n)
{
	fbc_error e;

	(void)n;
	return fbc_imageref_parse(NULL, image, &e) == 0;
}

static const fbc_load_skim validate_skim = {"olm.bundle", skim_types, 2, NULL};
static const fbc_load_skim lean_skim = {"olm.bundle", skim_types,
					sizeof(skim_types) / sizeof(skim_types[0]), image_parses};

int fbc_catalog_load_tree_cached(fbc_catalog **out, fbc_tree *t, const fbc_load_limits *lim,
				 fbc_catalog_cache *cc, fbc_diags *diags, fbc_error *err)
{
	fbc_catalog *cat = NULL;
	fbc_load_stage stage;
	load_ctx lc;
	int rc;

	memset(&lc, 0, sizeof(lc));
	memset(&stage, 0, sizeof(stage));
	for (size_t i = 0; i < FBC_LOAD_MAX_WORKERS; i++)
		fbc_buf_init(&lc.scratch[i], 0);
	fbc_vec_init(&lc.used, sizeof(arena_set *));
	pthread_mutex_init(&lc.mu, NULL);
	if ((rc = fbc_catalog_create(&cat, lim, err)))
		goto done;
	if (!(lc.set = calloc(1, sizeof(*lc.set)))) {
		rc = fbc_error_set(err, FBC_ENOMEM, fbc_tree_label(t), "out of memory");
		goto done;
	}
	lc.set->refs = 1; /* the catalog's, handed over below */
	lc.cat = cat;
	lc.diags = diags;
	stage.prepare = prepare;
	stage.discard = NULL; /* results live in the worker arenas */
	stage.ctx = &lc;
	stage.skim = !cat->limits.validate_only	 ? NULL
		     : cat->limits.validate_lean ? &lean_skim
						 : &validate_skim;
	if (cc) {
		const fbc_load_limits *l = &cat->limits;

		/* the records depend on the content and on these */
		snprintf(lc.key_suffix, sizeof(lc.key_suffix), "%d%d %zu %zu %zu %zu %zu %zu",
			 l->validate_only ? 1 : 0, l->validate_lean ? 1 : 0, l->max_file_bytes,
			 l->max_depth, l->max_alias_nodes, l->max_string_bytes, l->max_expand_ratio,
			 l->max_expanded_bytes);
		lc.cc = cc;
		stage.lookup = lookup;
		stage.store = store;
		cat->shared_records = true; /* commit copies: records may serve other catalogs */
	}
	rc = fbc_load_tree_staged(t, lim, &stage, on_meta, &lc, diags, err);
	/* the catalog's records point into this load's arenas and those of the
	 * cached files it used: they live as long as the catalog */
	if (fbc_arena_defer(cat->arena, set_unref, lc.set) && rc == 0)
		rc = fbc_error_set(err, FBC_ENOMEM, fbc_tree_label(t),
				   "out of memory loading the catalog");
	lc.set = NULL;
	for (size_t i = 0; i < lc.used.len; i++) {
		arena_set *s = *FBC_VEC_AT(&lc.used, arena_set *, i);

		if (fbc_arena_defer(cat->arena, set_unref, s) && rc == 0)
			rc = fbc_error_set(err, FBC_ENOMEM, fbc_tree_label(t),
					   "out of memory loading the catalog");
	}
	lc.used.len = 0;
	if (rc)
		goto done;
	if ((rc = fbc_catalog_link(cat, err)))
		goto done;
	*out = cat;
	cat = NULL;
done:
	set_unref(lc.set);
	for (size_t i = 0; i < lc.used.len; i++)
		set_unref(*FBC_VEC_AT(&lc.used, arena_set *, i));
	fbc_vec_dispose(&lc.used);
	pthread_mutex_destroy(&lc.mu);
	for (size_t i = 0; i < FBC_LOAD_MAX_WORKERS; i++)
		fbc_buf_dispose(&lc.scratch[i]);
	fbc_catalog_free(cat);
	return rc;
}

int fbc_catalog_load_tree(fbc_catalog **out, fbc_tree *t, const fbc_load_limits *lim,
			  fbc_diags *diags, fbc_error *err)
{
	return fbc_catalog_load_tree_cached(out, t, lim, NULL, diags, err);
}
