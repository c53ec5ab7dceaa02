/* Catalog directories read from a git tree: walk, .indexignore, load, link, validate. */
#include "pipeline/checks/internal.h"
#include "service/fbc/validate.h"
#include "service/load/ignore.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct walk_file {
	char *rel;    /* relative to the catalog root */
	char *target; /* what to read (the link's target), relative to the tree */
} walk_file;

typedef struct walk {
	fbc_tree *t;
	const char *root; /* catalog dir in t ("" = root) */
	fbc_ignore *ig;
	fbc_vec files; /* of walk_file */
	fbc_diags *diags;
	const fbc_load_limits *lim;
	size_t seen;
} walk;

/* A finding "<verb> <rel>: <detail>", as the loader words them. */
static int walk_finding(walk *w, const char *rel, const char *code, const char *verb,
			const char *detail)
{
	fbc_loc loc = {rel, 0};

	return fbc_diags_add(w->diags, code, &loc, NULL, NULL, NULL, "%s %s: %s", verb, rel,
			     detail);
}

static int add_ignore(walk *w, const char *dir_rel, const char *tpath, fbc_error *err)
{
	fbc_tree_blob b = {0};
	fbc_error e2;
	int rc;

	if (fbc_tree_read(w->t, &b, tpath, w->lim->max_file_bytes, &e2) != 0)
		return 0; /* an unreadable .indexignore adds no patterns, as the loader */
	rc = fbc_ignore_add_file(w->ig, dir_rel, b.data ? b.data : "", b.len, err);
	fbc_tree_blob_release(w->t, &b);
	return rc;
}

static int walk_dir(walk *w, const char *rel, int depth, fbc_error *err)
{
	fbc_vec v;
	char *tdir = NULL;
	int rc = 0;

	fbc_vec_init(&v, sizeof(fbc_tree_entry));
	if (depth > 64)
		return walk_finding(w, rel, "LIMIT", "open", "directories nested too deep");
	tdir = *w->root ? (*rel ? fbc_tree_join(w->root, rel) : strdup(w->root)) : strdup(rel);
	if (!tdir)
		return fbc_error_set(err, FBC_ENOMEM, rel, "out of memory");
	if (fbc_tree_list(w->t, &v, tdir, err) != 0) {
		rc = walk_finding(w, *rel ? rel : ".", "L1", "open", err->message);
		goto done;
	}
	fbc_tree_entries_sort(&v);
	for (size_t i = 0; i < v.len && rc == 0; i++) {
		fbc_tree_entry *e = FBC_VEC_AT(&v, fbc_tree_entry, i);
		char *crel = fbc_tree_join(rel, e->name), *tpath = fbc_tree_join(tdir, e->name);
		fbc_tree_entry tgt = {0};
		walk_file *f;

		if (!crel || !tpath) {
			rc = fbc_error_set(err, FBC_ENOMEM, rel, "out of memory");
		} else if (++w->seen > w->lim->max_files * 4 + 1024) {
			rc = walk_finding(w, crel, "LIMIT", "open",
					  "the tree has too many entries");
			free(crel);
			free(tpath);
			break;
		} else if (e->kind == FBC_TREE_DIR) {
			rc = walk_dir(w, crel, depth + 1, err);
		} else if (e->kind == FBC_TREE_LINK) {
			fbc_error e2;
			int frc = fbc_tree_follow(w->t, &tgt, tpath, &e2);
			const char *inside = NULL;

			if (frc == 0) {
				size_t rl = strlen(w->root);

				inside =
					!*w->root ? tgt.name
					: strncmp(tgt.name, w->root, rl) == 0 && tgt.name[rl] == '/'
						? tgt.name + rl + 1
						: NULL;
			}
			if (frc != 0)
				rc = walk_finding(w, crel, "L1", "open", e2.message);
			else if (!inside)
				rc = walk_finding(w, crel, "L1", "open",
						  "symlink resolves outside the catalog root");
			else if (tgt.kind == FBC_TREE_DIR)
				rc = walk_finding(w, crel, "L1", "read", "is a directory");
			else if (tgt.kind != FBC_TREE_FILE)
				rc = walk_finding(w, crel, "L1", "read", "not a regular file");
			else if (strcmp(e->name, ".indexignore") == 0)
				rc = add_ignore(w, rel, tgt.name, err);
			else if (!(f = fbc_vec_push(&w->files)) || !(f->rel = strdup(crel)) ||
				 !(f->target = strdup(tgt.name)))
				rc = fbc_error_set(err, FBC_ENOMEM, rel, "out of memory");
			fbc_tree_entry_dispose(&tgt);
		} else if (strcmp(e->name, ".indexignore") == 0) {
			rc = add_ignore(w, rel, tpath, err);
		} else if (e->kind != FBC_TREE_FILE) {
			rc = walk_finding(w, crel, "L1", "read", "not a regular file");
		} else if (!(f = fbc_vec_push(&w->files)) || !(f->rel = strdup(crel)) ||
			   !(f->target = strdup(tpath))) {
			rc = fbc_error_set(err, FBC_ENOMEM, rel, "out of memory");
		}
		free(crel);
		free(tpath);
	}
done:
	fbc_tree_entries_dispose(&v);
	free(tdir);
	return rc;
}

static int on_meta(void *ctx, const fbc_meta *meta, fbc_error *err)
{
	void **pair = ctx;

	return fbc_catalog_add_meta(pair[0], meta, pair[1], err);
}

/* Load the catalog at dir of t into a linked, validated catalog. */
static int load_tree(fbc_catalog **out, fbc_tree *t, const char *dir, fbc_diags *diags,
		     fbc_error *err)
{
	walk w = {0};
	fbc_catalog *cat = NULL;
	fbc_load_limits lim;
	size_t total = 0;
	int rc;

	fbc_load_limits_default(&lim);
	w.t = t;
	w.root = dir;
	w.diags = diags;
	w.lim = &lim;
	fbc_vec_init(&w.files, sizeof(walk_file));
	if ((rc = fbc_ignore_create(&w.ig, err)) != 0 ||
	    (rc = fbc_catalog_create(&cat, &lim, err)) != 0 || (rc = walk_dir(&w, "", 0, err)) != 0)
		goto done;
	for (size_t i = 0; i < w.files.len && rc == 0; i++) {
		walk_file *f = FBC_VEC_AT(&w.files, walk_file, i);
		fbc_tree_blob b = {0};
		fbc_error e2;
		void *pair[2] = {cat, diags};
		fbc_loc loc = {f->rel, 0};
		int r;

		if (fbc_ignore_match(w.ig, f->rel))
			continue;
		if (i >= lim.max_files) {
			rc = fbc_diags_add(diags, "LIMIT", &loc, NULL, NULL, NULL,
					   "more than %zu files", lim.max_files);
			break;
		}
		r = fbc_tree_read(t, &b, f->target, lim.max_file_bytes, &e2);
		if (r == FBC_ELIMIT) {
			rc = fbc_diags_add(diags, "LIMIT", &loc, NULL, NULL, NULL, "%s: %s", f->rel,
					   e2.message);
			continue;
		}
		if (r != 0) {
			rc = fbc_diags_add(diags, "L1", &loc, NULL, NULL, NULL, "open %s: %s",
					   f->rel, e2.message);
			continue;
		}
		total += b.len;
		if (total > lim.max_total_bytes) {
			fbc_tree_blob_release(t, &b);
			rc = fbc_diags_add(diags, "LIMIT", &loc, NULL, NULL, NULL,
					   "the catalog is over %zu bytes", lim.max_total_bytes);
			break;
		}
		rc = fbc_load_buffer(f->rel, b.data ? b.data : "", b.len, &lim, on_meta, pair,
				     diags, err);
		fbc_tree_blob_release(t, &b);
	}
	if (rc == 0 && (rc = fbc_catalog_link(cat, err)) == 0)
		rc = fbc_validate(cat, NULL, diags, err);
	if (rc == 0) {
		fbc_diags_sort(diags);
		*out = cat;
		cat = NULL;
	}
done:
	for (size_t i = 0; i < w.files.len; i++) {
		free(FBC_VEC_AT(&w.files, walk_file, i)->rel);
		free(FBC_VEC_AT(&w.files, walk_file, i)->target);
	}
	fbc_vec_dispose(&w.files);
	fbc_ignore_free(w.ig);
	fbc_catalog_free(cat);
	return rc;
}

static void catalog_free(chk_catalog *k)
{
	if (!k)
		return;
	fbc_catalog_free(k->cat);
	fbc_diags_dispose(&k->diags);
	free(k);
}

void chk_catalogs_dispose(fbc_strmap *m)
{
	size_t it = 0;
	const char *key;
	void *val;

	while (fbc_strmap_next(m, &it, &key, &val))
		catalog_free(val);
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
	if (!(k = calloc(1, sizeof(*k))) || fbc_diags_init(&k->diags, 0) != 0) {
		free(k);
		return fbc_error_set(err, FBC_ENOMEM, dir, "out of memory");
	}
	k->dir = fbc_arena_strdup(c->arena, dir);
	{
		const char *slash = strrchr(dir, '/');

		k->name = fbc_arena_strdup(c->arena,
					   *dir ? (slash ? slash + 1 : dir)
						: (c->repo_name ? c->repo_name : "catalog"));
	}
	if ((rc = fbc_strmap_put(m, k->dir, k, NULL)) != 0) {
		catalog_free(k);
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
	rc = load_tree(&k->cat, t, dir, &k->diags, &e2);
	if (rc == FBC_ENOMEM)
		return fbc_error_set(err, rc, dir, "%s", e2.message);
	if (rc)
		snprintf(k->load_error, sizeof(k->load_error), "%s: %s", e2.where, e2.message);
	*out = k;
	return 0;
}

int chk_catalog_dirs(fbc_vec *out, chk_ctx *c, fbc_tree *t, fbc_error *err)
{
	const fbc_settings *s = &c->settings;

	if (s->layout == FBC_LAYOUT_PLAIN)
		return chk_strvec_add(out, "") ? fbc_error_set(err, FBC_ENOMEM, "", "out of memory")
					       : 0;
	for (size_t i = 0; i < s->n_catalogs; i++) {
		/* glob "a/b/<star>": list a/b; a glob with no star names one directory */
		const char *glob = s->catalogs[i].path;
		const char *star = strchr(glob, '*');
		fbc_vec v;
		char *parent;

		if (!star) {
			fbc_tree_entry e = {0};
			fbc_error e2;

			if (fbc_tree_stat(t, &e, glob, &e2) == 0 && e.kind == FBC_TREE_DIR &&
			    chk_strvec_add(out, fbc_arena_strdup(c->arena, glob)))
				return fbc_error_set(err, FBC_ENOMEM, glob, "out of memory");
			fbc_tree_entry_dispose(&e);
			continue;
		}
		if (strcmp(star, "*") != 0 || (star != glob && star[-1] != '/'))
			continue; /* only a trailing "/<star>" component is supported */
		parent = strndup(glob, star == glob ? 0 : (size_t)(star - glob - 1));
		if (!parent)
			return fbc_error_set(err, FBC_ENOMEM, glob, "out of memory");
		fbc_vec_init(&v, sizeof(fbc_tree_entry));
		if (fbc_tree_list(t, &v, parent, err) == 0) {
			for (size_t k = 0; k < v.len; k++) {
				fbc_tree_entry *e = FBC_VEC_AT(&v, fbc_tree_entry, k);
				char *p;

				if (e->kind != FBC_TREE_DIR)
					continue;
				p = fbc_tree_join(parent, e->name);
				if (!p || chk_strvec_add(out, fbc_arena_strdup(c->arena, p))) {
					free(p);
					free(parent);
					fbc_tree_entries_dispose(&v);
					return fbc_error_set(err, FBC_ENOMEM, glob,
							     "out of memory");
				}
				free(p);
			}
		}
		fbc_tree_entries_dispose(&v);
		free(parent);
	}
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
