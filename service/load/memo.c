/*
 * fbc_load_memo: one file's parse shared by the loads that read the same
 * content (by the tree's content id), so that a file present in several
 * catalogs is parsed once. Only files the caller expects to read more than
 * once are kept, and each only until its last expected read.
 */
#include "service/base/strmap.h"
#include "service/load/internal.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

typedef enum mstate { M_EMPTY, M_PARSING, M_READY } mstate;

typedef struct mnode {
	char *id;
	unsigned uses; /* reads still expected */
	mstate state;
	fbc_vec items; /* of fbc_load_item: blobs shared (json_incref), messages owned */
} mnode;

struct fbc_load_memo {
	pthread_mutex_t mu;
	fbc_strmap nodes; /* id -> mnode * (keys borrowed from the node) */
	bool have_lim;
	fbc_load_limits lim; /* the parse bounds of the first read: other bounds bypass */
	size_t hits, parsed;
};

int fbc_load_memo_create(fbc_load_memo **out, fbc_error *err)
{
	fbc_load_memo *m = calloc(1, sizeof(*m));

	*out = NULL;
	if (!m)
		return fbc_error_set(err, FBC_ENOMEM, NULL, "out of memory");
	pthread_mutex_init(&m->mu, NULL);
	fbc_strmap_init(&m->nodes);
	*out = m;
	return 0;
}

static void node_free(mnode *n)
{
	if (!n)
		return;
	fbc_load_items_clear(&n->items);
	fbc_vec_dispose(&n->items);
	free(n->id);
	free(n);
}

/* Remove n from the map (the map borrows n->id) and free it. */
static void node_drop(fbc_load_memo *m, mnode *n)
{
	fbc_strmap rebuilt;
	size_t it = 0;
	const char *k;
	void *v;

	/* fbc_strmap has no delete: rebuild without n (maps here are small, a
	 * few hundred files at most, and drops happen once per kept file) */
	fbc_strmap_init(&rebuilt);
	while (fbc_strmap_next(&m->nodes, &it, &k, &v))
		if (v != n && fbc_strmap_put(&rebuilt, k, v, NULL) != 0) {
			/* out of memory: keep the old map, n stays as an empty, unused node */
			fbc_strmap_dispose(&rebuilt);
			fbc_load_items_clear(&n->items);
			n->uses = 0;
			n->state = M_EMPTY;
			return;
		}
	fbc_strmap_dispose(&m->nodes);
	m->nodes = rebuilt;
	node_free(n);
}

void fbc_load_memo_free(fbc_load_memo *m)
{
	size_t it = 0;
	const char *k;
	void *v;

	if (!m)
		return;
	while (fbc_strmap_next(&m->nodes, &it, &k, &v))
		node_free(v);
	fbc_strmap_dispose(&m->nodes);
	pthread_mutex_destroy(&m->mu);
	free(m);
}

int fbc_load_memo_expect(fbc_load_memo *m, const char *id, unsigned uses, fbc_error *err)
{
	mnode *n;
	int rc = 0;

	if (!m || !id || !*id || uses == 0)
		return 0;
	pthread_mutex_lock(&m->mu);
	if ((n = fbc_strmap_get(&m->nodes, id))) {
		n->uses += uses;
		goto done;
	}
	if (!(n = calloc(1, sizeof(*n))) || !(n->id = strdup(id))) {
		free(n);
		rc = fbc_error_set(err, FBC_ENOMEM, id, "out of memory");
		goto done;
	}
	fbc_vec_init(&n->items, sizeof(fbc_load_item));
	n->uses = uses;
	if (fbc_strmap_put(&m->nodes, n->id, n, NULL) != 0) {
		node_free(n);
		rc = fbc_error_set(err, FBC_ENOMEM, id, "out of memory");
	}
done:
	pthread_mutex_unlock(&m->mu);
	return rc;
}

void fbc_load_memo_stats(fbc_load_memo *m, size_t *hits, size_t *parsed, size_t *kept)
{
	pthread_mutex_lock(&m->mu);
	if (hits)
		*hits = m->hits;
	if (parsed)
		*parsed = m->parsed;
	if (kept)
		*kept = m->nodes.count;
	pthread_mutex_unlock(&m->mu);
}

/* The bounds that change what a parse yields. */
static bool same_parse_bounds(const fbc_load_limits *a, const fbc_load_limits *b)
{
	return a->max_file_bytes == b->max_file_bytes && a->max_depth == b->max_depth &&
	       a->max_alias_nodes == b->max_alias_nodes &&
	       a->max_string_bytes == b->max_string_bytes &&
	       a->max_expand_ratio == b->max_expand_ratio &&
	       a->max_expanded_bytes == b->max_expanded_bytes;
}

/* Append copies of src's items to dst: blobs shared, messages copied. */
static int copy_items(fbc_vec *dst, const fbc_vec *src)
{
	size_t start = dst->len;

	for (size_t i = 0; i < src->len; i++) {
		const fbc_load_item *s = FBC_VEC_AT(src, fbc_load_item, i);
		fbc_load_item *d = fbc_vec_push(dst);

		if (!d)
			goto oom;
		*d = *s;
		d->prepared = NULL;
		d->message = NULL;
		if (s->message && !(d->message = strdup(s->message))) {
			d->blob = NULL;
			goto oom;
		}
		json_incref(d->blob);
	}
	return 0;
oom:
	for (size_t i = start; i < dst->len; i++) {
		fbc_load_item *d = FBC_VEC_AT(dst, fbc_load_item, i);

		json_decref(d->blob);
		free(d->message);
	}
	dst->len = start;
	return FBC_ENOMEM;
}

fbc_memo_action fbc_load_memo_begin(fbc_load_memo *m, const char *id, const fbc_load_limits *lim,
				    fbc_vec *items)
{
	fbc_memo_action act = FBC_MEMO_NONE;
	mnode *n;

	if (!m || !id || !*id)
		return FBC_MEMO_NONE;
	pthread_mutex_lock(&m->mu);
	if (!m->have_lim) {
		m->lim = *lim;
		m->have_lim = true;
	} else if (!same_parse_bounds(&m->lim, lim)) {
		goto done;
	}
	if (!(n = fbc_strmap_get(&m->nodes, id)) || n->uses == 0)
		goto done;
	switch (n->state) {
	case M_READY:
		if (copy_items(items, &n->items) != 0)
			goto done; /* parse it instead */
		m->hits++;
		act = FBC_MEMO_HIT;
		if (--n->uses == 0)
			node_drop(m, n);
		break;
	case M_PARSING: /* another thread parses it now: parse too, never wait */
		n->uses--;
		break;
	case M_EMPTY:
		n->state = M_PARSING;
		n->uses--;
		act = FBC_MEMO_RECORD;
		break;
	}
done:
	pthread_mutex_unlock(&m->mu);
	return act;
}

void fbc_load_memo_end(fbc_load_memo *m, const char *id, const fbc_vec *items)
{
	mnode *n;

	pthread_mutex_lock(&m->mu);
	if (!(n = fbc_strmap_get(&m->nodes, id)) || n->state != M_PARSING)
		goto done;
	if (items)
		m->parsed++;
	if (!items || n->uses == 0) {
		if (n->uses == 0)
			node_drop(m, n);
		else
			n->state = M_EMPTY; /* not read: the next reader tries */
		goto done;
	}
	if (copy_items(&n->items, items) != 0) {
		n->state = M_EMPTY;
		goto done;
	}
	n->state = M_READY;
done:
	pthread_mutex_unlock(&m->mu);
}
