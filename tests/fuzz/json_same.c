/*
 * Two json_t trees equal in every respect the loader's fast paths must keep:
 * types, values, strings byte for byte, and the order of object keys (which
 * json_equal ignores). Shared by the fuzz targets json_fast and yaml_fast
 * and their unit tests.
 */
#include <jansson.h>
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
