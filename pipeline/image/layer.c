/* The catalog layer: a reproducible tar (libarchive) and gzip (zlib); see image.h. */
#include "pipeline/image/image.h"

#include "service/fbc/render.h"

#include <archive.h>
#include <archive_entry.h>
#include <zlib.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define NOPACKAGE_DIR "_nopackage"

typedef struct group {
	const char *name; /* directory name */
	char *key;	  /* name + "/", the sort key of its directory entry */
	fbc_buf body;
} group;

typedef struct collect {
	group *groups;
	size_t n, cap;
} collect;

static int check_dir_name(const char *name, fbc_error *err)
{
	size_t n = strlen(name);

	if (n == 0)
		return fbc_error_set(err, FBC_EINVAL, "catalog",
				     "a blob names no package: validate the catalog first");
	if (n > 200 || !strcmp(name, ".") || !strcmp(name, "..") || strchr(name, '/') ||
	    !strcmp(name, NOPACKAGE_DIR))
		return fbc_error_set(err, FBC_EINVAL, name,
				     "package name cannot be a directory of /configs");
	return 0;
}

static int on_line(void *ctx, const char *package, const char *data, size_t len, fbc_error *err)
{
	collect *c = ctx;
	const char *name = package ? package : NOPACKAGE_DIR;
	group *g = c->n ? &c->groups[c->n - 1] : NULL;
	int rc;

	if (!g || strcmp(g->name, name) != 0) {
		/* Render order groups a package's lines together (others last). */
		if (package && (rc = check_dir_name(package, err)))
			return rc;
		if (c->n == c->cap) {
			size_t cap = c->cap ? c->cap * 2 : 64;
			group *ng = realloc(c->groups, cap * sizeof(*ng));

			if (!ng)
				return fbc_error_set(err, FBC_ENOMEM, NULL, "out of memory");
			c->groups = ng;
			c->cap = cap;
		}
		g = &c->groups[c->n];
		memset(g, 0, sizeof(*g));
		g->name = name;
		fbc_buf_init(&g->body, 0);
		if (!(g->key = malloc(strlen(name) + 2)))
			return fbc_error_set(err, FBC_ENOMEM, NULL, "out of memory");
		memcpy(g->key, name, strlen(name));
		g->key[strlen(name)] = '/';
		g->key[strlen(name) + 1] = 0;
		c->n++;
	}
	if (fbc_buf_append(&g->body, data, len))
		return fbc_error_set(err, FBC_ENOMEM, name, "out of memory");
	return 0;
}

static int cmp_group(const void *a, const void *b)
{
	return strcmp(((const group *)a)->key, ((const group *)b)->key);
}

static la_ssize_t tar_write(struct archive *a, void *ctx, const void *p, size_t n)
{
	if (fbc_buf_append(ctx, p, n)) {
		archive_set_error(a, ENOMEM, "tar larger than memory allows");
		return -1;
	}
	return (la_ssize_t)n;
}

static int add_entry(struct archive *a, struct archive_entry *e, const char *path, bool dir,
		     const fbc_buf *body, int64_t created, fbc_error *err)
{
	archive_entry_clear(e);
	archive_entry_set_pathname(e, path);
	archive_entry_set_filetype(e, dir ? AE_IFDIR : AE_IFREG);
	archive_entry_set_perm(e, dir ? 0755 : 0644);
	archive_entry_set_uid(e, 0);
	archive_entry_set_gid(e, 0);
	archive_entry_set_mtime(e, (time_t)created, 0);
	archive_entry_set_size(e, dir ? 0 : (la_int64_t)body->len);
	if (archive_write_header(a, e) != ARCHIVE_OK ||
	    (!dir && body->len &&
	     archive_write_data(a, body->data, body->len) != (la_ssize_t)body->len))
		return fbc_error_set(err, FBC_EINTERNAL, path, "tar: %s", archive_error_string(a));
	return 0;
}

static int make_tar(fbc_buf *tar, collect *c, int64_t created, fbc_error *err)
{
	struct archive *a = archive_write_new();
	struct archive_entry *e = archive_entry_new();
	fbc_buf path;
	int rc = 0;

	fbc_buf_init(&path, 0);
	if (!a || !e) {
		rc = fbc_error_set(err, FBC_ENOMEM, NULL, "out of memory");
		goto done;
	}
	/* pax only where ustar cannot say it (long names): no atime/ctime records */
	if (archive_write_set_format_pax_restricted(a) != ARCHIVE_OK ||
	    archive_write_set_bytes_in_last_block(a, 1) != ARCHIVE_OK ||
	    archive_write_open2(a, tar, NULL, tar_write, NULL, NULL) != ARCHIVE_OK) {
		rc = fbc_error_set(err, FBC_EINTERNAL, NULL, "tar: %s", archive_error_string(a));
		goto done;
	}
	if ((rc = add_entry(a, e, "configs/", true, NULL, created, err)))
		goto done;
	for (size_t i = 0; i < c->n; i++) {
		fbc_buf_reset(&path);
		if (fbc_buf_printf(&path, "configs/%s", c->groups[i].key)) {
			rc = fbc_error_set(err, FBC_ENOMEM, NULL, "out of memory");
			goto done;
		}
		if ((rc = add_entry(a, e, path.data, true, NULL, created, err)))
			goto done;
		if (fbc_buf_puts(&path, "catalog.json")) {
			rc = fbc_error_set(err, FBC_ENOMEM, NULL, "out of memory");
			goto done;
		}
		if ((rc = add_entry(a, e, path.data, false, &c->groups[i].body, created, err)))
			goto done;
	}
	if (archive_write_close(a) != ARCHIVE_OK)
		rc = fbc_error_set(err, FBC_EINTERNAL, NULL, "tar: %s", archive_error_string(a));
done:
	if (e)
		archive_entry_free(e);
	if (a)
		archive_write_free(a);
	fbc_buf_dispose(&path);
	return rc;
}

static int gzip_buf(fbc_buf *out, const fbc_buf *in, int level, fbc_error *err)
{
	z_stream z;
	gz_header h;
	int zr;
	int rc = 0;

	memset(&z, 0, sizeof(z));
	memset(&h, 0, sizeof(h));
	h.os = 255; /* unknown: the same bytes on any machine */
	if (deflateInit2(&z, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return fbc_error_set(err, FBC_ENOMEM, NULL, "gzip: deflateInit2 failed");
	if (deflateSetHeader(&z, &h) != Z_OK) {
		rc = fbc_error_set(err, FBC_EINTERNAL, NULL, "gzip: deflateSetHeader failed");
		goto done;
	}
	if (fbc_buf_reserve(out, deflateBound(&z, in->len) + 64)) {
		rc = fbc_error_set(err, FBC_ENOMEM, NULL, "gzip: out of memory");
		goto done;
	}
	z.next_in = (Bytef *)in->data;
	z.avail_in = (uInt)in->len;
	z.next_out = (Bytef *)out->data + out->len;
	z.avail_out = (uInt)(out->cap - out->len - 1);
	zr = deflate(&z, Z_FINISH);
	if (zr != Z_STREAM_END) {
		rc = fbc_error_set(err, FBC_EINTERNAL, NULL, "gzip: deflate returned %d", zr);
		goto done;
	}
	out->len += z.total_out;
	out->data[out->len] = 0;
done:
	deflateEnd(&z);
	return rc;
}

int fbc_image_layer(fbc_buf *tar_out, fbc_buf *gz_out, const fbc_catalog *cat, int64_t created,
		    int gzip_level, size_t *n_packages, fbc_error *err)
{
	collect c = {0};
	fbc_buf tar;
	size_t pk = 0;
	int rc;

	fbc_buf_init(&tar, 0);
	if ((rc = fbc_render_catalog_grouped(cat, on_line, &c, err)))
		goto done;
	qsort(c.groups, c.n, sizeof(*c.groups), cmp_group);
	for (size_t i = 0; i < c.n; i++)
		if (strcmp(c.groups[i].name, NOPACKAGE_DIR) != 0)
			pk++;
	if ((rc = make_tar(&tar, &c, created, err)))
		goto done;
	if (tar.len > UINT32_MAX) {
		rc = fbc_error_set(err, FBC_ELIMIT, "layer", "the layer is larger than 4 GiB");
		goto done;
	}
	if ((rc = gzip_buf(gz_out, &tar, gzip_level ? gzip_level : 6, err)))
		goto done;
	if (n_packages)
		*n_packages = pk;
	if (tar_out) {
		fbc_buf_dispose(tar_out);
		*tar_out = tar;
		fbc_buf_init(&tar, 0);
	}
done:
	for (size_t i = 0; i < c.n; i++) {
		free(c.groups[i].key);
		fbc_buf_dispose(&c.groups[i].body);
	}
	free(c.groups);
	fbc_buf_dispose(&tar);
	return rc;
}
