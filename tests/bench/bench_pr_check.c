/*
 * Benchmark of the pull-request check engine (pipeline.md §5.4): every pull request of a
 * repository (refs listed in a file) checked against its parent, cold (an empty cache), warm
 * (a cache that already holds the catalogs and the add-mode builds) and warm from disk only (a
 * new cache on the same directory, as a new `fbcd pr check` process with --cache-dir sees
 * it), with p50/p90/max per check and in total,
 * next to the baseline measured in the same run: loading and validating the catalogs the
 * pull request touches at its head (what `fbcd validate` does for them). Prints, asserts
 * nothing. Usage: bench_pr_check REPO REFS_FILE CACHE_DIR
 */
#include "pipeline/checks/checks.h"
#include "service/fbc/validate.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_PRS	 4096
#define N_CHECKS 9

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static void row(const char *name, double *v, size_t n)
{
	if (!n)
		return;
	qsort(v, n, sizeof(double), cmp_d);
	printf("  %-22s p50 %8.1f  p90 %8.1f  max %8.1f  ms\n", name, v[n / 2], v[(n * 9) / 10],
	       v[n - 1]);
}

/* Load and validate the catalogs of r's change set at its head: the baseline. */
static double validate_ms(fbc_git *g, const fbc_checks_result *r)
{
	fbc_tree *t = NULL;
	fbc_error err;
	double t0 = now_ms();

	if (fbc_git_tree_open(&t, g, r->head, &err) != 0)
		return 0;
	for (size_t i = 0; i < r->changes.n_catalogs; i++) {
		fbc_tree *sub = NULL;
		fbc_catalog *cat = NULL;
		fbc_diags d;

		if (fbc_diags_init(&d, 0) != 0)
			break;
		if ((!*r->changes.catalogs[i] ||
		     fbc_tree_sub(&sub, t, r->changes.catalogs[i], &err) == 0) &&
		    fbc_catalog_load_tree(&cat, sub ? sub : t, NULL, &d, &err) == 0)
			fbc_validate(cat, NULL, &d, &err);
		fbc_catalog_free(cat);
		fbc_tree_free(sub);
		fbc_diags_dispose(&d);
	}
	fbc_tree_free(t);
	return now_ms() - t0;
}

int main(int argc, char **argv)
{
	static double cold[N_CHECKS + 1][MAX_PRS], warm[N_CHECKS + 1][MAX_PRS], base[MAX_PRS];
	static double cold_cat[MAX_PRS], warm_cat[MAX_PRS], base_cat[MAX_PRS];
	static double disk[N_CHECKS + 1][MAX_PRS];
	size_t n = 0, n_cat = 0;
	char line[512];
	fbc_git *g = NULL;
	fbc_error err;
	fbc_checks_cache *shared = NULL;
	FILE *f;

	if (argc != 4) {
		fprintf(stderr, "usage: bench_pr_check REPO REFS_FILE CACHE_DIR\n");
		return 2;
	}
	if (fbc_git_open(&g, argv[1], &err) != 0 || !(f = fopen(argv[2], "r")) ||
	    fbc_checks_cache_create(&shared, 0, argv[3], &err) != 0) {
		fprintf(stderr, "bench_pr_check: %s: %s\n", err.where, err.message);
		return 2;
	}
	while (n < MAX_PRS && fgets(line, sizeof(line), f)) {
		char base_rev[600];
		fbc_checks_result *r = NULL;
		fbc_checks_options cold_o = {0}, warm_o = {0};

		line[strcspn(line, "\n")] = '\0';
		if (!*line)
			continue;
		snprintf(base_rev, sizeof(base_rev), "%s^", line);
		/* cold: a private, empty cache */
		if (fbc_checks_run(&r, g, base_rev, line, &cold_o, &err) != 0) {
			fprintf(stderr, "%s: %s\n", line, err.message);
			continue;
		}
		for (size_t i = 0; i < r->n_checks && i < N_CHECKS; i++)
			cold[i][n] = r->checks[i].ms;
		cold[N_CHECKS][n] = r->total_ms;
		base[n] = validate_ms(g, r);
		if (r->changes.n_catalogs) {
			cold_cat[n_cat] = r->total_ms;
			base_cat[n_cat] = base[n];
		}
		fbc_checks_result_free(r);
		/* warm: the shared cache, filled by a first run */
		warm_o.cache = shared;
		if (fbc_checks_run(&r, g, base_rev, line, &warm_o, &err) == 0)
			fbc_checks_result_free(r);
		r = NULL;
		if (fbc_checks_run(&r, g, base_rev, line, &warm_o, &err) != 0)
			continue;
		for (size_t i = 0; i < r->n_checks && i < N_CHECKS; i++)
			warm[i][n] = r->checks[i].ms;
		warm[N_CHECKS][n] = r->total_ms;
		if (r->changes.n_catalogs)
			warm_cat[n_cat++] = r->total_ms;
		fbc_checks_result_free(r);
		r = NULL;
		/* warm from disk: a new cache on the directory the shared one wrote */
		{
			fbc_checks_cache *fresh = NULL;
			fbc_checks_options disk_o = {0};

			if (fbc_checks_cache_create(&fresh, 0, argv[3], &err) == 0) {
				disk_o.cache = fresh;
				if (fbc_checks_run(&r, g, base_rev, line, &disk_o, &err) == 0) {
					for (size_t i = 0; i < r->n_checks && i < N_CHECKS; i++)
						disk[i][n] = r->checks[i].ms;
					disk[N_CHECKS][n] = r->total_ms;
					fbc_checks_result_free(r);
				}
				fbc_checks_cache_free(fresh);
			}
		}
		n++;
	}
	fclose(f);
	printf("fbcd pr check over %zu pull requests (%zu touch catalogs); machine shared and "
	       "loaded, run with nice\n",
	       n, n_cat);
	printf("cold (empty cache):\n");
	for (size_t i = 0; i < N_CHECKS; i++)
		row(fbc_checks_ids[i], cold[i], n);
	row("total", cold[N_CHECKS], n);
	printf("warm (catalogs cached by tree id, add-mode builds by their inputs):\n");
	for (size_t i = 0; i < N_CHECKS; i++)
		row(fbc_checks_ids[i], warm[i], n);
	row("total", warm[N_CHECKS], n);
	printf("warm from disk (a new process with --cache-dir: add-mode builds only):\n");
	for (size_t i = 0; i < N_CHECKS; i++)
		row(fbc_checks_ids[i], disk[i], n);
	row("total", disk[N_CHECKS], n);
	printf("baseline, same run: load + validate the touched catalogs at head (fbcd "
	       "validate):\n");
	row("validate", base, n);
	printf("pull requests that touch catalogs only:\n");
	row("cold total", cold_cat, n_cat);
	row("warm total", warm_cat, n_cat);
	row("validate", base_cat, n_cat);
	{
		size_t entries, bytes, hits, misses;

		fbc_checks_cache_stats(shared, &entries, &bytes, &hits, &misses);
		printf("shared cache: %zu entries, %zu MiB accounted, %zu hits, %zu misses\n",
		       entries, bytes >> 20, hits, misses);
	}
	fbc_checks_cache_free(shared);
	fbc_git_free(g);
	return 0;
}
