/*
 * fbc_load_tree: walk (§1.1), .indexignore (§1.2), and parse files on a
 * small thread pool while the calling thread walks on and delivers findings
 * and metas in walk order. Workers run at most `window` files ahead of
 * delivery, so memory holds a bounded number of parsed files, never the
 * whole catalog. A file is handed to the workers as soon as the walk knows
 * whether it is loaded: once no directory above it has an .indexignore the
 * walk has not read yet (a later pattern could only come from there).
 */
#include "service/load/ignore.h"
#include "service/load/internal.h"
#include "service/load/json_arena.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_THREADS FBC_LOAD_MAX_WORKERS
/* Workers parse ahead of delivery by 2 files a thread, or further while the
 * files parsed and not yet delivered hold at most this much input: one large
 * file then no longer leaves the other threads waiting, and memory stays
 * bounded. */
#define AHEAD_BYTES ((size_t)8 << 20)

typedef struct entry {
	char *rel;		  /* slash-separated, relative to the root */
	char *path;		  /* tree path to read (a link's target), root-relative */
	char *finding;		  /* non-NULL: not a loadable file, report this (L1) */
	const char *code;	  /* of the finding */
	size_t size;		  /* from the tree listing, for max_total_bytes */
	char id[FBC_TREE_ID_MAX]; /* content id from the tree ("" unknown): the file cache's key */
	fbc_vec items;		  /* of fbc_load_item, filled by the parser */
	int rc;			  /* FBC_ENOMEM from the parser */
	bool done;
	bool decided; /* no .indexignore pattern read later can match it */
} entry;

typedef struct walk {
	fbc_tree *t;
	fbc_vec entries; /* of entry *, in walk order (NULL: moved to kept) */
	fbc_ignore *ig;
	const fbc_load_limits *lim;
	size_t seen;	   /* entries found, to stop a runaway walk */
	size_t ig_pending; /* directories being walked whose .indexignore is not read yet */
	fbc_error *err;
	/* selection (.indexignore, max_files, max_total_bytes), in walk order */
	fbc_vec kept;	 /* of entry *: the files loaded, in walk order */
	size_t selected; /* entries[0, selected) are kept or dropped */
	size_t total;	 /* bytes of the kept */
	bool limited;	 /* a LIMIT entry is kept: nothing after it is */
	/* called after each directory (the pool takes what was selected) */
	int (*progress)(void *ctx);
	void *progress_ctx;
	bool stop; /* the load ends: walk no further */
} walk;

static int add_entry(walk *w, const char *rel, const char *path, size_t size, const char *code,
		     const char *fmt, ...) __attribute__((format(printf, 6, 7)));

static int add_entry(walk *w, const char *rel, const char *path, size_t size, const char *code,
		     const char *fmt, ...)
{
	entry *e = calloc(1, sizeof(*e)), **slot = e ? fbc_vec_push(&w->entries) : NULL;

	if (slot == NULL) {
		free(e);
		return fbc_error_set(w->err, FBC_ENOMEM, rel, "out of memory");
	}
	*slot = e;
	fbc_vec_init(&e->items, sizeof(fbc_load_item));
	e->decided = w->ig_pending == 0;
	e->size = size;
	e->rel = strdup(rel);
	e->path = strdup(path);
	if (e->rel == NULL || e->path == NULL)
		return fbc_error_set(w->err, FBC_ENOMEM, rel, "out of memory");
	if (fmt != NULL) {
		va_list ap;
		va_start(ap, fmt);
		if (vasprintf(&e->finding, fmt, ap) < 0)
			e->finding = NULL;
		va_end(ap);
		if (e->finding == NULL)
			return fbc_error_set(w->err, FBC_ENOMEM, rel, "out of memory");
		e->code = code;
	}
	return 0;
}

/* The content id of the entry just added (a plain file). */
static void set_last_id(walk *w, const char *id)
{
	entry *e = *FBC_VEC_AT(&w->entries, entry *, w->entries.len - 1);

	snprintf(e->id, sizeof(e->id), "%s", id);
}

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

/* A parser thread's file buffer, reused from one file to the next so that
 * its pages are provided once, not once a file: a data_alloc'd mapping of
 * size bytes (0: none yet), unmapped when the load ends. */
typedef struct rbuf {
	char *p;
	size_t size;
} rbuf;

static void rbuf_dispose(rbuf *rb)
{
	data_free(rb->p, rb->size);
	rb->p = NULL;
	rb->size = 0;
}

/* Read a whole file of at most max bytes into rb's buffer (grown as
 * needed): *out (NUL-terminated) and *out_len. Returns 0, FBC_ELIMIT,
 * FBC_EIO (errno kept) or FBC_ENOMEM; rb keeps its buffer either way. */
static int read_file(rbuf *rb, char **out, size_t *out_len, const char *path, size_t max,
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
		rbuf_dispose(rb);
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

/* Where a load reads file bytes: through the tree, or straight from disk
 * for a directory tree (same bytes; read_file keeps contents out of the
 * malloc heap, see data_alloc). */
typedef struct source {
	fbc_tree *t;
	const char *disk; /* fbc_tree_dir_path(t), or NULL */
} source;

typedef struct src_data {
	const char *data;
	size_t len;
	rbuf own;	    /* read_file's buffer when the caller lends none */
	fbc_tree_blob blob; /* the tree's blob (other backends) */
} src_data;

/* The reason in a tree backend's message ("cannot open: No such file" ->
 * "No such file"), so findings read as they did when the loader walked
 * directories itself. */
static const char *why(const fbc_error *e)
{
	const char *colon = strstr(e->message, ": ");

	if (strncmp(e->message, "cannot ", 7) == 0 && colon != NULL)
		return colon + 2;
	return e->message;
}

/* Read path (root-relative, no link) of at most max bytes, from disk into
 * rb's buffer (NULL: one of its own). Returns 0, FBC_ELIMIT, FBC_ENOMEM or
 * another code with *reason set to why. */
static int src_read(const source *src, src_data *out, rbuf *rb, const char *path, size_t max,
		    char *reason, size_t reason_len)
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
		snprintf(reason, reason_len, "%s", why(&terr));
	out->data = out->blob.data;
	out->len = out->blob.len;
	return rc;
}

static void src_release(const source *src, src_data *d)
{
	rbuf_dispose(&d->own);
	fbc_tree_blob_release(src->t, &d->blob);
	memset(d, 0, sizeof(*d));
}

static int add_ignore_file(walk *w, const source *src, const char *dir_rel, const char *path)
{
	src_data d;
	char reason[256];
	int rc = src_read(src, &d, NULL, path, w->lim->max_file_bytes, reason, sizeof(reason));

	if (rc == FBC_ENOMEM)
		return fbc_error_set(w->err, rc, path, "out of memory");
	if (rc != 0)
		return 0; /* an unreadable .indexignore adds no patterns */
	rc = fbc_ignore_add_file(w->ig, dir_rel, d.data != NULL ? d.data : "", d.len, w->err);
	src_release(src, &d);
	return rc;
}

/* Entries the walk may visit (files, directories, ignored files) before
 * it gives up: a generous multiple of max_files, without overflow. */
static size_t walk_cap(const fbc_load_limits *lim)
{
	return lim->max_files > SIZE_MAX / 8 ? SIZE_MAX / 2 : lim->max_files * 4 + 1024;
}

/* A symbolic link at crel: inside the root, to a file, it is read as that
 * file; anything else is L1 (never followed outside the root). */
static int walk_link(walk *w, const source *src, const char *rel, const char *crel,
		     const char *name)
{
	fbc_tree_entry fe;
	fbc_error ferr;
	int rc;

	memset(&fe, 0, sizeof(fe));
	fbc_error_init(&ferr);
	rc = fbc_tree_follow(w->t, &fe, crel, &ferr);
	if (rc == FBC_ENOMEM)
		return fbc_error_set(w->err, rc, crel, "out of memory");
	if (rc == FBC_EINVAL)
		return add_entry(w, crel, crel, 0, "L1",
				 "open %s: symlink resolves outside the catalog root", crel);
	if (rc != 0)
		return add_entry(w, crel, crel, 0, "L1", "open %s: %s", crel,
				 rc == FBC_ENOTFOUND ? strerror(ENOENT)
				 : rc == FBC_ELIMIT  ? strerror(ELOOP)
						     : why(&ferr));
	if (fe.kind == FBC_TREE_DIR)
		rc = add_entry(w, crel, crel, 0, "L1", "read %s: is a directory", crel);
	else if (strcmp(name, ".indexignore") == 0)
		rc = add_ignore_file(w, src, rel, fe.name);
	else if (fe.kind != FBC_TREE_FILE) /* a FIFO is never opened: it could block */
		rc = add_entry(w, crel, crel, 0, "L1", "read %s: not a regular file", crel);
	else if ((rc = add_entry(w, crel, fe.name, (size_t)fe.size, NULL, NULL)) == 0)
		set_last_id(w, fe.id);
	fbc_tree_entry_dispose(&fe);
	return rc;
}

static int walk_dir(walk *w, const source *src, const char *rel)
{
	fbc_vec ents;
	fbc_error lerr;
	bool ig_here = false;
	int rc;

	fbc_vec_init(&ents, sizeof(fbc_tree_entry));
	fbc_error_init(&lerr);
	rc = fbc_tree_list(w->t, &ents, rel, &lerr);
	if (rc == FBC_ENOMEM) {
		rc = fbc_error_set(w->err, rc, rel, "out of memory");
		goto done;
	}
	if (rc != 0) {
		rc = add_entry(w, rel[0] ? rel : ".", rel, 0, "L1", "open %s: %s",
			       rel[0] ? rel : ".", why(&lerr));
		goto done;
	}
	fbc_tree_entries_sort(&ents);
	/* files before this directory's .indexignore (in walk order) wait for it */
	for (size_t i = 0; i < ents.len && !ig_here; i++)
		ig_here = strcmp(FBC_VEC_AT(&ents, fbc_tree_entry, i)->name, ".indexignore") == 0;
	w->ig_pending += ig_here;
	for (size_t i = 0; i < ents.len && rc == 0 && !w->stop; i++) {
		fbc_tree_entry *te = FBC_VEC_AT(&ents, fbc_tree_entry, i);
		char *crel = fbc_tree_join(rel, te->name);
		bool is_ig = strcmp(te->name, ".indexignore") == 0;

		if (crel == NULL) {
			rc = fbc_error_set(w->err, FBC_ENOMEM, rel, "out of memory");
		} else if (++w->seen > walk_cap(w->lim)) {
			/* a tree this large is refused before it exhausts memory */
			rc = add_entry(w, crel, crel, 0, "LIMIT",
				       "the tree has more than %zu entries (max_files limit)",
				       walk_cap(w->lim));
			w->seen = SIZE_MAX / 2;
			free(crel);
			break;
		} else if (te->kind == FBC_TREE_DIR) {
			rc = walk_dir(w, src, crel);
		} else if (te->kind == FBC_TREE_LINK) {
			rc = walk_link(w, src, rel, crel, te->name);
		} else if (strcmp(te->name, ".indexignore") == 0) {
			if (te->kind == FBC_TREE_FILE)
				rc = add_ignore_file(w, src, rel, crel);
		} else if (te->kind != FBC_TREE_FILE) {
			rc = add_entry(w, crel, crel, 0, "L1", "read %s: not a regular file", crel);
		} else if ((rc = add_entry(w, crel, crel, (size_t)te->size, NULL, NULL)) == 0) {
			set_last_id(w, te->id);
		}
		free(crel);
		if (is_ig && ig_here) {
			w->ig_pending--;
			ig_here = false;
		}
	}
	if (ig_here)
		w->ig_pending--;
	if (rc == 0 && w->progress != NULL)
		rc = w->progress(w->progress_ctx);
done:
	fbc_tree_entries_dispose(&ents);
	return rc;
}

/* Read and parse one entry's file into its items. True when the file was
 * read and parsed (its items are a function of its content and the limits). */
static bool parse_file(entry *e, const source *src, const fbc_load_limits *lim,
		       const fbc_load_stagecall *sc, rbuf *rb)
{
	src_data d;
	char reason[256];
	int rc;

	rc = src_read(src, &d, rb, e->path, lim->max_file_bytes, reason, sizeof(reason));
	if (rc == FBC_ELIMIT) {
		e->rc = fbc_load_item_finding(&e->items, "LIMIT", 0,
					      "file exceeds the max_file_bytes limit (%zu)",
					      lim->max_file_bytes);
	} else if (rc == FBC_ENOMEM) {
		e->rc = rc;
	} else if (rc != 0) {
		e->rc = fbc_load_item_finding(&e->items, "L1", 0, "read %s: %s", e->rel, reason);
	} else {
		/* a staged parse's trees live in the thread's arena, if it has one */
		bool arena = sc != NULL && fbc_json_arena_enable(true);

		e->rc = fbc_load_parse_data_staged(&e->items, d.data != NULL ? d.data : "", d.len,
						   lim, sc);
		if (arena) {
			fbc_json_arena_reset();
			fbc_json_arena_enable(false);
		}
	}
	src_release(src, &d);
	return rc == 0 && e->rc == 0;
}

/* The stage's file cache: the results of a file, from it (true) or to it. */
static bool cached_results(entry *e, const fbc_load_stage *stage)
{
	fbc_load_result *res = NULL;
	size_t n = 0;

	if (!stage->lookup(stage->ctx, e->id, &res, &n))
		return false;
	for (size_t i = 0; i < n; i++) {
		fbc_load_item *it = fbc_vec_push(&e->items);

		if (it == NULL) {
			for (size_t k = i; k < n; k++)
				free((char *)res[k].message);
			e->rc = FBC_ENOMEM;
			break;
		}
		it->is_meta = res[i].is_meta;
		it->prepared = res[i].prepared;
		it->line = res[i].line;
		it->code = res[i].code;
		it->message = (char *)res[i].message;
	}
	free(res);
	return true;
}

static void offer_results(entry *e, const fbc_load_stage *stage)
{
	fbc_load_result *res = calloc(e->items.len ? e->items.len : 1, sizeof(*res));

	if (res == NULL)
		return;
	for (size_t i = 0; i < e->items.len; i++) {
		const fbc_load_item *it = FBC_VEC_AT(&e->items, fbc_load_item, i);

		if (it->is_meta && it->prepared == NULL)
			goto done; /* prepare failed (out of memory): not worth keeping */
		res[i] = (fbc_load_result){it->is_meta, it->prepared, it->line, it->code,
					   it->message};
	}
	stage->store(stage->ctx, e->id, e->size, res, e->items.len);
done:
	free(res);
}

/* Parse one entry into its items (any thread; `worker` unique to it). */
static void parse_entry(entry *e, const source *src, const fbc_load_limits *lim,
			const fbc_load_stage *stage, unsigned worker, rbuf *rb)
{
	fbc_load_stagecall sc = {stage, worker, e->rel};
	bool cacheable = stage != NULL && stage->lookup != NULL && stage->store != NULL &&
			 e->id[0] && e->finding == NULL;

	if (e->finding != NULL) {
		e->rc = fbc_load_item_finding(&e->items, e->code, 0, "%s", e->finding);
		return;
	}
	if (cacheable && cached_results(e, stage))
		return;
	if (parse_file(e, src, lim, stage != NULL ? &sc : NULL, rb) && cacheable)
		offer_results(e, stage);
}

typedef struct deliver {
	fbc_meta_fn fn;
	void *ctx;
	fbc_diags *diags;
	const fbc_load_limits *lim;
	const fbc_load_stage *stage; /* NULL: plain load */
	const source *src;	     /* NULL: fbc_load_buffer */
	size_t blobs;
	bool stop;
	fbc_error *err;
	struct walk *walk; /* the tree's walk, when walking */
} deliver;

/* Hand one file's items to diags and the callback, in order. */
static int deliver_items(deliver *dv, const char *file, fbc_vec *items)
{
	for (size_t i = 0; i < items->len; i++) {
		fbc_load_item *it = FBC_VEC_AT(items, fbc_load_item, i);
		fbc_loc loc = {file, it->line};
		int rc;

		if (!it->is_meta) {
			if (dv->diags != NULL && fbc_diags_add(dv->diags, it->code, &loc, NULL,
							       NULL, NULL, "%s", it->message) != 0)
				return fbc_error_set(dv->err, FBC_ENOMEM, file, "out of memory");
			continue;
		}
		if (++dv->blobs > dv->lim->max_blobs) {
			dv->stop = true;
			if (dv->diags != NULL &&
			    fbc_diags_add(dv->diags, "LIMIT", &loc, NULL, NULL, NULL,
					  "the catalog has more than %zu objects (max_blobs limit)",
					  dv->lim->max_blobs) != 0)
				return fbc_error_set(dv->err, FBC_ENOMEM, file, "out of memory");
			return 0;
		}
		{
			fbc_meta m = {it->schema, it->package, it->name,
				      it->blob,	  loc,	       it->prepared};
			it->prepared = NULL; /* handed over */
			rc = dv->fn(dv->ctx, &m, dv->err);
		}
		if (rc != 0) {
			dv->stop = true;
			return rc;
		}
	}
	return 0;
}

typedef struct pool {
	pthread_mutex_t mu;
	pthread_cond_t work; /* workers wait for room in the window, or files */
	pthread_cond_t done; /* the deliverer waits for its next file */
	fbc_vec *kept;	     /* of entry *, grown by the walk under mu */
	size_t n;	     /* entries of kept the workers may take */
	bool walking;	     /* more may come */
	size_t next;	     /* next entry to claim */
	size_t delivered;    /* entries handed over so far */
	size_t window;
	size_t ahead; /* bytes of the entries claimed but not delivered */
	bool stop;
	unsigned started;	/* worker threads running */
	unsigned next_worker;	/* worker indexes, handed out at start */
	rbuf bufs[MAX_THREADS]; /* each worker's file buffer */
	const fbc_load_limits *lim;
	const fbc_load_stage *stage;
	const source *src;
	deliver *dv;
	pthread_t th[MAX_THREADS];
} pool;

static entry *kept_at(const pool *p, size_t i)
{
	return *FBC_VEC_AT(p->kept, entry *, i);
}

static void *worker(void *arg)
{
	pool *p = arg;
	unsigned self;

	bool arena = p->stage != NULL && fbc_json_arena_attach();

	pthread_mutex_lock(&p->mu);
	self = p->next_worker++;
	while (!p->stop && (p->next < p->n || p->walking)) {
		if (p->next >= p->n || (p->next >= p->delivered + p->window &&
					p->ahead + kept_at(p, p->next)->size > AHEAD_BYTES)) {
			pthread_cond_wait(&p->work, &p->mu);
			continue;
		}
		entry *e = kept_at(p, p->next++);
		p->ahead += e->size;
		pthread_mutex_unlock(&p->mu);
		parse_entry(e, p->src, p->lim, p->stage, self, &p->bufs[self]);
		pthread_mutex_lock(&p->mu);
		e->done = true;
		pthread_cond_broadcast(&p->done);
	}
	pthread_mutex_unlock(&p->mu);
	/* nothing left to claim: the buffer goes now, not after delivery */
	rbuf_dispose(&p->bufs[self]);
	if (arena)
		fbc_json_arena_detach();
	return NULL;
}

static unsigned thread_count(const fbc_load_limits *lim)
{
	unsigned t = lim->threads;

	if (t == 0) {
		long c = sysconf(_SC_NPROCESSORS_ONLN);
		t = c > 0 ? (unsigned)c : 1;
	}
	return t > MAX_THREADS ? MAX_THREADS : t;
}

/* Keep or drop the walk's entries in order, as far as each is decided (all
 * of them: the walk is over): .indexignore, then max_files and
 * max_total_bytes; a LIMIT entry is the last one kept. */
static int select_entries(walk *w, bool all)
{
	const fbc_load_limits *l = w->lim;

	while (!w->limited && w->selected < w->entries.len) {
		entry **slot = FBC_VEC_AT(&w->entries, entry *, w->selected), *e = *slot, **k;

		if (!all && !e->decided)
			break;
		w->selected++;
		if (e->code == NULL || strcmp(e->code, "LIMIT") != 0) {
			if (fbc_ignore_match(w->ig, e->rel))
				continue;
		}
		if (w->kept.len >= l->max_files || w->total + e->size > l->max_total_bytes ||
		    e->size > l->max_total_bytes) {
			free(e->finding);
			e->code = "LIMIT";
			if (asprintf(&e->finding,
				     w->kept.len >= l->max_files ? "the catalog has more than %zu "
								   "files (max_files limit)"
								 : "the catalog is larger than %zu "
								   "bytes (max_total_bytes "
								   "limit)",
				     w->kept.len >= l->max_files ? l->max_files
								 : l->max_total_bytes) < 0) {
				e->finding = NULL;
				return fbc_error_set(w->err, FBC_ENOMEM, e->rel, "out of memory");
			}
		} else {
			w->total += e->size;
		}
		if ((k = fbc_vec_push(&w->kept)) == NULL)
			return fbc_error_set(w->err, FBC_ENOMEM, e->rel, "out of memory");
		*k = e;
		*slot = NULL;
		if (strcmp(e->code ? e->code : "", "LIMIT") == 0)
			w->limited = true;
	}
	return 0;
}

/* Deliver entries in order from p->delivered on: waiting for each (block)
 * or as long as the next one is done. */
static int deliver_ready(pool *p, bool block)
{
	deliver *dv = p->dv;
	int rc = 0;

	for (;;) {
		entry *e;

		if (p->started > 0)
			pthread_mutex_lock(&p->mu);
		if (p->delivered >= p->n || p->stop) {
			if (p->started > 0)
				pthread_mutex_unlock(&p->mu);
			return 0;
		}
		e = kept_at(p, p->delivered);
		if (p->started == 0) {
			parse_entry(e, p->src, p->lim, p->stage, 0, &p->bufs[0]);
		} else {
			while (!e->done && block)
				pthread_cond_wait(&p->done, &p->mu);
			pthread_mutex_unlock(&p->mu);
			if (!e->done)
				return 0;
		}
		if (e->rc != 0)
			rc = fbc_error_set(dv->err, e->rc, e->rel, "out of memory");
		else
			rc = deliver_items(dv, e->rel, &e->items);
		fbc_load_items_clear_staged(&e->items, dv->stage);
		fbc_vec_dispose(&e->items);
		if (p->started > 0) {
			pthread_mutex_lock(&p->mu);
			p->ahead -= e->size;
		}
		p->delivered++;
		if (rc != 0 || dv->stop)
			p->stop = true;
		if (p->started > 0) {
			pthread_cond_broadcast(&p->work);
			pthread_mutex_unlock(&p->mu);
		}
		if (rc != 0 || dv->stop)
			return rc;
	}
}

/* After each directory of the walk: what is decided goes to the workers,
 * what they finished is delivered. */
static int walk_progress(void *ctx)
{
	pool *p = ctx;
	deliver *dv = p->dv;
	walk *w = dv->walk;
	int rc;

	pthread_mutex_lock(&p->mu);
	rc = select_entries(w, false);
	if (p->n < w->kept.len) {
		p->n = w->kept.len;
		pthread_cond_broadcast(&p->work);
	}
	pthread_mutex_unlock(&p->mu);
	if (rc == 0)
		rc = deliver_ready(p, false);
	if (rc != 0 || dv->stop)
		w->stop = true;
	return rc;
}

/* Walk the tree from the root and load what it selects: parsed on the
 * worker threads from the first file the walk decides on (on this thread
 * after the walk when there is one thread), delivered here in walk order. */
static int walk_and_load(walk *w, deliver *dv)
{
	unsigned nt = thread_count(dv->lim);
	pool p;
	int rc = 0;

	memset(&p, 0, sizeof(p));
	p.kept = &w->kept;
	p.window = (size_t)nt * 2;
	p.lim = dv->lim;
	p.stage = dv->stage;
	p.src = dv->src;
	p.dv = dv;
	p.walking = true;
	dv->walk = w;
	if (nt > 1) {
		pthread_mutex_init(&p.mu, NULL);
		pthread_cond_init(&p.work, NULL);
		pthread_cond_init(&p.done, NULL);
		for (unsigned i = 0; i < nt; i++) {
			if (pthread_create(&p.th[i], NULL, worker, &p) != 0)
				break;
			p.started++;
		}
	}
	if (p.started > 0) {
		w->progress = walk_progress;
		w->progress_ctx = &p;
	}
	/* one walk both collects files and reads every .indexignore; a file is
	 * matched once no .indexignore still to be read applies to it */
	rc = walk_dir(w, dv->src, "");
	if (p.started > 0)
		pthread_mutex_lock(&p.mu);
	if (rc == 0 && !w->stop)
		rc = select_entries(w, true);
	p.n = w->kept.len;
	p.walking = false;
	if (rc != 0)
		p.stop = true;
	if (p.started > 0) {
		pthread_cond_broadcast(&p.work);
		pthread_mutex_unlock(&p.mu);
	}
	/* parsing here (one thread): an arena here too, for the staged parses */
	bool arena = p.started == 0 && dv->stage != NULL && fbc_json_arena_attach();

	if (rc == 0 && !w->stop)
		rc = deliver_ready(&p, true);
	if (p.started > 0) {
		pthread_mutex_lock(&p.mu);
		p.stop = true;
		pthread_cond_broadcast(&p.work);
		pthread_mutex_unlock(&p.mu);
		for (unsigned i = 0; i < p.started; i++)
			pthread_join(p.th[i], NULL);
		pthread_mutex_destroy(&p.mu);
		pthread_cond_destroy(&p.work);
		pthread_cond_destroy(&p.done);
	}
	for (unsigned i = 0; i < MAX_THREADS; i++)
		rbuf_dispose(&p.bufs[i]);
	if (arena)
		fbc_json_arena_detach();
	return rc;
}

/* Entries (entry *; NULL slots skipped) and the vector. */
static void entries_dispose(fbc_vec *v, const fbc_load_stage *stage)
{
	for (size_t i = 0; i < v->len; i++) {
		entry *e = *FBC_VEC_AT(v, entry *, i);

		if (e == NULL)
			continue;
		free(e->rel);
		free(e->path);
		free(e->finding);
		fbc_load_items_clear_staged(&e->items, stage);
		fbc_vec_dispose(&e->items);
		free(e);
	}
	fbc_vec_dispose(v);
}

int fbc_load_dir(const char *root, const fbc_load_limits *lim, fbc_meta_fn fn, void *ctx,
		 fbc_diags *diags, fbc_error *err)
{
	return fbc_load_dir_staged(root, lim, NULL, fn, ctx, diags, err);
}

int fbc_load_open_dir(fbc_tree **out, const char *root, fbc_error *err)
{
	struct stat st;

	*out = NULL;
	if (stat(root, &st) != 0 || !S_ISDIR(st.st_mode))
		return fbc_error_set(err, errno == ENOENT ? FBC_ENOTFOUND : FBC_EINVAL, root,
				     "\"%s\" is not a directory", root);
	return fbc_tree_open_dir(out, root, err);
}

int fbc_load_dir_staged(const char *root, const fbc_load_limits *lim, const fbc_load_stage *stage,
			fbc_meta_fn fn, void *ctx, fbc_diags *diags, fbc_error *err)
{
	fbc_tree *t = NULL;
	int rc = fbc_load_open_dir(&t, root, err);

	if (rc == 0)
		rc = fbc_load_tree_staged(t, lim, stage, fn, ctx, diags, err);
	fbc_tree_free(t);
	return rc;
}

int fbc_load_tree(fbc_tree *t, const fbc_load_limits *lim, fbc_meta_fn fn, void *ctx,
		  fbc_diags *diags, fbc_error *err)
{
	return fbc_load_tree_staged(t, lim, NULL, fn, ctx, diags, err);
}

int fbc_load_tree_staged(fbc_tree *t, const fbc_load_limits *lim, const fbc_load_stage *stage,
			 fbc_meta_fn fn, void *ctx, fbc_diags *diags, fbc_error *err)
{
	fbc_load_limits l;
	source src = {t, fbc_tree_dir_path(t)};
	walk w;
	deliver dv;
	int rc = 0;

	memset(&w, 0, sizeof(w));
	fbc_vec_init(&w.entries, sizeof(entry *));
	fbc_vec_init(&w.kept, sizeof(entry *));
	fbc_load_limits_resolve(&l, lim);
	w.t = t;
	w.lim = &l;
	w.err = err;
	rc = fbc_ignore_create(&w.ig, err);
	if (rc != 0)
		goto done;
	memset(&dv, 0, sizeof(dv));
	dv.fn = fn;
	dv.ctx = ctx;
	dv.diags = diags;
	dv.lim = &l;
	dv.stage = stage != NULL && stage->prepare != NULL ? stage : NULL;
	dv.src = &src;
	dv.err = err;
	rc = walk_and_load(&w, &dv);
done:
	entries_dispose(&w.kept, stage);
	entries_dispose(&w.entries, stage);
	fbc_ignore_free(w.ig);
	return rc;
}

int fbc_load_buffer(const char *name, const char *data, size_t len, const fbc_load_limits *lim,
		    fbc_meta_fn fn, void *ctx, fbc_diags *diags, fbc_error *err)
{
	fbc_load_limits l;
	fbc_vec items;
	deliver dv;
	int rc;

	fbc_load_limits_resolve(&l, lim);
	fbc_vec_init(&items, sizeof(fbc_load_item));
	rc = fbc_load_parse_data(&items, data, len, &l);
	if (rc != 0) {
		rc = fbc_error_set(err, rc, name, "out of memory");
		goto done;
	}
	memset(&dv, 0, sizeof(dv));
	dv.fn = fn;
	dv.ctx = ctx;
	dv.diags = diags;
	dv.lim = &l;
	dv.err = err;
	rc = deliver_items(&dv, name, &items);
done:
	fbc_load_items_clear(&items);
	fbc_vec_dispose(&items);
	return rc;
}
