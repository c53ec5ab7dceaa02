/*
 * libFuzzer target for the operators/<pkg>/ci.yaml parser of the check engine
 * (pipeline/checks/settings.h): any bytes parse or fail with an error, and
 * what parsed can be queried.
 */
#include "tests/fuzz/fuzz.h"

#include "pipeline/checks/settings.h"

#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fbc_arena *a = NULL;
	fbc_ci_yaml s = {0};
	fbc_error err;

	if (fbc_arena_create(&a, 0) != 0)
		return 0;
	fbc_error_init(&err);
	if (fbc_settings_parse_ci(&s, a, "ci.yaml", (const char *)data, size, &err) == 0) {
		for (size_t i = 0; i < s.n_reviewers; i++)
			if (!s.reviewers[i])
				abort();
		(void)fbc_login_in("alice", s.reviewers, s.n_reviewers);
	} else if (err.message[0] == '\0') {
		abort(); /* an error always says why */
	}
	fbc_arena_free(a);
	return 0;
}
