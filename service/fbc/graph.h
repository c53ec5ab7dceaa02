/*
 * The upgrade graph of one channel (spec fbc-validation.md §3, resolver.md
 * §3): heads, the replaces chain and stranded entries exactly as opm's
 * validator computes them (rules V4, V5, V6), the edges (replaces, skips,
 * skipRange), and successor / upgrade-path queries in both OLM semantics:
 *
 *  - FBC_UPGRADE_CLASSIC (OLM v0): the channel is ordered by walking
 *    `replaces` from the head, leaving out entries that some entry skips
 *    (they are never offered). A successor of an installed bundle I is an
 *    entry on that order with replaces == I, I in skips, or a skipRange
 *    containing I's version; the one closest to the head is preferred.
 *  - FBC_UPGRADE_V1 (operator-controller): no head, no chain. Every entry E
 *    with E.replaces == I, I in E.skips, or E.skipRange containing I's
 *    version; non-deprecated first, then highest version (and release).
 *
 * Typical use:
 *
 *     fbc_graph *g;
 *     fbc_graph_build(&g, channel, FBC_GRAPH_EDGES, &err);
 *     for (i = 0; i < g->n_nodes; i++) ... g->nodes[i].head / .stranded ...
 *     for (i = 0; i < g->n_edges; i++) ... g->edges[i].from -> .to, .kind ...
 *     fbc_graph_list next;
 *     fbc_graph_successors(&next, g, FBC_UPGRADE_V1, "foo.v1.0.0", "1.0.0", &err);
 *     ... g->nodes[next.items[0]] is the preferred successor ...
 *     fbc_graph_list_dispose(&next);
 *     fbc_graph_free(g);
 *
 * Ownership: a graph borrows the strings and objects of the (linked)
 * catalog the channel belongs to; keep the catalog alive while the graph is.
 * Everything else belongs to the graph. A built graph is read-only: queries
 * may run on several threads at once. Building is O(entries) without
 * FBC_GRAPH_EDGES and O(entries^2) range checks with it.
 */
#ifndef FBC_FBC_GRAPH_H
#define FBC_FBC_GRAPH_H

#include "service/base/error.h"
#include "service/fbc/model.h"

#include <stdbool.h>
#include <stddef.h>

#define FBC_GRAPH_NONE ((size_t)-1)

typedef enum fbc_graph_edge_kind {
	FBC_EDGE_REPLACES,   /* to.replaces == from */
	FBC_EDGE_SKIPS,	     /* from in to.skips */
	FBC_EDGE_SKIP_RANGE, /* to.skipRange contains from's version (entries of the channel only)
			      */
} fbc_graph_edge_kind;

typedef struct fbc_graph_node {
	const char *name;
	const char *version;		/* bundle version text; "" without a bundle */
	const char *release;		/* bundle release; "" when none */
	const fbc_channel_entry *entry; /* NULL for an external node */
	const fbc_bundle *bundle;	/* NULL when no olm.bundle has this name (C19) */
	bool external;	    /* named by a replaces/skips but not an entry of the channel */
	bool head;	    /* §3.1: no entry replaces or skips it */
	bool on_chain;	    /* on the §3.2 replaces chain from the unique head */
	bool skipped;	    /* named in some entry's skips */
	bool stranded;	    /* §3.2: neither on the chain nor skipped (V6) */
	bool deprecated;    /* an olm.deprecations olm.bundle entry names it */
	size_t classic_pos; /* place in the OLM v0 order (0 = head); FBC_GRAPH_NONE if not offered
			     */
} fbc_graph_node;

typedef struct fbc_graph_edge {
	size_t from; /* node upgraded from */
	size_t to;   /* node (always a channel entry) upgraded to */
	fbc_graph_edge_kind kind;
} fbc_graph_edge;

typedef enum fbc_graph_status {
	FBC_GRAPH_OK,
	FBC_GRAPH_EMPTY,	  /* no entries (V3) */
	FBC_GRAPH_NO_HEAD,	  /* V4 */
	FBC_GRAPH_MULTIPLE_HEADS, /* V4 */
	FBC_GRAPH_CYCLE,	  /* V5 (stranded is then not computed, as in opm) */
	FBC_GRAPH_STRANDED,	  /* V6 */
} fbc_graph_status;

/* Build flags. */
#define FBC_GRAPH_EDGES 1u /* compute edges and parse skipRanges (needed by the queries) */

typedef struct fbc_graph_priv fbc_graph_priv;

typedef struct fbc_graph {
	const fbc_channel *channel;
	/* nodes[0..n_entries) are the channel's entries in entry order (a
	 * duplicated name keeps its first entry); external nodes follow. */
	fbc_graph_node *nodes;
	size_t n_nodes;
	size_t n_entries;
	fbc_graph_edge *edges; /* by target entry order, then kind; FBC_GRAPH_EDGES only */
	size_t n_edges;
	size_t *heads; /* sorted by name */
	size_t n_heads;
	size_t head; /* the unique head, or FBC_GRAPH_NONE */
	fbc_graph_status status;
	/* V5: the names from the first visit of the repeated name to its
	 * second, e.g. {"b", "c", "b"}. */
	const char **cycle;
	size_t n_cycle;
	size_t *stranded; /* sorted by name */
	size_t n_stranded;
	size_t *classic; /* the OLM v0 order, head first */
	size_t n_classic;
	bool channel_deprecated; /* an olm.channel deprecation names this channel */
	bool package_deprecated;
	fbc_graph_priv *priv;
} fbc_graph;

int fbc_graph_build(fbc_graph **out, const fbc_channel *ch, unsigned flags, fbc_error *err);
void fbc_graph_free(fbc_graph *g);

/* The node of an entry (or external name); FBC_GRAPH_NONE when absent. */
size_t fbc_graph_find(const fbc_graph *g, const char *name);

typedef enum fbc_upgrade_mode {
	FBC_UPGRADE_CLASSIC,
	FBC_UPGRADE_V1,
} fbc_upgrade_mode;

/* A list of node indices (malloc'd; release with fbc_graph_list_dispose). */
typedef struct fbc_graph_list {
	size_t *items;
	size_t n;
} fbc_graph_list;

void fbc_graph_list_dispose(fbc_graph_list *l);

/* Successors of an installed bundle, best first (see the top of this file).
 * name is the installed bundle's name; version its version text, or NULL to
 * take it from the channel entry of that name (no version: only replaces
 * and skips edges apply). The installed bundle itself is never listed.
 * Needs a graph built with FBC_GRAPH_EDGES. */
int fbc_graph_successors(fbc_graph_list *out, const fbc_graph *g, fbc_upgrade_mode mode,
			 const char *name, const char *version, fbc_error *err);

/* The upgrade path from an installed bundle: the steps, not including the
 * start. CLASSIC: a shortest sequence of successor steps ending at the
 * head (ties broken towards the head); FBC_ENOTFOUND when the head cannot
 * be reached or the channel has no unique head. V1: repeatedly the best
 * successor until there is none (a revisit ends the path). An empty path
 * means the start is already where it would end. */
int fbc_graph_upgrade_path(fbc_graph_list *out, const fbc_graph *g, fbc_upgrade_mode mode,
			   const char *name, const char *version, fbc_error *err);

const char *fbc_graph_edge_kind_name(fbc_graph_edge_kind k); /* "replaces", "skips", "skipRange" */

#endif
