/*
 * libFuzzer target for the bundle reader, validator and renderer
 * (service/bundle): the input is a bundle directory in a small container
 * format, chunks separated by the byte 0x01, each "NAME\nCONTENT", NAME
 * starting with "m" meaning metadata/ and anything else manifests/ (names
 * are sanitised). Invariants: reading, validating and rendering never crash;
 * a failure always says why; a rendered blob is JSON and its indented form
 * too; a render is deterministic.
 */
#include "tests/fuzz/fuzz.h"

#include "service/bundle/bundle.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_FILES 16

static void check_render(const fbc_bundle_dir *b, const char *image, fbc_bundle_migrate m)
{
	fbc_buf a, c;
	fbc_error err;
	bool w1 = false, w2 = false;
	int r1, r2;

	fbc_buf_init(&a, 0);
	fbc_buf_init(&c, 0);
	fbc_error_init(&err);
	r1 = fbc_bundle_render(&a, &w1, b, image, m, &err);
	if (r1 != 0 && (err.code == 0 || err.message[0] == 0))
		abort();
	if (r1 == 0 && w1) {
		json_t *j = json_loadb(a.data, a.len, 0, NULL);
		if (j == NULL)
			abort();
		json_decref(j);
	}
	fbc_error_init(&err);
	r2 = fbc_bundle_render_json(&c, &w2, b, image, m, &err);
	if (r1 != r2 || w1 != w2)
		abort();
	if (r2 == 0 && w2) {
		json_t *j = json_loadb(c.data, c.len, 0, NULL);
		json_t *k = json_loadb(a.data, a.len, 0, NULL);
		if (j == NULL || k == NULL || !json_equal(j, k))
			abort();
		json_decref(j);
		json_decref(k);
	}
	fbc_buf_dispose(&a);
	fbc_buf_dispose(&c);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *paths[MAX_FILES + 2];
	const char *cpaths[MAX_FILES + 2], *cdata[MAX_FILES + 2];
	size_t lens[MAX_FILES + 2], n = 0;
	const uint8_t *rest = data;
	size_t rest_len = size;
	fbc_tree *t = NULL;
	fbc_bundle_dir *b = NULL;
	fbc_diags diags;
	fbc_error err;

	while (rest != NULL && n < MAX_FILES) {
		const uint8_t *chunk, *body;
		size_t clen, blen, nlen, o = 0;
		char name[48];
		rest = fuzz_split(rest, rest_len, 1, &chunk, &clen, &rest_len);
		body = fuzz_split(chunk, clen, '\n', &chunk, &nlen, &blen);
		if (body == NULL) {
			body = chunk + nlen;
			blen = 0;
		}
		for (size_t i = 1; i < nlen && o < 40; i++) {
			char ch = (char)chunk[i];
			if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
			    (ch >= '0' && ch <= '9') || ch == '.' || ch == '-' || ch == '_')
				name[o++] = ch;
		}
		name[o] = 0;
		paths[n] = malloc(64);
		if (paths[n] == NULL)
			goto done;
		snprintf(paths[n], 64, "%s/%s%zu",
			 nlen > 0 && chunk[0] == 'm' ? "metadata" : "manifests", name, n);
		cpaths[n] = paths[n];
		cdata[n] = (const char *)body;
		lens[n] = blen;
		n++;
	}
	/* both directories always exist */
	paths[n] = strdup("manifests/.keep");
	cpaths[n] = paths[n];
	cdata[n] = "";
	lens[n++] = 0;
	paths[n] = strdup("metadata/.keep");
	cpaths[n] = paths[n];
	cdata[n] = "";
	lens[n++] = 0;
	fbc_error_init(&err);
	if (fbc_tree_open_mem(&t, cpaths, cdata, lens, n, "fuzz", &err) != 0)
		goto done;
	if (fbc_bundle_read(&b, t, NULL, &err) != 0) {
		if (err.code == 0)
			abort();
		goto done;
	}
	if (fbc_diags_init(&diags, 0) == 0) {
		if (fbc_bundle_validate(b, &diags, &err) != 0 && err.code == 0)
			abort();
		fbc_diags_dispose(&diags);
	}
	(void)fbc_bundle_package(b);
	for (size_t i = 0; i < fbc_bundle_channels_count(b); i++)
		if (fbc_bundle_channel(b, i) == NULL)
			abort();
	check_render(b, "", FBC_BUNDLE_MIGRATE_NONE);
	check_render(b, "quay.io/x/y:1", FBC_BUNDLE_MIGRATE_CSV_METADATA);
done:
	fbc_bundle_free(b);
	fbc_tree_free(t);
	for (size_t i = 0; i < n; i++)
		free(paths[i]);
	return 0;
}
