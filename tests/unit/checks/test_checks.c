/* The check engine on repositories built by fixture.sh and changed here with the git CLI. */
#include "pipeline/checks/checks.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char dir[64];
static const char *fixture;
static int branch_no;
static char branch[32];

static void sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void sh(const char *fmt, ...)
{
	char cmd[8192], full[8600];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	snprintf(full, sizeof(full),
		 "cd '%s/r' && export GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@x GIT_COMMITTER_NAME=t "
		 "GIT_COMMITTER_EMAIL=t@x GIT_CONFIG_NOSYSTEM=1 HOME='%s' && (%s) >/dev/null",
		 dir, dir, cmd);
	assert_int_equal(system(full), 0);
}

static int setup(void **state)
{
	char cmd[512];

	snprintf(dir, sizeof(dir), "/tmp/fbcd-checks-XXXXXX");
	assert_non_null(mkdtemp(dir));
	snprintf(cmd, sizeof(cmd), "sh '%s' '%s'", fixture, dir);
	assert_int_equal(system(cmd), 0);
	return 0;
}

static int teardown(void **state)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

/* A new branch from `from` with the change made by script, committed. */
static void change_from(const char *from, const char *script)
{
	snprintf(branch, sizeof(branch), "t%d", ++branch_no);
	sh("git checkout -qf -B %s %s && (%s) && git add -A && git commit -qm change", branch, from,
	   script);
}

static void change(const char *script)
{
	change_from("main", script);
}

static fbc_checks_result *run_as(const char *base, const char *author, const char *approved)
{
	char p[128];
	fbc_git *g = NULL;
	fbc_error err;
	fbc_checks_result *r = NULL;
	const char *appr[1] = {approved};
	fbc_checks_options o = {0};

	o.author = author;
	o.approved_by = approved ? appr : NULL;
	o.n_approved_by = approved ? 1 : 0;
	snprintf(p, sizeof(p), "%s/r", dir);
	assert_int_equal(fbc_git_open(&g, p, &err), 0);
	if (fbc_checks_run(&r, g, base, branch, &o, &err) != 0)
		fail_msg("run: %s: %s", err.where, err.message);
	fbc_git_free(g);
	return r;
}

static fbc_checks_result *run(void)
{
	return run_as("main", "alice", NULL);
}

static const fbc_check_result *check(const fbc_checks_result *r, const char *id)
{
	for (size_t i = 0; i < r->n_checks; i++)
		if (strcmp(r->checks[i].id, id) == 0)
			return &r->checks[i];
	fail_msg("no check %s", id);
	return NULL;
}

static const fbc_finding *finding(const fbc_checks_result *r, const char *id, const char *code)
{
	const fbc_check_result *c = check(r, id);

	for (size_t i = 0; i < c->n_findings; i++)
		if (strcmp(c->findings[i].code, code) == 0)
			return &c->findings[i];
	return NULL;
}

/* The ids of failing checks, space-separated. */
static const char *failing(const fbc_checks_result *r)
{
	static char buf[256];

	buf[0] = '\0';
	for (size_t i = 0; i < r->n_checks; i++)
		if (r->checks[i].conclusion == FBC_CONCL_FAILURE) {
			strncat(buf, r->checks[i].id, sizeof(buf) - strlen(buf) - 2);
			strncat(buf, " ", sizeof(buf) - strlen(buf) - 1);
		}
	return buf;
}

static void expect(const fbc_checks_result *r, const char *id, const char *code, const char *path,
		   int line)
{
	const fbc_finding *f = finding(r, id, code);

	if (!f)
		fail_msg("no %s/%s finding (failing: %s)", id, code, failing(r));
	assert_string_equal(f->path, path);
	if (line)
		assert_int_equal(f->line, line);
}

#define CAT16 "catalogs/v4.16/foo/catalog.yaml"
#define CAT18 "catalogs/v4.18/foo/catalog.yaml"

/* ------------------------------------------------------------------ changes */

static void changes__one_bundle_added_passes(void **state)
{
	fbc_checks_result *r;

	change("sh ../mkbundle.sh foo 2.0.0 1.0.0 ../crd.yaml");
	r = run();
	assert_int_equal(check(r, "bundles")->conclusion, FBC_CONCL_SUCCESS);
	assert_int_equal(check(r, "crds")->conclusion, FBC_CONCL_SUCCESS);
	assert_non_null(strstr(check(r, "crds")->summary, "1 CRD upgrades compared"));
	assert_int_equal(check(r, "changes")->conclusion, FBC_CONCL_SUCCESS);
	assert_int_equal(r->changes.n_bundles_added, 1);
	assert_string_equal(r->changes.bundles_added[0], "operators/foo/2.0.0");
	assert_string_equal(r->changes.packages[0], "foo");
	assert_string_equal(failing(r), "");
	assert_int_equal(check(r, "permissions")->conclusion, FBC_CONCL_SUCCESS);
	assert_int_equal(r->conclusion, FBC_CONCL_SUCCESS);
	fbc_checks_result_free(r);
}

static void changes__file_outside_layout(void **state)
{
	fbc_checks_result *r;

	change("echo x > notes.md");
	r = run();
	expect(r, "changes", "outside-layout", "notes.md", 0);
	assert_string_equal(failing(r), "changes ");
	assert_string_equal(r->changes.other[0], "notes.md");
	fbc_checks_result_free(r);
}

static void changes__existing_bundle_modified(void **state)
{
	fbc_checks_result *r;

	change("echo '  labels: {}' >> "
	       "operators/foo/1.0.0/manifests/foo.clusterserviceversion.yaml");
	r = run();
	expect(r, "changes", "bundle-modified",
	       "operators/foo/1.0.0/manifests/foo.clusterserviceversion.yaml", 0);
	assert_string_equal(failing(r), "changes ");
	assert_string_equal(r->changes.bundles_modified[0], "operators/foo/1.0.0");
	fbc_checks_result_free(r);
}

static void changes__second_package_touched(void **state)
{
	fbc_checks_result *r;

	change("sh ../mkbundle.sh foo 2.0.0 1.0.0 && echo 'merge: false' >> operators/bar/ci.yaml");
	r = run_as("main", "alice", "Maint");
	expect(r, "changes", "many-packages", "operators/bar/ci.yaml", 0);
	assert_string_equal(failing(r), "changes ");
	fbc_checks_result_free(r);
}

static void changes__two_bundles_and_mixed(void **state)
{
	fbc_checks_result *r;

	change("mkdir -p operators/foo/2.0.0 operators/foo/3.0.0 && echo k > "
	       "operators/foo/2.0.0/a && echo k > operators/foo/3.0.0/a && "
	       "echo '# x' >> " CAT16);
	r = run();
	expect(r, "changes", "many-bundles", "operators/foo/3.0.0/a", 0);
	expect(r, "changes", "mixed", CAT16, 0);
	fbc_checks_result_free(r);
}

static void changes__deleted_bundle_still_in_catalog(void **state)
{
	fbc_checks_result *r;

	change("git rm -rq operators/foo/1.0.0");
	r = run();
	expect(r, "changes", "bundle-referenced", CAT16, 16);
	assert_string_equal(r->changes.bundles_deleted[0], "operators/foo/1.0.0");
	fbc_checks_result_free(r);
}

/* -------------------------------------------------------------- permissions */

static void permissions__reviewers_case_insensitive_and_approve(void **state)
{
	fbc_checks_result *r;
	const fbc_check_result *p;

	change("echo 'merge: false' >> operators/foo/ci.yaml");
	r = run_as("main", "ALICE", NULL);
	assert_int_equal(check(r, "permissions")->conclusion, FBC_CONCL_SUCCESS);
	fbc_checks_result_free(r);
	r = run_as("main", "bob", NULL);
	p = check(r, "permissions");
	assert_int_equal(p->conclusion, FBC_CONCL_ACTION_REQUIRED);
	assert_int_equal(r->conclusion, FBC_CONCL_ACTION_REQUIRED);
	assert_int_equal(fbc_checks_result_exit(r), 1);
	expect(r, "permissions", "approval-needed", "operators/foo/ci.yaml", 0);
	assert_non_null(strstr(p->findings[0].message, "@Alice"));
	fbc_checks_result_free(r);
	r = run_as("main", "bob", "alice");
	assert_int_equal(check(r, "permissions")->conclusion, FBC_CONCL_SUCCESS);
	assert_int_equal(r->conclusion, FBC_CONCL_SUCCESS);
	fbc_checks_result_free(r);
}

static void permissions__head_cannot_add_its_author(void **state)
{
	fbc_checks_result *r;

	change("printf 'reviewers: [mallory]\\n' > operators/foo/ci.yaml");
	r = run_as("main", "mallory", NULL);
	assert_int_equal(check(r, "permissions")->conclusion, FBC_CONCL_ACTION_REQUIRED);
	fbc_checks_result_free(r);
}

static void permissions__maintainers_for_new_packages_and_root_files(void **state)
{
	fbc_checks_result *r;
	const fbc_check_result *p;

	change("mkdir -p operators/baz/1.0.0 && printf 'reviewers: [carol]\\n' > "
	       "operators/baz/ci.yaml && echo k > operators/baz/1.0.0/a");
	r = run_as("main", "carol", NULL);
	p = check(r, "permissions");
	assert_int_equal(p->conclusion, FBC_CONCL_ACTION_REQUIRED);
	assert_non_null(strstr(p->findings[0].message, "new package"));
	assert_non_null(strstr(p->findings[0].message, "@Maint"));
	fbc_checks_result_free(r);
	r = run_as("main", "maint", NULL);
	assert_int_equal(check(r, "permissions")->conclusion, FBC_CONCL_SUCCESS);
	fbc_checks_result_free(r);
	/* a package without reviewers */
	change("echo 'merge: false' >> operators/bar/ci.yaml");
	r = run_as("main", "alice", NULL);
	assert_int_equal(check(r, "permissions")->conclusion, FBC_CONCL_ACTION_REQUIRED);
	fbc_checks_result_free(r);
	/* a root file */
	change("echo 'organization: x' >> config.yaml");
	r = run_as("main", "alice", NULL);
	expect(r, "permissions", "approval-needed", "config.yaml", 0);
	fbc_checks_result_free(r);
}

static void permissions__codeowners_last_match_wins(void **state)
{
	fbc_checks_result *r;

	/* a base with .fbcd.yaml and CODEOWNERS */
	change("git rm -rq operators config.yaml && mkdir -p cats && git mv catalogs/v4.16 "
	       "cats/one && printf 'catalogs:\\n  - path: cats/*\\nowners: CODEOWNERS\\n' > "
	       ".fbcd.yaml && printf '* @root\\n/cats/ @cat-owner\\n*.md @docs\\n' > CODEOWNERS");
	sh("git branch -f cobase %s", branch);
	change_from("cobase", "echo '# c' >> cats/one/foo/catalog.yaml && echo d > cats/one/x.md");
	r = run_as("cobase", "cat-owner", NULL);
	assert_string_equal(r->layout, "fbcd");
	assert_int_equal(r->changes.n_catalogs, 1);
	assert_string_equal(r->changes.catalogs[0], "cats/one");
	assert_int_equal(check(r, "permissions")->conclusion, FBC_CONCL_ACTION_REQUIRED);
	expect(r, "permissions", "approval-needed", "cats/one/x.md", 0);
	assert_non_null(strstr(finding(r, "permissions", "approval-needed")->message, "@docs"));
	fbc_checks_result_free(r);
	r = run_as("cobase", "cat-owner", "DOCS");
	assert_int_equal(check(r, "permissions")->conclusion, FBC_CONCL_SUCCESS);
	fbc_checks_result_free(r);
}

/* ----------------------------------------------------------------- catalogs */

static void catalogs__replaces_to_nowhere(void **state)
{
	fbc_checks_result *r;

	change("sed -i 's/  replaces: foo.v2.0.0/  replaces: foo.v9.0.0/' " CAT16);
	r = run();
	expect(r, "catalogs", "V4", CAT16, 6);
	assert_string_equal(failing(r), "catalogs ");
	fbc_checks_result_free(r);
}

static void catalogs__middle_entry_removed(void **state)
{
	fbc_checks_result *r;

	change("sed -i '11,12d' " CAT18);
	r = run();
	expect(r, "catalogs", "V4", CAT18, 6);
	assert_string_equal(failing(r), "catalogs ");
	fbc_checks_result_free(r);
}

static void catalogs__symlink_loop_and_binary_file(void **state)
{
	fbc_checks_result *r;
	const fbc_check_result *c;
	bool loop = false, bin = false;

	change("ln -s l2 catalogs/v4.16/foo/l1 && ln -s l1 catalogs/v4.16/foo/l2 && "
	       "head -c 3000 /dev/urandom > catalogs/v4.16/foo/blob.bin");
	r = run();
	c = check(r, "catalogs");
	assert_int_equal(c->conclusion, FBC_CONCL_FAILURE);
	for (size_t i = 0; i < c->n_findings; i++) {
		loop |= strcmp(c->findings[i].path, "catalogs/v4.16/foo/l1") == 0;
		bin |= strcmp(c->findings[i].path, "catalogs/v4.16/foo/blob.bin") == 0;
	}
	assert_true(loop);
	assert_true(bin);
	fbc_checks_result_free(r);
}

/* ------------------------------------------------------------------- policy */

static void policy__registry_not_allowed(void **state)
{
	fbc_checks_result *r;

	change("sed -i 's#quay.io/ok/foo:v3.0.0#docker.io/x/foo:v3.0.0#' " CAT16);
	r = run();
	expect(r, "policy", "registry", CAT16, 35);
	assert_string_equal(failing(r), "policy ");
	fbc_checks_result_free(r);
}

static void policy__bundle_object_in_csv_metadata_only_catalog(void **state)
{
	fbc_checks_result *r;
	const char *add = "printf -- '- type: olm.bundle.object\\n  value: {data: "
			  "eyJraW5kIjoiQ29uZmlnTWFwIiwiYXBpVmVyc2lvbiI6InYxIn0=}\\n' >> ";

	{
		char script[512];

		snprintf(script, sizeof(script), "%s%s && %s%s", add, CAT16, add, CAT18);
		change(script);
	}
	r = run();
	expect(r, "policy", "bundle-object", CAT18, 39);
	assert_int_equal(check(r, "policy")->n_findings, 1); /* v4.16 may carry them */
	assert_string_equal(failing(r), "policy ");
	fbc_checks_result_free(r);
}

/* -------------------------------------------------------------------- graph */

static void graph__G1_stranded_by_skips(void **state)
{
	fbc_checks_result *r;

	/* v2 skips v1, v3 replaces and skips v2: valid, but v1 can no longer reach v3 */
	change("sed -i 's/^  replaces: foo.v1.0.0/  replaces: foo.v1.0.0\\n  skips: "
	       "[foo.v1.0.0]/; s/^  replaces: foo.v2.0.0/  replaces: foo.v2.0.0\\n  skips: "
	       "[foo.v2.0.0]/' " CAT16);
	r = run();
	expect(r, "graph", "G1", CAT16, 10);
	expect(r, "graph", "G3", CAT16, 10);
	assert_string_equal(failing(r), "graph ");
	fbc_checks_result_free(r);
}

static void graph__olm_docs_243_trap(void **state)
{
	fbc_checks_result *r;

	/* v4 replaces v3, v3 skips v2, v2 replaces v1: v1 is stranded */
	change("sed -i 's/^  replaces: foo.v2.0.0/  skips: [foo.v2.0.0]\\n- name: foo.v4.0.0\\n  "
	       "replaces: foo.v3.0.0/' " CAT16 " && printf -- '---\\nschema: olm.bundle\\npackage: "
	       "foo\\nname: foo.v4.0.0\\nimage: quay.io/ok/foo:v4.0.0\\nproperties:\\n- type: "
	       "olm.package\\n  value: {packageName: foo, version: 4.0.0}\\n' >> " CAT16);
	r = run();
	expect(r, "graph", "G1", CAT16, 10);
	expect(r, "catalogs", "V6", CAT16, 6); /* opm calls it stranded too */
	fbc_checks_result_free(r);
}

static void graph__G2_removed_entry_warns(void **state)
{
	fbc_checks_result *r;

	change("sed -i '10d;15,22d' " CAT16);
	r = run();
	expect(r, "graph", "G2", CAT16, 6);
	assert_int_equal(finding(r, "graph", "G2")->level, FBC_LEVEL_WARNING);
	assert_int_equal(check(r, "graph")->conclusion, FBC_CONCL_WARNING);
	assert_string_equal(failing(r), "");
	fbc_checks_result_free(r);
}

static void graph__G4_head_went_back(void **state)
{
	fbc_checks_result *r;

	change("sed -i 's/^  replaces: foo.v2.0.0/  replaces: foo.v2.0.0\\n- name: foo.v0.5.0\\n  "
	       "replaces: foo.v3.0.0/' " CAT16 " && printf -- '---\\nschema: olm.bundle\\npackage: "
	       "foo\\nname: foo.v0.5.0\\nimage: quay.io/ok/foo:v0.5.0\\nproperties:\\n- type: "
	       "olm.package\\n  value: {packageName: foo, version: 0.5.0}\\n' >> " CAT16);
	r = run();
	expect(r, "graph", "G4", CAT16, 15);
	assert_string_equal(failing(r), "graph ");
	fbc_checks_result_free(r);
}

static void graph__G5_channel_removed(void **state)
{
	fbc_checks_result *r;

	change("sed -i 's/^name: stable/name: fast/; s/defaultChannel: stable/defaultChannel: "
	       "fast/' " CAT16);
	r = run();
	expect(r, "graph", "G5", CAT16, 0);
	assert_string_equal(failing(r), "graph ");
	fbc_checks_result_free(r);
}

/* At the merge base foo's blobs are in another file of the catalog; the change moves them into
 * catalogs/v4.16/foo/ and renames the channel. foo's own directory does not exist at the merge
 * base, but the change touches another file of the catalog, so the whole catalog is read there
 * and the removed channel is found (not taken for a package new in the catalog). */
static void graph__package_moved_into_its_own_directory(void **state)
{
	char base[32];
	fbc_checks_result *r;

	change("git mv " CAT16 " catalogs/v4.16/all.yaml");
	snprintf(base, sizeof(base), "%s", branch);
	change_from(base, "mkdir -p catalogs/v4.16/foo && git mv catalogs/v4.16/all.yaml " CAT16
			  " && sed -i 's/^name: stable/name: fast/; s/defaultChannel: stable/"
			  "defaultChannel: fast/' " CAT16);
	r = run_as(base, "alice", NULL);
	expect(r, "graph", "G5", CAT16, 0);
	assert_string_equal(failing(r), "graph ");
	fbc_checks_result_free(r);
}

static void graph__G6_unreachable_new_bundle(void **state)
{
	fbc_checks_result *r;

	change("sed -i 's/^  replaces: foo.v2.0.0/  replaces: foo.v2.0.0\\n  skips: "
	       "[foo.v2.5.0]\\n- name: foo.v2.5.0/' " CAT16 " && printf -- '---\\nschema: "
	       "olm.bundle\\npackage: foo\\nname: foo.v2.5.0\\nimage: "
	       "quay.io/ok/foo:v2.5.0\\nproperties:\\n- type: olm.package\\n  value: "
	       "{packageName: foo, version: 2.5.0}\\n' >> " CAT16);
	r = run();
	expect(r, "graph", "G6", CAT16, 16);
	assert_int_equal(check(r, "graph")->conclusion, FBC_CONCL_WARNING);
	assert_string_equal(failing(r), "");
	fbc_checks_result_free(r);
}

/* ---------------------------------------------------------------- add mode */
/* foo has no fbc.enabled: its bundles are added to every catalog as IIB adds them (replaces
 * mode), and the checks build it as the ingest will. */

#define CSV2 "operators/foo/2.0.0/manifests/foo.clusterserviceversion.yaml"

static void addmode__add_that_fails_fails_templates(void **state)
{
	fbc_checks_result *r;
	const fbc_finding *f;

	/* 2.0.0 replaces 1.5.0, which was never added: IIB's add fails (A20) */
	change("sh ../mkbundle.sh foo 2.0.0 1.5.0");
	r = run();
	expect(r, "templates", "A20", CSV2, 9); /* the CSV's replaces line */
	f = finding(r, "templates", "A20");
	assert_int_equal(f->level, FBC_LEVEL_FAILURE);
	assert_non_null(strstr(f->message, "catalog v4.16: adding it fails"));
	assert_non_null(strstr(f->message, "foo.v1.5.0"));
	assert_string_equal(failing(r), "templates ");
	assert_non_null(
		strstr(check(r, "templates")->summary,
		       "1 touched package(s) in add mode rebuilt from their merge history"));
	fbc_checks_result_free(r);
	/* the same bundle replacing 1.0.0 adds cleanly, and graph compares the built package */
	change("sh ../mkbundle.sh foo 2.0.0 1.0.0");
	r = run();
	assert_string_equal(failing(r), "");
	assert_non_null(strstr(check(r, "graph")->summary,
			       "2 more of add-mode packages in 2 catalog(s) built"));
	fbc_checks_result_free(r);
}

/* A new bundle that requires an API nothing provides: the built catalogs do not resolve it,
 * a warning (dependencies on other add-mode packages could be the cause: they are not built). */
static void addmode__unresolvable_dependency_warns(void **state)
{
	fbc_checks_result *r;
	const fbc_finding *f;

	change("sh ../mkbundle.sh foo 2.0.0 1.0.0 && printf 'dependencies:\n- type: olm.gvk\n  "
	       "value: {group: missing.io, kind: Nope, version: v1}\n' > "
	       "operators/foo/2.0.0/metadata/dependencies.yaml");
	r = run();
	expect(r, "resolve", "unsatisfiable", CSV2, 9);
	f = finding(r, "resolve", "unsatisfiable");
	assert_int_equal(f->level, FBC_LEVEL_WARNING);
	assert_non_null(strstr(f->message, "catalog v4.16 (add mode): installing foo from "
					   "channel stable cannot be resolved"));
	assert_int_equal(check(r, "resolve")->conclusion, FBC_CONCL_WARNING);
	assert_string_equal(failing(r), "");
	fbc_checks_result_free(r);
	/* without the dependency every built head resolves */
	change("sh ../mkbundle.sh foo 2.0.0 1.0.0");
	r = run();
	assert_int_equal(check(r, "resolve")->conclusion, FBC_CONCL_SUCCESS);
	assert_non_null(strstr(check(r, "resolve")->summary,
			       "2 more of add-mode packages in their built catalogs"));
	fbc_checks_result_free(r);
}

/* A new bundle in a new default channel that upgrades nothing: subscriptions to the default
 * channel lose their upgrade from the old head (clusterpulse did this in community-operators
 * PR 9025 through its catalogs). Found with the one-replay build and, when ci.yaml changes
 * too, with two separate builds. */
static void addmode__default_channel_moved_fails_graph(void **state)
{
	static const char *const scripts[] = {
		"sh ../mkbundle.sh foo 2.0.0 && sed -i 's/channels.v1: stable/channels.v1: "
		"fast\\n  operators.operatorframework.io.bundle.channel.default.v1: fast/' "
		"operators/foo/2.0.0/metadata/annotations.yaml",
		"sh ../mkbundle.sh foo 2.0.0 && sed -i 's/channels.v1: stable/channels.v1: "
		"fast\\n  operators.operatorframework.io.bundle.channel.default.v1: fast/' "
		"operators/foo/2.0.0/metadata/annotations.yaml && echo '# reviewed' >> "
		"operators/foo/ci.yaml",
	};

	for (size_t i = 0; i < 2; i++) {
		fbc_checks_result *r;
		const fbc_finding *f;

		change(scripts[i]);
		r = run();
		expect(r, "graph", "G5", CSV2, 4); /* no replaces: the CSV's name line */
		f = finding(r, "graph", "G5");
		assert_non_null(strstr(f->message, "catalog v4.16 (add mode): package foo: the "
						   "default channel changed from stable to fast"));
		assert_string_equal(failing(r), "graph ");
		assert_non_null(strstr(check(r, "catalogs")->summary,
				       "2 more built in add mode as the ingest builds them, 0 "
				       "findings"));
		fbc_checks_result_free(r);
	}
}

/* --------------------------------------------------------------------- crds */

static void crds__served_version_removed_fails(void **state)
{
	fbc_checks_result *r;

	change("sed '/- name: v1beta1/,$d' ../crd.yaml > ../crd2.yaml && "
	       "sh ../mkbundle.sh foo 2.0.0 1.0.0 ../crd2.yaml");
	r = run();
	expect(r, "crds", "served-version-removed", "operators/foo/2.0.0/manifests/crd.yaml", 0);
	assert_string_equal(failing(r), "crds ");
	fbc_checks_result_free(r);
}

static void crds__v1_safety_rules_warn(void **state)
{
	static const char *const codes[] = {"scope-changed",  "field-removed",	 "type-changed",
					    "enum-narrowed",  "bound-tightened", "default-changed",
					    "required-added", "pattern"};
	fbc_checks_result *r;
	const fbc_check_result *c;

	change("sed -e 's/scope: Namespaced/scope: Cluster/' -e '/name: {type: string}/d' "
	       "-e 's/enum: \\[a, b\\]/enum: [a], pattern: \"^a$\"/' "
	       "-e 's/minimum: 1, default: 1/minimum: 2, default: 2/' "
	       "-e 's/required: \\[size\\]/required: [size, mode]/' "
	       "-e 's/tags: {type: array/tags: {type: string/' ../crd.yaml > ../crd3.yaml && "
	       "sh ../mkbundle.sh foo 2.0.0 1.0.0 ../crd3.yaml");
	r = run();
	c = check(r, "crds");
	assert_int_equal(c->conclusion, FBC_CONCL_WARNING);
	for (size_t i = 0; i < sizeof(codes) / sizeof(codes[0]); i++)
		if (!finding(r, "crds", codes[i]))
			fail_msg("no crds/%s warning", codes[i]);
	assert_string_equal(failing(r), "");
	fbc_checks_result_free(r);
}

static void crds__same_crd_is_clean(void **state)
{
	fbc_checks_result *r;

	change("sh ../mkbundle.sh foo 2.0.0 1.0.0 ../crd.yaml");
	r = run();
	assert_int_equal(check(r, "crds")->n_findings, 0);
	fbc_checks_result_free(r);
}

static void bundles__broken_bundle_fails_at_file(void **state)
{
	fbc_checks_result *r;

	change("sh ../mkbundle.sh foo 2.0.0 1.0.0 && sed -i 's/version: 2.0.0/version: 2.0.1/' "
	       "operators/foo/2.0.0/manifests/foo.clusterserviceversion.yaml && "
	       "sed -i 's/package.v1: foo/package.v1: other/' "
	       "operators/foo/2.0.0/metadata/annotations.yaml");
	r = run();
	expect(r, "bundles", "version-dir",
	       "operators/foo/2.0.0/manifests/foo.clusterserviceversion.yaml", 0);
	expect(r, "bundles", "package-name", "operators/foo/2.0.0/metadata/annotations.yaml", 5);
	fbc_checks_result_free(r);
	change("mkdir -p operators/foo/2.0.0/manifests operators/foo/2.0.0/metadata && echo 'a: 1' "
	       "> "
	       "operators/foo/2.0.0/manifests/x.yaml && cp operators/foo/1.0.0/metadata/* "
	       "operators/foo/2.0.0/metadata/");
	r = run();
	assert_int_equal(check(r, "bundles")->conclusion, FBC_CONCL_FAILURE);
	assert_string_equal(failing(r), "bundles ");
	fbc_checks_result_free(r);
}

/* ------------------------------------------------------------------ resolve */

static void resolve__unsatisfiable_dependency(void **state)
{
	fbc_checks_result *r;

	change("printf -- '- type: olm.package.required\\n  value: {packageName: nothere, "
	       "versionRange: \">=1.0.0\"}\\n' >> " CAT16);
	r = run();
	expect(r, "resolve", "unsatisfiable", CAT16, 6);
	assert_string_equal(failing(r), "resolve ");
	fbc_checks_result_free(r);
}

/* ---------------------------------------------------------------- bad input */

static void run__missing_revisions_and_unrelated_histories(void **state)
{
	char p[128];
	fbc_git *g = NULL;
	fbc_error err;
	fbc_checks_result *r = NULL;

	sh("git checkout -qf --orphan lonely && git rm -rqf . && echo z > z && git add z && "
	   "git commit -qm lonely && git checkout -qf main");
	snprintf(p, sizeof(p), "%s/r", dir);
	assert_int_equal(fbc_git_open(&g, p, &err), 0);
	assert_int_equal(fbc_checks_run(&r, g, "nope", "main", NULL, &err), FBC_ENOTFOUND);
	assert_int_equal(fbc_checks_run(&r, g, "main", "nope", NULL, &err), FBC_ENOTFOUND);
	assert_int_equal(fbc_checks_run(&r, g, "main", "lonely", NULL, &err), FBC_ENOTFOUND);
	assert_non_null(strstr(err.message, "no common ancestor"));
	assert_null(r);
	fbc_git_free(g);
}

static void run__config_yaml_not_yaml(void **state)
{
	fbc_checks_result *r;

	change("printf 'maintainers: [a\\n  - : :\\n\\t{' > config.yaml");
	sh("git branch -f badbase %s", branch);
	change_from("badbase", "echo '# c' >> " CAT16);
	r = run_as("badbase", "alice", NULL);
	expect(r, "changes", "settings", "config.yaml", 0);
	assert_non_null(strstr(finding(r, "changes", "settings")->message, "not valid YAML"));
	fbc_checks_result_free(r);
}

static void run__only_selected_checks_and_json(void **state)
{
	char p[128];
	fbc_git *g = NULL;
	fbc_error err;
	fbc_checks_result *r = NULL;
	const char *only[] = {"graph", "policy"};
	fbc_checks_options o = {0};
	json_t *doc = NULL;
	fbc_buf text;

	change("echo '# c' >> " CAT16);
	o.only = only;
	o.n_only = 2;
	snprintf(p, sizeof(p), "%s/r", dir);
	assert_int_equal(fbc_git_open(&g, p, &err), 0);
	assert_int_equal(fbc_checks_run(&r, g, "main", branch, &o, &err), 0);
	assert_int_equal(r->n_checks, 2);
	assert_string_equal(r->checks[0].id, "graph");
	assert_int_equal(fbc_checks_result_json(&doc, r, &err), 0);
	assert_string_equal(json_string_value(json_object_get(doc, "conclusion")), "success");
	assert_int_equal(json_array_size(json_object_get(doc, "checks")), 2);
	assert_true(json_is_array(json_object_get(
		json_object_get(json_object_get(doc, "changes"), "bundles"), "added")));
	assert_true(json_is_integer(json_object_get(json_object_get(doc, "timings"), "totalMs")));
	fbc_buf_init(&text, 0);
	assert_int_equal(fbc_checks_result_text(&text, r, &err), 0);
	assert_non_null(strstr(text.data, "conclusion: success"));
	fbc_buf_dispose(&text);
	json_decref(doc);
	fbc_checks_result_free(r);
	fbc_git_free(g);
}

static void run__shared_cache_hits_and_bound(void **state)
{
	char p[128];
	fbc_git *g = NULL;
	fbc_error err;
	fbc_checks_result *r = NULL, *r2 = NULL;
	fbc_checks_options o = {0};
	fbc_checks_cache *cc = NULL;
	size_t n, bytes, hits, misses;

	change("echo '# c' >> " CAT16);
	snprintf(p, sizeof(p), "%s/r", dir);
	assert_int_equal(fbc_git_open(&g, p, &err), 0);
	assert_int_equal(fbc_checks_cache_create(&cc, 0, NULL, &err), 0);
	o.cache = cc;
	assert_int_equal(fbc_checks_run(&r, g, "main", branch, &o, &err), 0);
	fbc_checks_cache_stats(cc, &n, &bytes, &hits, &misses);
	/* v4.16 at head; at the merge base only foo/ of it (the touched package: base_side);
	 * and the add-mode builds of foo (its ci.yaml has no fbc.enabled) */
	assert_int_equal(n, 3);
	assert_int_equal(hits, 0);
	assert_int_equal(fbc_checks_run(&r2, g, "main", branch, &o, &err), 0);
	fbc_checks_cache_stats(cc, &n, &bytes, &hits, &misses);
	assert_int_equal(n, 3);
	assert_int_equal(hits, 3);
	assert_int_equal(r2->conclusion, r->conclusion);
	assert_int_equal(check(r2, "graph")->n_findings, check(r, "graph")->n_findings);
	fbc_checks_result_free(r);
	fbc_checks_result_free(r2);
	fbc_checks_cache_free(cc);
	/* a tiny bound keeps nothing once the run is over */
	assert_int_equal(fbc_checks_cache_create(&cc, 1, NULL, &err), 0);
	o.cache = cc;
	assert_int_equal(fbc_checks_run(&r, g, "main", branch, &o, &err), 0);
	fbc_checks_cache_stats(cc, &n, &bytes, &hits, &misses);
	assert_int_equal(n, 0);
	fbc_checks_result_free(r);
	fbc_checks_cache_free(cc);
	assert_int_equal(fbc_checks_cache_create(&cc, 0, "/dev/null", &err), FBC_EINVAL);
	fbc_git_free(g);
}

static void run__json_of_non_utf8_paths(void **state)
{
	fbc_checks_result *r;
	json_t *doc = NULL;
	fbc_error err;

	change("echo x > \"$(printf 'bad\\377name')\"");
	r = run();
	assert_non_null(finding(r, "changes", "outside-layout"));
	assert_int_equal(fbc_checks_result_json(&doc, r, &err), 0);
	assert_non_null(strstr(
		json_string_value(json_object_get(
			json_array_get(
				json_object_get(json_array_get(json_object_get(doc, "checks"), 0),
						"annotations"),
				0),
			"path")),
		"bad\xef\xbf\xbdname"));
	json_decref(doc);
	fbc_checks_result_free(r);
}

static void run__plain_layout_change_set(void **state)
{
	fbc_checks_result *r;

	change("git rm -rq operators config.yaml && git mv catalogs/v4.16/foo foo && git rm -rq "
	       "catalogs");
	sh("git branch -f plainbase %s", branch);
	change_from("plainbase", "echo '# c' >> foo/catalog.yaml");
	r = run_as("plainbase", "x", NULL);
	assert_string_equal(r->layout, "plain");
	assert_int_equal(r->changes.n_catalogs, 1);
	assert_string_equal(r->changes.catalogs[0], "");
	assert_string_equal(r->changes.packages[0], "foo");
	assert_int_equal(check(r, "catalogs")->conclusion, FBC_CONCL_SUCCESS);
	assert_int_equal(check(r, "permissions")->conclusion, FBC_CONCL_SUCCESS);
	assert_int_equal(r->conclusion, FBC_CONCL_SUCCESS);
	fbc_checks_result_free(r);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(changes__one_bundle_added_passes),
		cmocka_unit_test(changes__file_outside_layout),
		cmocka_unit_test(changes__existing_bundle_modified),
		cmocka_unit_test(changes__second_package_touched),
		cmocka_unit_test(changes__two_bundles_and_mixed),
		cmocka_unit_test(changes__deleted_bundle_still_in_catalog),
		cmocka_unit_test(permissions__reviewers_case_insensitive_and_approve),
		cmocka_unit_test(permissions__head_cannot_add_its_author),
		cmocka_unit_test(permissions__maintainers_for_new_packages_and_root_files),
		cmocka_unit_test(permissions__codeowners_last_match_wins),
		cmocka_unit_test(catalogs__replaces_to_nowhere),
		cmocka_unit_test(catalogs__middle_entry_removed),
		cmocka_unit_test(catalogs__symlink_loop_and_binary_file),
		cmocka_unit_test(policy__registry_not_allowed),
		cmocka_unit_test(policy__bundle_object_in_csv_metadata_only_catalog),
		cmocka_unit_test(graph__G1_stranded_by_skips),
		cmocka_unit_test(graph__olm_docs_243_trap),
		cmocka_unit_test(graph__G2_removed_entry_warns),
		cmocka_unit_test(graph__G4_head_went_back),
		cmocka_unit_test(graph__G5_channel_removed),
		cmocka_unit_test(graph__G6_unreachable_new_bundle),
		cmocka_unit_test(graph__package_moved_into_its_own_directory),
		cmocka_unit_test(addmode__add_that_fails_fails_templates),
		cmocka_unit_test(addmode__default_channel_moved_fails_graph),
		cmocka_unit_test(addmode__unresolvable_dependency_warns),
		cmocka_unit_test(crds__served_version_removed_fails),
		cmocka_unit_test(crds__v1_safety_rules_warn),
		cmocka_unit_test(crds__same_crd_is_clean),
		cmocka_unit_test(bundles__broken_bundle_fails_at_file),
		cmocka_unit_test(resolve__unsatisfiable_dependency),
		cmocka_unit_test(run__missing_revisions_and_unrelated_histories),
		cmocka_unit_test(run__config_yaml_not_yaml),
		cmocka_unit_test(run__only_selected_checks_and_json),
		cmocka_unit_test(run__shared_cache_hits_and_bound),
		cmocka_unit_test(run__json_of_non_utf8_paths),
		cmocka_unit_test(run__plain_layout_change_set),
	};

	if (argc < 2) {
		fprintf(stderr, "usage: test_checks FIXTURE.sh\n");
		return 2;
	}
	fixture = argv[1];
	return cmocka_run_group_tests(tests, setup, teardown);
}
