/*
 * Catalog lifetime, linking (indexes and derived bundle fields) and look-ups.
 */
#include "service/fbc/internal.h"
#include "service/fbc/model.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int fbc_catalog_create(fbc_catalog **out, const fbc_load_limits *lim, fbc_error *err)
{
	fbc_catalog *cat = calloc(1, sizeof(*cat));

	if (!cat)
		return fbc_error_set(err, FBC_ENOMEM, NULL, "out of memory creating a catalog");
	/* 1 MiB chunks: catalogs hold many small strings and a few huge ones. */
	if (fbc_arena_create(&cat->arena, 1024 * 1024)) {
		free(cat);
		return fbc_error_set(err, FBC_ENOMEM, NULL, "out of memory creating a catalog");
	}
	fbc_vec_init(&cat->packages, sizeof(void *));
	fbc_vec_init(&cat->channels, sizeof(void *));
	fbc_vec_init(&cat->bundles, sizeof(void *));
	fbc_vec_init(&cat->deprecations, sizeof(void *));
	fbc_vec_init(&cat->others, sizeof(void *));
	fbc_strmap_init(&cat->package_index);
	fbc_strmap_init(&cat->files);
	if (lim)
		cat->limits = *lim;
	else
		fbc_load_limits_default(&cat->limits);
	*out = cat;
	return 0;
}

void fbc_catalog_free(fbc_catalog *cat)
{
	if (!cat)
		return;
	fbc_vec_dispose(&cat->packages);
	fbc_vec_dispose(&cat->channels);
	fbc_vec_dispose(&cat->bundles);
	fbc_vec_dispose(&cat->deprecations);
	fbc_vec_dispose(&cat->others);
	fbc_strmap_dispose(&cat->package_index);
	fbc_strmap_dispose(&cat->files);
	fbc_arena_free(cat->arena);
	free(cat);
}

/* ------------------------------------------------------------------ */
/* Stable sort of pointer arrays by name (merge sort: qsort is not     */
/* stable, and duplicates must keep load order so look-ups find the    */
/* first-declared one).                                                */

typedef const char *(*name_fn)(const void *);

static const char *pkg_name(const void *p)
{
	return ((const fbc_package *)p)->name;
}
static const char *chan_name(const void *p)
{
	return ((const fbc_channel *)p)->name;
}
static const char *bundle_name(const void *p)
{
	return ((const fbc_bundle *)p)->name;
}

static void merge_sort(void **a, void **tmp, size_t n, name_fn name)
{
	size_t mid = n / 2, i = 0, j, k = 0;

	if (n < 2)
		return;
	merge_sort(a, tmp, mid, name);
	merge_sort(a + mid, tmp, n - mid, name);
	if (strcmp(name(a[mid - 1]), name(a[mid])) <= 0)
		return; /* in order already (records mostly come sorted) */
	j = mid;
	while (i < mid && j < n) {
		if (strcmp(name(a[j]), name(a[i])) < 0)
			tmp[k++] = a[j++];
		else
			tmp[k++] = a[i++];
	}
	while (i < mid)
		tmp[k++] = a[i++];
	while (j < n)
		tmp[k++] = a[j++];
	memcpy(a, tmp, n * sizeof(*a));
}

static int sort_by_name(void **a, size_t n, name_fn name)
{
	void **tmp;

	if (n < 2)
		return 0;
	tmp = malloc(n * sizeof(*tmp));
	if (!tmp)
		return FBC_ENOMEM;
	merge_sort(a, tmp, n, name);
	free(tmp);
	return 0;
}

/* The index of the leftmost element with this name in a sorted array, n
 * when there is none. */
static size_t bsearch_at(void *const *a, size_t n, const char *key, name_fn name)
{
	size_t lo = 0, hi = n;

	if (!key)
		return n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (strcmp(name(a[mid]), key) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && strcmp(name(a[lo]), key) == 0 ? lo : n;
}

/* Leftmost element with this name in a sorted array, or NULL. */
static void *bsearch_name(void *const *a, size_t n, const char *key, name_fn name)
{
	size_t i = bsearch_at(a, n, key, name);

	return i < n ? a[i] : NULL;
}

fbc_package *fbc_catalog_package(const fbc_catalog *cat, const char *name)
{
	if (!cat || !name)
		return NULL;
	return fbc_strmap_get(&cat->package_index, name);
}

fbc_channel *fbc_package_channel(const fbc_package *pkg, const char *name)
{
	if (!pkg)
		return NULL;
	return bsearch_name((void *const *)pkg->channels, pkg->n_channels, name, chan_name);
}

fbc_bundle *fbc_package_bundle(const fbc_package *pkg, const char *name)
{
	if (!pkg)
		return NULL;
	return bsearch_name((void *const *)pkg->bundles, pkg->n_bundles, name, bundle_name);
}

/* ------------------------------------------------------------------ */
/* Derived bundle fields                                               */

static const char *adup(fbc_arena *a, const char *s)
{
	return (!s || !*s) ? "" : fbc_arena_strdup(a, s);
}

/* A property value parsed and checked against its Go type; NULL when it
 * does not decode (C11 reports that). */
static json_t *parse_prop(const fbc_property *p)
{
	const fbc_gt_type *t = fbc_gt_for_property(p->type);
	json_t *v;
	fbc_buf msg;
	int rc;

	if (!p->value)
		return NULL;
	v = json_loadb(p->value, p->value_len, JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL);
	if (!v || !t)
		return v;
	fbc_buf_init(&msg, 1024);
	rc = fbc_gt_check(t, v, &msg);
	fbc_buf_dispose(&msg);
	if (rc) {
		json_decref(v);
		return NULL;
	}
	return v;
}

static int fill_gvk(fbc_arena *a, fbc_gvk *g, const json_t *v)
{
	g->group = adup(a, fbc_gt_get_str(v, "group"));
	g->version = adup(a, fbc_gt_get_str(v, "version"));
	g->kind = adup(a, fbc_gt_get_str(v, "kind"));
	return (g->group && g->version && g->kind) ? 0 : FBC_ENOMEM;
}

static int derive_bundle(fbc_catalog *cat, fbc_bundle *b)
{
	fbc_arena *a = cat->arena;
	size_t i, n_gvk = 0, n_req = 0, n_preq = 0;
	bool have_pkg = false;
	int rc = 0;

	if (b->derived)
		return 0; /* done by the decoder while the values were parsed */
	for (i = 0; i < b->n_properties; i++) {
		const char *t = b->properties[i].type;

		if (strcmp(t, "olm.gvk") == 0)
			n_gvk++;
		else if (strcmp(t, "olm.gvk.required") == 0)
			n_req++;
		else if (strcmp(t, "olm.package.required") == 0)
			n_preq++;
	}
	b->provided = n_gvk ? fbc_arena_calloc(a, n_gvk, sizeof(fbc_gvk)) : NULL;
	b->required = n_req ? fbc_arena_calloc(a, n_req, sizeof(fbc_gvk)) : NULL;
	b->package_reqs = n_preq ? fbc_arena_calloc(a, n_preq, sizeof(fbc_package_req)) : NULL;
	if ((n_gvk && !b->provided) || (n_req && !b->required) || (n_preq && !b->package_reqs))
		return FBC_ENOMEM;
	b->n_provided = b->n_required = b->n_package_reqs = 0;
	for (i = 0; i < b->n_properties && rc == 0; i++) {
		const fbc_property *p = &b->properties[i];
		json_t *v;

		if (strcmp(p->type, "olm.package") && strcmp(p->type, "olm.gvk") &&
		    strcmp(p->type, "olm.gvk.required") && strcmp(p->type, "olm.package.required"))
			continue;
		v = parse_prop(p);
		if (!v)
			continue;
		if (strcmp(p->type, "olm.package") == 0) {
			if (!have_pkg) {
				have_pkg = true;
				b->version = adup(a, fbc_gt_get_str(v, "version"));
				b->release = adup(a, fbc_gt_get_str(v, "release"));
				b->olm_package_name = adup(a, fbc_gt_get_str(v, "packageName"));
				if (!b->version || !b->release || !b->olm_package_name) {
					rc = FBC_ENOMEM;
				} else {
					fbc_error e;

					b->has_semver =
						fbc_semver_parse(&b->semver, b->version,
								 strlen(b->version), &e) == 0;
				}
			}
		} else if (strcmp(p->type, "olm.gvk") == 0) {
			rc = fill_gvk(a, &b->provided[b->n_provided++], v);
		} else if (strcmp(p->type, "olm.gvk.required") == 0) {
			rc = fill_gvk(a, &b->required[b->n_required++], v);
		} else {
			fbc_package_req *r = &b->package_reqs[b->n_package_reqs++];

			r->package_name = adup(a, fbc_gt_get_str(v, "packageName"));
			r->version_range = adup(a, fbc_gt_get_str(v, "versionRange"));
			if (!r->package_name || !r->version_range)
				rc = FBC_ENOMEM;
		}
		json_decref(v);
	}
	b->derived = rc == 0;
	return rc;
}

/* ------------------------------------------------------------------ */
/* Linking                                                             */

#define PTRS(vec) ((void **)(vec).items)

static int link_packages(fbc_catalog *cat)
{
	size_t i, n = 0;
	int rc;

	for (i = 0; i < cat->packages.len; i++) {
		fbc_package *p = FBC_CATALOG_AT(cat->packages, fbc_package, i);

		if (!*p->name)
			continue;
		rc = fbc_strmap_add(&cat->package_index, p->name, p);
		if (rc < 0)
			return rc;
		n += (size_t)rc;
	}
	cat->sorted_packages = fbc_arena_calloc(cat->arena, n ? n : 1, sizeof(fbc_package *));
	if (!cat->sorted_packages)
		return FBC_ENOMEM;
	cat->n_sorted_packages = 0;
	for (i = 0; i < cat->packages.len; i++) {
		fbc_package *p = FBC_CATALOG_AT(cat->packages, fbc_package, i);

		if (*p->name && fbc_strmap_get(&cat->package_index, p->name) == p)
			cat->sorted_packages[cat->n_sorted_packages++] = p;
	}
	return sort_by_name((void **)cat->sorted_packages, cat->n_sorted_packages, pkg_name);
}

/* The package of a record naming name: the last record's again when it
 * names the same one (a package's records mostly come together). */
typedef struct pkg_memo {
	const char *name;
	fbc_package *pkg;
} pkg_memo;

static fbc_package *memo_package(const fbc_catalog *cat, pkg_memo *m, const char *name)
{
	if (!name)
		return NULL;
	if (!m->name || strcmp(m->name, name) != 0) {
		m->name = name;
		m->pkg = fbc_catalog_package(cat, name);
	}
	return m->pkg;
}

static int link_channels_and_bundles(fbc_catalog *cat)
{
	pkg_memo memo = {NULL, NULL};
	size_t i;
	int rc;

	for (i = 0; i < cat->channels.len; i++) {
		fbc_channel *c = FBC_CATALOG_AT(cat->channels, fbc_channel, i);

		c->pkg = memo_package(cat, &memo, c->package);
		if (c->pkg)
			c->pkg->n_channels++;
	}
	for (i = 0; i < cat->bundles.len; i++) {
		fbc_bundle *b = FBC_CATALOG_AT(cat->bundles, fbc_bundle, i);

		b->pkg = memo_package(cat, &memo, b->package);
		if (b->pkg)
			b->pkg->n_bundles++;
	}
	for (i = 0; i < cat->others.len; i++) {
		fbc_other *o = FBC_CATALOG_AT(cat->others, fbc_other, i);
		fbc_package *p = fbc_catalog_package(cat, o->package);

		if (p)
			p->n_others++;
	}
	for (i = 0; i < cat->n_sorted_packages; i++) {
		fbc_package *p = cat->sorted_packages[i];

		/* +1: room for a synthesised default channel */
		p->channels = fbc_arena_calloc(cat->arena, p->n_channels + 1, sizeof(void *));
		p->bundles = fbc_arena_calloc(cat->arena, p->n_bundles + 1, sizeof(void *));
		p->others = fbc_arena_calloc(cat->arena, p->n_others + 1, sizeof(void *));
		if (!p->channels || !p->bundles || !p->others)
			return FBC_ENOMEM;
		p->n_channels = p->n_bundles = p->n_others = 0;
	}
	for (i = 0; i < cat->channels.len; i++) {
		fbc_channel *c = FBC_CATALOG_AT(cat->channels, fbc_channel, i);

		if (c->pkg)
			c->pkg->channels[c->pkg->n_channels++] = c;
	}
	for (i = 0; i < cat->bundles.len; i++) {
		fbc_bundle *b = FBC_CATALOG_AT(cat->bundles, fbc_bundle, i);

		if (b->pkg)
			b->pkg->bundles[b->pkg->n_bundles++] = b;
	}
	for (i = 0; i < cat->others.len; i++) {
		fbc_other *o = FBC_CATALOG_AT(cat->others, fbc_other, i);
		fbc_package *p = fbc_catalog_package(cat, o->package);

		if (p)
			p->others[p->n_others++] = o;
	}
	for (i = 0; i < cat->deprecations.len; i++) {
		fbc_deprecation *d = FBC_CATALOG_AT(cat->deprecations, fbc_deprecation, i);
		fbc_package *p = fbc_catalog_package(cat, d->package);

		if (p && !p->deprecation)
			p->deprecation = d;
	}
	for (i = 0; i < cat->n_sorted_packages; i++) {
		fbc_package *p = cat->sorted_packages[i];

		if ((rc = sort_by_name((void **)p->channels, p->n_channels, chan_name)) ||
		    (rc = sort_by_name((void **)p->bundles, p->n_bundles, bundle_name)))
			return rc;
	}
	return 0;
}

/* spec §2.2: a defaultChannel naming no channel gets an empty channel of
 * that name (it then fails V3, and C26 deprecations of it succeed). */
static int default_channel_fixup(fbc_catalog *cat)
{
	size_t i;

	for (i = 0; i < cat->n_sorted_packages; i++) {
		fbc_package *p = cat->sorted_packages[i];
		fbc_channel *c;

		if (!*p->default_channel || fbc_package_channel(p, p->default_channel))
			continue;
		c = fbc_arena_calloc(cat->arena, 1, sizeof(*c));
		if (!c)
			return FBC_ENOMEM;
		c->name = p->default_channel;
		c->package = p->name;
		c->loc = p->loc;
		c->synthesized = true;
		c->pkg = p;
		p->channels[p->n_channels++] = c;
		if (sort_by_name((void **)p->channels, p->n_channels, chan_name))
			return FBC_ENOMEM;
	}
	return 0;
}

/* fbc_package_bundle(p, name), trying the bundle after the last one found
 * (*hint) first: entries mostly list bundles in their name order. */
static fbc_bundle *hinted_bundle(const fbc_package *p, const char *name, size_t *hint)
{
	size_t h = *hint;

	/* the leftmost of its name, as the search finds */
	if (!name || h >= p->n_bundles || strcmp(p->bundles[h]->name, name) != 0 ||
	    (h > 0 && strcmp(p->bundles[h - 1]->name, name) == 0)) {
		h = bsearch_at((void *const *)p->bundles, p->n_bundles, name, bundle_name);
		if (h == p->n_bundles)
			return NULL;
	}
	*hint = h + 1;
	return p->bundles[h];
}

static int link_entries(fbc_catalog *cat)
{
	size_t i, j, k;

	for (i = 0; i < cat->n_sorted_packages; i++) {
		fbc_package *p = cat->sorted_packages[i];

		for (j = 0; j < p->n_channels; j++) {
			fbc_channel *c = p->channels[j];
			size_t hint = 0;

			for (k = 0; k < c->n_entries; k++) {
				fbc_bundle *b = hinted_bundle(p, c->entries[k].name, &hint);

				c->entries[k].bundle = b;
				/* count each (bundle, channel) once even with duplicate entries */
				if (b && (b->n_channels == 0 || b->channels != (fbc_channel **)c)) {
					b->n_channels++;
					b->channels =
						(fbc_channel **)c; /* marker until allocation */
				}
			}
		}
		for (j = 0; j < p->n_bundles; j++) {
			fbc_bundle *b = p->bundles[j];
			size_t n = b->n_channels;

			b->channels = n ? fbc_arena_calloc(cat->arena, n, sizeof(void *)) : NULL;
			if (n && !b->channels)
				return FBC_ENOMEM;
			b->n_channels = 0;
		}
		for (j = 0; j < p->n_channels; j++) {
			fbc_channel *c = p->channels[j];

			for (k = 0; k < c->n_entries; k++) {
				fbc_bundle *b = c->entries[k].bundle;

				if (b &&
				    (b->n_channels == 0 || b->channels[b->n_channels - 1] != c))
					b->channels[b->n_channels++] = c;
			}
		}
	}
	return 0;
}

int fbc_catalog_link(fbc_catalog *cat, fbc_error *err)
{
	size_t i;
	int rc;

	if (!cat)
		return fbc_error_set(err, FBC_EINVAL, NULL, "link: no catalog");
	if (cat->linked)
		return 0;
	if ((rc = link_packages(cat)) || (rc = link_channels_and_bundles(cat)) ||
	    (rc = default_channel_fixup(cat)) || (rc = link_entries(cat)))
		goto done;
	for (i = 0; i < cat->bundles.len; i++) {
		if ((rc = derive_bundle(cat, FBC_CATALOG_AT(cat->bundles, fbc_bundle, i))))
			goto done;
	}
	cat->linked = true;
done:
	if (rc)
		return fbc_error_set(err, rc, NULL, "linking the catalog: %s",
				     rc == FBC_ENOMEM ? "out of memory" : fbc_error_code_name(rc));
	return 0;
}
