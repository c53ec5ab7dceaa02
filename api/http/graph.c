/* Channel upgrade graphs for the REST API: DOT and Mermaid output (written
 * by service/fbc/graph_format.h in its plain style),
 * successors and upgrade paths under OLM v0 ("classic") or OLM v1 rules
 * (spec fbc-validation.md §3.3), on the JSON of fbc_db_channel_graph. */
#include "api/http/app.h"

#include "service/base/strmap.h"
#include "service/fbc/graph_format.h"
#include "service/semver/semver.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define MAX_NODES 200000

struct g {
	const json_t *nodes, *edges;
	size_t n;
	const char *head;
};

static const char *str(const json_t *o, const char *k)
{
	const json_t *v = json_object_get(o, k);
	return json_is_string(v) ? json_string_value(v) : NULL;
}

static int load(struct g *g, const json_t *graph, fbc_error *err)
{
	g->nodes = json_object_get(graph, "nodes");
	g->edges = json_object_get(graph, "edges");
	g->head = str(graph, "head");
	if (!json_is_array(g->nodes) || !json_is_array(g->edges))
		return fbc_error_set(err, FBC_EINTERNAL, "graph",
				     "malformed graph from the database");
	g->n = json_array_size(g->nodes);
	if (g->n > MAX_NODES)
		return fbc_error_set(err, FBC_ELIMIT, "graph", "more than %d nodes", MAX_NODES);
	return 0;
}

static long node_index(const struct g *g, const char *name)
{
	if (!name)
		return -1;
	for (size_t i = 0; i < g->n; i++) {
		const char *nm = str(json_array_get(g->nodes, i), "name");
		if (nm && !strcmp(nm, name))
			return (long)i;
	}
	return -1;
}

/* By name, else by version. */
static long find_node(const struct g *g, const char *what)
{
	long i = node_index(g, what);
	if (i >= 0)
		return i;
	for (size_t k = 0; k < g->n; k++) {
		const char *v = str(json_array_get(g->nodes, k), "version");
		if (v && !strcmp(v, what))
			return (long)k;
	}
	return -1;
}

static const char *node_name(const struct g *g, size_t i)
{
	return str(json_array_get(g->nodes, i), "name");
}

static const char *node_version(const struct g *g, size_t i)
{
	return str(json_array_get(g->nodes, i), "version");
}

static int cmp_version(const struct g *g, size_t a, size_t b)
{
	const char *va = node_version(g, a), *vb = node_version(g, b);
	fbc_semver sa, sb;
	fbc_error e;

	bool oka = va && fbc_semver_parse(&sa, va, strlen(va), &e) == 0;
	bool okb = vb && fbc_semver_parse(&sb, vb, strlen(vb), &e) == 0;
	if (oka && okb)
		return fbc_semver_compare(&sa, &sb);
	if (oka != okb)
		return oka ? 1 : -1;
	return strcmp(node_name(g, a), node_name(g, b));
}

/* chain_pos[i] = position on the replaces chain from the head, or -1. */
static int classic_chain(long *chain_pos, const struct g *g)
{
	long cur = node_index(g, g->head);
	long pos = 0;

	for (size_t i = 0; i < g->n; i++)
		chain_pos[i] = -1;
	while (cur >= 0 && chain_pos[cur] < 0) {
		chain_pos[cur] = pos++;
		long next = -1;
		const char *cn = node_name(g, (size_t)cur);
		for (size_t e = 0; e < json_array_size(g->edges); e++) {
			const json_t *ed = json_array_get(g->edges, e);
			const char *k = str(ed, "kind"), *to = str(ed, "to");
			if (k && to && !strcmp(k, "replaces") && !strcmp(to, cn)) {
				next = node_index(g, str(ed, "from"));
				break;
			}
		}
		if (next < 0)
			break;
		/* the walk stops at a replaced entry that something skips (§3.2) */
		const char *nn = node_name(g, (size_t)next);
		for (size_t e = 0; e < json_array_size(g->edges); e++) {
			const json_t *ed = json_array_get(g->edges, e);
			const char *k = str(ed, "kind"), *from = str(ed, "from");
			if (k && from && !strcmp(k, "skips") && !strcmp(from, nn))
				return 0;
		}
		cur = next;
	}
	return 0;
}

struct cand {
	size_t idx;
	unsigned kinds; /* 1 replaces, 2 skips, 4 skipRange */
	long rank;
};

/* Successors of node `from` (index). Sorted: classic by closeness to the
 * head (only chain members), v1 by version descending. *out malloc'd. */
static int successors(struct cand **out, size_t *n_out, const struct g *g, size_t from,
		      bool classic, const long *chain_pos)
{
	struct cand *c = calloc(g->n ? g->n : 1, sizeof(*c));
	size_t n = 0;
	const char *fname = node_name(g, from);

	if (!c)
		return FBC_ENOMEM;
	for (size_t e = 0; e < json_array_size(g->edges); e++) {
		const json_t *ed = json_array_get(g->edges, e);
		const char *f = str(ed, "from"), *k = str(ed, "kind");
		if (!f || !k || strcmp(f, fname))
			continue;
		long t = node_index(g, str(ed, "to"));
		if (t < 0 || (size_t)t == from)
			continue;
		if (classic && chain_pos[t] < 0)
			continue;
		unsigned kb = !strcmp(k, "replaces") ? 1 : !strcmp(k, "skips") ? 2 : 4;
		size_t j;
		for (j = 0; j < n && c[j].idx != (size_t)t; j++)
			;
		if (j == n) {
			c[n].idx = (size_t)t;
			c[n].rank = classic ? chain_pos[t] : 0;
			n++;
		}
		c[j].kinds |= kb;
	}
	/* insertion sort: the comparison needs the graph, and n is small */
	for (size_t i = 1; i < n; i++) {
		struct cand x = c[i];
		size_t j = i;
		while (j > 0) {
			int d = classic ? (c[j - 1].rank > x.rank)
					: (cmp_version(g, c[j - 1].idx, x.idx) < 0);
			if (!d)
				break;
			c[j] = c[j - 1];
			j--;
		}
		c[j] = x;
	}
	*out = c;
	*n_out = n;
	return 0;
}

static json_t *node_json(const struct g *g, size_t i, unsigned kinds)
{
	json_t *o = json_object();
	const char *v = node_version(g, i);

	json_object_set_new(o, "name", json_string(node_name(g, i)));
	json_object_set_new(o, "version", v ? json_string(v) : json_null());
	if (kinds) {
		json_t *via = json_array();
		if (kinds & 1)
			json_array_append_new(via, json_string("replaces"));
		if (kinds & 2)
			json_array_append_new(via, json_string("skips"));
		if (kinds & 4)
			json_array_append_new(via, json_string("skipRange"));
		json_object_set_new(o, "via", via);
	}
	return o;
}

int fbc_http_graph_successors(json_t **out, const json_t *graph, const char *from,
			      const char *semantics, fbc_error *err)
{
	struct g g;
	long *chain = NULL, f;
	struct cand *c = NULL;
	size_t n = 0;
	json_t *items = NULL;
	bool classic = !strcmp(semantics, "classic");
	int rc;

	if ((rc = load(&g, graph, err)))
		return rc;
	f = find_node(&g, from);
	if (f < 0)
		return fbc_error_set(err, FBC_ENOTFOUND, "from",
				     "no bundle named or versioned '%s' in this channel", from);
	chain = calloc(g.n ? g.n : 1, sizeof(*chain));
	if (!chain)
		return fbc_error_set(err, FBC_ENOMEM, "graph", "out of memory");
	classic_chain(chain, &g);
	rc = successors(&c, &n, &g, (size_t)f, classic, chain);
	if (rc != 0) {
		fbc_error_set(err, rc, "graph", "out of memory");
		goto done;
	}
	items = json_array();
	for (size_t i = 0; i < n; i++)
		json_array_append_new(items, node_json(&g, c[i].idx, c[i].kinds));
	*out = items;
	rc = 0;
done:
	free(c);
	free(chain);
	return rc;
}

int fbc_http_graph_upgrade_path(json_t **out, const json_t *graph, const char *from, const char *to,
				const char *semantics, fbc_error *err)
{
	struct g g;
	long *chain = NULL, *prev = NULL, *queue = NULL, f, t = -1;
	struct cand *c = NULL;
	size_t n = 0;
	json_t *steps = NULL, *res = NULL;
	bool classic = !strcmp(semantics, "classic");
	int rc;

	if ((rc = load(&g, graph, err)))
		return rc;
	f = find_node(&g, from);
	if (f < 0)
		return fbc_error_set(err, FBC_ENOTFOUND, "from",
				     "no bundle named or versioned '%s' in this channel", from);
	if (to && (t = find_node(&g, to)) < 0)
		return fbc_error_set(err, FBC_ENOTFOUND, "to",
				     "no bundle named or versioned '%s' in this channel", to);
	chain = calloc(g.n + 1, sizeof(*chain));
	prev = calloc(g.n + 1, sizeof(*prev));
	queue = calloc(g.n + 1, sizeof(*queue));
	steps = json_array();
	if (!chain || !prev || !queue || !steps) {
		rc = fbc_error_set(err, FBC_ENOMEM, "graph", "out of memory");
		goto done;
	}
	classic_chain(chain, &g);
	for (size_t i = 0; i < g.n; i++)
		prev[i] = -2; /* unvisited */
	if (classic) {
		/* OLM v0 takes the successor closest to the head, step by step */
		long cur = f;
		json_array_append_new(steps, node_json(&g, (size_t)cur, 0));
		prev[cur] = -1;
		while (cur != t) {
			rc = successors(&c, &n, &g, (size_t)cur, true, chain);
			if (rc != 0)
				goto oom;
			long next = n ? (long)c[0].idx : -1;
			unsigned kinds = n ? c[0].kinds : 0;
			free(c);
			c = NULL;
			if (next < 0 || prev[next] != -2)
				break;
			prev[next] = cur;
			json_array_append_new(steps, node_json(&g, (size_t)next, kinds));
			cur = next;
		}
		if (t >= 0 && cur != t) {
			rc = fbc_error_set(
				err, FBC_ENOTFOUND, "to",
				"'%s' cannot be reached from '%s' with classic semantics", to,
				from);
			goto done;
		}
	} else {
		/* OLM v1: fewest upgrades (breadth-first over every edge) */
		size_t qh = 0, qt = 0;
		queue[qt++] = f;
		prev[f] = -1;
		while (qh < qt) {
			long cur = queue[qh++];
			rc = successors(&c, &n, &g, (size_t)cur, false, chain);
			if (rc != 0)
				goto oom;
			for (size_t i = 0; i < n; i++) {
				if (prev[c[i].idx] == -2) {
					prev[c[i].idx] = cur;
					queue[qt++] = (long)c[i].idx;
				}
			}
			free(c);
			c = NULL;
		}
		if (t < 0) {
			t = f;
			for (size_t i = 0; i < qt; i++) {
				if (cmp_version(&g, (size_t)queue[i], (size_t)t) > 0)
					t = queue[i];
			}
		}
		if (prev[t] == -2) {
			rc = fbc_error_set(err, FBC_ENOTFOUND, "to",
					   "'%s' cannot be reached from '%s' with v1 semantics", to,
					   from);
			goto done;
		}
		size_t len = 0;
		for (long x = t; x >= 0; x = prev[x])
			queue[len++] = x;
		while (len)
			json_array_append_new(steps, node_json(&g, (size_t)queue[--len], 0));
	}
	res = json_object();
	const json_t *last = json_array_get(steps, json_array_size(steps) - 1);
	json_object_set_new(res, "semantics", json_string(semantics));
	json_object_set_new(res, "from", json_string(node_name(&g, (size_t)f)));
	json_object_set_new(res, "to", json_incref(json_object_get(last, "name")));
	json_object_set_new(res, "steps", steps);
	steps = NULL;
	*out = res;
	rc = 0;
	goto done;
oom:
	rc = fbc_error_set(err, FBC_ENOMEM, "graph", "out of memory");
done:
	json_decref(steps);
	free(c);
	free(chain);
	free(prev);
	free(queue);
	return rc;
}

/* ------------------------------------------------------------- formats */

static int edge_kind(fbc_graph_edge_kind *out, const char *k)
{
	static const fbc_graph_edge_kind kinds[] = {FBC_EDGE_REPLACES, FBC_EDGE_SKIPS,
						    FBC_EDGE_SKIP_RANGE};

	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (!strcmp(k, fbc_graph_edge_kind_name(kinds[i]))) {
			*out = kinds[i];
			return 0;
		}
	return FBC_EINVAL;
}

/* The node of a name (the first one, as node_index), or FBC_GRAPH_NONE. */
static size_t view_node(const fbc_strmap *by_name, const char *name)
{
	void *v = fbc_strmap_get(by_name, name);

	return v ? (size_t)(uintptr_t)v - 1 : FBC_GRAPH_NONE;
}

int fbc_http_graph_format(fbc_buf *b, const json_t *graph, const char *format, fbc_error *err)
{
	struct g g;
	fbc_graph_view v = {.style = FBC_GRAPH_STYLE_PLAIN};
	fbc_graph_view_node *nodes = NULL;
	fbc_graph_view_edge *edges = NULL;
	fbc_graph_format fmt = FBC_GRAPH_FORMAT_MERMAID;
	fbc_strmap by_name;
	size_t n_edges = 0;
	int rc;

	if ((rc = load(&g, graph, err)))
		return rc;
	if (!strcmp(format, "dot"))
		fmt = FBC_GRAPH_FORMAT_DOT;
	if (!strcmp(format, "svg")) { /* the DOT of a picture: head, deprecated... drawn apart */
		fmt = FBC_GRAPH_FORMAT_DOT;
		v.style = FBC_GRAPH_STYLE_ANNOTATED;
	}
	fbc_strmap_init(&by_name);
	nodes = calloc(g.n ? g.n : 1, sizeof(*nodes));
	edges = calloc(json_array_size(g.edges) + 1, sizeof(*edges));
	if (!nodes || !edges) {
		rc = fbc_error_set(err, FBC_ENOMEM, "graph", "out of memory");
		goto done;
	}
	for (size_t i = 0; i < g.n; i++) {
		const json_t *nd = json_array_get(g.nodes, i);
		const char *nm = node_name(&g, i);

		nodes[i].name = nm ? nm : "";
		nodes[i].version = node_version(&g, i);
		nodes[i].flags =
			(g.head && nm && !strcmp(nm, g.head) ? FBC_GRAPH_VIEW_HEAD : 0) |
			(json_is_true(json_object_get(nd, "deprecated")) ? FBC_GRAPH_VIEW_DEPRECATED
									 : 0);
		if (nm && fbc_strmap_add(&by_name, nm, (void *)(uintptr_t)(i + 1)) < 0) {
			rc = fbc_error_set(err, FBC_ENOMEM, "graph", "out of memory");
			goto done;
		}
	}
	for (size_t i = 0; i < json_array_size(g.edges); i++) {
		const json_t *ed = json_array_get(g.edges, i);
		const char *f = str(ed, "from"), *t = str(ed, "to"), *k = str(ed, "kind");
		fbc_graph_view_edge *e = &edges[n_edges];

		if (!f || !t || !k || edge_kind(&e->kind, k))
			continue;
		e->from = f;
		e->to = t;
		e->from_node = view_node(&by_name, f);
		e->to_node = view_node(&by_name, t);
		n_edges++;
	}
	v.package = str(graph, "package");
	v.channel = str(graph, "channel");
	v.nodes = nodes;
	v.n_nodes = g.n;
	v.edges = edges;
	v.n_edges = n_edges;
	if ((rc = fbc_graph_write_view(b, &v, fmt)))
		fbc_error_set(err, rc, "graph", "output too large");
done:
	fbc_strmap_dispose(&by_name);
	free(nodes);
	free(edges);
	return rc;
}
