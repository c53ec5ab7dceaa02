/*
 * libFuzzer target for the CODEOWNERS parser of the check engine
 * (pipeline/checks/settings.h): any bytes parse or fail with an error, and
 * what parsed can be queried.
 */
#include "tests/fuzz/fuzz.h"

#include "pipeline/checks/settings.h"

#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fbc_arena *a = NULL;
	fbc_settings s = {0};
	fbc_error err;

	if (fbc_arena_create(&a, 0) != 0)
		return 0;
	fbc_error_init(&err);
	if (fbc_settings_parse_codeowners(&s, a, "CODEOWNERS", (const char *)data, size, &err) ==
	    0) {
		static const char *const paths[] = {"a", "docs/x.md", "cats/one/catalog.yaml", ""};

		for (size_t i = 0; i < 4; i++) {
			const fbc_owner_rule *r = fbc_settings_owners_of(&s, paths[i]);

			if (r && (!r->pattern || r->line < 1))
				abort();
		}
	} else if (err.message[0] == '\0') {
		abort(); /* an error always says why */
	}
	fbc_arena_free(a);
	return 0;
}
