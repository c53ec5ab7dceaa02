/*
 * libFuzzer target for the loader on one in-memory file (fbc_load_buffer,
 * as HTTP uploads of JSON lines and YAML use it) and the model built from
 * it: fbc_catalog_add_meta, fbc_catalog_link and fbc_validate.
 *
 * The first byte picks the file name (and so the YAML or JSON path); the
 * rest is the file. Limits are lowered so that each input stays fast.
 */
#include "tests/fuzz/fuzz.h"

#include "service/fbc/model.h"
#include "service/fbc/validate.h"
#include "service/load/load.h"

#include <stdlib.h>

struct ctx {
	fbc_catalog *cat;
	fbc_diags *diags;
	size_t metas;
};

static int on_meta(void *c, const fbc_meta *meta, fbc_error *err)
{
	struct ctx *x = c;

	/* the loader's contract (L9): schema is set and non-empty */
	if (!meta->schema || !meta->schema[0] || !meta->package || !meta->name || !meta->blob)
		abort();
	x->metas++;
	return fbc_catalog_add_meta(x->cat, meta, x->diags, err);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const names[] = {"catalog.json", "catalog.yaml", "dir/index.yml",
					    "x.json"};
	fbc_load_limits lim;
	fbc_diags diags;
	fbc_error err;
	struct ctx x = {0};
	const char *name;
	char *buf;

	if (size == 0)
		return 0;
	name = names[data[0] % 4];
	/* unterminated on purpose (exact size): the loader must not read past len */
	buf = malloc(size - 1 ? size - 1 : 1);
	if (!buf)
		return 0;
	for (size_t i = 1; i < size; i++)
		buf[i - 1] = (char)data[i];
	fbc_load_limits_default(&lim);
	lim.max_file_bytes = 1 << 20;
	lim.max_alias_nodes = 2000;
	lim.max_blobs = 2000;
	lim.threads = 1;
	fbc_error_init(&err);
	if (fbc_diags_init(&diags, 1000) != 0) {
		free(buf);
		return 0;
	}
	if (fbc_catalog_create(&x.cat, &lim, &err) == 0) {
		x.diags = &diags;
		if (fbc_load_buffer(name, buf, size - 1, &lim, on_meta, &x, &diags, &err) == 0 &&
		    fbc_catalog_link(&x.cat[0], &err) == 0) {
			(void)fbc_catalog_link(x.cat, &err); /* idempotent */
			(void)fbc_validate(x.cat, NULL, &diags, &err);
			fbc_validate_opts strict = {.strict = true};
			(void)fbc_validate(x.cat, &strict, &diags, &err);
			fbc_diags_sort(&diags);
		}
	}
	fbc_catalog_free(x.cat);
	fbc_diags_dispose(&diags);
	free(buf);
	return 0;
}
