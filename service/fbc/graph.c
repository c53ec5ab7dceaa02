/*
 * Channel upgrade graphs: structure (V4-V6), edges and upgrade queries.
 */
#include "service/fbc/graph.h"

#include "service/base/strmap.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct fbc_graph_priv {
	fbc_arena *arena;
	fbc_strmap index;	   /* name -> node index + 1 */
	fbc_semver_range **ranges; /* per entry node; NULL when none or unparsable */
	fbc_semver *versions;	   /* per node, valid when has_version */
	bool *has_version;
	bool edges;
};

static int oom(fbc_error *err)
{
	return fbc_error_set(err, FBC_ENOMEM, NULL, "out of memory building a channel graph");
}

void fbc_graph_free(fbc_graph *g)
{
	size_t i;

	if (!g)
		return;
	if (g->priv) {
		if (g->priv->ranges) {
			for (i = 0; i < g->n_entries; i++)
				fbc_semver_range_free(g->priv->ranges[i]);
			free(g->priv->ranges);
		}
		fbc_strmap_dispose(&g->priv->index);
		fbc_arena_free(g->priv->arena);
		free(g->priv);
	}
	free(g);
}

size_t fbc_graph_find(const fbc_graph *g, const char *name)
{
	void *v;

	if (!g || !name)
		return FBC_GRAPH_NONE;
	v = fbc_strmap_get(&g->priv->index, name);
	return v ? (size_t)(uintptr_t)v - 1 : FBC_GRAPH_NONE;
}

const char *fbc_graph_edge_kind_name(fbc_graph_edge_kind k)
{
	switch (k) {
	case FBC_EDGE_REPLACES:
		return "replaces";
	case FBC_EDGE_SKIPS:
		return "skips";
	case FBC_EDGE_SKIP_RANGE:
		return "skipRange";
	}
	return "?";
}

void fbc_graph_list_dispose(fbc_graph_list *l)
{
	if (!l)
		return;
	free(l->items);
	l->items = NULL;
	l->n = 0;
}

typedef struct named_idx {
	const char *name;
	size_t idx;
} named_idx;

static int cmp_named_idx(const void *x, const void *y)
{
	return strcmp(((const named_idx *)x)->name, ((const named_idx *)y)->name);
}

/* Sort node indexes by name. qsort, not an insertion sort: a hostile
 * channel can have 10^5 heads or stranded entries. */
static int sort_by_node_name(const fbc_graph *g, size_t *a, size_t n)
{
	named_idx *t;
	size_t i;

	if (n < 2)
		return 0;
	t = malloc(n * sizeof(*t));
	if (!t)
		return FBC_ENOMEM;
	for (i = 0; i < n; i++) {
		t[i].name = g->nodes[a[i]].name;
		t[i].idx = a[i];
	}
	qsort(t, n, sizeof(*t), cmp_named_idx);
	for (i = 0; i < n; i++)
		a[i] = t[i].idx;
	free(t);
	return 0;
}

static bool deprecates(const fbc_deprecation *d, const char *schema, const char *name)
{
	size_t i;

	if (!d)
		return false;
	for (i = 0; i < d->n_entries; i++) {
		if (strcmp(d->entries[i].schema, schema) == 0 &&
		    strcmp(d->entries[i].name, name) == 0)
			return true;
	}
	return false;
}

/* Add a node for name if missing (external when no entry has it). */
static int ensure_node(fbc_graph *g, size_t cap, const char *name, size_t *idx)
{
	size_t i = fbc_graph_find(g, name);

	if (i != FBC_GRAPH_NONE) {
		*idx = i;
		return 0;
	}
	if (g->n_nodes >= cap)
		return FBC_EINTERNAL;
	i = g->n_nodes++;
	memset(&g->nodes[i], 0, sizeof(g->nodes[i]));
	g->nodes[i].name = name;
	g->nodes[i].version = "";
	g->nodes[i].release = "";
	g->nodes[i].external = true;
	g->nodes[i].classic_pos = FBC_GRAPH_NONE;
	if (fbc_strmap_add(&g->priv->index, name, (void *)(uintptr_t)(i + 1)) < 0)
		return FBC_ENOMEM;
	*idx = i;
	return 0;
}

static int add_edge(fbc_graph *g, size_t cap, size_t from, size_t to, fbc_graph_edge_kind k)
{
	if (g->n_edges >= cap)
		return FBC_EINTERNAL;
	g->edges[g->n_edges].from = from;
	g->edges[g->n_edges].to = to;
	g->edges[g->n_edges].kind = k;
	g->n_edges++;
	return 0;
}

/* §3.2, exactly as model.Channel.validateReplacesChain (which keeps names:
 * here a name no entry has ends the walk either way, skipped or not, and
 * only entries' names are asked about afterwards). rep: per entry, the entry
 * its replaces names, FBC_GRAPH_NONE for none. */
static int walk_chain(fbc_graph *g, const size_t *rep)
{
	fbc_arena *a = g->priv->arena;
	const char **list;
	size_t n_list = 0, i, cap = g->n_entries + 2, cur = g->head;

	list = fbc_arena_calloc(a, cap, sizeof(*list));
	if (!list)
		return FBC_ENOMEM;
	list[n_list++] = g->nodes[cur].name;
	g->nodes[cur].on_chain = true;
	for (;;) {
		const char *r = g->nodes[cur].entry->replaces;
		size_t nx = rep[cur];

		if (nx == FBC_GRAPH_NONE || g->nodes[nx].skipped)
			break;
		if (g->nodes[nx].on_chain) {
			list[n_list++] = r;
			for (i = 0; i < n_list && strcmp(list[i], r) != 0; i++)
				;
			g->cycle = list + i;
			g->n_cycle = n_list - i;
			g->status = FBC_GRAPH_CYCLE;
			return 0;
		}
		g->nodes[nx].on_chain = true;
		/* every entry added is distinct, so the list stays within entries + 2 */
		if (n_list < cap)
			list[n_list++] = r;
		cur = nx;
	}
	g->stranded = fbc_arena_calloc(a, g->n_entries + 1, sizeof(size_t));
	if (!g->stranded)
		return FBC_ENOMEM;
	for (i = 0; i < g->n_entries; i++) {
		fbc_graph_node *n = &g->nodes[i];

		if (!n->on_chain && !n->skipped) {
			n->stranded = true;
			g->stranded[g->n_stranded++] = i;
		}
	}
	if (sort_by_node_name(g, g->stranded, g->n_stranded))
		return FBC_ENOMEM;
	if (g->n_stranded)
		g->status = FBC_GRAPH_STRANDED;
	return 0;
}

/* The OLM v0 order (resolver.md §3.1): from the head along replaces, skipped
 * entries left out but walked through; stops at a revisit. */
static int classic_order(fbc_graph *g, const size_t *rep)
{
	bool *seen;
	size_t cur = g->head;

	g->classic = fbc_arena_calloc(g->priv->arena, g->n_entries + 1, sizeof(size_t));
	seen = calloc(g->n_entries + 1, sizeof(bool));
	if (!g->classic || !seen) {
		free(seen);
		return FBC_ENOMEM;
	}
	while (cur != FBC_GRAPH_NONE && cur < g->n_entries && !seen[cur]) {
		fbc_graph_node *n = &g->nodes[cur];

		seen[cur] = true;
		if (!n->skipped) {
			n->classic_pos = g->n_classic;
			g->classic[g->n_classic++] = cur;
		}
		cur = *n->entry->replaces ? rep[cur] : FBC_GRAPH_NONE;
	}
	free(seen);
	return 0;
}

static int build_edges(fbc_graph *g, size_t node_cap, fbc_error *err)
{
	fbc_graph_priv *p = g->priv;
	size_t i, j, k, n_edges = 0, ne = g->n_entries;
	int rc;

	for (i = 0; i < ne; i++) {
		const fbc_channel_entry *e = g->nodes[i].entry;

		n_edges += (*e->replaces ? 1 : 0) + e->n_skips;
		if (*e->skip_range)
			n_edges += ne;
	}
	g->edges = fbc_arena_calloc(p->arena, n_edges + 1, sizeof(*g->edges));
	p->ranges = calloc(ne + 1, sizeof(*p->ranges));
	if (!g->edges || !p->ranges)
		return oom(err);
	for (i = 0; i < ne; i++) {
		const fbc_channel_entry *e = g->nodes[i].entry;
		size_t from;

		if (*e->replaces) {
			if ((rc = ensure_node(g, node_cap, e->replaces, &from)) ||
			    (rc = add_edge(g, n_edges, from, i, FBC_EDGE_REPLACES)))
				return fbc_error_set(err, rc, NULL, "building graph edges");
		}
		for (k = 0; k < e->n_skips; k++) {
			if (!*e->skips[k])
				continue;
			if ((rc = ensure_node(g, node_cap, e->skips[k], &from)) ||
			    (rc = add_edge(g, n_edges, from, i, FBC_EDGE_SKIPS)))
				return fbc_error_set(err, rc, NULL, "building graph edges");
		}
		if (*e->skip_range) {
			fbc_error e2;

			/* an unparsable range is V8; at runtime it covers nothing */
			if (fbc_semver_range_parse_blang(&p->ranges[i], e->skip_range, &e2))
				p->ranges[i] = NULL;
		}
		if (!p->ranges[i])
			continue;
		for (j = 0; j < ne; j++) {
			if (j != i && p->has_version[j] &&
			    fbc_semver_range_contains(p->ranges[i], &p->versions[j]) &&
			    (rc = add_edge(g, n_edges, j, i, FBC_EDGE_SKIP_RANGE)))
				return fbc_error_set(err, rc, NULL, "building graph edges");
		}
	}
	p->edges = true;
	return 0;
}

int fbc_graph_build(fbc_graph **out, const fbc_channel *ch, unsigned flags, fbc_error *err)
{
	fbc_graph *g = NULL;
	fbc_strmap deprecated;
	size_t *rep = NULL;
	bool *incoming = NULL;
	const fbc_deprecation *dep = ch && ch->pkg ? ch->pkg->deprecation : NULL;
	size_t i, k, node_cap;
	int rc = 0;

	fbc_strmap_init(&deprecated);
	if (!ch)
		return fbc_error_set(err, FBC_EINVAL, NULL, "graph: no channel");
	g = calloc(1, sizeof(*g));
	if (!g || !(g->priv = calloc(1, sizeof(*g->priv))) ||
	    fbc_arena_create(&g->priv->arena, 0)) {
		rc = oom(err);
		goto done;
	}
	fbc_strmap_init(&g->priv->index);
	g->channel = ch;
	g->head = FBC_GRAPH_NONE;
	node_cap = ch->n_entries;
	for (i = 0; i < ch->n_entries; i++)
		node_cap += 1 + ch->entries[i].n_skips;
	g->nodes = fbc_arena_calloc(g->priv->arena, node_cap + 1, sizeof(*g->nodes));
	g->heads = fbc_arena_calloc(g->priv->arena, ch->n_entries + 1, sizeof(size_t));
	g->priv->versions = fbc_arena_calloc(g->priv->arena, node_cap + 1, sizeof(fbc_semver));
	g->priv->has_version = fbc_arena_calloc(g->priv->arena, node_cap + 1, sizeof(bool));
	if (!g->nodes || !g->heads || !g->priv->versions || !g->priv->has_version) {
		rc = oom(err);
		goto done;
	}
	g->channel_deprecated = deprecates(dep, "olm.channel", ch->name);
	g->package_deprecated = deprecates(dep, "olm.package", "");
	/* deprecated bundle names as a set: one scan, not one per entry */
	for (i = 0; dep && i < dep->n_entries; i++) {
		if (strcmp(dep->entries[i].schema, "olm.bundle") == 0 &&
		    fbc_strmap_add(&deprecated, dep->entries[i].name, NULL) < 0) {
			rc = oom(err);
			goto done;
		}
	}
	/* entries, first of each name */
	for (i = 0; i < ch->n_entries; i++) {
		const fbc_channel_entry *e = &ch->entries[i];
		fbc_graph_node *n;

		rc = fbc_strmap_add(&g->priv->index, e->name, (void *)(uintptr_t)(g->n_nodes + 1));
		if (rc < 0) {
			rc = oom(err);
			goto done;
		}
		if (rc == 0)
			continue; /* duplicate entry (C7) */
		n = &g->nodes[g->n_nodes];
		n->name = e->name;
		n->entry = e;
		n->bundle = e->bundle;
		n->version = e->bundle ? e->bundle->version : "";
		n->release = e->bundle ? e->bundle->release : "";
		n->classic_pos = FBC_GRAPH_NONE;
		n->deprecated = fbc_strmap_has(&deprecated, e->name);
		if (e->bundle && e->bundle->has_semver) {
			g->priv->versions[g->n_nodes] = e->bundle->semver;
			g->priv->has_version[g->n_nodes] = true;
		}
		g->n_nodes++;
	}
	rc = 0;
	g->n_entries = g->n_nodes;
	/* §3.1 incoming edges (only entries' names are asked about: a name no
	 * entry has is left out); skips also mark the skipped */
	rep = fbc_arena_calloc(g->priv->arena, g->n_entries + 1, sizeof(*rep));
	incoming = calloc(g->n_entries + 1, sizeof(*incoming));
	if (!rep || !incoming) {
		rc = oom(err);
		goto done;
	}
	for (i = 0; i < g->n_entries; i++) {
		const fbc_channel_entry *e = g->nodes[i].entry;
		size_t to;

		/* the walk follows an empty replaces as a name, as Go does */
		rep[i] = fbc_graph_find(g, e->replaces);
		if (*e->replaces && rep[i] != FBC_GRAPH_NONE)
			incoming[rep[i]] = true;
		for (k = 0; k < e->n_skips; k++) {
			if ((to = fbc_graph_find(g, e->skips[k])) != FBC_GRAPH_NONE) {
				incoming[to] = true;
				g->nodes[to].skipped = true;
			}
		}
	}
	for (i = 0; i < g->n_entries; i++) {
		if (!incoming[i]) {
			g->nodes[i].head = true;
			g->heads[g->n_heads++] = i;
		}
	}
	if (sort_by_node_name(g, g->heads, g->n_heads)) {
		rc = oom(err);
		goto done;
	}
	if (g->n_entries == 0)
		g->status = FBC_GRAPH_EMPTY;
	else if (g->n_heads == 0)
		g->status = FBC_GRAPH_NO_HEAD;
	else if (g->n_heads > 1)
		g->status = FBC_GRAPH_MULTIPLE_HEADS;
	else
		g->head = g->heads[0];
	if (g->head != FBC_GRAPH_NONE) {
		if ((rc = walk_chain(g, rep)) || (rc = classic_order(g, rep))) {
			rc = oom(err);
			goto done;
		}
	}
	if ((flags & FBC_GRAPH_EDGES) && (rc = build_edges(g, node_cap, err)))
		goto done;
	*out = g;
	g = NULL;
done:
	free(incoming);
	fbc_strmap_dispose(&deprecated);
	fbc_graph_free(g);
	return rc;
}

/* ------------------------------------------------------------------ */
/* Queries                                                             */

typedef struct installed {
	const char *name;
	fbc_semver v;
	bool has_v;
} installed;

static int resolve_installed(installed *in, const fbc_graph *g, const char *name,
			     const char *version, fbc_error *err)
{
	size_t i;
	fbc_error e;

	if (!g->priv->edges)
		return fbc_error_set(err, FBC_EINVAL, NULL,
				     "graph queries need a graph built with FBC_GRAPH_EDGES");
	if (!name)
		return fbc_error_set(err, FBC_EINVAL, NULL, "no installed bundle name");
	memset(in, 0, sizeof(*in));
	in->name = name;
	if (version && *version) {
		if (fbc_semver_parse(&in->v, version, strlen(version), &e) == 0 ||
		    fbc_semver_parse_tolerant(&in->v, version, strlen(version), &e) == 0)
			in->has_v = true;
		else
			return fbc_error_set(err, FBC_EINVAL, "version", "invalid version %s: %s",
					     version, e.message);
	} else if (!version) {
		i = fbc_graph_find(g, name);
		if (i != FBC_GRAPH_NONE && g->priv->has_version[i]) {
			in->v = g->priv->versions[i];
			in->has_v = true;
		}
	}
	return 0;
}

static bool is_successor(const fbc_graph *g, size_t e, const installed *in)
{
	const fbc_channel_entry *en = g->nodes[e].entry;
	size_t k;

	if (strcmp(en->name, in->name) == 0)
		return false;
	if (*en->replaces && strcmp(en->replaces, in->name) == 0)
		return true;
	for (k = 0; k < en->n_skips; k++) {
		if (strcmp(en->skips[k], in->name) == 0)
			return true;
	}
	return in->has_v && g->priv->ranges[e] &&
	       fbc_semver_range_contains(g->priv->ranges[e], &in->v);
}

/* v1 preference: non-deprecated, then version desc, then release desc. */
static int v1_better(const fbc_graph *g, size_t a, size_t b)
{
	const fbc_graph_node *x = &g->nodes[a], *y = &g->nodes[b];
	int c;

	if (x->deprecated != y->deprecated)
		return x->deprecated ? 1 : -1;
	if (g->priv->has_version[a] != g->priv->has_version[b])
		return g->priv->has_version[a] ? -1 : 1;
	if (g->priv->has_version[a]) {
		c = fbc_semver_compare(&g->priv->versions[a], &g->priv->versions[b]);
		if (c)
			return -c;
		c = fbc_release_compare(x->release, y->release);
		if (c)
			return -c;
	}
	return strcmp(x->name, y->name);
}

static int successors(fbc_graph_list *out, const fbc_graph *g, fbc_upgrade_mode mode,
		      const installed *in, fbc_error *err)
{
	size_t i, j, *items = malloc((g->n_entries + 1) * sizeof(size_t)), n = 0;

	if (!items)
		return oom(err);
	if (mode == FBC_UPGRADE_CLASSIC) {
		for (i = 0; i < g->n_classic; i++) {
			if (is_successor(g, g->classic[i], in))
				items[n++] = g->classic[i];
		}
	} else {
		for (i = 0; i < g->n_entries; i++) {
			if (!is_successor(g, i, in))
				continue;
			for (j = n; j > 0 && v1_better(g, i, items[j - 1]) < 0; j--)
				items[j] = items[j - 1];
			items[j] = i;
			n++;
		}
	}
	out->items = items;
	out->n = n;
	return 0;
}

int fbc_graph_successors(fbc_graph_list *out, const fbc_graph *g, fbc_upgrade_mode mode,
			 const char *name, const char *version, fbc_error *err)
{
	installed in;
	int rc;

	out->items = NULL;
	out->n = 0;
	if (!g)
		return fbc_error_set(err, FBC_EINVAL, NULL, "no graph");
	if ((rc = resolve_installed(&in, g, name, version, err)))
		return rc;
	return successors(out, g, mode, &in, err);
}

static void node_installed(installed *in, const fbc_graph *g, size_t i)
{
	in->name = g->nodes[i].name;
	in->has_v = g->priv->has_version[i];
	if (in->has_v)
		in->v = g->priv->versions[i];
}

static int classic_path(fbc_graph_list *out, const fbc_graph *g, const installed *start,
			fbc_error *err)
{
	size_t ne = g->n_entries, *prev = NULL, *queue = NULL, qh = 0, qt = 0, i, n, *path = NULL;
	bool *seen = NULL;
	size_t start_node = fbc_graph_find(g, start->name);
	int rc = 0;

	if (g->head == FBC_GRAPH_NONE)
		return fbc_error_set(err, FBC_ENOTFOUND, g->channel->name,
				     "channel %s has no unique head", g->channel->name);
	if (start_node == g->head) {
		out->items = NULL;
		out->n = 0;
		return 0;
	}
	prev = malloc((ne + 1) * sizeof(size_t));
	queue = malloc((ne + 1) * sizeof(size_t));
	seen = calloc(ne + 1, sizeof(bool));
	if (!prev || !queue || !seen) {
		rc = oom(err);
		goto done;
	}
	/* BFS; the start itself is node "ne" (it may not be an entry) */
	{
		fbc_graph_list s;

		if ((rc = successors(&s, g, FBC_UPGRADE_CLASSIC, start, err)))
			goto done;
		for (i = 0; i < s.n; i++) {
			if (!seen[s.items[i]]) {
				seen[s.items[i]] = true;
				prev[s.items[i]] = ne;
				queue[qt++] = s.items[i];
			}
		}
		fbc_graph_list_dispose(&s);
	}
	while (qh < qt && !seen[g->head]) {
		size_t cur = queue[qh++];
		installed in;
		fbc_graph_list s;

		node_installed(&in, g, cur);
		if ((rc = successors(&s, g, FBC_UPGRADE_CLASSIC, &in, err)))
			goto done;
		for (i = 0; i < s.n; i++) {
			size_t nx = s.items[i];

			if (!seen[nx] && nx != start_node) {
				seen[nx] = true;
				prev[nx] = cur;
				queue[qt++] = nx;
			}
		}
		fbc_graph_list_dispose(&s);
	}
	if (!seen[g->head]) {
		rc = fbc_error_set(err, FBC_ENOTFOUND, start->name,
				   "no upgrade path from %s to the head %s of channel %s",
				   start->name, g->nodes[g->head].name, g->channel->name);
		goto done;
	}
	for (n = 0, i = g->head; i != ne; i = prev[i])
		n++;
	path = malloc(n * sizeof(size_t));
	if (!path) {
		rc = oom(err);
		goto done;
	}
	out->n = n;
	for (i = g->head; i != ne; i = prev[i])
		path[--n] = i;
	out->items = path;
done:
	free(prev);
	free(queue);
	free(seen);
	return rc;
}

static int v1_path(fbc_graph_list *out, const fbc_graph *g, const installed *start, fbc_error *err)
{
	size_t ne = g->n_entries, *path = malloc((ne + 1) * sizeof(size_t)), n = 0;
	bool *seen = calloc(ne + 1, sizeof(bool));
	installed cur = *start;
	size_t s0 = fbc_graph_find(g, start->name);
	int rc = 0;

	if (!path || !seen) {
		rc = oom(err);
		goto done;
	}
	if (s0 != FBC_GRAPH_NONE && s0 < ne)
		seen[s0] = true;
	for (;;) {
		fbc_graph_list s;
		size_t best;

		if ((rc = successors(&s, g, FBC_UPGRADE_V1, &cur, err)))
			goto done;
		best = s.n ? s.items[0] : FBC_GRAPH_NONE;
		fbc_graph_list_dispose(&s);
		if (best == FBC_GRAPH_NONE || seen[best])
			break;
		seen[best] = true;
		path[n++] = best;
		node_installed(&cur, g, best);
	}
	out->items = path;
	out->n = n;
	path = NULL;
done:
	free(path);
	free(seen);
	return rc;
}

int fbc_graph_upgrade_path(fbc_graph_list *out, const fbc_graph *g, fbc_upgrade_mode mode,
			   const char *name, const char *version, fbc_error *err)
{
	installed in;
	int rc;

	out->items = NULL;
	out->n = 0;
	if (!g)
		return fbc_error_set(err, FBC_EINVAL, NULL, "no graph");
	if ((rc = resolve_installed(&in, g, name, version, err)))
		return rc;
	return mode == FBC_UPGRADE_CLASSIC ? classic_path(out, g, &in, err)
					   : v1_path(out, g, &in, err);
}
