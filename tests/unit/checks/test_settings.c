/* Parsers of .fbcd.yaml, config.yaml, ci.yaml and CODEOWNERS, and the look-ups over them. */
#include "pipeline/checks/settings.h"
#include "service/base/tree.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#define S(x) x, strlen(x)

static fbc_arena *arena(void)
{
	fbc_arena *a = NULL;

	assert_int_equal(fbc_arena_create(&a, 0), 0);
	return a;
}

static void fbc_settings_parse_ci__reviewers_fbc_and_errors(void **state)
{
	fbc_arena *a = arena();
	fbc_ci_yaml y = {0};
	fbc_error err;

	assert_int_equal(
		fbc_settings_parse_ci(&y, a, "ci.yaml",
				      S("reviewers: [Alice, bob]\nupdateGraph: semver-mode\n"
					"fbc:\n  enabled: true\n  catalog_mapping:\n"
					"  - template_name: t.yaml\n    catalog_names: [v4.18]\n"
					"    type: olm.template.basic\nmerge: false\n"),
				      &err),
		0);
	assert_int_equal(y.n_reviewers, 2);
	assert_string_equal(y.reviewers[0], "Alice");
	assert_true(y.fbc_enabled);
	assert_false(y.merge);
	assert_string_equal(y.update_graph, "semver-mode");
	assert_int_equal(y.n_mappings, 1);
	assert_string_equal(y.mappings[0].catalogs[0], "v4.18");
	assert_true(fbc_login_in("ALICE", y.reviewers, y.n_reviewers));
	assert_false(fbc_login_in("carol", y.reviewers, y.n_reviewers));
	assert_int_equal(fbc_settings_parse_ci(&y, a, "ci.yaml", S("reviewers: 3\n"), &err),
			 FBC_EINVAL);
	assert_int_equal(fbc_settings_parse_ci(&y, a, "ci.yaml", S("reviewers: [a\n"), &err),
			 FBC_EPARSE);
	assert_non_null(strstr(err.message, "not valid YAML"));
	assert_int_equal(fbc_settings_parse_ci(&y, a, "ci.yaml", S("- a\n"), &err), FBC_EINVAL);
	assert_int_equal(fbc_settings_parse_ci(&y, a, "ci.yaml", S(""), &err), 0);
	fbc_arena_free(a);
}

static void fbc_settings_parse_config__maintainers_registries_waivers(void **state)
{
	fbc_arena *a = arena();
	fbc_settings s = {0};
	fbc_error err;

	assert_int_equal(
		fbc_settings_parse_config(
			&s, a, "config.yaml",
			S("maintainers: [M1, m2]\ntests:\n  - name: check_dangling_bundles\n"
			  "    ignore_operators: [^ack-.*]\n  - name: unknown_test\n"
			  "    ignore_operators: [x]\nallowed_bundle_registries: [quay.io/a/]\n"),
			&err),
		0);
	assert_int_equal(s.n_maintainers, 2);
	assert_int_equal(s.n_allowed_registries, 1);
	assert_true(fbc_settings_waived(&s, "graph", "ack-sns-controller"));
	assert_false(fbc_settings_waived(&s, "graph", "kepler"));
	assert_false(fbc_settings_waived(&s, "catalogs", "ack-sns-controller"));
	assert_int_equal(fbc_settings_parse_config(&s, a, "config.yaml",
						   S("tests: [{name: check_operator_name, "
						     "ignore_operators: ['(']}]\n"),
						   &err),
			 FBC_EINVAL);
	fbc_arena_free(a);
}

static void fbc_settings_parse_fbcd__catalogs_checks_waivers(void **state)
{
	fbc_arena *a = arena();
	fbc_settings s = {0};
	fbc_error err;

	assert_int_equal(
		fbc_settings_parse_fbcd(&s, a, ".fbcd.yaml",
					S("catalogs:\n  - path: catalogs/*\n    name: \"c-{dir}\"\n"
					  "bundles: operators/*/*\nowners: CODEOWNERS\n"
					  "checks: {graph: warn, resolve: off, crds: strict}\n"
					  "waivers: [{check: graph, packages: [\"^legacy-.*\"]}]\n"
					  "csvMetadataOnly: [\"v4.1[7-9]\"]\n"),
					&err),
		0);
	assert_int_equal(s.layout, FBC_LAYOUT_FBCD);
	assert_int_equal(s.n_catalogs, 1);
	assert_string_equal(s.catalogs[0].name, "c-{dir}");
	assert_int_equal(fbc_settings_severity(&s, "graph"), FBC_SEV_WARN);
	assert_int_equal(fbc_settings_severity(&s, "resolve"), FBC_SEV_OFF);
	assert_int_equal(fbc_settings_severity(&s, "crds"), FBC_SEV_STRICT);
	assert_int_equal(fbc_settings_severity(&s, "policy"), FBC_SEV_DEFAULT);
	assert_true(fbc_settings_waived(&s, "graph", "legacy-x"));
	assert_true(fbc_settings_csv_metadata_only(&s, "v4.18"));
	assert_false(fbc_settings_csv_metadata_only(&s, "v4.16"));
	assert_int_equal(
		fbc_settings_parse_fbcd(&s, a, ".fbcd.yaml", S("checks: {nope: fail}\n"), &err),
		FBC_EINVAL);
	assert_int_equal(
		fbc_settings_parse_fbcd(&s, a, ".fbcd.yaml", S("checks: {graph: strict}\n"), &err),
		FBC_EINVAL);
	fbc_arena_free(a);
}

static int collect(const char *dir, const char *name, void *ctx, fbc_error *err)
{
	char *buf = ctx;

	(void)err;
	strcat(buf, dir);
	strcat(buf, "=");
	strcat(buf, name);
	strcat(buf, ";");
	return strcmp(name, "stop") == 0 ? -99 : 0;
}

static void fbc_settings_catalog_dirs__globs_and_names(void **state)
{
	static const char *const paths[] = {"catalogs/b/x.yaml", "catalogs/a/x.yaml",
					    "catalogs/file.yaml", "one/x.yaml", "deep/a/b/x.yaml"};
	static const char *const data[] = {"", "", "", "", ""};
	static const size_t lens[] = {0, 0, 0, 0, 0};
	fbc_settings_catalog cats[] = {{"catalogs/*", "community-{dir}-x"},
				       {"one", NULL},
				       {"missing/*", NULL},
				       {"deep/*/b", NULL},
				       {"one", "stop"}};
	fbc_settings s = {.layout = FBC_LAYOUT_FBCD, .catalogs = cats, .n_catalogs = 4};
	fbc_tree *t = NULL;
	fbc_error err;
	char buf[512] = "";

	(void)state;
	assert_int_equal(fbc_tree_open_mem(&t, paths, data, lens, 5, "mem", &err), 0);
	assert_int_equal(fbc_settings_catalog_dirs(&s, t, collect, buf, &err), 0);
	/* sorted under a glob, files skipped, a missing parent and a middle star match nothing */
	assert_string_equal(buf, "catalogs/a=community-a-x;catalogs/b=community-b-x;one=one;");
	s.n_catalogs = 5;
	buf[0] = 0;
	/* the callback's failure stops the walk and is returned */
	assert_int_equal(fbc_settings_catalog_dirs(&s, t, collect, buf, &err), -99);
	fbc_tree_free(t);
}

static void fbc_settings_csv_metadata_only__v417_and_later(void **state)
{
	fbc_settings s = {0};

	s.csv_metadata_from_v417 = true;
	assert_false(fbc_settings_csv_metadata_only(&s, "v4.16"));
	assert_true(fbc_settings_csv_metadata_only(&s, "v4.17"));
	assert_true(fbc_settings_csv_metadata_only(&s, "v4.22"));
	assert_true(fbc_settings_csv_metadata_only(&s, "v5.0"));
	assert_false(fbc_settings_csv_metadata_only(&s, "v4.17x"));
	assert_false(fbc_settings_csv_metadata_only(&s, "latest"));
}

static void fbc_codeowners_match__github_rules(void **state)
{
	assert_true(fbc_codeowners_match("*", "a/b/c.txt"));
	assert_true(fbc_codeowners_match("*.md", "docs/x.md"));
	assert_false(fbc_codeowners_match("*.md", "docs/x.mdx"));
	assert_true(fbc_codeowners_match("/cats/", "cats/one/x"));
	assert_false(fbc_codeowners_match("/cats/", "other/cats/x"));
	assert_true(fbc_codeowners_match("cats/", "other/cats/x"));
	assert_true(fbc_codeowners_match("docs/*", "docs/a"));
	assert_false(fbc_codeowners_match("docs/*", "docs/a/b"));
	assert_true(fbc_codeowners_match("docs/**", "docs/a/b"));
	assert_true(fbc_codeowners_match("**/logs", "x/y/logs/z"));
	assert_true(fbc_codeowners_match("/a/b", "a/b/c"));
	assert_false(fbc_codeowners_match("/a/b", "x/a/b"));
}

static void fbc_settings_owners_of__last_match_wins(void **state)
{
	fbc_arena *a = arena();
	fbc_settings s = {0};
	fbc_error err;
	const fbc_owner_rule *r;

	assert_int_equal(
		fbc_settings_parse_codeowners(&s, a, "CODEOWNERS",
					      S("# owners\n* @root\n/cats/ @cat @org/team\n"
						"*.md docs@example.com # mail\n/cats/x.md\n"),
					      &err),
		0);
	assert_int_equal(s.n_owner_rules, 4);
	r = fbc_settings_owners_of(&s, "cats/a/catalog.yaml");
	assert_string_equal(r->owners[0], "cat");
	assert_string_equal(r->owners[1], "org/team");
	assert_int_equal(r->line, 3);
	r = fbc_settings_owners_of(&s, "cats/a/readme.md");
	assert_string_equal(r->owners[0], "docs@example.com");
	r = fbc_settings_owners_of(&s, "cats/x.md");
	assert_int_equal(r->n_owners, 0); /* an ownerless last rule removes owners */
	r = fbc_settings_owners_of(&s, "other");
	assert_string_equal(r->owners[0], "root");
	fbc_arena_free(a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(fbc_settings_parse_ci__reviewers_fbc_and_errors),
		cmocka_unit_test(fbc_settings_parse_config__maintainers_registries_waivers),
		cmocka_unit_test(fbc_settings_parse_fbcd__catalogs_checks_waivers),
		cmocka_unit_test(fbc_settings_catalog_dirs__globs_and_names),
		cmocka_unit_test(fbc_settings_csv_metadata_only__v417_and_later),
		cmocka_unit_test(fbc_codeowners_match__github_rules),
		cmocka_unit_test(fbc_settings_owners_of__last_match_wins),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
