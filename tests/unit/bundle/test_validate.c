/* service/bundle: fbc_bundle_validate, one failing and one passing case per rule. */
#include "bundle_test.h"

/* Validate files; returns the diags (sorted). */
static fbc_diags *validate(const char *const *files)
{
	fbc_bundle_dir *b = bt_read(files);
	fbc_diags *d = calloc(1, sizeof(*d));
	fbc_error err;

	fbc_error_init(&err);
	assert_int_equal(fbc_diags_init(d, 0), 0);
	assert_int_equal(fbc_bundle_validate(b, d, &err), 0);
	fbc_diags_sort(d);
	fbc_bundle_free(b);
	return d;
}

static void done(fbc_diags *d)
{
	fbc_diags_dispose(d);
	free(d);
}

static const fbc_diag *find(const fbc_diags *d, const char *code)
{
	for (size_t i = 0; i < fbc_diags_count(d); i++)
		if (strcmp(fbc_diags_at(d, i)->code, code) == 0)
			return fbc_diags_at(d, i);
	return NULL;
}

static void dump(const fbc_diags *d)
{
	for (size_t i = 0; i < fbc_diags_count(d); i++) {
		const fbc_diag *x = fbc_diags_at(d, i);
		fprintf(stderr, "  %s:%d: %s: %s\n", x->file ? x->file : "", x->line, x->code,
			x->message);
	}
}

/* expect code at file:line (line 0: any) with text in the message */
static void expect(const char *const *files, const char *code, const char *file, int line,
		   const char *text)
{
	fbc_diags *d = validate(files);
	const fbc_diag *x = NULL;

	for (size_t i = 0; i < fbc_diags_count(d); i++) {
		const fbc_diag *y = fbc_diags_at(d, i);
		if (strcmp(y->code, code) == 0 && (!file || (y->file && !strcmp(y->file, file))) &&
		    (!line || y->line == line) && (!text || strstr(y->message, text)))
			x = y;
	}
	if (x == NULL) {
		fprintf(stderr, "no %s at %s:%d with '%s'; findings:\n", code, file ? file : "?",
			line, text ? text : "");
		dump(d);
	}
	assert_non_null(x);
	done(d);
}

static void expect_none(const char *const *files, const char *code)
{
	fbc_diags *d = validate(files);
	if (find(d, code)) {
		fprintf(stderr, "unexpected %s:\n", code);
		dump(d);
	}
	assert_null(find(d, code));
	done(d);
}

static const char *const good[] = {
	"manifests/csv.yaml", CSV_OK, "manifests/crd.yaml", CRD_OK, ANN_OK, NULL};

static void fbc_bundle_validate__good_bundle_has_no_error(void **state)
{
	fbc_diags *d = validate(good);

	(void)state;
	for (size_t i = 0; i < fbc_diags_count(d); i++)
		if (fbc_bundle_code_is_error(fbc_diags_at(d, i)->code)) {
			dump(d);
			fail();
		}
	done(d);
}

static void fbc_bundle_validate__B_rules_with_lines(void **state)
{
	const char *const b3[] = {"manifests/crd.yaml", CRD_OK, ANN_OK, NULL};
	const char *const b12[] = {"manifests/csv.yaml", CSV_HEAD "spec:\n  version: 1\n", ANN_OK,
				   NULL};
	const char *const b17[] = {"manifests/csv.yaml",
				   CSV_HEAD "spec:\n  version: 1.0.0\n  relatedImages: 5\n", ANN_OK,
				   NULL};
	(void)state;
	expect(b3, "B3", "manifests", 0, "no csv in bundle");
	expect_none(good, "B3");
	expect(b12, "B12", "manifests/csv.yaml", 8, "cannot unmarshal number");
	expect_none(good, "B12");
	expect(b17, "B17", "manifests/csv.yaml", 9, "get related images");
	expect_none(good, "B17");
}

static void fbc_bundle_validate__B5_B10_every_case(void **state)
{
	/* two owned CRDs missing: both reported (opm names one at random) */
	const char *const f[] = {
		"manifests/csv.yaml",
		CSV_HEAD "spec:\n  version: 1.0.0\n  customresourcedefinitions:\n"
			 "    owned:\n    - {name: as.x.io, version: v1, kind: A}\n"
			 "    - {name: bs.x.io, version: v1, kind: B}\n",
		"manifests/c1.yaml",
		"apiVersion: x.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: a}\n",
		"manifests/c2.yaml",
		"apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\n"
		"metadata: {name: b}\nspec:\n  group: 5\n",
		ANN_OK,
		NULL};
	(void)state;
	expect(f, "B10", "manifests/csv.yaml", 11, "couldn't find x.io/v1/A (as)");
	expect(f, "B10", "manifests/csv.yaml", 12, "couldn't find x.io/v1/B (bs)");
	expect(f, "B5", "manifests/c1.yaml", 0, "no kind \"CustomResourceDefinition\"");
	expect(f, "B5", "manifests/c2.yaml", 0, "cannot unmarshal number");
	expect(f, "VC5", "manifests/c1.yaml", 1, "Unsupported api version of CRD: x.io/v1");
	expect(f, "VC7", "manifests/csv.yaml", 11, "owned CRD as.x.io/v1 not found");
	expect_none(good, "B10");
	expect_none(good, "B5");
	expect_none(good, "VC7");
	expect_none(good, "VC5");
}

static void fbc_bundle_validate__FB1_second_csv(void **state)
{
	const char *const f[] = {"manifests/csv.yaml",
				 CSV_OK,
				 "manifests/crd.yaml",
				 CRD_OK,
				 "manifests/z.yaml",
				 "# another\napiVersion: operators.coreos.com/v1alpha1\n"
				 "kind: ClusterServiceVersion\nmetadata:\n  name: two\n",
				 ANN_OK,
				 NULL};
	(void)state;
	expect(f, "FB1", "manifests/z.yaml", 3, "a second ClusterServiceVersion (two)");
	expect_none(good, "FB1");
}

static void fbc_bundle_validate__FB2_empty_package(void **state)
{
	const char *const f[] = {
		"manifests/csv.yaml",
		CSV_OK,
		"manifests/crd.yaml",
		CRD_OK,
		"metadata/annotations.yaml",
		"annotations:\n  operators.operatorframework.io.bundle.channels.v1: a\n",
		NULL};
	(void)state;
	expect(f, "FB2", "metadata/annotations.yaml", 1, "no package name");
	expect(f, "VF5", "metadata/annotations.yaml", 1, "bundle.package.v1");
	expect_none(good, "FB2");
}

static void fbc_bundle_validate__FB3_undecodable_manifest(void **state)
{
	const char *const f[] = {"manifests/csv.yaml",
				 CSV_OK,
				 "manifests/crd.yaml",
				 CRD_OK,
				 "manifests/bad.yaml",
				 "a: 1\nb: [2\nc: 3\n",
				 "manifests/nokind.yaml",
				 "apiVersion: v1\n",
				 "manifests/sep.yaml",
				 "--- !x\nkind: A\n",
				 ANN_OK,
				 NULL};
	(void)state;
	expect(f, "FB3", "manifests/bad.yaml", 3, "does not decode");
	expect(f, "FB3", "manifests/nokind.yaml", 1, "Object 'Kind' is missing");
	expect(f, "FB3", "manifests/sep.yaml", 0, "invalid Yaml document separator: !x");
	expect_none(good, "FB3");
}

static void fbc_bundle_validate__N4_N5(void **state)
{
	const char *const f[] = {"manifests/csv.yaml",
				 "apiVersion: operators.coreos.com/v1alpha1\nkind: "
				 "ClusterServiceVersion\nmetadata: {}\nspec:\n  version: v1.0\n",
				 ANN_OK, NULL};
	(void)state;
	expect(f, "N4", "manifests/csv.yaml", 3, "no metadata.name");
	expect(f, "N5", "manifests/csv.yaml", 5, "not strict semver");
	expect_none(good, "N4");
	expect_none(good, "N5");
}

static void fbc_bundle_validate__VF_rules(void **state)
{
	const char *const vf4[] = {
		"manifests/csv.yaml",
		CSV_OK,
		"manifests/crd.yaml",
		CRD_OK,
		"metadata/annotations.yaml",
		"annotations:\n  operators.operatorframework.io.bundle.package.v1: "
		"foo\n  n: 5\n",
		NULL};
	const char *const vf6[] = {
		"manifests/csv.yaml",
		CSV_OK,
		"manifests/crd.yaml",
		CRD_OK,
		"metadata/annotations.yaml",
		"annotations:\n  operators.operatorframework.io.bundle.mediatype.v1: "
		"plain\n  operators.operatorframework.io.bundle.manifests.v1: m/\n"
		"  operators.operatorframework.io.bundle.metadata.v1: m/\n"
		"  operators.operatorframework.io.bundle.package.v1: foo\n"
		"  operators.operatorframework.io.bundle.channels.v1: ''\n"
		"  operators.operatorframework.io.bundle.channel.default.v1: ''\n",
		NULL};
	const char *const vf9[] = {
		"manifests/csv.yaml",
		CSV_OK,
		"manifests/crd.yaml",
		CRD_OK,
		ANN_OK,
		"metadata/dependencies.yaml",
		"dependencies:\n- type: olm.gvk\n  value: {group: g}\n"
		"- type: olm.package\n  value: {packageName: p, version: 'not a range'}\n"
		"- type: olm.label\n  value: {}\n"
		"- type: olm.constraint\n  value: {cel: {rule: 'a +'}}\n"
		"- type: olm.weird\n  value: 1\n",
		NULL};
	const char *const vf9ok[] = {
		"manifests/csv.yaml",
		CSV_OK,
		"manifests/crd.yaml",
		CRD_OK,
		ANN_OK,
		"metadata/dependencies.yaml",
		"dependencies:\n- type: olm.gvk\n  value: {group: g, version: v1, kind: K}\n"
		"- type: olm.package\n  value: {packageName: p, version: '>=1.0.0'}\n"
		"- type: olm.constraint\n  value: {cel: {rule: 'properties.exists(p, p.type == "
		"\"x\")'}}\n",
		NULL};
	(void)state;
	expect(vf4, "VF4", "metadata", 0, "Could not find annotations file");
	expect_none(good, "VF4");
	expect(vf6, "VF6", "metadata/annotations.yaml", 2, "to have value \"registry+v1\"");
	expect(vf6, "VF7", "metadata/annotations.yaml", 6, "bundle.channels.v1");
	expect(vf6, "VF8", "metadata/annotations.yaml", 7, "channel.default.v1");
	expect_none(good, "VF6");
	expect_none(good, "VF7");
	expect_none(good, "VF8");
	expect_none(good, "VF5");
	expect(vf9, "VF9", "metadata/dependencies.yaml", 2, "API Version is empty");
	expect(vf9, "VF9", "metadata/dependencies.yaml", 4, "Invalid semver format version");
	expect(vf9, "VF9", "metadata/dependencies.yaml", 6, "Label information is missing");
	expect(vf9, "VF9", "metadata/dependencies.yaml", 8, "Invalid CEL expression");
	expect(vf9, "VF9", "metadata/dependencies.yaml", 10,
	       "couldn't parse dependency of type olm.weird");
	expect_none(vf9ok, "VF9");
}

static void fbc_bundle_validate__VC_rules(void **state)
{
	const char *const vc2[] = {"manifests/csv.yaml",
				   CSV_OK,
				   "manifests/crd.yaml",
				   CRD_OK,
				   "manifests/dep.yaml",
				   "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\n",
				   "manifests/cm.yaml",
				   "apiVersion: v1\nkind: ConfigMap\nmetadata: {}\n",
				   "manifests/sub/x.yaml",
				   "kind: Secret\n",
				   ANN_OK,
				   NULL};
	const char *const vc4[] = {
		"manifests/csv.yaml",
		"apiVersion: operators.coreos.com/v1alpha1\nkind: "
		"ClusterServiceVersion\nmetadata:\n"
		"  name: Foo_Bad\n  annotations:\n    olm.skiprange: '<1.0.0'\n"
		"    alm-examples: '[{\"apiVersion\": \"x.io/v1\", \"kind\": \"Nope\"}]'\n"
		"    olm.substitutesFor: foo.v0\nspec:\n  version: 1.0.0\n  release: '1'\n"
		"  minKubeVersion: '1.2'\n  installModes:\n  - {type: OwnNamespace, supported: "
		"false}\n",
		ANN_OK, NULL};
	(void)state;
	expect(vc2, "VC2", "manifests/dep.yaml", 2, "Deployment is not supported type");
	expect(vc2, "VC6", "manifests/cm.yaml", 3, "name or generateName is required");
	expect(vc2, "VC1", "manifests/sub", 0, "sub-directory");
	expect_none(good, "VC2");
	expect_none(good, "VC6");
	expect_none(good, "VC1");
	expect(vc4, "VC4", "manifests/csv.yaml", 4, "metadata.name \"Foo_Bad\" is invalid");
	expect(vc4, "VC4", "manifests/csv.yaml", 6, "annotation key olm.skiprange should be");
	expect(vc4, "VC4", "manifests/csv.yaml", 7, "example must have a provided API");
	expect(vc4, "VC4", "manifests/csv.yaml", 12, "MinKubeVersion");
	expect(vc4, "VC4", "manifests/csv.yaml", 13, "none of InstallModeTypes are supported");
	expect(vc4, "VC4", "manifests/csv.yaml", 9, "Spec.DisplayName");
	expect(vc4, "VC8", "manifests/csv.yaml", 11, "cannot have both a release version");
	expect_none(good, "VC4");
	expect_none(good, "VC8");
}

static void fbc_bundle_validate__warnings(void **state)
{
	const char *const f[] = {
		"manifests/csv.yaml",
		CSV_HEAD "    olm.properties: '[{'\nspec:\n  version: 1.0.0\n  relatedImages:\n"
			 "  - {name: a, image: x/y:1}\n  - {name: b, image: x/y:1}\n",
		"manifests/two.yaml",
		"apiVersion: v1\nkind: Service\nmetadata: {name: s}\n---\nkind: Other\n",
		"manifests/.hidden.yaml",
		"apiVersion: v1\nkind: Secret\nmetadata: {name: s}\n",
		"manifests/crd2.yaml",
		"apiVersion: apiextensions.k8s.io/v2\nkind: CustomResourceDefinition\nmetadata: "
		"{name: c}\n",
		"manifests/crd.yaml",
		CRD_OK,
		ANN_OK,
		"metadata/zz-extra.yaml",
		"hello: world\n",
		NULL};
	fbc_diags *d;

	(void)state;
	expect(f, "W2", "manifests/two.yaml", 4, "more than one document");
	expect(f, "W4", "manifests/.hidden.yaml", 0, "hidden file");
	expect(f, "W5", "metadata/zz-extra.yaml", 0, "is ignored");
	expect(f, "W6", "manifests/csv.yaml", 7, "olm.properties");
	expect(f, "W7", "manifests/crd2.yaml", 1, "provides no API");
	expect(f, "N6", "manifests/crd.yaml", 4, "not owned by the CSV");
	expect(f, "N8", "manifests/csv.yaml", 10, "lists x/y:1 twice");
	expect_none(good, "W2");
	expect_none(good, "W4");
	expect_none(good, "W5");
	expect_none(good, "W6");
	expect_none(good, "N6");
	expect_none(good, "N8");
	assert_false(fbc_bundle_code_is_error("W2"));
	assert_false(fbc_bundle_code_is_error("N8"));
	assert_true(fbc_bundle_code_is_error("FB1"));
	assert_true(fbc_bundle_code_is_error("B3"));
	d = validate(f);
	assert_null(find(d, "FB3")); /* the hidden file is not FB3 */
	done(d);
}

static void fbc_bundle_validate__B19_typed_csv(void **state)
{
	const char *const f[] = {"manifests/csv.yaml",
				 CSV_HEAD "spec:\n  version: 1.0.0\n  installModes: 5\n", ANN_OK,
				 NULL};
	(void)state;
	expect(f, "B19", "manifests/csv.yaml", 7, "migrate: json: cannot unmarshal number");
	expect_none(good, "B19");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(fbc_bundle_validate__good_bundle_has_no_error),
		cmocka_unit_test(fbc_bundle_validate__B_rules_with_lines),
		cmocka_unit_test(fbc_bundle_validate__B5_B10_every_case),
		cmocka_unit_test(fbc_bundle_validate__FB1_second_csv),
		cmocka_unit_test(fbc_bundle_validate__FB2_empty_package),
		cmocka_unit_test(fbc_bundle_validate__FB3_undecodable_manifest),
		cmocka_unit_test(fbc_bundle_validate__N4_N5),
		cmocka_unit_test(fbc_bundle_validate__VF_rules),
		cmocka_unit_test(fbc_bundle_validate__VC_rules),
		cmocka_unit_test(fbc_bundle_validate__warnings),
		cmocka_unit_test(fbc_bundle_validate__B19_typed_csv),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
