/*
 * libFuzzer target for the loader's YAML fast path (service/load/yamlfast.c):
 * whenever fbc_yaml_fast_doc accepts a document, the libyaml path must read
 * the same value (same types, same key order, strings byte for byte) and
 * report the same root line; otherwise the fast path would change what the
 * loader yields. Aborts on any difference. The first byte picks the nesting
 * limit (small ones reach the depth check) and the string limit.
 */
#include "tests/fuzz/fuzz.h"

#include "service/load/internal.h"

#include <stdlib.h>
#include <string.h>

int fbc_json_same_tree(const json_t *a, const json_t *b); /* json_same.c */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fbc_load_limits lim;
	fbc_error err;
	json_t *fast = NULL, *slow = NULL;
	int line_fast = -1, line_slow = -1, rc;
	char *buf;

	if (size < 1)
		return 0;
	fbc_load_limits_resolve(&lim, NULL);
	if (data[0] & 0x80) {
		lim.max_depth = 1 + (data[0] & 7);
		lim.max_string_bytes = 1 + ((data[0] >> 3) & 15) * 4;
	}
	data++;
	size--;
	if (!(buf = malloc(size ? size : 1)))
		return 0;
	memcpy(buf, data, size);
	rc = fbc_yaml_fast_doc(&fast, &line_fast, buf, size, 7, &lim);
	if (rc == 0) {
		fbc_error_init(&err);
		if (fbc_yaml_doc_parse_libyaml(&slow, &line_slow, buf, size, 7, &lim, &err) != 0 ||
		    !fbc_json_same_tree(fast, slow) || line_fast != line_slow)
			abort();
	} else if (rc != 1 && rc != FBC_ENOMEM) {
		abort();
	}
	json_decref(fast);
	json_decref(slow);
	free(buf);
	return 0;
}
