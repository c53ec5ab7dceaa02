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
	const fbc_repo_catalogs *rc; /* where it was loaded from (catalog idx) */
	size_t idx;
	char *content; /* NULL until a comparison by content needs it */
	size_t len;
	fbc_catalog *cat;
	fbc_diags *diags;
	char load_error[512];
} am_loaded;

typedef struct am_pool {
	fbc_vec items; /* of am_loaded */
	int refs;
} am_pool;

struct chk_am_build {
	fbc_repo_catalogs *rc; /* NULL when the build could not run (error says why) */
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

/* Load and validate content i of rc into a new pool item. */
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

	for (size_t j = 0; j < b->pool->items.len && !l; j++) {
		am_loaded *x = FBC_VEC_AT(&b->pool->items, am_loaded, j);

		if (fbc_repo_catalogs_same(x->rc, x->idx, b->rc, i))
			l = x;
	}
	for (size_t j = 0; j < b->pool->items.len && !l; j++) {
		am_loaded *x = FBC_VEC_AT(&b->pool->items, am_loaded, j);

		if (fbc_repo_catalogs_related(x->rc, b->rc))
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

/* Wrap a build (rc moved in; NULL with why when it could not run) and load its catalogs. */
static int wrap(chk_am_build **out, chk_ctx *c, fbc_repo_catalogs *rc, am_pool *pool,
		const char *why, fbc_error *err)
{
	chk_am_build *b = calloc(1, sizeof(*b));
	int r = 0;

	if (!b) {
		fbc_repo_catalogs_free(rc);
		return fbc_error_set(err, FBC_ENOMEM, "", "out of memory");
	}
	b->rc = rc;
	b->pool = pool;
	pool->refs++;
	snprintf(b->error, sizeof(b->error), "%s", why ? why : "");
	b->n = rc ? fbc_repo_catalogs_count(rc) : 0;
	if (!(b->cats = calloc(b->n + 1, sizeof(*b->cats)))) {
		chk_am_free(b);
		return fbc_error_set(err, FBC_ENOMEM, "", "out of memory");
	}
	for (size_t i = 0; i < b->n && r == 0; i++) {
		chk_catalog *k = &b->cats[i];

		k->name = fbc_repo_catalogs_name(rc, i);
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
	int rc;

	if (!pool)
		return fbc_error_set(err, FBC_ENOMEM, "", "out of memory");
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
	if (rc == 0 && hm && extends(hh, hm) && one_replay(c, o.packages, o.n_packages)) {
		rc = fbc_repo_catalogs_build_with(&rh, &rm, fbc_repo_history_count(hm),
						  c->head_tree, hh, &o, &e2);
	} else if (rc == 0) {
		rc = fbc_repo_catalogs_build(&rh, c->head_tree, hh, &o, &e2);
		if (rc == 0 && hm) {
			fbc_error e3;

			fbc_error_init(&e3);
			if (fbc_repo_catalogs_build(&rm, c->mb_tree, hm, &o, &e3) != 0) {
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
	if (rc == FBC_ENOMEM || e2.code == FBC_ENOMEM) {
		fbc_repo_catalogs_free(rh);
		fbc_repo_catalogs_free(rm);
		pool_release(pool);
		return fbc_error_set(err, FBC_ENOMEM, "", "out of memory");
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

const char *chk_am_error(const chk_am_build *b)
{
	return b && !b->rc && b->error[0] ? b->error : NULL;
}

size_t chk_am_catalogs(const chk_am_build *b)
{
	return b && b->rc ? b->n : 0;
}

const char *chk_am_catalog_name(const chk_am_build *b, size_t i)
{
	return b && b->rc && i < b->n ? b->cats[i].name : NULL;
}

int chk_am_catalog(const chk_catalog **out, const chk_am_build *b, const char *name, fbc_error *err)
{
	*out = NULL;
	for (size_t i = 0; b && b->rc && i < b->n; i++) {
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

bool chk_am_is_addmode(const chk_am_build *b, const char *pkg)
{
	size_t n = b && b->rc ? fbc_repo_catalogs_addmode_count(b->rc) : 0;

	for (size_t i = 0; i < n; i++)
		if (strcmp(fbc_repo_catalogs_addmode_package(b->rc, i, NULL), pkg) == 0)
			return true;
	return false;
}

size_t chk_am_addmode_count(const chk_am_build *b)
{
	return b && b->rc ? fbc_repo_catalogs_addmode_count(b->rc) : 0;
}

const char *chk_am_addmode_package(const chk_am_build *b, size_t i, const char **mode)
{
	fbc_addmode_mode m = FBC_ADDMODE_REPLACES;
	const char *p = fbc_repo_catalogs_addmode_package(b->rc, i, &m);

	if (mode)
		*mode = fbc_addmode_mode_name(m);
	return p;
}

size_t chk_am_findings(const chk_am_build *b)
{
	return b && b->rc ? fbc_repo_catalogs_findings_count(b->rc) : 0;
}

void chk_am_finding(const chk_am_build *b, size_t i, const char **path, const char **catalog,
		    const char **rule, const char **message)
{
	const fbc_repo_finding *f = fbc_repo_catalogs_finding(b->rc, i);

	*path = f->path;
	*catalog = f->catalog;
	*rule = f->rule;
	*message = f->message;
}

bool chk_am_has_finding(const chk_am_build *b, const char *path, const char *catalog,
			const char *rule)
{
	for (size_t i = 0; i < chk_am_findings(b); i++) {
		const fbc_repo_finding *f = fbc_repo_catalogs_finding(b->rc, i);

		if (strcmp(f->path, path) == 0 && strcmp(f->catalog, catalog) == 0 &&
		    strcmp(f->rule, rule) == 0)
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
