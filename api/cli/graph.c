/*
 * `fbcd graph DIR --package P [--channel C] [--format json|dot|mermaid]`:
 * print the upgrade graph of one channel (service/fbc/graph.h): nodes with
 * versions, edges labelled replaces / skips / skipRange, the head, stranded
 * and deprecated entries marked. The graph is a view: it is printed for
 * invalid channels too (with the status saying what is wrong).
 */
#include "api/cli/cli.h"
#include "api/cli/util.h"
#include "service/fbc/graph_format.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>

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

struct opts {
	const char *package, *channel;
	fbc_graph_format format;
};

static int option(void *ctx, int c, const char *arg)
{
	struct opts *o = ctx;

	switch (c) {
	case 'p':
		o->package = arg;
		return 0;
	case 'c':
		o->channel = arg;
		return 0;
	default: /* 'f' */
		if (fbc_graph_format_parse(&o->format, arg)) {
			fprintf(stderr, "fbcd graph: unknown format '%s' (json, dot or mermaid)\n",
				arg);
			return FBC_CLI_USAGE;
		}
		return 0;
	}
}

int fbc_cmd_graph(int argc, char **argv)
{
	static const struct option opts[] = {{"package", required_argument, NULL, 'p'},
					     {"channel", required_argument, NULL, 'c'},
					     {"format", required_argument, NULL, 'f'},
					     {"help", no_argument, NULL, 'h'},
					     {NULL, 0, NULL, 0}};
	static const fbc_cli_cmd cmd = {"graph", ":p:c:f:h", opts, usage, option};
	struct opts o = {NULL, NULL, FBC_GRAPH_FORMAT_JSON};
	const char *pkg_name, *ch_name, *dir;
	fbc_catalog *cat = NULL;
	fbc_graph *g = NULL;
	fbc_package *pkg;
	fbc_channel *ch;
	fbc_diags diags = {0};
	fbc_error err;
	fbc_buf out;
	int rc, status;

	fbc_error_init(&err);
	fbc_buf_init(&out, 0);
	if ((status = fbc_cli_parse(&dir, &cmd, &o, argc, argv)) || !dir)
		goto done;
	pkg_name = o.package;
	ch_name = o.channel;
	status = FBC_CLI_USAGE;
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
	rc = fbc_graph_write(&out, pkg, g, o.format);
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
