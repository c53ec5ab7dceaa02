/* fbc_tree: the generic wrapper and three backends (directory, memory, sub-view). */
#include "service/base/tree.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct fbc_tree {
	const fbc_tree_ops *ops;
	void *self;
	char *label;
};

int fbc_tree_create(fbc_tree **out, const fbc_tree_ops *ops, void *self, const char *label,
		    fbc_error *err)
{
	fbc_tree *t = calloc(1, sizeof(*t));

	if (!t || !(t->label = strdup(label ? label : ""))) {
		free(t);
		if (ops->free)
			ops->free(self);
		return fbc_error_set(err, FBC_ENOMEM, label, "out of memory");
	}
	t->ops = ops;
	t->self = self;
	*out = t;
	return 0;
}

void fbc_tree_free(fbc_tree *t)
{
	if (!t)
		return;
	if (t->ops->free)
		t->ops->free(t->self);
	free(t->label);
	free(t);
}

const char *fbc_tree_label(const fbc_tree *t)
{
	return t->label;
}

int fbc_tree_list(fbc_tree *t, fbc_vec *out, const char *dir, fbc_error *err)
{
	return t->ops->list(t->self, out, dir, err);
}

int fbc_tree_follow(fbc_tree *t, fbc_tree_entry *out, const char *path, fbc_error *err)
{
	return t->ops->follow(t->self, out, path, err);
}

int fbc_tree_read(fbc_tree *t, fbc_tree_blob *out, const char *path, size_t max, fbc_error *err)
{
	return t->ops->read(t->self, out, path, max, err);
}

void fbc_tree_blob_release(fbc_tree *t, fbc_tree_blob *blob)
{
	if (blob && (blob->data || blob->priv))
		t->ops->release(t->self, blob);
	if (blob)
		memset(blob, 0, sizeof(*blob));
}

void fbc_tree_entry_dispose(fbc_tree_entry *e)
{
	if (e) {
		free(e->name);
		e->name = NULL;
	}
}

void fbc_tree_entries_dispose(fbc_vec *entries)
{
	for (size_t i = 0; i < entries->len; i++)
		free(FBC_VEC_AT(entries, fbc_tree_entry, i)->name);
	fbc_vec_dispose(entries);
}

static int cmp_entry(const void *a, const void *b)
{
	return strcmp(((const fbc_tree_entry *)a)->name, ((const fbc_tree_entry *)b)->name);
}

void fbc_tree_entries_sort(fbc_vec *entries)
{
	if (entries->len > 1)
		qsort(entries->items, entries->len, sizeof(fbc_tree_entry), cmp_entry);
}

char *fbc_tree_join(const char *dir, const char *name)
{
	size_t dl = strlen(dir), nl = strlen(name);
	char *p = malloc(dl + nl + 2);

	if (!p)
		return NULL;
	if (dl == 0) {
		memcpy(p, name, nl + 1);
	} else {
		memcpy(p, dir, dl);
		p[dl] = '/';
		memcpy(p + dl + 1, name, nl + 1);
	}
	return p;
}

/* The parent of path and its last component, split at the last '/'. */
static const char *last_component(const char *path, size_t *dir_len)
{
	const char *slash = strrchr(path, '/');

	*dir_len = slash ? (size_t)(slash - path) : 0;
	return slash ? slash + 1 : path;
}

int fbc_tree_stat(fbc_tree *t, fbc_tree_entry *out, const char *path, fbc_error *err)
{
	size_t dl;
	const char *base = last_component(path, &dl);
	char *dir = strndup(path, dl);
	fbc_vec v;
	int rc;

	if (!dir)
		return fbc_error_set(err, FBC_ENOMEM, path, "out of memory");
	if (*path == '\0') {
		free(dir);
		memset(out, 0, sizeof(*out));
		out->kind = FBC_TREE_DIR;
		return (out->name = strdup(""))
			       ? 0
			       : fbc_error_set(err, FBC_ENOMEM, path, "out of memory");
	}
	fbc_vec_init(&v, sizeof(fbc_tree_entry));
	rc = fbc_tree_list(t, &v, dir, err);
	if (rc == 0) {
		rc = fbc_error_set(err, FBC_ENOTFOUND, path, "no such file or directory");
		for (size_t i = 0; i < v.len; i++) {
			fbc_tree_entry *e = FBC_VEC_AT(&v, fbc_tree_entry, i);

			if (strcmp(e->name, base) == 0) {
				*out = *e;
				e->name = NULL;
				rc = 0;
				break;
			}
		}
	}
	fbc_tree_entries_dispose(&v);
	free(dir);
	return rc;
}

/* ---------------------------------------------------------------- directory */

typedef struct dir_tree {
	char *root; /* as given */
	char *real; /* realpath of root */
	size_t real_len;
} dir_tree;

static char *dir_abs(const dir_tree *d, const char *rel)
{
	return fbc_tree_join(d->root, rel);
}

static fbc_tree_kind kind_of(mode_t m)
{
	if (S_ISREG(m))
		return FBC_TREE_FILE;
	if (S_ISDIR(m))
		return FBC_TREE_DIR;
	if (S_ISLNK(m))
		return FBC_TREE_LINK;
	return FBC_TREE_OTHER;
}

static int dir_list(void *self, fbc_vec *out, const char *rel, fbc_error *err)
{
	dir_tree *d = self;
	char *abs = dir_abs(d, rel);
	DIR *dh = NULL;
	struct dirent *de;
	int rc = 0;

	if (!abs)
		return fbc_error_set(err, FBC_ENOMEM, rel, "out of memory");
	dh = opendir(abs);
	if (!dh) {
		int e = errno;

		rc = fbc_error_set(err,
				   e == ENOENT	  ? FBC_ENOTFOUND
				   : e == ENOTDIR ? FBC_EINVAL
						  : FBC_EIO,
				   rel, "cannot open directory: %s", strerror(e));
		goto done;
	}
	while ((errno = 0, de = readdir(dh)) != NULL) {
		struct stat st;
		fbc_tree_entry *e;

		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		/* a directory (the entry itself, as lstat would say) needs no size:
		 * no stat (a tree of 2,000 package directories saves 2,000 calls) */
		if (de->d_type == DT_DIR)
			st.st_mode = S_IFDIR;
		else if (fstatat(dirfd(dh), de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
			rc = fbc_error_set(err, FBC_EIO, rel, "cannot stat %s: %s", de->d_name,
					   strerror(errno));
			goto done;
		}
		if (!(e = fbc_vec_push(out)) || !(e->name = strdup(de->d_name))) {
			if (e)
				out->len--;
			rc = fbc_error_set(err, FBC_ENOMEM, rel, "out of memory");
			goto done;
		}
		e->kind = kind_of(st.st_mode);
		e->size = e->kind == FBC_TREE_FILE ? (uint64_t)st.st_size : 0;
	}
	if (errno != 0)
		rc = fbc_error_set(err, FBC_EIO, rel, "cannot read directory: %s", strerror(errno));
done:
	if (dh)
		closedir(dh);
	free(abs);
	return rc;
}

static int dir_follow(void *self, fbc_tree_entry *out, const char *rel, fbc_error *err)
{
	dir_tree *d = self;
	char *abs = dir_abs(d, rel), *real = NULL;
	struct stat st;
	int rc = 0;

	if (!abs)
		return fbc_error_set(err, FBC_ENOMEM, rel, "out of memory");
	real = realpath(abs, NULL);
	if (!real) {
		int e = errno;

		rc = fbc_error_set(err,
				   e == ELOOP	 ? FBC_ELIMIT
				   : e == ENOENT ? FBC_ENOTFOUND
						 : FBC_EIO,
				   rel, "cannot resolve: %s", strerror(e));
		goto done;
	}
	if (strncmp(real, d->real, d->real_len) != 0 ||
	    (real[d->real_len] != '/' && real[d->real_len] != '\0' && d->real_len > 1)) {
		rc = fbc_error_set(err, FBC_EINVAL, rel, "resolves outside the root");
		goto done;
	}
	if (stat(real, &st) != 0) {
		rc = fbc_error_set(err, FBC_EIO, rel, "cannot stat: %s", strerror(errno));
		goto done;
	}
	memset(out, 0, sizeof(*out));
	{
		const char *r = real + d->real_len;

		while (*r == '/')
			r++;
		if (!(out->name = strdup(r))) {
			rc = fbc_error_set(err, FBC_ENOMEM, rel, "out of memory");
			goto done;
		}
	}
	out->kind = kind_of(st.st_mode);
	out->size = out->kind == FBC_TREE_FILE ? (uint64_t)st.st_size : 0;
done:
	free(real);
	free(abs);
	return rc;
}

static int dir_read(void *self, fbc_tree_blob *out, const char *rel, size_t max, fbc_error *err)
{
	dir_tree *d = self;
	char *abs = dir_abs(d, rel), *buf = NULL;
	int fd = -1, rc = 0;
	struct stat st;
	size_t len = 0, cap;

	if (!abs)
		return fbc_error_set(err, FBC_ENOMEM, rel, "out of memory");
	fd = open(abs, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0 || fstat(fd, &st) != 0) {
		int e = errno;

		rc = fbc_error_set(err, e == ENOENT ? FBC_ENOTFOUND : FBC_EIO, rel,
				   "cannot open: %s", strerror(e));
		goto done;
	}
	if (!S_ISREG(st.st_mode)) {
		rc = fbc_error_set(err, FBC_EINVAL, rel, "not a regular file");
		goto done;
	}
	if ((uint64_t)st.st_size > max) {
		rc = fbc_error_set(err, FBC_ELIMIT, rel,
				   "file is %lld bytes, over the limit of %zu",
				   (long long)st.st_size, max);
		goto done;
	}
	cap = (size_t)st.st_size + 1;
	if (!(buf = malloc(cap))) {
		rc = fbc_error_set(err, FBC_ENOMEM, rel, "out of memory");
		goto done;
	}
	for (;;) {
		ssize_t n;

		if (len == cap) { /* the file grew while we read it */
			char *nb;

			if (cap > max) {
				rc = fbc_error_set(err, FBC_ELIMIT, rel,
						   "file grew over the limit of %zu", max);
				goto done;
			}
			cap = cap * 2 > max + 1 ? max + 1 : cap * 2;
			if (!(nb = realloc(buf, cap))) {
				rc = fbc_error_set(err, FBC_ENOMEM, rel, "out of memory");
				goto done;
			}
			buf = nb;
		}
		n = read(fd, buf + len, cap - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			rc = fbc_error_set(err, FBC_EIO, rel, "cannot read: %s", strerror(errno));
			goto done;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	if (len > max) {
		rc = fbc_error_set(err, FBC_ELIMIT, rel, "file grew over the limit of %zu", max);
		goto done;
	}
	out->data = len ? buf : NULL;
	out->len = len;
	out->priv = buf;
	buf = NULL;
done:
	free(buf);
	if (fd >= 0)
		close(fd);
	free(abs);
	return rc;
}

static void dir_release(void *self, fbc_tree_blob *blob)
{
	free(blob->priv);
}

static void dir_free(void *self)
{
	dir_tree *d = self;

	if (d) {
		free(d->root);
		free(d->real);
		free(d);
	}
}

static const fbc_tree_ops dir_ops = {dir_list, dir_follow, dir_read, dir_release, dir_free};

int fbc_tree_open_dir(fbc_tree **out, const char *root, fbc_error *err)
{
	dir_tree *d = NULL;
	struct stat st;

	if (stat(root, &st) != 0)
		return fbc_error_set(err, errno == ENOENT ? FBC_ENOTFOUND : FBC_EIO, root, "%s",
				     strerror(errno));
	if (!S_ISDIR(st.st_mode))
		return fbc_error_set(err, FBC_EINVAL, root, "not a directory");
	if (!(d = calloc(1, sizeof(*d))) || !(d->root = strdup(root)) ||
	    !(d->real = realpath(root, NULL))) {
		int e = errno;

		dir_free(d);
		return fbc_error_set(err, e == ENOMEM ? FBC_ENOMEM : FBC_EIO, root, "%s",
				     strerror(e));
	}
	d->real_len = strlen(d->real);
	if (d->real_len == 1) /* "/" */
		d->real_len = 0;
	return fbc_tree_create(out, &dir_ops, d, root, err);
}

/* ------------------------------------------------------------------ memory */

typedef struct mem_file {
	char *path;
	char *data;
	size_t len;
} mem_file;

typedef struct mem_tree {
	mem_file *files; /* sorted by path */
	size_t n;
} mem_tree;

static int cmp_mem(const void *a, const void *b)
{
	return strcmp(((const mem_file *)a)->path, ((const mem_file *)b)->path);
}

/* Does path start with dir as a directory ("" is the root)? Then the rest. */
static const char *under(const char *path, const char *dir)
{
	size_t dl = strlen(dir);

	if (dl == 0)
		return path;
	if (strncmp(path, dir, dl) == 0 && path[dl] == '/')
		return path + dl + 1;
	return NULL;
}

static const mem_file *mem_find(const mem_tree *m, const char *path)
{
	mem_file key = {.path = (char *)path};

	return bsearch(&key, m->files, m->n, sizeof(mem_file), cmp_mem);
}

static bool mem_is_dir(const mem_tree *m, const char *path)
{
	if (*path == '\0')
		return true;
	for (size_t i = 0; i < m->n; i++)
		if (under(m->files[i].path, path))
			return true;
	return false;
}

static int mem_list(void *self, fbc_vec *out, const char *dir, fbc_error *err)
{
	mem_tree *m = self;
	const char *last = NULL;
	size_t last_len = 0;

	if (!mem_is_dir(m, dir))
		return fbc_error_set(err, mem_find(m, dir) ? FBC_EINVAL : FBC_ENOTFOUND, dir,
				     mem_find(m, dir) ? "not a directory" : "no such directory");
	for (size_t i = 0; i < m->n; i++) { /* sorted: children of one name are adjacent */
		const char *rest = under(m->files[i].path, dir);
		const char *slash;
		size_t len;
		fbc_tree_entry *e;

		if (!rest)
			continue;
		slash = strchr(rest, '/');
		len = slash ? (size_t)(slash - rest) : strlen(rest);
		if (last && len == last_len && strncmp(rest, last, len) == 0)
			continue;
		last = rest;
		last_len = len;
		if (!(e = fbc_vec_push(out)) || !(e->name = strndup(rest, len))) {
			if (e)
				out->len--;
			return fbc_error_set(err, FBC_ENOMEM, dir, "out of memory");
		}
		e->kind = slash ? FBC_TREE_DIR : FBC_TREE_FILE;
		e->size = slash ? 0 : m->files[i].len;
	}
	return 0;
}

static int mem_follow(void *self, fbc_tree_entry *out, const char *path, fbc_error *err)
{
	mem_tree *m = self;
	const mem_file *f = mem_find(m, path);

	if (!f && !mem_is_dir(m, path))
		return fbc_error_set(err, FBC_ENOTFOUND, path, "no such file or directory");
	memset(out, 0, sizeof(*out));
	if (!(out->name = strdup(path)))
		return fbc_error_set(err, FBC_ENOMEM, path, "out of memory");
	out->kind = f ? FBC_TREE_FILE : FBC_TREE_DIR;
	out->size = f ? f->len : 0;
	return 0;
}

static int mem_read(void *self, fbc_tree_blob *out, const char *path, size_t max, fbc_error *err)
{
	const mem_file *f = mem_find(self, path);

	if (!f)
		return fbc_error_set(err, FBC_ENOTFOUND, path, "no such file");
	if (f->len > max)
		return fbc_error_set(err, FBC_ELIMIT, path,
				     "file is %zu bytes, over the limit of %zu", f->len, max);
	out->data = f->len ? f->data : NULL;
	out->len = f->len;
	out->priv = NULL;
	return 0;
}

static void mem_release(void *self, fbc_tree_blob *blob)
{
}

static void mem_free(void *self)
{
	mem_tree *m = self;

	if (!m)
		return;
	for (size_t i = 0; i < m->n; i++) {
		free(m->files[i].path);
		free(m->files[i].data);
	}
	free(m->files);
	free(m);
}

static const fbc_tree_ops mem_ops = {mem_list, mem_follow, mem_read, mem_release, mem_free};

int fbc_tree_open_mem(fbc_tree **out, const char *const *paths, const char *const *data,
		      const size_t *lens, size_t n, const char *label, fbc_error *err)
{
	mem_tree *m = calloc(1, sizeof(*m));

	if (!m || (n && !(m->files = calloc(n, sizeof(mem_file)))))
		goto oom;
	for (size_t i = 0; i < n; i++, m->n++) {
		mem_file *f = &m->files[i];

		if (!(f->path = strdup(paths[i])) || !(f->data = malloc(lens[i] ? lens[i] : 1)))
			goto oom_count;
		if (lens[i])
			memcpy(f->data, data[i], lens[i]);
		f->len = lens[i];
	}
	if (m->n)
		qsort(m->files, m->n, sizeof(mem_file), cmp_mem);
	return fbc_tree_create(out, &mem_ops, m, label ? label : "memory", err);
oom_count:
	m->n++; /* the half-built file is freed too */
oom:
	mem_free(m);
	return fbc_error_set(err, FBC_ENOMEM, label, "out of memory");
}

/* --------------------------------------------------------------- sub-view */

typedef struct sub_tree {
	fbc_tree *parent;
	char *dir;
} sub_tree;

static char *sub_path(const sub_tree *s, const char *rel)
{
	return *rel ? fbc_tree_join(s->dir, rel) : strdup(s->dir);
}

static int sub_list(void *self, fbc_vec *out, const char *rel, fbc_error *err)
{
	sub_tree *s = self;
	char *p = sub_path(s, rel);
	int rc;

	if (!p)
		return fbc_error_set(err, FBC_ENOMEM, rel, "out of memory");
	rc = fbc_tree_list(s->parent, out, p, err);
	free(p);
	return rc;
}

static int sub_follow(void *self, fbc_tree_entry *out, const char *rel, fbc_error *err)
{
	sub_tree *s = self;
	char *p = sub_path(s, rel);
	fbc_tree_entry e = {0};
	const char *inside;
	int rc;

	if (!p)
		return fbc_error_set(err, FBC_ENOMEM, rel, "out of memory");
	rc = fbc_tree_follow(s->parent, &e, p, err);
	free(p);
	if (rc)
		return rc;
	inside = strcmp(e.name, s->dir) == 0 ? "" : under(e.name, s->dir);
	if (!inside) {
		fbc_tree_entry_dispose(&e);
		return fbc_error_set(err, FBC_EINVAL, rel, "resolves outside the root");
	}
	*out = e;
	if (!(out->name = strdup(inside))) {
		fbc_tree_entry_dispose(&e);
		return fbc_error_set(err, FBC_ENOMEM, rel, "out of memory");
	}
	free(e.name);
	return 0;
}

static int sub_read(void *self, fbc_tree_blob *out, const char *rel, size_t max, fbc_error *err)
{
	sub_tree *s = self;
	char *p = sub_path(s, rel);
	int rc;

	if (!p)
		return fbc_error_set(err, FBC_ENOMEM, rel, "out of memory");
	rc = fbc_tree_read(s->parent, out, p, max, err);
	free(p);
	return rc;
}

static void sub_release(void *self, fbc_tree_blob *blob)
{
	sub_tree *s = self;

	s->parent->ops->release(s->parent->self, blob);
}

static void sub_free(void *self)
{
	sub_tree *s = self;

	if (s) {
		free(s->dir);
		free(s);
	}
}

static const fbc_tree_ops sub_ops = {sub_list, sub_follow, sub_read, sub_release, sub_free};

int fbc_tree_sub(fbc_tree **out, fbc_tree *t, const char *dir, fbc_error *err)
{
	fbc_tree_entry e = {0};
	sub_tree *s = NULL;
	char *label = NULL;
	int rc;

	if (*dir == '\0')
		return fbc_error_set(err, FBC_EINVAL, dir, "empty sub-tree path");
	if ((rc = fbc_tree_stat(t, &e, dir, err)) != 0)
		return rc;
	rc = e.kind == FBC_TREE_DIR ? 0 : fbc_error_set(err, FBC_EINVAL, dir, "not a directory");
	fbc_tree_entry_dispose(&e);
	if (rc)
		return rc;
	if (!(s = calloc(1, sizeof(*s))) || !(s->dir = strdup(dir)) ||
	    !(label = fbc_tree_join(t->label, dir))) {
		sub_free(s);
		return fbc_error_set(err, FBC_ENOMEM, dir, "out of memory");
	}
	s->parent = t;
	rc = fbc_tree_create(out, &sub_ops, s, label, err);
	free(label);
	return rc;
}

const char *fbc_tree_dir_path(const fbc_tree *t)
{
	if (t->ops == &dir_ops)
		return ((const dir_tree *)t->self)->root;
	return NULL;
}
