/* fbcd: the one executable. main() only dispatches to a subcommand. */
#include "api/cli/cli.h"

#include <stdio.h>
#include <string.h>

#ifndef FBCD_VERSION
#define FBCD_VERSION "dev"
#endif

struct command {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
};

static const struct command commands[] = {
	{"validate", fbc_cmd_validate,
	 "validate a File-Based Catalog directory (opm validate semantics)"},
	{"render", fbc_cmd_render,
	 "print a catalog as a canonical JSON stream, or a bundle directory as opm renders it"},
	{"bundle", fbc_cmd_bundle, "validate a registry+v1 bundle directory (bundle validate)"},
	{"graph", fbc_cmd_graph, "print a package's upgrade graph (json, dot, mermaid)"},
	{"resolve", fbc_cmd_resolve, "resolve install/upgrade requests against catalogs"},
	{"serve", fbc_cmd_serve, "run the catalog service (REST API, PostgreSQL)"},
	{"token", fbc_cmd_token, "manage API tokens"},
	{"migrate", fbc_cmd_migrate, "apply database migrations and exit"},
	{"worker", fbc_cmd_worker, "run job workers only (the pipeline, no HTTP server)"},
	{"template", fbc_cmd_template, "render catalog templates as opm does, without pulling"},
	{"pr", fbc_cmd_pr, "check a pull request (fbcd pr check --base REV --head REV)"},
	{"repo", fbc_cmd_repo, "build the catalogs of an operator repository (add mode)"},
	{"image", fbc_cmd_image, "build, push, pull and inspect catalog images (OCI)"},
};

static void usage(FILE *f)
{
	fprintf(f, "usage: fbcd COMMAND [OPTIONS] [ARGS]\n\n"
		   "fbcd is a catalog service for Operator Lifecycle Manager (OLM).\n\n"
		   "Commands:\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].summary);
	fprintf(f, "\nRun 'fbcd COMMAND --help' for the options of a command.\n");
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
	    strcmp(argv[1], "help") == 0) {
		usage(stdout);
		return 0;
	}
	if (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "version") == 0) {
		printf("fbcd %s\n", FBCD_VERSION);
		return 0;
	}
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
		if (strcmp(argv[1], commands[i].name) == 0)
			return commands[i].fn(argc - 1, argv + 1);
	}
	fprintf(stderr, "fbcd: unknown command '%s'\n\n", argv[1]);
	usage(stderr);
	return 2;
}
