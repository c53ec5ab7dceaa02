/*
 * fbc_load_tree: walk (§1.1), .indexignore (§1.2), and parse files on a
 * small thread pool while the calling thread walks on and delivers findings
 * and metas in walk order. Workers run at most `window` files ahead of
 * delivery, so memory holds a bounded number of parsed files, never the
 * whole catalog. A file is handed to the workers as soon as the walk knows
 * whether it is loaded: once no directory above it has an .indexignore the
 * walk has not read yet (a later pattern could only come from there).
 */
#include "service/load/internal.h"
#include "service/load/json_arena.h"
#include "service/load/walk.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_THREADS FBC_LOAD_MAX_WORKERS
/* Workers parse ahead of delivery by 2 files a thread, or further while the
 * files parsed and not yet delivered hold at most this much input: one large
 * file then no longer leaves the other threads waiting, and memory stays
 * bounded. */
#define AHEAD_BYTES ((size_t)8 << 20)

/* Read and parse one entry's file into its items. True when the file was
 * read and parsed (its items are a function of its content and the limits). */
static bool parse_file(fbc_load_entry *e, const fbc_load_source *src, const fbc_load_limits *lim,
		       const fbc_load_stagecall *sc, fbc_load_rbuf *rb)
{
	fbc_load_src_data d;
	char reason[256];
	int rc;

	rc = fbc_load_src_read(src, &d, rb, e->path, lim->max_file_bytes, reason, sizeof(reason));
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
	fbc_load_src_release(src, &d);
	return rc == 0 && e->rc == 0;
}

/* The stage's file cache: the results of a file, from it (true) or to it. */
static bool cached_results(fbc_load_entry *e, const fbc_load_stage *stage)
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

static void offer_results(fbc_load_entry *e, const fbc_load_stage *stage)
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
static void parse_entry(fbc_load_entry *e, const fbc_load_source *src, const fbc_load_limits *lim,
			const fbc_load_stage *stage, unsigned worker, fbc_load_rbuf *rb)
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
	const fbc_load_source *src;  /* NULL: fbc_load_buffer */
	size_t blobs;
	bool stop;
	fbc_error *err;
	struct fbc_load_walk *walk; /* the tree's walk, when walking */
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
	fbc_vec *kept;	     /* of fbc_load_entry *, grown by the walk under mu */
	size_t n;	     /* entries of kept the workers may take */
	bool walking;	     /* more may come */
	size_t next;	     /* next entry to claim */
	size_t delivered;    /* entries handed over so far */
	size_t window;
	size_t ahead; /* bytes of the entries claimed but not delivered */
	bool stop;
	unsigned started;		 /* worker threads running */
	unsigned next_worker;		 /* worker indexes, handed out at start */
	fbc_load_rbuf bufs[MAX_THREADS]; /* each worker's file buffer */
	const fbc_load_limits *lim;
	const fbc_load_stage *stage;
	const fbc_load_source *src;
	deliver *dv;
	pthread_t th[MAX_THREADS];
} pool;

static fbc_load_entry *kept_at(const pool *p, size_t i)
{
	return *FBC_VEC_AT(p->kept, fbc_load_entry *, i);
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
		fbc_load_entry *e = kept_at(p, p->next++);
		p->ahead += e->size;
		pthread_mutex_unlock(&p->mu);
		parse_entry(e, p->src, p->lim, p->stage, self, &p->bufs[self]);
		pthread_mutex_lock(&p->mu);
		e->done = true;
		pthread_cond_broadcast(&p->done);
	}
	pthread_mutex_unlock(&p->mu);
	/* nothing left to claim: the buffer goes now, not after delivery */
	fbc_load_rbuf_dispose(&p->bufs[self]);
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

/* Deliver entries in order from p->delivered on: waiting for each (block)
 * or as long as the next one is done. */
static int deliver_ready(pool *p, bool block)
{
	deliver *dv = p->dv;
	int rc = 0;

	for (;;) {
		fbc_load_entry *e;

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
			bool done;

			while (!e->done && block)
				pthread_cond_wait(&p->done, &p->mu);
			done = e->done;
			pthread_mutex_unlock(&p->mu);
			if (!done)
				return 0; /* not blocking: the next call delivers it */
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
	fbc_load_walk *w = dv->walk;
	int rc;

	pthread_mutex_lock(&p->mu);
	rc = fbc_load_walk_select(w, false);
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
static int walk_and_load(fbc_load_walk *w, deliver *dv)
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
	rc = fbc_load_walk_dir(w, dv->src, "");
	if (p.started > 0)
		pthread_mutex_lock(&p.mu);
	if (rc == 0 && !w->stop)
		rc = fbc_load_walk_select(w, true);
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
	}
	if (nt > 1) {
		pthread_mutex_destroy(&p.mu);
		pthread_cond_destroy(&p.work);
		pthread_cond_destroy(&p.done);
	}
	for (unsigned i = 0; i < MAX_THREADS; i++)
		fbc_load_rbuf_dispose(&p.bufs[i]);
	if (arena)
		fbc_json_arena_detach();
	return rc;
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
	fbc_load_source src = {t, fbc_tree_dir_path(t)};
	fbc_load_walk w;
	deliver dv;
	int rc = 0;

	memset(&w, 0, sizeof(w));
	fbc_vec_init(&w.entries, sizeof(fbc_load_entry *));
	fbc_vec_init(&w.kept, sizeof(fbc_load_entry *));
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
	fbc_load_entries_dispose(&w.kept, stage);
	fbc_load_entries_dispose(&w.entries, stage);
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
