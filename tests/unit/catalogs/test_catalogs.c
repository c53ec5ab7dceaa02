/*
 * pipeline/catalogs on operator repositories held in memory: template-managed
 * packages copied, add-mode bundles replayed in history order into the
 * catalogs their label admits, findings for bad bundles, labels and ci.yaml.
 */
#include "pipeline/catalogs/catalogs.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#define MAXF 64

typedef struct repo {
	const char *paths[MAXF];
	const char *datas[MAXF];
	size_t lens[MAXF];
	char *owned[MAXF];
	size_t n;
} repo;

static void put(repo *r, const char *path, const char *data)
{
	assert_true(r->n < MAXF);
	r->owned[r->n] = strdup(path);
	r->paths[r->n] = r->owned[r->n];
	r->datas[r->n] = data;
	r->lens[r->n] = strlen(data);
	r->n++;
}

static char bufs[MAXF][1024];
static size_t nbufs;

static const char *fmt(const char *f, ...) __attribute__((format(printf, 1, 2)));
static const char *fmt(const char *f, ...)
{
	va_list ap;
	char *b = bufs[nbufs++ % MAXF];

	va_start(ap, f);
	vsnprintf(b, sizeof(bufs[0]), f, ap);
	va_end(ap);
	return b;
}

/* A bundle operators/<pkg>/<ver>/ */
static void bundle(repo *r, const char *pkg, const char *ver, const char *replaces,
		   const char *label)
{
	put(r, fmt("operators/%s/%s/manifests/csv.yaml", pkg, ver),
	    fmt("apiVersion: operators.coreos.com/v1alpha1\n"
		"kind: ClusterServiceVersion\n"
		"metadata:\n  name: %s.v%s\n"
		"spec:\n  version: %s\n%s%s%s"
		"  install:\n    strategy: deployment\n",
		pkg, ver, ver, replaces ? "  replaces: " : "", replaces ? replaces : "",
		replaces ? "\n" : ""));
	put(r, fmt("operators/%s/%s/metadata/annotations.yaml", pkg, ver),
	    fmt("annotations:\n"
		"  operators.operatorframework.io.bundle.package.v1: %s\n"
		"  operators.operatorframework.io.bundle.channels.v1: stable\n"
		"  operators.operatorframework.io.bundle.channel.default.v1: stable\n"
		"  operators.operatorframework.io.bundle.mediatype.v1: registry+v1\n%s%s%s",
		pkg, label ? "  com.redhat.openshift.versions: \"" : "", label ? label : "",
		label ? "\"\n" : ""));
}

static void base(repo *r)
{
	memset(r, 0, sizeof(*r));
	put(r, "config.yaml", "allowed_bundle_registries:\n  - quay.io/prod/\n");
	put(r, "operators/tmpl/ci.yaml", "fbc:\n  enabled: true\n");
	put(r, "catalogs/v4.12/tmpl/catalog.yaml", "committed v4.12\n");
	put(r, "catalogs/v4.13/tmpl/catalog.yaml", "committed v4.13\n");
	put(r, "operators/foo/ci.yaml", "updateGraph: replaces-mode\n");
	bundle(r, "foo", "1.0.0", NULL, "v4.13");
	bundle(r, "foo", "1.1.0", "foo.v1.0.0", "v4.13");
}

static void repo_dispose(repo *r)
{
	size_t i;

	for (i = 0; i < r->n; i++)
		free(r->owned[i]);
}

static fbc_repo_catalogs *build(repo *r, const fbc_repo_history_step *steps, size_t n)
{
	fbc_tree *t = NULL;
	fbc_repo_history *h = NULL;
	fbc_repo_catalogs *rc = NULL;
	fbc_error err;

	assert_int_equal(fbc_tree_open_mem(&t, r->paths, r->datas, r->lens, r->n, "repo", &err), 0);
	if (steps)
		assert_int_equal(fbc_repo_history_create(&h, steps, n, &err), 0);
	else
		assert_int_equal(fbc_repo_history_from_tree(&h, t, &err), 0);
	if (fbc_repo_catalogs_build(&rc, t, h, NULL, &err) != 0)
		fail_msg("build: %s: %s", err.where, err.message);
	fbc_repo_history_free(h);
	fbc_tree_free(t);
	return rc;
}

static bool has_finding(const fbc_repo_catalogs *rc, const char *path, const char *rule)
{
	size_t i;

	for (i = 0; i < fbc_repo_catalogs_findings_count(rc); i++) {
		const fbc_repo_finding *f = fbc_repo_catalogs_finding(rc, i);

		if (strcmp(f->path, path) == 0 && strcmp(f->rule, rule) == 0)
			return true;
	}
	for (i = 0; i < fbc_repo_catalogs_findings_count(rc); i++) {
		const fbc_repo_finding *f = fbc_repo_catalogs_finding(rc, i);

		print_message("finding: %s %s %s %s\n", f->path, f->catalog, f->rule, f->message);
	}
	return false;
}

/* the content of a file of catalog i, or NULL */
static char *file_of(const fbc_repo_catalogs *rc, size_t i, const char *path)
{
	fbc_tree *t = NULL;
	fbc_tree_blob b = {0};
	fbc_error err;
	char *s = NULL;

	assert_int_equal(fbc_repo_catalogs_tree(&t, rc, i, &err), 0);
	if (fbc_tree_read(t, &b, path, 1 << 20, &err) == 0) {
		s = strndup(b.data ? b.data : "", b.len);
		fbc_tree_blob_release(t, &b);
	}
	fbc_tree_free(t);
	return s;
}

static void build__labels_and_templates(void **state)
{
	repo r;
	fbc_repo_catalogs *rc;
	char *s;
	fbc_addmode_mode m;

	(void)state;
	base(&r);
	rc = build(&r, NULL, 0);
	assert_int_equal(fbc_repo_catalogs_findings_count(rc), 0);
	assert_int_equal(fbc_repo_catalogs_count(rc), 2);
	assert_string_equal(fbc_repo_catalogs_name(rc, 0), "v4.12");
	assert_int_equal(fbc_repo_catalogs_addmode_count(rc), 1);
	assert_string_equal(fbc_repo_catalogs_addmode_package(rc, 0, &m), "foo");
	assert_int_equal(m, FBC_ADDMODE_REPLACES);
	/* committed files of the template-managed package, verbatim */
	s = file_of(rc, 0, "tmpl/catalog.yaml");
	assert_string_equal(s, "committed v4.12\n");
	free(s);
	/* label v4.13: not in v4.12, in v4.13 with its image from config.yaml */
	assert_null(file_of(rc, 0, "foo/catalog.json"));
	s = file_of(rc, 1, "foo/catalog.json");
	assert_non_null(s);
	assert_non_null(strstr(s, "\"image\": \"quay.io/prod/foo:1.1.0\""));
	assert_non_null(strstr(s, "\"replaces\": \"foo.v1.0.0\""));
	free(s);
	assert_string_equal(
		fbc_addmode_channel_head(fbc_repo_catalogs_index(rc, 1), "foo", "stable"),
		"foo.v1.1.0");
	fbc_repo_catalogs_free(rc);
	repo_dispose(&r);
}

static void build__history_order_matters(void **state)
{
	repo r;
	fbc_repo_catalogs *rc;
	const char *late[] = {"operators/foo/1.0.0"}, *early[] = {"operators/foo/1.1.0"};
	fbc_repo_history_step steps[2] = {{"c1", early, 1}, {"c2", late, 1}};

	(void)state;
	base(&r);
	/* 1.1.0 merged first: it replaces a bundle not yet there (A20) */
	rc = build(&r, steps, 2);
	assert_true(has_finding(rc, "operators/foo/1.1.0", "A20"));
	assert_string_equal(
		fbc_addmode_channel_head(fbc_repo_catalogs_index(rc, 1), "foo", "stable"),
		"foo.v1.0.0");
	fbc_repo_catalogs_free(rc);
	repo_dispose(&r);
}

static void build__bad_label_ci_and_bundle(void **state)
{
	repo r;
	fbc_repo_catalogs *rc;

	(void)state;
	base(&r);
	bundle(&r, "foo", "1.2.0", "foo.v1.1.0", "v4.x");
	put(&r, "operators/bar/ci.yaml", "updateGraph: semver-skippatch-mode\n");
	bundle(&r, "bar", "1.0.0", NULL, NULL);
	put(&r, "operators/baz/ci.yaml", "updateGraph: semver-mode\n");
	put(&r, "operators/baz/1.0.0/manifests/x.yaml", "kind: ConfigMap\n");
	put(&r, "operators/baz/1.0.0/metadata/annotations.yaml",
	    "annotations:\n  operators.operatorframework.io.bundle.package.v1: baz\n");
	rc = build(&r, NULL, 0);
	assert_true(has_finding(rc, "operators/foo/1.2.0", "P-4"));
	assert_true(has_finding(rc, "operators/bar/ci.yaml", "A35"));
	assert_true(has_finding(rc, "operators/baz/1.0.0", "RENDER"));
	/* foo is intact, bar and baz are nowhere */
	assert_string_equal(
		fbc_addmode_channel_head(fbc_repo_catalogs_index(rc, 1), "foo", "stable"),
		"foo.v1.1.0");
	assert_false(fbc_addmode_has_package(fbc_repo_catalogs_index(rc, 1), "bar"));
	assert_false(fbc_addmode_has_package(fbc_repo_catalogs_index(rc, 1), "baz"));
	fbc_repo_catalogs_free(rc);
	repo_dispose(&r);
}

/* Only the named packages: each comes out as in the full build, the others and
 * the committed files of template-managed packages are left out. */
static void build__only_named_packages(void **state)
{
	repo r;
	fbc_tree *t = NULL;
	fbc_repo_history *h = NULL;
	fbc_repo_catalogs *full, *only = NULL;
	const char *pkgs[] = {"bar", "tmpl"};
	fbc_repo_opts o = {.packages = pkgs, .n_packages = 2};
	fbc_addmode_mode m;
	fbc_error err;
	char *a, *b;

	(void)state;
	base(&r);
	put(&r, "operators/bar/ci.yaml", "updateGraph: semver-mode\n");
	bundle(&r, "bar", "1.0.0", NULL, "v4.12");
	bundle(&r, "bar", "1.0.1", NULL, "v4.12");
	bundle(&r, "foo", "1.2.0", "foo.v1.1.0", "v4.x"); /* a finding of foo's only */
	full = build(&r, NULL, 0);
	assert_true(has_finding(full, "operators/foo/1.2.0", "P-4"));
	assert_int_equal(fbc_tree_open_mem(&t, r.paths, r.datas, r.lens, r.n, "repo", &err), 0);
	assert_int_equal(fbc_repo_history_from_tree(&h, t, &err), 0);
	if (fbc_repo_catalogs_build(&only, t, h, &o, &err) != 0)
		fail_msg("build: %s: %s", err.where, err.message);
	assert_int_equal(fbc_repo_catalogs_findings_count(only), 0);
	assert_int_equal(fbc_repo_catalogs_count(only), 2);
	assert_int_equal(fbc_repo_catalogs_addmode_count(only), 1);
	assert_string_equal(fbc_repo_catalogs_addmode_package(only, 0, &m), "bar");
	assert_int_equal(m, FBC_ADDMODE_SEMVER);
	assert_null(file_of(only, 0, "tmpl/catalog.yaml"));
	assert_null(file_of(only, 0, "foo/catalog.json"));
	assert_null(file_of(only, 1, "foo/catalog.json"));
	a = file_of(full, 0, "bar/catalog.json");
	b = file_of(only, 0, "bar/catalog.json");
	assert_non_null(a);
	assert_non_null(b);
	assert_string_equal(a, b);
	assert_non_null(strstr(b, "\"name\": \"bar.v1.0.1\""));
	free(a);
	free(b);
	fbc_repo_catalogs_free(full);
	fbc_repo_catalogs_free(only);
	fbc_repo_history_free(h);
	fbc_tree_free(t);
	repo_dispose(&r);
}

/* One replay, two states: the snapshot after the first step is the build of that step alone;
 * catalogs known to be the same are those of one replay that received the same bundles. */
static void build__snapshot_and_same(void **state)
{
	repo r;
	fbc_tree *t = NULL;
	fbc_repo_history *h = NULL, *h1 = NULL;
	fbc_repo_catalogs *out = NULL, *snap = NULL, *alone = NULL;
	const char *first[] = {"operators/foo/1.0.0"}, *second[] = {"operators/foo/1.1.0"};
	fbc_repo_history_step steps[2] = {{"c1", first, 1}, {"c2", second, 1}};
	fbc_error err;
	char *a, *b;

	(void)state;
	base(&r);
	assert_int_equal(fbc_tree_open_mem(&t, r.paths, r.datas, r.lens, r.n, "repo", &err), 0);
	assert_int_equal(fbc_repo_history_create(&h, steps, 2, &err), 0);
	assert_int_equal(fbc_repo_history_create(&h1, steps, 1, &err), 0);
	assert_int_equal(fbc_repo_catalogs_build_with(&out, &snap, 1, t, h, NULL, &err), 0);
	assert_int_equal(fbc_repo_catalogs_build(&alone, t, h1, NULL, &err), 0);
	assert_string_equal(
		fbc_addmode_channel_head(fbc_repo_catalogs_index(out, 1), "foo", "stable"),
		"foo.v1.1.0");
	assert_string_equal(
		fbc_addmode_channel_head(fbc_repo_catalogs_index(snap, 1), "foo", "stable"),
		"foo.v1.0.0");
	a = file_of(snap, 1, "foo/catalog.json");
	b = file_of(alone, 1, "foo/catalog.json");
	assert_non_null(a);
	assert_non_null(b);
	assert_string_equal(a, b);
	free(a);
	free(b);
	/* v4.12 admits neither bundle (label v4.13): the same before and after; v4.13 is not */
	assert_true(fbc_repo_catalogs_related(out, snap));
	assert_true(fbc_repo_catalogs_same(snap, 0, out, 0));
	assert_false(fbc_repo_catalogs_same(snap, 1, out, 1));
	assert_false(fbc_repo_catalogs_same(out, 0, out, 1));
	/* another replay is never known to be the same, even with the same bundles */
	assert_false(fbc_repo_catalogs_related(snap, alone));
	assert_false(fbc_repo_catalogs_same(snap, 1, alone, 1));
	fbc_repo_catalogs_free(out);
	fbc_repo_catalogs_free(snap);
	fbc_repo_catalogs_free(alone);
	fbc_repo_history_free(h);
	fbc_repo_history_free(h1);
	fbc_tree_free(t);
	repo_dispose(&r);
}

static void build__not_an_operator_repository(void **state)
{
	repo r;
	fbc_tree *t = NULL;
	fbc_repo_catalogs *rc = NULL;
	fbc_error err;

	(void)state;
	memset(&r, 0, sizeof(r));
	put(&r, "catalog/foo/catalog.yaml", "x\n");
	assert_int_equal(fbc_tree_open_mem(&t, r.paths, r.datas, r.lens, r.n, "repo", &err), 0);
	assert_int_equal(fbc_repo_catalogs_build(&rc, t, NULL, NULL, &err), FBC_ENOTFOUND);
	assert_null(rc);
	fbc_tree_free(t);
	repo_dispose(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(build__labels_and_templates),
		cmocka_unit_test(build__history_order_matters),
		cmocka_unit_test(build__bad_label_ci_and_bundle),
		cmocka_unit_test(build__only_named_packages),
		cmocka_unit_test(build__snapshot_and_same),
		cmocka_unit_test(build__not_an_operator_repository),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
