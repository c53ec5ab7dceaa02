/*
 * libFuzzer target for the config.yaml (community-operators) parser of the check engine
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
	if (fbc_settings_parse_config(&s, a, "config.yaml", (const char *)data, size, &err) == 0) {
		for (size_t i = 0; i < s.n_waivers; i++)
			if (!s.waivers[i].check)
				abort();
		(void)fbc_settings_waived(&s, "graph", "ack-sns-controller");
		(void)fbc_login_in("Maint", s.maintainers, s.n_maintainers);
	} else if (err.message[0] == '\0') {
		abort(); /* an error always says why */
	}
	fbc_arena_free(a);
	return 0;
}
