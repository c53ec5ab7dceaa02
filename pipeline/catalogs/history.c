/*
 * The history input of fbc_repo_catalogs_build: bundle directories in the
 * order they were merged (catalogs.h).
 */
#include "pipeline/catalogs/internal.h"
#include "service/bundle/bundle.h"

#include <stdlib.h>
#include <string.h>

struct fbc_repo_history {
	fbc_repo_history_step *steps;
	size_t n;
	fbc_arena *arena;
};

size_t fbc_repo_history_count(const fbc_repo_history *h)
{
	return h ? h->n : 0;
}

const fbc_repo_history_step *fbc_repo_history_step_at(const fbc_repo_history *h, size_t i)
{
	return h && i < h->n ? &h->steps[i] : NULL;
}

void fbc_repo_history_free(fbc_repo_history *h)
{
	if (!h)
		return;
	fbc_arena_free(h->arena);
	free(h);
}

static int history_new(fbc_repo_history **out, size_t n, fbc_error *err)
{
	fbc_repo_history *h = calloc(1, sizeof(*h));

	if (!h || fbc_arena_create(&h->arena, 0) != 0) {
		free(h);
		return fbc_error_set(err, FBC_ENOMEM, NULL, "out of memory");
	}
	h->steps = fbc_arena_calloc(h->arena, n + 1, sizeof(*h->steps));
	if (!h->steps) {
		fbc_repo_history_free(h);
		return fbc_error_set(err, FBC_ENOMEM, NULL, "out of memory");
	}
	*out = h;
	return 0;
}

int fbc_repo_history_create(fbc_repo_history **out, const fbc_repo_history_step *steps, size_t n,
			    fbc_error *err)
{
	fbc_repo_history *h = NULL;
	size_t i, j, total = 0;
	int rc;

	for (i = 0; i < n; i++)
		total += steps[i].n_paths;
	if (total > FBC_REPO_MAX_BUNDLES)
		return fbc_error_set(err, FBC_ELIMIT, NULL, "more than %d bundle directories",
				     FBC_REPO_MAX_BUNDLES);
	if ((rc = history_new(&h, n, err)) != 0)
		return rc;
	for (i = 0; i < n; i++) {
		const char **paths =
			fbc_arena_calloc(h->arena, steps[i].n_paths + 1, sizeof(char *));

		h->steps[i].commit =
			fbc_arena_strdup(h->arena, steps[i].commit ? steps[i].commit : "");
		if (!paths || !h->steps[i].commit)
			goto oom;
		for (j = 0; j < steps[i].n_paths; j++) {
			if (!(paths[j] = fbc_arena_strdup(h->arena, steps[i].paths[j])))
				goto oom;
		}
		h->steps[i].paths = paths;
		h->steps[i].n_paths = steps[i].n_paths;
	}
	h->n = n;
	*out = h;
	return 0;
oom:
	fbc_repo_history_free(h);
	return fbc_error_set(err, FBC_ENOMEM, NULL, "out of memory");
}

/* Directory names under dir of t, sorted; FBC_ENOTFOUND when dir is absent. */
static int subdirs(fbc_vec *out, fbc_tree *t, const char *dir, fbc_error *err)
{
	fbc_vec ents;
	size_t i;
	int rc;

	fbc_vec_init(&ents, sizeof(fbc_tree_entry));
	rc = fbc_tree_list(t, &ents, dir, err);
	if (rc != 0)
		goto done;
	fbc_tree_entries_sort(&ents);
	for (i = 0; i < ents.len; i++) {
		fbc_tree_entry *e = FBC_VEC_AT(&ents, fbc_tree_entry, i);
		char **slot;

		if (e->kind != FBC_TREE_DIR || e->name[0] == '.')
			continue;
		if (!(slot = fbc_vec_push(out))) {
			rc = fbc_error_set(err, FBC_ENOMEM, NULL, "out of memory");
			goto done;
		}
		if (!(*slot = strdup(e->name))) {
			out->len--;
			rc = fbc_error_set(err, FBC_ENOMEM, NULL, "out of memory");
			goto done;
		}
	}
done:
	fbc_tree_entries_dispose(&ents);
	return rc;
}

int am_repo_subdirs(fbc_vec *out, fbc_tree *t, const char *dir, fbc_error *err)
{
	return subdirs(out, t, dir, err);
}

bool am_repo_listed(const char *name, const char *const *names, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(names[i], name) == 0)
			return true;
	return false;
}

void am_repo_names_dispose(fbc_vec *names)
{
	size_t i;

	for (i = 0; i < names->len; i++)
		free(*FBC_VEC_AT(names, char *, i));
	fbc_vec_dispose(names);
}

static bool is_bundle(fbc_tree *t, const char *path)
{
	bool yes = false;
	fbc_error err;

	return fbc_bundle_detect(&yes, t, path, &err) == 0 && yes;
}

int fbc_repo_history_from_tree(fbc_repo_history **out, fbc_tree *tree, fbc_error *err)
{
	fbc_vec pkgs, dirs, paths;
	fbc_repo_history_step step = {"", NULL, 0};
	size_t i, j;
	int rc;

	fbc_vec_init(&pkgs, sizeof(char *));
	fbc_vec_init(&dirs, sizeof(char *));
	fbc_vec_init(&paths, sizeof(char *));
	rc = subdirs(&pkgs, tree, "operators", err);
	if (rc != 0)
		goto done;
	for (i = 0; i < pkgs.len; i++) {
		char *pdir = fbc_tree_join("operators", *FBC_VEC_AT(&pkgs, char *, i));

		if (!pdir) {
			rc = fbc_error_set(err, FBC_ENOMEM, NULL, "out of memory");
			goto done;
		}
		am_repo_names_dispose(&dirs);
		fbc_vec_init(&dirs, sizeof(char *));
		rc = subdirs(&dirs, tree, pdir, err);
		for (j = 0; rc == 0 && j < dirs.len; j++) {
			char *p = fbc_tree_join(pdir, *FBC_VEC_AT(&dirs, char *, j)), **slot;

			if (!p || !(slot = fbc_vec_push(&paths))) {
				free(p);
				rc = fbc_error_set(err, FBC_ENOMEM, NULL, "out of memory");
				break;
			}
			*slot = p;
			if (!is_bundle(tree, p)) {
				free(p);
				paths.len--;
			}
		}
		free(pdir);
		if (rc != 0)
			goto done;
	}
	step.paths = (const char *const *)paths.items;
	step.n_paths = paths.len;
	rc = fbc_repo_history_create(out, &step, 1, err);
done:
	am_repo_names_dispose(&pkgs);
	am_repo_names_dispose(&dirs);
	am_repo_names_dispose(&paths);
	return rc;
}

typedef struct added {
	size_t order; /* index of the commit in first-parent history */
	char *path;
	char commit[FBC_GIT_ID_MAX];
} added;

static int cmp_added(const void *a, const void *b)
{
	const added *x = a, *y = b;

	if (x->order != y->order)
		return x->order < y->order ? -1 : 1;
	return strcmp(x->path, y->path);
}

int fbc_repo_history_from_git(fbc_repo_history **out, fbc_git *g, const char *rev, fbc_error *err)
{
	return fbc_repo_history_from_git_packages(out, g, rev, NULL, 0, err);
}

int fbc_repo_history_from_git_packages(fbc_repo_history **out, fbc_git *g, const char *rev,
				       const char *const *packages, size_t n_packages,
				       fbc_error *err)
{
	fbc_vec commits, pkgs, all, steps;
	fbc_strmap order;
	fbc_tree *tree = NULL;
	size_t i, j;
	int rc;

	fbc_vec_init(&commits, sizeof(fbc_git_commit));
	fbc_vec_init(&pkgs, sizeof(char *));
	fbc_vec_init(&all, sizeof(added));
	fbc_vec_init(&steps, sizeof(fbc_repo_history_step));
	fbc_strmap_init(&order);
	if ((rc = fbc_git_log(&commits, g, rev, 1, 0, err)) != 0)
		goto done;
	for (i = 0; i < commits.len; i++) {
		if (fbc_strmap_put(&order, FBC_VEC_AT(&commits, fbc_git_commit, i)->id,
				   (void *)(i + 1), NULL) != 0) {
			rc = fbc_error_set(err, FBC_ENOMEM, NULL, "out of memory");
			goto done;
		}
	}
	if ((rc = fbc_git_tree_open(&tree, g, rev, err)) != 0)
		goto done;
	if ((rc = subdirs(&pkgs, tree, "operators", err)) != 0)
		goto done;
	for (i = 0; i < pkgs.len; i++) {
		char *pdir;
		fbc_vec fa;

		if (n_packages &&
		    !am_repo_listed(*FBC_VEC_AT(&pkgs, char *, i), packages, n_packages))
			continue;
		pdir = fbc_tree_join("operators", *FBC_VEC_AT(&pkgs, char *, i));
		fbc_vec_init(&fa, sizeof(fbc_git_added));
		if (!pdir) {
			rc = fbc_error_set(err, FBC_ENOMEM, NULL, "out of memory");
			goto done;
		}
		rc = fbc_git_first_added(&fa, g, rev, pdir, err);
		free(pdir);
		for (j = 0; rc == 0 && j < fa.len; j++) {
			fbc_git_added *a = FBC_VEC_AT(&fa, fbc_git_added, j);
			added *d;

			if (!is_bundle(tree, a->path))
				continue;
			if (all.len >= FBC_REPO_MAX_BUNDLES) {
				rc = fbc_error_set(err, FBC_ELIMIT, a->path,
						   "more than %d bundle directories",
						   FBC_REPO_MAX_BUNDLES);
				break;
			}
			if (!(d = fbc_vec_push(&all))) {
				rc = fbc_error_set(err, FBC_ENOMEM, NULL, "out of memory");
				break;
			}
			d->order = (size_t)fbc_strmap_get(&order, a->commit);
			d->path = a->path;
			a->path = NULL;
			memcpy(d->commit, a->commit, sizeof(d->commit));
		}
		fbc_git_added_dispose(&fa);
		if (rc != 0)
			goto done;
	}
	if (all.len)
		qsort(all.items, all.len, sizeof(added), cmp_added);
	/* group by commit */
	for (i = 0; i < all.len; i = j) {
		added *first = FBC_VEC_AT(&all, added, i);
		fbc_repo_history_step *s = fbc_vec_push(&steps);
		const char **paths;

		if (!s || !(paths = calloc(all.len - i + 1, sizeof(char *)))) {
			rc = fbc_error_set(err, FBC_ENOMEM, NULL, "out of memory");
			goto done;
		}
		s->commit = first->commit;
		s->paths = paths;
		for (j = i; j < all.len && FBC_VEC_AT(&all, added, j)->order == first->order; j++)
			paths[s->n_paths++] = FBC_VEC_AT(&all, added, j)->path;
	}
	rc = fbc_repo_history_create(out, steps.items, steps.len, err);
done:
	for (i = 0; i < steps.len; i++)
		free((void *)FBC_VEC_AT(&steps, fbc_repo_history_step, i)->paths);
	fbc_vec_dispose(&steps);
	for (i = 0; i < all.len; i++)
		free(FBC_VEC_AT(&all, added, i)->path);
	fbc_vec_dispose(&all);
	am_repo_names_dispose(&pkgs);
	fbc_tree_free(tree);
	fbc_strmap_dispose(&order);
	fbc_git_commits_dispose(&commits);
	return rc;
}
