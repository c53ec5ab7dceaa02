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
#include "service/load/json_arena.h"
#include "service/load/load.h"

#include <stdlib.h>
#include <string.h>

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

/* The same file loaded as fbcd loads trees (staged: decoded on the parser
 * thread, its json_t trees in that thread's arena) gives the same findings;
 * so does it loaded to be validated (validate_only and validate_lean: values
 * checked on the raw text, fewer kept). */
static void staged_same(const char *name, const char *buf, size_t len, const fbc_load_limits *lim,
			const fbc_diags *plain)
{
	const char *paths[] = {name}, *data[] = {buf};
	size_t lens[] = {len};
	fbc_tree *t = NULL;
	fbc_catalog *cat = NULL;
	fbc_diags diags;
	fbc_error err;

	fbc_error_init(&err);
	if (fbc_diags_init(&diags, 1000) != 0)
		return;
	if (fbc_tree_open_mem(&t, paths, data, lens, 1, "fuzz", &err) == 0 &&
	    fbc_catalog_load_tree(&cat, t, lim, &diags, &err) == 0 &&
	    fbc_validate(cat, NULL, &diags, &err) == 0) {
		fbc_diags_sort(&diags);
		if (fbc_diags_count(&diags) != fbc_diags_count(plain))
			abort();
		for (size_t i = 0; i < fbc_diags_count(plain); i++) {
			const fbc_diag *a = fbc_diags_at(plain, i), *b = fbc_diags_at(&diags, i);

			if (strcmp(a->code, b->code) != 0 || strcmp(a->message, b->message) != 0 ||
			    a->line != b->line)
				abort();
		}
	}
	fbc_catalog_free(cat);
	fbc_tree_free(t);
	fbc_diags_dispose(&diags);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const names[] = {"catalog.json", "catalog.yaml", "dir/index.yml",
					    "x.json"};
	fbc_load_limits lim;
	fbc_diags diags;
	fbc_error err;
	struct ctx x = {0};
	static bool installed;
	bool plain_done = false;
	const char *name;
	char *buf;

	if (!installed) {
		fbc_json_arena_install(); /* as fbcd: staged loads use the arenas */
		installed = true;
	}
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
			fbc_diags_sort(&diags);
			plain_done = true;
		}
	}
	if (plain_done) {
		fbc_load_limits lean = lim;

		staged_same(name, buf, size - 1, &lim, &diags);
		/* loaded to be validated: values skimmed, fewer kept, the same findings */
		lean.validate_only = true;
		lean.validate_lean = true;
		staged_same(name, buf, size - 1, &lean, &diags);
		fbc_validate_opts strict = {.strict = true};
		(void)fbc_validate(x.cat, &strict, &diags, &err);
	}
	fbc_catalog_free(x.cat);
	fbc_diags_dispose(&diags);
	free(buf);
	return 0;
}
