/* Helpers for the bundle tests: a bundle from files in memory. */
#ifndef BUNDLE_TEST_H
#define BUNDLE_TEST_H

#include "service/bundle/bundle.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* files: path, text, path, text, ..., NULL */
static inline fbc_bundle_dir *bt_read(const char *const *files)
{
	const char *paths[64], *data[64];
	size_t lens[64], n = 0;
	fbc_tree *t = NULL;
	fbc_bundle_dir *b = NULL;
	fbc_error err;

	fbc_error_init(&err);
	for (; files[2 * n]; n++) {
		paths[n] = files[2 * n];
		data[n] = files[2 * n + 1];
		lens[n] = strlen(files[2 * n + 1]);
	}
	assert_int_equal(fbc_tree_open_mem(&t, paths, data, lens, n, "mem", &err), 0);
	if (fbc_bundle_read(&b, t, NULL, &err) != 0) {
		fprintf(stderr, "read: %s\n", err.message);
		fail();
	}
	fbc_tree_free(t);
	return b;
}

/* Render compact JSON; returns the malloc'd text or NULL (err filled). */
static inline char *bt_render(fbc_bundle_dir *b, const char *image, fbc_bundle_migrate m,
			      fbc_error *err)
{
	fbc_buf out;
	bool w = false;

	fbc_buf_init(&out, 0);
	fbc_error_init(err);
	if (fbc_bundle_render(&out, &w, b, image, m, err) != 0) {
		fbc_buf_dispose(&out);
		return NULL;
	}
	if (!w) {
		fbc_buf_dispose(&out);
		return strdup("");
	}
	return fbc_buf_detach(&out, NULL);
}

#define ANN_OK                                                                         \
	"metadata/annotations.yaml",                                                   \
		"annotations:\n  operators.operatorframework.io.bundle.mediatype.v1: " \
		"registry+v1\n"                                                        \
		"  operators.operatorframework.io.bundle.manifests.v1: manifests/\n"   \
		"  operators.operatorframework.io.bundle.metadata.v1: metadata/\n"     \
		"  operators.operatorframework.io.bundle.package.v1: foo\n"            \
		"  operators.operatorframework.io.bundle.channels.v1: alpha,beta\n"    \
		"  operators.operatorframework.io.bundle.channel.default.v1: alpha\n"  \
		"  com.redhat.openshift.versions: v4.12-v4.16\n"

#define CSV_HEAD                                                                              \
	"apiVersion: operators.coreos.com/v1alpha1\nkind: ClusterServiceVersion\nmetadata:\n" \
	"  name: foo.v0.2.0\n  annotations:\n    olm.skipRange: '<0.2.0'\n"

#define CSV_SPEC_TAIL                                                                         \
	"  displayName: Foo Operator\n  version: 0.2.0\n  replaces: foo.v0.1.0\n"             \
	"  skips: [foo.v0.1.1, foo.v0.1.2]\n  installModes:\n  - type: AllNamespaces\n"       \
	"    supported: true\n"                                                               \
	"  install:\n    strategy: deployment\n    spec:\n      deployments:\n"               \
	"      - name: foo-operator\n        spec:\n          template:\n            spec:\n" \
	"              containers:\n              - image: "                                  \
	"test.registry/foo-operator/foo:v0.2.0\n"

#define CSV_OK                                                                                  \
	CSV_HEAD "spec:\n  customresourcedefinitions:\n    owned:\n    - name: foos.test.foo\n" \
		 "      version: v1\n      kind: Foo\n" CSV_SPEC_TAIL

#define CRD_OK                                                                                 \
	"apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n"     \
	"  name: foos.test.foo\nspec:\n  group: test.foo\n  names:\n    kind: Foo\n"           \
	"    plural: foos\n  scope: Namespaced\n  versions:\n  - name: v1\n    served: true\n" \
	"    storage: true\n"

#endif
