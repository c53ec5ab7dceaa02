/* Small helpers shared by the fuzz targets (see fuzz.h). */
#include "tests/fuzz/fuzz.h"

#include <stdlib.h>
#include <string.h>

char *fuzz_strndup(const uint8_t *data, size_t n)
{
	char *s = malloc(n + 1);

	if (!s)
		return NULL;
	if (n)
		memcpy(s, data, n);
	s[n] = '\0';
	return s;
}

const uint8_t *fuzz_split(const uint8_t *data, size_t size, int sep, const uint8_t **head,
			  size_t *head_len, size_t *rest_len)
{
	const uint8_t *p = size ? memchr(data, sep, size) : NULL;

	*head = data;
	if (!p) {
		*head_len = size;
		*rest_len = 0;
		return NULL;
	}
	*head_len = (size_t)(p - data);
	*rest_len = size - *head_len - 1;
	return p + 1;
}
