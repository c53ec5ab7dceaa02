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

int fbc_json_same_tree(const json_t *a, const json_t *b);

int fbc_json_same_tree(const json_t *a, const json_t *b)
{
	if (json_typeof(a) != json_typeof(b))
		return 0;
	switch (json_typeof(a)) {
	case JSON_OBJECT: {
		void *ia = json_object_iter((json_t *)a), *ib = json_object_iter((json_t *)b);

		if (json_object_size(a) != json_object_size(b))
			return 0;
		for (; ia && ib; ia = json_object_iter_next((json_t *)a, ia),
				 ib = json_object_iter_next((json_t *)b, ib))
			if (strcmp(json_object_iter_key(ia), json_object_iter_key(ib)) != 0 ||
			    !fbc_json_same_tree(json_object_iter_value(ia),
						json_object_iter_value(ib)))
				return 0;
		return !ia && !ib;
	}
	case JSON_ARRAY:
		if (json_array_size(a) != json_array_size(b))
			return 0;
		for (size_t i = 0; i < json_array_size(a); i++)
			if (!fbc_json_same_tree(json_array_get(a, i), json_array_get(b, i)))
				return 0;
		return 1;
	case JSON_STRING:
		return json_string_length(a) == json_string_length(b) &&
		       memcmp(json_string_value(a), json_string_value(b), json_string_length(a)) ==
			       0;
	case JSON_INTEGER:
		return json_integer_value(a) == json_integer_value(b);
	case JSON_REAL:
		return json_real_value(a) == json_real_value(b);
	default:
		return 1;
	}
}

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
