/*
 * `fbcd render DIR`: load a catalog and print it as a canonical JSON stream
 * (service/fbc/render.h), one blob per line. Like `opm render` it does not
 * validate; it fails (exit 1, findings on stderr) only when some file or
 * blob could not be loaded, since the output would then be incomplete.
 */
#include "api/cli/cli.h"
#include "api/cli/util.h"
#include "service/fbc/render.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>

static void usage(FILE *f)
{
	fputs("usage: fbcd render [--output json] DIR\n"
	      "\n"
	      "Print the File-Based Catalog in DIR as a canonical JSON stream: one compact\n"
	      "blob per line, keys sorted; packages by name, each as its olm.package, its\n"
	      "channels and bundles by name, its other blobs by schema, its deprecations;\n"
	      "then blobs without a package. The output depends only on the catalog's\n"
	      "content, not on its file layout or format. Nothing is validated.\n"
	      "\n"
	      "Options:\n"
	      "  -o, --output json   output format (only json)\n"
	      "  -h, --help          show this help\n"
	      "\n"
	      "Exit status: 0 rendered, 1 some file or blob could not be loaded,\n"
	      "2 usage or I/O error.\n",
	      f);
}

static int option(void *ctx, int c, const char *arg)
{
	(void)ctx;
	(void)c; /* 'o' */
	if (strcmp(arg, "json") != 0) {
		fprintf(stderr, "fbcd render: unknown output format '%s' (json)\n", arg);
		return FBC_CLI_USAGE;
	}
	return 0;
}

int fbc_cmd_render(int argc, char **argv)
{
	static const struct option opts[] = {{"output", required_argument, NULL, 'o'},
					     {"help", no_argument, NULL, 'h'},
					     {NULL, 0, NULL, 0}};
	static const fbc_cli_cmd cmd = {"render", ":o:h", opts, usage, option};
	fbc_catalog *cat = NULL;
	fbc_diags diags = {0};
	fbc_error err;
	const char *dir;
	int status;

	fbc_error_init(&err);
	if ((status = fbc_cli_parse(&dir, &cmd, NULL, argc, argv)) || !dir)
		goto done;
	if ((status = fbc_cli_load(&cat, "render", dir, &diags)))
		goto done;
	if (fbc_diags_count(&diags)) {
		fbc_diags_sort(&diags);
		fbc_cli_print_diags_text(stderr, &diags);
		fprintf(stderr, "fbcd render: %s: %zu load error(s); nothing rendered\n", dir,
			fbc_diags_count(&diags) + diags.dropped);
		status = FBC_CLI_INVALID;
		goto done;
	}
	if (fbc_render_catalog(cat, fbc_cli_write_file, stdout, &err) || fflush(stdout) ||
	    ferror(stdout)) {
		if (!err.message[0])
			fbc_error_set(&err, FBC_EIO, "stdout", "write failed");
		fbc_cli_report("render", &err, "stdout");
		status = FBC_CLI_USAGE;
		goto done;
	}
	status = FBC_CLI_OK;
done:
	fbc_catalog_free(cat);
	fbc_diags_dispose(&diags);
	return status;
}
