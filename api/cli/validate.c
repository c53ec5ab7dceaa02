/*
 * `fbcd validate [--output text|json] [--strict] DIR`: load a catalog, run
 * every load, conversion and model rule (service/fbc/validate.h) and report
 * all findings in a deterministic order. Exit 0 valid, 1 invalid, 2 usage or
 * I/O error (cli.h).
 */
#include "api/cli/cli.h"
#include "api/cli/util.h"
#include "service/fbc/validate.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>

static void usage(FILE *f)
{
	fputs("usage: fbcd validate [--output text|json] [--strict] DIR\n"
	      "\n"
	      "Validate the File-Based Catalog in DIR with opm's rules (load L1-L12,\n"
	      "conversion C1-C28, model V1-V12) and report every error, not only the first.\n"
	      "\n"
	      "Options:\n"
	      "  -o, --output text|json  text (default): one line per error on stdout,\n"
	      "                          'file:line: code: message', files relative to DIR,\n"
	      "                          and a summary line on stderr;\n"
	      "                          json: {\"valid\": bool, \"errors\": [{\"code\", "
	      "\"message\",\n"
	      "                          \"file\", \"line\", \"package\", \"channel\", "
	      "\"bundle\"}]}\n"
	      "      --strict            also apply the checks opm leaves to 'opm serve' and\n"
	      "                          OLM (S1, S2 and the opt-in extras); off by default so\n"
	      "                          that the verdict matches opm validate\n"
	      "  -h, --help              show this help\n"
	      "\n"
	      "Exit status: 0 valid, 1 invalid, 2 usage or I/O error.\n",
	      f);
}

/* Distinct files named by the findings (they are sorted by file). */
static size_t count_files(const fbc_diags *diags)
{
	const char *prev = NULL;
	size_t n = 0;

	for (size_t i = 0; i < fbc_diags_count(diags); i++) {
		const char *f = fbc_diags_at(diags, i)->file;

		if (f && (!prev || strcmp(prev, f) != 0))
			n++;
		if (f)
			prev = f;
	}
	return n;
}

struct opts {
	fbc_validate_opts validate;
	int json;
};

static int option(void *ctx, int c, const char *arg)
{
	struct opts *o = ctx;

	switch (c) {
	case 'o':
		if (strcmp(arg, "json") && strcmp(arg, "text")) {
			fprintf(stderr,
				"fbcd validate: unknown output format '%s' (text or json)\n", arg);
			return FBC_CLI_USAGE;
		}
		o->json = strcmp(arg, "json") == 0;
		return 0;
	default: /* 's' */
		o->validate.strict = true;
		return 0;
	}
}

int fbc_cmd_validate(int argc, char **argv)
{
	static const struct option opts[] = {{"output", required_argument, NULL, 'o'},
					     {"strict", no_argument, NULL, 's'},
					     {"help", no_argument, NULL, 'h'},
					     {NULL, 0, NULL, 0}};
	static const fbc_cli_cmd cmd = {"validate", ":o:h", opts, usage, option};
	struct opts o = {{0}, 0};
	fbc_catalog *cat = NULL;
	fbc_diags diags = {0};
	fbc_error err;
	fbc_buf out;
	const char *dir;
	int status, json;
	size_t n;

	fbc_error_init(&err);
	fbc_buf_init(&out, 0);
	if ((status = fbc_cli_parse(&dir, &cmd, &o, argc, argv)) || !dir)
		goto done;
	json = o.json;
	if ((status = fbc_cli_load_to_validate(&cat, "validate", dir, &diags)))
		goto done;
	if (fbc_validate(cat, &o.validate, &diags, &err)) {
		fbc_cli_report("validate", &err, dir);
		status = FBC_CLI_USAGE;
		goto done;
	}
	fbc_diags_sort(&diags);
	n = fbc_diags_count(&diags) + diags.dropped;
	if (json) {
		if (fbc_cli_format_diags_json(&out, &diags, n == 0) ||
		    fwrite(out.data, 1, out.len, stdout) != out.len) {
			fputs("fbcd validate: writing the report failed\n", stderr);
			status = FBC_CLI_USAGE;
			goto done;
		}
	} else if (fbc_cli_print_diags_text(stdout, &diags)) {
		fputs("fbcd validate: writing the report failed\n", stderr);
		status = FBC_CLI_USAGE;
		goto done;
	}
	if (fflush(stdout) || ferror(stdout)) {
		fputs("fbcd validate: writing the report failed\n", stderr);
		status = FBC_CLI_USAGE;
		goto done;
	}
	if (n == 0) {
		if (!json)
			fprintf(stderr, "%s: valid (%zu packages, %zu channels, %zu bundles)\n",
				dir, cat->packages.len, cat->channels.len, cat->bundles.len);
		status = FBC_CLI_OK;
	} else {
		if (!json)
			fprintf(stderr, "%s: invalid: %zu error%s in %zu file%s%s\n", dir, n,
				n == 1 ? "" : "s", count_files(&diags),
				count_files(&diags) == 1 ? "" : "s",
				diags.dropped ? " (only the first ones are listed)" : "");
		status = FBC_CLI_INVALID;
	}
done:
	fbc_buf_dispose(&out);
	fbc_catalog_free(cat);
	fbc_diags_dispose(&diags);
	return status;
}
