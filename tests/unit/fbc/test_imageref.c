/* Image references (C14/C15, spec §2.6). */
#include "service/fbc/imageref.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

static void expect_ok(const char *s, const char *domain, const char *path, const char *tag)
{
	fbc_imageref r;
	fbc_error e;

	fbc_error_init(&e);
	if (fbc_imageref_parse(&r, s, &e) != 0)
		fail_msg("%s: unexpected error %s", s, e.message);
	assert_string_equal(r.domain, domain);
	assert_string_equal(r.path, path);
	assert_string_equal(r.tag, tag);
}

static void expect_err(const char *s, const char *msg)
{
	fbc_error e;

	fbc_error_init(&e);
	if (fbc_imageref_parse(NULL, s, &e) == 0)
		fail_msg("%s: accepted", s);
	if (strcmp(e.message, msg) != 0)
		fail_msg("%s: got \"%s\", want \"%s\"", s, e.message, msg);
}

static void fbc_imageref_parse__accepts_and_normalises(void **state)
{
	(void)state;
	expect_ok("busybox", "docker.io", "library/busybox", "");
	expect_ok("busybox:1.36", "docker.io", "library/busybox", "1.36");
	expect_ok("index.docker.io/foo/bar", "docker.io", "foo/bar", "");
	expect_ok("quay.io/operatorhubio/etcd:v0.9.4", "quay.io", "operatorhubio/etcd", "v0.9.4");
	expect_ok("localhost/foo", "localhost", "foo", "");
	expect_ok("localhost:5000/a/b-c__d.e:tag_1", "localhost:5000", "a/b-c__d.e", "tag_1");
	expect_ok("[::1]:5000/foo", "[::1]:5000", "foo", "");
	expect_ok("Registry.Example.com/foo", "Registry.Example.com", "foo", "");
	expect_ok("quay.io/a/"
		  "b@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
		  "quay.io", "a/b", "");
	expect_ok("quay.io/a/"
		  "b:1.0@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
		  "quay.io", "a/b", "1.0");
}

static void fbc_imageref_parse__rejects_with_docker_messages(void **state)
{
	(void)state;
	expect_err("0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
		   "invalid repository name (0123456789abcdef0123456789abcdef0123456789abcdef"
		   "0123456789abcdef), cannot specify 64-byte hexadecimal strings");
	expect_err("quay.io/Foo/bar",
		   "invalid reference format: repository name (Foo/bar) must be lowercase");
	expect_err("UPPER", "invalid reference format: repository name (library/UPPER) must be "
			    "lowercase");
	expect_err("quay.io/a//b", "invalid reference format");
	expect_err("quay.io/a/b:", "invalid reference format");
	expect_err("quay.io/a/-b", "invalid reference format");
	expect_err("quay.io/a/b:-tag", "invalid reference format");
	expect_err("quay.io/a/b@sha256:abc", "invalid reference format");
	expect_err("quay.io/a/b@sha256:0123456789abcdef0123456789abcdef0123",
		   "invalid checksum digest length");
	expect_err("quay.io/a/b@md5:0123456789abcdef0123456789abcdef",
		   "unsupported digest algorithm");
	expect_err("quay.io/a/"
		   "b@sha256:0123456789ABCDEF0123456789abcdef0123456789abcdef0123456789abcdef",
		   "invalid checksum digest format");
	expect_err("", "invalid reference format");
	expect_err("a b", "invalid reference format");
}

static void fbc_imageref_parse__name_length_limit(void **state)
{
	char name[400];
	fbc_error e;

	(void)state;
	memset(name, 'a', sizeof(name));
	memcpy(name, "quay.io/", 8);
	name[260] = '\0';
	assert_int_not_equal(fbc_imageref_parse(NULL, name, &e), 0);
	assert_string_equal(e.message, "repository name must not be more than 255 characters");
	name[200] = '\0';
	assert_int_equal(fbc_imageref_parse(NULL, name, &e), 0);
}

/* Digests of every supported length with each byte value at each position
 * (the hex check reads 16 bytes at a time, then the rest one by one): a hex
 * digit passes, an upper-case one fails the lower-case digest check, any
 * other letter or digit the reference grammar. */
static void fbc_imageref_parse__digest_bytes_everywhere(void **state)
{
	static const struct {
		const char *algo;
		size_t len;
	} digests[] = {{"sha256", 64}, {"sha384", 96}, {"sha512", 128}};
	char ref[256];
	fbc_error e;

	(void)state;
	for (size_t k = 0; k < sizeof(digests) / sizeof(digests[0]); k++) {
		size_t head =
			(size_t)snprintf(ref, sizeof(ref), "quay.io/a/b@%s:", digests[k].algo);

		for (size_t pos = 0; pos < digests[k].len; pos++) {
			for (int c = 1; c < 256; c++) {
				int rc;

				for (size_t i = 0; i < digests[k].len; i++)
					ref[head + i] = "0123456789abcdef"[(i * 7 + k) % 16];
				ref[head + digests[k].len] = '\0';
				ref[head + pos] = (char)c;
				fbc_error_init(&e);
				rc = fbc_imageref_parse(NULL, ref, &e);
				if ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')) {
					if (rc != 0)
						fail_msg("%s: %s", ref, e.message);
				} else if (c >= 'A' && c <= 'F') {
					assert_int_not_equal(rc, 0);
					assert_string_equal(e.message,
							    "invalid checksum digest format");
				} else if ((c >= 'g' && c <= 'z') || (c >= 'G' && c <= 'Z') ||
					   c == '!' || c == '~' || c >= 0x80 || c < 0x20) {
					assert_int_not_equal(rc, 0);
					assert_string_equal(e.message, "invalid reference format");
				} else {
					assert_int_not_equal(rc, 0);
				}
			}
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(fbc_imageref_parse__accepts_and_normalises),
		cmocka_unit_test(fbc_imageref_parse__rejects_with_docker_messages),
		cmocka_unit_test(fbc_imageref_parse__name_length_limit),
		cmocka_unit_test(fbc_imageref_parse__digest_bytes_everywhere),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
