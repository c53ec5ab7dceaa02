/*
 * `fbcd template render|verify`: catalog templates rendered as opm's
 * `alpha render-template` does, without pulling images (service/template)
 * unless --pull allows it (template_pull.c).
 *
 * render: one template to stdout (-o yaml byte for byte as opm, -o json).
 * verify: every (template, catalog) pair of an operator's ci.yaml mapping
 * rendered with the catalog's migrate level and compared with the committed
 * catalogs/<name>/<op>/catalog.yaml (what a release bot would write).
 */
#include "api/cli/cli.h"
#include "api/cli/template_pull.h"
#include "api/cli/util.h"
#include "service/goyaml/goyaml.h"
#include "service/load/load.h"
#include "service/template/template.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define MAX_SOURCES 32
#define MAX_FILE    (256u << 20)

static void usage(FILE *f)
{
	fputs("usage: fbcd template render [basic|semver] FILE [-o yaml|json]\n"
	      "                [--migrate-level LEVEL] [--bundles-from DIR]...\n"
	      "                [--bundle-root DIR]... [--pull] [--semver-rules v1.71|v1.46]\n"
	      "       fbcd template verify --repo DIR --operator OP [--bundles-from DIR]...\n"
	      "                [--bundle-root DIR]... [--semver-rules v1.71|v1.46] [--write]\n"
	      "       fbcd template add-bundle --repo DIR --operator OP --version V [--image REF]\n"
	      "\n"
	      "render: render a catalog template (olm.template.basic or olm.semver; the type\n"
	      "from the argument or the document's schema) as `opm alpha render-template`\n"
	      "does. Bundle images are resolved without pulling: from the olm.bundle blobs of\n"
	      "the FBC directories given with --bundles-from (exact image string), else from\n"
	      "the bundle directory <root>/<package>/<version>/ (tag with or without a\n"
	      "leading v) under a --bundle-root. FILE '-' reads standard input.\n"
	      "\n"
	      "verify: for every mapping of <repo>/operators/<op>/ci.yaml, render each\n"
	      "template for each catalog it maps to (migrate level from the catalog name:\n"
	      "bundle-object-to-csv-metadata from v4.17) and compare with the committed\n"
	      "<repo>/catalogs/<name>/<op>/catalog.yaml. Defaults: --bundles-from\n"
	      "<repo>/catalogs, --bundle-root <repo>/operators. --write replaces the committed\n"
	      "files with the rendered ones (what the release bot commits).\n"
	      "\n"
	      "add-bundle: insert bundle <repo>/operators/<op>/<V>/ into the templates its\n"
	      "release-config.yaml names, as the release pipeline does (channels and entries\n"
	      "appended, replaces/skips/skipRange as given, defaultChannel unchanged; image\n"
	      "default quay.io/community-operator-pipeline-prod/<op>:<V>). Templates are\n"
	      "rewritten in block style with their keys in order (comments are not kept).\n"
	      "\n"
	      "Options:\n"
	      "  -o, --output yaml|json     output format (render; default json, as opm)\n"
	      "      --migrate-level LEVEL  none, bundle-object-to-csv-metadata or all\n"
	      "      --bundles-from DIR     an FBC directory whose olm.bundle blobs resolve "
	      "images\n"
	      "      --bundle-root DIR      a directory of <package>/<version>/ bundle "
	      "directories\n"
	      "      --pull                 pull an image no other source holds from its\n"
	      "                             registry (its /manifests and /metadata)\n"
	      "      --insecure             pull over http:// instead of https://\n"
	      "      --ca-file FILE         PEM certificates trusted instead of the system CAs\n"
	      "      --authfile FILE        registry credentials (Docker config.json; default\n"
	      "                             $DOCKER_CONFIG/config.json, ~/.docker/config.json)\n"
	      "      --semver-rules RULES   v1.71 (default) or v1.46 edges for semver templates\n"
	      "  -h, --help                 show this help\n"
	      "\n"
	      "Exit status: 0 rendered (verify: all identical), 1 a template error or (verify)\n"
	      "a catalog that differs, 2 usage or I/O error.\n",
	      f);
}

typedef struct opts {
	const char *output;
	const char *migrate;
	const char *from[MAX_SOURCES];
	size_t nfrom;
	const char *roots[MAX_SOURCES];
	size_t nroots;
	bool pull;
	fbc_cli_puller *puller; /* with pull */
	const char *rules;
	const char *repo;
	const char *op;
	const char *version;
	const char *image;
	bool write;
} opts;

static char *read_input(const char *path, size_t *len)
{
	FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
	fbc_buf b;
	char chunk[65536];
	size_t n;
	if (f == NULL)
		return NULL;
	fbc_buf_init(&b, MAX_FILE);
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0) {
		if (fbc_buf_append(&b, chunk, n) != 0) {
			fbc_buf_dispose(&b);
			if (f != stdin)
				fclose(f);
			return NULL;
		}
	}
	if (f != stdin)
		fclose(f);
	return fbc_buf_detach(&b, len);
}

static int build_sources(fbc_template_sources **out, fbc_tree **trees, const opts *o,
			 const char *def_from, const char *def_root)
{
	fbc_template_sources *src = NULL;
	fbc_error err;
	fbc_error_init(&err);
	if (fbc_template_sources_create(&src, &err) != 0)
		goto fail;
	fbc_template_sources_set_pull(src, o->pull);
	if (o->pull)
		fbc_template_sources_set_puller(src, fbc_cli_template_pull, o->puller);
	for (size_t i = 0; i < o->nfrom; i++)
		if (fbc_template_sources_add_fbc(src, o->from[i], NULL, &err) != 0)
			goto fail;
	if (o->nfrom == 0 && def_from != NULL)
		if (fbc_template_sources_add_fbc(src, def_from, NULL, &err) != 0)
			goto fail;
	size_t nt = 0;
	for (size_t i = 0; i <= o->nroots; i++) {
		const char *dir = i < o->nroots ? o->roots[i] : (o->nroots == 0 ? def_root : NULL);
		if (dir == NULL)
			continue;
		if (fbc_tree_open_dir(&trees[nt], dir, &err) != 0) {
			fbc_error_prefix(&err, "--bundle-root %s", dir);
			goto fail;
		}
		if (fbc_template_sources_add_bundle_root(src, trees[nt++], &err) != 0)
			goto fail;
	}
	*out = src;
	return 0;
fail:
	fprintf(stderr, "fbcd template: %s%s%s\n", err.where, err.where[0] ? ": " : "",
		err.message);
	fbc_template_sources_free(src);
	return FBC_CLI_USAGE;
}

static void free_trees(fbc_tree **trees)
{
	for (size_t i = 0; i <= MAX_SOURCES; i++)
		fbc_tree_free(trees[i]);
}

static int cmd_render(const opts *o, int argc, char **argv)
{
	fbc_template_opts to = {FBC_TEMPLATE_AUTO, FBC_BUNDLE_MIGRATE_NONE, FBC_SEMVER_RULES_V171,
				NULL};
	fbc_template_sources *src = NULL;
	fbc_tree *trees[MAX_SOURCES + 1] = {NULL};
	fbc_template_result r = {NULL};
	fbc_error err;
	fbc_buf out;
	char *data = NULL;
	size_t len = 0;
	int status = FBC_CLI_USAGE;
	const char *file = NULL;

	fbc_error_init(&err);
	fbc_buf_init(&out, 0);
	if (argc == 1 && (strcmp(argv[0], "basic") == 0 || strcmp(argv[0], "semver") == 0)) {
		fbc_template_type_parse(&to.type, argv[0], &err);
		file = "-";
	} else if (argc == 1) {
		file = argv[0];
	} else if (argc == 2) {
		if (fbc_template_type_parse(&to.type, argv[0], &err) != 0)
			goto usage_err;
		file = argv[1];
	} else {
		fprintf(stderr, "fbcd template render: expected [basic|semver] FILE\n");
		goto done;
	}
	if (o->migrate != NULL && fbc_bundle_migrate_parse(&to.migrate, o->migrate, &err) != 0)
		goto usage_err;
	if (o->rules != NULL && fbc_semver_rules_parse(&to.semver_rules, o->rules, &err) != 0)
		goto usage_err;
	const char *fmt = o->output ? o->output : "json";
	if (strcmp(fmt, "json") != 0 && strcmp(fmt, "yaml") != 0) {
		fprintf(stderr, "fbcd template render: unknown output format '%s' (json, yaml)\n",
			fmt);
		goto done;
	}
	data = read_input(file, &len);
	if (data == NULL) {
		fprintf(stderr, "fbcd template render: unable to open \"%s\"\n", file);
		goto done;
	}
	if ((status = build_sources(&src, trees, o, NULL, NULL)) != 0)
		goto done;
	to.file = strcmp(file, "-") == 0 ? "<stdin>" : file;
	if (fbc_template_render(&r, data, len, &to, src, &err) != 0) {
		fprintf(stderr, "fbcd template render: %s: %s\n", err.where, err.message);
		status = err.code == FBC_ENOMEM || err.code == FBC_EIO || err.code == FBC_EUNAVAIL
				 ? FBC_CLI_USAGE
				 : FBC_CLI_INVALID;
		goto done;
	}
	int rc = strcmp(fmt, "yaml") == 0 ? fbc_template_write_yaml(&out, &r, &err)
					  : fbc_template_write_json(&out, &r, &err);
	if (rc != 0) {
		fprintf(stderr, "fbcd template render: %s\n", err.message);
		status = FBC_CLI_USAGE;
		goto done;
	}
	/* written only after the whole render succeeded, as opm */
	if (out.len > 0 && fwrite(out.data, 1, out.len, stdout) != out.len)
		status = FBC_CLI_USAGE;
	else
		status = fflush(stdout) == 0 ? FBC_CLI_OK : FBC_CLI_USAGE;
	goto done;
usage_err:
	fprintf(stderr, "fbcd template render: %s\n", err.message);
	status = FBC_CLI_USAGE;
done:
	fbc_template_result_dispose(&r);
	fbc_template_sources_free(src);
	free_trees(trees);
	fbc_buf_dispose(&out);
	free(data);
	return status;
}

static int cmd_verify(const opts *o)
{
	fbc_template_sources *src = NULL;
	fbc_tree *trees[MAX_SOURCES + 1] = {NULL};
	fbc_template_ci ci = {0};
	fbc_error err;
	char path[4096], from[4096], root[4096];
	char *cidata = NULL;
	size_t cilen = 0;
	int status = FBC_CLI_USAGE;
	fbc_semver_rules rules = FBC_SEMVER_RULES_V171;
	size_t pairs = 0, same = 0, missing = 0;

	fbc_error_init(&err);
	if (o->repo == NULL || o->op == NULL) {
		fprintf(stderr, "fbcd template verify: --repo and --operator are required\n");
		return FBC_CLI_USAGE;
	}
	if (o->rules != NULL && fbc_semver_rules_parse(&rules, o->rules, &err) != 0) {
		fprintf(stderr, "fbcd template verify: %s\n", err.message);
		return FBC_CLI_USAGE;
	}
	snprintf(path, sizeof(path), "%s/operators/%s/ci.yaml", o->repo, o->op);
	cidata = read_input(path, &cilen);
	if (cidata == NULL) {
		fprintf(stderr, "fbcd template verify: unable to open \"%s\"\n", path);
		return FBC_CLI_USAGE;
	}
	if (fbc_template_ci_parse(&ci, cidata, cilen, path, &err) != 0) {
		fprintf(stderr, "fbcd template verify: %s: %s\n", err.where, err.message);
		goto done;
	}
	snprintf(from, sizeof(from), "%s/catalogs", o->repo);
	snprintf(root, sizeof(root), "%s/operators", o->repo);
	if ((status = build_sources(&src, trees, o, from, root)) != 0)
		goto done;
	status = FBC_CLI_OK;
	for (size_t m = 0; m < ci.nmaps; m++) {
		char tpath[4096];
		size_t tlen = 0;
		snprintf(tpath, sizeof(tpath), "%s/operators/%s/catalog-templates/%s", o->repo,
			 o->op, ci.maps[m].template_name);
		char *tdata = read_input(tpath, &tlen);
		if (tdata == NULL) {
			fprintf(stderr, "%s: unable to open\n", tpath);
			status = FBC_CLI_INVALID;
			continue;
		}
		for (size_t c = 0; c < ci.maps[m].ncatalogs; c++) {
			const char *cat = ci.maps[m].catalogs[c];
			char cpath[4096];
			size_t clen = 0;
			snprintf(cpath, sizeof(cpath), "%s/catalogs/%s/%s/catalog.yaml", o->repo,
				 cat, o->op);
			char *cdata = read_input(cpath, &clen);
			if (cdata == NULL) {
				printf("%s: %s -> %s: no committed catalog file\n", o->op,
				       ci.maps[m].template_name, cat);
				missing++;
				continue;
			}
			pairs++;
			fbc_template_opts to = {ci.maps[m].type, fbc_template_catalog_migrate(cat),
						rules, tpath};
			fbc_buf out;
			fbc_buf_init(&out, 0);
			if (fbc_template_render_yaml(&out, tdata, tlen, &to, src, &err) != 0) {
				printf("%s: %s -> %s: render failed: %s: %s\n", o->op,
				       ci.maps[m].template_name, cat, err.where, err.message);
				status = FBC_CLI_INVALID;
			} else {
				fbc_template_diff d;
				fbc_template_compare(&d, out.data ? out.data : "", out.len, cdata,
						     clen);
				if (!d.same && o->write) {
					FILE *wf = fopen(cpath, "wb");
					if (wf == NULL ||
					    fwrite(out.data, 1, out.len, wf) != out.len) {
						fprintf(stderr, "%s: cannot write\n", cpath);
						status = FBC_CLI_USAGE;
					} else {
						printf("%s: written\n", cpath);
						d.same = true;
					}
					if (wf != NULL)
						fclose(wf);
				}
				if (d.same) {
					same++;
					printf("%s: %s -> %s: identical\n", o->op,
					       ci.maps[m].template_name, cat);
				} else {
					printf("%s: %s -> %s: differs: blob %zu (%s line %zu, "
					       "rendered line %zu)\n",
					       o->op, ci.maps[m].template_name, cat, d.blob, cpath,
					       d.line, d.rendered_line);
					status = FBC_CLI_INVALID;
				}
			}
			fbc_buf_dispose(&out);
			free(cdata);
		}
		free(tdata);
	}
	printf("%s: %zu of %zu pairs identical, %zu without a catalog file\n", o->op, same, pairs,
	       missing);
done:
	fbc_template_ci_dispose(&ci);
	fbc_template_sources_free(src);
	free_trees(trees);
	free(cidata);
	return status;
}

static int write_file(const char *path, const char *data, size_t len)
{
	FILE *f = fopen(path, "wb");
	if (f == NULL)
		return -1;
	int rc = fwrite(data, 1, len, f) == len ? 0 : -1;
	if (fclose(f) != 0)
		rc = -1;
	return rc;
}

static int cmd_add_bundle(const opts *o)
{
	fbc_template_ci ci = {0};
	fbc_template_release rel = {0};
	fbc_tree *bt = NULL;
	fbc_bundle_dir *b = NULL;
	fbc_error err;
	char path[4096], img[1024];
	char *cidata = NULL, *rdata = NULL;
	size_t cilen = 0, rlen = 0;
	int status = FBC_CLI_USAGE;

	fbc_error_init(&err);
	if (o->repo == NULL || o->op == NULL || o->version == NULL) {
		fprintf(stderr, "fbcd template add-bundle: --repo, --operator and --version are "
				"required\n");
		return FBC_CLI_USAGE;
	}
	snprintf(path, sizeof(path), "%s/operators/%s/ci.yaml", o->repo, o->op);
	if ((cidata = read_input(path, &cilen)) == NULL) {
		fprintf(stderr, "fbcd template add-bundle: unable to open \"%s\"\n", path);
		goto done;
	}
	if (fbc_template_ci_parse(&ci, cidata, cilen, path, &err) != 0)
		goto fail;
	snprintf(path, sizeof(path), "%s/operators/%s/%s/release-config.yaml", o->repo, o->op,
		 o->version);
	if ((rdata = read_input(path, &rlen)) == NULL) {
		fprintf(stderr, "fbcd template add-bundle: unable to open \"%s\"\n", path);
		goto done;
	}
	if (fbc_template_release_parse(&rel, rdata, rlen, path, &err) != 0)
		goto fail;
	snprintf(path, sizeof(path), "%s/operators/%s/%s", o->repo, o->op, o->version);
	if (fbc_tree_open_dir(&bt, path, &err) != 0 || fbc_bundle_read(&b, bt, NULL, &err) != 0)
		goto fail;
	const char *bname = fbc_bundle_name(b);
	if (bname[0] == '\0') {
		fprintf(stderr, "fbcd template add-bundle: %s: the bundle has no CSV name\n", path);
		goto done;
	}
	if (o->image != NULL)
		snprintf(img, sizeof(img), "%s", o->image);
	else
		snprintf(img, sizeof(img), "quay.io/community-operator-pipeline-prod/%s:%s", o->op,
			 o->version);
	status = FBC_CLI_OK;
	for (size_t i = 0; i < fbc_template_release_count(&rel); i++) {
		const char *tn = fbc_template_release_template(&rel, i);
		const fbc_template_mapping *m = NULL;
		for (size_t k = 0; k < ci.nmaps; k++)
			if (strcmp(ci.maps[k].template_name, tn) == 0)
				m = &ci.maps[k];
		if (m == NULL) {
			fprintf(stderr,
				"fbcd template add-bundle: template %s is not in ci.yaml's "
				"fbc.catalog_mapping\n",
				tn);
			status = FBC_CLI_INVALID;
			continue;
		}
		char tpath[4096];
		snprintf(tpath, sizeof(tpath), "%s/operators/%s/catalog-templates/%s", o->repo,
			 o->op, tn);
		size_t tlen = 0;
		char *tdata = read_input(tpath, &tlen);
		json_t *doc = NULL;
		if (tdata != NULL) {
			fbc_load_limits lim;
			fbc_load_limits_default(&lim);
			if (fbc_yaml_doc_to_json(&doc, NULL, tdata, tlen, &lim, &err) != 0) {
				fprintf(stderr, "fbcd template add-bundle: %s: %s\n", tpath,
					err.message);
				free(tdata);
				status = FBC_CLI_INVALID;
				continue;
			}
		}
		free(tdata);
		fbc_buf out;
		fbc_buf_init(&out, 0);
		if (fbc_template_add_bundle(&doc, &rel, i, m->type, o->op, img, bname, &err) != 0 ||
		    fbc_buf_puts(&out, "---\n") != 0 ||
		    fbc_goyaml_emit_ordered(&out, doc, &err) != 0) {
			fprintf(stderr, "fbcd template add-bundle: %s: %s\n", tpath, err.message);
			status = FBC_CLI_INVALID;
		} else if (write_file(tpath, out.data, out.len) != 0) {
			fprintf(stderr, "fbcd template add-bundle: cannot write %s\n", tpath);
			status = FBC_CLI_USAGE;
		} else {
			printf("%s: added %s (%s)\n", tpath, bname, img);
		}
		fbc_buf_dispose(&out);
		json_decref(doc);
	}
	goto done;
fail:
	fprintf(stderr, "fbcd template add-bundle: %s%s%s\n", err.where, err.where[0] ? ": " : "",
		err.message);
	status = FBC_CLI_INVALID;
done:
	fbc_bundle_free(b);
	fbc_tree_free(bt);
	fbc_template_release_dispose(&rel);
	fbc_template_ci_dispose(&ci);
	free(cidata);
	free(rdata);
	return status;
}

int fbc_cmd_template(int argc, char **argv)
{
	static const struct option lopts[] = {{"output", required_argument, NULL, 'o'},
					      {"migrate-level", required_argument, NULL, 'm'},
					      {"bundles-from", required_argument, NULL, 'f'},
					      {"bundle-root", required_argument, NULL, 'r'},
					      {"pull", no_argument, NULL, 'p'},
					      {"insecure", no_argument, NULL, 1000},
					      {"ca-file", required_argument, NULL, 1001},
					      {"authfile", required_argument, NULL, 1002},
					      {"semver-rules", required_argument, NULL, 's'},
					      {"repo", required_argument, NULL, 'R'},
					      {"operator", required_argument, NULL, 'O'},
					      {"version", required_argument, NULL, 'V'},
					      {"image", required_argument, NULL, 'I'},
					      {"write", no_argument, NULL, 'W'},
					      {"help", no_argument, NULL, 'h'},
					      {NULL, 0, NULL, 0}};
	opts o;
	static fbc_cli_puller puller; /* one per process: the registry client of --pull */
	memset(&o, 0, sizeof(o));
	fbc_cli_puller_init(&puller);
	o.puller = &puller;
	if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
		usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? FBC_CLI_USAGE : FBC_CLI_OK;
	}
	const char *sub = argv[1];
	if (strcmp(sub, "render") != 0 && strcmp(sub, "verify") != 0 &&
	    strcmp(sub, "add-bundle") != 0) {
		fprintf(stderr,
			"fbcd template: unknown subcommand '%s' (render, verify, add-bundle)\n",
			sub);
		return FBC_CLI_USAGE;
	}
	optind = 1;
	opterr = 0;
	int c;
	while ((c = getopt_long(argc - 1, argv + 1, ":o:h", lopts, NULL)) != -1) {
		switch (c) {
		case 'o':
			o.output = optarg;
			break;
		case 'm':
			o.migrate = optarg;
			break;
		case 'f':
		case 'r':
			if ((c == 'f' ? o.nfrom : o.nroots) >= MAX_SOURCES) {
				fprintf(stderr, "fbcd template: at most %d of each source\n",
					MAX_SOURCES);
				return FBC_CLI_USAGE;
			}
			if (c == 'f')
				o.from[o.nfrom++] = optarg;
			else
				o.roots[o.nroots++] = optarg;
			break;
		case 'p':
			o.pull = true;
			break;
		case 1000:
			puller.o.insecure = true;
			break;
		case 1001:
			puller.o.ca_file = optarg;
			break;
		case 1002:
			puller.o.docker_config = optarg;
			break;
		case 's':
			o.rules = optarg;
			break;
		case 'R':
			o.repo = optarg;
			break;
		case 'O':
			o.op = optarg;
			break;
		case 'V':
			o.version = optarg;
			break;
		case 'I':
			o.image = optarg;
			break;
		case 'W':
			o.write = true;
			break;
		case 'h':
			usage(stdout);
			return FBC_CLI_OK;
		case ':':
			fprintf(stderr, "fbcd template: option %s needs a value\n", argv[optind]);
			return FBC_CLI_USAGE;
		default:
			fprintf(stderr, "fbcd template: unknown option %s\n", argv[optind]);
			return FBC_CLI_USAGE;
		}
	}
	/* positional arguments after the subcommand */
	int first = optind + 1;
	if (strcmp(sub, "render") == 0)
		return cmd_render(&o, argc - first, argv + first);
	if (argc - first != 0) {
		fprintf(stderr, "fbcd template %s: unexpected argument '%s'\n", sub, argv[first]);
		return FBC_CLI_USAGE;
	}
	if (strcmp(sub, "add-bundle") == 0)
		return cmd_add_bundle(&o);
	return cmd_verify(&o);
}
