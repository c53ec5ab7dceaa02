/*
 * fbc_repo_catalogs output: the files of a built catalog in memory, as a
 * tree to load, as bytes to compare, or written to disk (catalogs.h).
 */
#include "pipeline/catalogs/internal.h"

#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int oom(fbc_error *err)
{
	return fbc_error_set(err, FBC_ENOMEM, NULL, "out of memory");
}

/* ---- output ---- */

/* Every file of catalog i: committed ones, then <pkg>/catalog.json of each
 * add-mode package. Arrays malloc'd; datas of generated files malloc'd too
 * (owned[i] true). */
typedef struct file_list {
	const char **paths;
	const char **datas;
	size_t *lens;
	char **owned;
	size_t n;
} file_list;

static void file_list_dispose(file_list *l)
{
	size_t i;

	for (i = 0; i < l->n; i++) {
		if (l->owned[i]) {
			free(l->owned[i]);
			free((void *)l->paths[i]);
		}
	}
	free(l->paths);
	free(l->datas);
	free(l->lens);
	free(l->owned);
	memset(l, 0, sizeof(*l));
}

static int file_list_make(file_list *l, const repo_catalog *c, fbc_error *err)
{
	size_t i, np = fbc_addmode_package_count(c->ix), cap = c->files.len + np + 1;
	fbc_buf buf;
	int r = 0;

	memset(l, 0, sizeof(*l));
	l->paths = calloc(cap, sizeof(char *));
	l->datas = calloc(cap, sizeof(char *));
	l->lens = calloc(cap, sizeof(size_t));
	l->owned = calloc(cap, sizeof(char *));
	if (!l->paths || !l->datas || !l->lens || !l->owned) {
		file_list_dispose(l);
		return oom(err);
	}
	for (i = 0; i < c->files.len; i++) {
		repo_file *f = FBC_VEC_AT(&c->files, repo_file, i);

		l->paths[l->n] = f->path;
		l->datas[l->n] = f->data;
		l->lens[l->n] = f->len;
		l->n++;
	}
	for (i = 0; i < np; i++) {
		const char *pkg = fbc_addmode_package_name(c->ix, i);
		char *path;
		size_t len;

		fbc_buf_init(&buf, 0);
		r = fbc_addmode_write_package(c->ix, pkg, &buf, err);
		path = fbc_tree_join(pkg, "catalog.json");
		if (r != 0 || !path) {
			free(path);
			fbc_buf_dispose(&buf);
			file_list_dispose(l);
			return r ? r : oom(err);
		}
		l->owned[l->n] = fbc_buf_detach(&buf, &len);
		if (!l->owned[l->n]) {
			free(path);
			file_list_dispose(l);
			return oom(err);
		}
		l->paths[l->n] = path;
		l->datas[l->n] = l->owned[l->n];
		l->lens[l->n] = len;
		l->n++;
	}
	return 0;
}

int fbc_repo_catalogs_tree(fbc_tree **out, const fbc_repo_catalogs *rc, size_t i, fbc_error *err)
{
	const repo_catalog *c;
	file_list l;
	int r;

	if (i >= rc->catalogs.len)
		return fbc_error_set(err, FBC_ENOTFOUND, NULL, "no catalog %zu", i);
	c = FBC_VEC_AT(&rc->catalogs, repo_catalog, i);
	if ((r = file_list_make(&l, c, err)) != 0)
		return r;
	r = fbc_tree_open_mem(out, l.paths, l.datas, l.lens, l.n, c->name, err);
	file_list_dispose(&l);
	return r;
}

int fbc_repo_catalogs_content(fbc_buf *out, const fbc_repo_catalogs *rc, size_t i, fbc_error *err)
{
	file_list l;
	char head[64];
	int r;

	if (i >= rc->catalogs.len)
		return fbc_error_set(err, FBC_ENOTFOUND, NULL, "no catalog %zu", i);
	if ((r = file_list_make(&l, FBC_VEC_AT(&rc->catalogs, repo_catalog, i), err)) != 0)
		return r;
	for (size_t k = 0; k < l.n && r == 0; k++) {
		int n = snprintf(head, sizeof(head), "%zu %zu\n", strlen(l.paths[k]), l.lens[k]);

		if (fbc_buf_append(out, head, (size_t)n) != 0 ||
		    fbc_buf_append(out, l.paths[k], strlen(l.paths[k])) != 0 ||
		    fbc_buf_append(out, l.datas[k], l.lens[k]) != 0)
			r = oom(err);
	}
	file_list_dispose(&l);
	return r;
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static int mkdirs(const char *path, fbc_error *err)
{
	char tmp[4096];
	size_t i, n = strlen(path);

	if (n >= sizeof(tmp))
		return fbc_error_set(err, FBC_ELIMIT, path, "path too long");
	memcpy(tmp, path, n + 1);
	for (i = 1; i <= n; i++) {
		if (tmp[i] != '/' && tmp[i] != '\0')
			continue;
		tmp[i] = '\0';
		if (mkdir(tmp, 0777) != 0 && errno != EEXIST)
			return fbc_error_set(err, FBC_EIO, tmp, "cannot create directory: %s",
					     strerror(errno));
		tmp[i] = i < n ? '/' : '\0';
	}
	return 0;
}

int fbc_repo_catalogs_write(const fbc_repo_catalogs *rc, const char *dir, fbc_error *err)
{
	size_t i, j;
	int r = 0;

	if ((r = mkdirs(dir, err)) != 0)
		return r;
	for (i = 0; i < rc->catalogs.len && r == 0; i++) {
		const repo_catalog *c = FBC_VEC_AT(&rc->catalogs, repo_catalog, i);
		char *cdir = fbc_tree_join(dir, c->name);
		file_list l;

		if (!cdir)
			return oom(err);
		if (access(cdir, F_OK) == 0 &&
		    nftw(cdir, rm_entry, 16, FTW_DEPTH | FTW_PHYS) != 0) {
			r = fbc_error_set(err, FBC_EIO, cdir, "cannot replace: %s",
					  strerror(errno));
			free(cdir);
			break;
		}
		if ((r = mkdirs(cdir, err)) != 0 || (r = file_list_make(&l, c, err)) != 0) {
			free(cdir);
			break;
		}
		for (j = 0; j < l.n && r == 0; j++) {
			char *p = fbc_tree_join(cdir, l.paths[j]), *slash;
			FILE *f;

			if (!p) {
				r = oom(err);
				break;
			}
			slash = strrchr(p, '/');
			*slash = '\0';
			r = mkdirs(p, err);
			*slash = '/';
			if (r == 0) {
				bool ok;

				f = fopen(p, "wb");
				ok = f && fwrite(l.datas[j], 1, l.lens[j], f) == l.lens[j];
				if (f && fclose(f) != 0)
					ok = false;
				if (!ok)
					r = fbc_error_set(err, FBC_EIO, p, "cannot write: %s",
							  strerror(errno));
			}
			free(p);
		}
		file_list_dispose(&l);
		free(cdir);
	}
	return r;
}
