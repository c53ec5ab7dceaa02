/*
 * Rebuilding the add state of a package from an FBC (index-add.md §7.3,
 * ST-1..ST-6). What an FBC cannot tell (stranded bundles, tombstone
 * versions, annotation channels of old bundles) stays unknown (ST-6).
 */
#include "service/addmode/internal.h"
#include "service/fbc/render.h"

#include <stdlib.h>
#include <string.h>

static int oom(fbc_error *err)
{
	return fbc_error_set(err, FBC_ENOMEM, NULL, "out of memory");
}

static void decref_blob(void *p)
{
	json_decref(p);
}

static const char *jstr(json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));

	return s ? s : "";
}

/* ST-1: CSV replaces, skips, skipRange (and icon) from olm.bundle.object. */
static int from_csv(am_rec *r, fbc_arena *a, const char *csv_json)
{
	json_t *csv = json_loads(csv_json, 0, NULL), *spec, *skips, *icons;
	size_t i, k = 0;
	int rc = 0;

	if (!csv)
		return 1; /* not usable: fall back to the entries */
	spec = json_object_get(csv, "spec");
	r->replaces = fbc_arena_strdup(a, jstr(spec, "replaces"));
	r->skip_range = fbc_arena_strdup(
		a, jstr(json_object_get(json_object_get(csv, "metadata"), "annotations"),
			"olm.skipRange"));
	skips = json_object_get(spec, "skips");
	r->skips.v = fbc_arena_calloc(a, json_array_size(skips) + 1, sizeof(char *));
	if (!r->replaces || !r->skip_range || !r->skips.v) {
		rc = FBC_ENOMEM;
		goto done;
	}
	for (i = 0; i < json_array_size(skips) && i < FBC_ADDMODE_LIST_MAX; i++) {
		const char *s = json_string_value(json_array_get(skips, i));

		if (s && !(r->skips.v[k++] = fbc_arena_strdup(a, s))) {
			rc = FBC_ENOMEM;
			goto done;
		}
	}
	r->skips.n = k;
	icons = json_object_get(spec, "icon");
	if (json_array_size(icons) > 0) {
		json_t *ic = json_array_get(icons, 0);

		r->icon_data = fbc_arena_strdup(a, jstr(ic, "base64data"));
		r->icon_mediatype = fbc_arena_strdup(a, jstr(ic, "mediatype"));
	}
done:
	json_decref(csv);
	return rc;
}

static int load_package(fbc_addmode_index *ix, const fbc_package *fp, fbc_error *err)
{
	fbc_arena *a = ix->arena;
	am_pkg *p = am_pkg_new(a, fp->name);
	fbc_buf buf;
	size_t i, j, k;
	int rc = 0;

	fbc_buf_init(&buf, 0);
	if (!p)
		return oom(err);
	p->default_channel =
		fp->default_channel[0] ? fbc_arena_strdup(a, fp->default_channel) : NULL;
	/* ST-1: one record per olm.bundle */
	for (i = 0; i < fp->n_bundles; i++) {
		const fbc_bundle *b = fp->bundles[i];
		am_rec *r = fbc_arena_calloc(a, 1, sizeof(*r));
		bool from_entries = true;

		if (!r) {
			rc = oom(err);
			goto done;
		}
		r->name = fbc_arena_strdup(a, b->name);
		r->version = fbc_arena_strdup(a, b->version);
		r->image = fbc_arena_strdup(a, b->image);
		r->replaces = r->skip_range = r->default_channel = r->substitutes_for = "";
		if (!r->name || !r->version || !r->image) {
			rc = oom(err);
			goto done;
		}
		r->has_sv = r->version[0] &&
			    fbc_semver_parse(&r->sv, r->version, strlen(r->version), NULL) == 0;
		if (b->csv_json) {
			int c = from_csv(r, a, b->csv_json);

			if (c < 0) {
				rc = oom(err);
				goto done;
			}
			from_entries = c != 0;
		}
		if (from_entries) {
			/* a chain member's entry carries its CSV replaces and skips */
			for (j = 0; j < b->n_channels; j++) {
				const fbc_channel *ch = b->channels[j];

				for (k = 0; k < ch->n_entries; k++) {
					const fbc_channel_entry *e = &ch->entries[k];
					size_t s;

					if (strcmp(e->name, b->name) != 0)
						continue;
					if (e->skip_range[0])
						r->skip_range = fbc_arena_strdup(a, e->skip_range);
					if (r->replaces[0] || r->skips.n ||
					    (!e->replaces[0] && !e->n_skips))
						continue;
					r->replaces = fbc_arena_strdup(a, e->replaces);
					r->skips.v =
						fbc_arena_calloc(a, e->n_skips + 1, sizeof(char *));
					if (!r->replaces || !r->skips.v) {
						rc = oom(err);
						goto done;
					}
					for (s = 0; s < e->n_skips; s++)
						r->skips.v[s] = fbc_arena_strdup(a, e->skips[s]);
					r->skips.n = e->n_skips;
				}
			}
			if (!r->skip_range) {
				rc = oom(err);
				goto done;
			}
		}
		/* keep the blob as rendered, for the output */
		fbc_buf_reset(&buf);
		if (fbc_render_bundle(&buf, b, err) != 0) {
			rc = err->code ? err->code : FBC_ENOMEM;
			goto done;
		}
		r->blob = json_loadb(buf.data, buf.len, 0, NULL);
		if (!r->blob || fbc_arena_defer(a, decref_blob, r->blob) != 0) {
			json_decref(r->blob);
			rc = oom(err);
			goto done;
		}
		if (am_pkg_put_rec(p, r) != 0) {
			rc = oom(err);
			goto done;
		}
	}
	/* ST-2, ST-3: rows from the entries */
	for (i = 0; i < fp->n_channels; i++) {
		const fbc_channel *ch = fp->channels[i];
		am_channel *c = am_channel_new(fbc_arena_strdup(a, ch->name));
		fbc_strmap targets;

		if (!c || !c->name) {
			am_channel_free(c);
			rc = oom(err);
			goto done;
		}
		fbc_strmap_init(&targets);
		for (j = 0; j < ch->n_entries; j++) {
			const fbc_channel_entry *e = &ch->entries[j];
			am_member *m = am_channel_ensure(c, fbc_arena_strdup(a, e->name));
			size_t s;

			if (!m)
				goto oom_channel;
			if (e->replaces[0]) {
				m->next = fbc_arena_strdup(a, e->replaces);
				if (!m->next || !am_channel_ensure(c, m->next) ||
				    fbc_strmap_put(&targets, m->next, (void *)1, NULL) != 0)
					goto oom_channel;
				m = am_channel_member(c, e->name);
			}
			for (s = 0; s < e->n_skips; s++) {
				const char *t = fbc_arena_strdup(a, e->skips[s]);

				if (!t || !am_channel_ensure(c, t) ||
				    am_member_add_skip(am_channel_member(c, e->name), t) != 0 ||
				    fbc_strmap_put(&targets, t, (void *)1, NULL) != 0)
					goto oom_channel;
			}
			(void)m;
		}
		/* the head: an entry nobody replaces or skips (V-rules ensure one) */
		for (j = 0; j < ch->n_entries && !c->head; j++) {
			if (!fbc_strmap_has(&targets, ch->entries[j].name))
				c->head = am_channel_member(c, ch->entries[j].name)->name;
		}
		if (!c->head && ch->n_entries)
			c->head = am_channel_member(c, ch->entries[0].name)->name;
		/* ST-4: a replaces target that is no bundle is a tombstone */
		for (j = 0; j < c->members.len; j++) {
			am_member *m = *FBC_VEC_AT(&c->members, am_member *, j);
			am_rec *t;

			if (!fbc_strmap_has(&targets, m->name) || am_pkg_rec(p, m->name))
				continue;
			for (k = 0; k < ch->n_entries; k++) {
				if (strcmp(ch->entries[k].replaces, m->name) == 0)
					break;
			}
			if (k == ch->n_entries)
				continue; /* skipped only: a name, not a bundle */
			t = fbc_arena_calloc(a, 1, sizeof(*t));
			if (!t)
				goto oom_channel;
			t->name = m->name;
			t->version = t->replaces = t->skip_range = t->image = "";
			t->default_channel = t->substitutes_for = "";
			t->deprecated = true;
			t->version_unknown = true;
			if (am_pkg_put_rec(p, t) != 0)
				goto oom_channel;
		}
		fbc_strmap_dispose(&targets);
		if (am_pkg_put_channel(p, c) != 0) {
			am_channel_free(c);
			rc = oom(err);
			goto done;
		}
		continue;
	oom_channel:
		fbc_strmap_dispose(&targets);
		am_channel_free(c);
		rc = oom(err);
		goto done;
	}
	/* OUT-1 in reverse: the package icon belongs to the default channel head */
	if (fp->icon_data && p->default_channel) {
		am_channel *dc = am_pkg_channel(p, p->default_channel);
		am_rec *h = dc ? am_pkg_rec(p, dc->head) : NULL;

		if (h && !h->icon_data) {
			h->icon_data = fbc_arena_strdup(a, fp->icon_data);
			h->icon_mediatype =
				fbc_arena_strdup(a, fp->icon_mediatype ? fp->icon_mediatype : "");
		}
	}
	rc = am_index_put_pkg(ix, p);
	if (rc != 0) {
		rc = oom(err);
		goto done;
	}
	p = NULL;
done:
	am_pkg_free(p);
	fbc_buf_dispose(&buf);
	return rc;
}

int fbc_addmode_index_load(fbc_addmode_index *ix, const fbc_catalog *cat, const char *package,
			   fbc_error *err)
{
	size_t i;
	int rc;

	if (!cat->linked)
		return fbc_error_set(err, FBC_EINVAL, NULL, "the catalog is not linked");
	for (i = 0; i < cat->n_sorted_packages; i++) {
		const fbc_package *fp = cat->sorted_packages[i];

		if (package && strcmp(fp->name, package) != 0)
			continue;
		rc = load_package(ix, fp, err);
		if (rc != 0)
			return rc;
	}
	if (package && !am_index_pkg(ix, package))
		return fbc_error_set(err, FBC_ENOTFOUND, package, "no package %s in the catalog",
				     package);
	return 0;
}
