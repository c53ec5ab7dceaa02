#include "service/load/gotype.h"

#include <string.h>
#include <strings.h>

const fbc_gt_field *fbc_gt_find_field(const fbc_gt_type *t, const char *key, size_t n)
{
	const fbc_gt_field *f;

	if (n == 0)
		return NULL; /* no field has an empty name */
	for (f = t->fields; f->name; f++) {
		if (f->name[0] == key[0] && strncmp(f->name, key, n) == 0 && f->name[n] == '\0')
			return f;
	}
	for (f = t->fields; f->name; f++) {
		if (strncasecmp(f->name, key, n) == 0 && f->name[n] == '\0')
			return f;
	}
	return NULL;
}
