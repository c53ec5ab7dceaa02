/* The catalog layer: a reproducible tar (libarchive) and gzip (zlib); see image.h. */
#include "pipeline/image/image.h"

#include "pipeline/oci/oci.h"
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

typedef struct gz_stream gz_stream;
static la_ssize_t tar_write(struct archive *a, void *ctx, const void *p, size_t n);

/* The tar, written entry by entry into a gz_stream. */
typedef struct layer_tar {
	struct archive *a;
	struct archive_entry *e;
	fbc_buf path;
	int64_t created;
} layer_tar;

typedef struct group {
	const char *name; /* directory name */
	char *key;	  /* name + "/", the sort key of its directory entry */
	fbc_buf body;
	bool written;
} group;

/* Render order is package name order (blobs without a package last); tar
 * order is directory key order ("name/"). They differ only where a name is a
 * prefix of the next ones ("foo-bar/" sorts before "foo/"), and for the
 * blobs without a package ("_nopackage/" sorts before lower-case names). So
 * a finished group is written as soon as no later group can sort before it:
 * the tar, its hashing and its compression go on while the rest renders. */
typedef struct collect {
	group *groups;
	size_t n, cap;
	size_t first_pending; /* every group before it is written */
	bool hold;	      /* blobs without a package: write everything at the end */
	layer_tar *tar;
	fbc_buf spare; /* the largest body written so far, for the next group */
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

static void tar_dispose(layer_tar *t)
{
	if (t->e)
		archive_entry_free(t->e);
	if (t->a)
		archive_write_free(t->a);
	fbc_buf_dispose(&t->path);
	memset(t, 0, sizeof(*t));
}

/* Open the tar on sink and write its configs/ entry. */
static int tar_open(layer_tar *t, gz_stream *sink, int64_t created, fbc_error *err)
{
	memset(t, 0, sizeof(*t));
	fbc_buf_init(&t->path, 0);
	t->created = created;
	t->a = archive_write_new();
	t->e = archive_entry_new();
	if (!t->a || !t->e)
		return fbc_error_set(err, FBC_ENOMEM, NULL, "out of memory");
	/* pax only where ustar cannot say it (long names): no atime/ctime records */
	if (archive_write_set_format_pax_restricted(t->a) != ARCHIVE_OK ||
	    archive_write_set_bytes_in_last_block(t->a, 1) != ARCHIVE_OK ||
	    archive_write_open2(t->a, sink, NULL, tar_write, NULL, NULL) != ARCHIVE_OK)
		return fbc_error_set(err, FBC_EINTERNAL, NULL, "tar: %s",
				     archive_error_string(t->a));
	return add_entry(t->a, t->e, "configs/", true, NULL, created, err);
}

/* configs/<name>/ and configs/<name>/catalog.json; the body is then freed. */
static int tar_group(layer_tar *t, group *g, fbc_error *err)
{
	int rc;

	fbc_buf_reset(&t->path);
	if (fbc_buf_printf(&t->path, "configs/%s", g->key))
		return fbc_error_set(err, FBC_ENOMEM, NULL, "out of memory");
	if ((rc = add_entry(t->a, t->e, t->path.data, true, NULL, t->created, err)))
		return rc;
	if (fbc_buf_puts(&t->path, "catalog.json"))
		return fbc_error_set(err, FBC_ENOMEM, NULL, "out of memory");
	if ((rc = add_entry(t->a, t->e, t->path.data, false, &g->body, t->created, err)))
		return rc;
	g->written = true;
	return 0;
}

static int tar_close(layer_tar *t, fbc_error *err)
{
	if (archive_write_close(t->a) != ARCHIVE_OK)
		return fbc_error_set(err, FBC_EINTERNAL, NULL, "tar: %s",
				     archive_error_string(t->a));
	return 0;
}

static int cmp_group_ptr(const void *a, const void *b)
{
	return strcmp((*(group *const *)a)->key, (*(group *const *)b)->key);
}

/* Write the pending groups that sort before every group still to come, the
 * next one being named next (NULL: none; then write them all, sorted). */
static int flush_groups(collect *c, const char *next, fbc_error *err)
{
	group **pend = NULL;
	size_t np = 0;
	int rc = 0;

	if (!next) {
		if (c->n > c->first_pending &&
		    !(pend = malloc((c->n - c->first_pending) * sizeof(*pend))))
			return fbc_error_set(err, FBC_ENOMEM, NULL, "out of memory");
		for (size_t i = c->first_pending; i < c->n; i++)
			if (!c->groups[i].written)
				pend[np++] = &c->groups[i];
		qsort(pend, np, sizeof(*pend), cmp_group_ptr);
		for (size_t i = 0; i < np && rc == 0; i++)
			rc = tar_group(c->tar, pend[i], err);
		free(pend);
		return rc;
	}
	for (;;) {
		group *min = NULL;

		for (size_t i = c->first_pending; i < c->n; i++)
			if (!c->groups[i].written &&
			    (!min || strcmp(c->groups[i].key, min->key) < 0))
				min = &c->groups[i];
		/* a later name that min's is a prefix of may sort before it */
		if (!min || !strncmp(next, min->name, strlen(min->name)))
			break;
		if ((rc = tar_group(c->tar, min, err)))
			return rc;
		/* keep the larger buffer for the next group's body */
		if (min->body.cap > c->spare.cap) {
			fbc_buf t = c->spare;

			c->spare = min->body;
			min->body = t;
		}
		fbc_buf_dispose(&min->body);
		while (c->first_pending < c->n && c->groups[c->first_pending].written)
			c->first_pending++;
	}
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
		if (!c->hold && (rc = flush_groups(c, name, err)))
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
		g->body = c->spare;
		fbc_buf_reset(&g->body);
		fbc_buf_init(&c->spare, 0);
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

/* Layers of at least two blocks are compressed as pigz does it: the tar is
 * cut in fixed 1 MiB blocks, each deflated on its own (raw deflate, primed
 * with the 32 KiB before it as dictionary, ended by a sync flush; the last
 * one finishes the stream), on as many threads as there are cores, and the
 * pieces joined under one gzip header and trailer (CRC-32 combined). The
 * blocks depend on the input only, never on the number of threads, so the
 * bytes — and the digests — are the same on every machine.
 *
 * The tar is streamed: libarchive's output is hashed (the diff_id) and cut
 * into blocks as it is written, and each block is queued for a compression
 * thread as soon as it is known not to be the last one, so deflating
 * overlaps writing the tar. Below two blocks the layer is one plain gzip
 * stream (as it always was), so the first block waits until the second one
 * is full. */
#define GZ_BLOCK       ((size_t)1 << 20)
#define GZ_DICT	       ((size_t)32 << 10)
#define GZ_THREADS_MAX 8

typedef struct gz_block {
	unsigned char *buf; /* dict_len bytes of input before the block, then the block */
	size_t dict_len, len;
	bool last;
	unsigned char *out;
	size_t out_len;
	uLong crc;
	int zr; /* Z_OK, else the failure */
} gz_block;

struct gz_stream {
	int level;
	gz_block **blocks; /* n begun; the array is only resized under lock */
	size_t n, cap;
	size_t queued; /* blocks [0, queued) may be compressed; guarded by lock */
	size_t next;   /* the next block to claim; guarded by lock */
	bool closing;  /* nothing more will be queued; guarded by lock */
	unsigned char *spare[GZ_THREADS_MAX + 2]; /* input buffers to reuse; guarded by lock */
	size_t n_spare;
	pthread_mutex_t lock;
	pthread_cond_t ready;
	pthread_t th[GZ_THREADS_MAX];
	size_t nth;
	bool threads_tried;
	uint64_t total;
	fbc_oci_hasher tar_hash;
	fbc_buf *tar_copy; /* the whole tar as well, when asked for */
	bool oom;
};

static void gz_block_run(gz_block *b, int level)
{
	z_stream z;
	size_t bound;
	const unsigned char *in = b->buf + b->dict_len;

	memset(&z, 0, sizeof(z));
	b->crc = crc32(0L, in, (uInt)b->len);
	if ((b->zr = deflateInit2(&z, level, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY)) != Z_OK)
		return;
	if (b->dict_len && (b->zr = deflateSetDictionary(&z, b->buf, (uInt)b->dict_len)) != Z_OK)
		goto done;
	bound = deflateBound(&z, b->len) + 16;
	if (!(b->out = malloc(bound))) {
		b->zr = Z_MEM_ERROR;
		goto done;
	}
	z.next_in = (Bytef *)in;
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

/* Compress block b (claimed under the lock, which is not held) and give its
 * input buffer back for a later block: the next block copied its dictionary
 * when it began. Returns with the lock held. */
static void gz_run_claimed(gz_stream *s, gz_block *b)
{
	gz_block_run(b, s->level);
	pthread_mutex_lock(&s->lock);
	if (s->n_spare < sizeof(s->spare) / sizeof(s->spare[0]))
		s->spare[s->n_spare++] = b->buf;
	else
		free(b->buf);
	b->buf = NULL;
}

/* Compress queued blocks until none is left and none will come. */
static void *gz_worker(void *arg)
{
	gz_stream *s = arg;

	pthread_mutex_lock(&s->lock);
	for (;;) {
		gz_block *b;

		if (s->next < s->queued) {
			b = s->blocks[s->next++];
			pthread_mutex_unlock(&s->lock);
			gz_run_claimed(s, b);
		} else if (s->closing) {
			break;
		} else {
			pthread_cond_wait(&s->ready, &s->lock);
		}
	}
	pthread_mutex_unlock(&s->lock);
	return NULL;
}

/* Make blocks [0, upto) available to the compression threads (started on
 * first use: one per core but the one writing the tar). */
static void gz_queue(gz_stream *s, size_t upto)
{
	if (!s->threads_tried) {
		long cores = sysconf(_SC_NPROCESSORS_ONLN);

		s->threads_tried = true;
		for (long k = 1; k < cores && s->nth < GZ_THREADS_MAX; k++) {
			if (pthread_create(&s->th[s->nth], NULL, gz_worker, s) != 0)
				break; /* fewer threads: the same bytes, later */
			s->nth++;
		}
	}
	pthread_mutex_lock(&s->lock);
	s->queued = upto;
	pthread_cond_broadcast(&s->ready);
	/* More queued than the threads can start on: the tar is written faster
	 * than it is compressed, so this thread compresses one block too (the
	 * same work, and the input buffers in flight stay few). */
	if (s->queued - s->next > s->nth + 1) {
		gz_block *b = s->blocks[s->next++];

		pthread_mutex_unlock(&s->lock);
		gz_run_claimed(s, b);
	}
	pthread_mutex_unlock(&s->lock);
}

/* Begin block n (the previous one is full). */
static int gz_begin_block(gz_stream *s)
{
	gz_block *b = calloc(1, sizeof(*b));
	gz_block *prev = s->n ? s->blocks[s->n - 1] : NULL;

	if (!b)
		return -1;
	b->dict_len = prev ? GZ_DICT : 0; /* the block before is 1 MiB, longer than that */
	pthread_mutex_lock(&s->lock);
	if (s->n_spare)
		b->buf = s->spare[--s->n_spare];
	pthread_mutex_unlock(&s->lock);
	if (!b->buf && !(b->buf = malloc(GZ_DICT + GZ_BLOCK))) {
		free(b);
		return -1;
	}
	if (prev)
		memcpy(b->buf, prev->buf + prev->dict_len + prev->len - GZ_DICT, GZ_DICT);
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 16;
		gz_block **nb;

		pthread_mutex_lock(&s->lock);
		nb = realloc(s->blocks, cap * sizeof(*nb));
		if (nb) {
			s->blocks = nb;
			s->cap = cap;
		}
		pthread_mutex_unlock(&s->lock);
		if (!nb) {
			free(b->buf);
			free(b);
			return -1;
		}
	}
	/* the workers read s->blocks[i] only for i < queued <= n: no lock needed to append */
	s->blocks[s->n++] = b;
	return 0;
}

static la_ssize_t tar_write(struct archive *a, void *ctx, const void *p, size_t n)
{
	gz_stream *s = ctx;
	const unsigned char *in = p;
	size_t left = n;

	if (s->tar_copy && fbc_buf_append(s->tar_copy, p, n))
		goto oom;
	fbc_oci_hasher_update(&s->tar_hash, p, n);
	s->total += n;
	while (left) {
		gz_block *b = s->n ? s->blocks[s->n - 1] : NULL;
		size_t k;

		if (!b || b->len == GZ_BLOCK) {
			if (gz_begin_block(s))
				goto oom;
			/* a byte after a full block: that block is not the last (and it
			 * has given the new one its dictionary); from the second one on,
			 * the layer is in blocks */
			if (s->n >= 3)
				gz_queue(s, s->n - 1);
			b = s->blocks[s->n - 1];
		}
		k = GZ_BLOCK - b->len < left ? GZ_BLOCK - b->len : left;
		memcpy(b->buf + b->dict_len + b->len, in, k);
		b->len += k;
		in += k;
		left -= k;
	}
	return (la_ssize_t)n;
oom:
	s->oom = true;
	archive_set_error(a, ENOMEM, "tar larger than memory allows");
	return -1;
}

/* Queue blocks [0, queue) too, compress what is queued (this thread helps)
 * and stop the threads. */
static void gz_stream_close(gz_stream *s, size_t queue)
{
	if (queue > s->queued) {
		pthread_mutex_lock(&s->lock);
		s->queued = queue;
		pthread_mutex_unlock(&s->lock);
	}
	pthread_mutex_lock(&s->lock);
	s->closing = true;
	pthread_cond_broadcast(&s->ready);
	pthread_mutex_unlock(&s->lock);
	gz_worker(s); /* this thread helps with what is left */
	for (size_t k = 0; k < s->nth; k++)
		pthread_join(s->th[k], NULL);
	s->nth = 0;
}

static int gz_stream_init(gz_stream *s, int level, fbc_buf *tar_copy, fbc_error *err)
{
	int rc;

	memset(s, 0, sizeof(*s));
	if ((rc = fbc_oci_hasher_init(&s->tar_hash, err)))
		return rc;
	s->level = level;
	s->tar_copy = tar_copy;
	pthread_mutex_init(&s->lock, NULL);
	pthread_cond_init(&s->ready, NULL);
	return 0;
}

static void gz_stream_dispose(gz_stream *s)
{
	if (s->nth)
		gz_stream_close(s, s->queued);
	for (size_t i = 0; i < s->n; i++) {
		free(s->blocks[i]->buf);
		free(s->blocks[i]->out);
		free(s->blocks[i]);
	}
	free(s->blocks);
	for (size_t i = 0; i < s->n_spare; i++)
		free(s->spare[i]);
	fbc_oci_hasher_dispose(&s->tar_hash);
	pthread_mutex_destroy(&s->lock);
	pthread_cond_destroy(&s->ready);
}

static int gzip_buf(fbc_buf *out, const fbc_buf *in, int level, fbc_error *err);

/* The tar is complete: finish the gzip into out (and the diff_id). */
static int gz_stream_finish(gz_stream *s, fbc_buf *out, char diff_id[FBC_OCI_DIGEST_MAX],
			    fbc_error *err)
{
	uLong crc = crc32(0L, Z_NULL, 0);
	size_t total = 0;
	int rc = 0;

	fbc_oci_hasher_final(&s->tar_hash, diff_id);
	if (s->total < 2 * GZ_BLOCK) {
		/* one plain stream, from the (at most two) blocks put together */
		fbc_buf all;

		gz_stream_close(s, 0);
		fbc_buf_init(&all, 0);
		for (size_t i = 0; i < s->n && rc == 0; i++)
			if (fbc_buf_append(&all, s->blocks[i]->buf + s->blocks[i]->dict_len,
					   s->blocks[i]->len))
				rc = fbc_error_set(err, FBC_ENOMEM, NULL, "gzip: out of memory");
		if (rc == 0)
			rc = gzip_buf(out, &all, s->level, err);
		fbc_buf_dispose(&all);
		return rc;
	}
	s->blocks[s->n - 1]->last = true;
	gz_stream_close(s, s->n);
	for (size_t i = 0; i < s->n && rc == 0; i++) {
		if (s->blocks[i]->zr != Z_OK)
			rc = fbc_error_set(
				err, s->blocks[i]->zr == Z_MEM_ERROR ? FBC_ENOMEM : FBC_EINTERNAL,
				NULL, "gzip: deflate of block %zu failed (%d)", i,
				s->blocks[i]->zr);
		total += s->blocks[i]->out_len;
	}
	if (rc == 0 && fbc_buf_reserve(out, total + 18 + 1))
		rc = fbc_error_set(err, FBC_ENOMEM, NULL, "gzip: out of memory");
	if (rc == 0) {
		/* the header zlib writes for {os = 255}: no name, no time; XFL as zlib sets it */
		unsigned char h[10] = {
			0x1f, 0x8b, 8, 0, 0, 0, 0, 0, s->level == 9 ? 2 : (s->level < 2 ? 4 : 0),
			255};
		unsigned char t[8];
		uint32_t isize = (uint32_t)s->total;

		fbc_buf_append(out, h, sizeof(h));
		for (size_t i = 0; i < s->n; i++) {
			fbc_buf_append(out, s->blocks[i]->out, s->blocks[i]->out_len);
			crc = crc32_combine(crc, s->blocks[i]->crc, (z_off_t)s->blocks[i]->len);
		}
		for (int k = 0; k < 4; k++) {
			t[k] = (unsigned char)(crc >> (8 * k));
			t[4 + k] = (unsigned char)(isize >> (8 * k));
		}
		fbc_buf_append(out, t, sizeof(t));
	}
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

int fbc_image_layer(fbc_buf *tar_out, fbc_buf *gz_out, char diff_id[FBC_OCI_DIGEST_MAX],
		    const fbc_catalog *cat, int64_t created, int gzip_level, size_t *n_packages,
		    fbc_error *err)
{
	collect c = {0};
	fbc_buf tar;
	gz_stream s;
	layer_tar t;
	char digest[FBC_OCI_DIGEST_MAX];
	bool stream = false;
	size_t pk = 0;
	int rc;

	memset(&t, 0, sizeof(t));
	fbc_buf_init(&tar, 0);
	fbc_buf_init(&c.spare, 0);
	for (size_t i = 0; i < cat->others.len && !c.hold; i++) {
		const fbc_other *o = FBC_CATALOG_AT(cat->others, fbc_other, i);

		c.hold = !o->package || !o->package[0];
	}
	if ((rc = gz_stream_init(&s, gzip_level ? gzip_level : 6, tar_out ? &tar : NULL, err)))
		goto done;
	stream = true;
	c.tar = &t;
	if ((rc = tar_open(&t, &s, created, err)) ||
	    (rc = fbc_render_catalog_grouped(cat, on_line, &c, err)) ||
	    (rc = flush_groups(&c, NULL, err)) || (rc = tar_close(&t, err))) {
		if (s.oom)
			rc = fbc_error_set(err, FBC_ENOMEM, "layer",
					   "tar larger than memory allows");
		goto done;
	}
	for (size_t i = 0; i < c.n; i++)
		if (strcmp(c.groups[i].name, NOPACKAGE_DIR) != 0)
			pk++;
	if (s.total > UINT32_MAX) {
		rc = fbc_error_set(err, FBC_ELIMIT, "layer", "the layer is larger than 4 GiB");
		goto done;
	}
	if ((rc = gz_stream_finish(&s, gz_out, digest, err)))
		goto done;
	if (n_packages)
		*n_packages = pk;
	if (diff_id)
		memcpy(diff_id, digest, sizeof(digest));
	if (tar_out) {
		fbc_buf_dispose(tar_out);
		*tar_out = tar;
		fbc_buf_init(&tar, 0);
	}
done:
	tar_dispose(&t);
	if (stream)
		gz_stream_dispose(&s);
	for (size_t i = 0; i < c.n; i++) {
		free(c.groups[i].key);
		fbc_buf_dispose(&c.groups[i].body);
	}
	free(c.groups);
	fbc_buf_dispose(&c.spare);
	fbc_buf_dispose(&tar);
	return rc;
}
