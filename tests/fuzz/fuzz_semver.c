/*
 * libFuzzer target for service/semver: version parsing (strict and
 * tolerant), releases, both range grammars and membership.
 *
 * Not wired into meson (there is no fuzz option yet). Build by hand:
 *
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -D_GNU_SOURCE -I. \
 *     tests/fuzz/fuzz_semver.c service/semver/{semver,blang,masterminds,gore}.c \
 *     service/base/error.c \
 *     -o /tmp/fuzz_semver && /tmp/fuzz_semver -max_total_time=60
 *
 * The input is split at the first NUL byte: the part before is the range,
 * the part after the version (the whole input is also tried as a version).
 */
#include "service/semver/semver.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_version(const fbc_semver_range *b, const fbc_semver_range *m, const char *s,
			  size_t n)
{
	fbc_semver v, w;
	fbc_error err;
	char buf[2 * FBC_SEMVER_VERSION_MAX + 64];
	size_t len;

	fbc_error_init(&err);
	if (fbc_semver_parse(&v, s, n, &err) == 0) {
		/* formatting a strictly parsed version gives back the input */
		len = fbc_semver_format(&v, buf, sizeof(buf));
		if (len != n || memcmp(buf, s, n) != 0)
			abort();
		if (fbc_semver_parse(&w, buf, len, &err) != 0 || fbc_semver_compare(&v, &w) != 0)
			abort();
		(void)fbc_semver_range_contains(b, &v);
		(void)fbc_semver_range_contains(m, &v);
	}
	fbc_error_init(&err);
	if (fbc_semver_parse_tolerant(&v, s, n, &err) == 0) {
		len = fbc_semver_format(&v, buf, sizeof(buf));
		if (len >= sizeof(buf) || fbc_semver_parse(&w, buf, len, &err) != 0 ||
		    fbc_semver_compare(&v, &w) != 0)
			abort();
		(void)fbc_semver_range_contains(b, &v);
		(void)fbc_semver_range_contains(m, &v);
	}
	fbc_error_init(&err);
	(void)fbc_release_validate(s, n, &err);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *s = (const char *)data;
	const char *nul = memchr(s, '\0', size);
	size_t rn = nul ? (size_t)(nul - s) : size;
	char *range = malloc(rn + 1);
	fbc_semver_range *b = NULL, *m = NULL;
	fbc_error err;

	if (!range)
		return 0;
	memcpy(range, s, rn);
	range[rn] = '\0';
	fbc_error_init(&err);
	if (fbc_semver_range_parse_blang(&b, range, &err) != 0 && b != NULL)
		abort();
	fbc_error_init(&err);
	if (fbc_semver_range_parse_masterminds(&m, range, &err) != 0 && m != NULL)
		abort();
	if (nul)
		check_version(b, m, nul + 1, size - rn - 1);
	check_version(b, m, s, size);
	fbc_semver_range_free(b);
	fbc_semver_range_free(m);
	free(range);
	return 0;
}
