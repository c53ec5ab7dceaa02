/*
 * libFuzzer target for fbc_yaml_to_json (YAML 1.1 with go-yaml v2 typing,
 * and JSON): any input gives a JSON value or an error, within the limits;
 * a decoded value serialises and parses back to an equal value, of a size
 * bounded by the alias expansion limit.
 */
#include "tests/fuzz/fuzz.h"

#include "service/load/load.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fbc_load_limits lim;
	fbc_error err;
	json_t *j = NULL;
	char *buf = malloc(size ? size : 1), *dump;

	if (!buf)
		return 0;
	for (size_t i = 0; i < size; i++)
		buf[i] = (char)data[i];
	fbc_load_limits_default(&lim);
	lim.max_alias_nodes = 2000;
	fbc_error_init(&err);
	if (fbc_yaml_to_json(&j, buf, size, &lim, &err) == 0) {
		if (!j)
			abort();
		dump = json_dumps(j, JSON_ENCODE_ANY | JSON_COMPACT);
		if (dump) {
			json_error_t jerr;
			/* aliases are bounded by bytes: the serialised value stays
			 * within a small multiple of the expansion bound (JSON spells
			 * some scalars longer than YAML: ~ is null, escapes) */
			size_t bound = size * lim.max_expand_ratio;
			if (bound < FBC_LOAD_EXPAND_FLOOR)
				bound = FBC_LOAD_EXPAND_FLOOR;
			if (strlen(dump) > 16 * bound)
				abort();
			json_t *back = json_loads(dump, JSON_DECODE_ANY | JSON_ALLOW_NUL, &jerr);
			if (!back || !json_equal(j, back))
				abort();
			json_decref(back);
			free(dump);
		}
		json_decref(j);
	} else if (err.code == 0) {
		abort(); /* a failure always says why */
	}
	free(buf);
	return 0;
}
