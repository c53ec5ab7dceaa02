/*
 * Real data: every olm.bundle blob of catalogs/v4.NN/<pkg>/catalog.yaml in
 * a community-operators checkout is rendered again from the bundle
 * directory operators/<pkg>/<version>/ whose CSV has the blob's name, with
 * the blob's image and the catalog's migrate level (bundle objects up to
 * v4.16, bundle-object-to-csv-metadata from v4.17), and compared as JSON
 * values (bundle-object data therefore byte for byte, base64 included).
 *
 * usage: bundle_realdata REPO [--list]   (exit 0 when every blob matches
 * or is a documented exception, 1 otherwise, 77 when REPO is missing)
 */
#include "service/bundle/bundle.h"
#include "service/goyaml/goyaml.h"
#include "service/load/load.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

typedef struct blobs {
	json_t *list;
} blobs;

static int collect(void *ctx, const fbc_meta *m, fbc_error *err)
{
	blobs *b = ctx;
	(void)err;
	if (strcmp(m->schema, "olm.bundle") == 0)
		json_array_append(b->list, m->blob);
	return 0;
}

typedef struct cached {
	char *pkg;
	char *dir;
	fbc_bundle_dir *b;
} cached;

static cached *cache;
static size_t ncache;

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static char **list_dir(const char *path, size_t *n)
{
	DIR *d = opendir(path);
	struct dirent *e;
	char **v = NULL;

	*n = 0;
	if (!d)
		return NULL;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		v = realloc(v, (*n + 1) * sizeof(*v));
		v[(*n)++] = strdup(e->d_name);
	}
	closedir(d);
	if (*n)
		qsort(v, *n, sizeof(*v), cmp_str);
	return v;
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	char *s = NULL;
	long n;

	if (!f)
		return strdup("");
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	s = malloc((size_t)n + 1);
	if (s && fread(s, 1, (size_t)n, f) != (size_t)n)
		n = 0;
	if (s)
		s[n] = 0;
	fclose(f);
	return s;
}

static void load_package(const char *repo, const char *pkg)
{
	char path[4096];
	size_t n;
	char **vers;

	for (size_t i = 0; i < ncache; i++)
		if (strcmp(cache[i].pkg, pkg) == 0)
			return;
	snprintf(path, sizeof(path), "%s/operators/%s", repo, pkg);
	vers = list_dir(path, &n);
	for (size_t i = 0; i < n; i++) {
		char bd[4096];
		fbc_tree *t = NULL;
		fbc_bundle_dir *b = NULL;
		fbc_error err;
		bool isb = false;

		fbc_error_init(&err);
		snprintf(bd, sizeof(bd), "%s/%s", path, vers[i]);
		if (fbc_tree_open_dir(&t, bd, &err) == 0 &&
		    fbc_bundle_detect(&isb, t, "", &err) == 0 && isb) {
			if (fbc_bundle_read(&b, t, NULL, &err) != 0)
				fprintf(stderr, "read %s: %s\n", bd, err.message);
		}
		fbc_tree_free(t);
		cache = realloc(cache, (ncache + 1) * sizeof(*cache));
		cache[ncache].pkg = strdup(pkg);
		cache[ncache].dir = strdup(bd);
		cache[ncache].b = b;
		ncache++;
		free(vers[i]);
	}
	if (n == 0) {
		cache = realloc(cache, (ncache + 1) * sizeof(*cache));
		cache[ncache].pkg = strdup(pkg);
		cache[ncache].dir = NULL;
		cache[ncache].b = NULL;
		ncache++;
	}
	free(vers);
}

static const cached *find_bundle(const char *pkg, const char *name)
{
	for (size_t i = 0; i < ncache; i++)
		if (cache[i].b && strcmp(cache[i].pkg, pkg) == 0 &&
		    strcmp(fbc_bundle_name(cache[i].b), name) == 0)
			return &cache[i];
	return NULL;
}

/* Documented exceptions: catalog blobs opm did not produce from the bundle
 * directory at this commit. Each entry: catalog, bundle name, evidence.
 * None is needed at history.bundle's main (449 blobs, 11 catalogs); the one
 * known hand-written catalog (bundles.md §8, catalogs/v4.19/kubebrowser) is
 * not among the 21 operators of the history. */
static const struct {
	const char *catalog, *bundle, *why;
} exceptions[] = {
	{NULL, NULL, NULL},
};

static const char *exception_for(const char *cat, const char *bundle)
{
	for (size_t i = 0; exceptions[i].catalog; i++)
		if (strcmp(exceptions[i].catalog, cat) == 0 &&
		    strcmp(exceptions[i].bundle, bundle) == 0)
			return exceptions[i].why;
	return NULL;
}

static void explain(json_t *want, json_t *got)
{
	const char *k;
	json_t *v;

	json_object_foreach(want, k, v)
	{
		json_t *g = json_object_get(got, k);
		if (!json_equal(v, g)) {
			char *a = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
			char *b = g ? json_dumps(g, JSON_COMPACT | JSON_ENCODE_ANY)
				    : strdup("(absent)");
			if (json_is_array(v) && json_is_array(g)) {
				for (size_t i = 0; i < json_array_size(v) || i < json_array_size(g);
				     i++) {
					if (!json_equal(json_array_get(v, i),
							json_array_get(g, i))) {
						char *x =
							json_dumps(json_array_get(v, i),
								   JSON_COMPACT | JSON_ENCODE_ANY);
						char *y =
							json_dumps(json_array_get(g, i),
								   JSON_COMPACT | JSON_ENCODE_ANY);
						fprintf(stderr,
							"    %s[%zu]: want %.300s\n              "
							"got  %.300s\n",
							k, i, x ? x : "(none)", y ? y : "(none)");
						free(x);
						free(y);
						break;
					}
				}
			} else {
				fprintf(stderr, "    %s: want %.300s got %.300s\n", k, a, b);
			}
			free(a);
			free(b);
		}
	}
}

int main(int argc, char **argv)
{
	char path[4096];
	size_t ncat;
	char **cats;
	unsigned long yaml_equal = 0;
	unsigned long total = 0, equal = 0, excused = 0, missing = 0, failed = 0;
	struct stat st;

	if (argc < 2 || stat(argv[1], &st) != 0) {
		fprintf(stderr, "usage: bundle_realdata REPO\n");
		return 77;
	}
	snprintf(path, sizeof(path), "%s/catalogs", argv[1]);
	cats = list_dir(path, &ncat);
	for (size_t c = 0; c < ncat; c++) {
		size_t npkg;
		char cp[4096];
		char **pkgs;
		int minor = atoi(cats[c] + 3);
		fbc_bundle_migrate mig =
			minor >= 17 ? FBC_BUNDLE_MIGRATE_CSV_METADATA : FBC_BUNDLE_MIGRATE_NONE;

		snprintf(cp, sizeof(cp), "%s/%s", path, cats[c]);
		pkgs = list_dir(cp, &npkg);
		for (size_t p = 0; p < npkg; p++) {
			char pp[4096];
			blobs bl = {json_array()};
			fbc_diags diags;
			fbc_error err;
			size_t i;
			json_t *blob;
			char *text = NULL;

			fbc_error_init(&err);
			fbc_diags_init(&diags, 0);
			snprintf(pp, sizeof(pp), "%s/%s", cp, pkgs[p]);
			if (fbc_load_dir(pp, NULL, collect, &bl, &diags, &err) != 0)
				fprintf(stderr, "load %s: %s\n", pp, err.message);
			load_package(argv[1], pkgs[p]);
			snprintf(pp, sizeof(pp), "%s/%s/%s/catalog.yaml", path, cats[c], pkgs[p]);
			text = slurp(pp);
			json_array_foreach(bl.list, i, blob)
			{
				const char *name = json_string_value(json_object_get(blob, "name"));
				const char *image =
					json_string_value(json_object_get(blob, "image"));
				const cached *cb = find_bundle(pkgs[p], name ? name : "");
				fbc_buf out;
				json_t *got;
				bool written = false;
				const char *why;

				total++;
				if (cb == NULL) {
					missing++;
					fprintf(stderr,
						"%s/%s: %s: no bundle directory at this commit\n",
						cats[c], pkgs[p], name);
					continue;
				}
				fbc_buf_init(&out, 0);
				if (fbc_bundle_render(&out, &written, cb->b, image ? image : "",
						      mig, &err) != 0) {
					failed++;
					fprintf(stderr, "%s/%s: %s: render failed: %s\n", cats[c],
						pkgs[p], name, err.message);
					fbc_buf_dispose(&out);
					continue;
				}
				got = json_loadb(out.data, out.len, 0, NULL);
				if (got && json_equal(got, blob)) {
					/* and the YAML text opm wrote, byte for byte */
					fbc_buf y;
					fbc_buf_init(&y, 0);
					if (fbc_goyaml_emit_document(&y, got, &err) == 0 &&
					    strstr(text, y.data + 4))
						yaml_equal++;
					else
						fprintf(stderr, "%s/%s: %s: YAML text differs\n",
							cats[c], pkgs[p], name);
					fbc_buf_dispose(&y);
					equal++;
				} else if ((why = exception_for(cats[c], name)) != NULL) {
					excused++;
					fprintf(stderr, "%s/%s: %s: differs (documented: %s)\n",
						cats[c], pkgs[p], name, why);
				} else {
					failed++;
					fprintf(stderr, "%s/%s: %s: differs from %s\n", cats[c],
						pkgs[p], name, cb->dir);
					if (got)
						explain(blob, got);
				}
				json_decref(got);
				fbc_buf_dispose(&out);
			}
			json_decref(bl.list);
			free(text);
			fbc_diags_dispose(&diags);
			free(pkgs[p]);
		}
		free(pkgs);
		free(cats[c]);
	}
	free(cats);
	/* every bundle directory of every package renders (both forms) */
	{
		size_t nop;
		char op[4096];
		char **ops;
		unsigned long dirs = 0, ok = 0;
		snprintf(op, sizeof(op), "%s/operators", argv[1]);
		ops = list_dir(op, &nop);
		for (size_t i = 0; i < nop; i++) {
			load_package(argv[1], ops[i]);
			free(ops[i]);
		}
		free(ops);
		for (size_t i = 0; i < ncache; i++) {
			fbc_buf out;
			fbc_error err;
			bool w1 = false, w2 = false;
			if (cache[i].dir == NULL || cache[i].b == NULL)
				continue;
			dirs++;
			fbc_buf_init(&out, 0);
			fbc_error_init(&err);
			if (fbc_bundle_render_json(&out, &w1, cache[i].b, "",
						   FBC_BUNDLE_MIGRATE_NONE, &err) == 0 &&
			    fbc_bundle_render_json(&out, &w2, cache[i].b, "quay.io/x/y:v1",
						   FBC_BUNDLE_MIGRATE_CSV_METADATA, &err) == 0 &&
			    w1 && w2)
				ok++;
			else {
				failed++;
				fprintf(stderr, "%s: render failed: %s\n", cache[i].dir,
					err.message);
			}
			fbc_buf_dispose(&out);
		}
		printf("bundle directories %lu: rendered %lu\n", dirs, ok);
		/* and none of them has a validation error (no false positives on
		 * bundles the community pipeline accepted) */
		{
			unsigned long errors = 0, warnings = 0;
			for (size_t i = 0; i < ncache; i++) {
				fbc_diags d;
				fbc_error err;
				if (cache[i].b == NULL)
					continue;
				fbc_error_init(&err);
				fbc_diags_init(&d, 0);
				if (fbc_bundle_validate(cache[i].b, &d, &err) != 0)
					errors++;
				for (size_t k = 0; k < fbc_diags_count(&d); k++) {
					const fbc_diag *x = fbc_diags_at(&d, k);
					if (fbc_bundle_code_is_error(x->code)) {
						errors++;
						fprintf(stderr, "%s: %s:%d: %s: %s\n", cache[i].dir,
							x->file ? x->file : "", x->line, x->code,
							x->message);
					} else {
						warnings++;
					}
				}
				fbc_diags_dispose(&d);
			}
			printf("bundle validate: %lu errors, %lu warnings\n", errors, warnings);
			failed += errors;
		}
	}
	printf("YAML text byte-identical: %lu\n", yaml_equal);
	if (yaml_equal != equal)
		failed++;
	printf("blobs %lu: equal %lu, documented exceptions %lu, without bundle directory %lu, "
	       "failed %lu\n",
	       total, equal, excused, missing, failed);
	for (size_t i = 0; i < ncache; i++) {
		fbc_bundle_free(cache[i].b);
		free(cache[i].pkg);
		free(cache[i].dir);
	}
	free(cache);
	return failed == 0 && total > 0 ? 0 : 1;
}
