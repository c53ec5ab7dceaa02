/*
 * libFuzzer target for the loader's JSON fast path (service/load/jsonfast.c):
 * whenever fbc_json_fast_object accepts an input, jansson's json_loadb with
 * the flags the loader uses must read the same value (same types, same key
 * order) from the same bytes, consuming as many; otherwise the fast path
 * would change what the loader yields. Aborts on any difference.
 */
#include "tests/fuzz/fuzz.h"

#include "service/load/internal.h"

#include <stdlib.h>
#include <string.h>

int fbc_json_same_tree(const json_t *a, const json_t *b); /* json_same.c */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t used = 0;
	json_t *fast = fbc_json_fast_object((const char *)data, size, &used), *slow;
	json_error_t jerr;

	if (!fast)
		return 0;
	slow = json_loadb((const char *)data, size, JSON_DISABLE_EOF_CHECK | JSON_DECODE_ANY,
			  &jerr);
	if (!slow || !fbc_json_same_tree(fast, slow) || jerr.position <= 0 ||
	    (size_t)jerr.position != used)
		abort();
	json_decref(fast);
	json_decref(slow);
	return 0;
}
