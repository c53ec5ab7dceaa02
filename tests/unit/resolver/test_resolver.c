/* Unit tests for service/resolver: classic constraint kinds, preferences,
 * installed bundles, explanations, v1 and v1-deps. Catalogs are inline FBC. */
#include "tests/unit/resolver/rtest.h"

#include "service/resolver/resolver.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

/* ------------------------------------------------------------ builders */

static json_t *blobs;

static void reset(void)
{
	json_decref(blobs);
	blobs = json_array();
}

static void __attribute__((format(printf, 1, 2))) add_blob(const char *fmt, ...)
{
	char buf[8192];
	va_list ap;
	json_error_t je;
	json_t *b;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	b = json_loads(buf, 0, &je);
	if (!b)
		fail_msg("bad blob %s: %s", buf, je.text);
	json_array_append_new(blobs, b);
}

static void pkg(const char *name, const char *def)
{
	add_blob("{\"schema\":\"olm.package\",\"name\":\"%s\",\"defaultChannel\":\"%s\"}", name,
		 def);
}

/* extra: additional properties, a JSON fragment starting with ',' or "". */
static void bundle(const char *pkgname, const char *name, const char *version, const char *extra)
{
	add_blob("{\"schema\":\"olm.bundle\",\"name\":\"%s\",\"package\":\"%s\","
		 "\"image\":\"quay.io/test/%s:v%s\",\"properties\":[{\"type\":\"olm.package\","
		 "\"value\":{\"packageName\":\"%s\",\"version\":\"%s\"}}%s]}",
		 name, pkgname, pkgname, version, pkgname, version, extra);
}

/* entries: JSON array text of channel entries. */
static void channel(const char *pkgname, const char *name, const char *entries)
{
	add_blob("{\"schema\":\"olm.channel\",\"name\":\"%s\",\"package\":\"%s\",\"entries\":%s}",
		 name, pkgname, entries);
}

#define GVK(g, v, k)                                                             \
	",{\"type\":\"olm.gvk\",\"value\":{\"group\":\"" g "\",\"version\":\"" v \
	"\",\"kind\":\"" k "\"}}"
#define GVK_REQ(g, v, k)                                                                  \
	",{\"type\":\"olm.gvk.required\",\"value\":{\"group\":\"" g "\",\"version\":\"" v \
	"\",\"kind\":\"" k "\"}}"
#define PKG_REQ(p, r)                                                         \
	",{\"type\":\"olm.package.required\",\"value\":{\"packageName\":\"" p \
	"\",\"versionRange\":\"" r "\"}}"
#define CONSTRAINT(json) ",{\"type\":\"olm.constraint\",\"value\":" json "}"

/* Standard fixture: app 1.0.0 <- 2.0.0 <- 3.0.0 (stable); app 2+ needs the
 * Lib API; lib 1.0.0 <- 2.0.0 provides it. */
static void std_catalog(const char *app3_extra)
{
	reset();
	pkg("app", "stable");
	bundle("app", "app.v1.0.0", "1.0.0", GVK("app.io", "v1", "App"));
	bundle("app", "app.v2.0.0", "2.0.0",
	       GVK("app.io", "v1", "App") GVK_REQ("lib.io", "v1", "Lib"));
	bundle("app", "app.v3.0.0", "3.0.0", app3_extra);
	channel("app", "stable",
		"[{\"name\":\"app.v1.0.0\"},{\"name\":\"app.v2.0.0\",\"replaces\":\"app.v1.0.0\"},"
		"{\"name\":\"app.v3.0.0\",\"replaces\":\"app.v2.0.0\"}]");
	pkg("lib", "stable");
	bundle("lib", "lib.v1.0.0", "1.0.0", GVK("lib.io", "v1", "Lib"));
	bundle("lib", "lib.v2.0.0", "2.0.0", GVK("lib.io", "v1", "Lib"));
	channel("lib", "stable",
		"[{\"name\":\"lib.v1.0.0\"},{\"name\":\"lib.v2.0.0\",\"replaces\":\"lib.v1.0.0\"}"
		"]");
}

/* Resolve against the current blobs as catalog "cat"; requests/installed are
 * JSON array texts. */
static json_t *run(const char *semantics, const char *requests, const char *installed)
{
	json_error_t je;
	json_t *rq = json_loads(requests, 0, &je), *in = json_loads(installed, 0, &je), *input,
	       *out;

	assert_non_null(rq);
	assert_non_null(in);
	input = json_pack("{s:s,s:[{s:s,s:i,s:O}],s:o,s:o}", "semantics", semantics, "catalogs",
			  "name", "cat", "priority", 0, "fbc", blobs, "installed", in, "requests",
			  rq);
	out = rtest_resolve(input, NULL);
	json_decref(input);
	assert_non_null(out);
	return out;
}

static bool sat(const json_t *r)
{
	return json_is_true(json_object_get(r, "satisfiable"));
}

static const char *str(const json_t *r, const char *k)
{
	const char *s = json_string_value(json_object_get(r, k));
	return s ? s : "";
}

static void dump_if_not(bool ok, const json_t *r)
{
	if (!ok) {
		char *s = json_dumps(r, JSON_INDENT(2));
		print_message("%s\n", s);
		free(s);
	}
}

#define ASSERT_SELECTED(r, names)                                                \
	do {                                                                     \
		dump_if_not(sat(r) && strcmp(rtest_selected(r), names) == 0, r); \
		assert_true(sat(r));                                             \
		assert_string_equal(rtest_selected(r), names);                   \
	} while (0)

#define ASSERT_UNSAT(r, kind)                              \
	do {                                               \
		dump_if_not(!sat(r), r);                   \
		assert_false(sat(r));                      \
		assert_string_equal(str(r, "kind"), kind); \
	} while (0)

#define ASSERT_EXPLAINS(r, needle)                                             \
	do {                                                                   \
		dump_if_not(strstr(str(r, "explanation"), needle) != NULL, r); \
		assert_non_null(strstr(str(r, "explanation"), needle));        \
	} while (0)

/* ----------------------------------------------------- classic: basics */

static void fbc_resolve__gvk_required_pulls_provider_head(void **state)
{
	json_t *r, *steps;

	(void)state;
	std_catalog(GVK("app.io", "v1", "App") GVK_REQ("lib.io", "v1", "Lib"));
	r = run("classic", "[{\"package\":\"app\"}]", "[]");
	ASSERT_SELECTED(r, "app.v3.0.0 lib.v2.0.0");
	/* dependencies first */
	steps = json_object_get(r, "steps");
	assert_int_equal(json_array_size(steps), 2);
	assert_string_equal(str(json_array_get(steps, 0), "bundle"), "lib.v2.0.0");
	assert_string_equal(str(json_array_get(steps, 1), "bundle"), "app.v3.0.0");
	assert_non_null(strstr(str(json_array_get(steps, 0), "reason"), "app.v3.0.0"));
	assert_non_null(strstr(str(json_array_get(steps, 1), "reason"), "request"));
	json_decref(r);
}

static void fbc_resolve__package_required_range_respected(void **state)
{
	json_t *r;

	(void)state;
	std_catalog(GVK("app.io", "v1", "App") PKG_REQ("lib", "<2.0.0"));
	r = run("classic", "[{\"package\":\"app\"}]", "[]");
	ASSERT_SELECTED(r, "app.v3.0.0 lib.v1.0.0");
	json_decref(r);
}

static void fbc_resolve__falls_back_when_head_unsatisfiable(void **state)
{
	json_t *r;

	(void)state;
	/* app 3 needs lib >= 5 which does not exist: app 2 is chosen instead. */
	std_catalog(GVK("app.io", "v1", "App") PKG_REQ("lib", ">=5.0.0"));
	r = run("classic", "[{\"package\":\"app\"}]", "[]");
	ASSERT_SELECTED(r, "app.v2.0.0 lib.v2.0.0");
	json_decref(r);
}

static void fbc_resolve__unsat_names_conflicting_packages(void **state)
{
	json_t *r;

	(void)state;
	std_catalog(GVK("app.io", "v1", "App") PKG_REQ("lib", ">=5.0.0"));
	/* Only app 3 in range: its requirement cannot be met. */
	r = run("classic", "[{\"package\":\"app\",\"versionRange\":\">=3.0.0\"}]", "[]");
	ASSERT_UNSAT(r, "conflict");
	ASSERT_EXPLAINS(r, "request for package app");
	ASSERT_EXPLAINS(r, "with package: lib and with version in range: >=5.0.0");
	ASSERT_EXPLAINS(r, "cat/stable/app.v3.0.0");
	assert_true(json_array_size(json_object_get(r, "constraints")) >= 2);
	json_decref(r);
}

static void fbc_resolve__unsat_pinned_installed_blocks_dependency(void **state)
{
	json_t *r;

	(void)state;
	std_catalog(GVK("app.io", "v1", "App") PKG_REQ("lib", ">=2.0.0"));
	r = run("classic", "[{\"package\":\"app\",\"versionRange\":\">=3.0.0\"}]",
		"[{\"package\":\"lib\",\"bundle\":\"lib.v1.0.0\",\"version\":\"1.0.0\"}]");
	ASSERT_UNSAT(r, "conflict");
	ASSERT_EXPLAINS(r, "not referenced by a request");
	ASSERT_EXPLAINS(r, "originate from package lib");
	json_decref(r);
}

static void fbc_resolve__unknown_package_is_error(void **state)
{
	json_t *r;

	(void)state;
	std_catalog("");
	r = run("classic", "[{\"package\":\"nope\"}]", "[]");
	ASSERT_UNSAT(r, "error");
	ASSERT_EXPLAINS(r, "no operators found in package nope");
	json_decref(r);
}

static void fbc_resolve__bad_blang_range_is_error(void **state)
{
	json_t *r;

	(void)state;
	std_catalog(GVK("app.io", "v1", "App") PKG_REQ("lib", "~1.2"));
	r = run("classic", "[{\"package\":\"app\"}]", "[]");
	ASSERT_UNSAT(r, "error");
	ASSERT_EXPLAINS(r, "~1.2");
	json_decref(r);
}

static void fbc_resolve__ambiguous_channel_is_error(void **state)
{
	json_t *r;

	(void)state;
	reset();
	pkg("two", "stable");
	bundle("two", "two.a", "1.0.0", "");
	bundle("two", "two.b", "1.1.0", "");
	channel("two", "stable", "[{\"name\":\"two.a\"},{\"name\":\"two.b\"}]");
	r = run("classic", "[{\"package\":\"two\"}]", "[]");
	ASSERT_UNSAT(r, "error");
	ASSERT_EXPLAINS(r, "2 replacement chains");
	json_decref(r);
}

/* ------------------------------------------------------ classic: order */

static void fbc_resolve__dependency_prefers_default_channel(void **state)
{
	json_t *r;

	(void)state;
	reset();
	pkg("app", "stable");
	bundle("app", "app.v1", "1.0.0", GVK_REQ("lib.io", "v1", "Lib"));
	channel("app", "stable", "[{\"name\":\"app.v1\"}]");
	pkg("lib", "stable");
	bundle("lib", "lib.v1", "1.0.0", GVK("lib.io", "v1", "Lib"));
	bundle("lib", "lib.v9", "9.0.0", GVK("lib.io", "v1", "Lib"));
	channel("lib", "alpha", "[{\"name\":\"lib.v9\"}]");
	channel("lib", "stable", "[{\"name\":\"lib.v1\"}]");
	r = run("classic", "[{\"package\":\"app\"}]", "[]");
	ASSERT_SELECTED(r, "app.v1 lib.v1");
	json_decref(r);
}

static void fbc_resolve__dependency_prefers_chain_head_not_semver(void **state)
{
	json_t *r;

	(void)state;
	reset();
	pkg("app", "stable");
	bundle("app", "app.v1", "1.0.0", GVK_REQ("lib.io", "v1", "Lib"));
	channel("app", "stable", "[{\"name\":\"app.v1\"}]");
	pkg("lib", "stable");
	bundle("lib", "lib.old-high", "5.0.0", GVK("lib.io", "v1", "Lib"));
	bundle("lib", "lib.new-low", "1.0.0", GVK("lib.io", "v1", "Lib"));
	channel("lib", "stable",
		"[{\"name\":\"lib.old-high\"},{\"name\":\"lib.new-low\",\"replaces\":"
		"\"lib.old-high\"}]");
	r = run("classic", "[{\"package\":\"app\"}]", "[]");
	ASSERT_SELECTED(r, "app.v1 lib.new-low");
	json_decref(r);
}

static void fbc_resolve__dependency_prefers_package_name_order(void **state)
{
	json_t *r;

	(void)state;
	reset();
	pkg("app", "stable");
	bundle("app", "app.v1", "1.0.0", GVK_REQ("lib.io", "v1", "Lib"));
	channel("app", "stable", "[{\"name\":\"app.v1\"}]");
	pkg("zlib", "stable");
	bundle("zlib", "zlib.v1", "1.0.0", GVK("lib.io", "v1", "Lib"));
	channel("zlib", "stable", "[{\"name\":\"zlib.v1\"}]");
	pkg("blib", "stable");
	bundle("blib", "blib.v1", "1.0.0", GVK("lib.io", "v1", "Lib"));
	channel("blib", "stable", "[{\"name\":\"blib.v1\"}]");
	r = run("classic", "[{\"package\":\"app\"}]", "[]");
	ASSERT_SELECTED(r, "app.v1 blib.v1");
	json_decref(r);
}

/* Two catalogs: "own" holds app and lib 1, "hi" (priority 10) holds lib 2. */
static json_t *two_catalogs(const char *app_catalog_name, int own_prio)
{
	json_t *own, *hi, *input, *out;

	reset();
	pkg("app", "stable");
	bundle("app", "app.v1", "1.0.0", GVK_REQ("lib.io", "v1", "Lib"));
	channel("app", "stable", "[{\"name\":\"app.v1\"}]");
	pkg("lib", "stable");
	bundle("lib", "lib.v1", "1.0.0", GVK("lib.io", "v1", "Lib"));
	channel("lib", "stable", "[{\"name\":\"lib.v1\"}]");
	own = json_incref(blobs);
	reset();
	pkg("lib", "stable");
	bundle("lib", "lib.v2", "2.0.0", GVK("lib.io", "v1", "Lib"));
	channel("lib", "stable", "[{\"name\":\"lib.v2\"}]");
	hi = json_incref(blobs);
	input = json_pack("{s:s,s:[{s:s,s:i,s:o},{s:s,s:i,s:o}],s:[],s:[{s:s}]}", "semantics",
			  "classic", "catalogs", "name", app_catalog_name, "priority", own_prio,
			  "fbc", own, "name", "hi", "priority", 10, "fbc", hi, "installed",
			  "requests", "package", "app");
	out = rtest_resolve(input, NULL);
	json_decref(input);
	assert_non_null(out);
	return out;
}

static void fbc_resolve__own_catalog_beats_priority(void **state)
{
	json_t *r;

	(void)state;
	r = two_catalogs("own", 0);
	ASSERT_SELECTED(r, "app.v1 lib.v1");
	json_decref(r);
}

static void fbc_resolve__higher_priority_catalog_wins(void **state)
{
	json_t *r, *input, *a, *b, *c;

	(void)state;
	/* app alone in "base"; lib 1 in "lo" (prio 1), lib 2 in "hi" (prio 5). */
	reset();
	pkg("app", "stable");
	bundle("app", "app.v1", "1.0.0", GVK_REQ("lib.io", "v1", "Lib"));
	channel("app", "stable", "[{\"name\":\"app.v1\"}]");
	a = json_incref(blobs);
	reset();
	pkg("lib", "stable");
	bundle("lib", "lib.v1", "1.0.0", GVK("lib.io", "v1", "Lib"));
	channel("lib", "stable", "[{\"name\":\"lib.v1\"}]");
	b = json_incref(blobs);
	reset();
	pkg("lib", "stable");
	bundle("lib", "lib.v2", "2.0.0", GVK("lib.io", "v1", "Lib"));
	channel("lib", "stable", "[{\"name\":\"lib.v2\"}]");
	c = json_incref(blobs);
	input = json_pack("{s:s,s:[{s:s,s:o},{s:s,s:i,s:o},{s:s,s:i,s:o}],s:[{s:s}]}", "semantics",
			  "classic", "catalogs", "name", "base", "fbc", a, "name", "lo", "priority",
			  1, "fbc", b, "name", "hi", "priority", 5, "fbc", c, "requests", "package",
			  "app");
	r = rtest_resolve(input, NULL);
	json_decref(input);
	assert_non_null(r);
	ASSERT_SELECTED(r, "app.v1 lib.v2");
	json_decref(r);
}

static void fbc_resolve__installed_candidate_first(void **state)
{
	json_t *r;

	(void)state;
	std_catalog(GVK("app.io", "v1", "App") GVK_REQ("lib.io", "v1", "Lib"));
	r = run("classic", "[{\"package\":\"app\"}]",
		"[{\"package\":\"lib\",\"bundle\":\"lib.v1.0.0\",\"version\":\"1.0.0\"}]");
	ASSERT_SELECTED(r, "app.v3.0.0 lib.v1.0.0");
	assert_int_equal(json_array_size(json_object_get(r, "steps")), 1);
	assert_true(json_is_true(
		json_object_get(json_array_get(json_object_get(r, "selected"), 0), "installed")));
	json_decref(r);
}

/* -------------------------------------------------- classic: upgrades */

static void fbc_resolve__installed_moves_one_hop(void **state)
{
	json_t *r, *step;

	(void)state;
	std_catalog(GVK("app.io", "v1", "App"));
	r = run("classic", "[{\"package\":\"app\"}]",
		"[{\"package\":\"app\",\"bundle\":\"app.v1.0.0\",\"version\":\"1.0.0\"}]");
	ASSERT_SELECTED(r, "app.v2.0.0 lib.v2.0.0");
	step = json_array_get(json_object_get(r, "steps"), 1);
	assert_string_equal(str(step, "bundle"), "app.v2.0.0");
	assert_string_equal(str(step, "replaces"), "app.v1.0.0");
	json_decref(r);
}

static void fbc_resolve__installed_stays_when_no_successor_fits(void **state)
{
	json_t *r;

	(void)state;
	std_catalog(GVK("app.io", "v1", "App"));
	/* v2 needs Lib but lib is pinned by an unreferenced install of a
	 * different provider... simplest: remove the provider via range. */
	r = run("classic", "[{\"package\":\"app\",\"versionRange\":\">=3.0.0\"}]",
		"[{\"package\":\"app\",\"bundle\":\"app.v1.0.0\",\"version\":\"1.0.0\"}]");
	/* v3 is not a direct successor of v1, so the install stays. */
	ASSERT_SELECTED(r, "app.v1.0.0");
	assert_int_equal(json_array_size(json_object_get(r, "steps")), 0);
	json_decref(r);
}

static void fbc_resolve__skiprange_successor(void **state)
{
	json_t *r;

	(void)state;
	reset();
	pkg("op", "stable");
	bundle("op", "op.v1", "1.0.0", "");
	bundle("op", "op.v2", "2.0.0", "");
	bundle("op", "op.v3", "3.0.0", "");
	channel("op", "stable",
		"[{\"name\":\"op.v1\"},{\"name\":\"op.v2\",\"replaces\":\"op.v1\"},"
		"{\"name\":\"op.v3\",\"replaces\":\"op.v2\",\"skipRange\":\">=1.0.0 <3.0.0\"}]");
	r = run("classic", "[{\"package\":\"op\"}]",
		"[{\"package\":\"op\",\"bundle\":\"op.v1\",\"version\":\"1.0.0\"}]");
	ASSERT_SELECTED(r, "op.v3");
	json_decref(r);
}

static void fbc_resolve__classic_skips_strand_documented_case(void **state)
{
	json_t *r;

	(void)state;
	/* spec §3.3: v3 skips v2, v2 has skipRange covering 1.0.0; classic: no edge. */
	reset();
	pkg("example", "stable");
	bundle("example", "example.v1.0.0", "1.0.0", "");
	bundle("example", "example.v2.0.0", "2.0.0", "");
	bundle("example", "example.v3.0.0", "3.0.0", "");
	channel("example", "stable",
		"[{\"name\":\"example.v1.0.0\"},{\"name\":\"example.v2.0.0\",\"skipRange\":"
		"\">=1.0.0 <2.0.0\"},{\"name\":\"example.v3.0.0\",\"skips\":[\"example.v2.0.0\"],"
		"\"replaces\":\"example.v1.0.0\"}]");
	r = run("classic", "[{\"package\":\"example\"}]",
		"[{\"package\":\"example\",\"bundle\":\"example.v1.0.0\",\"version\":\"1.0.0\"}]");
	/* v3 replaces v1 here, so classic upgrades to v3 (v2 is off the chain). */
	ASSERT_SELECTED(r, "example.v3.0.0");
	json_decref(r);
	r = run("v1", "[{\"package\":\"example\"}]",
		"[{\"package\":\"example\",\"bundle\":\"example.v1.0.0\",\"version\":\"1.0.0\"}]");
	/* v1: both v2 (skipRange) and v3 (replaces) are successors: highest wins. */
	ASSERT_SELECTED(r, "example.v3.0.0");
	json_decref(r);
}

static void fbc_resolve__starting_csv(void **state)
{
	json_t *r;

	(void)state;
	std_catalog(GVK("app.io", "v1", "App"));
	r = run("classic", "[{\"package\":\"app\",\"startingCSV\":\"app.v1.0.0\"}]", "[]");
	ASSERT_SELECTED(r, "app.v1.0.0");
	json_decref(r);
	r = run("classic", "[{\"package\":\"app\",\"startingCSV\":\"app.v9\"}]", "[]");
	ASSERT_UNSAT(r, "error");
	ASSERT_EXPLAINS(r, "no operators found with name app.v9");
	json_decref(r);
}

static void fbc_resolve__legacy_deprecated_prohibited(void **state)
{
	json_t *r;

	(void)state;
	std_catalog(GVK("app.io", "v1", "App") ",{\"type\":\"olm.deprecated\",\"value\":{}}");
	r = run("classic", "[{\"package\":\"app\"}]", "[]");
	ASSERT_SELECTED(r, "app.v2.0.0 lib.v2.0.0");
	json_decref(r);
}

static void fbc_resolve__one_provider_per_gvk(void **state)
{
	json_t *r;

	(void)state;
	/* Two requests whose bundles provide the same API cannot both install. */
	reset();
	pkg("a", "stable");
	bundle("a", "a.v1", "1.0.0", GVK("x.io", "v1", "X"));
	channel("a", "stable", "[{\"name\":\"a.v1\"}]");
	pkg("b", "stable");
	bundle("b", "b.v1", "1.0.0", GVK("x.io", "v1", "X"));
	channel("b", "stable", "[{\"name\":\"b.v1\"}]");
	r = run("classic", "[{\"package\":\"a\"},{\"package\":\"b\"}]", "[]");
	ASSERT_UNSAT(r, "conflict");
	ASSERT_EXPLAINS(r, "provide X (x.io/v1)");
	ASSERT_EXPLAINS(r, "request for package a");
	ASSERT_EXPLAINS(r, "request for package b");
	json_decref(r);
}

/* ---------------------------------------------------- olm.constraint */

static void constraint_fixture(const char *constraint)
{
	char extra[4096];

	reset();
	snprintf(extra, sizeof(extra), CONSTRAINT("%s"), constraint);
	pkg("app", "stable");
	bundle("app", "app.v1", "1.0.0", extra);
	channel("app", "stable", "[{\"name\":\"app.v1\"}]");
	pkg("lib", "stable");
	bundle("lib", "lib.v1", "1.0.0", GVK("lib.io", "v1", "Lib"));
	bundle("lib", "lib.v2", "2.0.0", GVK("lib.io", "v1", "Lib") GVK("lib.io", "v1", "Extra"));
	bundle("lib", "lib.v3", "3.0.0",
	       GVK("lib.io", "v1",
		   "Lib") ",{\"type\":\"olm.label\",\"value\":{\"label\":\"hot\"}}");
	channel("lib", "stable",
		"[{\"name\":\"lib.v1\"},{\"name\":\"lib.v2\",\"replaces\":\"lib.v1\"},"
		"{\"name\":\"lib.v3\",\"replaces\":\"lib.v2\"}]");
}

static void constraint_case(const char *constraint, const char *expect)
{
	json_t *r;

	constraint_fixture(constraint);
	r = run("classic", "[{\"package\":\"app\"}]", "[]");
	if (expect[0] == '!') {
		ASSERT_UNSAT(r, "error");
		ASSERT_EXPLAINS(r, expect + 1);
	} else if (expect[0] == '?') {
		ASSERT_UNSAT(r, "conflict");
		ASSERT_EXPLAINS(r, expect + 1);
	} else {
		ASSERT_SELECTED(r, expect);
	}
	json_decref(r);
}

static void fbc_resolve__constraint_gvk(void **state)
{
	(void)state;
	constraint_case("{\"gvk\":{\"group\":\"lib.io\",\"version\":\"v1\",\"kind\":\"Extra\"}}",
			"app.v1 lib.v2");
}

static void fbc_resolve__constraint_package(void **state)
{
	(void)state;
	constraint_case("{\"package\":{\"packageName\":\"lib\",\"versionRange\":\"<2.0.0\"}}",
			"app.v1 lib.v1");
}

static void fbc_resolve__constraint_all_not(void **state)
{
	(void)state;
	/* lib in [1.0.0, 3.0.0) = lib.v2, the head-most of those */
	constraint_case("{\"all\":{\"constraints\":[{\"package\":{\"packageName\":\"lib\","
			"\"versionRange\":\">=1.0.0\"}},{\"not\":{\"constraints\":[{\"package\":{"
			"\"packageName\":\"lib\",\"versionRange\":\">=3.0.0\"}}]}}]}}",
			"app.v1 lib.v2");
}

static void fbc_resolve__constraint_any(void **state)
{
	(void)state;
	constraint_case("{\"any\":{\"constraints\":[{\"package\":{\"packageName\":\"lib\","
			"\"versionRange\":\"<1.5.0\"}},{\"gvk\":{\"group\":\"lib.io\",\"version\":"
			"\"v1\",\"kind\":\"Extra\"}}]}}",
			"app.v1 lib.v2");
}

static void fbc_resolve__constraint_cel(void **state)
{
	(void)state;
	constraint_case(
		"{\"cel\":{\"rule\":\"properties.exists(p, p.type == 'olm.package' && "
		"p.value.packageName == 'lib' && semver_compare(p.value.version, '1.5.0') < "
		"0)\"},\"failureMessage\":\"needs an old lib\"}",
		"app.v1 lib.v1");
	/* Quirk (spec 2.3): predicates test every bundle, the depender included;
	 * app 1.0.0 itself has a version below 1.5.0. */
	constraint_case("{\"cel\":{\"rule\":\"properties.exists(p, p.type == 'olm.package' && "
			"semver_compare(p.value.version, '1.5.0') < 0)\"}}",
			"app.v1");
}

static void fbc_resolve__constraint_cel_failure_message_in_explanation(void **state)
{
	(void)state;
	constraint_case(
		"{\"cel\":{\"rule\":\"properties.exists(p, p.type == 'olm.package' && "
		"p.value.packageName == 'nothing')\"},\"failureMessage\":\"needs nothing\"}",
		"?needs nothing");
}

static void fbc_resolve__constraint_cel_compile_error(void **state)
{
	(void)state;
	constraint_case("{\"cel\":{\"rule\":\"properties.exists(p, \"}}", "!does not compile");
}

static void fbc_resolve__constraint_unknown_field(void **state)
{
	(void)state;
	constraint_case("{\"gvk\":{\"group\":\"lib.io\",\"version\":\"v1\",\"kind\":\"Lib\","
			"\"x\":1}}",
			"!json: unknown field \"x\"");
	constraint_case("{\"bogus\":{}}", "!json: unknown field \"bogus\"");
}

static void fbc_resolve__constraint_empty(void **state)
{
	(void)state;
	constraint_case("{\"failureMessage\":\"m\"}", "!constraint is empty");
}

static void fbc_resolve__constraint_size_limit(void **state)
{
	size_t n = 140000;
	char *pad = malloc(n + 1);
	json_t *r, *b;

	(void)state;
	assert_non_null(pad);
	/* failureMessage padding pushes the value over 131072 bytes. */
	memset(pad, 'a', n);
	pad[n] = '\0';
	reset();
	pkg("app", "stable");
	b = json_pack("{s:s,s:s,s:s,s:s,s:[{s:s,s:{s:s,s:s}},{s:s,s:{s:{s:s,s:s,s:s},s:s}}]}",
		      "schema", "olm.bundle", "name", "app.v1", "package", "app", "image",
		      "quay.io/x/app:1", "properties", "type", "olm.package", "value",
		      "packageName", "app", "version", "1.0.0", "type", "olm.constraint", "value",
		      "gvk", "group", "lib.io", "version", "v1", "kind", "Lib", "failureMessage",
		      pad);
	assert_non_null(b);
	json_array_append_new(blobs, b);
	channel("app", "stable", "[{\"name\":\"app.v1\"}]");
	r = run("classic", "[{\"package\":\"app\"}]", "[]");
	ASSERT_UNSAT(r, "error");
	ASSERT_EXPLAINS(r, "greater than max constraint size 131072");
	json_decref(r);
	free(pad);
}

static void fbc_resolve__label_required(void **state)
{
	json_t *r;

	(void)state;
	reset();
	pkg("app", "stable");
	bundle("app", "app.v1", "1.0.0",
	       ",{\"type\":\"olm.label.required\",\"value\":{\"label\":\"hot\"}}");
	channel("app", "stable", "[{\"name\":\"app.v1\"}]");
	pkg("lib", "stable");
	bundle("lib", "lib.v1", "1.0.0", ",{\"type\":\"olm.label\",\"value\":{\"label\":\"hot\"}}");
	bundle("lib", "lib.v2", "2.0.0", "");
	channel("lib", "stable",
		"[{\"name\":\"lib.v1\"},{\"name\":\"lib.v2\",\"replaces\":\"lib.v1\"}]");
	r = run("classic", "[{\"package\":\"app\"}]", "[]");
	ASSERT_SELECTED(r, "app.v1 lib.v1");
	json_decref(r);
}

/* ------------------------------------------------------------------- v1 */

static void v1_fixture(void)
{
	reset();
	pkg("op", "stable");
	bundle("op", "op.v1.0.0", "1.0.0", "");
	bundle("op", "op.v1.1.0", "1.1.0", "");
	bundle("op", "op.v1.2.0-rc.1", "1.2.0-rc.1", "");
	bundle("op", "op.v2.0.0", "2.0.0", "");
	channel("op", "stable",
		"[{\"name\":\"op.v1.0.0\"},{\"name\":\"op.v1.1.0\",\"replaces\":\"op.v1.0.0\"},"
		"{\"name\":\"op.v2.0.0\",\"replaces\":\"op.v1.1.0\"}]");
	channel("op", "candidate",
		"[{\"name\":\"op.v1.1.0\"},{\"name\":\"op.v1.2.0-rc.1\",\"replaces\":\"op.v1.1.0\"}"
		"]");
}

static void fbc_resolve__v1_highest_version(void **state)
{
	json_t *r;

	(void)state;
	v1_fixture();
	r = run("v1", "[{\"package\":\"op\"}]", "[]");
	ASSERT_SELECTED(r, "op.v2.0.0");
	json_decref(r);
	r = run("v1", "[{\"package\":\"op\",\"versionRange\":\"~1\"}]", "[]");
	/* Masterminds excludes the prerelease */
	ASSERT_SELECTED(r, "op.v1.1.0");
	json_decref(r);
	r = run("v1", "[{\"package\":\"op\",\"versionRange\":\">=1.1.0-0 <2.0.0\"}]", "[]");
	ASSERT_SELECTED(r, "op.v1.2.0-rc.1");
	json_decref(r);
	/* without a range, prereleases compete normally */
	r = run("v1", "[{\"package\":\"op\",\"channel\":\"candidate\"}]", "[]");
	ASSERT_SELECTED(r, "op.v1.2.0-rc.1");
	json_decref(r);
	r = run("v1", "[{\"package\":\"op\",\"channel\":\"candidate\",\"versionRange\":\"<2\"}]",
		"[]");
	ASSERT_SELECTED(r, "op.v1.1.0");
	json_decref(r);
}

static void fbc_resolve__v1_successors_and_self_certified(void **state)
{
	json_t *r;

	(void)state;
	v1_fixture();
	r = run("v1", "[{\"package\":\"op\"}]",
		"[{\"package\":\"op\",\"bundle\":\"op.v1.0.0\",\"version\":\"1.0.0\"}]");
	ASSERT_SELECTED(r, "op.v1.1.0");
	assert_string_equal(str(json_array_get(json_object_get(r, "steps"), 0), "replaces"),
			    "op.v1.0.0");
	json_decref(r);
	r = run("v1", "[{\"package\":\"op\",\"upgradeConstraintPolicy\":\"SelfCertified\"}]",
		"[{\"package\":\"op\",\"bundle\":\"op.v1.0.0\",\"version\":\"1.0.0\"}]");
	ASSERT_SELECTED(r, "op.v2.0.0");
	json_decref(r);
	r = run("v1", "[{\"package\":\"op\",\"versionRange\":\">=2.0.0\"}]",
		"[{\"package\":\"op\",\"bundle\":\"op.v1.0.0\",\"version\":\"1.0.0\"}]");
	ASSERT_UNSAT(r, "conflict");
	ASSERT_EXPLAINS(r, "error upgrading from currently installed version \"1.0.0\"");
	ASSERT_EXPLAINS(r, "matching version \">=2.0.0\"");
	json_decref(r);
}

static void fbc_resolve__v1_bad_range_and_dependency_error(void **state)
{
	json_t *r;

	(void)state;
	v1_fixture();
	r = run("v1", "[{\"package\":\"op\",\"versionRange\":\">1.0.0 !1.2.1\"}]", "[]");
	ASSERT_UNSAT(r, "error");
	ASSERT_EXPLAINS(r, "invalid version range");
	json_decref(r);
	std_catalog(GVK("app.io", "v1", "App") GVK_REQ("lib.io", "v1", "Lib"));
	r = run("v1", "[{\"package\":\"app\"}]", "[]");
	ASSERT_UNSAT(r, "error");
	ASSERT_EXPLAINS(r, "dependency declared via property \"olm.gvk.required\"");
	json_decref(r);
	r = run("v1-deps", "[{\"package\":\"app\"}]", "[]");
	ASSERT_SELECTED(r, "app.v3.0.0 lib.v2.0.0");
	json_decref(r);
}

static void fbc_resolve__v1_priority_tie_is_error(void **state)
{
	json_t *a, *b, *input, *r;

	(void)state;
	v1_fixture();
	a = json_incref(blobs);
	b = json_incref(blobs);
	input = json_pack("{s:s,s:[{s:s,s:o},{s:s,s:o}],s:[{s:s}]}", "semantics", "v1", "catalogs",
			  "name", "a", "fbc", a, "name", "b", "fbc", b, "requests", "package",
			  "op");
	r = rtest_resolve(input, NULL);
	json_decref(input);
	assert_non_null(r);
	ASSERT_UNSAT(r, "error");
	ASSERT_EXPLAINS(r, "multiple catalogs with the same priority [a b]");
	json_decref(r);
}

static void fbc_resolve__deterministic(void **state)
{
	json_t *r1, *r2;

	(void)state;
	std_catalog(GVK("app.io", "v1", "App") GVK_REQ("lib.io", "v1", "Lib"));
	r1 = run("classic", "[{\"package\":\"app\"},{\"package\":\"lib\"}]", "[]");
	r2 = run("classic", "[{\"package\":\"app\"},{\"package\":\"lib\"}]", "[]");
	assert_true(json_equal(r1, r2));
	json_decref(r1);
	json_decref(r2);
}

/* ------------------------------------------- installed bundles, more */

static void fbc_resolve__upgrade_held_back_by_installed_dependent(void **state)
{
	json_t *r;

	(void)state;
	/* consumer (installed, unreferenced) needs lib < 2: lib 1 cannot move to 2. */
	std_catalog(GVK("app.io", "v1", "App"));
	pkg("consumer", "stable");
	bundle("consumer", "consumer.v1", "1.0.0", PKG_REQ("lib", "<2.0.0"));
	channel("consumer", "stable", "[{\"name\":\"consumer.v1\"}]");
	r = run("classic", "[{\"package\":\"lib\"}]",
		"[{\"package\":\"lib\",\"bundle\":\"lib.v1.0.0\",\"version\":\"1.0.0\"},"
		"{\"package\":\"consumer\",\"bundle\":\"consumer.v1\",\"version\":\"1.0.0\"}]");
	ASSERT_SELECTED(r, "consumer.v1 lib.v1.0.0");
	assert_int_equal(json_array_size(json_object_get(r, "steps")), 0);
	json_decref(r);
	/* without the dependent, lib moves to 2 */
	r = run("classic", "[{\"package\":\"lib\"}]",
		"[{\"package\":\"lib\",\"bundle\":\"lib.v1.0.0\",\"version\":\"1.0.0\"}]");
	ASSERT_SELECTED(r, "lib.v2.0.0");
	json_decref(r);
}

static void fbc_resolve__installed_requirements_pull_dependencies(void **state)
{
	json_t *r, *step;

	(void)state;
	std_catalog(GVK("app.io", "v1", "App"));
	/* installed app 2 (unreferenced) requires Lib, which is not installed */
	r = run("classic", "[]",
		"[{\"package\":\"app\",\"bundle\":\"app.v2.0.0\",\"version\":\"2.0.0\"}]");
	ASSERT_SELECTED(r, "app.v2.0.0 lib.v2.0.0");
	step = json_array_get(json_object_get(r, "steps"), 0);
	assert_string_equal(str(step, "bundle"), "lib.v2.0.0");
	assert_non_null(strstr(str(step, "reason"), "@existing/app.v2.0.0"));
	json_decref(r);
}

static void fbc_resolve__two_installed_of_one_package_is_error(void **state)
{
	json_t *r;

	(void)state;
	std_catalog("");
	r = run("classic", "[]",
		"[{\"package\":\"lib\",\"bundle\":\"lib.v1.0.0\",\"version\":\"1.0.0\"},"
		"{\"package\":\"lib\",\"bundle\":\"lib.v2.0.0\",\"version\":\"2.0.0\"}]");
	ASSERT_UNSAT(r, "error");
	ASSERT_EXPLAINS(r, "at most one bundle per package");
	json_decref(r);
}

/* ------------------------------------------------------------ v1, more */

static void fbc_resolve__v1_deprecated_bundle_sorted_last(void **state)
{
	json_t *r;

	(void)state;
	v1_fixture();
	add_blob("{\"schema\":\"olm.deprecations\",\"package\":\"op\",\"entries\":[{"
		 "\"reference\":{\"schema\":\"olm.bundle\",\"name\":\"op.v2.0.0\"},"
		 "\"message\":\"do not use\"}]}");
	r = run("v1", "[{\"package\":\"op\",\"channel\":\"stable\"}]", "[]");
	ASSERT_SELECTED(r, "op.v1.1.0");
	json_decref(r);
	/* classic ignores olm.deprecations */
	r = run("classic", "[{\"package\":\"op\",\"channel\":\"stable\"}]", "[]");
	ASSERT_SELECTED(r, "op.v2.0.0");
	json_decref(r);
}

static void fbc_resolve__v1_higher_priority_wins(void **state)
{
	json_t *a, *b, *input, *r;

	(void)state;
	v1_fixture();
	a = json_incref(blobs);
	reset();
	pkg("op", "stable");
	bundle("op", "op.v0.1.0", "0.1.0", "");
	channel("op", "stable", "[{\"name\":\"op.v0.1.0\"}]");
	b = json_incref(blobs);
	input = json_pack("{s:s,s:[{s:s,s:i,s:o},{s:s,s:i,s:o}],s:[{s:s}]}", "semantics", "v1",
			  "catalogs", "name", "a", "priority", 0, "fbc", a, "name", "b", "priority",
			  1, "fbc", b, "requests", "package", "op");
	r = rtest_resolve(input, NULL);
	json_decref(input);
	assert_non_null(r);
	/* priority beats version */
	ASSERT_SELECTED(r, "op.v0.1.0");
	json_decref(r);
}

static void fbc_resolve__v1_deps_installed_and_unsat(void **state)
{
	json_t *r;

	(void)state;
	std_catalog(GVK("app.io", "v1", "App") PKG_REQ("lib", ">=2.0.0"));
	/* v1 picks app 3 (highest successor-or-self under SelfCertified); deps: lib 2 */
	r = run("v1-deps", "[{\"package\":\"app\",\"upgradeConstraintPolicy\":\"SelfCertified\"}]",
		"[{\"package\":\"app\",\"bundle\":\"app.v1.0.0\",\"version\":\"1.0.0\"}]");
	ASSERT_SELECTED(r, "app.v3.0.0 lib.v2.0.0");
	json_decref(r);
	/* lib pinned at 1 by an unreferenced install: v1-deps does not fall back */
	r = run("v1-deps", "[{\"package\":\"app\"}]",
		"[{\"package\":\"lib\",\"bundle\":\"lib.v1.0.0\",\"version\":\"1.0.0\"}]");
	ASSERT_UNSAT(r, "conflict");
	ASSERT_EXPLAINS(r, "app.v3.0.0");
	ASSERT_EXPLAINS(r, "originate from package lib");
	json_decref(r);
}

/* ----------------------------------------------------------- request */

static void fbc_resolve_request_parse__rejects_bad_input(void **state)
{
	static const char *const bad[] = {
		"[]",
		"{\"catalogs\":[]}",
		"{\"catalogs\":[{\"name\":\"c\",\"fbc\":[]}],\"requests\":[{}]}",
		"{\"catalogs\":[{\"name\":\"c\",\"fbc\":[]}],\"requests\":[],\"x\":1}",
		"{\"semantics\":\"v2\",\"catalogs\":[{\"name\":\"c\",\"fbc\":[]}],"
		"\"requests\":[]}",
		"{\"catalogs\":[{\"name\":\"c\"}],\"requests\":[]}",
		"{\"catalogs\":[{\"name\":\"c\",\"fbc\":[],\"path\":\"/x\"}],"
		"\"requests\":[]}",
		"{\"catalogs\":[{\"name\":\"c\",\"fbc\":[]},{\"name\":\"c\",\"fbc\":[]}],"
		"\"requests\":[]}",
		"{\"catalogs\":[{\"name\":\"c\",\"fbc\":[]}],\"requests\":[{\"package\":"
		"\"p\",\"upgradeConstraintPolicy\":\"Never\"}]}",
		"{\"catalogs\":[{\"name\":\"c\",\"fbc\":[]}],\"installed\":[{\"package\":"
		"\"p\",\"bundle\":\"b\"}],\"requests\":[]}",
	};
	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		json_t *j = json_loads(bad[i], 0, NULL);
		fbc_resolve_request *req = NULL;
		fbc_error err;

		assert_non_null(j);
		fbc_error_init(&err);
		assert_true(fbc_resolve_request_parse(&req, j, NULL, &err) < 0);
		assert_null(req);
		assert_true(err.message[0] != '\0');
		json_decref(j);
	}
}

static void fbc_resolve_request_parse__limits(void **state)
{
	fbc_resolve_limits lim;
	fbc_resolve_request *req = NULL;
	fbc_error err;
	json_t *j = json_loads("{\"catalogs\":[{\"name\":\"c\",\"fbc\":[]}],\"requests\":["
			       "{\"package\":\"a\"},{\"package\":\"b\"},{\"package\":\"c\"}]}",
			       0, NULL);

	(void)state;
	fbc_resolve_limits_default(&lim);
	lim.max_requests = 2;
	assert_int_equal(fbc_resolve_request_parse(&req, j, &lim, &err), FBC_ELIMIT);
	lim.max_requests = 3;
	assert_int_equal(fbc_resolve_request_parse(&req, j, &lim, &err), 0);
	assert_int_equal(req->n_requests, 3);
	fbc_resolve_request_free(req);
	json_decref(j);
}

static void fbc_resolve__bundle_requiring_its_own_api(void **state)
{
	json_t *r;

	(void)state;
	/* app provides and requires App; another provider exists in package other.
	 * The requirement is met by app itself (no second provider allowed). */
	reset();
	pkg("app", "stable");
	bundle("app", "app.v1", "1.0.0", GVK("app.io", "v1", "App") GVK_REQ("app.io", "v1", "App"));
	channel("app", "stable", "[{\"name\":\"app.v1\"}]");
	pkg("aaa", "stable");
	bundle("aaa", "aaa.v1", "1.0.0", GVK("app.io", "v1", "App"));
	channel("aaa", "stable", "[{\"name\":\"aaa.v1\"}]");
	r = run("classic", "[{\"package\":\"app\"}]", "[]");
	ASSERT_SELECTED(r, "app.v1");
	json_decref(r);
}

static void fbc_resolve__nested_compounds_not_confused(void **state)
{
#define CG(k) "{\"gvk\":{\"group\":\"x.io\",\"version\":\"v1\",\"kind\":\"" k "\"}}"
	json_t *r;

	(void)state;
	reset();
	/* d1: all[A, any[B, C]]; d2: any[all[A, B], C] (same words, other meaning) */
	pkg("d1", "stable");
	bundle("d1", "d1.v1", "1.0.0",
	       CONSTRAINT("{\"all\":{\"constraints\":[" CG("A") ",{\"any\":{\"constraints\":[" CG(
		       "B") "," CG("C") "]}}]}}"));
	channel("d1", "stable", "[{\"name\":\"d1.v1\"}]");
	pkg("d2", "stable");
	bundle("d2", "d2.v1", "1.0.0",
	       CONSTRAINT("{\"any\":{\"constraints\":[{\"all\":{\"constraints\":[" CG("A") "," CG(
		       "B") "]}}," CG("C") "]}}"));
	channel("d2", "stable", "[{\"name\":\"d2.v1\"}]");
	pkg("lib1", "stable");
	bundle("lib1", "lib1.v1", "1.0.0", GVK("x.io", "v1", "A"));
	channel("lib1", "stable", "[{\"name\":\"lib1.v1\"}]");
	pkg("lib2", "stable");
	bundle("lib2", "lib2.v1", "1.0.0", GVK("x.io", "v1", "C"));
	channel("lib2", "stable", "[{\"name\":\"lib2.v1\"}]");
	pkg("lib3", "stable");
	bundle("lib3", "lib3.v1", "1.0.0", GVK("x.io", "v1", "A") GVK("x.io", "v1", "B"));
	channel("lib3", "stable", "[{\"name\":\"lib3.v1\"}]");
	r = run("classic", "[{\"package\":\"d2\"},{\"package\":\"d1\"}]", "[]");
	ASSERT_SELECTED(r, "d1.v1 d2.v1 lib2.v1 lib3.v1");
	json_decref(r);
#undef CG
}

static void fbc_resolve__explains_deprecated_and_missing_api(void **state)
{
	json_t *r;

	(void)state;
	reset();
	pkg("old", "stable");
	bundle("old", "old.v1", "1.0.0", ",{\"type\":\"olm.deprecated\",\"value\":{}}");
	channel("old", "stable", "[{\"name\":\"old.v1\"}]");
	pkg("needy", "stable");
	bundle("needy", "needy.v1", "1.0.0", GVK_REQ("none.io", "v1", "Nothing"));
	channel("needy", "stable", "[{\"name\":\"needy.v1\"}]");
	r = run("classic", "[{\"package\":\"old\"}]", "[]");
	ASSERT_UNSAT(r, "conflict");
	ASSERT_EXPLAINS(r, "bundle cat/stable/old.v1 is deprecated");
	json_decref(r);
	r = run("classic", "[{\"package\":\"needy\"}]", "[]");
	ASSERT_UNSAT(r, "conflict");
	ASSERT_EXPLAINS(r, "kind: Nothing, but no bundle in any catalog provides it");
	json_decref(r);
}

static int teardown(void **state)
{
	(void)state;
	json_decref(blobs);
	blobs = NULL;
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(fbc_resolve__gvk_required_pulls_provider_head),
		cmocka_unit_test(fbc_resolve__package_required_range_respected),
		cmocka_unit_test(fbc_resolve__falls_back_when_head_unsatisfiable),
		cmocka_unit_test(fbc_resolve__unsat_names_conflicting_packages),
		cmocka_unit_test(fbc_resolve__unsat_pinned_installed_blocks_dependency),
		cmocka_unit_test(fbc_resolve__unknown_package_is_error),
		cmocka_unit_test(fbc_resolve__bad_blang_range_is_error),
		cmocka_unit_test(fbc_resolve__ambiguous_channel_is_error),
		cmocka_unit_test(fbc_resolve__dependency_prefers_default_channel),
		cmocka_unit_test(fbc_resolve__dependency_prefers_chain_head_not_semver),
		cmocka_unit_test(fbc_resolve__dependency_prefers_package_name_order),
		cmocka_unit_test(fbc_resolve__own_catalog_beats_priority),
		cmocka_unit_test(fbc_resolve__higher_priority_catalog_wins),
		cmocka_unit_test(fbc_resolve__installed_candidate_first),
		cmocka_unit_test(fbc_resolve__installed_moves_one_hop),
		cmocka_unit_test(fbc_resolve__installed_stays_when_no_successor_fits),
		cmocka_unit_test(fbc_resolve__skiprange_successor),
		cmocka_unit_test(fbc_resolve__classic_skips_strand_documented_case),
		cmocka_unit_test(fbc_resolve__starting_csv),
		cmocka_unit_test(fbc_resolve__legacy_deprecated_prohibited),
		cmocka_unit_test(fbc_resolve__one_provider_per_gvk),
		cmocka_unit_test(fbc_resolve__constraint_gvk),
		cmocka_unit_test(fbc_resolve__constraint_package),
		cmocka_unit_test(fbc_resolve__constraint_all_not),
		cmocka_unit_test(fbc_resolve__constraint_any),
		cmocka_unit_test(fbc_resolve__constraint_cel),
		cmocka_unit_test(fbc_resolve__constraint_cel_failure_message_in_explanation),
		cmocka_unit_test(fbc_resolve__constraint_cel_compile_error),
		cmocka_unit_test(fbc_resolve__constraint_unknown_field),
		cmocka_unit_test(fbc_resolve__constraint_empty),
		cmocka_unit_test(fbc_resolve__constraint_size_limit),
		cmocka_unit_test(fbc_resolve__label_required),
		cmocka_unit_test(fbc_resolve__v1_highest_version),
		cmocka_unit_test(fbc_resolve__v1_successors_and_self_certified),
		cmocka_unit_test(fbc_resolve__v1_bad_range_and_dependency_error),
		cmocka_unit_test(fbc_resolve__v1_priority_tie_is_error),
		cmocka_unit_test(fbc_resolve__deterministic),
		cmocka_unit_test(fbc_resolve__explains_deprecated_and_missing_api),
		cmocka_unit_test(fbc_resolve__nested_compounds_not_confused),
		cmocka_unit_test(fbc_resolve__bundle_requiring_its_own_api),
		cmocka_unit_test(fbc_resolve__upgrade_held_back_by_installed_dependent),
		cmocka_unit_test(fbc_resolve__installed_requirements_pull_dependencies),
		cmocka_unit_test(fbc_resolve__two_installed_of_one_package_is_error),
		cmocka_unit_test(fbc_resolve__v1_deprecated_bundle_sorted_last),
		cmocka_unit_test(fbc_resolve__v1_higher_priority_wins),
		cmocka_unit_test(fbc_resolve__v1_deps_installed_and_unsat),
		cmocka_unit_test(fbc_resolve_request_parse__rejects_bad_input),
		cmocka_unit_test(fbc_resolve_request_parse__limits),
	};
	return cmocka_run_group_tests(tests, NULL, teardown);
}
