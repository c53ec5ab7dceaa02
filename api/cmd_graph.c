/*
 * `fbcd graph DIR --package P [--channel C] [--format json|dot|mermaid]`:
 * print the upgrade graph of one channel (service/fbc/graph.h): nodes with
 * versions, edges labelled replaces / skips / skipRange, the head, stranded
 * and deprecated entries marked. The graph is a view: it is printed for
 * invalid channels too (with the status saying what is wrong).
 */
#include "api/cli.h"
#include "api/cli_util.h"
#include "service/fbc/graph.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>

enum format { F_JSON, F_DOT, F_MERMAID };

static void usage(FILE *f)
{
	fputs("usage: fbcd graph DIR --package P [--channel C] [--format json|dot|mermaid]\n"
	      "\n"
	      "Print the upgrade graph of a channel of the File-Based Catalog in DIR: its\n"
	      "entries with their versions, edges labelled replaces, skips and skipRange\n"
	      "(from the bundle upgraded from to the entry upgraded to), the head, and the\n"
	      "stranded and deprecated entries (olm.deprecations). Names that entries\n"
	      "replace or skip but that are not in the channel appear as external nodes.\n"
	      "\n"
	      "Options:\n"
	      "  -p, --package P        the package (required)\n"
	      "  -c, --channel C        the channel (default: the package's default channel)\n"
	      "  -f, --format FORMAT    json (default), dot (Graphviz) or mermaid\n"
	      "  -h, --help             show this help\n"
	      "\n"
	      "Exit status: 0 printed, 2 usage or I/O error, or no such package or channel.\n",
	      f);
}

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

static int format_json(fbc_buf *b, const fbc_package *pkg, const fbc_graph *g)
{
	const fbc_channel *ch = g->channel;
	const char *msg;
	int rc = 0;

	rc |= fbc_buf_puts(b, "{\"package\":");
	rc |= put_jstr(b, pkg->name);
	rc |= fbc_buf_puts(b, ",\"channel\":");
	rc |= put_jstr(b, ch->name);
	rc |= fbc_buf_printf(b, ",\"defaultChannel\":%s",
			     strcmp(pkg->default_channel, ch->name) == 0 ? "true" : "false");
	rc |= fbc_buf_printf(b, ",\"status\":\"%s\",\"head\":", status_name(g->status));
	if (g->head != FBC_GRAPH_NONE)
		rc |= put_jstr(b, g->nodes[g->head].name);
	else
		rc |= fbc_buf_puts(b, "null");
	msg = deprecation_of(pkg, "olm.channel", ch->name);
	rc |= fbc_buf_printf(b, ",\"deprecated\":%s",
			     g->channel_deprecated || msg ? "true" : "false");
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
				     n->head ? "true" : "false", n->on_chain ? "true" : "false",
				     n->skipped ? "true" : "false", n->stranded ? "true" : "false",
				     n->external ? "true" : "false",
				     n->deprecated || msg ? "true" : "false");
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

/* Graphviz ID / label text inside double quotes. */
static int put_dot_str(fbc_buf *b, const char *s)
{
	int rc = fbc_buf_putc(b, '"');

	for (; *s && !rc; s++) {
		if (*s == '"' || *s == '\\')
			rc = fbc_buf_putc(b, '\\');
		if (!rc)
			rc = fbc_buf_putc(b, *s == '\n' ? ' ' : *s);
	}
	return rc ? rc : fbc_buf_putc(b, '"');
}

/* A quoted label of up to three lines (DOT's \\n line breaks). */
static int put_dot_label(fbc_buf *b, const char *l1, const char *l2, const char *l3)
{
	const char *lines[3] = {l1, l2, l3};
	int rc = fbc_buf_putc(b, '"');

	for (int i = 0; i < 3 && !rc && lines[i]; i++) {
		if (i)
			rc = fbc_buf_puts(b, "\\n");
		for (const char *s = lines[i]; *s && !rc; s++) {
			if (*s == '"' || *s == '\\')
				rc = fbc_buf_putc(b, '\\');
			if (!rc)
				rc = fbc_buf_putc(b, *s == '\n' ? ' ' : *s);
		}
	}
	return rc ? rc : fbc_buf_putc(b, '"');
}

/* The marks of a node, space separated ("head stranded deprecated"). */
static void marks(char *out, size_t n, const fbc_package *pkg, const fbc_graph_node *nd)
{
	bool dep = nd->deprecated || deprecation_of(pkg, "olm.bundle", nd->name);

	snprintf(out, n, "%s%s%s%s%s", nd->head ? " head" : "", nd->stranded ? " stranded" : "",
		 dep ? " deprecated" : "", nd->external ? " external" : "",
		 !nd->external && !nd->bundle ? " no-bundle" : "");
}

static int format_dot(fbc_buf *b, const fbc_package *pkg, const fbc_graph *g)
{
	char title[512], m[96];
	int rc = 0;

	snprintf(title, sizeof(title), "%s/%s", pkg->name, g->channel->name);
	rc |= fbc_buf_puts(b, "digraph ");
	rc |= put_dot_str(b, title);
	rc |= fbc_buf_puts(b, " {\n\trankdir=LR;\n\tnode [shape=box, fontname=\"Helvetica\"];\n");
	rc |= fbc_buf_puts(b, "\tlabel=");
	snprintf(title, sizeof(title), "%s / %s (%s)%s", pkg->name, g->channel->name,
		 status_name(g->status),
		 g->channel_deprecated || deprecation_of(pkg, "olm.channel", g->channel->name)
			 ? " deprecated"
			 : "");
	rc |= put_dot_str(b, title);
	rc |= fbc_buf_puts(b, ";\n");
	for (size_t i = 0; i < g->n_nodes; i++) {
		const fbc_graph_node *nd = &g->nodes[i];
		marks(m, sizeof(m), pkg, nd);
		rc |= fbc_buf_putc(b, '\t');
		rc |= put_dot_str(b, nd->name);
		rc |= fbc_buf_puts(b, " [label=");
		rc |= put_dot_label(b, nd->name, nd->version[0] ? nd->version : "?",
				    m[0] ? m + 1 : NULL);
		if (nd->head)
			rc |= fbc_buf_puts(b, ", penwidth=2, color=\"darkgreen\"");
		if (nd->stranded)
			rc |= fbc_buf_puts(b, ", color=\"red\"");
		if (strstr(m, "deprecated"))
			rc |= fbc_buf_puts(b, ", style=\"filled\", fillcolor=\"lightgrey\"");
		if (nd->external)
			rc |= fbc_buf_puts(b, ", style=\"dashed\"");
		rc |= fbc_buf_puts(b, "];\n");
	}
	for (size_t i = 0; i < g->n_edges; i++) {
		const fbc_graph_edge *e = &g->edges[i];

		rc |= fbc_buf_putc(b, '\t');
		rc |= put_dot_str(b, g->nodes[e->from].name);
		rc |= fbc_buf_puts(b, " -> ");
		rc |= put_dot_str(b, g->nodes[e->to].name);
		rc |= fbc_buf_printf(b, " [label=\"%s\"%s];\n", fbc_graph_edge_kind_name(e->kind),
				     e->kind == FBC_EDGE_REPLACES ? ""
				     : e->kind == FBC_EDGE_SKIPS  ? ", style=dashed"
								  : ", style=dotted");
	}
	rc |= fbc_buf_puts(b, "}\n");
	return rc ? FBC_ENOMEM : 0;
}

/* Mermaid label text: quotes would end the label. */
static int put_mermaid_text(fbc_buf *b, const char *s)
{
	int rc = 0;

	for (; *s && !rc; s++)
		rc = *s == '"' ? fbc_buf_puts(b, "#quot;") : fbc_buf_putc(b, *s);
	return rc;
}

static int format_mermaid(fbc_buf *b, const fbc_package *pkg, const fbc_graph *g)
{
	char m[96];
	int rc = 0;

	rc |= fbc_buf_puts(b, "graph LR\n");
	for (size_t i = 0; i < g->n_nodes; i++) {
		const fbc_graph_node *nd = &g->nodes[i];

		marks(m, sizeof(m), pkg, nd);
		rc |= fbc_buf_printf(b, "\tn%zu[\"", i);
		rc |= put_mermaid_text(b, nd->name);
		rc |= fbc_buf_puts(b, "<br/>");
		rc |= put_mermaid_text(b, nd->version[0] ? nd->version : "?");
		if (m[0]) {
			rc |= fbc_buf_puts(b, "<br/>");
			rc |= fbc_buf_puts(b, m + 1);
		}
		rc |= fbc_buf_puts(b, "\"]\n");
	}
	for (size_t i = 0; i < g->n_edges; i++) {
		const fbc_graph_edge *e = &g->edges[i];

		rc |= fbc_buf_printf(b, "\tn%zu %s|%s| n%zu\n", e->from,
				     e->kind == FBC_EDGE_REPLACES ? "-->" : "-.->",
				     fbc_graph_edge_kind_name(e->kind), e->to);
	}
	rc |= fbc_buf_puts(b, "\tclassDef head stroke:#080,stroke-width:3px\n"
			      "\tclassDef stranded stroke:#c00,stroke-width:2px\n"
			      "\tclassDef deprecated fill:#ddd,color:#666\n");
	for (size_t i = 0; i < g->n_nodes; i++) {
		const fbc_graph_node *nd = &g->nodes[i];

		marks(m, sizeof(m), pkg, nd);
		if (nd->head)
			rc |= fbc_buf_printf(b, "\tclass n%zu head\n", i);
		if (nd->stranded)
			rc |= fbc_buf_printf(b, "\tclass n%zu stranded\n", i);
		if (strstr(m, "deprecated"))
			rc |= fbc_buf_printf(b, "\tclass n%zu deprecated\n", i);
	}
	return rc ? FBC_ENOMEM : 0;
}

int fbc_cmd_graph(int argc, char **argv)
{
	static const struct option opts[] = {{"package", required_argument, NULL, 'p'},
					     {"channel", required_argument, NULL, 'c'},
					     {"format", required_argument, NULL, 'f'},
					     {"help", no_argument, NULL, 'h'},
					     {NULL, 0, NULL, 0}};
	const char *pkg_name = NULL, *ch_name = NULL, *dir;
	enum format fmt = F_JSON;
	fbc_catalog *cat = NULL;
	fbc_graph *g = NULL;
	fbc_package *pkg;
	fbc_channel *ch;
	fbc_diags diags;
	fbc_error err;
	fbc_buf out;
	int c, rc, status = FBC_CLI_USAGE;

	fbc_error_init(&err);
	fbc_buf_init(&out, 0);
	if (fbc_diags_init(&diags, 0)) {
		fputs("fbcd graph: out of memory\n", stderr);
		return FBC_CLI_USAGE;
	}
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":p:c:f:h", opts, NULL)) != -1) {
		switch (c) {
		case 'p':
			pkg_name = optarg;
			break;
		case 'c':
			ch_name = optarg;
			break;
		case 'f':
			if (strcmp(optarg, "json") == 0) {
				fmt = F_JSON;
			} else if (strcmp(optarg, "dot") == 0) {
				fmt = F_DOT;
			} else if (strcmp(optarg, "mermaid") == 0) {
				fmt = F_MERMAID;
			} else {
				fprintf(stderr,
					"fbcd graph: unknown format '%s' (json, dot or mermaid)\n",
					optarg);
				goto done;
			}
			break;
		case 'h':
			usage(stdout);
			status = FBC_CLI_OK;
			goto done;
		case ':':
			fprintf(stderr, "fbcd graph: option '%s' needs a value\n",
				argv[optind - 1]);
			usage(stderr);
			goto done;
		default:
			fprintf(stderr, "fbcd graph: unknown option '%s'\n", argv[optind - 1]);
			usage(stderr);
			goto done;
		}
	}
	if (optind != argc - 1) {
		fprintf(stderr, "fbcd graph: expected one catalog directory, got %d arguments\n",
			argc - optind);
		usage(stderr);
		goto done;
	}
	dir = argv[optind];
	if (!pkg_name) {
		fputs("fbcd graph: --package is required\n", stderr);
		usage(stderr);
		goto done;
	}
	if ((status = fbc_cli_load(&cat, "graph", dir, &diags)))
		goto done;
	status = FBC_CLI_USAGE;
	if (fbc_diags_count(&diags))
		fprintf(stderr,
			"fbcd graph: warning: %s has %zu load error(s); run 'fbcd validate' for "
			"details\n",
			dir, fbc_diags_count(&diags) + diags.dropped);
	if (!(pkg = fbc_catalog_package(cat, pkg_name))) {
		fprintf(stderr, "fbcd graph: %s: no package \"%s\"\n", dir, pkg_name);
		goto done;
	}
	if (!ch_name)
		ch_name = pkg->default_channel;
	if (!(ch = fbc_package_channel(pkg, ch_name))) {
		fprintf(stderr, "fbcd graph: %s: package \"%s\" has no channel \"%s\"%s\n", dir,
			pkg_name, ch_name,
			ch_name == pkg->default_channel ? " (its default channel)" : "");
		goto done;
	}
	if (fbc_graph_build(&g, ch, FBC_GRAPH_EDGES, &err)) {
		fprintf(stderr, "fbcd graph: package \"%s\", channel \"%s\": %s\n", pkg_name,
			ch_name, err.message);
		goto done;
	}
	rc = fmt == F_JSON  ? format_json(&out, pkg, g)
	     : fmt == F_DOT ? format_dot(&out, pkg, g)
			    : format_mermaid(&out, pkg, g);
	if (rc || fwrite(out.data, 1, out.len, stdout) != out.len || fflush(stdout)) {
		fputs("fbcd graph: writing the graph failed\n", stderr);
		goto done;
	}
	status = FBC_CLI_OK;
done:
	fbc_graph_free(g);
	fbc_buf_dispose(&out);
	fbc_catalog_free(cat);
	fbc_diags_dispose(&diags);
	return status;
}
