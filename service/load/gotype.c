#include "service/load/gotype.h"

#include <string.h>
#include <strings.h>

const fbc_gt_field *fbc_gt_find_field(const fbc_gt_type *t, const char *key, size_t n)
{
	const fbc_gt_field *f;

	if (n == 0)
		return NULL; /* no field has an empty name */
	for (f = t->fields; f->name; f++) {
		if (f->len == n && f->name[0] == key[0] && memcmp(f->name, key, n) == 0)
			return f;
	}
	for (f = t->fields; f->name; f++) {
		if (f->len == n && strncasecmp(f->name, key, n) == 0)
			return f;
	}
	return NULL;
}

const char *fbc_gt_json_kind(const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT:
		return "object";
	case JSON_ARRAY:
		return "array";
	case JSON_STRING:
		return "string";
	case JSON_INTEGER:
	case JSON_REAL:
		return "number";
	case JSON_TRUE:
	case JSON_FALSE:
		return "bool";
	default:
		return "null";
	}
}
