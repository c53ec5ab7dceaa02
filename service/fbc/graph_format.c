/*
 * JSON, DOT and Mermaid renderings of a channel graph (graph_format.h).
 * The two styles differ only in the table below; everything else (escaping,
 * labels, edge styles) is shared by `fbcd graph` and the REST API.
 */
#include "service/fbc/graph_format.h"

#include "service/base/error.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N_FLAGS 5

/* Spelled-out marks, by flag bit (FBC_GRAPH_VIEW_HEAD first). */
static const char *const mark_names[N_FLAGS] = {"head", "stranded", "deprecated", "external",
						"no-bundle"};

static const struct style {
	const char *indent;
	const char *node_defaults; /* DOT `node [...]` */
	bool title;		   /* DOT `label="pkg / channel (status)"` */
	const char *no_version;	   /* version line of a node without one; NULL: no line */
	unsigned marks;		   /* flags spelled out on a label's last line */
	const char *marks_open, *marks_close;
	const char *dot_attrs[N_FLAGS]; /* DOT node attributes, by flag bit */
	bool classes;			/* Mermaid classDef / class lines */
} styles[] = {
	[FBC_GRAPH_STYLE_PLAIN] = {"  ",
				   "shape=box",
				   false,
				   NULL,
				   FBC_GRAPH_VIEW_DEPRECATED,
				   "(",
				   ")",
				   {", style=bold", "", ", color=gray", "", ""},
				   false},
	[FBC_GRAPH_STYLE_ANNOTATED] = {"\t",
				       "shape=box, fontname=\"Helvetica\"",
				       true,
				       "?",
				       (1u << N_FLAGS) - 1,
				       "",
				       "",
				       {", penwidth=2, color=\"darkgreen\"", ", color=\"red\"",
					", style=\"filled\", fillcolor=\"lightgrey\"",
					", style=\"dashed\"", ""},
				       true},
};

int fbc_graph_format_parse(fbc_graph_format *out, const char *name)
{
	static const char *const names[] = {"json", "dot", "mermaid"};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strcmp(name, names[i]) == 0) {
			*out = (fbc_graph_format)i;
			return 0;
		}
	return FBC_EINVAL;
}

/* ------------------------------------------------------------- escaping */

/* Text inside a DOT double-quoted string; a newline would end a label line. */
static int put_dot_text(fbc_buf *b, const char *s)
{
	int rc = 0;

	for (; *s && !rc; s++) {
		if (*s == '"' || *s == '\\')
			rc = fbc_buf_putc(b, '\\');
		if (!rc)
			rc = fbc_buf_putc(b, *s == '\n' ? ' ' : *s);
	}
	return rc;
}

static int put_dot_str(fbc_buf *b, const char *s)
{
	int rc = fbc_buf_putc(b, '"');

	rc = rc ? rc : put_dot_text(b, s);
	return rc ? rc : fbc_buf_putc(b, '"');
}

/* Mermaid label text: a quote would end the label, a newline the line. */
static int put_mermaid_text(fbc_buf *b, const char *s)
{
	int rc = 0;

	for (; *s && !rc; s++)
		rc = *s == '"' ? fbc_buf_puts(b, "#quot;") : fbc_buf_putc(b, *s == '\n' ? ' ' : *s);
	return rc;
}

/* ---------------------------------------------------------------- labels */

/* The lines of a node's label: name, version (if the style shows one),
 * marks (if any). Returns how many. */
static size_t label_lines(const char *lines[3], char *marks, size_t marks_size,
			  const struct style *st, const fbc_graph_view_node *nd)
{
	size_t n = 0, len = 0;

	lines[n++] = nd->name ? nd->name : "";
	if (nd->version || st->no_version)
		lines[n++] = nd->version ? nd->version : st->no_version;
	marks[0] = '\0';
	for (unsigned i = 0; i < N_FLAGS; i++) {
		if (!(nd->flags & st->marks & (1u << i)))
			continue;
		/* marks_size fits every mark: nothing is cut */
		len += (size_t)snprintf(marks + len, marks_size - len, "%s%s",
					len ? " " : st->marks_open, mark_names[i]);
	}
	if (len) {
		snprintf(marks + len, marks_size - len, "%s", st->marks_close);
		lines[n++] = marks;
	}
	return n;
}

#define MARKS_MAX 96

static int dot_node(fbc_buf *b, const struct style *st, const fbc_graph_view_node *nd)
{
	const char *lines[3];
	char marks[MARKS_MAX];
	size_t n = label_lines(lines, marks, sizeof(marks), st, nd);
	int rc = fbc_buf_puts(b, st->indent);

	rc = rc ? rc : put_dot_str(b, lines[0]);
	rc = rc ? rc : fbc_buf_puts(b, " [label=\"");
	for (size_t i = 0; i < n && !rc; i++) {
		rc = i ? fbc_buf_puts(b, "\\n") : 0;
		rc = rc ? rc : put_dot_text(b, lines[i]);
	}
	rc = rc ? rc : fbc_buf_putc(b, '"');
	for (unsigned i = 0; i < N_FLAGS && !rc; i++)
		if (nd->flags & (1u << i))
			rc = fbc_buf_puts(b, st->dot_attrs[i]);
	return rc ? rc : fbc_buf_puts(b, "];\n");
}

static const char *dot_edge_style(fbc_graph_edge_kind k)
{
	return k == FBC_EDGE_REPLACES ? ""
	       : k == FBC_EDGE_SKIPS  ? ", style=dashed"
				      : ", style=dotted";
}

static int write_dot(fbc_buf *b, const fbc_graph_view *v, const struct style *st)
{
	const char *pkg = v->package ? v->package : "", *ch = v->channel ? v->channel : "";
	int rc;

	rc = fbc_buf_puts(b, "digraph \"");
	rc = rc ? rc : put_dot_text(b, pkg);
	rc = rc ? rc : fbc_buf_putc(b, '/');
	rc = rc ? rc : put_dot_text(b, ch);
	rc = rc ? rc
		: fbc_buf_printf(b, "\" {\n%srankdir=LR;\n%snode [%s];\n", st->indent, st->indent,
				 st->node_defaults);
	if (!rc && st->title) {
		rc = fbc_buf_printf(b, "%slabel=\"", st->indent);
		rc = rc ? rc : put_dot_text(b, pkg);
		rc = rc ? rc : fbc_buf_puts(b, " / ");
		rc = rc ? rc : put_dot_text(b, ch);
		if (v->status && v->status[0]) { /* the REST graph has no status */
			rc = rc ? rc : fbc_buf_puts(b, " (");
			rc = rc ? rc : put_dot_text(b, v->status);
			rc = rc ? rc : fbc_buf_putc(b, ')');
		}
		rc = rc ? rc : fbc_buf_printf(b, "%s\";\n", v->deprecated ? " deprecated" : "");
	}
	for (size_t i = 0; i < v->n_nodes && !rc; i++)
		rc = dot_node(b, st, &v->nodes[i]);
	for (size_t i = 0; i < v->n_edges && !rc; i++) {
		const fbc_graph_view_edge *e = &v->edges[i];

		rc = fbc_buf_puts(b, st->indent);
		rc = rc ? rc : put_dot_str(b, e->from);
		rc = rc ? rc : fbc_buf_puts(b, " -> ");
		rc = rc ? rc : put_dot_str(b, e->to);
		rc = rc ? rc
			: fbc_buf_printf(b, " [label=\"%s\"%s];\n",
					 fbc_graph_edge_kind_name(e->kind),
					 dot_edge_style(e->kind));
	}
	return rc ? rc : fbc_buf_puts(b, "}\n");
}

static int write_mermaid(fbc_buf *b, const fbc_graph_view *v, const struct style *st)
{
	/* Mermaid classes, by flag bit */
	static const char *const class_defs[] = {"stroke:#080,stroke-width:3px",
						 "stroke:#c00,stroke-width:2px",
						 "fill:#ddd,color:#666"};
	const size_t n_classes = sizeof(class_defs) / sizeof(class_defs[0]);
	int rc = fbc_buf_puts(b, "graph LR\n");

	for (size_t i = 0; i < v->n_nodes && !rc; i++) {
		const char *lines[3];
		char marks[MARKS_MAX];
		size_t n = label_lines(lines, marks, sizeof(marks), st, &v->nodes[i]);

		rc = fbc_buf_printf(b, "%sn%zu[\"", st->indent, i);
		for (size_t k = 0; k < n && !rc; k++) {
			rc = k ? fbc_buf_puts(b, "<br/>") : 0;
			rc = rc ? rc : put_mermaid_text(b, lines[k]);
		}
		rc = rc ? rc : fbc_buf_puts(b, "\"]\n");
	}
	for (size_t i = 0; i < v->n_edges && !rc; i++) {
		const fbc_graph_view_edge *e = &v->edges[i];

		if (e->from_node == FBC_GRAPH_NONE || e->to_node == FBC_GRAPH_NONE)
			continue;
		rc = fbc_buf_printf(b, "%sn%zu %s|%s| n%zu\n", st->indent, e->from_node,
				    e->kind == FBC_EDGE_REPLACES ? "-->" : "-.->",
				    fbc_graph_edge_kind_name(e->kind), e->to_node);
	}
	if (!st->classes)
		return rc;
	for (size_t k = 0; k < n_classes && !rc; k++)
		rc = fbc_buf_printf(b, "%sclassDef %s %s\n", st->indent, mark_names[k],
				    class_defs[k]);
	for (size_t i = 0; i < v->n_nodes && !rc; i++)
		for (size_t k = 0; k < n_classes && !rc; k++)
			if (v->nodes[i].flags & (1u << k))
				rc = fbc_buf_printf(b, "%sclass n%zu %s\n", st->indent, i,
						    mark_names[k]);
	return rc;
}

int fbc_graph_write_view(fbc_buf *out, const fbc_graph_view *v, fbc_graph_format fmt)
{
	const struct style *st = &styles[v->style];

	assert(fmt == FBC_GRAPH_FORMAT_DOT || fmt == FBC_GRAPH_FORMAT_MERMAID);
	return fmt == FBC_GRAPH_FORMAT_DOT ? write_dot(out, v, st) : write_mermaid(out, v, st);
}

/* ------------------------------------------------- fbcd graph (fbc_graph) */

static const char *status_name(fbc_graph_status s)
{
	switch (s) {
	case FBC_GRAPH_OK:
		return "ok";
	case FBC_GRAPH_EMPTY:
		return "empty";
	case FBC_GRAPH_NO_HEAD:
		return "no-head";
	case FBC_GRAPH_MULTIPLE_HEADS:
		return "multiple-heads";
	case FBC_GRAPH_CYCLE:
		return "cycle";
	case FBC_GRAPH_STRANDED:
		return "stranded";
	}
	return "unknown";
}

/* The message of the package's deprecation entry for (schema, name), or NULL. */
static const char *deprecation_of(const fbc_package *pkg, const char *schema, const char *name)
{
	const fbc_deprecation *d = pkg->deprecation;

	for (size_t i = 0; d && i < d->n_entries; i++)
		if (strcmp(d->entries[i].schema, schema) == 0 &&
		    strcmp(d->entries[i].name ? d->entries[i].name : "", name) == 0)
			return d->entries[i].message;
	return NULL;
}

static int put_jstr(fbc_buf *b, const char *s)
{
	return fbc_buf_put_json_string(b, s ? s : "", s ? strlen(s) : 0);
}

static const char *jbool(bool v)
{
	return v ? "true" : "false";
}

static int write_json(fbc_buf *b, const fbc_package *pkg, const fbc_graph *g)
{
	const fbc_channel *ch = g->channel;
	const char *msg;
	int rc = 0;

	rc |= fbc_buf_puts(b, "{\"package\":");
	rc |= put_jstr(b, pkg->name);
	rc |= fbc_buf_puts(b, ",\"channel\":");
	rc |= put_jstr(b, ch->name);
	rc |= fbc_buf_printf(b, ",\"defaultChannel\":%s",
			     jbool(strcmp(pkg->default_channel, ch->name) == 0));
	rc |= fbc_buf_printf(b, ",\"status\":\"%s\",\"head\":", status_name(g->status));
	if (g->head != FBC_GRAPH_NONE)
		rc |= put_jstr(b, g->nodes[g->head].name);
	else
		rc |= fbc_buf_puts(b, "null");
	msg = deprecation_of(pkg, "olm.channel", ch->name);
	rc |= fbc_buf_printf(b, ",\"deprecated\":%s", jbool(g->channel_deprecated || msg));
	if (msg) {
		rc |= fbc_buf_puts(b, ",\"deprecation\":");
		rc |= put_jstr(b, msg);
	}
	msg = deprecation_of(pkg, "olm.package", "");
	if (g->package_deprecated || msg) {
		rc |= fbc_buf_puts(b, ",\"packageDeprecated\":true,\"packageDeprecation\":");
		rc |= put_jstr(b, msg);
	}
	rc |= fbc_buf_puts(b, ",\"nodes\":[");
	for (size_t i = 0; i < g->n_nodes; i++) {
		const fbc_graph_node *n = &g->nodes[i];

		msg = deprecation_of(pkg, "olm.bundle", n->name);
		rc |= fbc_buf_puts(b, i ? ",{\"name\":" : "{\"name\":");
		rc |= put_jstr(b, n->name);
		rc |= fbc_buf_puts(b, ",\"version\":");
		rc |= put_jstr(b, n->version);
		if (n->release && n->release[0]) {
			rc |= fbc_buf_puts(b, ",\"release\":");
			rc |= put_jstr(b, n->release);
		}
		rc |= fbc_buf_printf(b,
				     ",\"head\":%s,\"onChain\":%s,\"skipped\":%s,\"stranded\":%s,"
				     "\"external\":%s,\"deprecated\":%s",
				     jbool(n->head), jbool(n->on_chain), jbool(n->skipped),
				     jbool(n->stranded), jbool(n->external),
				     jbool(n->deprecated || msg));
		if (msg) {
			rc |= fbc_buf_puts(b, ",\"deprecation\":");
			rc |= put_jstr(b, msg);
		}
		if (!n->external && !n->bundle)
			rc |= fbc_buf_puts(b, ",\"missingBundle\":true");
		rc |= fbc_buf_putc(b, '}');
	}
	rc |= fbc_buf_puts(b, "],\"edges\":[");
	for (size_t i = 0; i < g->n_edges; i++) {
		const fbc_graph_edge *e = &g->edges[i];

		rc |= fbc_buf_puts(b, i ? ",{\"from\":" : "{\"from\":");
		rc |= put_jstr(b, g->nodes[e->from].name);
		rc |= fbc_buf_puts(b, ",\"to\":");
		rc |= put_jstr(b, g->nodes[e->to].name);
		rc |= fbc_buf_printf(b, ",\"type\":\"%s\"}", fbc_graph_edge_kind_name(e->kind));
	}
	rc |= fbc_buf_puts(b, "]}\n");
	return rc ? FBC_ENOMEM : 0;
}

int fbc_graph_write(fbc_buf *out, const fbc_package *pkg, const fbc_graph *g, fbc_graph_format fmt)
{
	fbc_graph_view_node *nodes = NULL;
	fbc_graph_view_edge *edges = NULL;
	fbc_graph_view v = {0};
	int rc = FBC_ENOMEM;

	if (fmt == FBC_GRAPH_FORMAT_JSON)
		return write_json(out, pkg, g);
	nodes = calloc(g->n_nodes ? g->n_nodes : 1, sizeof(*nodes));
	edges = calloc(g->n_edges ? g->n_edges : 1, sizeof(*edges));
	if (!nodes || !edges)
		goto done;
	for (size_t i = 0; i < g->n_nodes; i++) {
		const fbc_graph_node *n = &g->nodes[i];

		nodes[i].name = n->name;
		nodes[i].version = n->version[0] ? n->version : NULL;
		nodes[i].flags = (n->head ? FBC_GRAPH_VIEW_HEAD : 0) |
				 (n->stranded ? FBC_GRAPH_VIEW_STRANDED : 0) |
				 (n->deprecated || deprecation_of(pkg, "olm.bundle", n->name)
					  ? FBC_GRAPH_VIEW_DEPRECATED
					  : 0) |
				 (n->external ? FBC_GRAPH_VIEW_EXTERNAL : 0) |
				 (!n->external && !n->bundle ? FBC_GRAPH_VIEW_NO_BUNDLE : 0);
	}
	for (size_t i = 0; i < g->n_edges; i++) {
		const fbc_graph_edge *e = &g->edges[i];

		edges[i] = (fbc_graph_view_edge){g->nodes[e->from].name, g->nodes[e->to].name,
						 e->from, e->to, e->kind};
	}
	v.package = pkg->name;
	v.channel = g->channel->name;
	v.status = status_name(g->status);
	v.deprecated =
		g->channel_deprecated || deprecation_of(pkg, "olm.channel", g->channel->name);
	v.nodes = nodes;
	v.n_nodes = g->n_nodes;
	v.edges = edges;
	v.n_edges = g->n_edges;
	v.style = FBC_GRAPH_STYLE_ANNOTATED;
	rc = fbc_graph_write_view(out, &v, fmt);
done:
	free(nodes);
	free(edges);
	return rc;
}
