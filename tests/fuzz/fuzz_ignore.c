/*
 * libFuzzer target for the .indexignore matcher (service/load/ignore.h).
 * Input: "DOMAIN\nIGNOREFILE\0PATH\nPATH...": an .indexignore file found in
 * DOMAIN, then paths to match; every pattern line is also tried as a glob
 * against every path segment.
 */
#include "tests/fuzz/fuzz.h"

#include "service/load/ignore.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *head, *rest, *dom, *file;
	size_t hn, rn, dn, fn;
	fbc_ignore *ig = NULL;
	fbc_error err;
	char *domain = NULL, *patterns = NULL, *paths = NULL;

	rest = fuzz_split(data, size, '\0', &head, &hn, &rn);
	file = fuzz_split(head, hn, '\n', &dom, &dn, &fn);
	if (!file || !(domain = fuzz_strndup(dom, dn)) || !(patterns = fuzz_strndup(file, fn)) ||
	    !(paths = fuzz_strndup(rest ? rest : (const uint8_t *)"", rest ? rn : 0)))
		goto done;
	fbc_error_init(&err);
	if (fbc_ignore_create(&ig, &err) != 0)
		goto done;
	/* the file as given: length-bounded, not NUL-terminated */
	fbc_error_init(&err);
	if (fbc_ignore_add_file(ig, domain, (const char *)file, fn, &err) != 0)
		goto done;
	/* the implicit root pattern (a later "!..." line may negate it) */
	if (!memchr(file, '!', fn) && !fbc_ignore_match(ig, ".indexignore"))
		abort();
	for (char *p = paths, *nl; p; p = nl) {
		nl = strchr(p, '\n');
		if (nl)
			*nl++ = '\0';
		(void)fbc_ignore_match(ig, p);
		for (char *l = patterns, *e; l && *l; l = e) {
			e = strchr(l, '\n');
			size_t n = e ? (size_t)(e - l) : strlen(l);
			char save = l[n];
			l[n] = '\0';
			(void)fbc_ignore_glob(l, p);
			l[n] = save;
			e = e ? e + 1 : NULL;
		}
	}
done:
	fbc_ignore_free(ig);
	free(domain);
	free(patterns);
	free(paths);
	return 0;
}
