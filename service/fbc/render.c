/* Canonical JSON writer for a catalog; see render.h for the order and format. */
#include "service/fbc/render.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define TRY(expr)                       \
	do {                            \
		if ((rc = (expr)) != 0) \
			goto done;      \
	} while (0)

static int put_str(fbc_buf *b, const char *s)
{
	if (!s)
		s = "";
	return fbc_buf_put_json_string(b, s, strlen(s));
}

/* "key": with the leading comma when it is not the first member. */
static int put_key(fbc_buf *b, const char *key, int *first)
{
	int rc;

	if (!*first && (rc = fbc_buf_putc(b, ',')))
		return rc;
	*first = 0;
	if ((rc = put_str(b, key)))
		return rc;
	return fbc_buf_putc(b, ':');
}

static int put_kv_str(fbc_buf *b, const char *key, const char *val, int *first)
{
	int rc;

	if ((rc = put_key(b, key, first)))
		return rc;
	return put_str(b, val);
}

static int put_properties(fbc_buf *b, const fbc_property *props, size_t n, int *first)
{
	int rc = 0;

	if (n == 0)
		return 0;
	TRY(put_key(b, "properties", first));
	TRY(fbc_buf_putc(b, '['));
	for (size_t i = 0; i < n; i++) {
		if (i)
			TRY(fbc_buf_putc(b, ','));
		TRY(fbc_buf_puts(b, "{\"type\":"));
		TRY(put_str(b, props[i].type));
		/* Values are stored as compact sorted JSON already; an absent value
		 * renders as null, as Go marshals a nil json.RawMessage. */
		TRY(fbc_buf_puts(b, ",\"value\":"));
		if (props[i].value)
			TRY(fbc_buf_append(b, props[i].value, props[i].value_len));
		else
			TRY(fbc_buf_puts(b, "null"));
		TRY(fbc_buf_putc(b, '}'));
	}
	TRY(fbc_buf_putc(b, ']'));
done:
	return rc;
}

static int fail(int rc, const char *what, fbc_error *err)
{
	return fbc_error_set(err, rc, what, "rendering %s: %s", what,
			     rc == FBC_ELIMIT ? "output exceeds the buffer limit"
					      : "out of memory");
}

/* The icon text is kept as written, which may wrap lines; CR and LF are not
 * part of the data (the decoder tolerates them), so they are dropped. */
static int put_base64(fbc_buf *b, const char *s)
{
	int rc = 0;
	size_t start = 0, i;

	TRY(fbc_buf_putc(b, '"'));
	for (i = 0; s[i]; i++) {
		if (s[i] != '\r' && s[i] != '\n' && s[i] != '"' && s[i] != '\\')
			continue;
		TRY(fbc_buf_append(b, s + start, i - start));
		start = i + 1;
	}
	TRY(fbc_buf_append(b, s + start, i - start));
	TRY(fbc_buf_putc(b, '"'));
done:
	return rc;
}

int fbc_render_package(fbc_buf *b, const fbc_package *pkg, fbc_error *err)
{
	int rc = 0, first = 1;

	TRY(fbc_buf_putc(b, '{'));
	TRY(put_kv_str(b, "defaultChannel", pkg->default_channel, &first));
	if (pkg->description && pkg->description[0])
		TRY(put_kv_str(b, "description", pkg->description, &first));
	if (pkg->icon_data || pkg->icon_mediatype) {
		TRY(put_key(b, "icon", &first));
		TRY(fbc_buf_puts(b, "{\"base64data\":"));
		TRY(put_base64(b, pkg->icon_data ? pkg->icon_data : ""));
		TRY(fbc_buf_puts(b, ",\"mediatype\":"));
		TRY(put_str(b, pkg->icon_mediatype));
		TRY(fbc_buf_putc(b, '}'));
	}
	TRY(put_kv_str(b, "name", pkg->name, &first));
	TRY(put_properties(b, pkg->properties, pkg->n_properties, &first));
	TRY(put_kv_str(b, "schema", "olm.package", &first));
	TRY(fbc_buf_putc(b, '}'));
done:
	return rc ? fail(rc, "olm.package", err) : 0;
}

static int put_entry(fbc_buf *b, const fbc_channel_entry *e)
{
	int rc = 0, first = 1;

	TRY(fbc_buf_putc(b, '{'));
	TRY(put_kv_str(b, "name", e->name, &first));
	if (e->replaces && e->replaces[0])
		TRY(put_kv_str(b, "replaces", e->replaces, &first));
	if (e->skip_range && e->skip_range[0])
		TRY(put_kv_str(b, "skipRange", e->skip_range, &first));
	if (e->n_skips) {
		TRY(put_key(b, "skips", &first));
		TRY(fbc_buf_putc(b, '['));
		for (size_t i = 0; i < e->n_skips; i++) {
			if (i)
				TRY(fbc_buf_putc(b, ','));
			TRY(put_str(b, e->skips[i]));
		}
		TRY(fbc_buf_putc(b, ']'));
	}
	TRY(fbc_buf_putc(b, '}'));
done:
	return rc;
}

int fbc_render_channel(fbc_buf *b, const fbc_channel *ch, fbc_error *err)
{
	int rc = 0, first = 1;

	TRY(fbc_buf_putc(b, '{'));
	TRY(put_key(b, "entries", &first));
	TRY(fbc_buf_putc(b, '['));
	for (size_t i = 0; i < ch->n_entries; i++) {
		if (i)
			TRY(fbc_buf_putc(b, ','));
		TRY(put_entry(b, &ch->entries[i]));
	}
	TRY(fbc_buf_putc(b, ']'));
	TRY(put_kv_str(b, "name", ch->name, &first));
	TRY(put_kv_str(b, "package", ch->package, &first));
	TRY(put_properties(b, ch->properties, ch->n_properties, &first));
	TRY(put_kv_str(b, "schema", "olm.channel", &first));
	TRY(fbc_buf_putc(b, '}'));
done:
	return rc ? fail(rc, "olm.channel", err) : 0;
}

int fbc_render_bundle(fbc_buf *b, const fbc_bundle *bd, fbc_error *err)
{
	int rc = 0, first = 1;

	TRY(fbc_buf_putc(b, '{'));
	TRY(put_kv_str(b, "image", bd->image, &first));
	TRY(put_kv_str(b, "name", bd->name, &first));
	TRY(put_kv_str(b, "package", bd->package, &first));
	TRY(put_properties(b, bd->properties, bd->n_properties, &first));
	if (bd->n_related_images) {
		TRY(put_key(b, "relatedImages", &first));
		TRY(fbc_buf_putc(b, '['));
		for (size_t i = 0; i < bd->n_related_images; i++) {
			int f2 = 1;

			if (i)
				TRY(fbc_buf_putc(b, ','));
			TRY(fbc_buf_putc(b, '{'));
			TRY(put_kv_str(b, "image", bd->related_images[i].image, &f2));
			TRY(put_kv_str(b, "name", bd->related_images[i].name, &f2));
			TRY(fbc_buf_putc(b, '}'));
		}
		TRY(fbc_buf_putc(b, ']'));
	}
	TRY(put_kv_str(b, "schema", "olm.bundle", &first));
	TRY(fbc_buf_putc(b, '}'));
done:
	return rc ? fail(rc, "olm.bundle", err) : 0;
}

int fbc_render_deprecation(fbc_buf *b, const fbc_deprecation *d, fbc_error *err)
{
	int rc = 0, first = 1;

	TRY(fbc_buf_putc(b, '{'));
	TRY(put_key(b, "entries", &first));
	TRY(fbc_buf_putc(b, '['));
	for (size_t i = 0; i < d->n_entries; i++) {
		const fbc_deprecation_entry *e = &d->entries[i];
		int f2 = 1, f3 = 1;

		if (i)
			TRY(fbc_buf_putc(b, ','));
		TRY(fbc_buf_putc(b, '{'));
		TRY(put_kv_str(b, "message", e->message, &f2));
		TRY(put_key(b, "reference", &f2));
		TRY(fbc_buf_putc(b, '{'));
		if (e->name && e->name[0])
			TRY(put_kv_str(b, "name", e->name, &f3));
		TRY(put_kv_str(b, "schema", e->schema, &f3));
		TRY(fbc_buf_puts(b, "}}"));
	}
	TRY(fbc_buf_putc(b, ']'));
	TRY(put_kv_str(b, "package", d->package, &first));
	TRY(put_kv_str(b, "schema", "olm.deprecations", &first));
	TRY(fbc_buf_putc(b, '}'));
done:
	return rc ? fail(rc, "olm.deprecations", err) : 0;
}

int fbc_render_other(fbc_buf *b, const fbc_other *o, fbc_error *err)
{
	int rc = fbc_buf_append(b, o->blob, o->blob_len);

	return rc ? fail(rc, o->schema, err) : 0;
}

int fbc_render_to_buf(void *ctx, const char *data, size_t len, fbc_error *err)
{
	int rc = fbc_buf_append(ctx, data, len);

	return rc ? fail(rc, "catalog", err) : 0;
}

/* ---- ordering ---- */

enum kind { K_PACKAGE, K_CHANNEL, K_BUNDLE, K_OTHER, K_DEPRECATION };

typedef struct item {
	const char *group; /* package name; NULL for other blobs without one (written last) */
	const char *key;   /* channel/bundle name, other schema; "" otherwise */
	const void *obj;
	size_t index; /* load position, only as a last resort */
	unsigned char kind;
} item;

typedef struct sort_ctx {
	fbc_buf a, b;
} sort_ctx;

static int render_item(fbc_buf *out, const item *it, fbc_error *err)
{
	switch ((enum kind)it->kind) {
	case K_PACKAGE:
		return fbc_render_package(out, it->obj, err);
	case K_CHANNEL:
		return fbc_render_channel(out, it->obj, err);
	case K_BUNDLE:
		return fbc_render_bundle(out, it->obj, err);
	case K_OTHER:
		return fbc_render_other(out, it->obj, err);
	case K_DEPRECATION:
		return fbc_render_deprecation(out, it->obj, err);
	}
	return FBC_EINTERNAL;
}

static int cmp_bytes(const char *a, size_t an, const char *b, size_t bn)
{
	int c = memcmp(a, b, an < bn ? an : bn);

	if (c)
		return c;
	return an < bn ? -1 : an > bn;
}

static int cmp_items(const void *pa, const void *pb, void *pctx)
{
	const item *a = pa, *b = pb;
	sort_ctx *sc = pctx;
	int c;

	if (!a->group != !b->group)
		return a->group ? -1 : 1;
	if (a->group && (c = strcmp(a->group, b->group)))
		return c;
	if (a->kind != b->kind)
		return a->kind < b->kind ? -1 : 1;
	if ((c = strcmp(a->key, b->key)))
		return c;
	if (a->kind == K_OTHER) {
		const fbc_other *oa = a->obj, *ob = b->obj;

		if ((c = strcmp(oa->name, ob->name)))
			return c;
		if ((c = cmp_bytes(oa->blob, oa->blob_len, ob->blob, ob->blob_len)))
			return c;
	} else {
		/* Same kind and name: only in catalogs with duplicates. Order by
		 * content so that the file layout still does not matter. */
		fbc_error e;

		fbc_buf_reset(&sc->a);
		fbc_buf_reset(&sc->b);
		if (render_item(&sc->a, a, &e) == 0 && render_item(&sc->b, b, &e) == 0 &&
		    (c = cmp_bytes(sc->a.data, sc->a.len, sc->b.data, sc->b.len)))
			return c;
	}
	return a->index < b->index ? -1 : a->index > b->index;
}

static void add_items(item *items, size_t *n, const fbc_vec *v, enum kind kind)
{
	for (size_t i = 0; i < v->len; i++) {
		const void *obj = ((void *const *)v->items)[i];
		item *it = &items[*n];

		it->obj = obj;
		it->kind = (unsigned char)kind;
		it->index = *n;
		it->key = "";
		switch (kind) {
		case K_PACKAGE:
			it->group = ((const fbc_package *)obj)->name;
			break;
		case K_CHANNEL:
			it->group = ((const fbc_channel *)obj)->package;
			it->key = ((const fbc_channel *)obj)->name;
			break;
		case K_BUNDLE:
			it->group = ((const fbc_bundle *)obj)->package;
			it->key = ((const fbc_bundle *)obj)->name;
			break;
		case K_OTHER: {
			const fbc_other *o = obj;

			it->group = o->package && o->package[0] ? o->package : NULL;
			it->key = o->schema;
			break;
		}
		case K_DEPRECATION:
			it->group = ((const fbc_deprecation *)obj)->package;
			break;
		}
		if (kind != K_OTHER && !it->group)
			it->group = "";
		if (!it->key)
			it->key = "";
		(*n)++;
	}
}

static int render_sorted(const fbc_catalog *cat, fbc_render_write_fn fn,
			 fbc_render_group_write_fn gfn, void *ctx, fbc_error *err)
{
	item *items = NULL;
	size_t total, n = 0;
	sort_ctx sc;
	fbc_buf line;
	int rc = 0;

	fbc_buf_init(&sc.a, 0);
	fbc_buf_init(&sc.b, 0);
	fbc_buf_init(&line, 0);
	total = cat->packages.len + cat->channels.len + cat->bundles.len + cat->others.len +
		cat->deprecations.len;
	if (total == 0)
		goto done;
	if (total > SIZE_MAX / sizeof(*items) || !(items = calloc(total, sizeof(*items)))) {
		rc = fbc_error_set(err, FBC_ENOMEM, "catalog", "rendering: out of memory");
		goto done;
	}
	add_items(items, &n, &cat->packages, K_PACKAGE);
	add_items(items, &n, &cat->channels, K_CHANNEL);
	add_items(items, &n, &cat->bundles, K_BUNDLE);
	add_items(items, &n, &cat->others, K_OTHER);
	add_items(items, &n, &cat->deprecations, K_DEPRECATION);
	qsort_r(items, n, sizeof(*items), cmp_items, &sc);

	for (size_t i = 0; i < n; i++) {
		fbc_buf_reset(&line);
		if ((rc = render_item(&line, &items[i], err)))
			goto done;
		if ((rc = fbc_buf_putc(&line, '\n'))) {
			rc = fail(rc, "catalog", err);
			goto done;
		}
		if ((rc = gfn ? gfn(ctx, items[i].group, line.data, line.len, err)
			      : fn(ctx, line.data, line.len, err)))
			goto done;
	}
done:
	free(items);
	fbc_buf_dispose(&sc.a);
	fbc_buf_dispose(&sc.b);
	fbc_buf_dispose(&line);
	return rc;
}

int fbc_render_catalog(const fbc_catalog *cat, fbc_render_write_fn fn, void *ctx, fbc_error *err)
{
	return render_sorted(cat, fn, NULL, ctx, err);
}

int fbc_render_catalog_grouped(const fbc_catalog *cat, fbc_render_group_write_fn fn, void *ctx,
			       fbc_error *err)
{
	return render_sorted(cat, NULL, fn, ctx, err);
}
