/* Resolve every package's default channel of the real community catalog
 * (argv[1]); each resolution must succeed or fail with an explanation, and
 * every olm.gvk.required / olm.package.required of a selected bundle must be
 * honoured by the selected set. Exit 77 (skip) when the data is missing. */
#include "service/resolver/resolver.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const fbc_bundle *find_bundle(const fbc_catalog *cat, const char *pkg, const char *name)
{
	const fbc_package *p = fbc_catalog_package(cat, pkg);
	return p ? fbc_package_bundle(p, name) : NULL;
}

/* Returns the number of violations found in one satisfiable result. */
static int check_result(const fbc_catalog *cat, const fbc_resolve_result *res, const char *req)
{
	int bad = 0;

	for (size_t i = 0; i < res->n_selected; i++) {
		const fbc_bundle *b =
			find_bundle(cat, res->selected[i].package, res->selected[i].bundle);

		for (size_t j = i + 1; j < res->n_selected; j++)
			if (strcmp(res->selected[i].package, res->selected[j].package) == 0) {
				printf("# %s: two bundles of package %s\n", req,
				       res->selected[i].package);
				bad++;
			}
		if (!b) {
			printf("# %s: selected bundle %s is not in the catalog\n", req,
			       res->selected[i].bundle);
			bad++;
			continue;
		}
		for (size_t r = 0; r < b->n_required; r++) {
			const fbc_gvk *g = &b->required[r];
			bool ok = false;
			for (size_t k = 0; k < res->n_selected && !ok; k++) {
				const fbc_bundle *o = find_bundle(cat, res->selected[k].package,
								  res->selected[k].bundle);
				for (size_t q = 0; o && q < o->n_provided; q++)
					if (strcmp(o->provided[q].group, g->group) == 0 &&
					    strcmp(o->provided[q].version, g->version) == 0 &&
					    strcmp(o->provided[q].kind, g->kind) == 0)
						ok = true;
			}
			if (!ok) {
				printf("# %s: %s requires %s/%s %s, not provided\n", req, b->name,
				       g->group, g->version, g->kind);
				bad++;
			}
		}
		for (size_t r = 0; r < b->n_package_reqs; r++) {
			const fbc_package_req *pr = &b->package_reqs[r];
			fbc_semver_range *range = NULL;
			bool ok = false;

			if (fbc_semver_range_parse_blang(&range, pr->version_range, NULL) < 0) {
				printf("# %s: %s has a bad range but resolution succeeded\n", req,
				       b->name);
				bad++;
				continue;
			}
			for (size_t k = 0; k < res->n_selected && !ok; k++) {
				fbc_semver v;
				const char *ver = res->selected[k].version;
				if (strcmp(res->selected[k].package, pr->package_name) == 0 &&
				    fbc_semver_parse_tolerant(&v, ver, strlen(ver), NULL) == 0 &&
				    fbc_semver_range_contains(range, &v))
					ok = true;
			}
			fbc_semver_range_free(range);
			if (!ok) {
				printf("# %s: %s requires package %s %s, not selected\n", req,
				       b->name, pr->package_name, pr->version_range);
				bad++;
			}
		}
	}
	return bad;
}

int main(int argc, char **argv)
{
	fbc_catalog *cat = NULL;
	fbc_diags diags;
	fbc_error err;
	struct stat st;
	size_t n_sat = 0, n_unsat = 0, n_fail = 0;

	if (argc != 2 || stat(argv[1], &st) != 0 || !S_ISDIR(st.st_mode)) {
		printf("1..0 # SKIP real catalog not found\n");
		return 77;
	}
	fbc_error_init(&err);
	fbc_diags_init(&diags, 0);
	if (fbc_catalog_load_dir(&cat, argv[1], NULL, &diags, &err) < 0) {
		printf("Bail out! load: %s\n", err.message);
		return 1;
	}
	printf("1..%zu\n", cat->n_sorted_packages);
	for (size_t p = 0; p < cat->n_sorted_packages; p++) {
		const fbc_package *pkg = cat->sorted_packages[p];
		fbc_resolve_request *req = NULL;
		fbc_resolve_result *res = NULL;
		fbc_resolve_req r;
		int bad = 0;

		memset(&r, 0, sizeof(r));
		r.package = pkg->name;
		r.channel = pkg->default_channel;
		if (fbc_resolve_request_create(&req, FBC_RESOLVE_CLASSIC, &err) < 0 ||
		    fbc_resolve_request_add_catalog(req, "community", 0, NULL, &err) < 0 ||
		    fbc_resolve_request_add(req, &r, &err) < 0) {
			printf("Bail out! %s\n", err.message);
			return 1;
		}
		req->catalogs[0].catalog = cat;
		if (fbc_resolve(&res, req, NULL, &err) < 0) {
			printf("not ok %zu - %s: %s\n", p + 1, pkg->name, err.message);
			n_fail++;
		} else if (res->satisfiable) {
			bad = check_result(cat, res, pkg->name);
			bool has_req = false;
			for (size_t i = 0; i < res->n_selected; i++)
				if (strcmp(res->selected[i].package, pkg->name) == 0)
					has_req = true;
			if (!has_req) {
				printf("# %s: the requested package is not selected\n", pkg->name);
				bad++;
			}
			printf("%s %zu - %s: %zu selected, %zu SAT calls\n", bad ? "not ok" : "ok",
			       p + 1, pkg->name, res->n_selected, res->sat_calls);
			n_sat++;
			n_fail += bad != 0;
		} else {
			bool ok = res->explanation && *res->explanation && res->n_constraints > 0;
			printf("%s %zu - %s: not satisfiable (%s): %s\n", ok ? "ok" : "not ok",
			       p + 1, pkg->name, res->kind,
			       res->explanation ? res->explanation : "");
			n_unsat++;
			n_fail += !ok;
		}
		fbc_resolve_result_free(res);
		fbc_resolve_request_free(req);
	}
	printf("# %zu satisfiable, %zu not, %zu failures\n", n_sat, n_unsat, n_fail);
	fbc_catalog_free(cat);
	fbc_diags_dispose(&diags);
	return n_fail ? 1 : 0;
}
