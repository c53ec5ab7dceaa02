/*
 * fbcd resolve: read a resolution request (issue 4 format) from a file or
 * stdin, or build one from shorthand flags, load the catalogs it names,
 * resolve, print the result JSON. Exit 0 satisfiable, 1 not, 2 usage/I-O.
 */
#include "api/cli/cli.h"
#include "api/cli/util.h"

#include "service/base/buf.h"
#include "service/resolver/resolver.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_INPUT_BYTES (64u << 20)
#define MAX_FLAGS	256

static void usage(FILE *f)
{
	fprintf(f, "usage: fbcd resolve --input FILE|-\n"
		   "       fbcd resolve --catalog DIR... --request PKG[:CHANNEL][@RANGE]...\n"
		   "                    [--installed [PKG/]BUNDLE@VERSION]... [--semantics S]\n\n"
		   "Resolve install/upgrade requests against catalogs (OLM semantics).\n\n"
		   "  -i, --input FILE      request JSON ('-' for stdin): {\"semantics\", "
		   "\"catalogs\",\n"
		   "                        \"installed\", \"requests\"}\n"
		   "  -c, --catalog DIR     a catalog directory (repeatable; name = basename,\n"
		   "                        priority 0)\n"
		   "  -r, --request SPEC    PKG[:CHANNEL][@RANGE] (repeatable; RANGE uses the\n"
		   "                        Masterminds grammar)\n"
		   "  -I, --installed SPEC  [PKG/]BUNDLE@VERSION (repeatable)\n"
		   "  -s, --semantics S     classic (default), v1 or v1-deps\n"
		   "      --stats           add {\"stats\": {\"satCalls\", ...}} to the output\n"
		   "      --compact         print one line of JSON\n"
		   "  -h, --help            this help\n\n"
		   "Exit status: 0 satisfiable, 1 not satisfiable, 2 usage or I/O error.\n");
}

static int read_all(fbc_buf *b, const char *path)
{
	FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
	char chunk[65536];
	size_t n;
	int rc = 0;

	if (!f) {
		fprintf(stderr, "fbcd resolve: %s: %s\n", path, strerror(errno));
		return FBC_CLI_USAGE;
	}
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
		if (fbc_buf_append(b, chunk, n) < 0) {
			fprintf(stderr, "fbcd resolve: %s: input larger than %u bytes\n", path,
				MAX_INPUT_BYTES);
			rc = FBC_CLI_USAGE;
			break;
		}
	if (rc == 0 && ferror(f)) {
		fprintf(stderr, "fbcd resolve: %s: read error\n", path);
		rc = FBC_CLI_USAGE;
	}
	if (f != stdin)
		fclose(f);
	return rc;
}

static const char *base_name(const char *path, char *buf, size_t size)
{
	size_t len = strlen(path);
	const char *s;

	while (len > 1 && path[len - 1] == '/')
		len--;
	s = path + len;
	while (s > path && s[-1] != '/')
		s--;
	snprintf(buf, size, "%.*s", (int)(path + len - s), s);
	return buf;
}

/* PKG[:CHANNEL][@RANGE] */
static int parse_request_flag(fbc_resolve_request *req, const char *spec, fbc_error *err)
{
	char *copy = strdup(spec), *at, *colon;
	fbc_resolve_req r;
	int rc;

	if (!copy)
		return fbc_error_set(err, FBC_ENOMEM, NULL, "out of memory");
	memset(&r, 0, sizeof(r));
	at = strchr(copy, '@');
	if (at) {
		*at = '\0';
		r.version_range = at + 1;
	}
	colon = strchr(copy, ':');
	if (colon) {
		*colon = '\0';
		r.channel = colon + 1;
	}
	r.package = copy;
	if (!*r.package || (r.channel && !*r.channel) || (r.version_range && !*r.version_range))
		rc = fbc_error_set(err, FBC_EINVAL, "--request",
				   "\"%s\" is not PKG[:CHANNEL][@RANGE]", spec);
	else
		rc = fbc_resolve_request_add(req, &r, err);
	free(copy);
	return rc;
}

/* [PKG/]BUNDLE@VERSION; without PKG the package is looked up in the catalogs. */
static int parse_installed_flag(fbc_resolve_request *req, const char *spec, fbc_error *err)
{
	char *copy = strdup(spec), *at, *slash, *bundle;
	const char *pkg = NULL;
	int rc;

	if (!copy)
		return fbc_error_set(err, FBC_ENOMEM, NULL, "out of memory");
	at = strrchr(copy, '@');
	if (!at || at == copy || !at[1]) {
		rc = fbc_error_set(err, FBC_EINVAL, "--installed",
				   "\"%s\" is not [PKG/]BUNDLE@VERSION", spec);
		goto done;
	}
	*at = '\0';
	bundle = copy;
	slash = strchr(copy, '/');
	if (slash) {
		*slash = '\0';
		pkg = copy;
		bundle = slash + 1;
	}
	for (size_t k = 0; !pkg && k < req->n_catalogs; k++) {
		const fbc_catalog *cat = req->catalogs[k].catalog;
		for (size_t p = 0; p < cat->n_sorted_packages && !pkg; p++)
			if (fbc_package_bundle(cat->sorted_packages[p], bundle))
				pkg = cat->sorted_packages[p]->name;
	}
	if (!pkg) {
		rc = fbc_error_set(err, FBC_EINVAL, "--installed",
				   "bundle %s is in no catalog; write PKG/BUNDLE@VERSION", bundle);
		goto done;
	}
	rc = fbc_resolve_request_add_installed(req, pkg, bundle, at + 1, err);
done:
	free(copy);
	return rc;
}

int fbc_cmd_resolve(int argc, char **argv)
{
	static const struct option opts[] = {
		{"input", required_argument, NULL, 'i'},
		{"catalog", required_argument, NULL, 'c'},
		{"request", required_argument, NULL, 'r'},
		{"installed", required_argument, NULL, 'I'},
		{"semantics", required_argument, NULL, 's'},
		{"stats", no_argument, NULL, 'S'},
		{"compact", no_argument, NULL, 'C'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	const char *input = NULL, *cats[MAX_FLAGS], *reqs[MAX_FLAGS], *insts[MAX_FLAGS];
	size_t n_cats = 0, n_reqs = 0, n_insts = 0;
	fbc_resolve_semantics sem = FBC_RESOLVE_CLASSIC;
	fbc_resolve_request *req = NULL;
	fbc_resolve_result *res = NULL;
	fbc_catalog **loaded = NULL;
	json_t *body = NULL, *outj = NULL;
	bool stats = false, compact = false, sem_given = false;
	fbc_error err;
	fbc_buf in;
	char *text = NULL;
	int opt, status = FBC_CLI_USAGE;

	fbc_error_init(&err);
	fbc_buf_init(&in, MAX_INPUT_BYTES);
	optind = 1;
	while ((opt = getopt_long(argc, argv, "i:c:r:I:s:h", opts, NULL)) != -1) {
		switch (opt) {
		case 'i':
			input = optarg;
			break;
		case 'c':
		case 'r':
		case 'I': {
			const char **arr = opt == 'c' ? cats : opt == 'r' ? reqs : insts;
			size_t *n = opt == 'c' ? &n_cats : opt == 'r' ? &n_reqs : &n_insts;
			if (*n >= MAX_FLAGS) {
				fprintf(stderr, "fbcd resolve: too many -%c options (max %d)\n",
					opt, MAX_FLAGS);
				goto done;
			}
			arr[(*n)++] = optarg;
			break;
		}
		case 's':
			if (fbc_resolve_semantics_parse(&sem, optarg) < 0) {
				fprintf(stderr, "fbcd resolve: --semantics must be classic, v1 or "
						"v1-deps\n");
				goto done;
			}
			sem_given = true;
			break;
		case 'S':
			stats = true;
			break;
		case 'C':
			compact = true;
			break;
		case 'h':
			usage(stdout);
			status = FBC_CLI_OK;
			goto done;
		default:
			usage(stderr);
			goto done;
		}
	}
	if (optind < argc || (!input && n_cats == 0) || (input && (n_cats || n_reqs || n_insts))) {
		fprintf(stderr, "fbcd resolve: give either --input or --catalog/--request flags\n");
		usage(stderr);
		goto done;
	}
	if (input) {
		json_error_t je;

		if ((status = read_all(&in, input)) != 0)
			goto done;
		status = FBC_CLI_USAGE;
		body = json_loadb(in.data ? in.data : "", in.len, JSON_REJECT_DUPLICATES, &je);
		if (!body) {
			fprintf(stderr, "fbcd resolve: %s:%d:%d: %s\n", input, je.line, je.column,
				je.text);
			goto done;
		}
		if (fbc_resolve_request_parse(&req, body, NULL, &err) < 0) {
			fprintf(stderr, "fbcd resolve: %s: %s%s%s\n", input, err.where,
				err.where[0] ? ": " : "", err.message);
			goto done;
		}
		if (sem_given) /* the flag overrides the file's "semantics" */
			req->semantics = sem;
	} else {
		char name[256];

		if (fbc_resolve_request_create(&req, sem, &err) < 0)
			goto report;
		for (size_t k = 0; k < n_cats; k++)
			if (fbc_resolve_request_add_catalog(req,
							    base_name(cats[k], name, sizeof(name)),
							    0, cats[k], &err) < 0)
				goto report;
	}
	loaded = calloc(req->n_catalogs + 1, sizeof(*loaded));
	if (!loaded) {
		fprintf(stderr, "fbcd resolve: out of memory\n");
		goto done;
	}
	for (size_t k = 0; k < req->n_catalogs; k++) {
		fbc_resolve_catalog *c = &req->catalogs[k];
		fbc_diags diags;
		int rc;

		if (c->path) {
			/* fbc_cli_load initialises diags itself */
			rc = fbc_cli_load(&loaded[k], "resolve", c->path, &diags);
		} else if (fbc_diags_init(&diags, 0) < 0) {
			fprintf(stderr, "fbcd resolve: out of memory\n");
			goto done;
		} else {
			rc = fbc_resolve_catalog_from_blobs(&loaded[k], c->fbc, c->name, &diags,
							    &err);
			if (rc < 0)
				fprintf(stderr, "fbcd resolve: catalog %s: %s\n", c->name,
					err.message);
		}
		if (rc == 0 && fbc_diags_count(&diags) > 0)
			fprintf(stderr,
				"fbcd resolve: warning: catalog %s has %zu finding(s); resolving "
				"anyway (run fbcd validate)\n",
				c->name, fbc_diags_count(&diags));
		fbc_diags_dispose(&diags);
		if (rc != 0)
			goto done;
		c->catalog = loaded[k];
	}
	for (size_t i = 0; i < n_insts; i++)
		if (parse_installed_flag(req, insts[i], &err) < 0)
			goto report;
	for (size_t i = 0; i < n_reqs; i++)
		if (parse_request_flag(req, reqs[i], &err) < 0)
			goto report;
	if (fbc_resolve(&res, req, NULL, &err) < 0 ||
	    fbc_resolve_result_to_json(&outj, res, stats, &err) < 0)
		goto report;
	text = json_dumps(outj, compact ? JSON_COMPACT : JSON_INDENT(2));
	if (!text || printf("%s\n", text) < 0 || fflush(stdout) != 0) {
		fprintf(stderr, "fbcd resolve: cannot write the result\n");
		goto done;
	}
	status = res->satisfiable ? FBC_CLI_OK : FBC_CLI_INVALID;
	goto done;
report:
	fbc_cli_report("resolve", &err, NULL);
	status = FBC_CLI_USAGE;
done:
	free(text);
	json_decref(outj);
	fbc_resolve_result_free(res);
	if (loaded && req)
		for (size_t k = 0; k < req->n_catalogs; k++)
			fbc_catalog_free(loaded[k]);
	free(loaded);
	fbc_resolve_request_free(req);
	json_decref(body);
	fbc_buf_dispose(&in);
	return status;
}
