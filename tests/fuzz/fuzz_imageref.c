/*
 * libFuzzer target for the docker image reference parser
 * (fbc_imageref_parse): never a crash; a reference that parses has a domain
 * and a path, fields within their arrays, and its normalised form parses to
 * the same reference.
 */
#include "tests/fuzz/fuzz.h"

#include "service/fbc/imageref.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fbc_imageref a, b;
	fbc_error err;
	char *s = fuzz_strndup(data, size), norm[1024];

	if (!s)
		return 0;
	fbc_error_init(&err);
	if (fbc_imageref_parse(NULL, s, &err) == 0) {
		fbc_error_init(&err);
		if (fbc_imageref_parse(&a, s, &err) != 0)
			abort(); /* out == NULL must not change the verdict */
		if (!a.domain[0] || !a.path[0] || strnlen(a.tag, sizeof(a.tag)) == sizeof(a.tag) ||
		    strnlen(a.digest, sizeof(a.digest)) == sizeof(a.digest))
			abort();
		snprintf(norm, sizeof(norm), "%s/%s%s%s%s%s", a.domain, a.path, a.tag[0] ? ":" : "",
			 a.tag, a.digest[0] ? "@" : "", a.digest);
		fbc_error_init(&err);
		if (fbc_imageref_parse(&b, norm, &err) != 0 || memcmp(&a, &b, sizeof(a)) != 0)
			abort();
	} else if (err.code == 0 || !err.message[0]) {
		abort();
	}
	free(s);
	return 0;
}
