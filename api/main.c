/* fbcd: the one executable. main() only dispatches to a subcommand. */
#include "api/cli/cli.h"
#include "service/load/json_arena.h"
#include "service/load/load.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef FBCD_LAZY_LIBS
/* api/lazy/gen_stubs.py: the sonames of the libraries bound on first use */
extern const char *const fbc_lazy_libraries[];
#endif

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

/* --yaml-expand-ratio N and --yaml-expand-max BYTES apply to every command
 * that reads YAML (validate, render, bundle, template, pr, repo, image...);
 * they are taken out of argv here. serve and worker read them with the rest
 * of their configuration (file, environment, flags). Returns -1 on a bad
 * value. */
static int take_expansion_flags(int *argc, char **argv)
{
	unsigned long long ratio = 0, max = 0;
	int out = 1;

	for (int i = 1; i < *argc; i++) {
		const char *names[2] = {"--yaml-expand-ratio", "--yaml-expand-max"};
		unsigned long long *slots[2] = {&ratio, &max};
		const char *value = NULL;
		int which = -1;

		if (strcmp(argv[i], "--") == 0) {
			while (i < *argc)
				argv[out++] = argv[i++];
			break;
		}
		for (int k = 0; k < 2; k++) {
			size_t n = strlen(names[k]);
			if (strncmp(argv[i], names[k], n) != 0)
				continue;
			if (argv[i][n] == '=') {
				value = argv[i] + n + 1;
				which = k;
			} else if (argv[i][n] == '\0') {
				if (i + 1 >= *argc) {
					fprintf(stderr, "fbcd: option '%s' needs a value\n",
						names[k]);
					return -1;
				}
				value = argv[++i];
				which = k;
			}
		}
		if (which < 0) {
			argv[out++] = argv[i];
			continue;
		}
		char *end = NULL;
		errno = 0;
		unsigned long long v = strtoull(value, &end, 10);
		if (value[0] < '0' || value[0] > '9' || *end || errno || v == 0 ||
		    (which == 1 && v < (1u << 16))) {
			fprintf(stderr, "fbcd: %s: '%s' is not a %s\n", names[which], value,
				which ? "byte count of at least 65536" : "positive integer");
			return -1;
		}
		*slots[which] = v;
	}
	argv[out] = NULL;
	*argc = out;
	fbc_load_limits_set_expansion((size_t)ratio, (size_t)max);
	return 0;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: fbcd COMMAND [OPTIONS] [ARGS]\n\n"
		   "fbcd is a catalog service for Operator Lifecycle Manager (OLM).\n\n"
		   "Commands:\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].summary);
	fprintf(f, "\nRun 'fbcd COMMAND --help' for the options of a command.\n"
		   "Every command takes --yaml-expand-ratio N (a YAML document may expand\n"
		   "through aliases to N x its size, at least 64 KiB; default 10) and\n"
		   "--yaml-expand-max BYTES (never past BYTES; default 256 MiB).\n");
}

int main(int argc, char **argv)
{
	fbc_json_arena_install(); /* before any thread: the loader's arenas (service/load) */
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
		if (argc > 2 && strcmp(argv[2], "--libraries") == 0) {
			/* the libraries loaded on first use (api/lazy), one a line:
			 * what a runtime image must hold besides `ldd fbcd` */
#ifdef FBCD_LAZY_LIBS
			for (const char *const *l = fbc_lazy_libraries; *l; l++)
				printf("%s\n", *l);
#endif
			return 0;
		}
		printf("fbcd %s\n", FBCD_VERSION);
		return 0;
	}
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
		if (strcmp(argv[1], commands[i].name) != 0)
			continue;
		if (strcmp(argv[1], "serve") != 0 && strcmp(argv[1], "worker") != 0 &&
		    take_expansion_flags(&argc, argv) != 0)
			return 2;
		return commands[i].fn(argc - 1, argv + 1);
	}
	fprintf(stderr, "fbcd: unknown command '%s'\n\n", argv[1]);
	usage(stderr);
	return 2;
}
