/*
 * Text renderings of a channel's upgrade graph (graph.h): the JSON of
 * `fbcd graph`, Graphviz DOT and Mermaid.
 *
 * DOT and Mermaid are written from a small view (fbc_graph_view) so that
 * `fbcd graph` (from a built fbc_graph) and the REST API (from the graph
 * JSON stored in PostgreSQL, db/db.h) print through one writer: escaping,
 * node flags, labels, edge labels and edge styles exist once. Each
 * interface keeps its documented output through a style:
 *
 *  - FBC_GRAPH_STYLE_ANNOTATED (`fbcd graph`): a title with the channel's
 *    status, each node's marks (head, stranded, deprecated, external,
 *    no-bundle) spelled out in its label and coloured; Mermaid classes.
 *  - FBC_GRAPH_STYLE_PLAIN (GET .../graph?format=dot|mermaid): name and
 *    version, "(deprecated)" in the label, the head in bold.
 *
 * Ownership: a view borrows every string and array it points to; output is
 * appended to the caller's fbc_buf (whose maximum bounds it). Nothing is
 * kept between calls: safe on any number of threads with distinct buffers.
 */
#ifndef FBC_FBC_GRAPH_FORMAT_H
#define FBC_FBC_GRAPH_FORMAT_H

#include "service/base/buf.h"
#include "service/fbc/graph.h"

#include <stdbool.h>
#include <stddef.h>

typedef enum fbc_graph_format {
	FBC_GRAPH_FORMAT_JSON,
	FBC_GRAPH_FORMAT_DOT,
	FBC_GRAPH_FORMAT_MERMAID,
} fbc_graph_format;

/* "json", "dot" or "mermaid"; FBC_EINVAL for anything else (out untouched). */
int fbc_graph_format_parse(fbc_graph_format *out, const char *name);

typedef enum fbc_graph_style {
	FBC_GRAPH_STYLE_PLAIN,
	FBC_GRAPH_STYLE_ANNOTATED,
} fbc_graph_style;

/* Node flags of a view; also the order marks are spelled out in. */
#define FBC_GRAPH_VIEW_HEAD	  0x01u
#define FBC_GRAPH_VIEW_STRANDED	  0x02u
#define FBC_GRAPH_VIEW_DEPRECATED 0x04u
#define FBC_GRAPH_VIEW_EXTERNAL	  0x08u
#define FBC_GRAPH_VIEW_NO_BUNDLE  0x10u /* a channel entry without an olm.bundle */

typedef struct fbc_graph_view_node {
	const char *name;
	const char *version; /* NULL when unknown */
	unsigned flags;	     /* FBC_GRAPH_VIEW_* */
} fbc_graph_view_node;

typedef struct fbc_graph_view_edge {
	/* DOT names nodes, so an edge from a name that is not a node (a
	 * replaced bundle outside the channel) is still drawn; Mermaid numbers
	 * them and leaves such an edge out (*_node == FBC_GRAPH_NONE). */
	const char *from, *to;
	size_t from_node, to_node;
	fbc_graph_edge_kind kind;
} fbc_graph_view_edge;

typedef struct fbc_graph_view {
	const char *package;
	const char *channel;
	const char *status; /* ANNOTATED: shown in the DOT title */
	bool deprecated;    /* ANNOTATED: the channel is deprecated (DOT title) */
	const fbc_graph_view_node *nodes;
	size_t n_nodes;
	const fbc_graph_view_edge *edges;
	size_t n_edges;
	fbc_graph_style style;
} fbc_graph_view;

/* Append the view as DOT or Mermaid (FBC_GRAPH_FORMAT_JSON is a
 * programming error). Returns 0 or the buffer's FBC_ENOMEM / FBC_ELIMIT. */
int fbc_graph_write_view(fbc_buf *out, const fbc_graph_view *v, fbc_graph_format fmt);

/* Append `fbcd graph`'s rendering of g, a graph built with FBC_GRAPH_EDGES
 * from a channel of pkg: JSON (the CLI's documented shape, with the
 * package's deprecation messages) or the ANNOTATED DOT / Mermaid view.
 * Returns 0, FBC_ENOMEM or the buffer's FBC_ELIMIT. */
int fbc_graph_write(fbc_buf *out, const fbc_package *pkg, const fbc_graph *g, fbc_graph_format fmt);

#endif
