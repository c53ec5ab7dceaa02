/*
 * `fbcd bundle validate [--output text|json] DIR`: read a registry+v1 bundle
 * directory and report every finding of service/bundle's validator (bundles.md
 * §6: B, VF, VC, N and fbcd's FB rules as errors, W rules as warnings).
 * Exit 0 no error (warnings allowed), 1 errors, 2 usage or I/O error.
 */
#include "api/cli/cli.h"
#include "api/cli/util.h"
#include "service/bundle/bundle.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>

static void usage(FILE *f)
{
	fputs("usage: fbcd bundle validate [--output text|json] DIR\n"
	      "\n"
	      "Validate the registry+v1 bundle directory DIR (manifests/ and metadata/):\n"
	      "what fails 'opm render' (B2-B19), the rules of 'opm alpha bundle validate'\n"
	      "(VF1-VF9, VC1-VC8), what FBC validation rejects later (N4, N5), what opm\n"
	      "tolerates silently but a reviewer must see (FB1 a second CSV, FB2 no package\n"
	      "name, FB3 a manifests/ file that does not decode), and as warnings what opm\n"
	      "tolerates (W2, W4-W7, N6, N8). Every finding, with its file and line.\n"
	      "\n"
	      "Options:\n"
	      "  -o, --output text|json  text (default): 'file:line: code: message' per\n"
	      "                          finding on stdout, a summary on stderr; json:\n"
	      "                          {\"valid\": bool, \"errors\": [...], \"warnings\": "
	      "[...]}\n"
	      "                          with the fields of 'fbcd validate --output json'\n"
	      "  -h, --help              show this help\n"
	      "\n"
	      "Exit status: 0 no error (warnings allowed), 1 errors, 2 usage or I/O error.\n",
	      f);
}

static int option(void *ctx, int c, const char *arg)
{
	int *json = ctx;

	(void)c; /* 'o' */
	if (strcmp(arg, "json") && strcmp(arg, "text")) {
		fprintf(stderr, "fbcd bundle validate: unknown output format '%s' (text or json)\n",
			arg);
		return FBC_CLI_USAGE;
	}
	*json = strcmp(arg, "json") == 0;
	return 0;
}

/* The part between "errors":[ and the closing ] of a JSON report. */
static int list_json(fbc_buf *out, const fbc_diags *d)
{
	fbc_buf tmp;
	const char *a, *z;
	int rc;

	fbc_buf_init(&tmp, 0);
	rc = fbc_cli_format_diags_json(&tmp, d, false);
	if (rc == 0) {
		a = strstr(tmp.data, "\"errors\":[") + 10;
		z = strrchr(tmp.data, ']');
		rc = fbc_buf_append(out, a, (size_t)(z - a));
	}
	fbc_buf_dispose(&tmp);
	return rc;
}

/* A directory that is not a bundle: opm alpha bundle validate's format stage. */
static int not_a_bundle(fbc_diags *errs, fbc_tree *t, const char *dir)
{
	fbc_error err;
	fbc_tree_entry e = {0};
	fbc_loc loc = {NULL, 0};
	int rc = 0;

	fbc_error_init(&err);
	if (fbc_tree_stat(t, &e, "manifests", &err) != 0 || e.kind != FBC_TREE_DIR)
		rc = fbc_diags_add(errs, "VF1", &loc, NULL, NULL, NULL,
				   "Unable to locate manifests directory");
	fbc_tree_entry_dispose(&e);
	fbc_error_init(&err);
	if (rc == 0 && (fbc_tree_stat(t, &e, "metadata", &err) != 0 || e.kind != FBC_TREE_DIR))
		rc = fbc_diags_add(errs, "VF2", &loc, NULL, NULL, NULL,
				   "Unable to locate metadata directory");
	fbc_tree_entry_dispose(&e);
	(void)dir;
	return rc;
}

static int bundle_validate(int argc, char **argv)
{
	static const struct option opts[] = {{"output", required_argument, NULL, 'o'},
					     {"help", no_argument, NULL, 'h'},
					     {NULL, 0, NULL, 0}};
	static const fbc_cli_cmd cmd = {"bundle validate", ":o:h", opts, usage, option};
	fbc_diags all = {0}, errs = {0}, warns = {0};
	fbc_tree *t = NULL;
	fbc_bundle_dir *b = NULL;
	fbc_error err;
	fbc_buf out;
	const char *dir;
	int status, json = 0;
	bool isb = false;

	fbc_error_init(&err);
	fbc_buf_init(&out, 0);
	if ((status = fbc_cli_parse(&dir, &cmd, &json, argc, argv)) || !dir)
		goto done;
	if ((status = fbc_cli_check_dir("bundle validate", dir)))
		goto done;
	status = FBC_CLI_USAGE;
	if (fbc_diags_init(&all, 0) || fbc_diags_init(&errs, 0) || fbc_diags_init(&warns, 0)) {
		fputs("fbcd bundle validate: out of memory\n", stderr);
		goto done;
	}
	if (fbc_tree_open_dir(&t, dir, &err) || fbc_bundle_detect(&isb, t, "", &err)) {
		fbc_cli_report("bundle validate", &err, dir);
		goto done;
	}
	if (!isb) {
		if (not_a_bundle(&errs, t, dir))
			goto done;
	} else if (fbc_bundle_read(&b, t, NULL, &err) == FBC_ELIMIT) {
		/* an input bound: a finding naming the file, like fbcd validate's LIMIT */
		fbc_loc loc = {err.where[0] ? err.where : NULL, 0};
		if (fbc_diags_add(&all, "LIMIT", &loc, NULL, NULL, NULL, "%s", err.message))
			goto done;
	} else if (err.code || fbc_bundle_validate(b, &all, &err)) {
		fbc_cli_report("bundle validate", &err, dir);
		goto done;
	}
	fbc_diags_sort(&all);
	for (size_t i = 0; i < fbc_diags_count(&all); i++) {
		const fbc_diag *d = fbc_diags_at(&all, i);
		fbc_loc loc = {d->file, d->line};
		if (fbc_diags_add(fbc_bundle_code_is_error(d->code) ? &errs : &warns, d->code, &loc,
				  d->package, d->channel, d->bundle, "%s", d->message)) {
			fputs("fbcd bundle validate: out of memory\n", stderr);
			goto done;
		}
	}
	if (json) {
		if (fbc_buf_printf(&out, "{\"valid\":%s,\"errors\":[",
				   fbc_diags_count(&errs) ? "false" : "true") ||
		    list_json(&out, &errs) || fbc_buf_puts(&out, "],\"warnings\":[") ||
		    list_json(&out, &warns) || fbc_buf_puts(&out, "]}\n") ||
		    fwrite(out.data, 1, out.len, stdout) != out.len) {
			fputs("fbcd bundle validate: writing the report failed\n", stderr);
			goto done;
		}
	} else if (fbc_cli_print_diags_text(stdout, &errs) ||
		   fbc_cli_print_diags_text(stdout, &warns)) {
		fputs("fbcd bundle validate: writing the report failed\n", stderr);
		goto done;
	}
	if (fflush(stdout) || ferror(stdout)) {
		fputs("fbcd bundle validate: writing the report failed\n", stderr);
		goto done;
	}
	if (!json)
		fprintf(stderr, "%s: %s: %zu error%s, %zu warning%s\n", dir,
			fbc_diags_count(&errs) ? "invalid" : "valid", fbc_diags_count(&errs),
			fbc_diags_count(&errs) == 1 ? "" : "s", fbc_diags_count(&warns),
			fbc_diags_count(&warns) == 1 ? "" : "s");
	status = fbc_diags_count(&errs) ? FBC_CLI_INVALID : FBC_CLI_OK;
done:
	fbc_buf_dispose(&out);
	fbc_bundle_free(b);
	fbc_tree_free(t);
	fbc_diags_dispose(&all);
	fbc_diags_dispose(&errs);
	fbc_diags_dispose(&warns);
	return status;
}

int fbc_cmd_bundle(int argc, char **argv)
{
	if (argc >= 2 && strcmp(argv[1], "validate") == 0)
		return bundle_validate(argc - 1, argv + 1);
	if (argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
		usage(stdout);
		return FBC_CLI_OK;
	}
	fprintf(stderr, "fbcd bundle: expected a subcommand: validate\n");
	usage(stderr);
	return FBC_CLI_USAGE;
}
