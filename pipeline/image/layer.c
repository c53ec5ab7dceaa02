/* The catalog layer: a reproducible tar (libarchive) and gzip (zlib); see image.h. */
#include "pipeline/image/image.h"

#include "service/fbc/render.h"

#include <archive.h>
#include <archive_entry.h>
#include <zlib.h>

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

/* Layers of at least two blocks are compressed as pigz does it: the tar is
 * cut in fixed 1 MiB blocks, each deflated on its own (raw deflate, primed
 * with the 32 KiB before it as dictionary, ended by a sync flush; the last
 * one finishes the stream), on as many threads as there are cores, and the
 * pieces joined under one gzip header and trailer (CRC-32 combined). The
 * blocks depend on the input only, never on the number of threads, so the
 * bytes — and the digests — are the same on every machine. */
#define GZ_BLOCK ((size_t)1 << 20)
#define GZ_DICT	 ((size_t)32 << 10)

typedef struct gz_block {
	const unsigned char *in; /* the whole input */
	size_t off, len;	 /* this block */
	bool last;
	int level;
	unsigned char *out;
	size_t out_len;
	uLong crc;
	int zr; /* Z_OK, else the failure */
} gz_block;

typedef struct gz_work {
	gz_block *blocks;
	size_t n;
	size_t next; /* guarded by lock */
	pthread_mutex_t lock;
} gz_work;

static void gz_block_run(gz_block *b)
{
	z_stream z;
	size_t bound;

	memset(&z, 0, sizeof(z));
	b->crc = crc32(0L, b->in + b->off, (uInt)b->len);
	if ((b->zr = deflateInit2(&z, b->level, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY)) != Z_OK)
		return;
	if (b->off) {
		size_t d = b->off < GZ_DICT ? b->off : GZ_DICT;
		if ((b->zr = deflateSetDictionary(&z, b->in + b->off - d, (uInt)d)) != Z_OK)
			goto done;
	}
	bound = deflateBound(&z, b->len) + 16;
	if (!(b->out = malloc(bound))) {
		b->zr = Z_MEM_ERROR;
		goto done;
	}
	z.next_in = (Bytef *)(b->in + b->off);
	z.avail_in = (uInt)b->len;
	z.next_out = b->out;
	z.avail_out = (uInt)bound;
	b->zr = deflate(&z, b->last ? Z_FINISH : Z_SYNC_FLUSH);
	if ((b->last && b->zr == Z_STREAM_END) || (!b->last && b->zr == Z_OK && z.avail_in == 0))
		b->zr = Z_OK;
	else if (b->zr == Z_OK || b->zr == Z_STREAM_END)
		b->zr = Z_BUF_ERROR;
	b->out_len = bound - z.avail_out;
done:
	deflateEnd(&z);
}

static void *gz_worker(void *arg)
{
	gz_work *w = arg;

	for (;;) {
		size_t i;

		pthread_mutex_lock(&w->lock);
		i = w->next++;
		pthread_mutex_unlock(&w->lock);
		if (i >= w->n)
			return NULL;
		gz_block_run(&w->blocks[i]);
	}
}

static int gzip_blocks(fbc_buf *out, const fbc_buf *in, int level, fbc_error *err)
{
	gz_work w = {0};
	pthread_t th[8];
	size_t nth = 0, total = 0;
	long cores = sysconf(_SC_NPROCESSORS_ONLN);
	uLong crc = crc32(0L, Z_NULL, 0);
	int rc = 0;

	w.n = (in->len + GZ_BLOCK - 1) / GZ_BLOCK;
	if (!(w.blocks = calloc(w.n, sizeof(*w.blocks))))
		return fbc_error_set(err, FBC_ENOMEM, NULL, "gzip: out of memory");
	for (size_t i = 0; i < w.n; i++) {
		gz_block *b = &w.blocks[i];
		b->in = (const unsigned char *)in->data;
		b->off = i * GZ_BLOCK;
		b->len = in->len - b->off < GZ_BLOCK ? in->len - b->off : GZ_BLOCK;
		b->last = i + 1 == w.n;
		b->level = level;
	}
	pthread_mutex_init(&w.lock, NULL);
	for (long k = 1; k < cores && nth < sizeof(th) / sizeof(th[0]) && nth + 1 < w.n; k++) {
		if (pthread_create(&th[nth], NULL, gz_worker, &w) != 0)
			break; /* fewer threads: the same bytes, later */
		nth++;
	}
	gz_worker(&w);
	for (size_t k = 0; k < nth; k++)
		pthread_join(th[k], NULL);
	pthread_mutex_destroy(&w.lock);
	for (size_t i = 0; i < w.n && rc == 0; i++) {
		if (w.blocks[i].zr != Z_OK)
			rc = fbc_error_set(
				err, w.blocks[i].zr == Z_MEM_ERROR ? FBC_ENOMEM : FBC_EINTERNAL,
				NULL, "gzip: deflate of block %zu failed (%d)", i, w.blocks[i].zr);
		total += w.blocks[i].out_len;
	}
	if (rc == 0 && fbc_buf_reserve(out, total + 18 + 1))
		rc = fbc_error_set(err, FBC_ENOMEM, NULL, "gzip: out of memory");
	if (rc == 0) {
		/* the header zlib writes for {os = 255}: no name, no time; XFL as zlib sets it */
		unsigned char h[10] = {
			0x1f, 0x8b, 8, 0, 0, 0, 0, 0, level == 9 ? 2 : (level < 2 ? 4 : 0), 255};
		unsigned char t[8];
		uint32_t isize = (uint32_t)in->len;

		fbc_buf_append(out, h, sizeof(h));
		for (size_t i = 0; i < w.n; i++) {
			fbc_buf_append(out, w.blocks[i].out, w.blocks[i].out_len);
			crc = crc32_combine(crc, w.blocks[i].crc, (z_off_t)w.blocks[i].len);
		}
		for (int k = 0; k < 4; k++) {
			t[k] = (unsigned char)(crc >> (8 * k));
			t[4 + k] = (unsigned char)(isize >> (8 * k));
		}
		fbc_buf_append(out, t, sizeof(t));
	}
	for (size_t i = 0; i < w.n; i++)
		free(w.blocks[i].out);
	free(w.blocks);
	return rc;
}

static int gzip_buf(fbc_buf *out, const fbc_buf *in, int level, fbc_error *err)
{
	z_stream z;
	gz_header h;
	int zr;
	int rc = 0;

	if (in->len >= 2 * GZ_BLOCK)
		return gzip_blocks(out, in, level, err);
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
