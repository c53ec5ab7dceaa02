/* pipeline/oci: platforms, digests, references, WWW-Authenticate, manifest
 * parsing, and the OCI layout (write, read back verified, a corrupted blob). */
#include "pipeline/oci/client.h"
#include "pipeline/oci/oci.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void platform_parse__known_and_unknown(void **state)
{
	fbc_oci_platform p, q;
	fbc_error err;
	char s[100];

	assert_int_equal(fbc_oci_platform_parse(&p, "linux/arm/v7", &err), 0);
	fbc_oci_platform_format(&p, s, sizeof(s));
	assert_string_equal(s, "linux/arm/v7");
	assert_int_equal(fbc_oci_platform_parse(&p, "linux/arm64/v8", &err), 0);
	assert_int_equal(fbc_oci_platform_parse(&q, "linux/arm64", &err), 0);
	assert_true(fbc_oci_platform_equal(&p, &q));
	assert_int_equal(fbc_oci_platform_parse(NULL, "linux/sparc99", &err), FBC_EINVAL);
	assert_non_null(strstr(err.message, "unknown platform architecture"));
	assert_int_equal(fbc_oci_platform_parse(NULL, "plan10/amd64", &err), FBC_EINVAL);
	assert_int_equal(fbc_oci_platform_parse(NULL, "linux", &err), FBC_EINVAL);
	assert_int_equal(fbc_oci_platform_parse(NULL, "linux/amd64/", &err), FBC_EINVAL);
}

static void ref_parse__registry_tag_digest(void **state)
{
	fbc_oci_ref r;
	fbc_error err;

	assert_int_equal(fbc_oci_ref_parse(&r, "127.0.0.1:5000/cat/ops:v1", &err), 0);
	assert_string_equal(r.registry, "127.0.0.1:5000");
	assert_string_equal(r.repository, "cat/ops");
	assert_string_equal(r.tag, "v1");
	assert_int_equal(fbc_oci_ref_parse(&r, "ubuntu", &err), 0);
	assert_string_equal(r.registry, "registry-1.docker.io");
	assert_string_equal(r.repository, "library/ubuntu");
	assert_string_equal(r.tag, "latest");
	assert_int_equal(fbc_oci_ref_parse(&r, "Bad//Ref", &err), FBC_EINVAL);
	assert_true(fbc_oci_tag_valid("v4.20_x-1"));
	assert_false(fbc_oci_tag_valid("-x"));
	assert_false(fbc_oci_tag_valid(""));
}

static void challenge_parse__bearer_basic_and_garbage(void **state)
{
	fbc_oci_challenge c;
	fbc_error err;

	assert_int_equal(fbc_oci_challenge_parse(&c,
						 "Bearer realm=\"https://a/token\",service=\"reg\","
						 "scope=\"repository:x:pull,push\"",
						 &err),
			 0);
	assert_string_equal(c.scheme, "bearer");
	assert_string_equal(c.realm, "https://a/token");
	assert_string_equal(c.service, "reg");
	assert_string_equal(c.scope, "repository:x:pull,push");
	assert_int_equal(fbc_oci_challenge_parse(&c, "Negotiate, Basic realm=\"r\"", &err), 0);
	assert_string_equal(c.scheme, "basic");
	assert_int_equal(fbc_oci_challenge_parse(&c, "Bearer service=\"x\"", &err), FBC_EPARSE);
	assert_int_equal(fbc_oci_challenge_parse(&c, "Bearer realm=\"open", &err), FBC_EPARSE);
	assert_int_equal(fbc_oci_challenge_parse(&c, "", &err), FBC_EPARSE);
}

static void manifest_parse__rejects_bad_documents(void **state)
{
	const char *good = "{\"schemaVersion\":2,\"config\":{\"digest\":\"sha256:"
			   "fffd89a47a580b4aedb8a99a412417460e8743c5b6fac30bc504a55d97570eea\","
			   "\"size\":1},\"layers\":[]}";
	fbc_oci_manifest m;
	fbc_error err;

	assert_int_equal(fbc_oci_manifest_parse(&m, good, strlen(good), NULL, &err), 0);
	assert_int_equal(m.kind, FBC_OCI_KIND_MANIFEST);
	fbc_oci_manifest_dispose(&m);
	/* a Docker list by Content-Type */
	assert_int_equal(fbc_oci_manifest_parse(&m, "{\"schemaVersion\":2,\"manifests\":[]}", 34,
						FBC_OCI_MT_DOCKER_LIST "; charset=utf-8", &err),
			 0);
	assert_int_equal(m.kind, FBC_OCI_KIND_INDEX);
	fbc_oci_manifest_dispose(&m);
	assert_int_equal(fbc_oci_manifest_parse(&m, "<html>", 6, "text/html", &err), FBC_EPARSE);
	assert_int_equal(fbc_oci_manifest_parse(&m, "{\"schemaVersion\":1}", 19, NULL, &err),
			 FBC_EINVAL);
	assert_int_equal(
		fbc_oci_manifest_parse(
			&m, "{\"schemaVersion\":2,\"config\":{\"digest\":\"md5:x\",\"size\":1}}",
			56, NULL, &err),
		FBC_EINVAL);
	assert_non_null(strstr(err.where, "config.digest"));
	/* the document says index, the Content-Type says manifest */
	assert_int_equal(fbc_oci_manifest_parse(
				 &m,
				 "{\"schemaVersion\":2,\"mediaType\":\"" FBC_OCI_MT_INDEX
				 "\",\"manifests\":[]}",
				 strlen("{\"schemaVersion\":2,\"mediaType\":\"" FBC_OCI_MT_INDEX
					"\",\"manifests\":[]}"),
				 FBC_OCI_MT_MANIFEST, &err),
			 FBC_EINVAL);
}

static void layout__roundtrip_and_corruption(void **state)
{
	char dir[] = "/tmp/fbcd-oci-test.XXXXXX", digest[FBC_OCI_DIGEST_MAX], path[4200], cmd[4300];
	fbc_oci_descriptor top = {.size = 5}, got;
	fbc_buf b;
	fbc_error err;
	FILE *f;

	assert_non_null(mkdtemp(dir));
	assert_int_equal(fbc_oci_layout_init(dir, &err), 0);
	assert_int_equal(fbc_oci_layout_put(dir, digest, "hello", 5, &err), 0);
	assert_true(fbc_oci_digest_valid(digest));
	assert_int_equal(fbc_oci_layout_read(&b, dir, digest, 100, &err), 0);
	assert_memory_equal(b.data, "hello", 5);
	fbc_buf_dispose(&b);
	snprintf(top.media_type, sizeof(top.media_type), "%s", FBC_OCI_MT_MANIFEST);
	memcpy(top.digest, digest, sizeof(digest));
	assert_int_equal(fbc_oci_layout_write_index(dir, &top, "v1", &err), 0);
	assert_int_equal(fbc_oci_layout_root(&got, dir, NULL, &err), 0);
	assert_string_equal(got.digest, digest);
	assert_string_equal(got.ref_name, "v1");
	assert_int_equal(fbc_oci_layout_root(&got, dir, "nope", &err), FBC_ENOTFOUND);
	/* a blob whose bytes no longer hash to its name */
	assert_int_equal(fbc_oci_layout_blob_path(path, sizeof(path), dir, digest, &err), 0);
	assert_non_null(f = fopen(path, "w"));
	fputs("HELLO", f);
	fclose(f);
	assert_int_equal(fbc_oci_layout_read(&b, dir, digest, 100, &err), FBC_EINVAL);
	assert_int_equal(fbc_oci_layout_read(&b, dir, digest, 2, &err), FBC_ELIMIT);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(platform_parse__known_and_unknown),
		cmocka_unit_test(ref_parse__registry_tag_digest),
		cmocka_unit_test(challenge_parse__bearer_basic_and_garbage),
		cmocka_unit_test(manifest_parse__rejects_bad_documents),
		cmocka_unit_test(layout__roundtrip_and_corruption),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
