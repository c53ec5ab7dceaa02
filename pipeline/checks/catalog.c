/* Catalog directories read from a git tree: walk, .indexignore, load, link, validate. */
#include "pipeline/checks/internal.h"
#include "service/fbc/validate.h"
#include "service/load/load.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Load the catalog at dir of t into a linked, validated catalog: the loader's own tree walk
 * (service/load over fbc_tree), exactly as `fbcd validate` and the ingest read catalogs. */
static int load_tree(fbc_catalog **out, chk_ctx *c, fbc_tree *t, const char *dir, fbc_diags *diags,
		     fbc_error *err)
{
	fbc_tree *sub = NULL;
	fbc_catalog *cat = NULL;
	fbc_load_limits lim;
	int rc;

	if (*dir && (rc = fbc_tree_sub(&sub, t, dir, err)) != 0)
		return rc;
	/* Checks read no olm.csv.metadata value (validation, graphs, resolution), so they are
	 * decoded (C11) and not kept, as for `fbcd validate`. Files go through the decoded-file
	 * cache: a file other catalogs of this run (or, in the service, earlier runs) read is
	 * not read again. */
	fbc_load_limits_default(&lim);
	lim.validate_only = true;
	rc = fbc_catalog_load_tree_cached(&cat, sub ? sub : t, &lim, chk_cache_files(c->cache),
					  diags, err);
	if (rc == 0)
		rc = fbc_validate(cat, NULL, diags, err);
	if (rc == 0) {
		fbc_diags_sort(diags);
		*out = cat;
		cat = NULL;
	}
	fbc_catalog_free(cat);
	fbc_tree_free(sub);
	return rc;
}

static void catalog_free(chk_catalog *k, fbc_checks_cache *cc)
{
	if (!k)
		return;
	chk_cache_release(cc, k->ce);
	free(k);
}

void chk_catalogs_dispose(fbc_strmap *m, fbc_checks_cache *cc)
{
	size_t it = 0;
	const char *key;
	void *val;

	while (fbc_strmap_next(m, &it, &key, &val))
		catalog_free(val, cc);
	fbc_strmap_dispose(m);
}

int chk_catalog_get(chk_catalog **out, chk_ctx *c, bool head, const char *dir, fbc_error *err)
{
	fbc_strmap *m = head ? &c->head_cats : &c->mb_cats;
	fbc_tree *t = head ? c->head_tree : c->mb_tree;
	chk_catalog *k = fbc_strmap_get(m, dir);
	fbc_tree_entry e = {0};
	fbc_error e2;
	int rc;

	if (k) {
		*out = k->present ? k : NULL;
		return 0;
	}
	if (!(k = calloc(1, sizeof(*k))))
		return fbc_error_set(err, FBC_ENOMEM, dir, "out of memory");
	k->dir = fbc_arena_strdup(c->arena, dir);
	{
		const char *slash = strrchr(dir, '/');

		k->name = fbc_arena_strdup(c->arena,
					   *dir ? (slash ? slash + 1 : dir)
						: (c->repo_name ? c->repo_name : "catalog"));
	}
	if ((rc = fbc_strmap_put(m, k->dir, k, NULL)) != 0) {
		catalog_free(k, c->cache);
		return fbc_error_set(err, FBC_ENOMEM, dir, "out of memory");
	}
	if (*dir == '\0') {
		rc = fbc_git_object_id(k->id, NULL, c->git, head ? c->head : c->mb, "", &e2);
		k->present = rc == 0;
	} else if (fbc_tree_stat(t, &e, dir, &e2) == 0 && e.kind == FBC_TREE_DIR) {
		memcpy(k->id, e.id, sizeof(k->id));
		k->present = true;
	}
	fbc_tree_entry_dispose(&e);
	if (!k->present) {
		*out = NULL;
		return 0;
	}
	k->loaded = true;
	if (!(k->ce = chk_cache_get(c->cache, k->id))) {
		fbc_catalog *cat = NULL;
		fbc_diags diags;
		char why[512] = "";

		if (fbc_diags_init(&diags, 0) != 0)
			return fbc_error_set(err, FBC_ENOMEM, dir, "out of memory");
		rc = load_tree(&cat, c, t, dir, &diags, &e2);
		if (rc == FBC_ENOMEM) {
			fbc_diags_dispose(&diags);
			return fbc_error_set(err, rc, dir, "%s", e2.message);
		}
		if (rc)
			snprintf(why, sizeof(why), "%s: %s", e2.where, e2.message);
		if ((rc = chk_cache_put(&k->ce, c->cache, k->id, cat, &diags, why, err)) != 0)
			return rc;
	}
	k->cat = chk_cache_catalog(k->ce);
	k->diags = chk_cache_diags(k->ce);
	snprintf(k->load_error, sizeof(k->load_error), "%s", chk_cache_error(k->ce));
	*out = k;
	return 0;
}

struct dirs_ctx {
	fbc_vec *out;
	chk_ctx *c;
};

static int add_dir(const char *dir, const char *name, void *ctx, fbc_error *err)
{
	struct dirs_ctx *d = ctx;

	(void)name;
	if (chk_strvec_add(d->out, fbc_arena_strdup(d->c->arena, dir)))
		return fbc_error_set(err, FBC_ENOMEM, dir, "out of memory");
	return 0;
}

int chk_catalog_dirs(fbc_vec *out, chk_ctx *c, fbc_tree *t, fbc_error *err)
{
	struct dirs_ctx d = {out, c};
	int rc;

	if (c->settings.layout == FBC_LAYOUT_PLAIN)
		return chk_strvec_add(out, "") ? fbc_error_set(err, FBC_ENOMEM, "", "out of memory")
					       : 0;
	if ((rc = fbc_settings_catalog_dirs(&c->settings, t, add_dir, &d, err)) != 0)
		return rc;
	chk_strvec_sort_unique(out);
	return 0;
}

int chk_read_head(char **data, size_t *len, chk_ctx *c, const char *path, size_t max,
		  fbc_error *err)
{
	return fbc_git_read(data, len, c->git, c->head, path, max, err);
}

int chk_line_of(chk_ctx *c, const char *path, int from, const char *needle)
{
	char *data = NULL;
	size_t len = 0;
	fbc_error e2;
	int line = 1, found = 0;
	const char *p;

	if (!path || !*path || fbc_git_read(&data, &len, c->git, c->head, path, 256u << 20, &e2))
		return 0;
	if (from < 1)
		from = 1;
	p = data;
	while (p < data + len) {
		const char *nl = memchr(p, '\n', (size_t)(data + len - p));
		size_t ll = nl ? (size_t)(nl - p) : (size_t)(data + len - p);

		if (line >= from && memmem(p, ll, needle, strlen(needle))) {
			found = line;
			break;
		}
		line++;
		if (!nl)
			break;
		p = nl + 1;
	}
	free(data);
	return found;
}

const char *chk_csv_file(chk_ctx *c, const char *dir)
{
	char *mdir = fbc_tree_join(dir, "manifests");
	const char *found = NULL;
	fbc_vec v;
	fbc_error e2;

	fbc_vec_init(&v, sizeof(fbc_tree_entry));
	if (mdir && fbc_tree_list(c->head_tree, &v, mdir, &e2) == 0) {
		fbc_tree_entries_sort(&v);
		for (size_t i = 0; i < v.len && !found; i++) {
			fbc_tree_entry *e = FBC_VEC_AT(&v, fbc_tree_entry, i);
			char *p = fbc_tree_join(mdir, e->name);

			if (p && e->kind == FBC_TREE_FILE &&
			    chk_line_of(c, p, 1, "ClusterServiceVersion") > 0)
				found = fbc_arena_strdup(c->arena, p);
			free(p);
		}
	}
	fbc_tree_entries_dispose(&v);
	free(mdir);
	return found;
}
