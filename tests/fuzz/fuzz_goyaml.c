/*
 * libFuzzer target for service/goyaml: any YAML or JSON document that
 * fbc_yaml_to_json decodes to a mapping or sequence is written by
 * fbc_goyaml_emit, and the written text decodes (through the same loader)
 * to the same value, numbers compared as numbers (an integral real is
 * written as an integer, as Go does). Emitting twice gives the same bytes.
 */
#include "tests/fuzz/fuzz.h"

#include "service/goyaml/goyaml.h"
#include "service/load/load.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool same_value(const json_t *a, const json_t *b)
{
	if (json_is_number(a) && json_is_number(b))
		return json_number_value(a) == json_number_value(b);
	if (json_typeof(a) != json_typeof(b))
		return false;
	if (json_is_array(a)) {
		if (json_array_size(a) != json_array_size(b))
			return false;
		for (size_t i = 0; i < json_array_size(a); i++)
			if (!same_value(json_array_get(a, i), json_array_get(b, i)))
				return false;
		return true;
	}
	if (json_is_object(a)) {
		const char *k;
		json_t *v;
		if (json_object_size(a) != json_object_size(b))
			return false;
		json_object_foreach((json_t *)a, k, v)
		{
			json_t *w = json_object_get(b, k);
			if (w == NULL || !same_value(v, w))
				return false;
		}
		return true;
	}
	return json_equal((json_t *)a, (json_t *)b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fbc_load_limits lim;
	fbc_error err;
	json_t *j = NULL, *back = NULL;
	fbc_buf out, out2;

	fbc_load_limits_default(&lim);
	lim.max_alias_nodes = 2000;
	fbc_error_init(&err);
	fbc_buf_init(&out, 1 << 24);
	fbc_buf_init(&out2, 1 << 24);
	if (fbc_yaml_to_json(&j, (const char *)data, size, &lim, &err) != 0)
		goto done;
	if (!json_is_object(j) && !json_is_array(j))
		goto done;
	if (fbc_goyaml_emit(&out, j, &err) != 0) {
		if (err.code != FBC_ELIMIT)
			abort();
		goto done;
	}
	if (fbc_goyaml_emit(&out2, j, &err) != 0 || out.len != out2.len ||
	    memcmp(out.data, out2.data, out.len) != 0)
		abort();
	if (fbc_yaml_to_json(&back, out.data, out.len, &lim, &err) != 0) {
		fprintf(stderr, "emitted YAML does not parse: %s\n%s\n", err.message, out.data);
		abort();
	}
	if (!same_value(j, back)) {
		char *d1 = json_dumps(j, JSON_ENCODE_ANY), *d2 = json_dumps(back, JSON_ENCODE_ANY);
		fprintf(stderr, "round trip changed the value:\n%s\n%s\nYAML:\n%s\n", d1, d2,
			out.data);
		free(d1);
		free(d2);
		abort();
	}
done:
	json_decref(j);
	json_decref(back);
	fbc_buf_dispose(&out);
	fbc_buf_dispose(&out2);
	return 0;
}
