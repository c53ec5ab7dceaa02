/* service/bundle: reading and rendering (bundles.md §2-§5), the B errors (§6.1). */
#include "bundle_test.h"

#include "service/base/base64.h"
#include "service/gojson/gojson.h"

/* The worked example of bundles.md §3.8 (opm's foo-bundle-v0.2.0 test bundle). */
static const char *const foo_files[] = {
	"manifests/foo.v0.2.0.csv.yaml",
	"---\napiVersion: operators.coreos.com/v1alpha1\nkind: ClusterServiceVersion\n"
	"metadata:\n  name: foo.v0.2.0\n  annotations:\n    olm.skipRange: <0.2.0\n"
	"spec:\n  displayName: \"Foo Operator\"\n  customresourcedefinitions:\n    owned:\n"
	"      - group: test.foo\n        version: v1\n        kind: Foo\n"
	"        name: foos.test.foo\n  version: 0.2.0\n  replaces: foo.v0.1.0\n"
	"  skips:\n    - foo.v0.1.1\n    - foo.v0.1.2\n  install:\n    strategy: deployment\n"
	"    spec:\n      deployments:\n        - name: foo-operator\n          spec:\n"
	"            template:\n              spec:\n                initContainers:\n"
	"                  - image: test.registry/foo-operator/foo-init:v0.2.0\n"
	"                containers:\n                  - image: "
	"test.registry/foo-operator/foo:v0.2.0\n"
	"        - name: foo-operator-2\n          spec:\n            template:\n"
	"              spec:\n                initContainers:\n"
	"                  - image: test.registry/foo-operator/foo-init-2:v0.2.0\n"
	"                containers:\n"
	"                  - image: test.registry/foo-operator/foo-2:v0.2.0\n"
	"  relatedImages:\n    - name: operator\n      image: "
	"test.registry/foo-operator/foo:v0.2.0\n"
	"    - name: other\n      image: test.registry/foo-operator/foo-other:v0.2.0\n",
	"manifests/foos.test.foo.crd.yaml",
	"---\napiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n"
	"  name: foos.test.foo\nspec:\n  group: test.foo\n  names:\n    kind: Foo\n    plural: "
	"foos\n"
	"  versions:\n    - name: v1\n      served: true\n      storage: true\n",
	"metadata/annotations.yaml",
	"annotations:\n  operators.operatorframework.io.bundle.package.v1: foo\n"
	"  operators.operatorframework.io.bundle.channels.v1: beta\n",
	"metadata/dependencies.yaml",
	"dependencies:\n  - type: olm.package\n    value:\n      packageName: bar\n"
	"      version: '<0.1.0'\n  - type: olm.gvk\n    value:\n      group: test.bar\n"
	"      kind: Bar\n      version: v1alpha1\n",
	NULL};

static const char foo_expected[] =
	"{\n    \"schema\": \"olm.bundle\",\n    \"name\": \"foo.v0.2.0\",\n    \"package\": "
	"\"foo\",\n"
	"    \"image\": \"test.registry/foo-operator/foo:v0.2.0\",\n    \"properties\": [\n"
	"        {\n            \"type\": \"olm.gvk\",\n            \"value\": {\n"
	"                \"group\": \"test.foo\",\n                \"kind\": \"Foo\",\n"
	"                \"version\": \"v1\"\n            }\n        },\n"
	"        {\n            \"type\": \"olm.gvk.required\",\n            \"value\": {\n"
	"                \"group\": \"test.bar\",\n                \"kind\": \"Bar\",\n"
	"                \"version\": \"v1alpha1\"\n            }\n        },\n"
	"        {\n            \"type\": \"olm.package\",\n            \"value\": {\n"
	"                \"packageName\": \"foo\",\n                \"version\": \"0.2.0\"\n"
	"            }\n        },\n"
	"        {\n            \"type\": \"olm.package.required\",\n            \"value\": {\n"
	"                \"packageName\": \"bar\",\n                \"versionRange\": \"<0.1.0\"\n"
	"            }\n        },\n"
	"        {\n            \"type\": \"olm.bundle.object\",\n            \"value\": {\n"
	"                \"data\": \"eyJhcGlWZXJzaW9uIjoiYXBpZXh0ZW5zaW9ucy5r…\"\n            }\n"
	"        },\n"
	"        {\n            \"type\": \"olm.bundle.object\",\n            \"value\": {\n"
	"                \"data\": \"eyJhcGlWZXJzaW9uIjoib3BlcmF0b3JzLmNvcmVv…\"\n            }\n"
	"        }\n    ],\n    \"relatedImages\": [\n"
	"        {\n            \"name\": \"\",\n"
	"            \"image\": \"test.registry/foo-operator/foo-2:v0.2.0\"\n        },\n"
	"        {\n            \"name\": \"\",\n"
	"            \"image\": \"test.registry/foo-operator/foo-init-2:v0.2.0\"\n        },\n"
	"        {\n            \"name\": \"\",\n"
	"            \"image\": \"test.registry/foo-operator/foo-init:v0.2.0\"\n        },\n"
	"        {\n            \"name\": \"other\",\n"
	"            \"image\": \"test.registry/foo-operator/foo-other:v0.2.0\"\n        },\n"
	"        {\n            \"name\": \"operator\",\n"
	"            \"image\": \"test.registry/foo-operator/foo:v0.2.0\"\n        }\n    ]\n}\n";

/* Cut every "data": "<base64>" to 40 characters and "…", as the spec prints it. */
static char *shorten_data(const char *s)
{
	fbc_buf b;
	const char *p;

	fbc_buf_init(&b, 0);
	while ((p = strstr(s, "\"data\": \"")) != NULL) {
		const char *q;
		p += 9;
		q = strchr(p, '"');
		fbc_buf_append(&b, s, (size_t)(p - s));
		fbc_buf_append(&b, p, q - p > 40 ? 40 : (size_t)(q - p));
		fbc_buf_puts(&b, "…");
		s = q;
	}
	fbc_buf_puts(&b, s);
	return fbc_buf_detach(&b, NULL);
}

static void fbc_bundle_render__worked_example(void **state)
{
	fbc_bundle_dir *b = bt_read(foo_files);
	fbc_buf out;
	fbc_error err;
	bool w = false;
	char *shortened;
	json_t *blob, *props, *p;
	size_t i;

	(void)state;
	fbc_buf_init(&out, 0);
	fbc_error_init(&err);
	assert_int_equal(fbc_bundle_render_json(&out, &w, b,
						"test.registry/foo-operator/foo:v0.2.0",
						FBC_BUNDLE_MIGRATE_NONE, &err),
			 0);
	assert_true(w);
	shortened = shorten_data(out.data);
	assert_string_equal(shortened, foo_expected);
	free(shortened);
	/* each bundle object is the Go JSON (HTML-escaped: `<0.2.0`) of its manifest */
	blob = json_loads(out.data, 0, NULL);
	props = json_object_get(blob, "properties");
	json_array_foreach(props, i, p)
	{
		const char *data =
			json_string_value(json_object_get(json_object_get(p, "value"), "data"));
		unsigned char *dec = NULL;
		size_t n, bad;
		if (data == NULL)
			continue;
		assert_int_equal(fbc_base64_decode(&dec, &n, &bad, data, strlen(data)), 0);
		if (strstr((char *)dec, "ClusterServiceVersion"))
			assert_non_null(strstr((char *)dec, "\"olm.skipRange\":\"\\u003c0.2.0\""));
		free(dec);
	}
	json_decref(blob);
	/* accessors for add mode */
	assert_string_equal(fbc_bundle_package(b), "foo");
	assert_string_equal(fbc_bundle_name(b), "foo.v0.2.0");
	assert_string_equal(fbc_bundle_version(b), "0.2.0");
	assert_string_equal(fbc_bundle_replaces(b), "foo.v0.1.0");
	assert_string_equal(fbc_bundle_skip_range(b), "<0.2.0");
	assert_int_equal(fbc_bundle_skips_count(b), 2);
	assert_string_equal(fbc_bundle_skip(b, 1), "foo.v0.1.2");
	assert_int_equal(fbc_bundle_channels_count(b), 1);
	assert_string_equal(fbc_bundle_channel(b, 0), "beta");
	assert_string_equal(fbc_bundle_default_channel(b), "");
	fbc_buf_dispose(&out);
	fbc_bundle_free(b);
}

static void fbc_bundle_render__plain_directory_has_empty_image(void **state)
{
	fbc_bundle_dir *b = bt_read(foo_files);
	fbc_error err;
	char *s = bt_render(b, "", FBC_BUNDLE_MIGRATE_CSV_METADATA, &err);

	(void)state;
	assert_non_null(s);
	assert_non_null(strstr(s, "\"image\":\"\""));
	/* no image: the migration does nothing (§4.1) */
	assert_non_null(strstr(s, "olm.bundle.object"));
	assert_null(strstr(s, "olm.csv.metadata"));
	assert_null(strstr(s, "\"image\":\"\"}")); /* the bundle image is not a related image */
	free(s);
	fbc_bundle_free(b);
}

static void fbc_bundle_render__csv_metadata_migration(void **state)
{
	fbc_bundle_dir *b = bt_read(foo_files);
	fbc_error err;
	char *s = bt_render(b, "quay.io/x/foo:v0.2.0", FBC_BUNDLE_MIGRATE_CSV_METADATA, &err);
	json_t *blob, *props, *last;

	(void)state;
	assert_non_null(s);
	blob = json_loads(s, 0, NULL);
	props = json_object_get(blob, "properties");
	last = json_array_get(props, json_array_size(props) - 1);
	assert_string_equal(json_string_value(json_object_get(last, "type")), "olm.csv.metadata");
	assert_null(strstr(s, "olm.bundle.object"));
	/* members in Go struct order, unescaped, {} for empty definitions and provider */
	assert_non_null(strstr(s, "{\"type\":\"olm.csv.metadata\",\"value\":{\"annotations\":"
				  "{\"olm.skipRange\":\"<0.2.0\"},\"apiServiceDefinitions\":{},"
				  "\"crdDescriptions\":{\"owned\":[{\"name\":\"foos.test.foo\","
				  "\"version\":\"v1\",\"kind\":\"Foo\"}]},\"displayName\":\"Foo "
				  "Operator\",\"provider\":{}}}"));
	/* the image being rendered is added to relatedImages (§3.6 step 3) */
	assert_non_null(strstr(s, "{\"name\":\"\",\"image\":\"quay.io/x/foo:v0.2.0\"}"));
	json_decref(blob);
	free(s);
	fbc_bundle_free(b);
}

static void fbc_bundle_migrate_parse__levels(void **state)
{
	fbc_bundle_migrate m;
	fbc_error err;

	(void)state;
	fbc_error_init(&err);
	assert_int_equal(fbc_bundle_migrate_parse(&m, "none", &err), 0);
	assert_int_equal(m, FBC_BUNDLE_MIGRATE_NONE);
	assert_int_equal(fbc_bundle_migrate_parse(&m, "bundle-object-to-csv-metadata", &err), 0);
	assert_int_equal(m, FBC_BUNDLE_MIGRATE_CSV_METADATA);
	assert_int_equal(fbc_bundle_migrate_parse(&m, "bogus", &err), FBC_EINVAL);
	assert_string_equal(err.message, "unknown migration level \"bogus\"");
}

/* Render a bundle of CSV + annotations; the rendered text or the error. */
static char *render_files(const char *const *files, const char *image, fbc_error *err)
{
	fbc_bundle_dir *b = bt_read(files);
	char *s = bt_render(b, image, FBC_BUNDLE_MIGRATE_NONE, err);

	fbc_bundle_free(b);
	return s;
}

static void expect_error(const char *const *files, const char *want)
{
	fbc_error err;
	char *s = render_files(files, "", &err);

	if (s != NULL)
		fprintf(stderr, "rendered: %.300s\n", s);
	assert_null(s);
	if (strstr(err.message, want) == NULL)
		fprintf(stderr, "error: %s\nwant: %s\n", err.message, want);
	assert_non_null(strstr(err.message, want));
}

static void fbc_bundle_render__B2_no_objects(void **state)
{
	const char *const f[] = {"manifests/a.yaml", "# nothing\n", ANN_OK, NULL};
	const char *const ok[] = {
		"manifests/csv.yaml", CSV_OK, "manifests/crd.yaml", CRD_OK, ANN_OK, NULL};
	fbc_error err;
	char *s;

	(void)state;
	expect_error(f, "no bundle objects found");
	s = render_files(ok, "", &err);
	assert_non_null(s);
	free(s);
}

static void fbc_bundle_render__B3_no_csv(void **state)
{
	const char *const f[] = {"manifests/crd.yaml", CRD_OK, ANN_OK, NULL};
	(void)state;
	expect_error(f, "no csv in bundle");
}

static void fbc_bundle_render__B4_csv_meta_types(void **state)
{
	const char *const f[] = {"manifests/csv.yaml",
				 "apiVersion: operators.coreos.com/v1alpha1\nkind: "
				 "ClusterServiceVersion\nmetadata:\n  name: x\n  annotations:\n"
				 "    flag: true\nspec: {}\n",
				 ANN_OK, NULL};
	const char *const ts[] = {"manifests/csv.yaml",
				  "apiVersion: operators.coreos.com/v1alpha1\nkind: "
				  "ClusterServiceVersion\nmetadata:\n  name: x\n"
				  "  creationTimestamp: '2021-13'\nspec: {}\n",
				  ANN_OK, NULL};
	const char *const tsok[] = {"manifests/csv.yaml",
				    "apiVersion: operators.coreos.com/v1alpha1\nkind: "
				    "ClusterServiceVersion\nmetadata:\n  name: x\n"
				    "  creationTimestamp: '2021-01-02T03:04:05Z'\nspec: {}\n",
				    ANN_OK, NULL};
	(void)state;
	expect_error(f, "json: cannot unmarshal bool into Go struct field "
			"ClusterServiceVersion.metadata.annotations of type string");
	expect_error(ts, "cannot parse as RFC3339 (metadata.creationTimestamp)");
	/* a valid timestamp passes B4 */
	{
		fbc_error err;
		char *s = render_files(tsok, "", &err);
		assert_non_null(s);
		free(s);
	}
}

static void fbc_bundle_render__B5_crd_version(void **state)
{
	const char *const f[] = {"manifests/csv.yaml",
				 CSV_OK,
				 "manifests/crd.yaml",
				 "apiVersion: example.com/v1\nkind: CustomResourceDefinition\n"
				 "metadata:\n  name: a\n",
				 ANN_OK,
				 NULL};
	(void)state;
	expect_error(f, "error decoding v1 CRD: no kind \"CustomResourceDefinition\" is registered "
			"for version \"example.com/v1\"");
}

static void fbc_bundle_render__B6_B7_B8_spec_shapes(void **state)
{
	const char *const b6[] = {"manifests/csv.yaml", CSV_HEAD "spec: [1]\n", ANN_OK, NULL};
	const char *const b7[] = {"manifests/csv.yaml",
				  CSV_HEAD "spec:\n  apiservicedefinitions: {owned: 3}\n", ANN_OK,
				  NULL};
	const char *const b8[] = {"manifests/csv.yaml",
				  CSV_HEAD "spec:\n  customresourcedefinitions: [1]\n", ANN_OK,
				  NULL};
	(void)state;
	expect_error(b6, "error checking provided apis in bundle foo.v0.2.0: error getting "
			 "apiservice definitions: error unmarshaling into object map");
	expect_error(b7, "error getting apiservice definitions: json: cannot unmarshal number");
	expect_error(b8, "error checking provided apis in bundle foo.v0.2.0: json: cannot "
			 "unmarshal array");
}

static void fbc_bundle_render__B9_B10_owned_crds(void **state)
{
	const char *const b9[] = {"manifests/csv.yaml",
				  CSV_HEAD "spec:\n  customresourcedefinitions:\n    owned:\n"
					   "    - name: foos\n      version: v1\n      kind: Foo\n",
				  "manifests/crd.yaml",
				  CRD_OK,
				  ANN_OK,
				  NULL};
	const char *const b10[] = {"manifests/csv.yaml", CSV_OK, ANN_OK, NULL};
	const char *const b10k[] = {"manifests/csv.yaml",
				    CSV_HEAD "spec:\n  customresourcedefinitions:\n    owned:\n"
					     "    - name: foos.test.foo\n      version: v2\n"
					     "      kind: Foo\n",
				    "manifests/crd.yaml",
				    CRD_OK,
				    ANN_OK,
				    NULL};
	(void)state;
	expect_error(b9, "couldn't parse plural.group from crd name: foos");
	expect_error(b10, "couldn't find test.foo/v1/Foo (foos) in bundle. found: map[]");
	expect_error(b10k, "couldn't find test.foo/v2/Foo (foos) in bundle. found: "
			   "map[test.foo/v1/Foo (foos):{}]");
}

static void fbc_bundle_render__B11_no_annotations(void **state)
{
	const char *const f[] = {
		"manifests/csv.yaml",
		CSV_OK,
		"manifests/crd.yaml",
		CRD_OK,
		"metadata/annotations.yaml",
		"annotations:\n  operators.operatorframework.io.bundle.package.v1: "
		"''\n",
		NULL};
	(void)state;
	expect_error(f, "Could not find annotations file");
}

static void fbc_bundle_render__B12_B13_version_release(void **state)
{
	const char *const b12[] = {"manifests/csv.yaml", CSV_HEAD "spec:\n  version: 1\n", ANN_OK,
				   NULL};
	const char *const b13[] = {"manifests/csv.yaml",
				   CSV_HEAD "spec:\n  version: 1.0.0\n  release: [1]\n", ANN_OK,
				   NULL};
	const char *const rel[] = {"manifests/csv.yaml",
				   CSV_HEAD "spec:\n  version: 1.0.0\n  release: 5\n", ANN_OK,
				   NULL};
	fbc_error err;
	char *s;

	(void)state;
	expect_error(b12, "failed to derive properties: json: cannot unmarshal number into Go "
			  "value of type string");
	expect_error(b13, "failed to derive properties: release field must be a string or number");
	s = render_files(rel, "", &err);
	assert_non_null(s);
	assert_non_null(
		strstr(s, "{\"packageName\":\"foo\",\"version\":\"1.0.0\",\"release\":\"5\"}"));
	free(s);
}

static void fbc_bundle_render__B14_B15_property_shapes(void **state)
{
	const char *const b14[] = {
		"manifests/csv.yaml",	    CSV_HEAD "spec:\n  version: 1.0.0\n",	    ANN_OK,
		"metadata/properties.yaml", "properties:\n- type: olm.gvk\n  value: [1]\n", NULL};
	const char *const b15[] = {
		"manifests/csv.yaml",
		CSV_HEAD "spec:\n  version: 1.0.0\n",
		ANN_OK,
		"metadata/dependencies.yaml",
		"dependencies:\n- type: olm.package\n  value: {packageName: 5}\n",
		NULL};
	(void)state;
	expect_error(b14, "get properties for bundle \"foo.v0.2.0\": parse property[0] of type "
			  "\"olm.gvk\": json: cannot unmarshal array");
	expect_error(b15, "get properties for bundle \"foo.v0.2.0\": parse property[0] of type "
			  "\"olm.package\": json: cannot unmarshal number");
}

static void fbc_bundle_render__B16_required_crd_name(void **state)
{
	const char *const f[] = {"manifests/csv.yaml",
				 CSV_HEAD "spec:\n  version: 1.0.0\n  customresourcedefinitions:\n"
					  "    required:\n    - name: bars\n      version: v1\n"
					  "      kind: Bar\n",
				 ANN_OK, NULL};
	(void)state;
	expect_error(f, "get required apis: couldn't parse plural.group from crd name: bars");
}

static void fbc_bundle_render__B17_related_images(void **state)
{
	const char *const f[] = {"manifests/csv.yaml",
				 CSV_HEAD "spec:\n  version: 1.0.0\n  relatedImages: {a: b}\n",
				 ANN_OK, NULL};
	const char *const d[] = {"manifests/csv.yaml",
				 CSV_HEAD
				 "spec:\n  version: 1.0.0\n  install:\n    strategy: "
				 "deployment\n    spec:\n      deployments:\n      - name: x\n"
				 "        spec:\n          replicas: '1'\n",
				 ANN_OK, NULL};
	(void)state;
	expect_error(f,
		     "get related images for bundle \"foo.v0.2.0\": json: cannot unmarshal object");
	expect_error(d, "get related images for bundle \"foo.v0.2.0\": json: cannot unmarshal "
			"string into Go struct field dep.install.spec.deployments.spec.replicas");
}

static void fbc_bundle_render__B19_typed_csv(void **state)
{
	const char *const f[] = {"manifests/csv.yaml", CSV_HEAD "spec:\n  version: latest\n",
				 ANN_OK, NULL};
	fbc_bundle_dir *b = bt_read(f);
	fbc_error err;
	char *s;

	(void)state;
	s = bt_render(b, "quay.io/x/y:1", FBC_BUNDLE_MIGRATE_CSV_METADATA, &err);
	assert_null(s);
	assert_non_null(strstr(err.message, "migrate: "));
	/* without the migration the same bundle renders, version verbatim (N5) */
	s = bt_render(b, "quay.io/x/y:1", FBC_BUNDLE_MIGRATE_NONE, &err);
	assert_non_null(s);
	assert_non_null(strstr(s, "\"version\":\"latest\""));
	free(s);
	fbc_bundle_free(b);
}

static void fbc_bundle_render__N3_empty_package_writes_nothing(void **state)
{
	const char *const f[] = {
		"manifests/csv.yaml",
		CSV_OK,
		"manifests/crd.yaml",
		CRD_OK,
		"metadata/annotations.yaml",
		"annotations:\n  operators.operatorframework.io.bundle.channels.v1: "
		"a\n",
		NULL};
	fbc_error err;
	char *s = render_files(f, "", &err);

	(void)state;
	assert_non_null(s);
	assert_string_equal(s, "");
	free(s);
}

static void fbc_bundle_read__first_csv_by_name_and_file_rules(void **state)
{
	/* b.yaml is the first CSV; z.yaml a second CSV (dropped); .hidden and
	 * sub/ ignored; x.json read as JSON (first value only); bad.yaml skipped */
	const char *const f[] = {
		"manifests/b.yaml",
		CSV_OK,
		"manifests/crd.yaml",
		CRD_OK,
		"manifests/z.yaml",
		"apiVersion: operators.coreos.com/v1alpha1\nkind: "
		"ClusterServiceVersion\nmetadata:\n"
		"  name: other\n",
		"manifests/.hidden.yaml",
		"kind: Secret\napiVersion: v1\n",
		"manifests/sub/nested.yaml",
		"kind: Secret\napiVersion: v1\n",
		"manifests/x.json",
		"  {\"kind\":\"ConfigMap\",\"apiVersion\":\"v1\",\"data\":{\"a\":\"<&>\"}} "
		"{\"kind\":\"Secret\"}",
		"manifests/bad.yaml",
		"----\nkind: Secret\n",
		"manifests/y.yaml",
		"---\nkind: ServiceAccount\napiVersion: v1\nflag: yes\nn: 0x1F\n"
		"t: 2006-01-02\n---\nkind: Other\n",
		ANN_OK,
		NULL};
	fbc_bundle_dir *b = bt_read(f);
	fbc_error err;
	char *s = bt_render(b, "", FBC_BUNDLE_MIGRATE_NONE, &err);
	json_t *blob;
	size_t i, objects = 0;
	json_t *p;
	bool saw_sa = false, saw_cm = false;

	(void)state;
	assert_non_null(s);
	assert_string_equal(fbc_bundle_name(b), "foo.v0.2.0");
	blob = json_loads(s, 0, NULL);
	json_array_foreach(json_object_get(blob, "properties"), i, p)
	{
		const char *d =
			json_string_value(json_object_get(json_object_get(p, "value"), "data"));
		unsigned char *dec = NULL;
		size_t n, bad;
		if (!d)
			continue;
		objects++;
		assert_int_equal(fbc_base64_decode(&dec, &n, &bad, d, strlen(d)), 0);
		assert_null(strstr((char *)dec, "\"other\""));
		if (strstr((char *)dec, "ServiceAccount")) {
			saw_sa = true;
			/* YAML 1.1 typing as go-yaml v2: the key n is false, yes is
			 * true, 0x1F is 31; timestamps keep their text */
			assert_string_equal((char *)dec,
					    "{\"apiVersion\":\"v1\",\"false\":31,"
					    "\"flag\":true,\"kind\":\"ServiceAccount\","
					    "\"t\":\"2006-01-02\"}");
		}
		if (strstr((char *)dec, "ConfigMap")) {
			saw_cm = true;
			assert_string_equal((char *)dec, "{\"apiVersion\":\"v1\",\"data\":{\"a\":"
							 "\"\\u003c\\u0026\\u003e\"},\"kind\":"
							 "\"ConfigMap\"}");
		}
		free(dec);
	}
	assert_int_equal(objects, 4); /* csv, crd, x.json, y.yaml */
	assert_true(saw_sa && saw_cm);
	json_decref(blob);
	free(s);
	fbc_bundle_free(b);
}

static void fbc_bundle_read__json_sniff_is_30_bytes(void **state)
{
	char far[128];
	const char *const f[] = {"manifests/csv.yaml",
				 CSV_OK,
				 "manifests/crd.yaml",
				 CRD_OK,
				 "manifests/far.json",
				 far,
				 ANN_OK,
				 NULL};
	fbc_bundle_dir *b;
	fbc_error err;
	char *s;

	(void)state;
	/* 40 spaces then JSON: read as YAML, which parses the JSON flow mapping */
	snprintf(far, sizeof(far), "%40s{\"kind\": \"Secret\", \"apiVersion\": \"v1\"}", "");
	b = bt_read(f);
	s = bt_render(b, "", FBC_BUNDLE_MIGRATE_NONE, &err);
	assert_non_null(s);
	free(s);
	fbc_bundle_free(b);
}

static void fbc_bundle_render__related_images_order_and_dedup(void **state)
{
	const char *const f[] = {"manifests/csv.yaml",
				 CSV_HEAD
				 "spec:\n  version: 1.0.0\n  relatedImages:\n"
				 "  - {name: b, image: z/img:1}\n  - {name: a, image: z/img:1}\n"
				 "  - {name: op, image: a/op:1}\n  install:\n    strategy: "
				 "deployment\n    spec:\n      deployments:\n      - name: d\n"
				 "        spec:\n          template:\n            spec:\n"
				 "              containers:\n              - image: a/op:1\n"
				 "              - image: m/side:1\n",
				 ANN_OK, NULL};
	fbc_error err;
	char *s = render_files(f, "q/bundle:1", &err);

	(void)state;
	assert_non_null(s);
	assert_non_null(strstr(s, "\"relatedImages\":[{\"name\":\"op\",\"image\":\"a/op:1\"},"
				  "{\"name\":\"\",\"image\":\"m/side:1\"},"
				  "{\"name\":\"\",\"image\":\"q/bundle:1\"},"
				  "{\"name\":\"b\",\"image\":\"z/img:1\"},"
				  "{\"name\":\"a\",\"image\":\"z/img:1\"}]"));
	free(s);
}

static void fbc_bundle_render__olm_properties_annotation_and_other_deps(void **state)
{
	const char *const f[] = {
		"manifests/csv.yaml",
		"apiVersion: operators.coreos.com/v1alpha1\nkind: "
		"ClusterServiceVersion\nmetadata:\n"
		"  name: foo.v1\n  annotations:\n    olm.properties: '[{\"type\": "
		"\"olm.maxOpenShiftVersion\", "
		"\"value\": \"4.9\"}, "
		"{\"type\":\"olm.package\",\"value\":{\"packageName\":\"over\","
		"\"version\":\"9.9.9\"}}]'\nspec:\n  version: 1.0.0\n",
		ANN_OK,
		"metadata/dependencies.json",
		"{\"dependencies\": [{\"type\": \"olm.label\", \"value\": {\"label\" : \"a<b\"}}]}",
		NULL};
	fbc_error err;
	char *s = render_files(f, "", &err);

	(void)state;
	assert_non_null(s);
	/* passed-through raw values are compacted, escapes and key order kept */
	assert_non_null(strstr(s, "{\"type\":\"olm.label\",\"value\":{\"label\":\"a<b\"}}"));
	assert_non_null(strstr(s, "{\"type\":\"olm.maxOpenShiftVersion\",\"value\":\"4.9\"}"));
	/* the annotation's olm.package overrides the derived one (§3.2 P4) */
	assert_non_null(strstr(s, "{\"packageName\":\"over\",\"version\":\"9.9.9\"}"));
	free(s);
}

static void fbc_bundle_render__existing_csv_metadata_stops_migration(void **state)
{
	/* a properties file already has olm.csv.metadata: the migration leaves
	 * the bundle alone, bundle objects included (§4.1 step 3) */
	const char *const f[] = {
		"manifests/csv.yaml",
		CSV_OK,
		"manifests/crd.yaml",
		CRD_OK,
		ANN_OK,
		"metadata/properties.yaml",
		"properties:\n- type: olm.csv.metadata\n  value: {displayName: x}\n",
		NULL};
	fbc_bundle_dir *b = bt_read(f);
	fbc_error err;
	char *s = bt_render(b, "q/b:1", FBC_BUNDLE_MIGRATE_CSV_METADATA, &err);

	(void)state;
	assert_non_null(s);
	assert_non_null(strstr(s, "olm.bundle.object"));
	assert_non_null(
		strstr(s, "{\"type\":\"olm.csv.metadata\",\"value\":{\"displayName\":\"x\"}}"));
	free(s);
	fbc_bundle_free(b);
}

static void fbc_bundle_read__json_invalid_utf8_becomes_replacement(void **state)
{
	/* Go's JSON decoder writes U+FFFD for each invalid byte (bundles.md §2.2) */
	const char *const f[] = {
		"manifests/csv.yaml",
		CSV_OK,
		"manifests/crd.yaml",
		CRD_OK,
		"manifests/cm.json",
		"{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"data\":{\"a\":\"x\xffy\"}}",
		ANN_OK,
		NULL};
	fbc_bundle_dir *b = bt_read(f);
	fbc_error err;
	char *s = bt_render(b, "", FBC_BUNDLE_MIGRATE_NONE, &err);
	json_t *blob;
	size_t i, found = 0;
	json_t *p;

	(void)state;
	assert_non_null(s);
	blob = json_loads(s, 0, NULL);
	json_array_foreach(json_object_get(blob, "properties"), i, p)
	{
		const char *d =
			json_string_value(json_object_get(json_object_get(p, "value"), "data"));
		unsigned char *dec = NULL;
		size_t n, bad;
		if (!d)
			continue;
		assert_int_equal(fbc_base64_decode(&dec, &n, &bad, d, strlen(d)), 0);
		if (strstr((char *)dec, "ConfigMap")) {
			assert_non_null(strstr((char *)dec, "\"a\":\"x\xef\xbf\xbdy\""));
			found++;
		}
		free(dec);
	}
	assert_int_equal(found, 1);
	json_decref(blob);
	free(s);
	fbc_bundle_free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(fbc_bundle_render__worked_example),
		cmocka_unit_test(fbc_bundle_render__plain_directory_has_empty_image),
		cmocka_unit_test(fbc_bundle_render__csv_metadata_migration),
		cmocka_unit_test(fbc_bundle_migrate_parse__levels),
		cmocka_unit_test(fbc_bundle_render__B2_no_objects),
		cmocka_unit_test(fbc_bundle_render__B3_no_csv),
		cmocka_unit_test(fbc_bundle_render__B4_csv_meta_types),
		cmocka_unit_test(fbc_bundle_render__B5_crd_version),
		cmocka_unit_test(fbc_bundle_render__B6_B7_B8_spec_shapes),
		cmocka_unit_test(fbc_bundle_render__B9_B10_owned_crds),
		cmocka_unit_test(fbc_bundle_render__B11_no_annotations),
		cmocka_unit_test(fbc_bundle_render__B12_B13_version_release),
		cmocka_unit_test(fbc_bundle_render__B14_B15_property_shapes),
		cmocka_unit_test(fbc_bundle_render__B16_required_crd_name),
		cmocka_unit_test(fbc_bundle_render__B17_related_images),
		cmocka_unit_test(fbc_bundle_render__B19_typed_csv),
		cmocka_unit_test(fbc_bundle_render__N3_empty_package_writes_nothing),
		cmocka_unit_test(fbc_bundle_read__first_csv_by_name_and_file_rules),
		cmocka_unit_test(fbc_bundle_read__json_sniff_is_30_bytes),
		cmocka_unit_test(fbc_bundle_render__related_images_order_and_dedup),
		cmocka_unit_test(fbc_bundle_render__olm_properties_annotation_and_other_deps),
		cmocka_unit_test(fbc_bundle_render__existing_csv_metadata_stops_migration),
		cmocka_unit_test(fbc_bundle_read__json_invalid_utf8_becomes_replacement),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
