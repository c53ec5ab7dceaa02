/*
 * `fbcd render DIR`: load a catalog and print it as a canonical JSON stream
 * (service/fbc/render.h), one blob per line. Like `opm render` it does not
 * validate; it fails (exit 1, findings on stderr) only when some file or
 * blob could not be loaded, since the output would then be incomplete.
 *
 * When DIR is a registry+v1 bundle directory (manifests/ and metadata/ both
 * directories, as opm decides), the bundle is rendered instead, byte for
 * byte as `opm render` writes it (service/bundle): `--image REF` is the
 * bundle image, `--migrate-level`, `-o json|yaml` as opm's.
 */
#include "api/cli/cli.h"
#include "api/cli/util.h"
#include "service/bundle/bundle.h"
#include "service/fbc/render.h"
#include "service/goyaml/goyaml.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>

static void usage(FILE *f)
{
	fputs("usage: fbcd render [--output json] DIR\n"
	      "       fbcd render [--image REF] [--migrate-level LEVEL] [-o json|yaml] BUNDLE_DIR\n"
	      "\n"
	      "Print the File-Based Catalog in DIR as a canonical JSON stream: one compact\n"
	      "blob per line, keys sorted; packages by name, each as its olm.package, its\n"
	      "channels and bundles by name, its other blobs by schema, its deprecations;\n"
	      "then blobs without a package. The output depends only on the catalog's\n"
	      "content, not on its file layout or format. Nothing is validated.\n"
	      "\n"
	      "A bundle directory (manifests/ and metadata/ sub-directories) is rendered\n"
	      "into its olm.bundle blob exactly as 'opm render' writes it.\n"
	      "\n"
	      "Options:\n"
	      "  -o, --output json|yaml      output format (catalogs: only json); bundles:\n"
	      "                              json as opm (4-space indent), yaml as opm\n"
	      "      --image REF             bundles: the bundle image (default \"\", as\n"
	      "                              'opm render DIR' without an image template)\n"
	      "      --migrate-level LEVEL   bundles: none (default) or\n"
	      "                              bundle-object-to-csv-metadata (needs --image)\n"
	      "  -h, --help                  show this help\n"
	      "\n"
	      "Exit status: 0 rendered, 1 some file or blob could not be loaded or the\n"
	      "bundle does not render, 2 usage or I/O error.\n",
	      f);
}

struct opts {
	const char *image;
	const char *level;
	int yaml;
};

static int option(void *ctx, int c, const char *arg)
{
	struct opts *o = ctx;

	switch (c) {
	case 'i':
		o->image = arg;
		return 0;
	case 'm':
		o->level = arg;
		return 0;
	default: /* 'o' */
		if (strcmp(arg, "json") != 0 && strcmp(arg, "yaml") != 0) {
			fprintf(stderr, "fbcd render: unknown output format '%s' (json or yaml)\n",
				arg);
			return FBC_CLI_USAGE;
		}
		o->yaml = strcmp(arg, "yaml") == 0;
		return 0;
	}
}

/* opm render of a bundle directory. */
static int render_bundle(fbc_tree *t, const char *dir, const struct opts *o)
{
	fbc_bundle_dir *b = NULL;
	fbc_bundle_migrate mig = FBC_BUNDLE_MIGRATE_NONE;
	fbc_buf out, compact;
	json_t *blob = NULL;
	fbc_error err;
	bool written = false;
	int status = FBC_CLI_USAGE;

	fbc_error_init(&err);
	fbc_buf_init(&out, 0);
	fbc_buf_init(&compact, 0);
	if (fbc_bundle_migrate_parse(&mig, o->level, &err)) {
		fprintf(stderr, "fbcd render: %s\n", err.message);
		goto done;
	}
	if (fbc_bundle_read(&b, t, NULL, &err)) {
		fbc_cli_report("render", &err, dir);
		goto done;
	}
	if (o->yaml) {
		if (fbc_bundle_render(&compact, &written, b, o->image, mig, &err) == 0 && written) {
			blob = json_loadb(compact.data, compact.len, 0, NULL);
			if (blob == NULL || fbc_goyaml_emit_document(&out, blob, &err)) {
				fbc_cli_report("render", &err, dir);
				goto done;
			}
		}
	} else {
		fbc_bundle_render_json(&out, &written, b, o->image, mig, &err);
	}
	if (err.code) {
		if (err.code == FBC_EINVAL) {
			/* opm's wording: render reference "DIR": <error> */
			fprintf(stderr, "fbcd render: render reference \"%s\": %s\n", dir,
				err.message);
			status = FBC_CLI_INVALID;
		} else {
			fbc_cli_report("render", &err, dir);
		}
		goto done;
	}
	if ((out.len && fwrite(out.data, 1, out.len, stdout) != out.len) || fflush(stdout) ||
	    ferror(stdout)) {
		fputs("fbcd render: stdout: write failed\n", stderr);
		goto done;
	}
	status = FBC_CLI_OK;
done:
	json_decref(blob);
	fbc_buf_dispose(&out);
	fbc_buf_dispose(&compact);
	fbc_bundle_free(b);
	return status;
}

int fbc_cmd_render(int argc, char **argv)
{
	static const struct option opts[] = {{"output", required_argument, NULL, 'o'},
					     {"image", required_argument, NULL, 'i'},
					     {"migrate-level", required_argument, NULL, 'm'},
					     {"help", no_argument, NULL, 'h'},
					     {NULL, 0, NULL, 0}};
	static const fbc_cli_cmd cmd = {"render", ":o:h", opts, usage, option};
	struct opts o = {"", NULL, 0};
	fbc_tree *t = NULL;
	bool isb = false;
	fbc_catalog *cat = NULL;
	fbc_diags diags = {0};
	fbc_error err;
	const char *dir;
	int status;

	fbc_error_init(&err);
	if ((status = fbc_cli_parse(&dir, &cmd, &o, argc, argv)) || !dir)
		goto done;
	if ((status = fbc_cli_check_dir("render", dir)))
		goto done;
	if (fbc_tree_open_dir(&t, dir, &err) == 0 && fbc_bundle_detect(&isb, t, "", &err) == 0 &&
	    isb) {
		status = render_bundle(t, dir, &o);
		goto done;
	}
	if (o.yaml || *o.image || o.level) {
		fprintf(stderr,
			"fbcd render: %s: --image, --migrate-level and -o yaml apply to "
			"bundle directories only\n",
			dir);
		status = FBC_CLI_USAGE;
		goto done;
	}
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
	fbc_tree_free(t);
	fbc_catalog_free(cat);
	fbc_diags_dispose(&diags);
	return status;
}
