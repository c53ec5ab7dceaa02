/*
 * libFuzzer target for the loader's JSON fast path (service/load/jsonfast.c):
 * whenever fbc_json_fast_object accepts an input, jansson's json_loadb with
 * the flags the loader uses must read the same value (same types, same key
 * order) from the same bytes, consuming as many; otherwise the fast path
 * would change what the loader yields. Its verdict on the depth and string
 * limits (picked from the input's size, so that both answers occur) must be
 * fbc_json_within's, and the newlines it counts those of the bytes it used.
 * Aborts on any difference.
 */
#include "tests/fuzz/fuzz.h"

#include "service/load/internal.h"

#include <stdlib.h>
#include <string.h>

int fbc_json_same_tree(const json_t *a, const json_t *b); /* json_same.c */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t used = 0;
	fbc_load_limits lim;
	fbc_json_fast_info info;
	const char *which = NULL;
	json_t *fast, *slow;
	json_error_t jerr;
	int lines = 0;

	fbc_load_limits_default(&lim);
	lim.max_depth = 1 + size % 7;
	lim.max_string_bytes = size % 61;
	fast = fbc_json_fast_parse((const char *)data, size, &lim, &info);
	if (!fast)
		return 0;
	used = info.consumed;
	if (info.within != fbc_json_within(fast, 0, &lim, &which))
		abort();
	for (size_t i = 0; i < used; i++)
		lines += data[i] == '\n';
	if (lines != info.lines)
		abort();
	slow = json_loadb((const char *)data, size, JSON_DISABLE_EOF_CHECK | JSON_DECODE_ANY,
			  &jerr);
	if (!slow || !fbc_json_same_tree(fast, slow) || jerr.position <= 0 ||
	    (size_t)jerr.position != used)
		abort();
	json_decref(fast);
	json_decref(slow);
	return 0;
}
