/*
 * `fbcd repo catalogs [--repo DIR] [--rev REV] --output DIR`: build every
 * catalog of an operator repository (pipeline/catalogs/catalogs.h) and
 * write one directory per catalog.
 */
#include "api/cli/cli.h"
#include "api/cli/util.h"
#include "pipeline/catalogs/catalogs.h"
#include "service/addmode/ocp.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>

static void usage(FILE *f)
{
	fputs("usage: fbcd repo catalogs [--repo DIR] [--rev REV] --output DIR\n"
	      "                          [--vless-labels exact|all] [--no-validate]\n"
	      "                          [--keep-bundle-objects]\n"
	      "\n"
	      "Build every catalog of an operator repository (operators/<pkg>/ci.yaml,\n"
	      "bundles in operators/<pkg>/<version>/, catalogs in catalogs/<name>/) and write\n"
	      "one directory per catalog under the output directory. Packages with\n"
	      "fbc.enabled keep their committed catalogs/<name>/<pkg>/ files; every other\n"
	      "package's bundles are added the way IIB adds them (updateGraph replaces-mode\n"
	      "or semver-mode), in the order their directories were merged (first-parent\n"
	      "git history), each to the catalogs its com.redhat.openshift.versions label\n"
	      "admits, and written as <catalog>/<pkg>/catalog.json. A bundle whose add\n"
	      "fails in one catalog is added to none (as an IIB release fails), and is\n"
	      "reported.\n"
	      "\n"
	      "Options:\n"
	      "  -r, --repo DIR         the repository (default: .); a git repository, or a\n"
	      "                         plain directory (then bundles are added in version\n"
	      "                         order, as no history is known)\n"
	      "      --rev REV          the commit to build (default: HEAD; git only)\n"
	      "  -o, --output DIR       where to write the catalogs (required)\n"
	      "      --vless-labels M   exact (default): a label without 'v' (4.10-4.17) is\n"
	      "                         read like one with it; all: it admits every catalog,\n"
	      "                         as the community pipeline behaved (index-add.md P-5)\n"
	      "      --no-validate      skip the validation after every add\n"
	      "      --keep-bundle-objects  keep every bundle's olm.bundle.object or\n"
	      "                         olm.csv.metadata and relatedImage names; by\n"
	      "                         default, as IIB's index, a semver-mode add clears\n"
	      "                         them from every bundle that heads no channel\n"
	      "                         (index-add.md SV-13)\n"
	      "  -h, --help             show this help\n"
	      "\n"
	      "Findings (a bundle not added, a ci.yaml or label that is wrong) are printed on\n"
	      "stderr as `PATH: [CATALOG: ]RULE: MESSAGE` with the rule ids of index-add.md.\n"
	      "Exit status: 0 written without findings, 1 written with findings, 2 usage or\n"
	      "I/O error.\n",
	      f);
}

static int catalogs(int argc, char **argv)
{
	static const struct option opts[] = {{"repo", required_argument, NULL, 'r'},
					     {"rev", required_argument, NULL, 'R'},
					     {"output", required_argument, NULL, 'o'},
					     {"vless-labels", required_argument, NULL, 'v'},
					     {"no-validate", no_argument, NULL, 'n'},
					     {"keep-bundle-objects", no_argument, NULL, 'k'},
					     {"help", no_argument, NULL, 'h'},
					     {NULL, 0, NULL, 0}};
	const char *repo = ".", *rev = NULL, *output = NULL;
	fbc_repo_opts ro = {0};
	fbc_repo_history *h = NULL;
	fbc_repo_catalogs *rc = NULL;
	fbc_tree *tree = NULL;
	fbc_git *g = NULL;
	fbc_error err;
	size_t i, n;
	int c, status = FBC_CLI_USAGE;

	fbc_error_init(&err);
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":r:o:h", opts, NULL)) != -1) {
		switch (c) {
		case 'r':
			repo = optarg;
			break;
		case 'R':
			rev = optarg;
			break;
		case 'o':
			output = optarg;
			break;
		case 'n':
			ro.no_validate = true;
			break;
		case 'k':
			ro.keep_bundle_objects = true;
			break;
		case 'v':
			if (strcmp(optarg, "all") == 0) {
				ro.label_flags |= FBC_OCP_VLESS_ADMITS_ALL;
			} else if (strcmp(optarg, "exact") != 0) {
				fprintf(stderr,
					"fbcd repo catalogs: --vless-labels is exact or all\n");
				return FBC_CLI_USAGE;
			}
			break;
		case 'h':
			usage(stdout);
			return FBC_CLI_OK;
		case ':':
			fprintf(stderr, "fbcd repo catalogs: option '%s' needs a value\n",
				argv[optind - 1]);
			usage(stderr);
			return FBC_CLI_USAGE;
		default:
			fprintf(stderr, "fbcd repo catalogs: unknown option '%s'\n",
				argv[optind - 1]);
			usage(stderr);
			return FBC_CLI_USAGE;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "fbcd repo catalogs: unexpected argument '%s'\n", argv[optind]);
		usage(stderr);
		return FBC_CLI_USAGE;
	}
	if (!output) {
		fputs("fbcd repo catalogs: --output is required\n", stderr);
		usage(stderr);
		return FBC_CLI_USAGE;
	}
	if (fbc_cli_check_dir("repo catalogs", repo) != 0)
		return FBC_CLI_USAGE;
	if (fbc_git_open(&g, repo, &err) == 0) {
		if (!rev)
			rev = "HEAD";
		if (fbc_git_tree_open(&tree, g, rev, &err) != 0 ||
		    fbc_repo_history_from_git(&h, g, rev, &err) != 0)
			goto fail;
	} else if (rev || err.code != FBC_ENOTFOUND) {
		goto fail;
	} else {
		fbc_error_init(&err);
		if (fbc_tree_open_dir(&tree, repo, &err) != 0 ||
		    fbc_repo_history_from_tree(&h, tree, &err) != 0)
			goto fail;
	}
	if (fbc_repo_catalogs_build(&rc, tree, h, &ro, &err) != 0 ||
	    fbc_repo_catalogs_write(rc, output, &err) != 0)
		goto fail;
	n = fbc_repo_catalogs_findings_count(rc);
	for (i = 0; i < n; i++) {
		const fbc_repo_finding *f = fbc_repo_catalogs_finding(rc, i);

		fprintf(stderr, "%s: %s%s%s: %s\n", f->path, f->catalog, f->catalog[0] ? ": " : "",
			f->rule, f->message);
	}
	for (i = 0; i < fbc_repo_catalogs_count(rc); i++) {
		const fbc_addmode_index *ix = fbc_repo_catalogs_index(rc, i);

		printf("%s/%s: %zu add-mode package(s)\n", output, fbc_repo_catalogs_name(rc, i),
		       fbc_addmode_package_count(ix));
	}
	status = n ? FBC_CLI_INVALID : FBC_CLI_OK;
	goto done;
fail:
	fbc_cli_report("repo catalogs", &err, repo);
	status = FBC_CLI_USAGE;
done:
	fbc_repo_catalogs_free(rc);
	fbc_repo_history_free(h);
	fbc_tree_free(tree);
	fbc_git_free(g);
	return status;
}

int fbc_cmd_repo(int argc, char **argv)
{
	if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
		usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? FBC_CLI_USAGE : FBC_CLI_OK;
	}
	if (strcmp(argv[1], "catalogs") == 0)
		return catalogs(argc - 1, argv + 1);
	fprintf(stderr, "fbcd repo: unknown subcommand '%s' (catalogs)\n", argv[1]);
	usage(stderr);
	return FBC_CLI_USAGE;
}
