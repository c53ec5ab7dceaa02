/*
 * libFuzzer target for the check cache's readers (pipeline/checks: disk.c, amcache.c,
 * record.c): what an on-disk entry holds is read back by a later process, so any bytes in a
 * cache file must be rejected or read whole, never crash. The first byte picks the reader:
 * 0 the file header, 1 the add-mode entry (and each catalog content in it as a tree),
 * 2 a recorded read list replayed on a small tree.
 */
#include "tests/fuzz/fuzz.h"

#include "pipeline/checks/internal.h"

#include <stdlib.h>
#include <string.h>

static void entry(const uint8_t *data, size_t size)
{
	chk_amc_entry *e = NULL;
	char *copy = malloc(size ? size : 1);

	if (!copy)
		return;
	memcpy(copy, data, size);
	if (chk_amc_thaw(&e, copy, size) != 0)
		return;
	for (size_t i = 0; i < e->n_contents; i++) {
		fbc_tree *t = NULL;
		fbc_error err;

		fbc_error_init(&err);
		if (chk_amc_content_tree(&t, e->contents[i], e->content_len[i], "v4.99", &err) == 0)
			fbc_tree_free(t);
	}
	for (int k = 0; k < 2; k++) {
		const chk_amc_build *b = &e->b[k];

		for (size_t i = 0; i < b->n_cats; i++)
			if (!b->names[i] || b->content[i] >= e->n_contents)
				abort();
		for (size_t i = 0; i < b->n_add; i++)
			if (!b->add_pkg[i] || !b->add_mode[i])
				abort();
		for (size_t i = 0; i < b->n_find; i++)
			if (!b->finds[i].path || !b->finds[i].message)
				abort();
	}
	chk_amc_entry_free(e);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size == 0)
		return 0;
	switch (data[0] % 3) {
	case 0: {
		const char *p;
		size_t n;

		if (chk_disk_decode((const char *)data + 1, size - 1, &p, &n) == 0 &&
		    (p < (const char *)data + 1 || p + n > (const char *)data + size))
			abort();
		break;
	}
	case 1:
		entry(data + 1, size - 1);
		break;
	default: {
		const char *paths[] = {"a/b", "c"}, *datas[] = {"x", "y"};
		size_t lens[] = {1, 1};
		fbc_tree *t = NULL;
		fbc_error err;

		fbc_error_init(&err);
		if (fbc_tree_open_mem(&t, paths, datas, lens, 2, "t", &err) == 0) {
			(void)chk_rec_verify((const char *)data + 1, size - 1, t);
			fbc_tree_free(t);
		}
	}
	}
	return 0;
}
