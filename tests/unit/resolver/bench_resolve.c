/*
 * Resolution benchmark: p50/p99 time and SAT calls per resolution
 *  - for every package of the real catalog (argv[1], skipped when missing),
 *  - for every package of a generated 2,000-package catalog with dependency
 *    chains 5 deep, unsatisfiable channel heads and conflicting providers.
 * Baseline measured in the same run: v1 selection (no SAT) of the same packages.
 * Usage: bench_resolve [REAL_CATALOG_DIR] [ROUNDS]
 */
#include "service/resolver/resolver.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

typedef struct stats {
	double *ms;
	size_t *calls;
	size_t n, cap, sat, unsat;
} stats;

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void stats_add(stats *s, double ms, size_t calls)
{
	if (s->n == s->cap) {
		s->cap = s->cap ? s->cap * 2 : 1024;
		s->ms = realloc(s->ms, s->cap * sizeof(double));
		s->calls = realloc(s->calls, s->cap * sizeof(size_t));
		if (!s->ms || !s->calls)
			abort();
	}
	s->ms[s->n] = ms;
	s->calls[s->n] = calls;
	s->n++;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static int cmp_z(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	return x < y ? -1 : x > y;
}

static void stats_print(const char *label, stats *s)
{
	if (!s->n) {
		printf("%-34s no resolutions\n", label);
		return;
	}
	qsort(s->ms, s->n, sizeof(double), cmp_d);
	qsort(s->calls, s->n, sizeof(size_t), cmp_z);
	printf("%-34s n=%-6zu p50 %8.3f ms  p99 %8.3f ms  max %8.3f ms  SAT calls p50 %zu p99 %zu "
	       "max %zu  (%zu sat, %zu unsat)\n",
	       label, s->n, s->ms[s->n / 2], s->ms[(s->n * 99) / 100], s->ms[s->n - 1],
	       s->calls[s->n / 2], s->calls[(s->n * 99) / 100], s->calls[s->n - 1], s->sat,
	       s->unsat);
	free(s->ms);
	free(s->calls);
	memset(s, 0, sizeof(*s));
}

static void run_all(const fbc_catalog *cat, const fbc_resolve_index *ix, fbc_resolve_semantics sem,
		    int rounds, stats *st)
{
	for (int round = 0; round < rounds; round++)
		for (size_t p = 0; p < cat->n_sorted_packages; p++) {
			const fbc_package *pkg = cat->sorted_packages[p];
			fbc_resolve_request *req = NULL;
			fbc_resolve_result *res = NULL;
			fbc_resolve_req r;
			fbc_error err;
			double t0;

			memset(&r, 0, sizeof(r));
			r.package = pkg->name;
			r.channel = pkg->default_channel;
			if (fbc_resolve_request_create(&req, sem, &err) < 0 ||
			    fbc_resolve_request_add_catalog(req, "bench", 0, NULL, &err) < 0 ||
			    fbc_resolve_request_add(req, &r, &err) < 0)
				abort();
			req->catalogs[0].catalog = cat;
			req->catalogs[0].index = ix;
			t0 = now_ms();
			if (fbc_resolve(&res, req, NULL, &err) < 0) {
				fprintf(stderr, "%s: %s\n", pkg->name, err.message);
				abort();
			}
			stats_add(st, now_ms() - t0, res->sat_calls);
			if (getenv("BENCH_VERBOSE") &&
			    st->ms[st->n - 1] > strtod(getenv("BENCH_VERBOSE"), NULL))
				fprintf(stderr, "slow: %s %.3f ms, %zu SAT calls, %zu variables\n",
					pkg->name, st->ms[st->n - 1], res->sat_calls,
					res->n_variables);
			if (res->satisfiable)
				st->sat++;
			else
				st->unsat++;
			fbc_resolve_result_free(res);
			fbc_resolve_request_free(req);
		}
}

static void bench_catalog(const fbc_catalog *cat, int rounds, stats *s)
{
	fbc_resolve_index *ix = NULL;
	fbc_error err;
	double t0;

	run_all(cat, NULL, FBC_RESOLVE_V1, rounds, s);
	stats_print("  baseline v1 (no SAT)", s);
	run_all(cat, NULL, FBC_RESOLVE_CLASSIC, rounds, s);
	stats_print("  classic, no index", s);
	t0 = now_ms();
	if (fbc_resolve_index_build(&ix, cat, &err) < 0)
		abort();
	printf("  (GVK index built once in %.3f ms)\n", now_ms() - t0);
	run_all(cat, ix, FBC_RESOLVE_CLASSIC, rounds, s);
	stats_print("  classic, with index", s);
	fbc_resolve_index_free(ix);
}

#define N_MAIN 1600
#define N_ALT  400

static json_t *bundle(const char *pkg, const char *name, const char *ver, json_t *props)
{
	json_t *b = json_pack("{s:s,s:s,s:s,s:s}", "schema", "olm.bundle", "name", name, "package",
			      pkg, "image", "quay.io/bench/x:1");
	json_t *all = json_array();

	json_array_append_new(all, json_pack("{s:s,s:{s:s,s:s}}", "type", "olm.package", "value",
					     "packageName", pkg, "version", ver));
	json_array_extend(all, props);
	json_decref(props);
	json_object_set_new(b, "properties", all);
	return b;
}

static json_t *gvk_prop(const char *type, size_t i)
{
	char kind[32], group[32];

	snprintf(kind, sizeof(kind), "K%zu", i);
	snprintf(group, sizeof(group), "g%zu.io", i);
	return json_pack("{s:s,s:{s:s,s:s,s:s}}", "type", type, "value", "group", group, "version",
			 "v1", "kind", kind);
}

/* p<i> (i < 1600): 3 bundles in "stable", each providing K<i> and, unless
 * i % 5 == 4 (chain end), requiring K<i+1>: chains 5 deep. Heads of p<i> with
 * i % 7 == 3 also require p<i+1> >= 9.0.0, which does not exist, so the
 * search falls back to the previous bundle. alt<j> (400 packages) also
 * provide K<4j>: conflicting providers, listed before p<4j> (package order);
 * half of them need an API nobody provides. */
static json_t *generate(void)
{
	json_t *blobs = json_array();
	char pkg[32], name[64], next[32];

	for (size_t i = 0; i < N_MAIN; i++) {
		json_t *entries = json_array();

		snprintf(pkg, sizeof(pkg), "p%04zu", i);
		snprintf(next, sizeof(next), "p%04zu", i + 1);
		json_array_append_new(blobs, json_pack("{s:s,s:s,s:s}", "schema", "olm.package",
						       "name", pkg, "defaultChannel", "stable"));
		for (int v = 1; v <= 3; v++) {
			json_t *props = json_array();
			char ver[16];

			snprintf(ver, sizeof(ver), "%d.0.0", v);
			snprintf(name, sizeof(name), "%s.v%d", pkg, v);
			json_array_append_new(props, gvk_prop("olm.gvk", i));
			if (i % 5 != 4)
				json_array_append_new(props, gvk_prop("olm.gvk.required", i + 1));
			if (v == 3 && i % 7 == 3 && i % 5 != 4)
				json_array_append_new(props, json_pack("{s:s,s:{s:s,s:s}}", "type",
								       "olm.package.required",
								       "value", "packageName", next,
								       "versionRange", ">=9.0.0"));
			json_array_append_new(blobs, bundle(pkg, name, ver, props));
			if (v == 1)
				json_array_append_new(entries, json_pack("{s:s}", "name", name));
			else {
				char prev[64];
				snprintf(prev, sizeof(prev), "%s.v%d", pkg, v - 1);
				json_array_append_new(entries, json_pack("{s:s,s:s}", "name", name,
									 "replaces", prev));
			}
		}
		json_array_append_new(blobs, json_pack("{s:s,s:s,s:s,s:o}", "schema", "olm.channel",
						       "package", pkg, "name", "stable", "entries",
						       entries));
	}
	for (size_t j = 0; j < N_ALT; j++) {
		json_t *props = json_array();

		snprintf(pkg, sizeof(pkg), "alt%04zu", j);
		snprintf(name, sizeof(name), "%s.v1", pkg);
		json_array_append_new(blobs, json_pack("{s:s,s:s,s:s}", "schema", "olm.package",
						       "name", pkg, "defaultChannel", "stable"));
		json_array_append_new(props, gvk_prop("olm.gvk", 4 * j));
		if (j % 2 == 0)
			json_array_append_new(props, gvk_prop("olm.gvk.required", 100000 + j));
		json_array_append_new(blobs, bundle(pkg, name, "1.0.0", props));
		json_array_append_new(blobs, json_pack("{s:s,s:s,s:s,s:[{s:s}]}", "schema",
						       "olm.channel", "package", pkg, "name",
						       "stable", "entries", "name", name));
	}
	return blobs;
}

int main(int argc, char **argv)
{
	int rounds = argc > 2 ? (int)strtol(argv[2], NULL, 10) : 5;
	struct stat st;
	stats s = {0};
	fbc_error err;

	if (rounds < 1)
		rounds = 1;
	if (argc > 1 && stat(argv[1], &st) == 0 && S_ISDIR(st.st_mode)) {
		fbc_catalog *cat = NULL;
		fbc_diags d;

		fbc_diags_init(&d, 0);
		if (fbc_catalog_load_dir(&cat, argv[1], NULL, &d, &err) < 0) {
			fprintf(stderr, "load: %s\n", err.message);
			return 1;
		}
		printf("real catalog %s: %zu packages, %d rounds\n", argv[1],
		       cat->n_sorted_packages, rounds);
		bench_catalog(cat, rounds, &s);
		fbc_catalog_free(cat);
		fbc_diags_dispose(&d);
	} else {
		printf("real catalog: not found, skipped\n");
	}
	{
		json_t *blobs = generate();
		fbc_catalog *cat = NULL;
		double t0 = now_ms();

		if (fbc_resolve_catalog_from_blobs(&cat, blobs, "generated", NULL, &err) < 0) {
			fprintf(stderr, "generate: %s\n", err.message);
			return 1;
		}
		printf("generated catalog: %zu packages (built in %.0f ms), %d rounds\n",
		       cat->n_sorted_packages, now_ms() - t0, rounds > 2 ? 2 : rounds);
		bench_catalog(cat, rounds > 2 ? 2 : rounds, &s);
		fbc_catalog_free(cat);
		json_decref(blobs);
	}
	return 0;
}
