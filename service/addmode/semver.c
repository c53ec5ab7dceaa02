/*
 * Semver and semver-skippatch modes (index-add.md §5): load each channel's
 * graph (SV-1), insert the new bundle by version (SV-4..SV-7), rewrite every
 * channel from its graph (SV-9).
 */
#include "service/addmode/internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct node {
	am_rec *rec;
	fbc_vec edges; /* of const char * */
	bool removed;  /* SV-6: a skippatch candidate, no longer a node */
} node;

typedef struct graph {
	const char *channel;
	const char *head;
	fbc_vec nodes; /* of node * */
} graph;

static int oom(fbc_error *err)
{
	return fbc_error_set(err, FBC_ENOMEM, NULL, "out of memory");
}

static void graph_free(graph *g)
{
	size_t i;

	if (!g)
		return;
	for (i = 0; i < g->nodes.len; i++) {
		node *nd = *FBC_VEC_AT(&g->nodes, node *, i);

		fbc_vec_dispose(&nd->edges);
		free(nd);
	}
	fbc_vec_dispose(&g->nodes);
	free(g);
}

static node *graph_node(const graph *g, const char *name)
{
	size_t i;

	for (i = 0; i < g->nodes.len; i++) {
		node *nd = *FBC_VEC_AT(&g->nodes, node *, i);

		if (!nd->removed && strcmp(nd->rec->name, name) == 0)
			return nd;
	}
	return NULL;
}

static int edge_add(node *nd, const char *to)
{
	const char **slot;
	size_t i;

	for (i = 0; i < nd->edges.len; i++) {
		if (strcmp(*FBC_VEC_AT(&nd->edges, const char *, i), to) == 0)
			return 0;
	}
	slot = fbc_vec_push(&nd->edges);
	if (!slot)
		return FBC_ENOMEM;
	*slot = to;
	return 0;
}

static node *node_add(graph *g, am_rec *r)
{
	node *nd = calloc(1, sizeof(*nd)), **slot;

	if (!nd)
		return NULL;
	nd->rec = r;
	fbc_vec_init(&nd->edges, sizeof(const char *));
	slot = fbc_vec_push(&g->nodes);
	if (!slot) {
		free(nd);
		return NULL;
	}
	*slot = nd;
	return nd;
}

/* SV-1 */
static int graph_load(graph **out, const am_pkg *p, const am_channel *c, fbc_error *err)
{
	graph *g = calloc(1, sizeof(*g));
	size_t i, j, n_heads = 0;
	char names[FBC_ERROR_MESSAGE_MAX / 2];
	const char *heads[16];
	int rc = 0;

	if (!g)
		return oom(err);
	g->channel = c->name;
	fbc_vec_init(&g->nodes, sizeof(node *));
	for (i = 0; i < c->members.len; i++) {
		am_member *m = *FBC_VEC_AT(&c->members, am_member *, i);
		am_rec *r = am_pkg_rec(p, m->name);
		node *nd;

		if (!r)
			continue;
		if (!(nd = node_add(g, r))) {
			rc = oom(err);
			goto done;
		}
		if (m->next && edge_add(nd, m->next) != 0) {
			rc = oom(err);
			goto done;
		}
		for (j = 0; j < m->skips.len; j++) {
			if (edge_add(nd, *FBC_VEC_AT(&m->skips, const char *, j)) != 0) {
				rc = oom(err);
				goto done;
			}
		}
	}
	for (i = 0; i < g->nodes.len; i++) {
		node *nd = *FBC_VEC_AT(&g->nodes, node *, i);
		bool target = false;
		size_t k, e;

		for (k = 0; k < g->nodes.len && !target; k++) {
			node *o = *FBC_VEC_AT(&g->nodes, node *, k);

			for (e = 0; e < o->edges.len && !target; e++)
				target = strcmp(*FBC_VEC_AT(&o->edges, const char *, e),
						nd->rec->name) == 0;
		}
		if (!target) {
			if (n_heads < 16)
				heads[n_heads] = nd->rec->name;
			n_heads++;
			g->head = nd->rec->name;
		}
	}
	if (g->nodes.len && n_heads == 0) {
		rc = am_fail(err, FBC_EINVAL, "A27", p->name, "", "no channel head found for %s",
			     c->name);
		goto done;
	}
	if (n_heads > 1) {
		am_format_list(names, sizeof(names), heads, n_heads < 16 ? n_heads : 16);
		rc = am_fail(err, FBC_EINVAL, "A27", p->name, "",
			     "multiple candidate channel heads found for %s: %s", c->name, names);
		goto done;
	}
	*out = g;
	g = NULL;
done:
	graph_free(g);
	return rc;
}

static bool skippatch_candidate(const am_rec *nb, const am_rec *r)
{
	return r->has_sv && r->sv.major == nb->sv.major && r->sv.minor == nb->sv.minor &&
	       fbc_semver_compare(&r->sv, &nb->sv) < 0;
}

/* SV-4 .. SV-7 */
static int graph_insert(graph *g, const am_pkg *p, am_rec *nb, bool skippatch, fbc_error *err)
{
	node *behind = NULL, *ahead = NULL, *nn;
	size_t i, n_nodes = g->nodes.len;

	for (i = 0; i < n_nodes; i++) {
		node *nd = *FBC_VEC_AT(&g->nodes, node *, i);
		int c;

		if (nd->removed)
			continue;
		if (!nd->rec->has_sv)
			return am_fail(
				err, FBC_EINVAL, "A25", p->name, nb->name,
				"Unable to parse existing bundle version stored in index %s %s "
				"%s",
				nd->rec->name, nd->rec->version[0] ? nd->rec->version : "(unknown)",
				nd->rec->version_unknown
					? "(a tombstone rebuilt from an FBC has no version)"
					: "is not a valid semver");
		c = fbc_semver_compare(&nb->sv, &nd->rec->sv);
		if (c == 0)
			return am_fail(err, FBC_ECONFLICT, "A26", p->name, nb->name,
				       "Bundle version %s already added to index", nb->version);
		if (c > 0 && (!behind || fbc_semver_compare(&nd->rec->sv, &behind->rec->sv) > 0))
			behind = nd;
		if (c < 0 && (!ahead || fbc_semver_compare(&nd->rec->sv, &ahead->rec->sv) < 0))
			ahead = nd;
	}
	if (!(nn = node_add(g, nb)))
		return oom(err);
	if (behind && edge_add(nn, behind->rec->name) != 0)
		return oom(err);
	if (ahead) {
		ahead->edges.len = 0;
		if (edge_add(ahead, nb->name) != 0)
			return oom(err);
	} else {
		g->head = nb->name;
	}
	if (skippatch) {
		for (i = 0; i < n_nodes; i++) {
			node *nd = *FBC_VEC_AT(&g->nodes, node *, i);

			if (nd->removed || !skippatch_candidate(nb, nd->rec))
				continue;
			if (edge_add(nn, nd->rec->name) != 0)
				return oom(err);
			nd->removed = true;
		}
	}
	return 0;
}

/* SV-9: the rows of a channel from its graph. */
static int graph_rewrite(am_channel **out, const graph *g, const am_pkg *p, fbc_error *err)
{
	am_channel *c = am_channel_new(g->channel);
	fbc_strmap seen;
	const char *x = g->head;
	size_t n_nodes = 0, n_replaced = 0, visited = 0, i;
	int rc = 0;

	fbc_strmap_init(&seen);
	if (!c)
		return oom(err);
	for (i = 0; i < g->nodes.len; i++)
		n_nodes += !(*FBC_VEC_AT(&g->nodes, node *, i))->removed;
	c->head = g->head;
	while (x && !fbc_strmap_has(&seen, x)) {
		node *nd = graph_node(g, x);
		am_member *m;
		node *succ = NULL;

		if (!nd)
			break;
		visited++;
		if (fbc_strmap_put(&seen, x, (void *)1, NULL) != 0 ||
		    !(m = am_channel_ensure(c, x))) {
			rc = oom(err);
			goto done;
		}
		for (i = 0; i < nd->edges.len; i++) {
			const char *to = *FBC_VEC_AT(&nd->edges, const char *, i);
			node *tn = graph_node(g, to);

			if (!tn) {
				if (!am_channel_ensure(c, to) ||
				    am_member_add_skip(am_channel_member(c, x), to) != 0) {
					rc = oom(err);
					goto done;
				}
				continue;
			}
			/* opm keeps one node edge (Go map order); we keep the highest
			 * version, deterministically */
			if (!succ || am_version_order(tn->rec, succ->rec) > 0)
				succ = tn;
		}
		m = am_channel_member(c, x);
		if (succ) {
			m->next = succ->rec->name;
			if (!am_channel_ensure(c, succ->rec->name)) {
				rc = oom(err);
				goto done;
			}
			n_replaced++;
			x = succ->rec->name;
		} else {
			x = NULL;
		}
	}
	if (visited != n_nodes) {
		rc = am_fail(err, FBC_EINVAL, "A28", p->name, g->head,
			     "Invalid graph: some (non-bottom) nodes defined in the graph were not "
			     "mentioned as replacements of any node (%zu != %zu)",
			     n_nodes ? n_nodes - 1 : 0, visited ? visited - 1 : 0);
		goto done;
	}
	(void)n_replaced;
	*out = c;
	c = NULL;
done:
	fbc_strmap_dispose(&seen);
	am_channel_free(c);
	return rc;
}

static void graphs_free(fbc_vec *gs)
{
	size_t i;

	for (i = 0; i < gs->len; i++)
		graph_free(*FBC_VEC_AT(gs, graph *, i));
	fbc_vec_dispose(gs);
}

int am_add_semver(fbc_addmode_index *ix, am_pkg *p, am_rec *nb, const fbc_addmode_opts *opts,
		  fbc_error *err)
{
	fbc_vec gs, built;
	const char *dflt;
	size_t i, j;
	int rc = 0;

	(void)ix;
	fbc_vec_init(&gs, sizeof(graph *));
	fbc_vec_init(&built, sizeof(am_channel *));
	/* SV-1 */
	for (i = 0; i < p->channels.len; i++) {
		graph *g = NULL, **slot;

		rc = graph_load(&g, p, *FBC_VEC_AT(&p->channels, am_channel *, i), err);
		if (rc != 0)
			goto done;
		if (!(slot = fbc_vec_push(&gs))) {
			graph_free(g);
			rc = oom(err);
			goto done;
		}
		*slot = g;
	}
	/* SV-3 */
	if (!nb->has_sv) {
		rc = am_fail(err, FBC_EINVAL, "A23", p->name, nb->name,
			     "Bundle version %s is not valid", nb->version);
		goto done;
	}
	/* SV-2 */
	if (nb->default_channel[0]) {
		dflt = nb->default_channel;
	} else if (p->default_channel) {
		dflt = p->default_channel;
	} else {
		dflt = NULL;
		for (i = 0; i < nb->channels.n; i++) {
			if (!dflt || strcmp(nb->channels.v[i], dflt) < 0)
				dflt = nb->channels.v[i];
		}
		if (!dflt) {
			rc = am_fail(err, FBC_EINVAL, "A24", p->name, nb->name,
				     "Default channel is missing and can't be inferred");
			goto done;
		}
	}
	/* SV-4 .. SV-7 */
	for (i = 0; i < nb->channels.n; i++) {
		graph *g = NULL;

		for (j = 0; j < gs.len && !g; j++) {
			graph *cand = *FBC_VEC_AT(&gs, graph *, j);

			if (strcmp(cand->channel, nb->channels.v[i]) == 0)
				g = cand;
		}
		if (!g) {
			graph **slot;

			if (!(g = calloc(1, sizeof(*g)))) {
				rc = oom(err);
				goto done;
			}
			g->channel = nb->channels.v[i];
			fbc_vec_init(&g->nodes, sizeof(node *));
			if (!(slot = fbc_vec_push(&gs))) {
				graph_free(g);
				rc = oom(err);
				goto done;
			}
			*slot = g;
		}
		rc = graph_insert(g, p, nb, opts->mode == FBC_ADDMODE_SEMVER_SKIPPATCH, err);
		if (rc != 0)
			goto done;
	}
	/* step 4: the store, then every channel from its graph */
	if (am_pkg_rec(p, nb->name)) {
		rc = am_fail(err, FBC_ECONFLICT, "A5", p->name, nb->name,
			     "failed to add bundle \"%s\": UNIQUE constraint failed: "
			     "operatorbundle.name",
			     nb->name);
		goto done;
	}
	if (am_pkg_put_rec(p, nb) != 0) {
		rc = oom(err);
		goto done;
	}
	for (i = 0; i < gs.len; i++) {
		am_channel *c = NULL, **slot;

		rc = graph_rewrite(&c, *FBC_VEC_AT(&gs, graph *, i), p, err);
		if (rc != 0)
			goto done;
		if (!(slot = fbc_vec_push(&built))) {
			am_channel_free(c);
			rc = oom(err);
			goto done;
		}
		*slot = c;
	}
	while (p->channels.len)
		am_pkg_drop_channel(p, (*FBC_VEC_AT(&p->channels, am_channel *, 0))->name);
	for (i = 0; i < built.len; i++) {
		am_channel *c = *FBC_VEC_AT(&built, am_channel *, i);

		*FBC_VEC_AT(&built, am_channel *, i) = NULL;
		if (c->members.len == 0) {
			am_channel_free(c);
			continue;
		}
		if (am_pkg_put_channel(p, c) != 0) {
			am_channel_free(c);
			rc = oom(err);
			goto done;
		}
	}
	if (!am_pkg_channel(p, dflt)) {
		rc = am_fail(err, FBC_EINVAL, "A29", p->name, nb->name,
			     "the default channel (%s) does not exist: %s", dflt, p->name);
		goto done;
	}
	p->default_channel = dflt;
	rc = am_check_reachable(p, &nb, 1, err);
done:
	for (i = 0; i < built.len; i++)
		am_channel_free(*FBC_VEC_AT(&built, am_channel *, i));
	fbc_vec_dispose(&built);
	graphs_free(&gs);
	return rc;
}
