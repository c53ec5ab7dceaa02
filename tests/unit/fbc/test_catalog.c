/* The real community-operators catalog validates with zero findings. */
#include "service/fbc/model.h"
#include "service/fbc/validate.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <cmocka.h>

static void fbc_catalog_load_dir__real_catalog_is_valid(void **state)
{
	const char *base = getenv("FBC_DATA_DIR");
	char root[1024];
	struct stat st;
	fbc_catalog *cat = NULL;
	fbc_diags diags;
	fbc_error err;
	size_t i;

	(void)state;
	snprintf(root, sizeof(root), "%s/community-operators/catalog-v4.20",
		 base ? base : "/work/shared/data");
	if (stat(root, &st) != 0) {
		fprintf(stderr, "skipped: %s not found\n", root);
		skip();
	}
	fbc_error_init(&err);
	assert_int_equal(fbc_diags_init(&diags, 0), 0);
	if (fbc_catalog_load_dir(&cat, root, NULL, &diags, &err) != 0)
		fail_msg("load: %s %s", err.where, err.message);
	assert_int_equal(fbc_validate(cat, NULL, &diags, &err), 0);
	for (i = 0; i < fbc_diags_count(&diags) && i < 20; i++) {
		const fbc_diag *d = fbc_diags_at(&diags, i);

		fprintf(stderr, "%s %s:%d %s\n", d->code, d->file ? d->file : "-", d->line,
			d->message);
	}
	assert_int_equal(fbc_diags_count(&diags), 0);
	assert_int_equal(cat->n_sorted_packages, 37);
	assert_true(cat->bundles.len > 37);
	fbc_catalog_free(cat);
	fbc_diags_dispose(&diags);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(fbc_catalog_load_dir__real_catalog_is_valid),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
