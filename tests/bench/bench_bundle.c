/*
 * Benchmark (prints, asserts nothing): render every bundle directory of a
 * community-operators checkout (operators/<pkg>/<version>/) into its
 * olm.bundle blob, in both property forms (bundle objects, and CSV metadata
 * with an image), next to loading and validating the catalogs those blobs
 * end up in (catalogs/v4.NN/, `fbcd validate` in-process), measured in the
 * same run: min/median/max wall time over RUNS runs each, interleaved.
 *
 * usage: bench_bundle REPO [RUNS]
 */
#include "service/bundle/bundle.h"
#include "service/fbc/model.h"
#include "service/fbc/validate.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
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

/* Render every bundle directory in both forms; returns bytes written. */
static size_t render_all(char **dirs, size_t n, size_t *rendered)
{
	size_t bytes = 0;

	*rendered = 0;
	for (size_t i = 0; i < n; i++) {
		fbc_tree *t = NULL;
		fbc_bundle_dir *b = NULL;
		fbc_error err;
		fbc_buf out;
		bool w;

		fbc_error_init(&err);
		fbc_buf_init(&out, 0);
		if (fbc_tree_open_dir(&t, dirs[i], &err) == 0 &&
		    fbc_bundle_read(&b, t, NULL, &err) == 0 &&
		    fbc_bundle_render_json(&out, &w, b, "", FBC_BUNDLE_MIGRATE_NONE, &err) == 0 &&
		    fbc_bundle_render_json(&out, &w, b, "quay.io/example/bundle:1",
					   FBC_BUNDLE_MIGRATE_CSV_METADATA, &err) == 0)
			(*rendered)++;
		bytes += out.len;
		fbc_buf_dispose(&out);
		fbc_bundle_free(b);
		fbc_tree_free(t);
	}
	return bytes;
}

static size_t validate_all(char **cats, size_t n)
{
	size_t findings = 0;

	for (size_t i = 0; i < n; i++) {
		fbc_catalog *cat = NULL;
		fbc_diags d;
		fbc_error err;

		fbc_error_init(&err);
		fbc_diags_init(&d, 0);
		if (fbc_catalog_load_dir(&cat, cats[i], NULL, &d, &err) == 0)
			fbc_validate(cat, NULL, &d, &err);
		findings += fbc_diags_count(&d);
		fbc_catalog_free(cat);
		fbc_diags_dispose(&d);
	}
	return findings;
}

static void stats(const char *label, double *t, int runs, size_t items, const char *what)
{
	qsort(t, (size_t)runs, sizeof(*t), cmp_dbl);
	printf("  %-34s %4zu %-10s min %7.3f s  median %7.3f s  max %7.3f s\n", label, items, what,
	       t[0], t[runs / 2], t[runs - 1]);
}

int main(int argc, char **argv)
{
	char path[4096];
	char **ops, **dirs = NULL, **cats = NULL, **cv;
	size_t nops, ndirs = 0, ncat, ncats = 0;
	int runs = argc > 2 ? atoi(argv[2]) : 3;
	double *tr, *tv;
	size_t rendered = 0, bytes = 0, findings = 0;
	struct stat st;

	if (argc < 2 || stat(argv[1], &st) != 0) {
		fprintf(stderr, "usage: bench_bundle REPO [RUNS]\n");
		return 77;
	}
	if (runs < 1)
		runs = 1;
	snprintf(path, sizeof(path), "%s/operators", argv[1]);
	ops = list_dir(path, &nops);
	for (size_t i = 0; i < nops; i++) {
		size_t nv;
		char pp[4096];
		char **vers;
		snprintf(pp, sizeof(pp), "%s/%s", path, ops[i]);
		vers = list_dir(pp, &nv);
		for (size_t k = 0; k < nv; k++) {
			char bd[4096], m[4200];
			snprintf(bd, sizeof(bd), "%s/%s", pp, vers[k]);
			snprintf(m, sizeof(m), "%s/manifests", bd);
			if (stat(m, &st) == 0 && S_ISDIR(st.st_mode)) {
				dirs = realloc(dirs, (ndirs + 1) * sizeof(*dirs));
				dirs[ndirs++] = strdup(bd);
			}
			free(vers[k]);
		}
		free(vers);
		free(ops[i]);
	}
	free(ops);
	snprintf(path, sizeof(path), "%s/catalogs", argv[1]);
	cv = list_dir(path, &ncat);
	for (size_t i = 0; i < ncat; i++) {
		char cp[4096];
		snprintf(cp, sizeof(cp), "%s/%s", path, cv[i]);
		cats = realloc(cats, (ncats + 1) * sizeof(*cats));
		cats[ncats++] = strdup(cp);
		free(cv[i]);
	}
	free(cv);
	tr = calloc((size_t)runs, sizeof(double));
	tv = calloc((size_t)runs, sizeof(double));
	for (int r = 0; r < runs; r++) {
		double t0 = now();
		bytes = render_all(dirs, ndirs, &rendered);
		tr[r] = now() - t0;
		t0 = now();
		findings = validate_all(cats, ncats);
		tv[r] = now() - t0;
	}
	printf("bench_bundle: %zu bundle directories, %zu catalogs, %d runs (shared machine, "
	       "loaded by other jobs)\n",
	       ndirs, ncats, runs);
	stats("render (both forms, -o json)", tr, runs, rendered, "bundles");
	stats("baseline: load+validate catalogs", tv, runs, ncats, "catalogs");
	printf("  rendered %zu bytes per run; validation findings %zu\n", bytes, findings);
	for (size_t i = 0; i < ndirs; i++)
		free(dirs[i]);
	for (size_t i = 0; i < ncats; i++)
		free(cats[i]);
	free(dirs);
	free(cats);
	free(tr);
	free(tv);
	return 0;
}
