/* Small helpers over json_t shared by the bundle files (see internal.h). */
#include "service/bundle/internal.h"
#include "service/gojson/gojson.h"

#include <stdlib.h>
#include <string.h>

static char lower(char c)
{
	return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

/* Go's foldName equality for the ASCII names fbcd asks for. Go also folds
 * the Kelvin sign and the long s into k and s; names here never need it. */
bool fbc_bundle_fold_eq(const char *a, size_t an, const char *b)
{
	size_t bn = strlen(b);

	if (an != bn)
		return false;
	for (size_t i = 0; i < an; i++)
		if (lower(a[i]) != lower(b[i]))
			return false;
	return true;
}

json_t *fbc_bundle_fold_get(const json_t *obj, const char *name)
{
	const char *k;
	size_t kl;
	json_t *v, *found = NULL;

	if (!json_is_object(obj))
		return NULL;
	/* an exact member first: jansson keeps one value per exact key */
	json_object_keylen_foreach((json_t *)obj, k, kl, v)
	{
		if (fbc_bundle_fold_eq(k, kl, name))
			found = v;
	}
	return found;
}

char *fbc_bundle_gojson(const json_t *v, bool html, size_t *len)
{
	fbc_buf b;
	char *s;

	fbc_buf_init(&b, 0);
	if (fbc_gojson_value(&b, v, html) != 0) {
		fbc_buf_dispose(&b);
		return NULL;
	}
	s = fbc_buf_detach(&b, len);
	return s;
}
