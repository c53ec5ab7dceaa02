/*
 * The com.redhat.openshift.versions grammar (index-add.md §9 P-3..P-5).
 */
#include "service/addmode/ocp.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

static int admits(const char *label, const char *catalog, unsigned flags)
{
	fbc_error err;
	bool out = false;

	fbc_error_init(&err);
	if (fbc_ocp_label_admits(&out, label, catalog, flags, &err) != 0)
		return -1;
	return out ? 1 : 0;
}

static void label_admits__from_version_on(void **state)
{
	(void)state;
	assert_int_equal(admits("v4.12", "v4.12", 0), 1);
	assert_int_equal(admits("v4.12", "v4.20", 0), 1);
	assert_int_equal(admits("v4.12", "v4.11", 0), 0);
	assert_int_equal(admits("v4.12", "v5.0", 0), 1);
	assert_int_equal(admits(" v4.12 ", "4.13", 0), 1);
	assert_int_equal(admits("v4.9", "v4.10", 0), 1); /* numeric, not text, order */
}

static void label_admits__range(void **state)
{
	(void)state;
	assert_int_equal(admits("v4.12-v4.16", "v4.12", 0), 1);
	assert_int_equal(admits("v4.12-v4.16", "v4.16", 0), 1);
	assert_int_equal(admits("v4.12-v4.16", "v4.17", 0), 0);
	assert_int_equal(admits("v4.12-v4.16", "v4.11", 0), 0);
	assert_int_equal(admits("v4.13-v4.18", "v4.19", 0), 0);
}

static void label_admits__exact_list_pipe(void **state)
{
	(void)state;
	assert_int_equal(admits("=v4.14", "v4.14", 0), 1);
	assert_int_equal(admits("=v4.14", "v4.15", 0), 0);
	assert_int_equal(admits("v4.6,v4.5", "v4.5", 0), 1); /* from the lowest on */
	assert_int_equal(admits("v4.6,v4.5", "v4.4", 0), 0);
	assert_int_equal(admits("v4.6,v4.5", "v4.20", 0), 1);
	assert_int_equal(admits("=v4.5|>=v4.7", "v4.5", 0), 1);
	assert_int_equal(admits("=v4.5|>=v4.7", "v4.6", 0), 0);
	assert_int_equal(admits("=v4.5|>=v4.7", "v4.9", 0), 1);
}

static void label_admits__absent_admits_all(void **state)
{
	(void)state;
	assert_int_equal(admits(NULL, "v4.12", 0), 1);
	assert_int_equal(admits("", "v4.22", 0), 1);
}

static void label_admits__vless_p5(void **state)
{
	(void)state;
	assert_int_equal(admits("4.10-4.17", "v4.18", 0), 0);
	assert_int_equal(admits("4.10-4.17", "v4.18", FBC_OCP_VLESS_ADMITS_ALL), 1);
	assert_int_equal(admits("v4.10-v4.17", "v4.18", FBC_OCP_VLESS_ADMITS_ALL), 0);
	assert_int_equal(admits("4.x", "v4.18", FBC_OCP_VLESS_ADMITS_ALL), -1);
}

static void label_admits__malformed(void **state)
{
	fbc_error err;
	bool out = true;
	char big[400];

	(void)state;
	assert_int_equal(admits("v4.12-", "v4.12", 0), -1);
	assert_int_equal(admits("v4.12-v4.13-v4.14", "v4.12", 0), -1);
	assert_int_equal(admits("<v4.12", "v4.12", 0), -1);
	assert_int_equal(admits("v4.5|v4.7", "v4.5", 0), -1);
	assert_int_equal(admits("v4.12.1.2.3", "v4.12", 0), -1);
	assert_int_equal(admits("v4.1234567", "v4.12", 0), -1);
	assert_int_equal(admits("=", "v4.12", 0), -1);
	assert_int_equal(admits("v4.12", "main", 0), -1);
	assert_int_not_equal(fbc_ocp_label_admits(&out, "latest", "v4.12", 0, &err), 0);
	assert_true(out); /* untouched on error */
	assert_non_null(strstr(err.message, "\"latest\""));
	memset(big, '4', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	assert_int_equal(fbc_ocp_label_admits(&out, big, "v4.12", 0, &err), FBC_ELIMIT);
}

static void catalog_name__ocp(void **state)
{
	(void)state;
	assert_true(fbc_ocp_catalog_name("v4.12"));
	assert_false(fbc_ocp_catalog_name("4.12"));
	assert_false(fbc_ocp_catalog_name("community"));
	assert_false(fbc_ocp_catalog_name(NULL));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(label_admits__from_version_on),
		cmocka_unit_test(label_admits__range),
		cmocka_unit_test(label_admits__exact_list_pipe),
		cmocka_unit_test(label_admits__absent_admits_all),
		cmocka_unit_test(label_admits__vless_p5),
		cmocka_unit_test(label_admits__malformed),
		cmocka_unit_test(catalog_name__ocp),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
