/*
 * The FBC of a package as `opm migrate` writes it (index-add.md §7.1) and
 * its validation after every add (§7.2).
 */
#include "service/addmode/internal.h"
#include "service/base/base64.h"
#include "service/fbc/validate.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int oom(fbc_error *err)
{
	return fbc_error_set(err, FBC_ENOMEM, NULL, "out of memory");
}

/* OUT-2: a member that produces an entry. */
static am_rec *visible(const am_pkg *p, const char *name)
{
	am_rec *r = am_pkg_rec(p, name);

	return r && r->image[0] && !r->deprecated ? r : NULL;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* OUT-1: the default channel head's icon; invalid base64 is retried
 * without spaces, then skipped. */
static json_t *icon_of(const am_pkg *p)
{
	am_channel *c = p->default_channel ? am_pkg_channel(p, p->default_channel) : NULL;
	am_rec *h = c ? am_pkg_rec(p, c->head) : NULL;
	char *stripped = NULL;
	const char *data;
	json_t *icon = NULL;
	size_t i, k = 0;

	if (!h || !h->icon_data || !h->icon_data[0])
		return NULL;
	data = h->icon_data;
	if (fbc_base64_decode(NULL, NULL, NULL, data, strlen(data)) != 0) {
		stripped = malloc(strlen(data) + 1);
		if (!stripped)
			return NULL;
		for (i = 0; data[i]; i++) {
			if (data[i] != ' ')
				stripped[k++] = data[i];
		}
		stripped[k] = '\0';
		data = stripped;
		if (fbc_base64_decode(NULL, NULL, NULL, data, k) != 0)
			goto done;
	}
	icon = json_pack("{s:s, s:s}", "base64data", data, "mediatype",
			 h->icon_mediatype ? h->icon_mediatype : "");
done:
	free(stripped);
	return icon;
}

static int cmp_prop(const void *a, const void *b)
{
	const json_t *x = *(json_t *const *)a, *y = *(json_t *const *)b;
	const char *tx = json_string_value(json_object_get(x, "type"));
	const char *ty = json_string_value(json_object_get(y, "type"));
	char *vx, *vy;
	int c = strcmp(tx ? tx : "", ty ? ty : "");

	if (c != 0)
		return c;
	vx = json_dumps(json_object_get(x, "value"),
			JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
	vy = json_dumps(json_object_get(y, "value"),
			JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
	c = strcmp(vx ? vx : "", vy ? vy : "");
	free(vx);
	free(vy);
	return c;
}

/* OUT-7 for a bundle recorded without its rendered blob. */
static json_t *synth_bundle(const am_pkg *p, const am_rec *r, fbc_error *err)
{
	json_t *b = NULL, *props = NULL, **items = NULL;
	size_t i, n = r->n_props + 1, k = 0;

	items = calloc(n, sizeof(*items));
	if (!items)
		goto fail;
	items[k++] = json_pack("{s:s, s:{s:s, s:s}}", "type", "olm.package", "value", "packageName",
			       p->name, "version", r->version);
	if (!items[0])
		goto fail;
	for (i = 0; i < r->n_props; i++) {
		json_error_t jerr;
		json_t *v = json_loads(r->props[i].value, JSON_DECODE_ANY, &jerr);

		if (!v) {
			fbc_error_set(err, FBC_EINVAL, r->name,
				      "property %s: invalid JSON value: %s", r->props[i].type,
				      jerr.text);
			goto fail_quiet;
		}
		items[k] = json_pack("{s:s, s:o}", "type", r->props[i].type, "value", v);
		if (!items[k++])
			goto fail;
	}
	qsort(items, k, sizeof(*items), cmp_prop);
	props = json_array();
	if (!props)
		goto fail;
	for (i = 0; i < k; i++) {
		if (i > 0 && cmp_prop(&items[i - 1], &items[i]) == 0)
			continue;
		if (json_array_append(props, items[i]) != 0)
			goto fail;
	}
	b = json_pack("{s:s, s:s, s:s, s:s, s:O}", "schema", "olm.bundle", "name", r->name,
		      "package", p->name, "image", r->image, "properties", props);
	if (!b)
		goto fail;
	goto done;
fail:
	oom(err);
fail_quiet:
	json_decref(b);
	b = NULL;
done:
	for (i = 0; items && i < n; i++)
		json_decref(items[i]);
	free(items);
	json_decref(props);
	return b;
}

/* SV-13: what opm migrate writes for a bundle whose stored CSV and
 * manifests were cleared: the properties it keeps in their own table (no
 * olm.bundle.object, so no olm.csv.metadata either), and relatedImages only
 * from the related_image table (render.go populateDBRelatedImages: the
 * bundle image, the operator's and the CSV's images, recorded at add time),
 * so without their names (api_to_model.go reads the names from the stored
 * CSV). opm lists them in Go map order; here each image once, in the order
 * of the rendered blob. The recorded blob is not changed: the copy shares
 * its values. */
static int unnamed_images(json_t *b)
{
	json_t *ri = json_object_get(b, "relatedImages"), *out;
	size_t i, j;

	if (!json_is_array(ri))
		return 0;
	if (!(out = json_array()))
		return -1;
	for (i = 0; i < json_array_size(ri); i++) {
		const char *img =
			json_string_value(json_object_get(json_array_get(ri, i), "image"));
		bool seen = false;

		for (j = 0; img && !seen && j < json_array_size(out); j++)
			seen = !strcmp(
				json_string_value(json_object_get(json_array_get(out, j), "image")),
				img);
		if (img && !seen &&
		    json_array_append_new(out, json_pack("{s:s, s:s}", "name", "", "image", img))) {
			json_decref(out);
			return -1;
		}
	}
	return json_object_set_new(b, "relatedImages", out);
}

static json_t *cleared_bundle(const am_pkg *p, const am_rec *r, fbc_error *err)
{
	json_t *b = r->blob ? json_copy(r->blob) : synth_bundle(p, r, err);
	json_t *props = b ? json_object_get(b, "properties") : NULL, *kept;
	size_t i;

	if (!b) {
		if (r->blob)
			oom(err);
		return NULL;
	}
	if (json_is_array(props)) {
		if (!(kept = json_array()))
			goto fail;
		for (i = 0; i < json_array_size(props); i++) {
			json_t *pr = json_array_get(props, i);
			const char *t = json_string_value(json_object_get(pr, "type"));

			if (t &&
			    (!strcmp(t, "olm.bundle.object") || !strcmp(t, "olm.csv.metadata")))
				continue;
			if (json_array_append(kept, pr) != 0) {
				json_decref(kept);
				goto fail;
			}
		}
		if (json_object_set_new(b, "properties", kept) != 0)
			goto fail;
	}
	if (unnamed_images(b) != 0)
		goto fail;
	return b;
fail:
	json_decref(b);
	oom(err);
	return NULL;
}

static int channel_blob(json_t **out, const am_pkg *p, const am_channel *c, fbc_error *err)
{
	const char **names = NULL;
	json_t *entries = json_array(), *blob = NULL;
	size_t i, k = 0;
	int rc = 0;

	names = calloc(c->members.len + 1, sizeof(*names));
	if (!names || !entries) {
		rc = oom(err);
		goto done;
	}
	for (i = 0; i < c->members.len; i++) {
		am_member *m = *FBC_VEC_AT(&c->members, am_member *, i);

		if (visible(p, m->name))
			names[k++] = m->name;
	}
	qsort(names, k, sizeof(*names), cmp_str);
	for (i = 0; i < k; i++) {
		am_member *m = am_channel_member(c, names[i]);
		am_rec *r = am_pkg_rec(p, names[i]);
		json_t *e = json_pack("{s:s}", "name", names[i]);

		if (!e || json_array_append_new(entries, e) != 0) {
			rc = oom(err);
			goto done;
		}
		if (m->next && json_object_set_new(e, "replaces", json_string(m->next)) != 0) {
			rc = oom(err);
			goto done;
		}
		if (m->skips.len) {
			json_t *sk = json_array();
			size_t s;

			if (!sk || json_object_set_new(e, "skips", sk) != 0) {
				rc = oom(err);
				goto done;
			}
			for (s = 0; s < m->skips.len; s++) {
				if (json_array_append_new(
					    sk, json_string(*FBC_VEC_AT(&m->skips, const char *,
									s))) != 0) {
					rc = oom(err);
					goto done;
				}
			}
		}
		if (r->skip_range[0] &&
		    json_object_set_new(e, "skipRange", json_string(r->skip_range)) != 0) {
			rc = oom(err);
			goto done;
		}
	}
	blob = json_pack("{s:s, s:s, s:s, s:O}", "schema", "olm.channel", "name", c->name,
			 "package", p->name, "entries", entries);
	if (!blob) {
		rc = oom(err);
		goto done;
	}
	*out = blob;
done:
	json_decref(entries);
	free(names);
	return rc;
}

/* The blob used to validate a bundle already validated by an earlier add:
 * its content has not changed, only the graph around it (§7.2 cost). */
static json_t *lite_bundle(const am_pkg *p, const am_rec *r)
{
	return json_pack("{s:s, s:s, s:s, s:s, s:[{s:s, s:{s:s, s:s}}]}", "schema", "olm.bundle",
			 "name", r->name, "package", p->name, "image", r->image, "properties",
			 "type", "olm.package", "value", "packageName", p->name, "version",
			 r->version);
}

static bool is_full(const am_rec *r, am_rec *const *full, size_t n_full)
{
	size_t i;

	if (!full)
		return true;
	for (i = 0; i < n_full; i++) {
		if (full[i] == r || strcmp(full[i]->name, r->name) == 0)
			return true;
	}
	return false;
}

static int pkg_blobs(const am_pkg *p, json_t *out, am_rec *const *full, size_t n_full,
		     fbc_error *err)
{
	const char **names = NULL;
	json_t *blob;
	size_t i, k = 0;
	int rc = 0;

	/* A31: a visible bundle without a valid version breaks migrate */
	for (i = 0; i < p->recs.len; i++) {
		am_rec *r = *FBC_VEC_AT(&p->recs, am_rec *, i);

		if (visible(p, r->name) && am_pkg_is_member(p, r->name) && !r->has_sv)
			return am_fail(err, FBC_EINVAL, "A31", p->name, r->name,
				       "convert bundle \"%s\": parse version \"%s\": %s", r->name,
				       r->version,
				       r->version[0] ? "not a valid semver"
						     : "Version string empty");
	}
	blob = json_pack("{s:s, s:s, s:s}", "schema", "olm.package", "name", p->name,
			 "defaultChannel", p->default_channel ? p->default_channel : "");
	if (!blob || json_array_append_new(out, blob) != 0)
		return oom(err);
	{
		json_t *icon = icon_of(p);

		if (icon && json_object_set_new(blob, "icon", icon) != 0)
			return oom(err);
	}
	for (i = 0; i < p->channels.len; i++) {
		json_t *cb = NULL;

		rc = channel_blob(&cb, p, *FBC_VEC_AT(&p->channels, am_channel *, i), err);
		if (rc != 0)
			return rc;
		if (json_array_append_new(out, cb) != 0)
			return oom(err);
	}
	names = calloc(p->recs.len + 1, sizeof(*names));
	if (!names)
		return oom(err);
	for (i = 0; i < p->recs.len; i++) {
		am_rec *r = *FBC_VEC_AT(&p->recs, am_rec *, i);

		if (visible(p, r->name) && am_pkg_is_member(p, r->name))
			names[k++] = r->name;
	}
	qsort(names, k, sizeof(*names), cmp_str);
	for (i = 0; i < k; i++) {
		am_rec *r = am_pkg_rec(p, names[i]);

		if (!is_full(r, full, n_full)) {
			if (!(blob = lite_bundle(p, r))) {
				rc = oom(err);
				goto done;
			}
		} else if (r->cleared) {
			if (!(blob = cleared_bundle(p, r, err))) {
				rc = err->code ? err->code : FBC_ENOMEM;
				goto done;
			}
		} else if (r->blob) {
			json_incref(r->blob);
			blob = r->blob;
		} else if (!(blob = synth_bundle(p, r, err))) {
			rc = err->code ? err->code : FBC_ENOMEM;
			goto done;
		}
		if (json_array_append_new(out, blob) != 0) {
			rc = oom(err);
			goto done;
		}
	}
done:
	free(names);
	return rc;
}

int fbc_addmode_package_blobs(const fbc_addmode_index *ix, const char *package, json_t *out,
			      fbc_error *err)
{
	am_pkg *p = am_index_pkg(ix, package);

	if (!p)
		return fbc_error_set(err, FBC_ENOTFOUND, package, "no package %s in the index",
				     package);
	return pkg_blobs(p, out, NULL, 0, err);
}

int fbc_addmode_write_package(const fbc_addmode_index *ix, const char *package, fbc_buf *out,
			      fbc_error *err)
{
	json_t *blobs = json_array();
	size_t i;
	int rc;

	if (!blobs)
		return oom(err);
	rc = fbc_addmode_package_blobs(ix, package, blobs, err);
	for (i = 0; rc == 0 && i < json_array_size(blobs); i++) {
		char *text =
			json_dumps(json_array_get(blobs, i), JSON_INDENT(4) | JSON_PRESERVE_ORDER);

		if (!text) {
			rc = oom(err);
			break;
		}
		rc = fbc_buf_puts(out, text);
		if (rc == 0)
			rc = fbc_buf_putc(out, '\n');
		free(text);
		if (rc != 0)
			rc = fbc_error_set(err, rc, package, "the catalog of %s does not fit",
					   package);
	}
	json_decref(blobs);
	return rc;
}

int am_validate_pkg(const am_pkg *p, am_rec *const *full, size_t n_full, fbc_diags *out_diags,
		    fbc_error *err)
{
	fbc_catalog *cat = NULL;
	fbc_diags local;
	fbc_diags *diags = out_diags ? out_diags : &local;
	json_t *blobs = json_array();
	char file[FBC_ADDMODE_NAME_MAX + 32];
	size_t i;
	int rc;

	if (!out_diags && fbc_diags_init(&local, 100) != 0) {
		json_decref(blobs);
		return oom(err);
	}
	if (!blobs) {
		rc = oom(err);
		goto done;
	}
	rc = pkg_blobs(p, blobs, full, n_full, err);
	if (rc != 0)
		goto done;
	rc = fbc_catalog_create(&cat, NULL, err);
	if (rc != 0)
		goto done;
	snprintf(file, sizeof(file), "%s/catalog.json", p->name);
	for (i = 0; i < json_array_size(blobs); i++) {
		json_t *b = json_array_get(blobs, i);
		fbc_meta m;
		const char *s;

		memset(&m, 0, sizeof(m));
		s = json_string_value(json_object_get(b, "schema"));
		m.schema = s ? s : "";
		s = json_string_value(json_object_get(b, "package"));
		m.package = s ? s : "";
		s = json_string_value(json_object_get(b, "name"));
		m.name = s ? s : "";
		m.blob = b;
		m.loc.file = file;
		m.loc.line = (int)i + 1;
		rc = fbc_catalog_add_meta(cat, &m, diags, err);
		if (rc != 0)
			goto done;
	}
	rc = fbc_catalog_link(cat, err);
	if (rc != 0)
		goto done;
	rc = fbc_validate(cat, NULL, diags, err);
	if (rc != 0)
		goto done;
	if (fbc_diags_count(diags) > 0) {
		const fbc_diag *d;

		fbc_diags_sort(diags);
		d = fbc_diags_at(diags, 0);
		rc = am_fail(err, FBC_EINVAL, "A32", p->name, d->bundle ? d->bundle : "",
			     "the catalog fails validation: %s: %s%s", d->code, d->message,
			     fbc_diags_count(diags) > 1 ? " (and more)" : "");
	}
done:
	fbc_catalog_free(cat);
	json_decref(blobs);
	if (!out_diags)
		fbc_diags_dispose(&local);
	return rc;
}

int fbc_addmode_validate_package(const fbc_addmode_index *ix, const char *package, fbc_diags *diags,
				 fbc_error *err)
{
	am_pkg *p = am_index_pkg(ix, package);

	if (!p)
		return fbc_error_set(err, FBC_ENOTFOUND, package, "no package %s in the index",
				     package);
	return am_validate_pkg(p, NULL, 0, diags, err);
}
