#include "service/cel/cel.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

static void fbc_cel_compile__placeholder(void **state)
{
	(void)state;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(fbc_cel_compile__placeholder),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
