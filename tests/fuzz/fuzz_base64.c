/*
 * libFuzzer target for service/base/base64: the decoder with its vector loop
 * (AVX2 on x86-64 CPUs that have it) against the portable loops alone, on
 * any input: same status, same bytes, same offset of the first bad byte,
 * and the same answer when only validating. Built by meson (-Dfuzz=true);
 * the replay runs over corpus/base64 in every build.
 */
#include "service/base/base64.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *s = (const char *)data;
	unsigned char *a = NULL, *b = NULL;
	size_t alen = 0, blen = 0, abad = 1, bbad = 2, vbad = 3;
	int ra = fbc_base64_decode(&a, &alen, &abad, s, size);
	int rb = fbc_base64_decode_portable(&b, &blen, &bbad, s, size);
	int rv = fbc_base64_decode(NULL, NULL, &vbad, s, size);

	if (ra != rb || rv != ra)
		abort();
	if (ra == 0 && (alen != blen || memcmp(a, b, alen) != 0 || a[alen] != 0))
		abort();
	if (ra != 0 && (abad != bbad || vbad != abad || abad > size))
		abort();
	free(a);
	free(b);
	return 0;
}
