/*
 * Add-mode packages of the operator layout (a ci.yaml without `fbc.enabled`: IIB adds their
 * bundles to the index one by one) that a change touches, built at head and at the merge base
 * exactly as the ingest builds them: pipeline/catalogs replays each package's bundle
 * directories in first-parent merge order with IIB's rules, into every catalog the bundle's
 * `com.redhat.openshift.versions` label admits. Packages are independent in add mode, so
 * building only the touched ones gives the same package the full build gives. Each catalog
 * of the build is then loaded and validated, so `templates` reports the adds that fail and
 * `graph` compares the channels of the built packages.
 */
#include "pipeline/catalogs/catalogs.h"
#include "pipeline/checks/internal.h"
#include "service/fbc/validate.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Loaded catalogs by content, shared by the head and merge-base builds of one run: catalogs
 * that hold the same add-mode packages with the same bundles (v4.12-v4.16 alike, v4.17 and
 * later alike, the merge base like head where the change adds nothing to them) are loaded
 * and validated once. Contents are compared byte for byte. */
typedef struct am_loaded {
	const fbc_repo_catalogs *rc; /* where it was loaded from (catalog idx), or */
	size_t idx;
	const char *fz; /* the cached content it was loaded from (fz_len bytes) */
	size_t fz_len;
	char *content; /* NULL until a comparison by content needs it */
	size_t len;
	fbc_catalog *cat;
	fbc_diags *diags;
	char load_error[512];
} am_loaded;

typedef struct am_pool {
	fbc_vec items; /* of am_loaded */
	int refs;
	chk_amc_entry *entry; /* the cache entry both builds come from, or NULL */
} am_pool;

struct chk_am_build {
	fbc_repo_catalogs *rc;	 /* NULL when the build could not run (error says why) */
	const chk_amc_build *fz; /* instead of rc: the build as the cache entry has it */
	char error[512];
	size_t n;
	chk_catalog *cats; /* one per catalog of the build; cat and diags are the pool's */
	am_pool *pool;
};

static void pool_release(am_pool *p)
{
	if (!p || --p->refs > 0)
		return;
	for (size_t i = 0; i < p->items.len; i++) {
		am_loaded *l = FBC_VEC_AT(&p->items, am_loaded, i);

		free(l->content);
		fbc_catalog_free(l->cat);
		if (l->diags) {
			fbc_diags_dispose(l->diags);
			free(l->diags);
		}
	}
	fbc_vec_dispose(&p->items);
	chk_amc_entry_free(p->entry);
	free(p);
}

void chk_am_free(chk_am_build *b)
{
	if (!b)
		return;
	free(b->cats);
	fbc_repo_catalogs_free(b->rc);
	pool_release(b->pool);
	free(b);
}

/* Load and validate content i of rc (or the cached content of l) into a new pool item. */
static int load_new(am_loaded *l, const fbc_repo_catalogs *rc, size_t i, const char *dir,
		    fbc_error *err)
{
	fbc_tree *t = NULL;
	fbc_error e2;
	int rc2;

	if (!(l->diags = calloc(1, sizeof(*l->diags))) || fbc_diags_init(l->diags, 0) != 0) {
		free(l->diags);
		l->diags = NULL;
		return fbc_error_set(err, FBC_ENOMEM, dir, "out of memory");
	}
	fbc_error_init(&e2);
	if (l->fz)
		rc2 = chk_amc_content_tree(&t, l->fz, l->fz_len, dir + strlen("catalogs/"), &e2);
	else
		rc2 = fbc_repo_catalogs_tree(&t, rc, i, &e2);
	if (rc2 == 0)
		rc2 = fbc_catalog_load_tree(&l->cat, t, NULL, l->diags, &e2);
	if (rc2 == 0)
		rc2 = fbc_validate(l->cat, NULL, l->diags, &e2);
	fbc_tree_free(t);
	if (rc2 == FBC_ENOMEM)
		return fbc_error_set(err, FBC_ENOMEM, dir, "out of memory");
	if (rc2 != 0) {
		fbc_catalog_free(l->cat);
		l->cat = NULL;
		snprintf(l->load_error, sizeof(l->load_error), "%s: %s", e2.where, e2.message);
	}
	fbc_diags_sort(l->diags);
	return 0;
}

static int content_of(char **out, size_t *len, const fbc_repo_catalogs *rc, size_t i,
		      fbc_error *err)
{
	fbc_buf content;
	int rc2;

	fbc_buf_init(&content, 0);
	if ((rc2 = fbc_repo_catalogs_content(&content, rc, i, err)) != 0) {
		fbc_buf_dispose(&content);
		return rc2;
	}
	*out = fbc_buf_detach(&content, len);
	if (!*out && !(*out = calloc(1, 1)))
		return fbc_error_set(err, FBC_ENOMEM, "", "out of memory");
	return 0;
}

/* Catalog i of b, loaded: the pool's item when the same replay gave the same adds (no
 * rendering needed), or, from another replay (two builds), when the content is byte for byte
 * the same; else a new item. */
static int load_catalog(chk_catalog *k, chk_am_build *b, size_t i, fbc_error *err)
{
	am_loaded *l = NULL;
	char *content = NULL;
	size_t len = 0;
	int rc;

	if (b->fz) {
		const chk_amc_entry *en = b->pool->entry;
		const char *fz = en->contents[b->fz->content[i]];

		/* one entry holds each distinct content once: same pointer, same content */
		for (size_t j = 0; j < b->pool->items.len && !l; j++)
			if (FBC_VEC_AT(&b->pool->items, am_loaded, j)->fz == fz)
				l = FBC_VEC_AT(&b->pool->items, am_loaded, j);
		if (!l) {
			if (!(l = fbc_vec_push(&b->pool->items)))
				return fbc_error_set(err, FBC_ENOMEM, k->dir, "out of memory");
			memset(l, 0, sizeof(*l));
			l->fz = fz;
			l->fz_len = en->content_len[b->fz->content[i]];
			if ((rc = load_new(l, NULL, 0, k->dir, err)) != 0)
				return rc;
		}
		k->cat = l->cat;
		k->diags = l->diags;
		snprintf(k->load_error, sizeof(k->load_error), "%s", l->load_error);
		k->present = k->loaded = true;
		return 0;
	}
	for (size_t j = 0; j < b->pool->items.len && !l; j++) {
		am_loaded *x = FBC_VEC_AT(&b->pool->items, am_loaded, j);

		if (x->rc && fbc_repo_catalogs_same(x->rc, x->idx, b->rc, i))
			l = x;
	}
	for (size_t j = 0; j < b->pool->items.len && !l; j++) {
		am_loaded *x = FBC_VEC_AT(&b->pool->items, am_loaded, j);

		if (!x->rc || fbc_repo_catalogs_related(x->rc, b->rc))
			continue; /* other bundles: not worth rendering to compare */
		if (!content && (rc = content_of(&content, &len, b->rc, i, err)) != 0)
			return rc;
		if (!x->content &&
		    (rc = content_of(&x->content, &x->len, x->rc, x->idx, err)) != 0) {
			free(content);
			return rc;
		}
		if (x->len == len && memcmp(x->content, content, len) == 0)
			l = x;
	}
	if (!l) {
		if (!(l = fbc_vec_push(&b->pool->items))) {
			free(content);
			return fbc_error_set(err, FBC_ENOMEM, k->dir, "out of memory");
		}
		memset(l, 0, sizeof(*l));
		l->rc = b->rc;
		l->idx = i;
		l->content = content;
		l->len = len;
		content = NULL;
		if ((rc = load_new(l, b->rc, i, k->dir, err)) != 0)
			return rc; /* the item stays, freed with the pool */
	}
	free(content);
	k->cat = l->cat;
	k->diags = l->diags;
	snprintf(k->load_error, sizeof(k->load_error), "%s", l->load_error);
	k->present = k->loaded = true;
	return 0;
}

/* Wrap a build (rc moved in, or fz from the pool's cache entry; neither, with why, when it
 * could not run); its catalogs are loaded on first use. */
static int wrap_any(chk_am_build **out, chk_ctx *c, fbc_repo_catalogs *rc, const chk_amc_build *fz,
		    am_pool *pool, const char *why, fbc_error *err)
{
	chk_am_build *b = calloc(1, sizeof(*b));
	int r = 0;

	if (!b) {
		fbc_repo_catalogs_free(rc);
		return fbc_error_set(err, FBC_ENOMEM, "", "out of memory");
	}
	b->rc = rc;
	b->fz = fz && fz->built ? fz : NULL;
	b->pool = pool;
	pool->refs++;
	snprintf(b->error, sizeof(b->error), "%s", fz ? fz->error : why ? why : "");
	b->n = rc ? fbc_repo_catalogs_count(rc) : b->fz ? b->fz->n_cats : 0;
	if (!(b->cats = calloc(b->n + 1, sizeof(*b->cats)))) {
		chk_am_free(b);
		return fbc_error_set(err, FBC_ENOMEM, "", "out of memory");
	}
	for (size_t i = 0; i < b->n && r == 0; i++) {
		chk_catalog *k = &b->cats[i];

		k->name = rc ? fbc_repo_catalogs_name(rc, i) : b->fz->names[i];
		k->dir = fbc_arena_printf(c->arena, "catalogs/%s", k->name);
		if (!k->dir)
			r = fbc_error_set(err, FBC_ENOMEM, "", "out of memory");
	}
	if (r != 0) {
		chk_am_free(b);
		return r;
	}
	*out = b;
	return 0;
}

static int wrap(chk_am_build **out, chk_ctx *c, fbc_repo_catalogs *rc, am_pool *pool,
		const char *why, fbc_error *err)
{
	return wrap_any(out, c, rc, NULL, pool, why, err);
}

static bool same_entry(chk_ctx *c, const char *path)
{
	fbc_tree_entry a = {0}, b = {0};
	fbc_error e2;
	int ra = fbc_tree_stat(c->mb_tree, &a, path, &e2);
	int rb = fbc_tree_stat(c->head_tree, &b, path, &e2);
	bool same = ra == rb && (ra != 0 || (a.kind == b.kind && strcmp(a.id, b.id) == 0));

	fbc_tree_entry_dispose(&a);
	fbc_tree_entry_dispose(&b);
	return same;
}

static bool same_names(chk_ctx *c, const char *dir)
{
	fbc_vec a, b;
	fbc_error e2;
	bool same;

	fbc_vec_init(&a, sizeof(fbc_tree_entry));
	fbc_vec_init(&b, sizeof(fbc_tree_entry));
	same = (fbc_tree_list(c->mb_tree, &a, dir, &e2) == 0) ==
	       (fbc_tree_list(c->head_tree, &b, dir, &e2) == 0);
	fbc_tree_entries_sort(&a);
	fbc_tree_entries_sort(&b);
	same = same && a.len == b.len;
	for (size_t i = 0; same && i < a.len; i++)
		same = strcmp(FBC_VEC_AT(&a, fbc_tree_entry, i)->name,
			      FBC_VEC_AT(&b, fbc_tree_entry, i)->name) == 0;
	fbc_tree_entries_dispose(&a);
	fbc_tree_entries_dispose(&b);
	return same;
}

/* Is hm the beginning of hh, step for step? */
static bool extends(const fbc_repo_history *hh, const fbc_repo_history *hm)
{
	size_t n = fbc_repo_history_count(hm);

	if (n > fbc_repo_history_count(hh))
		return false;
	for (size_t i = 0; i < n; i++) {
		const fbc_repo_history_step *x = fbc_repo_history_step_at(hh, i),
					    *y = fbc_repo_history_step_at(hm, i);

		if (strcmp(x->commit, y->commit) != 0 || x->n_paths != y->n_paths)
			return false;
		for (size_t k = 0; k < x->n_paths; k++)
			if (strcmp(x->paths[k], y->paths[k]) != 0)
				return false;
	}
	return true;
}

/* Can the merge base's build be taken from the head's replay? Only when nothing the replay
 * reads before the change differs: config.yaml, the catalog names, the packages' ci.yaml,
 * and no existing bundle directory modified or deleted (the merge base's steps are read from
 * the head tree). */
static bool one_replay(chk_ctx *c, const char *const *pkgs, size_t n)
{
	char path[1024];

	if (!same_entry(c, "config.yaml") || !same_names(c, "catalogs"))
		return false;
	for (size_t i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "operators/%s/ci.yaml", pkgs[i]);
		if (!same_entry(c, path))
			return false;
	}
	for (size_t i = 0; i < c->bundles.len; i++)
		if (FBC_VEC_AT(&c->bundles, chk_bundle, i)->state != CHK_B_ADDED)
			return false;
	return true;
}

/* The builds from the cache when it holds them for this key and every read they made gives
 * the same answer here: both wrapped (0), or 1 for a miss. */
static int cached(chk_ctx *c, am_pool *pool, const fbc_buf *key, const char *kname, fbc_error *err)
{
	chk_amc_entry *en = NULL;
	char *data;
	size_t len;
	int rc;

	if (chk_cache_bytes_get(c->cache, kname, &data, &len) != 0) {
		chk_cache_count(c->cache, false);
		return 1;
	}
	if (chk_amc_thaw(&en, data, len) != 0 || en->key_len != key->len ||
	    memcmp(en->key, key->data, key->len) != 0 || !en->b[0].built || !en->b[1].built ||
	    chk_rec_verify(en->reads[0], en->reads_len[0], c->head_tree) != 0 ||
	    chk_rec_verify(en->reads[1], en->reads_len[1], c->mb_tree) != 0) {
		chk_amc_entry_free(en);
		chk_cache_count(c->cache, false);
		return 1;
	}
	chk_cache_count(c->cache, true);
	pool->entry = en;
	rc = wrap_any(&c->am_head, c, NULL, &en->b[0], pool, "", err);
	if (rc == 0)
		rc = wrap_any(&c->am_mb, c, NULL, &en->b[1], pool, "", err);
	return rc;
}

/* Put both builds in the cache under key, with what they read (best effort), and take them
 * from the entry (*en, NULL when it could not be made): the catalogs are rendered once, for
 * the entry, and this run sees exactly what a later one will. */
static void store(chk_amc_entry **en, chk_ctx *c, const fbc_buf *key, const char *kname,
		  const chk_rec *rec_h, const chk_rec *rec_m, const fbc_repo_catalogs *rh,
		  const fbc_repo_catalogs *rm)
{
	fbc_buf rh_text, rm_text, entry;
	fbc_error e;

	*en = NULL;
	fbc_buf_init(&rh_text, 0);
	fbc_buf_init(&rm_text, 0);
	fbc_buf_init(&entry, 0);
	fbc_error_init(&e);
	if (chk_rec_text(&rh_text, rec_h) == 0 && (!rec_m || chk_rec_text(&rm_text, rec_m) == 0) &&
	    chk_amc_freeze(&entry, key->data, key->len, &rh_text, &rm_text, rh, "", rm, "", &e) ==
		    0) {
		chk_cache_bytes_put(c->cache, kname, entry.data, entry.len);
		{
			size_t len;
			char *data = fbc_buf_detach(&entry, &len);

			if (data && chk_amc_thaw(en, data, len) != 0)
				*en = NULL;
		}
	}
	fbc_buf_dispose(&rh_text);
	fbc_buf_dispose(&rm_text);
	fbc_buf_dispose(&entry);
}

/* Build the touched add-mode packages at head and at the merge base. */
static int build(chk_ctx *c, fbc_error *err)
{
	fbc_repo_history *hh = NULL, *hm = NULL;
	fbc_repo_catalogs *probe = NULL, *rh = NULL, *rm = NULL;
	fbc_repo_opts o = {0};
	const char **am = NULL;
	char why_h[512] = "", why_m[512] = "";
	fbc_error e2;
	am_pool *pool = calloc(1, sizeof(*pool));
	fbc_buf key;
	char kname[CHK_AMC_NAME_MAX];
	chk_rec *rec_h = NULL, *rec_m = NULL;
	fbc_tree *th = NULL, *tm = NULL;
	bool one, keyed = false;
	int rc;

	if (!pool)
		return fbc_error_set(err, FBC_ENOMEM, "", "out of memory");
	fbc_buf_init(&key, 0);
	fbc_vec_init(&pool->items, sizeof(am_loaded));
	pool->refs = 1; /* this function's, released at the end */

	/* which touched packages are in add mode at head: a build without history reads only
	 * their ci.yaml */
	o.packages = (const char *const *)c->packages.items;
	o.n_packages = c->packages.len;
	fbc_error_init(&e2);
	rc = fbc_repo_catalogs_build(&probe, c->head_tree, NULL, &o, &e2);
	if (rc == FBC_ENOMEM) {
		pool_release(pool);
		return fbc_error_set(err, rc, "", "out of memory");
	}
	if (rc == 0 && fbc_repo_catalogs_addmode_count(probe) == 0) {
		/* nothing in add mode: empty builds */
		fbc_repo_catalogs_free(probe);
		if ((rc = wrap(&c->am_head, c, NULL, pool, "", err)) == 0)
			rc = wrap(&c->am_mb, c, NULL, pool, "", err);
		pool_release(pool);
		return rc;
	}
	if (rc == 0) {
		size_t n = fbc_repo_catalogs_addmode_count(probe);

		if (!(am = fbc_arena_calloc(c->arena, n + 1, sizeof(*am))))
			rc = fbc_error_set(err, FBC_ENOMEM, "", "out of memory");
		for (size_t i = 0; rc == 0 && i < n; i++)
			if (!(am[i] = fbc_arena_strdup(
				      c->arena, fbc_repo_catalogs_addmode_package(probe, i, NULL))))
				rc = fbc_error_set(err, FBC_ENOMEM, "", "out of memory");
		o.packages = am;
		o.n_packages = n;
	}
	fbc_repo_catalogs_free(probe);
	if (rc == FBC_ENOMEM) {
		pool_release(pool);
		return rc;
	}
	if (rc == 0)
		rc = fbc_repo_history_from_git_packages(&hh, c->git, c->head, o.packages,
							o.n_packages, &e2);
	if (rc == 0 && (rc = fbc_repo_history_from_git_packages(&hm, c->git, c->mb, o.packages,
								o.n_packages, &e2)) != 0) {
		snprintf(why_m, sizeof(why_m), "%s: %s", e2.where, e2.message);
		rc = 0;
	}
	one = rc == 0 && hm && extends(hh, hm) && one_replay(c, o.packages, o.n_packages);
	/* a cache the caller keeps (the service's, the CLI's on disk) may hold these builds */
	if (rc == 0 && hm && !c->own_cache &&
	    chk_amc_key(&key, kname, one, one ? fbc_repo_history_count(hm) : 0, o.packages,
			o.n_packages, hh, hm) == 0) {
		if ((rc = cached(c, pool, &key, kname, err)) != 1) {
			fbc_repo_history_free(hh);
			fbc_repo_history_free(hm);
			fbc_buf_dispose(&key);
			pool_release(pool);
			return rc;
		}
		rc = 0;
		keyed = true;
		/* a miss: record what the builds read, to store them */
		if (chk_rec_open(&rec_h, &th, c->head_tree, &e2) != 0 ||
		    (!one && chk_rec_open(&rec_m, &tm, c->mb_tree, &e2) != 0))
			rc = FBC_ENOMEM;
	}
	if (rc == 0 && one) {
		rc = fbc_repo_catalogs_build_with(&rh, &rm, fbc_repo_history_count(hm),
						  th ? th : c->head_tree, hh, &o, &e2);
	} else if (rc == 0) {
		rc = fbc_repo_catalogs_build(&rh, th ? th : c->head_tree, hh, &o, &e2);
		if (rc == 0 && hm) {
			fbc_error e3;

			fbc_error_init(&e3);
			if (fbc_repo_catalogs_build(&rm, tm ? tm : c->mb_tree, hm, &o, &e3) != 0) {
				if (e3.code == FBC_ENOMEM)
					rc = FBC_ENOMEM;
				snprintf(why_m, sizeof(why_m), "%s: %s", e3.where, e3.message);
			}
		}
	}
	if (rc != 0)
		snprintf(why_h, sizeof(why_h), "%s%s%s", e2.where, *e2.where ? ": " : "",
			 e2.message);
	fbc_repo_history_free(hh);
	fbc_repo_history_free(hm);
	fbc_tree_free(th);
	fbc_tree_free(tm);
	if (rc == 0 && keyed && rm && e2.code != FBC_ENOMEM)
		store(&pool->entry, c, &key, kname, rec_h, rec_m, rh, rm);
	chk_rec_free(rec_h);
	chk_rec_free(rec_m);
	fbc_buf_dispose(&key);
	if (rc == FBC_ENOMEM || e2.code == FBC_ENOMEM) {
		fbc_repo_catalogs_free(rh);
		fbc_repo_catalogs_free(rm);
		pool_release(pool);
		return fbc_error_set(err, FBC_ENOMEM, "", "out of memory");
	}
	if (pool->entry) {
		fbc_repo_catalogs_free(rh);
		fbc_repo_catalogs_free(rm);
		rc = wrap_any(&c->am_head, c, NULL, &pool->entry->b[0], pool, "", err);
		if (rc == 0)
			rc = wrap_any(&c->am_mb, c, NULL, &pool->entry->b[1], pool, "", err);
		pool_release(pool);
		return rc;
	}
	rc = wrap(&c->am_head, c, rh, pool, why_h, err);
	if (rc == 0)
		rc = wrap(&c->am_mb, c, rm, pool, why_m[0] ? why_m : "not built", err);
	else
		fbc_repo_catalogs_free(rm);
	pool_release(pool);
	return rc;
}

int chk_am_get(const chk_am_build **out, chk_ctx *c, bool head, fbc_error *err)
{
	int rc;

	*out = NULL;
	if (c->settings.layout != FBC_LAYOUT_OPERATORS || c->packages.len == 0)
		return 0;
	if (!c->am_head && (rc = build(c, err)) != 0)
		return rc;
	*out = head ? c->am_head : c->am_mb;
	return 0;
}

static bool has_build(const chk_am_build *b)
{
	return b && (b->rc || b->fz);
}

const char *chk_am_error(const chk_am_build *b)
{
	return b && !has_build(b) && b->error[0] ? b->error : NULL;
}

size_t chk_am_catalogs(const chk_am_build *b)
{
	return has_build(b) ? b->n : 0;
}

const char *chk_am_catalog_name(const chk_am_build *b, size_t i)
{
	return has_build(b) && i < b->n ? b->cats[i].name : NULL;
}

int chk_am_catalog(const chk_catalog **out, const chk_am_build *b, const char *name, fbc_error *err)
{
	*out = NULL;
	for (size_t i = 0; has_build(b) && i < b->n; i++) {
		chk_catalog *k = &b->cats[i];
		int rc;

		if (strcmp(k->name, name) != 0)
			continue;
		if (!k->loaded && (rc = load_catalog(k, (chk_am_build *)b, i, err)) != 0)
			return rc;
		*out = k;
		break;
	}
	return 0;
}

size_t chk_am_addmode_count(const chk_am_build *b)
{
	if (!has_build(b))
		return 0;
	return b->fz ? b->fz->n_add : fbc_repo_catalogs_addmode_count(b->rc);
}

const char *chk_am_addmode_package(const chk_am_build *b, size_t i, const char **mode)
{
	fbc_addmode_mode m = FBC_ADDMODE_REPLACES;
	const char *p;

	if (b->fz) {
		if (mode)
			*mode = b->fz->add_mode[i];
		return b->fz->add_pkg[i];
	}
	p = fbc_repo_catalogs_addmode_package(b->rc, i, &m);
	if (mode)
		*mode = fbc_addmode_mode_name(m);
	return p;
}

bool chk_am_is_addmode(const chk_am_build *b, const char *pkg)
{
	size_t n = chk_am_addmode_count(b);

	for (size_t i = 0; i < n; i++)
		if (strcmp(chk_am_addmode_package(b, i, NULL), pkg) == 0)
			return true;
	return false;
}

size_t chk_am_findings(const chk_am_build *b)
{
	if (!has_build(b))
		return 0;
	return b->fz ? b->fz->n_find : fbc_repo_catalogs_findings_count(b->rc);
}

void chk_am_finding(const chk_am_build *b, size_t i, const char **path, const char **catalog,
		    const char **rule, const char **message)
{
	if (b->fz) {
		const chk_amc_finding *f = &b->fz->finds[i];

		*path = f->path;
		*catalog = f->catalog;
		*rule = f->rule;
		*message = f->message;
		return;
	}
	{
		const fbc_repo_finding *f = fbc_repo_catalogs_finding(b->rc, i);

		*path = f->path;
		*catalog = f->catalog;
		*rule = f->rule;
		*message = f->message;
	}
}

bool chk_am_has_finding(const chk_am_build *b, const char *path, const char *catalog,
			const char *rule)
{
	for (size_t i = 0; i < chk_am_findings(b); i++) {
		const char *p, *k, *r, *m;

		chk_am_finding(b, i, &p, &k, &r, &m);
		if (strcmp(p, path) == 0 && strcmp(k, catalog) == 0 && strcmp(r, rule) == 0)
			return true;
	}
	return false;
}

/* Point the findings from index `from` on at the change: the CSV of the package's first
 * bundle this change adds (the replaces line), else its ci.yaml, else its first changed file;
 * the built catalog is named in the message. */
int chk_am_relocate(chk_ctx *c, chk_out *o, size_t from, const char *catalog, const char *pkg)
{
	const char *path = NULL;
	int line = 0;

	if (from >= o->findings.len)
		return 0;
	for (size_t i = 0; i < c->bundles.len && !path; i++) {
		const chk_bundle *b = FBC_VEC_AT(&c->bundles, chk_bundle, i);

		if (b->state == CHK_B_ADDED && strcmp(b->package, pkg) == 0 &&
		    (path = chk_csv_file(c, b->dir))) {
			line = chk_line_of(c, path, 1, "replaces:");
			if (!line)
				line = chk_line_of(c, path, 1, "name:");
		}
	}
	if (!path) {
		char *ci = fbc_arena_printf(c->arena, "operators/%s/ci.yaml", pkg);

		if (!ci)
			return FBC_ENOMEM;
		if (chk_line_of(c, ci, 1, "") > 0) {
			path = ci;
			line = 1;
		}
	}
	for (size_t i = 0; i < c->files.len && !path; i++) {
		const chk_file *f = FBC_VEC_AT(&c->files, chk_file, i);

		if (f->package && strcmp(f->package, pkg) == 0)
			path = f->path;
	}
	for (size_t i = from; i < o->findings.len; i++) {
		fbc_finding *f = FBC_VEC_AT(&o->findings, fbc_finding, i);

		f->message = fbc_arena_printf(c->arena, "catalog %s (add mode): %s", catalog,
					      f->message);
		if (!f->message)
			return FBC_ENOMEM;
		f->path = path ? path : "";
		f->line = line;
	}
	return 0;
}
