/*
 * libFuzzer target for the WWW-Authenticate parser of the registry client
 * (fbc_oci_challenge_parse): never a crash; a challenge that parses is
 * Basic or Bearer, a Bearer one has a realm, and every field is
 * NUL-terminated within its array.
 */
#include "tests/fuzz/fuzz.h"

#include "pipeline/oci/client.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fbc_oci_challenge ch;
	fbc_error err;
	char *s = fuzz_strndup(data, size);

	if (!s)
		return 0;
	fbc_error_init(&err);
	if (fbc_oci_challenge_parse(&ch, s, &err) == 0) {
		if (strcmp(ch.scheme, "bearer") != 0 && strcmp(ch.scheme, "basic") != 0)
			abort();
		if (!strcmp(ch.scheme, "bearer") && !ch.realm[0])
			abort();
		if (strnlen(ch.realm, sizeof(ch.realm)) == sizeof(ch.realm) ||
		    strnlen(ch.service, sizeof(ch.service)) == sizeof(ch.service) ||
		    strnlen(ch.scope, sizeof(ch.scope)) == sizeof(ch.scope) ||
		    strnlen(ch.error, sizeof(ch.error)) == sizeof(ch.error))
			abort();
	} else if (err.code == 0 || !err.message[0]) {
		abort();
	}
	free(s);
	return 0;
}
