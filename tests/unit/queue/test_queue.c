#include <string.h>
/* pipeline/queue: backoff and the transient-error rule. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "pipeline/queue/queue.h"

static void fbc_queue_backoff_ms__doubles_with_jitter(void **state)
{
	(void)state;
	/* rnd 0.5 is the midpoint: exactly base * 2^(attempt-1) */
	assert_int_equal(fbc_queue_backoff_ms(1000, 1, 0.5), 1000);
	assert_int_equal(fbc_queue_backoff_ms(1000, 2, 0.5), 2000);
	assert_int_equal(fbc_queue_backoff_ms(1000, 4, 0.5), 8000);
	/* the jitter spans [0.5, 1.5) of the delay */
	assert_int_equal(fbc_queue_backoff_ms(1000, 3, 0.0), 2000);
	assert_true(fbc_queue_backoff_ms(1000, 3, 0.9999) < 6000);
	assert_true(fbc_queue_backoff_ms(1000, 3, 0.9999) > 5990);
}

static void fbc_queue_backoff_ms__capped_at_ten_minutes(void **state)
{
	(void)state;
	assert_int_equal(fbc_queue_backoff_ms(1000, 40, 0.5), 600000);
	assert_int_equal(fbc_queue_backoff_ms(1000, 1000000, 0.5), 600000);
	assert_int_equal(fbc_queue_backoff_ms(0, 1, 0.5), 1000); /* 0 = default base */
}

static void fbc_queue_transient__network_and_database_only(void **state)
{
	(void)state;
	assert_true(fbc_queue_transient(FBC_EUNAVAIL));
	assert_true(fbc_queue_transient(FBC_EIO));
	assert_false(fbc_queue_transient(FBC_EINVAL));
	assert_false(fbc_queue_transient(FBC_EAUTH));
	assert_false(fbc_queue_transient(FBC_ENOTFOUND));
}

static void fbc_queue_builtin_kinds__has_noop(void **state)
{
	size_t n = 0;
	const fbc_queue_kind *k = fbc_queue_builtin_kinds(&n);
	bool found = false;

	(void)state;
	for (size_t i = 0; i < n; i++)
		found |= strcmp(k[i].kind, "noop") == 0 && k[i].fn != NULL;
	assert_true(found);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(fbc_queue_backoff_ms__doubles_with_jitter),
		cmocka_unit_test(fbc_queue_backoff_ms__capped_at_ten_minutes),
		cmocka_unit_test(fbc_queue_transient__network_and_database_only),
		cmocka_unit_test(fbc_queue_builtin_kinds__has_noop),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
