/* Unit tests for service/template: the rules of templates.md §2-§3 (a
 * passing and a failing case each), the worked examples of §3.9 and the
 * §2.4 example, bundle sources, ci.yaml mappings and migrate levels. */
#include "service/template/template.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

static char tmpdir[256];
static fbc_template_sources *src;

/* A catalog of bundle blobs q/demo:<v> named demo.v<v>, one per version. */
static const char *const versions[] = {
	"0.1.0", "0.1.1", "0.1.2", "0.1.3",	 "0.2.0",	"0.2.1",	 "0.2.2", "0.3.0",
	"1.0.0", "1.0.1", "1.1.0", "2.0.0-rc.1", "0.0.0-alpha", "1.0.1+build.1", NULL};

static int setup(void **state)
{
	(void)state;
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/fbc-template-test.XXXXXX");
	assert_non_null(mkdtemp(tmpdir));
	char path[512];
	snprintf(path, sizeof(path), "%s/catalog.json", tmpdir);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	for (size_t i = 0; versions[i] != NULL; i++)
		fprintf(f,
			"{\"schema\":\"olm.bundle\",\"name\":\"demo.v%s\",\"package\":\"demo\","
			"\"image\":\"q/demo:%s\",\"properties\":[{\"type\":\"olm.package\","
			"\"value\":{\"packageName\":\"demo\",\"version\":\"%s\"}},{\"type\":"
			"\"olm.csv.metadata\",\"value\":{\"displayName\":\"Demo\"}}],"
			"\"relatedImages\":[{\"name\":\"\",\"image\":\"q/demo:%s\"}]}\n",
			versions[i], versions[i], versions[i], versions[i]);
	/* a bundle of another package, and a bundle.object-only one */
	fprintf(f, "{\"schema\":\"olm.bundle\",\"name\":\"other.v1.0.0\",\"package\":\"other\","
		   "\"image\":\"q/other:1.0.0\",\"properties\":[{\"type\":\"olm.package\","
		   "\"value\":{\"packageName\":\"other\",\"version\":\"1.0.0\"}}]}\n");
	fclose(f);
	fbc_error err;
	fbc_error_init(&err);
	assert_int_equal(fbc_template_sources_create(&src, &err), 0);
	assert_int_equal(fbc_template_sources_add_fbc(src, tmpdir, NULL, &err), 0);
	assert_int_equal(fbc_template_sources_images(src), 15);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	char path[512];
	snprintf(path, sizeof(path), "%s/catalog.json", tmpdir);
	unlink(path);
	rmdir(tmpdir);
	fbc_template_sources_free(src);
	return 0;
}

static int render(fbc_template_result *r, const char *text, fbc_template_type type,
		  fbc_semver_rules rules, fbc_error *err)
{
	fbc_template_opts o = {type, FBC_BUNDLE_MIGRATE_CSV_METADATA, rules, "t.yaml"};
	fbc_error_init(err);
	return fbc_template_render(r, text, strlen(text), &o, src, err);
}

/* "name[ r=X][ s=a,b]; ..." of a channel, versions only (demo.v stripped) */
static void channel_str(char *out, size_t cap, const fbc_template_result *r, const char *name)
{
	size_t i;
	json_t *b;
	out[0] = '\0';
	json_array_foreach(r->blobs, i, b)
	{
		const char *s = json_string_value(json_object_get(b, "schema"));
		const char *n = json_string_value(json_object_get(b, "name"));
		if (strcmp(s, "olm.channel") != 0 || strcmp(n, name) != 0)
			continue;
		size_t k;
		json_t *e;
		size_t len = 0;
		json_array_foreach(json_object_get(b, "entries"), k, e)
		{
			len += (size_t)snprintf(out + len, cap - len, "%s%s", k ? "; " : "",
						json_string_value(json_object_get(e, "name")) + 6);
			const char *rep = json_string_value(json_object_get(e, "replaces"));
			if (rep != NULL)
				len += (size_t)snprintf(out + len, cap - len, " r=%s", rep + 6);
			json_t *sk = json_object_get(e, "skips");
			size_t j;
			json_t *x;
			json_array_foreach(sk, j, x) len +=
				(size_t)snprintf(out + len, cap - len, "%s%s",
						 j ? "," : " s=", json_string_value(x) + 6);
		}
		return;
	}
	snprintf(out, cap, "(no channel %s)", name);
}

static const char *default_channel(const fbc_template_result *r)
{
	return json_string_value(json_object_get(json_array_get(r->blobs, 0), "defaultChannel"));
}

static void expect_channel(const fbc_template_result *r, const char *name, const char *want)
{
	char got[4096];
	channel_str(got, sizeof(got), r, name);
	if (strcmp(got, want) != 0)
		fprintf(stderr, "channel %s:\n got  %s\n want %s\n", name, got, want);
	assert_string_equal(got, want);
}

#define EX1_CANDIDATE                                                                           \
	"candidate:\n  bundles:\n  - image: q/demo:0.1.0\n  - image: q/demo:0.1.1\n  - image: " \
	"q/demo:0.1.2\n  - image: q/demo:0.1.3\n  - image: q/demo:0.2.0\n  - image: "           \
	"q/demo:0.2.1\n  - image: q/demo:0.2.2\n  - image: q/demo:0.3.0\n  - image: "           \
	"q/demo:1.0.0\n  - image: q/demo:1.0.1\n  - image: q/demo:1.1.0\n"
#define EX1_FAST                                                                           \
	"fast:\n  bundles:\n  - image: q/demo:0.2.1\n  - image: q/demo:0.2.2\n  - image: " \
	"q/demo:0.3.0\n  - image: q/demo:1.0.1\n  - image: q/demo:1.1.0\n"
#define EX1_STABLE "stable:\n  bundles:\n  - image: q/demo:1.0.1\n"

static void fbc_template_render__semver_example1_major_v171(void **state)
{
	(void)state;
	fbc_template_result r = {NULL};
	fbc_error err;
	const char *t = "schema: olm.semver\ngenerateMajorChannels: true\ngenerateMinorChannels: "
			"false\n" EX1_CANDIDATE EX1_FAST EX1_STABLE;
	assert_int_equal(render(&r, t, FBC_TEMPLATE_SEMVER, FBC_SEMVER_RULES_V171, &err), 0);
	assert_string_equal(default_channel(&r), "stable-v1");
	expect_channel(
		&r, "candidate-v0",
		"0.1.0; 0.1.1; 0.1.2; 0.1.3 s=0.1.0,0.1.1,0.1.2; 0.2.0; 0.2.1; 0.2.2 r=0.1.3 "
		"s=0.1.0,0.1.1,0.1.2,0.2.0,0.2.1; 0.3.0 r=0.2.2 "
		"s=0.1.0,0.1.1,0.1.2,0.1.3,0.2.0,0.2.1");
	expect_channel(&r, "candidate-v1", "1.0.0; 1.0.1 s=1.0.0; 1.1.0 r=1.0.1 s=1.0.0");
	expect_channel(&r, "fast-v0", "0.2.1; 0.2.2 s=0.2.1; 0.3.0 r=0.2.2 s=0.2.1");
	expect_channel(&r, "fast-v1", "1.0.1; 1.1.0 r=1.0.1");
	expect_channel(&r, "stable-v1", "1.0.1");
	fbc_template_result_dispose(&r);
}

static void fbc_template_render__semver_example1_minor_v171(void **state)
{
	(void)state;
	fbc_template_result r = {NULL};
	fbc_error err;
	/* both flags absent: minor is switched on */
	const char *t = "Schema: olm.semver\n" EX1_CANDIDATE EX1_FAST EX1_STABLE;
	assert_int_equal(render(&r, t, FBC_TEMPLATE_AUTO, FBC_SEMVER_RULES_V171, &err), 0);
	assert_string_equal(default_channel(&r), "stable-v1.0");
	expect_channel(&r, "candidate-v0.1", "0.1.0; 0.1.1; 0.1.2; 0.1.3 s=0.1.0,0.1.1,0.1.2");
	expect_channel(&r, "candidate-v0.2",
		       "0.2.0; 0.2.1; 0.2.2 r=0.1.3 s=0.1.0,0.1.1,0.1.2,0.2.0,0.2.1");
	expect_channel(&r, "candidate-v0.3", "0.3.0 r=0.2.2 s=0.1.0,0.1.1,0.1.2,0.1.3,0.2.0,0.2.1");
	expect_channel(&r, "candidate-v1.0", "1.0.0; 1.0.1 s=1.0.0");
	expect_channel(&r, "candidate-v1.1", "1.1.0 r=1.0.1 s=1.0.0");
	expect_channel(&r, "fast-v0.2", "0.2.1; 0.2.2 s=0.2.1");
	expect_channel(&r, "fast-v0.3", "0.3.0 r=0.2.2 s=0.2.1");
	expect_channel(&r, "fast-v1.0", "1.0.1");
	expect_channel(&r, "fast-v1.1", "1.1.0 r=1.0.1");
	expect_channel(&r, "stable-v1.0", "1.0.1");
	fbc_template_result_dispose(&r);
}

static void fbc_template_render__semver_example2_v146(void **state)
{
	(void)state;
	fbc_template_result r = {NULL};
	fbc_error err;
	const char *t = "schema: olm.semver\nGenerateMajorChannels: true\nGenerateMinorChannels: "
			"false\n" EX1_CANDIDATE EX1_FAST EX1_STABLE;
	assert_int_equal(render(&r, t, FBC_TEMPLATE_SEMVER, FBC_SEMVER_RULES_V146, &err), 0);
	expect_channel(
		&r, "candidate-v0",
		"0.1.0; 0.1.1; 0.1.2; 0.1.3 s=0.1.0,0.1.1,0.1.2; 0.2.0; 0.2.1; 0.2.2 r=0.1.3 "
		"s=0.1.3,0.2.0,0.2.1; 0.3.0 r=0.2.2 s=0.2.2");
	expect_channel(&r, "candidate-v1", "1.0.0; 1.0.1 s=1.0.0; 1.1.0 r=1.0.1 s=1.0.1");
	expect_channel(&r, "fast-v0", "0.2.1; 0.2.2 s=0.2.1; 0.3.0 r=0.2.2 s=0.2.2");
	expect_channel(&r, "fast-v1", "1.0.1; 1.1.0 r=1.0.1 s=1.0.1");
	expect_channel(&r, "stable-v1", "1.0.1");
	assert_string_equal(default_channel(&r), "stable-v1");
	fbc_template_result_dispose(&r);
	/* minor: heads skip the rest of their channel, no replaces at all */
	t = "schema: olm.semver\n" EX1_CANDIDATE EX1_FAST EX1_STABLE;
	assert_int_equal(render(&r, t, FBC_TEMPLATE_SEMVER, FBC_SEMVER_RULES_V146, &err), 0);
	expect_channel(&r, "candidate-v0.2", "0.2.0; 0.2.1; 0.2.2 s=0.2.0,0.2.1");
	expect_channel(&r, "candidate-v0.3", "0.3.0");
	assert_string_equal(default_channel(&r), "stable-v1.0");
	fbc_template_result_dispose(&r);
}

static void fbc_template_render__semver_example4_default_channel_and_yaml(void **state)
{
	(void)state;
	fbc_template_result r = {NULL};
	fbc_error err;
	const char *t = "schema: olm.semver\ngenerateMajorChannels: true\ngenerateMinorChannels: "
			"true\ndefaultChannelTypePreference: major\ncandidate:\n  bundles:\n  - "
			"image: q/demo:1.0.0\n  - image: q/demo:1.1.0\n  - image: "
			"q/demo:2.0.0-rc.1\nfast:\n  bundles:\n  - image: q/demo:1.0.0\n  - image: "
			"q/demo:1.0.1\n";
	assert_int_equal(render(&r, t, FBC_TEMPLATE_SEMVER, FBC_SEMVER_RULES_V171, &err), 0);
	fbc_buf b;
	fbc_buf_init(&b, 0);
	assert_int_equal(fbc_template_write_yaml(&b, &r, &err), 0);
	const char *want =
		"---\ndefaultChannel: fast-v1\nname: demo\nschema: olm.package\n---\nentries:\n- "
		"name: "
		"demo.v1.0.0\n- name: demo.v1.1.0\n  replaces: demo.v1.0.0\nname: candidate-v1\n"
		"package: demo\nschema: olm.channel\n---\nentries:\n- name: demo.v1.0.0\nname: "
		"candidate-v1.0\npackage: demo\nschema: olm.channel\n---\nentries:\n- name: "
		"demo.v1.1.0\n  replaces: demo.v1.0.0\nname: candidate-v1.1\npackage: "
		"demo\nschema: "
		"olm.channel\n---\nentries:\n- name: demo.v2.0.0-rc.1\nname: "
		"candidate-v2\npackage: "
		"demo\nschema: olm.channel\n---\nentries:\n- name: demo.v2.0.0-rc.1\nname: "
		"candidate-v2.0\npackage: demo\nschema: olm.channel\n---\nentries:\n- name: "
		"demo.v1.0.0\n- name: demo.v1.0.1\n  skips:\n  - demo.v1.0.0\nname: fast-v1\n"
		"package: demo\nschema: olm.channel\n---\nentries:\n- name: demo.v1.0.0\n- name: "
		"demo.v1.0.1\n  skips:\n  - demo.v1.0.0\nname: fast-v1.0\npackage: demo\nschema: "
		"olm.channel\n---\nimage: q/demo:1.0.0\n";
	if (strncmp(b.data, want, strlen(want)) != 0)
		fprintf(stderr, "got:\n%s\n", b.data);
	assert_memory_equal(b.data, want, strlen(want));
	fbc_buf_dispose(&b);
	fbc_template_result_dispose(&r);

	/* only candidate 0.0.0-alpha: defaultChannel stays "" */
	t = "schema: olm.semver\ncandidate:\n  bundles:\n  - image: q/demo:0.0.0-alpha\n";
	assert_int_equal(render(&r, t, FBC_TEMPLATE_SEMVER, FBC_SEMVER_RULES_V171, &err), 0);
	assert_string_equal(default_channel(&r), "");
	fbc_template_result_dispose(&r);
	/* candidate-v1.1 created at 1.1.0 beats candidate-v1.0 */
	t = "schema: olm.semver\ncandidate:\n  bundles:\n  - image: q/demo:1.0.0\n  - image: "
	    "q/demo:1.1.0\n";
	assert_int_equal(render(&r, t, FBC_TEMPLATE_SEMVER, FBC_SEMVER_RULES_V171, &err), 0);
	assert_string_equal(default_channel(&r), "candidate-v1.1");
	fbc_template_result_dispose(&r);
}

static void expect_fail(const char *t, fbc_template_type type, const char *msg, const char *where)
{
	fbc_template_result r = {NULL};
	fbc_error err;
	int rc = render(&r, t, type, FBC_SEMVER_RULES_V171, &err);
	if (rc == 0 || strstr(err.message, msg) == NULL || strcmp(err.where, where) != 0)
		fprintf(stderr, "rc %d where '%s' message '%s'\nwant '%s' at '%s'\n", rc, err.where,
			err.message, msg, where);
	assert_int_not_equal(rc, 0);
	assert_non_null(strstr(err.message, msg));
	assert_string_equal(err.where, where);
	assert_null(r.blobs);
}

static void fbc_template_render__semver_errors(void **state)
{
	(void)state;
	expect_fail("schema: olm.semver\nstable:\n  bundles:\n  - image: q/demo:1.0.1\n  - image: "
		    "q/demo:1.0.1+build.1\n",
		    FBC_TEMPLATE_SEMVER, "differ only by build metadata", "t.yaml:5");
	expect_fail(
		"schema: olm.semver\ngenerateMajorChannels: true\ngenerateMinorChannels: "
		"false\ndefaultChannelTypePreference: minor\nstable:\n  bundles:\n  - image: "
		"q/demo:1.0.1\n",
		FBC_TEMPLATE_SEMVER,
		"schema attribute mismatch: DefaultChannelTypePreference set to 'minor' doesn't "
		"make sense if not generating minor-version channels",
		"t.yaml:4");
	expect_fail("schema: olm.semver\ndefaultChannelTypePreference: patch\n",
		    FBC_TEMPLATE_SEMVER, "unknown DefaultChannelTypePreference: \"patch\"",
		    "t.yaml:2");
	expect_fail("schema: olm.semver\nBeta:\n  bundles: []\n", FBC_TEMPLATE_SEMVER,
		    "json: unknown field \"Beta\"", "t.yaml:2");
	expect_fail(
		"schema: olm.semver\nstable:\n  bundles:\n  - image: q/demo:1.0.1\n    tag: x\n",
		FBC_TEMPLATE_SEMVER, "json: unknown field \"tag\"", "t.yaml:5");
	expect_fail("schema: olm.other\n", FBC_TEMPLATE_SEMVER,
		    "readFile: input file has unknown schema, should be \"olm.semver\"",
		    "t.yaml:1");
	expect_fail("schema: olm.semver\n", FBC_TEMPLATE_SEMVER,
		    "render: no bundles specified or no bundles could be rendered", "t.yaml:1");
	expect_fail("schema: olm.semver\nstable:\n  bundles:\n  - image: q/demo:1.0.0\n  - image: "
		    "q/demo:1.0.0\n",
		    FBC_TEMPLATE_SEMVER, "duplicate bundle name \"demo.v1.0.0\"", "t.yaml:5");
	expect_fail("schema: olm.semver\nstable:\n  bundles:\n  - image: q/demo:1.0.0\n  - image: "
		    "q/other:1.0.0\n",
		    FBC_TEMPLATE_SEMVER,
		    "bundle \"other\" does not belong to this package: \"demo\"", "t.yaml:5");
	expect_fail("schema: olm.semver\nstable:\n  bundles:\n  - image: q/demo:9.9.9\n",
		    FBC_TEMPLATE_SEMVER, "render reference \"q/demo:9.9.9\": cannot resolve image",
		    "t.yaml:4");
	/* the same bundle in two archetypes is fine */
	fbc_template_result r = {NULL};
	fbc_error err;
	assert_int_equal(render(&r,
				"schema: olm.semver\nfast:\n  bundles:\n  - image: q/demo:1.0.0\n"
				"stable:\n  bundles:\n  - image: q/demo:1.0.0\n",
				FBC_TEMPLATE_SEMVER, FBC_SEMVER_RULES_V171, &err),
			 0);
	fbc_template_result_dispose(&r);
}

static void fbc_template_render__basic_example_and_rules(void **state)
{
	(void)state;
	fbc_template_result r = {NULL};
	fbc_error err;
	const char *t = "---\nschema: olm.template.basic\nname: ignored-top-level-key\nentries:\n"
			"- schema: olm.package\n  name: demo\n  defaultChannel: stable\n  icon: "
			"{base64data: \"iVBO\\nRw0K\", mediaType: image/png}\n"
			"- schema: olm.channel\n  package: demo\n  name: stable\n  entries:\n"
			"  - name: demo.v1.1.0\n    replaces: demo.v1.0.0\n    skipRange: '>=0.9.0 "
			"<1.1.0'\n    foo: dropped\n  - name: demo.v1.0.0\n"
			"- {schema: olm.channel, package: demo, name: alpha, entries: []}\n"
			"- {schema: olm.bundle, image: \"q/demo:1.1.0\"}\n"
			"- {schema: olm.bundle, image: \"q/demo:1.0.0\"}\n";
	assert_int_equal(render(&r, t, FBC_TEMPLATE_BASIC, FBC_SEMVER_RULES_V171, &err), 0);
	fbc_buf b;
	fbc_buf_init(&b, 0);
	assert_int_equal(fbc_template_write_yaml(&b, &r, &err), 0);
	const char *want =
		"---\ndefaultChannel: stable\nicon:\n  base64data: iVBORw0K\n  mediatype: "
		"image/png\n"
		"name: demo\nschema: olm.package\n---\nentries: []\nname: alpha\npackage: demo\n"
		"schema: olm.channel\n---\nentries:\n- name: demo.v1.1.0\n  replaces: demo.v1.0.0\n"
		"  skipRange: '>=0.9.0 <1.1.0'\n- name: demo.v1.0.0\nname: stable\npackage: demo\n"
		"schema: olm.channel\n---\nimage: q/demo:1.0.0\nname: demo.v1.0.0\npackage: demo\n"
		"properties:\n- type: olm.package\n  value:\n    packageName: demo\n    version: "
		"1.0.0\n- type: olm.csv.metadata\n  value:\n    displayName: "
		"Demo\nrelatedImages:\n- "
		"image: q/demo:1.0.0\n  name: \"\"\nschema: olm.bundle\n---\nimage: q/demo:1.1.0\n";
	if (strncmp(b.data, want, strlen(want)) != 0)
		fprintf(stderr, "got:\n%s\n", b.data);
	assert_memory_equal(b.data, want, strlen(want));
	/* -o json: struct order, 4-space indent */
	fbc_buf_reset(&b);
	assert_int_equal(fbc_template_write_json(&b, &r, &err), 0);
	assert_non_null(strstr(b.data,
			       "{\n    \"schema\": \"olm.package\",\n    \"name\": \"demo\",\n"
			       "    \"defaultChannel\": \"stable\",\n    \"icon\": {\n"
			       "        \"base64data\": \"iVBORw0K\",\n"));
	assert_non_null(strstr(b.data, "\"skipRange\": \">=0.9.0 <1.1.0\""));
	fbc_buf_dispose(&b);
	fbc_template_result_dispose(&r);

	/* type from the document's schema; JSON input */
	assert_int_equal(render(&r, "{\"schema\":\"olm.template.basic\",\"entries\":[]}",
				FBC_TEMPLATE_AUTO, FBC_SEMVER_RULES_V171, &err),
			 0);
	assert_int_equal(json_array_size(r.blobs), 0);
	fbc_template_result_dispose(&r);
	/* unknown schemas are kept as "other" blobs, after bundles */
	assert_int_equal(render(&r,
				"schema: olm.template.basic\nentries:\n- {schema: zz.custom, "
				"package: demo, x: 1}\n- {schema: olm.package, name: demo}\n",
				FBC_TEMPLATE_BASIC, FBC_SEMVER_RULES_V171, &err),
			 0);
	assert_int_equal(json_array_size(r.blobs), 2);
	assert_string_equal(
		json_string_value(json_object_get(json_array_get(r.blobs, 1), "schema")),
		"zz.custom");
	fbc_template_result_dispose(&r);
}

static void fbc_template_render__basic_errors(void **state)
{
	(void)state;
	expect_fail(
		"schema: olm.semver\nentries: []\n", FBC_TEMPLATE_BASIC,
		"template has unknown schema (\"olm.semver\"), should be \"olm.template.basic\"",
		"t.yaml:1");
	expect_fail("schema: olm.nope\n", FBC_TEMPLATE_AUTO, "unknown template schema: olm.nope",
		    "t.yaml:1");
	expect_fail("entries: []\n", FBC_TEMPLATE_AUTO,
		    "template input missing required 'schema' field", "t.yaml:1");
	expect_fail("schema: olm.template.basic\nentries:\n- name: demo\n", FBC_TEMPLATE_BASIC,
		    "is missing root schema field", "t.yaml:3");
	expect_fail("schema: olm.template.basic\nentries:\n- schema: olm.bundle\n  image: "
		    "q/demo:1.0.0\n  package: demo\n",
		    FBC_TEMPLATE_BASIC, "unexpected fields present in basic template bundle",
		    "t.yaml:4");
	expect_fail("schema: olm.template.basic\nentries:\n- {schema: olm.package, name: a, Name: "
		    "b}\n",
		    FBC_TEMPLATE_BASIC, "duplicate keys for key \"name\"", "t.yaml:3");
	expect_fail("schema: olm.template.basic\nentries:\n- {schema: olm.package, name: 3}\n",
		    FBC_TEMPLATE_BASIC, "expected value for key \"name\" to be a string",
		    "t.yaml:3");
	expect_fail("schema: olm.template.basic\nentries:\n- {schema: olm.package, name: p, icon: "
		    "{base64data: \"!!\"}}\n",
		    FBC_TEMPLATE_BASIC, "parse package: illegal base64 data at input byte 0",
		    "t.yaml:3");
	expect_fail("schema: olm.template.basic\nentries:\n- schema: olm.bundle\n  image: "
		    "q/nowhere:1.0.0\n",
		    FBC_TEMPLATE_BASIC,
		    "render reference \"q/nowhere:1.0.0\": cannot resolve image", "t.yaml:4");
	expect_fail("schema: [unclosed\n", FBC_TEMPLATE_BASIC, "decoding template schema",
		    "t.yaml:2");
}

static void fbc_template_compare__first_differing_blob(void **state)
{
	(void)state;
	fbc_template_diff d;
	const char *a = "---\na: 1\n---\nb: 2\nc: 3\n";
	fbc_template_compare(&d, a, strlen(a), a, strlen(a));
	assert_true(d.same);
	const char *b = "---\na: 1\n---\nb: 2\nc: 4\n";
	fbc_template_compare(&d, a, strlen(a), b, strlen(b));
	assert_false(d.same);
	assert_int_equal(d.blob, 1);
	assert_int_equal(d.line, 3);
}

static void fbc_template_catalog_migrate__v4_17_and_later(void **state)
{
	(void)state;
	assert_int_equal(fbc_template_catalog_migrate("v4.16"), FBC_BUNDLE_MIGRATE_NONE);
	assert_int_equal(fbc_template_catalog_migrate("v4.17"), FBC_BUNDLE_MIGRATE_CSV_METADATA);
	assert_int_equal(fbc_template_catalog_migrate("4.22"), FBC_BUNDLE_MIGRATE_CSV_METADATA);
	assert_int_equal(fbc_template_catalog_migrate("v5.0"), FBC_BUNDLE_MIGRATE_CSV_METADATA);
	assert_int_equal(fbc_template_catalog_migrate("v4.17-beta"), FBC_BUNDLE_MIGRATE_NONE);
	assert_int_equal(fbc_template_catalog_migrate("stable"), FBC_BUNDLE_MIGRATE_NONE);
}

static void fbc_template_ci_parse__mapping(void **state)
{
	(void)state;
	const char *y = "reviewers: [a]\nfbc:\n  enabled: true\n  catalog_mapping:\n"
			"    - template_name: basic.yaml\n      type: olm.template.basic\n"
			"      catalog_names: [\"v4.18\", v4.19]\n"
			"    - template_name: semver.yaml\n      type: olm.semver\n"
			"      catalog_names:\n      - v4.20\n";
	fbc_template_ci ci;
	fbc_error err;
	fbc_error_init(&err);
	assert_int_equal(fbc_template_ci_parse(&ci, y, strlen(y), "ci.yaml", &err), 0);
	assert_true(ci.enabled);
	assert_int_equal(ci.nmaps, 2);
	assert_string_equal(ci.maps[0].template_name, "basic.yaml");
	assert_int_equal(ci.maps[0].type, FBC_TEMPLATE_BASIC);
	assert_int_equal(ci.maps[0].ncatalogs, 2);
	assert_string_equal(ci.maps[0].catalogs[1], "v4.19");
	assert_int_equal(ci.maps[1].type, FBC_TEMPLATE_SEMVER);
	fbc_template_ci_dispose(&ci);
	const char *bad =
		"fbc:\n  catalog_mapping:\n  - template_name: x.yaml\n    type: olm.nope\n"
		"    catalog_names: [v4.18]\n";
	assert_int_not_equal(fbc_template_ci_parse(&ci, bad, strlen(bad), "ci.yaml", &err), 0);
	assert_string_equal(err.where, "ci.yaml:3");
	const char *none = "reviewers: [a]\n";
	assert_int_equal(fbc_template_ci_parse(&ci, none, strlen(none), "ci.yaml", &err), 0);
	assert_false(ci.enabled);
	assert_int_equal(ci.nmaps, 0);
	fbc_template_ci_dispose(&ci);
}

static void fbc_template_add_bundle__create_and_amend(void **state)
{
	(void)state;
	fbc_template_release rel;
	fbc_error err;
	fbc_error_init(&err);
	const char *rc = "catalog_templates:\n- template_name: basic.yaml\n  channels: [stable, "
			 "fast]\n  defaultChannel: fast\n  replaces: op.v1.0.0\n  skipRange: "
			 "'>=0.9.0 <1.1.0'\n";
	assert_int_equal(fbc_template_release_parse(&rel, rc, strlen(rc), "rc.yaml", &err), 0);
	assert_int_equal(fbc_template_release_count(&rel), 1);
	assert_string_equal(fbc_template_release_template(&rel, 0), "basic.yaml");
	/* create */
	json_t *doc = NULL;
	assert_int_equal(fbc_template_add_bundle(&doc, &rel, 0, FBC_TEMPLATE_BASIC, "op",
						 "q/op:1.1.0", "op.v1.1.0", &err),
			 0);
	char *d = json_dumps(doc, JSON_COMPACT);
	assert_string_equal(
		d,
		"{\"schema\":\"olm.template.basic\",\"entries\":[{\"schema\":\"olm.package\","
		"\"name\":\"op\",\"defaultChannel\":\"fast\"},{\"schema\":\"olm.channel\",\"name\":"
		"\"stable\",\"package\":\"op\",\"entries\":[{\"name\":\"op.v1.1.0\",\"replaces\":"
		"\"op.v1.0.0\",\"skipRange\":\">=0.9.0 <1.1.0\"}]},{\"schema\":\"olm.channel\","
		"\"name\":\"fast\",\"package\":\"op\",\"entries\":[{\"name\":\"op.v1.1.0\","
		"\"replaces\":\"op.v1.0.0\",\"skipRange\":\">=0.9.0 <1.1.0\"}]},{\"schema\":"
		"\"olm.bundle\",\"image\":\"q/op:1.1.0\"}]}");
	free(d);
	json_decref(doc);
	/* amend: defaultChannel unchanged, missing channel appended at the end, entry appended,
	 * bundle appended once; a second application changes nothing */
	json_error_t jerr;
	doc = json_loads(
		"{\"schema\":\"olm.template.basic\",\"entries\":[{\"schema\":"
		"\"olm.package\",\"name\":\"op\",\"defaultChannel\":\"stable\"},{\"schema\":"
		"\"olm.channel\",\"name\":\"stable\",\"package\":\"op\",\"entries\":[{\"name\":"
		"\"op.v1.0.0\"}]},{\"schema\":\"olm.bundle\",\"image\":\"q/op:1.0.0\"}]}",
		0, &jerr);
	assert_non_null(doc);
	for (int k = 0; k < 2; k++)
		assert_int_equal(fbc_template_add_bundle(&doc, &rel, 0, FBC_TEMPLATE_BASIC, "op",
							 "q/op:1.1.0", "op.v1.1.0", &err),
				 0);
	d = json_dumps(doc, JSON_COMPACT);
	assert_string_equal(
		d,
		"{\"schema\":\"olm.template.basic\",\"entries\":[{\"schema\":\"olm.package\","
		"\"name\":\"op\",\"defaultChannel\":\"stable\"},{\"schema\":\"olm.channel\","
		"\"name\":"
		"\"stable\",\"package\":\"op\",\"entries\":[{\"name\":\"op.v1.0.0\"},{\"name\":"
		"\"op.v1.1.0\",\"replaces\":\"op.v1.0.0\",\"skipRange\":\">=0.9.0 <1.1.0\"}]},"
		"{\"schema\":\"olm.bundle\",\"image\":\"q/op:1.0.0\"},{\"schema\":\"olm.channel\","
		"\"name\":\"fast\",\"package\":\"op\",\"entries\":[{\"name\":\"op.v1.1.0\","
		"\"replaces\":\"op.v1.0.0\",\"skipRange\":\">=0.9.0 <1.1.0\"}]},{\"schema\":"
		"\"olm.bundle\",\"image\":\"q/op:1.1.0\"}]}");
	free(d);
	json_decref(doc);
	doc = NULL;
	/* semver: only Candidate, Fast, Stable */
	assert_int_not_equal(fbc_template_add_bundle(&doc, &rel, 0, FBC_TEMPLATE_SEMVER, "op",
						     "q/op:1.1.0", "op.v1.1.0", &err),
			     0);
	assert_null(doc);
	fbc_template_release_dispose(&rel);
	const char *bad = "catalog_templates:\n- template_name: b.yaml\n  channels: []\n";
	assert_int_not_equal(fbc_template_release_parse(&rel, bad, strlen(bad), "rc.yaml", &err),
			     0);
	assert_string_equal(err.where, "rc.yaml:2");
}

static void fbc_template_render_tree_yaml__sources_from_trees(void **state)
{
	(void)state;
	/* a git-like tree: a catalog with one bundle blob and a template */
	const char *paths[] = {"catalogs/v4.18/demo/catalog.json", "templates/basic.yaml"};
	const char *data[] = {
		"{\"schema\":\"olm.bundle\",\"name\":\"demo.v3.0.0\",\"package\":\"demo\","
		"\"image\":\"t/demo:3.0.0\",\"properties\":[{\"type\":\"olm.package\",\"value\":"
		"{\"packageName\":\"demo\",\"version\":\"3.0.0\"}},{\"type\":\"olm.csv.metadata\","
		"\"value\":{}}]}\n",
		"schema: olm.template.basic\nentries:\n- {schema: olm.package, name: demo}\n"
		"- {schema: olm.bundle, image: t/demo:3.0.0}\n"};
	size_t lens[] = {strlen(data[0]), strlen(data[1])};
	fbc_tree *t = NULL;
	fbc_template_sources *s = NULL;
	fbc_error err;
	fbc_error_init(&err);
	assert_int_equal(fbc_tree_open_mem(&t, paths, data, lens, 2, "mem", &err), 0);
	assert_int_equal(fbc_template_sources_create(&s, &err), 0);
	assert_int_equal(fbc_template_sources_add_fbc_tree(s, t, "catalogs", &err), 0);
	assert_int_equal(fbc_template_sources_images(s), 1);
	fbc_buf b;
	fbc_buf_init(&b, 0);
	assert_int_equal(fbc_template_render_tree_yaml(&b, t, "templates/basic.yaml",
						       FBC_TEMPLATE_AUTO, "v4.18",
						       FBC_SEMVER_RULES_V171, s, &err),
			 0);
	assert_string_equal(b.data,
			    "---\ndefaultChannel: \"\"\nname: demo\nschema: olm.package\n---\n"
			    "image: t/demo:3.0.0\nname: demo.v3.0.0\npackage: demo\n"
			    "properties:\n- type: olm.package\n  value:\n    packageName: "
			    "demo\n    version: 3.0.0\n- type: olm.csv.metadata\n  value: {}\n"
			    "schema: olm.bundle\n");
	/* below v4.17 the bundle.object form is needed: the csv.metadata blob does not do */
	fbc_buf_reset(&b);
	assert_int_equal(fbc_template_render_tree_yaml(&b, t, "templates/basic.yaml",
						       FBC_TEMPLATE_AUTO, "v4.16",
						       FBC_SEMVER_RULES_V171, s, &err),
			 FBC_ENOTFOUND);
	assert_string_equal(err.where, "templates/basic.yaml:4");
	assert_int_not_equal(fbc_template_render_tree_yaml(&b, t, "templates/none.yaml",
							   FBC_TEMPLATE_AUTO, "v4.18",
							   FBC_SEMVER_RULES_V171, s, &err),
			     0);
	fbc_buf_dispose(&b);
	fbc_template_sources_free(s);
	fbc_tree_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(fbc_template_render__semver_example1_major_v171),
		cmocka_unit_test(fbc_template_render__semver_example1_minor_v171),
		cmocka_unit_test(fbc_template_render__semver_example2_v146),
		cmocka_unit_test(fbc_template_render__semver_example4_default_channel_and_yaml),
		cmocka_unit_test(fbc_template_render__semver_errors),
		cmocka_unit_test(fbc_template_render__basic_example_and_rules),
		cmocka_unit_test(fbc_template_render__basic_errors),
		cmocka_unit_test(fbc_template_compare__first_differing_blob),
		cmocka_unit_test(fbc_template_catalog_migrate__v4_17_and_later),
		cmocka_unit_test(fbc_template_ci_parse__mapping),
		cmocka_unit_test(fbc_template_add_bundle__create_and_amend),
		cmocka_unit_test(fbc_template_render_tree_yaml__sources_from_trees),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
