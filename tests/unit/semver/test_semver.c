/*
 * Versions, comparison, releases: blang/semver v4 Parse and ParseTolerant,
 * SemVer 2.0 precedence, operator-registry model.NewRelease.
 */
#include "service/semver/semver.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

static int parse(fbc_semver *v, const char *s, fbc_error *err)
{
	fbc_error_init(err);
	return fbc_semver_parse(v, s, strlen(s), err);
}

static void fbc_semver_parse__accepts_full_versions(void **state)
{
	fbc_semver v;
	fbc_error err;

	assert_int_equal(parse(&v, "1.2.3", &err), 0);
	assert_true(v.major == 1 && v.minor == 2 && v.patch == 3);
	assert_null(v.pre);
	assert_null(v.build);

	assert_int_equal(parse(&v, "0.0.0-alpha.1+build.007", &err), 0);
	assert_int_equal(v.pre_len, 7);
	assert_memory_equal(v.pre, "alpha.1", 7);
	assert_int_equal(v.build_len, 9);
	assert_memory_equal(v.build, "build.007", 9);

	/* build metadata may have leading zeros, pre-release words may too */
	assert_int_equal(parse(&v, "1.0.0+001", &err), 0);
	assert_int_equal(parse(&v, "1.0.0-0a.01a-", &err), 0);
	assert_int_equal(parse(&v, "1.0.0-x-y-z.--", &err), 0);
	assert_int_equal(parse(&v, "18446744073709551615.0.0", &err), 0);
	assert_true(v.major == UINT64_MAX);
}

static void fbc_semver_parse__rejects_with_blang_messages(void **state)
{
	static const struct {
		const char *in, *msg;
	} cases[] = {
		{"", "Version string empty"},
		{"v1.0.0", "Invalid character(s) found in major number \"v1\""},
		{"1.0", "No Major.Minor.Patch elements found"},
		{"1", "No Major.Minor.Patch elements found"},
		{"01.0.0", "Major number must not contain leading zeroes \"01\""},
		{"1.00.0", "Minor number must not contain leading zeroes \"00\""},
		{"1.0.01", "Patch number must not contain leading zeroes \"01\""},
		{"1.0.0-01", "Numeric PreRelease version must not contain leading zeroes \"01\""},
		{"1.0.0-", "Prerelease is empty"},
		{"1.0.0-a..b", "Prerelease is empty"},
		{"1.0.0+", "Build meta data is empty"},
		{"1.0.0+a..b", "Build meta data is empty"},
		{"1.0.0+a_b", "Invalid character(s) found in build meta data \"a_b\""},
		{"1.0.0-a_b", "Invalid character(s) found in prerelease \"a_b\""},
		{" 1.0.0", "Invalid character(s) found in major number \" 1\""},
		{"1.0.0 ", "Invalid character(s) found in patch number \"0 \""},
		{"1.0.0.0", "Invalid character(s) found in patch number \"0.0\""},
		{".0.0", "strconv.ParseUint: parsing \"\": invalid syntax"},
		{"18446744073709551616.0.0",
		 "strconv.ParseUint: parsing \"18446744073709551616\": value out of range"},
		{"1.0.0-18446744073709551616",
		 "strconv.ParseUint: parsing \"18446744073709551616\": value out of range"},
		{"1.x.0", "Invalid character(s) found in minor number \"x\""},
		{"1.0.0\n", "Invalid character(s) found in patch number \"0\\n\""},
	};
	fbc_semver v;
	fbc_error err;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int rc = parse(&v, cases[i].in, &err);
		if (rc != FBC_EPARSE || strcmp(err.message, cases[i].msg) != 0)
			fail_msg("parse(\"%s\") = %d \"%s\", want \"%s\"", cases[i].in, rc,
				 err.message, cases[i].msg);
	}
}

static void fbc_semver_parse__embedded_nul_is_invalid(void **state)
{
	fbc_semver v;
	fbc_error err;

	fbc_error_init(&err);
	assert_int_equal(fbc_semver_parse(&v, "1.0.0\0x", 7, &err), FBC_EPARSE);
}

static void fbc_semver_parse__bounded_length(void **state)
{
	char big[FBC_SEMVER_VERSION_MAX + 10];
	fbc_semver v;
	fbc_error err;

	memset(big, '1', sizeof(big));
	big[1] = '.';
	big[3] = '.';
	fbc_error_init(&err);
	assert_int_equal(fbc_semver_parse(&v, big, sizeof(big), &err), FBC_ELIMIT);
}

static void fbc_semver_parse_tolerant__normalises(void **state)
{
	static const struct {
		const char *in, *want;
	} ok[] = {
		{"v1.2.3", "1.2.3"},	   {"1.2", "1.2.0"},
		{"v1", "1.0.0"},	   {" 1.2.3 ", "1.2.3"},
		{"01.002.0003", "1.2.3"},  {"1.2.03-beta.1+b", "1.2.3-beta.1+b"},
		{"1.2.00-rc", "1.2.0-rc"}, {"1.2.-1", "1.2.0-1"},
		{"\t v0.1.0\n", "0.1.0"},
	};
	static const char *bad[] = {"1.2-rc", "1-rc", "", "vv1.0.0", "1.2.3-01", "a.b.c"};
	fbc_semver v;
	fbc_error err;
	char buf[64];

	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		fbc_error_init(&err);
		if (fbc_semver_parse_tolerant(&v, ok[i].in, strlen(ok[i].in), &err) != 0)
			fail_msg("tolerant(\"%s\") failed: %s", ok[i].in, err.message);
		fbc_semver_format(&v, buf, sizeof(buf));
		assert_string_equal(buf, ok[i].want);
		/* borrowed pointers stay inside the caller's string */
		if (v.pre)
			assert_true(v.pre >= ok[i].in && v.pre < ok[i].in + strlen(ok[i].in));
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		fbc_error_init(&err);
		if (fbc_semver_parse_tolerant(&v, bad[i], strlen(bad[i]), &err) == 0)
			fail_msg("tolerant(\"%s\") should fail", bad[i]);
	}
	fbc_error_init(&err);
	fbc_semver_parse_tolerant(&v, "1.2-rc", 6, &err);
	assert_string_equal(err.message, "Short version cannot contain PreRelease/Build meta data");
}

static void fbc_semver_compare__semver2_order(void **state)
{
	static const char *order[] = {
		"0.9.9",      "1.0.0-alpha",  "1.0.0-alpha.1", "1.0.0-alpha.beta",
		"1.0.0-beta", "1.0.0-beta.2", "1.0.0-beta.11", "1.0.0-rc.1",
		"1.0.0",      "1.0.1",	      "1.1.0",	       "1.10.0",
		"2.0.0-0",    "2.0.0-1",      "2.0.0-A",       "2.0.0-a",
		"2.0.0",
	};
	size_t n = sizeof(order) / sizeof(order[0]);
	fbc_semver a, b;
	fbc_error err;

	for (size_t i = 0; i < n; i++) {
		for (size_t j = 0; j < n; j++) {
			int c, want = i < j ? -1 : i > j ? 1 : 0;
			assert_int_equal(parse(&a, order[i], &err), 0);
			assert_int_equal(parse(&b, order[j], &err), 0);
			c = fbc_semver_compare(&a, &b);
			c = c < 0 ? -1 : c > 0 ? 1 : 0;
			if (c != want)
				fail_msg("compare(%s, %s) = %d, want %d", order[i], order[j], c,
					 want);
		}
	}
}

static void fbc_semver_compare__ignores_build(void **state)
{
	fbc_semver a, b;
	fbc_error err;

	assert_int_equal(parse(&a, "1.0.0+a", &err), 0);
	assert_int_equal(parse(&b, "1.0.0+b", &err), 0);
	assert_int_equal(fbc_semver_compare(&a, &b), 0);
	assert_int_equal(parse(&a, "1.0.0-rc.1+x", &err), 0);
	assert_int_equal(parse(&b, "1.0.0-rc.1", &err), 0);
	assert_int_equal(fbc_semver_compare(&a, &b), 0);
}

static void fbc_semver_format__canonical_and_snprintf_like(void **state)
{
	fbc_semver v;
	fbc_error err;
	char buf[8];

	assert_int_equal(parse(&v, "1.20.3-rc.1+build.5", &err), 0);
	assert_int_equal(fbc_semver_format(&v, buf, sizeof(buf)), strlen("1.20.3-rc.1+build.5"));
	assert_string_equal(buf, "1.20.3-");
	assert_int_equal(fbc_semver_format(&v, NULL, 0), 19);
}

static void fbc_release_validate__rules(void **state)
{
	fbc_error err;

	fbc_error_init(&err);
	assert_int_equal(fbc_release_validate("", 0, &err), 0);
	assert_int_equal(fbc_release_validate("2", 1, &err), 0);
	assert_int_equal(fbc_release_validate("alpha.1.x-y", 11, &err), 0);
	assert_int_equal(fbc_release_validate("12345678901234567890", 20, &err), 0);

	assert_int_equal(fbc_release_validate("123456789012345678901", 21, &err), FBC_EPARSE);
	assert_string_equal(err.message, "invalid release \"123456789012345678901\": exceeds "
					 "maximum length of 20 characters");
	fbc_error_init(&err);
	assert_int_equal(fbc_release_validate("01", 2, &err), FBC_EPARSE);
	assert_string_equal(err.message, "invalid release \"01\": segment 0: Numeric PreRelease "
					 "version must not contain leading zeroes \"01\"");
	fbc_error_init(&err);
	assert_int_equal(fbc_release_validate("a..b_", 5, &err), FBC_EPARSE);
	assert_string_equal(err.message,
			    "invalid release \"a..b_\": segment 1: Prerelease is empty\n"
			    "segment 2: Invalid character(s) found in prerelease \"b_\"");
}

static void fbc_release_compare__order(void **state)
{
	assert_int_equal(fbc_release_compare("", ""), 0);
	assert_true(fbc_release_compare("", "0") < 0);
	assert_true(fbc_release_compare("1", "") > 0);
	assert_true(fbc_release_compare("2", "10") < 0);
	assert_true(fbc_release_compare("10", "alpha") < 0);
	assert_true(fbc_release_compare("alpha", "alpha.1") < 0);
	assert_int_equal(fbc_release_compare("a.1", "a.1"), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(fbc_semver_parse__accepts_full_versions),
		cmocka_unit_test(fbc_semver_parse__rejects_with_blang_messages),
		cmocka_unit_test(fbc_semver_parse__embedded_nul_is_invalid),
		cmocka_unit_test(fbc_semver_parse__bounded_length),
		cmocka_unit_test(fbc_semver_parse_tolerant__normalises),
		cmocka_unit_test(fbc_semver_compare__semver2_order),
		cmocka_unit_test(fbc_semver_compare__ignores_build),
		cmocka_unit_test(fbc_semver_format__canonical_and_snprintf_like),
		cmocka_unit_test(fbc_release_validate__rules),
		cmocka_unit_test(fbc_release_compare__order),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
