/*
 * Re-validating a catalog after one package changed, through the file cache
 * (service/fbc fbc_catalog_cache, issue: incremental reloading by content):
 * in a git repository holding a catalog at commit A and the same catalog with
 * one package's file changed at commit B, each round loads and validates
 *  - B without a cache (the baseline: a cold validate),
 *  - A through a new, empty cache (cold, filling it),
 *  - B through that cache (only the changed file is read and parsed).
 * Prints min / median / max of each over the rounds and the ratios of the
 * medians; asserts nothing but that every load gives the same findings.
 * Usage: bench_revalidate REPO REV_A REV_B ROUNDS
 */
#include "pipeline/git/git.h"
#include "service/fbc/model.h"
#include "service/fbc/validate.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_ROUNDS 64

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double row(const char *name, double *v, size_t n)
{
	qsort(v, n, sizeof(double), cmp_d);
	printf("  %-52s min %7.1f  median %7.1f  max %7.1f  ms\n", name, v[0], v[n / 2], v[n - 1]);
	return v[n / 2];
}

/* Load and validate rev's tree (through cc when given): ms, findings in *n_diags. */
static double load_ms(fbc_git *g, const char *rev, fbc_catalog_cache *cc, size_t *n_diags)
{
	fbc_tree *t = NULL;
	fbc_catalog *cat = NULL;
	fbc_diags d;
	fbc_error err;
	double t0;

	if (fbc_git_tree_open(&t, g, rev, &err) != 0 || fbc_diags_init(&d, 0) != 0) {
		fprintf(stderr, "bench_revalidate: %s: %s\n", err.where, err.message);
		exit(2);
	}
	t0 = now_ms();
	if (fbc_catalog_load_tree_cached(&cat, t, NULL, cc, &d, &err) != 0 ||
	    fbc_validate(cat, NULL, &d, &err) != 0) {
		fprintf(stderr, "bench_revalidate: %s: %s\n", err.where, err.message);
		exit(2);
	}
	t0 = now_ms() - t0;
	*n_diags = fbc_diags_count(&d);
	fbc_catalog_free(cat);
	fbc_diags_dispose(&d);
	fbc_tree_free(t);
	return t0;
}

int main(int argc, char **argv)
{
	static double base[MAX_ROUNDS], cold[MAX_ROUNDS], inc[MAX_ROUNDS];
	size_t rounds, nb = 0, nc = 0, ni = 0, hits = 0, read = 0;
	fbc_git *g = NULL;
	fbc_error err;
	double mb, mc, mi;

	if (argc != 5 || (rounds = strtoul(argv[4], NULL, 10)) == 0 || rounds > MAX_ROUNDS) {
		fprintf(stderr, "usage: bench_revalidate REPO REV_A REV_B ROUNDS (1..%d)\n",
			MAX_ROUNDS);
		return 2;
	}
	if (fbc_git_open(&g, argv[1], &err) != 0) {
		fprintf(stderr, "bench_revalidate: %s: %s\n", err.where, err.message);
		return 2;
	}
	for (size_t i = 0; i < rounds; i++) {
		fbc_catalog_cache *cc = NULL;
		size_t d1, d2, d3;

		base[i] = load_ms(g, argv[3], NULL, &d1);
		if (fbc_catalog_cache_create(&cc, 0, &err) != 0)
			return 2;
		size_t h0, m0, h1, m1;

		cold[i] = load_ms(g, argv[2], cc, &d2);
		fbc_catalog_cache_stats(cc, NULL, NULL, &h0, &m0);
		inc[i] = load_ms(g, argv[3], cc, &d3);
		fbc_catalog_cache_stats(cc, NULL, NULL, &h1, &m1);
		hits = h1 - h0;
		read = m1 - m0;
		fbc_catalog_cache_free(cc);
		if (d1 != d3) {
			fprintf(stderr,
				"bench_revalidate: %zu findings without the cache, %zu with\n", d1,
				d3);
			return 1;
		}
		nb = d1;
		nc = d2;
		ni = d3;
	}
	printf("re-validate after one package changed (%zu rounds; findings: %zu, %zu, %zu; the "
	       "cached load of B: %zu files from the cache, %zu read)\n",
	       rounds, nb, nc, ni, hits, read);
	mb = row("baseline: load + validate B, no cache (cold)", base, rounds);
	mc = row("load + validate A through an empty cache", cold, rounds);
	mi = row("then load + validate B through that cache", inc, rounds);
	printf("  ratios of medians: incremental / cold validate %.3f (goal <= 0.10); filling "
	       "the cache / cold validate %.2f\n",
	       mi / mb, mc / mb);
	fbc_git_free(g);
	return 0;
}
