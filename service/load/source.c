/*
 * Reading a load's files (see source.h).
 */
#include "service/load/source.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/*
 * File contents live in their own anonymous mappings, not in the malloc
 * heap: a freed multi-megabyte malloc block makes glibc raise its mmap
 * threshold, after which the next files and the catalog's arena chunks come
 * from the heaps of the parser threads and freed space stays resident
 * (about 2 MB more peak RSS on the real catalog). MAP_POPULATE: every page
 * is written by read() at once, so the kernel provides them in one call
 * instead of one fault a page (a 3 MB file: 750 faults, ~12% of its load).
 */
static char *data_alloc(size_t n)
{
	void *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE,
		       -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

static char *data_grow(char *p, size_t old, size_t n)
{
	void *q = mremap(p, old, n, MREMAP_MAYMOVE);

	return q == MAP_FAILED ? NULL : q;
}

static void data_free(char *p, size_t n)
{
	if (p != NULL)
		munmap(p, n);
}

void fbc_load_rbuf_dispose(fbc_load_rbuf *rb)
{
	data_free(rb->p, rb->size);
	rb->p = NULL;
	rb->size = 0;
}

/* Read a whole file of at most max bytes into rb's buffer (grown as
 * needed): *out (NUL-terminated) and *out_len. Returns 0, FBC_ELIMIT,
 * FBC_EIO (errno kept) or FBC_ENOMEM; rb keeps its buffer either way. */
static int read_file(fbc_load_rbuf *rb, char **out, size_t *out_len, const char *path, size_t max,
		     bool *is_dir)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	size_t cap = 0, len = 0;
	int rc = 0, saved;

	*is_dir = false;
	if (fd < 0)
		return FBC_EIO;
	if (fstat(fd, &st) != 0) {
		rc = FBC_EIO;
		goto done;
	}
	if (S_ISDIR(st.st_mode)) {
		*is_dir = true;
		errno = EISDIR;
		rc = FBC_EIO;
		goto done;
	}
	if (!S_ISREG(st.st_mode)) {
		errno = EINVAL;
		rc = FBC_EIO;
		goto done;
	}
	if ((size_t)st.st_size > max) {
		rc = FBC_ELIMIT;
		goto done;
	}
	/* room for the file, a byte to see it has not grown, and the NUL */
	cap = (size_t)st.st_size + 1;
	if (rb->size < cap + 1) {
		fbc_load_rbuf_dispose(rb);
		if ((rb->p = data_alloc(cap + 1)) == NULL) {
			rc = FBC_ENOMEM;
			goto done;
		}
		rb->size = cap + 1;
	}
	cap = rb->size - 1;
	for (;;) {
		ssize_t n;
		if (len == cap) {
			char *nb;
			size_t ncap;
			if (cap > max) {
				rc = FBC_ELIMIT; /* the file grew past the limit */
				goto done;
			}
			ncap = cap * 2 > max + 1 ? max + 1 : cap * 2;
			nb = data_grow(rb->p, rb->size, ncap + 1);
			if (nb == NULL) {
				rc = FBC_ENOMEM;
				goto done;
			}
			rb->p = nb;
			rb->size = ncap + 1;
			cap = ncap;
		}
		n = read(fd, rb->p + len, cap - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			rc = FBC_EIO;
			goto done;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	if (len > max) {
		rc = FBC_ELIMIT;
		goto done;
	}
	rb->p[len] = 0;
	*out = rb->p;
	*out_len = len;
done:
	saved = errno;
	close(fd);
	errno = saved;
	return rc;
}

/* The reason in a tree backend's message ("cannot open: No such file" ->
 * "No such file"), so findings read as they did when the loader walked
 * directories itself. */
const char *fbc_load_tree_reason(const fbc_error *e)
{
	const char *colon = strstr(e->message, ": ");

	if (strncmp(e->message, "cannot ", 7) == 0 && colon != NULL)
		return colon + 2;
	return e->message;
}

/* Read path (root-relative, no link) of at most max bytes, from disk into
 * rb's buffer (NULL: one of its own). Returns 0, FBC_ELIMIT, FBC_ENOMEM or
 * another code with *reason set to why. */
int fbc_load_src_read(const fbc_load_source *src, fbc_load_src_data *out, fbc_load_rbuf *rb,
		      const char *path, size_t max, char *reason, size_t reason_len)
{
	fbc_error terr;
	int rc;

	memset(out, 0, sizeof(*out));
	reason[0] = 0;
	if (src->disk != NULL) {
		char *abs = fbc_tree_join(src->disk, path);
		bool is_dir = false;

		if (abs == NULL)
			return FBC_ENOMEM;
		char *data = NULL;

		rc = read_file(rb ? rb : &out->own, &data, &out->len, abs, max, &is_dir);
		if (rc == FBC_EIO)
			snprintf(reason, reason_len, "%s",
				 is_dir ? "is a directory" : strerror(errno));
		free(abs);
		out->data = data;
		return rc;
	}
	fbc_error_init(&terr);
	rc = fbc_tree_read(src->t, &out->blob, path, max, &terr);
	if (rc != 0 && rc != FBC_ENOMEM && rc != FBC_ELIMIT)
		snprintf(reason, reason_len, "%s", fbc_load_tree_reason(&terr));
	out->data = out->blob.data;
	out->len = out->blob.len;
	return rc;
}

void fbc_load_src_release(const fbc_load_source *src, fbc_load_src_data *d)
{
	fbc_load_rbuf_dispose(&d->own);
	fbc_tree_blob_release(src->t, &d->blob);
	memset(d, 0, sizeof(*d));
}
