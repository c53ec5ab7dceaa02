/*
 * Version ranges in both grammars: every row of resolver.md §4.3, plus the
 * blang quirks of fbc-validation.md §2.7 and Masterminds' pre-release rules.
 *
 * Membership is checked against a fixed universe of versions: each row
 * lists the versions that must be inside; every other one must be outside.
 */
#include "service/semver/semver.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

static const char *const universe[] = {
	"0.2.0",  "0.2.3",	 "0.2.9",	"0.3.0",  "1.0.0-alpha", "1.0.0",  "1.0.1",
	"1.1.0",  "1.2.0-rc.1",	 "1.2.0",	"1.2.1",  "1.2.3",	 "1.2.9",  "1.3.0",
	"1.11.0", "1.12.0-rc.1", "1.12.0",	"1.12.5", "1.13.0-rc.1", "1.13.0", "2.0.0-rc.1",
	"2.0.0",  "2.5.0",	 "3.0.0-alpha", "3.0.0",  "3.1.0",
};
#define NUNIVERSE (sizeof(universe) / sizeof(universe[0]))

enum grammar { BLANG, MM };

static int parse_range(fbc_semver_range **r, enum grammar g, const char *s, fbc_error *err)
{
	fbc_error_init(err);
	return g == BLANG ? fbc_semver_range_parse_blang(r, s, err)
			  : fbc_semver_range_parse_masterminds(r, s, err);
}

/* in: space-separated versions of the universe expected inside the range. */
static void expect_set(enum grammar g, const char *range, const char *in)
{
	fbc_semver_range *r = NULL;
	fbc_error err;
	int rc = parse_range(&r, g, range, &err);

	if (rc != 0)
		fail_msg("%s range \"%s\" failed to parse: %s", g == BLANG ? "blang" : "mm", range,
			 err.message);
	for (size_t i = 0; i < NUNIVERSE; i++) {
		fbc_semver v;
		size_t n = strlen(universe[i]);
		const char *p = in;
		bool want = false, got;

		assert_int_equal(fbc_semver_parse(&v, universe[i], n, &err), 0);
		while (*p) {
			size_t wl = strcspn(p, " ");
			if (wl == n && memcmp(p, universe[i], n) == 0)
				want = true;
			p += wl;
			p += strspn(p, " ");
		}
		got = fbc_semver_range_contains(r, &v);
		if (got != want)
			fail_msg("%s range \"%s\": contains(%s) = %d, want %d",
				 g == BLANG ? "blang" : "mm", range, universe[i], got, want);
	}
	fbc_semver_range_free(r);
}

static void expect_error(enum grammar g, const char *range, const char *msg)
{
	fbc_semver_range *r = NULL;
	fbc_error err;
	int rc = parse_range(&r, g, range, &err);

	if (rc == 0) {
		fbc_semver_range_free(r);
		fail_msg("%s range \"%s\" parsed, want an error", g == BLANG ? "blang" : "mm",
			 range);
	}
	assert_null(r);
	if (msg && strstr(err.message, msg) == NULL)
		fail_msg("%s range \"%s\": error \"%s\" lacks \"%s\"", g == BLANG ? "blang" : "mm",
			 range, err.message, msg);
}

#define ALL_BELOW_2                                                                           \
	"0.2.0 0.2.3 0.2.9 0.3.0 1.0.0-alpha 1.0.0 1.0.1 1.1.0 1.2.0-rc.1 1.2.0 1.2.1 1.2.3 " \
	"1.2.9 1.3.0 1.11.0 1.12.0-rc.1 1.12.0 1.12.5 1.13.0-rc.1 1.13.0 2.0.0-rc.1"
#define REL_1X	"1.0.0 1.0.1 1.1.0 1.2.0 1.2.1 1.2.3 1.2.9 1.3.0 1.11.0 1.12.0 1.12.5 1.13.0"
#define REL_ALL "0.2.0 0.2.3 0.2.9 0.3.0 " REL_1X " 2.0.0 2.5.0 3.0.0 3.1.0"

/* ---- resolver.md §4.3, blang column ------------------------------------ */

static void fbc_semver_range_parse_blang__table_4_3(void **state)
{
	expect_error(BLANG, ">=1.11, <1.13", NULL);
	expect_set(BLANG, ">=1.11.0 <1.13.0", "1.11.0 1.12.0-rc.1 1.12.0 1.12.5 1.13.0-rc.1");
	expect_set(BLANG, "1.11.x", "1.11.0 1.12.0-rc.1");
	expect_error(BLANG, "~1.12", "Could not parse comparator \"~\"");
	expect_error(BLANG, "~1", "Could not parse comparator \"~\"");
	expect_error(BLANG, "^0.2.3", "Could not parse comparator \"^\"");
	expect_set(BLANG, "^1.2.x", "1.2.0");
	expect_set(BLANG, ">1.0.0 !1.2.1",
		   "1.0.1 1.1.0 1.2.0-rc.1 1.2.0 1.2.3 1.2.9 1.3.0 1.11.0 1.12.0-rc.1 1.12.0 "
		   "1.12.5 1.13.0-rc.1 1.13.0 2.0.0-rc.1 2.0.0 2.5.0 3.0.0-alpha 3.0.0 3.1.0");
	expect_set(BLANG, ">1.0.0 !=1.2.1",
		   "1.0.1 1.1.0 1.2.0-rc.1 1.2.0 1.2.3 1.2.9 1.3.0 1.11.0 1.12.0-rc.1 1.12.0 "
		   "1.12.5 1.13.0-rc.1 1.13.0 2.0.0-rc.1 2.0.0 2.5.0 3.0.0-alpha 3.0.0 3.1.0");
	expect_set(BLANG, "<=2.x", ALL_BELOW_2 " 2.0.0 2.5.0 3.0.0-alpha");
	expect_error(BLANG, "*", "Last element in range is '||'");
	expect_error(BLANG, "x", "Last element in range is '||'");
	expect_set(BLANG, "1.x.x", "1.0.0 1.0.1");
	expect_set(BLANG, "1.x",
		   "1.0.0 1.0.1 1.1.0 1.2.0-rc.1 1.2.0 1.2.1 1.2.3 1.2.9 1.3.0 1.11.0 "
		   "1.12.0-rc.1 1.12.0 1.12.5 1.13.0-rc.1 1.13.0 2.0.0-rc.1");
	expect_error(BLANG, "1.2", "No Major.Minor.Patch elements found");
	expect_error(BLANG, "=1.2", NULL);
	expect_error(BLANG, "1.2.X", NULL);
	expect_error(BLANG, "1.2.*", NULL);
	expect_set(BLANG, "==1.2.3", "1.2.3");
	expect_error(BLANG, "v1.2.3", "Could not parse comparator \"v\"");
	expect_error(BLANG, ">=v1.0.0", "Could not parse comparator \">=v\"");
	expect_set(BLANG, "1.0.0 - 2.0.0", "");
	expect_set(BLANG, "<2.0.0 || >=3.0.0", ALL_BELOW_2 " 3.0.0 3.1.0");
	expect_error(BLANG, "<2.0.0||>=3.0.0", NULL);
	expect_set(BLANG, ">=1.0.0-0",
		   "1.0.0-alpha " REL_1X
		   " 1.2.0-rc.1 1.12.0-rc.1 1.13.0-rc.1 2.0.0-rc.1 2.0.0 2.5.0 "
		   "3.0.0-alpha 3.0.0 3.1.0");
	expect_set(BLANG, ">=1.0.0 <1.3.0-0",
		   "1.0.0 1.0.1 1.1.0 1.2.0-rc.1 1.2.0 1.2.1 1.2.3 1.2.9");
	expect_set(BLANG, "!=1.2.x", "");
	expect_set(BLANG, "1.0.0+build", "1.0.0");
	expect_error(BLANG, "", "Last element in range is '||'");
}

/* ---- fbc-validation.md §2.7 quirks ------------------------------------- */

static void fbc_semver_range_parse_blang__quirks(void **state)
{
	/* a space after an operator glues */
	expect_set(BLANG, ">= 1.12.0 <  1.13.0", "1.12.0 1.12.5 1.13.0-rc.1");
	expect_set(BLANG, "=  1.2.3", "1.2.3");
	/* single characters vanish; so do they around a valid part */
	expect_error(BLANG, "1", "Last element in range is '||'");
	expect_set(BLANG, "1.2.3 - x", "1.2.3");
	expect_set(BLANG, "  1.2.3  ", "1.2.3");
	/* || placement */
	expect_error(BLANG, "|| 1.0.0", "First element in range is '||'");
	expect_error(BLANG, "1.0.0 ||", "Last element in range is '||'");
	/* wildcard rewrites */
	expect_set(BLANG, ">=1.2.x",
		   "1.2.0 1.2.1 1.2.3 1.2.9 1.3.0 1.11.0 1.12.0-rc.1 1.12.0 "
		   "1.12.5 1.13.0-rc.1 1.13.0 2.0.0-rc.1 2.0.0 2.5.0 3.0.0-alpha "
		   "3.0.0 3.1.0");
	expect_set(BLANG, ">1.2.x",
		   "1.3.0 1.11.0 1.12.0-rc.1 1.12.0 1.12.5 1.13.0-rc.1 1.13.0 "
		   "2.0.0-rc.1 2.0.0 2.5.0 3.0.0-alpha 3.0.0 3.1.0");
	expect_set(BLANG, "<1.2.x",
		   "0.2.0 0.2.3 0.2.9 0.3.0 1.0.0-alpha 1.0.0 1.0.1 1.1.0 "
		   "1.2.0-rc.1");
	expect_set(BLANG, "<=1.2.x",
		   "0.2.0 0.2.3 0.2.9 0.3.0 1.0.0-alpha 1.0.0 1.0.1 1.1.0 "
		   "1.2.0-rc.1 1.2.0 1.2.1 1.2.3 1.2.9");
	expect_set(BLANG, ">1.x", "2.0.0 2.5.0 3.0.0-alpha 3.0.0 3.1.0");
	expect_set(BLANG, ">2.x", "3.0.0 3.1.0");
	/* x that is not a wildcard ends as an empty "<" comparator */
	expect_error(BLANG, "1.0.0-x.1", NULL);
	expect_error(BLANG, "1.0.0-beta.x", "Could not get version from string: \"<\"");
	/* no digit at all */
	expect_error(BLANG, "abc", "Could not get version from string: \"abc\"");
	expect_set(BLANG, ">=3.0.0 <", "3.0.0 3.1.0");
	/* version must be strict */
	expect_error(BLANG, ">=01.0.0",
		     "Could not parse Range \">=01.0.0\": Could not parse version \"01.0.0\" in "
		     "\">=01.0.0\": Major number must not contain leading zeroes \"01\"");
	/* operators */
	expect_set(BLANG, "<1.0.0", "0.2.0 0.2.3 0.2.9 0.3.0 1.0.0-alpha");
	expect_set(BLANG, "<=0.2.3", "0.2.0 0.2.3");
	expect_set(BLANG, ">3.0.0", "3.1.0");
	expect_set(BLANG, "=1.0.1", "1.0.1");
	expect_set(BLANG, "!1.0.1 <1.1.0 >=1.0.0", "1.0.0");
	expect_error(BLANG, "=>1.0.0", "Could not parse comparator \"=>\"");
	expect_error(BLANG, "~>1.0.0", NULL);
	/* an empty group between two || parses and matches nothing */
	expect_set(BLANG, "1.0.0 || || 2.0.0", "1.0.0 2.0.0");
}

static void fbc_semver_range_parse_blang__bounded(void **state)
{
	static char big[FBC_SEMVER_RANGE_MAX + 2];
	static char many[4000];
	fbc_semver_range *r = NULL;
	fbc_error err;
	size_t o = 0;

	memset(big, ' ', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	fbc_error_init(&err);
	assert_int_equal(fbc_semver_range_parse_blang(&r, big, &err), FBC_ELIMIT);
	assert_null(r);

	while (o + 8 < sizeof(many)) {
		memcpy(many + o, ">=1.0.0 ", 8);
		o += 8;
	}
	many[o] = '\0';
	assert_int_equal(fbc_semver_range_parse_blang(&r, many, &err), FBC_ELIMIT);
	assert_null(r);
}

static void expect_message(enum grammar g, const char *range, const char *msg)
{
	fbc_semver_range *r = NULL;
	fbc_error err;

	assert_int_equal(parse_range(&r, g, range, &err), FBC_EPARSE);
	assert_null(r);
	assert_string_equal(err.message, msg);
}

static void fbc_semver_range_parse__exact_messages(void **state)
{
	expect_message(BLANG, ">=v1.0.0",
		       "Could not parse Range \">=v1.0.0\": Could not parse comparator \">=v\" in "
		       "\">=v1.0.0\"");
	expect_message(BLANG, "~1.12",
		       "Could not parse Range \"~1.12\": Could not parse comparator \"~\" in "
		       "\"~1.12\"");
	expect_message(BLANG, ">=1.0",
		       "Could not parse Range \">=1.0\": Could not parse version \"1.0\" in "
		       "\">=1.0\": No Major.Minor.Patch elements found");
	expect_message(BLANG, ">=1.0.0 <2.0.0 ||", "Last element in range is '||'");
	expect_message(BLANG, "|| <2.0.0", "First element in range is '||'");
	expect_message(BLANG, ">=1.0.0 abc", "Could not get version from string: \"abc\"");
	/* wildcard errors come before comparator errors of earlier parts */
	expect_message(BLANG, "~1.0.0 xx", "Could not get version from string: \"xx\"");
	/* tabs are trimmed from the operator, as Go's TrimSpace does */
	expect_set(BLANG, ">=\t1.12.0",
		   "1.12.0 1.12.5 1.13.0-rc.1 1.13.0 2.0.0-rc.1 2.0.0 2.5.0 "
		   "3.0.0-alpha 3.0.0 3.1.0");
	expect_message(BLANG,
		       "=\xe2\x88\x9e"
		       "1.0.0",
		       "Could not parse Range \"=\xe2\x88\x9e"
		       "1.0.0\": Could not parse comparator "
		       "\"=\xe2\x88\x9e\" in \"=\xe2\x88\x9e"
		       "1.0.0\"");
	expect_message(BLANG,
		       "=\x01\xff"
		       "1.0.0",
		       "Could not parse Range \"=\\x01\\xff1.0.0\": Could not parse comparator "
		       "\"=\\x01\\xff\" in \"=\\x01\\xff1.0.0\"");

	expect_message(MM, ">1.0.0 !1.2.1", "improper constraint: >1.0.0 !1.2.1");
	expect_message(MM, ">=1.0.0 || ~", "improper constraint:  ~");
	expect_message(MM, "1.0.x.1", "improper constraint: 1.0.x.1");
	expect_message(MM, "1.2.3-01", "constraint parser error");
}

/* ---- resolver.md §4.3, Masterminds column ------------------------------ */

static void fbc_semver_range_parse_masterminds__table_4_3(void **state)
{
	expect_set(MM, ">=1.11, <1.13", "1.11.0 1.12.0 1.12.5");
	expect_set(MM, ">=1.11.0 <1.13.0", "1.11.0 1.12.0 1.12.5");
	expect_set(MM, "1.11.x", "1.11.0");
	expect_set(MM, "~1.12", "1.12.0 1.12.5");
	expect_set(MM, "~1", REL_1X);
	expect_set(MM, "^0.2.3", "0.2.3 0.2.9");
	expect_set(MM, "^1.2.x", "1.2.0 1.2.1 1.2.3 1.2.9 1.3.0 1.11.0 1.12.0 1.12.5 1.13.0");
	expect_error(MM, ">1.0.0 !1.2.1", "improper constraint: >1.0.0 !1.2.1");
	expect_set(MM, ">1.0.0 !=1.2.1",
		   "1.0.1 1.1.0 1.2.0 1.2.3 1.2.9 1.3.0 1.11.0 1.12.0 1.12.5 1.13.0 2.0.0 2.5.0 "
		   "3.0.0 3.1.0");
	expect_set(MM, "<=2.x", "0.2.0 0.2.3 0.2.9 0.3.0 " REL_1X " 2.0.0 2.5.0");
	expect_set(MM, "*", REL_ALL);
	expect_set(MM, "x", REL_ALL);
	expect_set(MM, "1.x.x", REL_1X);
	expect_set(MM, "1.x", REL_1X);
	expect_set(MM, "1.2", "1.2.0 1.2.1 1.2.3 1.2.9");
	expect_set(MM, "=1.2", "1.2.0 1.2.1 1.2.3 1.2.9");
	expect_set(MM, "1.2.X", "1.2.0 1.2.1 1.2.3 1.2.9");
	expect_set(MM, "1.2.*", "1.2.0 1.2.1 1.2.3 1.2.9");
	expect_error(MM, "==1.2.3", "improper constraint: ==1.2.3");
	expect_set(MM, "v1.2.3", "1.2.3");
	expect_set(MM, ">=v1.0.0", REL_1X " 2.0.0 2.5.0 3.0.0 3.1.0");
	expect_set(MM, "1.0.0 - 2.0.0", REL_1X " 2.0.0");
	expect_set(MM, "<2.0.0 || >=3.0.0", "0.2.0 0.2.3 0.2.9 0.3.0 " REL_1X " 3.0.0 3.1.0");
	expect_set(MM, "<2.0.0||>=3.0.0", "0.2.0 0.2.3 0.2.9 0.3.0 " REL_1X " 3.0.0 3.1.0");
	expect_set(MM, ">=1.0.0-0",
		   "1.0.0-alpha " REL_1X
		   " 1.2.0-rc.1 1.12.0-rc.1 1.13.0-rc.1 2.0.0-rc.1 2.0.0 2.5.0 "
		   "3.0.0-alpha 3.0.0 3.1.0");
	expect_set(MM, ">=1.0.0 <1.3.0-0", "1.0.0 1.0.1 1.1.0 1.2.0-rc.1 1.2.0 1.2.1 1.2.3 1.2.9");
	expect_set(MM, "!=1.2.x",
		   "0.2.0 0.2.3 0.2.9 0.3.0 1.0.0 1.0.1 1.1.0 1.3.0 1.11.0 1.12.0 1.12.5 1.13.0 "
		   "2.0.0 2.5.0 3.0.0 3.1.0");
	expect_set(MM, "1.0.0+build", "1.0.0");
	expect_error(MM, "", "improper constraint: ");
}

static void fbc_semver_range_parse_masterminds__operators(void **state)
{
	/* ^ on zero majors and minors */
	expect_set(MM, "^0.0.3", "");
	expect_set(MM, "^0.2", "0.2.0 0.2.3 0.2.9");
	expect_set(MM, "^0", "0.2.0 0.2.3 0.2.9 0.3.0");
	expect_set(MM, "^1", REL_1X);
	/* ~ and ~> */
	expect_set(MM, "~1.2.3", "1.2.3 1.2.9");
	expect_set(MM, "~>1.2.3", "1.2.3 1.2.9");
	expect_set(MM, "~0", "0.2.0 0.2.3 0.2.9 0.3.0");
	expect_set(MM, "~*", REL_ALL);
	/* => and =< spellings, comma and space lists, spaces after operators */
	expect_set(MM, "=>1.12.0,=<1.13.0", "1.12.0 1.12.5 1.13.0");
	expect_set(MM, ">= 1.12.0 , < 1.13.0", "1.12.0 1.12.5");
	expect_set(MM, ">1.12", "1.13.0 2.0.0 2.5.0 3.0.0 3.1.0");
	expect_set(MM, ">1", "2.0.0 2.5.0 3.0.0 3.1.0");
	expect_set(MM, "<=1.2",
		   "0.2.0 0.2.3 0.2.9 0.3.0 1.0.0 1.0.1 1.1.0 1.2.0 1.2.1 1.2.3 "
		   "1.2.9");
	expect_set(MM, "<1.2", "0.2.0 0.2.3 0.2.9 0.3.0 1.0.0 1.0.1 1.1.0");
	expect_set(MM, "!=1.2.3",
		   "0.2.0 0.2.3 0.2.9 0.3.0 1.0.0 1.0.1 1.1.0 1.2.0 1.2.1 1.2.9 "
		   "1.3.0 1.11.0 1.12.0 1.12.5 1.13.0 2.0.0 2.5.0 3.0.0 3.1.0");
	expect_set(MM, "!=1.x", "0.2.0 0.2.3 0.2.9 0.3.0 2.0.0 2.5.0 3.0.0 3.1.0");
	/* hyphen ranges with short versions and inside an OR */
	expect_set(MM, "1.2 - 1.3", "1.2.0 1.2.1 1.2.3 1.2.9 1.3.0");
	expect_set(MM, "0.2.3 - 0.2.9 || 3.x", "0.2.3 0.2.9 3.0.0 3.1.0");
	/* leading zeros are coerced away */
	expect_set(MM, "01.02.03", "1.2.3");
	/* pre-releases: only in the group whose comparator names one */
	expect_set(MM, "=1.2.0-rc.1", "1.2.0-rc.1");
	expect_set(MM, "~1.2.0-0", "1.2.0-rc.1 1.2.0 1.2.1 1.2.3 1.2.9");
	expect_set(MM, ">=3.0.0-0 || <1.0.0", "0.2.0 0.2.3 0.2.9 0.3.0 3.0.0-alpha 3.0.0 3.1.0");
	expect_set(MM, "^2.0.0-rc.1", "2.0.0-rc.1 2.0.0 2.5.0");
	/* errors */
	expect_error(MM, "!1.2.3", "improper constraint: !1.2.3");
	expect_error(MM, "1.2.3 ||", "improper constraint: ");
	expect_error(MM, "|| 1.2.3", "improper constraint: ");
	expect_error(MM, ">=a", "improper constraint: >=a");
	expect_error(MM, "1.2.3-01", NULL);
	expect_error(MM, "1.2|3", "constraint parser error");
	expect_error(MM, "99999999999999999999", "constraint parser error");
	expect_error(MM, "1.2.3 - ", NULL);
	expect_error(MM, "V1.2.3", NULL);
}

static void fbc_semver_range_parse_masterminds__bounded(void **state)
{
	static char big[FBC_SEMVER_RANGE_MAX + 2];
	static char many[4000];
	fbc_semver_range *r = NULL;
	fbc_error err;
	size_t o = 0;

	memset(big, '1', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	fbc_error_init(&err);
	assert_int_equal(fbc_semver_range_parse_masterminds(&r, big, &err), FBC_ELIMIT);
	assert_null(r);

	while (o + 6 < sizeof(many)) {
		memcpy(many + o, ">=1.0 ", 6);
		o += 6;
	}
	many[o] = '\0';
	assert_int_equal(fbc_semver_range_parse_masterminds(&r, many, &err), FBC_ELIMIT);
	assert_null(r);

	/* long but legal: whitespace runs do not blow up the matcher */
	memset(many, ' ', sizeof(many) - 1);
	many[sizeof(many) - 1] = '\0';
	memcpy(many + 10, "1.0.0", 5);
	memcpy(many + 2000, ">=0.1", 5);
	memcpy(many + 3900, "x", 1);
	assert_int_equal(fbc_semver_range_parse_masterminds(&r, many, &err), 0);
	fbc_semver_range_free(r);
}

static void fbc_semver_range_contains__null_safe(void **state)
{
	fbc_semver v = {1, 0, 0, NULL, 0, NULL, 0};

	assert_false(fbc_semver_range_contains(NULL, &v));
	fbc_semver_range_free(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(fbc_semver_range_parse_blang__table_4_3),
		cmocka_unit_test(fbc_semver_range_parse_blang__quirks),
		cmocka_unit_test(fbc_semver_range_parse_blang__bounded),
		cmocka_unit_test(fbc_semver_range_parse__exact_messages),
		cmocka_unit_test(fbc_semver_range_parse_masterminds__table_4_3),
		cmocka_unit_test(fbc_semver_range_parse_masterminds__operators),
		cmocka_unit_test(fbc_semver_range_parse_masterminds__bounded),
		cmocka_unit_test(fbc_semver_range_contains__null_safe),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
