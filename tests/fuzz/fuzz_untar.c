/*
 * libFuzzer target for the upload path of PUT /v1/catalogs/{c}/content and
 * POST /v1/validate with a tar or tar.gz body: fbc_http_content_load
 * (extraction with fbc_http_untar into a fresh directory, load, link and
 * validate, then removal). Afterwards the temporary root must be empty
 * again: nothing escapes the extraction directory and nothing is left.
 */
#include "tests/fuzz/fuzz.h"

#include "api/http/content.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char root[256];

static void remove_root(void)
{
	rmdir(root);
}

static void check_empty(void)
{
	DIR *d = opendir(root);
	struct dirent *e;

	if (!d)
		abort();
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			abort();
	closedir(d);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fbc_catalog *cat = NULL;
	fbc_diags diags;
	fbc_error err;

	if (!root[0]) {
		const char *base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
		snprintf(root, sizeof(root), "%s/fbcd-fuzz-untar-XXXXXX", base);
		if (!mkdtemp(root))
			abort();
		atexit(remove_root);
	}
	if (fbc_diags_init(&diags, 1000) != 0)
		return 0;
	fbc_error_init(&err);
	if (fbc_http_content_load(
		    &cat, &diags, size && (data[0] & 1) ? "application/x-tar" : "application/gzip",
		    (const char *)data, size, root, NULL, size && (data[0] & 2), &err) == 0) {
		if (!cat)
			abort();
	} else if (err.code == 0) {
		abort();
	}
	fbc_catalog_free(cat);
	fbc_diags_dispose(&diags);
	check_empty();
	return 0;
}
