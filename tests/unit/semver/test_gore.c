/*
 * The private regex matcher behind the Masterminds grammar: Go's
 * leftmost-first choice of match and submatches.
 */
#include "service/semver/gore.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Search pattern in text from `from`; write group g of the match into out
 * ("<nil>" when the group did not take part, "<none>" without a match). */
static void find(const char *pattern, const char *text, size_t from, int g, char *out, size_t cap)
{
	gore *re = NULL;
	long caps[128];
	int rc;

	assert_int_equal(gore_compile(&re, pattern), 0);
	assert_true(gore_ncap(re) * 2 <= 128);
	rc = gore_search(re, text, strlen(text), from, caps);
	assert_true(rc >= 0);
	if (rc == 0)
		snprintf(out, cap, "<none>");
	else if (caps[2 * g] < 0)
		snprintf(out, cap, "<nil>");
	else
		snprintf(out, cap, "%.*s", (int)(caps[2 * g + 1] - caps[2 * g]),
			 text + caps[2 * g]);
	gore_free(re);
}

static void gore_search__leftmost_first(void **state)
{
	char out[64];

	/* the first alternative that leads to a match wins, not the longest */
	find("a|ab", "ab", 0, 0, out, sizeof(out));
	assert_string_equal(out, "a");
	/* an empty alternative is tried in its place */
	find("(=||!=|>|>=)1", ">=1", 0, 1, out, sizeof(out));
	assert_string_equal(out, ">=");
	find("(=||!=|>|>=)1", "!=1", 0, 1, out, sizeof(out));
	assert_string_equal(out, "!=");
	find("(=||!=|>|>=)1", "1", 0, 1, out, sizeof(out));
	assert_string_equal(out, "");
	/* leftmost start beats a longer match further right */
	find("b+|a", "xabbb", 0, 0, out, sizeof(out));
	assert_string_equal(out, "a");
	/* greedy quantifiers */
	find("(a*)(a*)", "aaa", 0, 1, out, sizeof(out));
	assert_string_equal(out, "aaa");
	find("x(\\.[0-9]+)?", "x", 0, 1, out, sizeof(out));
	assert_string_equal(out, "<nil>");
}

static void gore_search__anchors_classes_and_from(void **state)
{
	char out[64];

	find("^[0-9|x]+$", "1|x", 0, 0, out, sizeof(out));
	assert_string_equal(out, "1|x");
	find("^[0-9]+$", "12a", 0, 0, out, sizeof(out));
	assert_string_equal(out, "<none>");
	/* ^ is the start of the text, not of the search */
	find("^a", "aa", 1, 0, out, sizeof(out));
	assert_string_equal(out, "<none>");
	find("a", "aa", 1, 0, out, sizeof(out));
	assert_string_equal(out, "a");
	find("\\s+-\\s+", "1 \t- 2", 0, 0, out, sizeof(out));
	assert_string_equal(out, " \t- ");
	/* \s is Go's [\t\n\f\r ], no \v */
	find("\\s", "\v", 0, 0, out, sizeof(out));
	assert_string_equal(out, "<none>");
	find("[A-Za-z\\-]+", "09aZ-_", 0, 0, out, sizeof(out));
	assert_string_equal(out, "aZ-");
	find("(?:ab)+(c)", "ababc", 0, 1, out, sizeof(out));
	assert_string_equal(out, "c");
}

static void gore_compile__rejects_bad_patterns(void **state)
{
	gore *re = NULL;

	assert_int_equal(gore_compile(&re, "(a"), -1);
	assert_int_equal(gore_compile(&re, "a)"), -1);
	assert_int_equal(gore_compile(&re, "[a"), -1);
	assert_int_equal(gore_compile(&re, "*a"), -1);
	assert_int_equal(gore_compile(&re, "a\\"), -1);
	assert_null(re);
}

static void gore_search__no_exponential_backtracking(void **state)
{
	/* nested stars over a long non-matching input finish quickly because
	 * (instruction, position) pairs are visited once */
	static char text[4001];
	char out[8];

	memset(text, 'a', sizeof(text) - 1);
	text[sizeof(text) - 1] = '\0';
	find("^(a*)*(\\s*)*b$", text, 0, 0, out, sizeof(out));
	assert_string_equal(out, "<none>");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(gore_search__leftmost_first),
		cmocka_unit_test(gore_search__anchors_classes_and_from),
		cmocka_unit_test(gore_compile__rejects_bad_patterns),
		cmocka_unit_test(gore_search__no_exponential_backtracking),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
