/*
 * `fbcd pr check [--repo DIR] --base REV --head REV [--author LOGIN]
 * [--approved-by LOGIN]... [--output text|json] [--check ID]...`: the
 * pull-request check engine (pipeline/checks, spec pipeline.md §5) on any
 * git repository, reading objects with libgit2 (no checkout, no git).
 */
#include "api/cli/cli.h"
#include "api/cli/util.h"
#include "pipeline/checks/checks.h"

#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_LIST 64

static void usage(FILE *f)
{
	fputs("usage: fbcd pr check [--repo DIR] --base REV --head REV [--author LOGIN]\n"
	      "                     [--approved-by LOGIN]... [--output text|json] [--check ID]...\n"
	      "\n"
	      "Check a pull request: the change from the merge base of BASE and HEAD, with the\n"
	      "repository's settings (.fbcd.yaml, config.yaml, ci.yaml, CODEOWNERS) read from\n"
	      "BASE. Every check runs; each finding names the file and line at fault in HEAD.\n"
	      "Checks: changes, permissions, bundles, catalogs, templates, graph, crds, resolve,\n"
	      "policy.\n"
	      "\n"
	      "Options:\n"
	      "  -C, --repo DIR         the git repository, bare or not (default: .)\n"
	      "  -b, --base REV         the branch the pull request goes into (required)\n"
	      "  -H, --head REV         the pull request's head (required)\n"
	      "  -a, --author LOGIN     the pull request's author (for permissions)\n"
	      "  -A, --approved-by LOGIN  someone who commented /approve (repeatable)\n"
	      "  -o, --output FORMAT    text (default) or json\n"
	      "  -c, --check ID         run only this check (repeatable)\n"
	      "      --cache-dir DIR    keep what later runs can reuse (the add-mode builds of a\n"
	      "                         change) in DIR/checks-v1, shared by every process using\n"
	      "                         it (default: $XDG_CACHE_HOME/fbcd, else ~/.cache/fbcd)\n"
	      "      --cache-size MIB   bound of the cache directory in MiB (default: 1024)\n"
	      "      --no-cache         keep nothing on disk\n"
	      "  -h, --help             show this help\n"
	      "\n"
	      "Text output: `path:line: level: check/code: message` per finding, then a table\n"
	      "of checks. JSON: {base, head, mergeBase, author, conclusion, changes, checks,\n"
	      "timings}.\n"
	      "Exit status: 0 success, 1 failure or action_required, 2 usage or I/O error.\n",
	      f);
}

/* $XDG_CACHE_HOME/fbcd, else $HOME/.cache/fbcd (absolute paths only, as the XDG base
 * directory specification says); false when neither is set. */
static bool default_cache_dir(char *out, size_t n)
{
	const char *x = getenv("XDG_CACHE_HOME"), *h = getenv("HOME");
	int w;

	if (x && x[0] == '/')
		w = snprintf(out, n, "%s/fbcd", x);
	else if (h && h[0] == '/')
		w = snprintf(out, n, "%s/.cache/fbcd", h);
	else
		return false;
	return w > 0 && (size_t)w < n;
}

static int pr_check(int argc, char **argv)
{
	static const struct option longopts[] = {{"repo", required_argument, NULL, 'C'},
						 {"base", required_argument, NULL, 'b'},
						 {"head", required_argument, NULL, 'H'},
						 {"author", required_argument, NULL, 'a'},
						 {"approved-by", required_argument, NULL, 'A'},
						 {"output", required_argument, NULL, 'o'},
						 {"check", required_argument, NULL, 'c'},
						 {"cache-dir", required_argument, NULL, 'D'},
						 {"cache-size", required_argument, NULL, 'S'},
						 {"no-cache", no_argument, NULL, 'N'},
						 {"help", no_argument, NULL, 'h'},
						 {NULL, 0, NULL, 0}};
	const char *repo = ".", *base = NULL, *head = NULL, *output = "text";
	const char *approved[MAX_LIST], *only[MAX_LIST];
	const char *cache_dir = NULL;
	bool no_cache = false;
	unsigned long long cache_mib = 0;
	char dflt[4096];
	fbc_checks_cache *cache = NULL;
	fbc_checks_options o = {0};
	fbc_checks_result *r = NULL;
	fbc_git *g = NULL;
	fbc_error err;
	fbc_buf out;
	json_t *doc = NULL;
	int c, status = FBC_CLI_USAGE;

	fbc_error_init(&err);
	fbc_buf_init(&out, 0);
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":C:b:H:a:A:o:c:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'C':
			repo = optarg;
			break;
		case 'b':
			base = optarg;
			break;
		case 'H':
			head = optarg;
			break;
		case 'a':
			o.author = optarg;
			break;
		case 'A':
			if (o.n_approved_by >= MAX_LIST) {
				fprintf(stderr, "fbcd pr check: more than %d --approved-by\n",
					MAX_LIST);
				goto done;
			}
			approved[o.n_approved_by++] = optarg;
			break;
		case 'o':
			output = optarg;
			if (strcmp(output, "text") != 0 && strcmp(output, "json") != 0) {
				fprintf(stderr,
					"fbcd pr check: unknown output '%s' (text or json)\n",
					output);
				goto done;
			}
			break;
		case 'c':
			if (!fbc_checks_id_known(optarg)) {
				fprintf(stderr, "fbcd pr check: unknown check '%s'\n", optarg);
				goto done;
			}
			if (o.n_only >= MAX_LIST)
				goto done;
			only[o.n_only++] = optarg;
			break;
		case 'D':
			cache_dir = optarg;
			break;
		case 'S': {
			char *end;

			errno = 0;
			cache_mib = strtoull(optarg, &end, 10);
			if (errno || end == optarg || *end || cache_mib == 0 ||
			    cache_mib > (1ULL << 30)) {
				fprintf(stderr,
					"fbcd pr check: --cache-size '%s': a number of MiB, 1 or "
					"more\n",
					optarg);
				goto done;
			}
			break;
		}
		case 'N':
			no_cache = true;
			break;
		case 'h':
			usage(stdout);
			status = FBC_CLI_OK;
			goto done;
		case ':':
			fprintf(stderr, "fbcd pr check: option %s needs a value\n",
				argv[optind - 1]);
			usage(stderr);
			goto done;
		default:
			fprintf(stderr, "fbcd pr check: unknown option %s\n", argv[optind - 1]);
			usage(stderr);
			goto done;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "fbcd pr check: unexpected argument '%s'\n", argv[optind]);
		usage(stderr);
		goto done;
	}
	if (!base || !head) {
		fputs("fbcd pr check: --base and --head are required\n", stderr);
		usage(stderr);
		goto done;
	}
	o.approved_by = approved;
	o.only = o.n_only ? only : NULL;
	if (no_cache && cache_dir) {
		fputs("fbcd pr check: --cache-dir and --no-cache exclude each other\n", stderr);
		goto done;
	}
	if (!no_cache) {
		bool explicit = cache_dir != NULL;

		if (!cache_dir && default_cache_dir(dflt, sizeof(dflt)))
			cache_dir = dflt;
		if (cache_dir && fbc_checks_cache_create(&cache, 0, cache_dir, &err) != 0) {
			if (explicit) {
				fbc_cli_report("pr check", &err, cache_dir);
				goto done;
			}
			/* the default place is a convenience: run without it */
			fprintf(stderr, "fbcd pr check: %s: %s; running without the cache\n",
				err.where, err.message);
			fbc_error_init(&err);
			cache = NULL;
		}
		if (cache && cache_mib)
			fbc_checks_cache_set_disk_max(cache, (uint64_t)cache_mib << 20);
		o.cache = cache;
	}
	if (fbc_git_open(&g, repo, &err) != 0 || fbc_checks_run(&r, g, base, head, &o, &err) != 0) {
		fbc_cli_report("pr check", &err, repo);
		goto done;
	}
	if (strcmp(output, "json") == 0) {
		char *s;

		if (fbc_checks_result_json(&doc, r, &err) != 0 ||
		    !(s = json_dumps(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER))) {
			fbc_cli_report("pr check", &err, "json");
			goto done;
		}
		fputs(s, stdout);
		fputc('\n', stdout);
		free(s);
	} else {
		if (fbc_checks_result_text(&out, r, &err) != 0) {
			fbc_cli_report("pr check", &err, "text");
			goto done;
		}
		fwrite(out.data, 1, out.len, stdout);
	}
	if (fflush(stdout) != 0) {
		fputs("fbcd pr check: cannot write the report\n", stderr);
		goto done;
	}
	status = fbc_checks_result_exit(r);
done:
	json_decref(doc);
	fbc_buf_dispose(&out);
	fbc_checks_result_free(r);
	fbc_checks_cache_free(cache);
	fbc_git_free(g);
	return status;
}

int fbc_cmd_pr(int argc, char **argv)
{
	if (argc >= 2 && strcmp(argv[1], "check") == 0)
		return pr_check(argc - 1, argv + 1);
	if (argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
		usage(stdout);
		return FBC_CLI_OK;
	}
	fprintf(stderr, "fbcd pr: unknown or missing subcommand%s%s (try: fbcd pr check --help)\n",
		argc >= 2 ? " " : "", argc >= 2 ? argv[1] : "");
	return FBC_CLI_USAGE;
}
