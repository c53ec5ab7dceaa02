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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(fbc_imageref_parse__accepts_and_normalises),
		cmocka_unit_test(fbc_imageref_parse__rejects_with_docker_messages),
		cmocka_unit_test(fbc_imageref_parse__name_length_limit),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
