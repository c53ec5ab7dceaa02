/* A per-catalog GVK -> bundles index (fbc_resolve_index), built once and
 * shared by resolutions so that a dependency on an API does not scan every
 * bundle of every catalog. */
#include "service/resolver/internal.h"

#include <stdlib.h>
#include <string.h>

struct fbc_resolve_index {
	const fbc_catalog *cat;
	fbc_arena *arena;
	fbc_strmap by_gvk; /* "group\x1fversion\x1fkind" -> r_bundle_list */
};

char *r_gvk_key(fbc_arena *a, const char *group, const char *version, const char *kind)
{
	return fbc_arena_printf(a, "%s\x1f%s\x1f%s", group, version, kind);
}

static int list_push(fbc_arena *a, r_bundle_list *l, const fbc_bundle *b)
{
	if (l->n && l->items[l->n - 1] == b)
		return 0; /* the same GVK listed twice by one bundle */
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 4;
		const fbc_bundle **items = fbc_arena_alloc(a, cap * sizeof(*items));
		if (!items)
			return FBC_ENOMEM;
		if (l->n)
			memcpy(items, l->items, l->n * sizeof(*items));
		l->items = items;
		l->cap = cap;
	}
	l->items[l->n++] = b;
	return 0;
}

int fbc_resolve_index_build(fbc_resolve_index **out, const fbc_catalog *cat, fbc_error *err)
{
	fbc_resolve_index *ix = calloc(1, sizeof(*ix));
	int rc = FBC_ENOMEM;

	if (!ix)
		goto done;
	ix->cat = cat;
	fbc_strmap_init(&ix->by_gvk);
	if (fbc_arena_create(&ix->arena, 0) < 0)
		goto done;
	for (size_t i = 0; i < cat->bundles.len; i++) {
		const fbc_bundle *b = FBC_CATALOG_AT(cat->bundles, fbc_bundle, i);

		for (size_t j = 0; j < b->n_provided; j++) {
			const fbc_gvk *g = &b->provided[j];
			char *key = r_gvk_key(ix->arena, g->group, g->version, g->kind);
			r_bundle_list *l;

			if (!key)
				goto done;
			l = fbc_strmap_get(&ix->by_gvk, key);
			if (!l) {
				if (!(l = fbc_arena_calloc(ix->arena, 1, sizeof(*l))))
					goto done;
				if (fbc_strmap_put(&ix->by_gvk, key, l, NULL) < 0)
					goto done;
			}
			if (list_push(ix->arena, l, b) < 0)
				goto done;
		}
	}
	*out = ix;
	ix = NULL;
	rc = 0;
done:
	fbc_resolve_index_free(ix);
	if (rc < 0)
		fbc_error_set(err, rc, NULL, "out of memory");
	return rc;
}

void fbc_resolve_index_free(fbc_resolve_index *ix)
{
	if (!ix)
		return;
	fbc_strmap_dispose(&ix->by_gvk);
	fbc_arena_free(ix->arena);
	free(ix);
}

const r_bundle_list *r_index_gvk(const fbc_resolve_index *ix, const char *key)
{
	return fbc_strmap_get(&ix->by_gvk, key);
}

const fbc_catalog *r_index_catalog(const fbc_resolve_index *ix)
{
	return ix->cat;
}
