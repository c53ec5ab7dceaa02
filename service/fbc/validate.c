/*
 * Rules C1-C28 (conversion), V1-V12 (model) and the strict extras.
 */
#include "service/fbc/validate.h"

#include "service/fbc/graph.h"
#include "service/fbc/imageref.h"
#include "service/fbc/internal.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define Q_MAX 600 /* a Go-quoted name inside a message */

typedef struct vctx {
	const fbc_catalog *cat;
	const fbc_validate_opts *opts;
	fbc_diags *diags;
	fbc_error *err;
	int rc; /* first hard failure (OOM) */
} vctx;

static void add(vctx *v, const char *code, const fbc_loc *loc, const char *pkg, const char *ch,
		const char *bundle, const char *fmt, ...) __attribute__((format(printf, 7, 8)));
static void add(vctx *v, const char *code, const fbc_loc *loc, const char *pkg, const char *ch,
		const char *bundle, const char *fmt, ...)
{
	va_list ap;
	int rc;

	if (v->rc)
		return;
	va_start(ap, fmt);
	rc = fbc_diags_vadd(v->diags, code, loc, pkg && *pkg ? pkg : NULL, ch, bundle, fmt, ap);
	va_end(ap);
	if (rc)
		v->rc = fbc_error_set(v->err, rc, NULL, "recording a finding: out of memory");
}

static void nomem(vctx *v)
{
	if (!v->rc)
		v->rc = fbc_error_set(v->err, FBC_ENOMEM, NULL, "out of memory during validation");
}

/* Go %q, several at a time in one message: each call gets its own slot.
 * Declared without an initialiser and started with `qs.next = 0`: an
 * initialiser would zero all six slots (3.6 KB) for every bundle, channel
 * and property checked, and each slot is written before it is read. */
typedef struct quotes {
	char s[6][Q_MAX];
	int next;
} quotes;

static const char *q(quotes *qs, const char *s)
{
	char *d = qs->s[qs->next++ % 6];

	return fbc_goquote(d, Q_MAX, s ? s : "");
}

/* ------------------------------------------------------------------ */
/* C1-C3 packages                                                      */

static bool dns_label_chars(const char *s, size_t n)
{
	size_t i;

	if (n == 0)
		return false;
	for (i = 0; i < n; i++) {
		char c = s[i];

		if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-'))
			return false;
	}
	return s[0] != '-' && s[n - 1] != '-';
}

static bool dns_subdomain(const char *s)
{
	const char *start = s, *dot;

	for (;;) {
		dot = strchr(start, '.');
		if (!dns_label_chars(start, dot ? (size_t)(dot - start) : strlen(start)))
			return false;
		if (!dot)
			return true;
		start = dot + 1; /* never NULL + 1 (undefined behaviour) */
	}
}

static void check_packages(vctx *v)
{
	size_t i;

	for (i = 0; i < v->cat->packages.len; i++) {
		const fbc_package *p = FBC_CATALOG_AT(v->cat->packages, fbc_package, i);
		size_t n = strlen(p->name);
		char errs[1024];
		quotes qs;
		bool bad_len = n > 63;

		qs.next = 0;
		if (!*p->name) {
			add(v, "C1", &p->loc, NULL, NULL, NULL,
			    "config contains package with no name");
			continue;
		}
		if (fbc_catalog_package(v->cat, p->name) != p) {
			add(v, "C2", &p->loc, p->name, NULL, NULL, "duplicate package %s",
			    q(&qs, p->name));
			continue;
		}
		if (!bad_len && dns_label_chars(p->name, n))
			continue;
		errs[0] = '\0';
		if (bad_len)
			snprintf(errs, sizeof(errs), "must be no more than 63 characters");
		if (!dns_label_chars(p->name, n)) {
			size_t l = strlen(errs);

			snprintf(errs + l, sizeof(errs) - l, "%s%s", l ? " " : "",
				 dns_subdomain(p->name)
					 ? "must not contain dots"
					 : "a lowercase RFC 1123 label must consist of lower case "
					   "alphanumeric characters or '-', and must start and end "
					   "with "
					   "an alphanumeric character (e.g. 'my-name',  or "
					   "'123-abc', "
					   "regex used for validation is "
					   "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')");
		}
		add(v, "C3", &p->loc, p->name, NULL, NULL, "invalid package name %s: [%s]",
		    q(&qs, p->name), errs);
	}
}

/* ------------------------------------------------------------------ */
/* C4-C7 channels                                                      */

static void check_channels(vctx *v)
{
	size_t i, k;

	for (i = 0; i < v->cat->channels.len && !v->rc; i++) {
		const fbc_channel *c = FBC_CATALOG_AT(v->cat->channels, fbc_channel, i);
		const char *pkg = c->pkg ? c->package : NULL;
		quotes qs;
		fbc_strmap seen, reported;

		qs.next = 0;
		if (!c->pkg) {
			add(v, "C4", &c->loc, NULL, c->name, NULL,
			    "unknown package %s for channel %s", q(&qs, c->package),
			    q(&qs, c->name));
			continue;
		}
		if (!*c->name) {
			add(v, "C5", &c->loc, pkg, NULL, NULL,
			    "package %s contains channel with no name", q(&qs, c->package));
			continue;
		}
		if (fbc_package_channel(c->pkg, c->name) != c) {
			add(v, "C6", &c->loc, pkg, c->name, NULL,
			    "package %s has duplicate channel %s", q(&qs, c->package),
			    q(&qs, c->name));
			continue;
		}
		fbc_strmap_init(&seen);
		fbc_strmap_init(&reported);
		for (k = 0; k < c->n_entries; k++) {
			const char *name = c->entries[k].name;
			int r = fbc_strmap_add(&seen, name, NULL);

			if (r < 0) {
				nomem(v);
				break;
			}
			if (r == 0 && fbc_strmap_add(&reported, name, NULL) == 1)
				add(v, "C7", &c->loc, pkg, c->name, name,
				    "invalid package %s, channel %s: duplicate entry %s",
				    q(&qs, c->package), q(&qs, c->name), q(&qs, name));
		}
		fbc_strmap_dispose(&seen);
		fbc_strmap_dispose(&reported);
	}
}

/* ------------------------------------------------------------------ */
/* C8-C18 bundles                                                      */

/* C11 for one property; returns the parsed value (caller frees) or NULL. */
static json_t *check_property(vctx *v, const fbc_bundle *b, size_t i, bool report)
{
	const fbc_property *p = &b->properties[i];
	const fbc_gt_type *t = fbc_gt_for_property(p->type);
	quotes qs;
	json_t *val;
	json_error_t jerr;
	fbc_buf msg;
	int rc;

	qs.next = 0;
	if (!p->value) {
		if (report)
			add(v, "C11", &b->loc, b->package, NULL, b->name,
			    "parse properties for bundle %s: parse property[%zu] of type %s: "
			    "unexpected end of JSON input",
			    q(&qs, b->name), i, q(&qs, p->type));
		return NULL;
	}
	if (!t)
		return NULL; /* json.RawMessage: any JSON */
	if (report && b->property_checks && b->property_checks[i].state) {
		/* decided at load while the value was parsed (decode.c): a caller
		 * that reports wants only the verdict, so no re-parse */
		if (b->property_checks[i].state < 0)
			add(v, "C11", &b->loc, b->package, NULL, b->name,
			    "parse properties for bundle %s: parse property[%zu] of type %s: %s",
			    q(&qs, b->name), i, q(&qs, p->type), b->property_checks[i].error);
		return NULL;
	}
	val = json_loadb(p->value, p->value_len, JSON_DECODE_ANY | JSON_ALLOW_NUL, &jerr);
	if (!val) {
		nomem(v); /* the text was produced by jansson: only OOM fails here */
		return NULL;
	}
	fbc_buf_init(&msg, 2048);
	rc = fbc_gt_check(t, val, &msg);
	if (rc == 1 && report)
		add(v, "C11", &b->loc, b->package, NULL, b->name,
		    "parse properties for bundle %s: parse property[%zu] of type %s: %s",
		    q(&qs, b->name), i, q(&qs, p->type), msg.data ? msg.data : "invalid");
	else if (rc < 0 && rc != FBC_ELIMIT)
		nomem(v);
	fbc_buf_dispose(&msg);
	if (rc) {
		json_decref(val);
		return NULL;
	}
	return val;
}

static void check_images(vctx *v, const fbc_bundle *b)
{
	quotes qs;
	fbc_error e;
	size_t i;

	qs.next = 0;
	if (b->images_valid)
		return; /* decided at load: every image parses */
	if (*b->image && fbc_imageref_parse(NULL, b->image, &e))
		add(v, "C14", &b->loc, b->package, NULL, b->name,
		    "package %s bundle %s image: invalid image pull spec %s: %s",
		    q(&qs, b->package), q(&qs, b->name), q(&qs, b->image), e.message);
	for (i = 0; i < b->n_related_images; i++) {
		const char *img = b->related_images[i].image;

		if (*img && fbc_imageref_parse(NULL, img, &e))
			add(v, "C15", &b->loc, b->package, NULL, b->name,
			    "package %s bundle %s relatedImages[%zu].image: invalid image pull "
			    "spec "
			    "%s: %s",
			    q(&qs, b->package), q(&qs, b->name), i, q(&qs, img), e.message);
	}
}

static void check_olm_package(vctx *v, const fbc_bundle *b)
{
	size_t i, count = 0, first = SIZE_MAX;
	quotes qs;
	json_t *val;
	const char *pn, *ver, *rel;
	fbc_semver sv;
	fbc_error e;

	qs.next = 0;
	for (i = 0; i < b->n_properties; i++) {
		if (strcmp(b->properties[i].type, "olm.package") == 0) {
			if (first == SIZE_MAX)
				first = i;
			count++;
		}
	}
	if (count != 1) {
		add(v, "C12", &b->loc, b->package, NULL, b->name,
		    "package %s bundle %s must have exactly 1 \"olm.package\" property, found %zu",
		    q(&qs, b->package), q(&qs, b->name), count);
		return;
	}
	if (b->derived && b->olm_package_name) {
		/* the only olm.package is valid and was read when the bundle was
		 * derived (decode, on the parser threads, or link): no re-parse */
		val = NULL;
		pn = b->olm_package_name;
		ver = b->version;
		rel = b->release;
	} else {
		val = check_property(v, b, first, false);
		if (!val)
			return; /* C11 reported it */
		pn = fbc_gt_get_str(val, "packageName");
		ver = fbc_gt_get_str(val, "version");
		rel = fbc_gt_get_str(val, "release");
	}
	if (strcmp(pn, b->package) != 0)
		add(v, "C13", &b->loc, b->package, NULL, b->name,
		    "package %s does not match \"olm.package\" property %s", q(&qs, b->package),
		    q(&qs, pn));
	if (fbc_semver_parse(&sv, ver, strlen(ver), &e))
		add(v, "C16", &b->loc, b->package, NULL, b->name,
		    "error parsing bundle %s version %s: %s", q(&qs, b->name), q(&qs, ver),
		    e.message);
	if (*rel && fbc_release_validate(rel, strlen(rel), &e))
		add(v, "C17", &b->loc, b->package, NULL, b->name,
		    "error parsing bundle %s release version %s: %s", q(&qs, b->name), q(&qs, rel),
		    e.message);
	json_decref(val);
}

static void check_bundles(vctx *v)
{
	size_t i, k;

	for (i = 0; i < v->cat->bundles.len && !v->rc; i++) {
		const fbc_bundle *b = FBC_CATALOG_AT(v->cat->bundles, fbc_bundle, i);
		quotes qs;

		qs.next = 0;
		if (!*b->package) {
			add(v, "C8", &b->loc, NULL, NULL, b->name,
			    "package name must be set for bundle %s", q(&qs, b->name));
			continue;
		}
		if (!b->pkg) {
			add(v, "C9", &b->loc, NULL, NULL, b->name,
			    "unknown package %s for bundle %s", q(&qs, b->package),
			    q(&qs, b->name));
			continue;
		}
		if (fbc_package_bundle(b->pkg, b->name) != b) {
			add(v, "C10", &b->loc, b->package, NULL, b->name,
			    "package %s has duplicate bundle %s", q(&qs, b->package),
			    q(&qs, b->name));
			continue;
		}
		for (k = 0; k < b->n_properties; k++) {
			/* valid, decided at load (decode.c): nothing to report */
			if (b->property_checks && b->property_checks[k].state > 0)
				continue;
			/* bundle objects were checked at load (L11), a missing value
			 * included: one problem, one finding */
			if (strcmp(b->properties[k].type, "olm.bundle.object") == 0)
				continue;
			json_decref(check_property(v, b, k, true));
		}
		check_olm_package(v, b);
		check_images(v, b);
		if (b->n_channels == 0)
			add(v, "C18", &b->loc, b->package, NULL, b->name,
			    "package %s, bundle %s not found in any channel entries",
			    q(&qs, b->package), q(&qs, b->name));
	}
}

/* C19: entries of (first-declared, named) channels without an olm.bundle. */
static void check_entries_have_bundles(vctx *v)
{
	size_t i, j, k;

	for (i = 0; i < v->cat->n_sorted_packages; i++) {
		const fbc_package *p = v->cat->sorted_packages[i];

		for (j = 0; j < p->n_channels; j++) {
			const fbc_channel *c = p->channels[j];
			fbc_strmap seen;

			if (c->synthesized || !*c->name || fbc_package_channel(p, c->name) != c)
				continue;
			fbc_strmap_init(&seen);
			for (k = 0; k < c->n_entries; k++) {
				const fbc_channel_entry *e = &c->entries[k];
				quotes qs;

				qs.next = 0;
				if (e->bundle || fbc_strmap_add(&seen, e->name, NULL) != 1)
					continue;
				add(v, "C19", &c->loc, p->name, c->name, e->name,
				    "no olm.bundle blobs found in package %s for olm.channel "
				    "entries [%s]",
				    q(&qs, p->name), e->name);
			}
			fbc_strmap_dispose(&seen);
		}
	}
}

/* ------------------------------------------------------------------ */
/* C20-C28 deprecations                                                */

/* The entry names of a package's channels, built on first use: C25 and V12
 * look up every deprecated bundle, and a scan per look-up is quadratic. */
typedef struct entry_set {
	const fbc_package *p;
	fbc_strmap names;
	bool built;
} entry_set;

static void entry_set_init(entry_set *s, const fbc_package *p)
{
	s->p = p;
	s->built = false;
	fbc_strmap_init(&s->names);
}

static bool package_has_bundle(vctx *v, entry_set *s, const char *name)
{
	size_t j, k;

	if (fbc_package_bundle(s->p, name))
		return true;
	for (j = 0; !s->built && j < s->p->n_channels; j++) {
		for (k = 0; k < s->p->channels[j]->n_entries; k++) {
			if (fbc_strmap_add(&s->names, s->p->channels[j]->entries[k].name, NULL) <
			    0) {
				nomem(v);
				return false;
			}
		}
	}
	s->built = true;
	return fbc_strmap_has(&s->names, name);
}

/* C24: a (schema, name) reference seen before in this deprecation. */
static bool seen_reference(vctx *v, fbc_strmap *seen, fbc_arena *a, const fbc_deprecation_entry *e)
{
	/* length-prefixed, so that no two pairs make the same key */
	const char *key = fbc_arena_printf(a, "%zu:%s%s", strlen(e->schema), e->schema, e->name);
	int r = key ? fbc_strmap_add(seen, key, NULL) : -1;

	if (r < 0)
		nomem(v);
	return r == 0;
}

static void check_deprecations(vctx *v)
{
	size_t i, j;

	for (i = 0; i < v->cat->deprecations.len && !v->rc; i++) {
		const fbc_deprecation *d = FBC_CATALOG_AT(v->cat->deprecations, fbc_deprecation, i);
		const fbc_package *p = fbc_catalog_package(v->cat, d->package);
		quotes qs;
		fbc_arena *keys = NULL;
		fbc_strmap seen;
		entry_set es;

		qs.next = 0;
		if (!*d->package) {
			add(v, "C20", &d->loc, NULL, NULL, NULL,
			    "package name must be set for deprecation item %zu", i);
			continue;
		}
		if (!p) {
			add(v, "C21", &d->loc, NULL, NULL, NULL,
			    "cannot apply deprecations to an unknown package %s",
			    q(&qs, d->package));
			continue;
		}
		if (p->deprecation != d)
			add(v, "C22", &d->loc, d->package, NULL, NULL,
			    "expected a maximum of one deprecation per package: %s",
			    q(&qs, d->package));
		if (fbc_arena_create(&keys, 0)) {
			nomem(v);
			break;
		}
		fbc_strmap_init(&seen);
		entry_set_init(&es, p);
		for (j = 0; j < d->n_entries && !v->rc; j++) {
			const fbc_deprecation_entry *e = &d->entries[j];

			qs.next = 0;
			if (!*e->schema) {
				add(v, "C23", &d->loc, d->package, NULL, NULL,
				    "schema must be set for deprecation entry [%zu] for package %s",
				    j, q(&qs, d->package));
				continue;
			}
			if (seen_reference(v, &seen, keys, e)) {
				add(v, "C24", &d->loc, d->package, NULL, NULL,
				    "duplicate deprecation entry "
				    "declcfg.PackageScopedReference{Schema:%s, Name:%s} for "
				    "package %s",
				    q(&qs, e->schema), q(&qs, e->name), q(&qs, d->package));
				continue;
			}
			if (strcmp(e->schema, "olm.bundle") == 0) {
				if (!package_has_bundle(v, &es, e->name))
					add(v, "C25", &d->loc, d->package, NULL, e->name,
					    "cannot deprecate bundle %s for package %s: bundle not "
					    "found",
					    q(&qs, e->name), q(&qs, d->package));
			} else if (strcmp(e->schema, "olm.channel") == 0) {
				if (!fbc_package_channel(p, e->name))
					add(v, "C26", &d->loc, d->package, e->name, NULL,
					    "cannot deprecate channel %s for package %s: channel "
					    "not found",
					    q(&qs, e->name), q(&qs, d->package));
			} else if (strcmp(e->schema, "olm.package") == 0) {
				if (*e->name)
					add(v, "C27", &d->loc, d->package, NULL, NULL,
					    "package name must be empty for deprecated package %s "
					    "(specified %s)",
					    q(&qs, d->package), q(&qs, e->name));
			} else {
				add(v, "C28", &d->loc, d->package, NULL, NULL,
				    "cannot deprecate object "
				    "declcfg.PackageScopedReference{Schema:%s, Name:%s} referenced "
				    "by "
				    "entry %zu for package %s: object schema unknown",
				    q(&qs, e->schema), q(&qs, e->name), j, q(&qs, d->package));
			}
		}
		fbc_strmap_dispose(&seen);
		fbc_strmap_dispose(&es.names);
		fbc_arena_free(keys);
	}
}

/* ------------------------------------------------------------------ */
/* V rules                                                             */

static int append_names(fbc_buf *b, const fbc_graph *g, const size_t *idx, size_t n)
{
	size_t i;
	int rc = 0;

	for (i = 0; i < n && !rc; i++)
		rc = fbc_buf_printf(b, "%s%s", i ? ", " : "", g->nodes[idx[i]].name);
	return rc;
}

static void check_channel_graph(vctx *v, const fbc_package *p, const fbc_channel *c)
{
	fbc_graph *g = NULL;
	fbc_error e;
	fbc_buf b;
	size_t i;
	int rc;

	if (fbc_graph_build(&g, c, 0, &e)) {
		nomem(v);
		return;
	}
	fbc_buf_init(&b, 1500);
	switch (g->status) {
	case FBC_GRAPH_NO_HEAD:
		add(v, "V4", &c->loc, p->name, c->name, NULL, "no channel head found in graph");
		break;
	case FBC_GRAPH_MULTIPLE_HEADS:
		rc = append_names(&b, g, g->heads, g->n_heads);
		add(v, "V4", &c->loc, p->name, c->name, NULL,
		    "multiple channel heads found in graph: %s%s", b.data ? b.data : "",
		    rc ? ", ..." : "");
		break;
	case FBC_GRAPH_CYCLE:
		for (i = 0, rc = 0; i < g->n_cycle && !rc; i++)
			rc = fbc_buf_printf(&b, "%s%s", i ? " -> " : "", g->cycle[i]);
		add(v, "V5", &c->loc, p->name, c->name, NULL,
		    "detected cycle in replaces chain of upgrade graph: %s%s", b.data ? b.data : "",
		    rc ? " -> ..." : "");
		break;
	case FBC_GRAPH_STRANDED:
		rc = append_names(&b, g, g->stranded, g->n_stranded);
		add(v, "V6", &c->loc, p->name, c->name, NULL,
		    "channel contains one or more stranded bundles: %s%s", b.data ? b.data : "",
		    rc ? ", ..." : "");
		break;
	default:
		break;
	}
	fbc_buf_dispose(&b);
	fbc_graph_free(g);
}

static void check_entries(vctx *v, const fbc_package *p, const fbc_channel *c)
{
	fbc_strmap seen;
	size_t k, j;

	fbc_strmap_init(&seen);
	for (k = 0; k < c->n_entries && !v->rc; k++) {
		const fbc_channel_entry *e = &c->entries[k];
		quotes qs;
		fbc_semver_range *r = NULL;
		fbc_error err;

		qs.next = 0;
		if (fbc_strmap_add(&seen, e->name, NULL) != 1)
			continue; /* C7 */
		if (!*e->name)
			add(v, "V9", &c->loc, p->name, c->name, e->name, "name must be set");
		for (j = 0; j < e->n_skips; j++) {
			if (!*e->skips[j])
				add(v, "V7", &c->loc, p->name, c->name, e->name,
				    "skip[%zu] is empty", j);
		}
		if (*e->skip_range) {
			if (fbc_semver_range_parse_blang(&r, e->skip_range, &err))
				add(v, "V8", &c->loc, p->name, c->name, e->name,
				    "invalid skipRange %s: %s", q(&qs, e->skip_range), err.message);
			fbc_semver_range_free(r);
		}
	}
	fbc_strmap_dispose(&seen);
}

static void check_bundle_model(vctx *v, const fbc_package *p, const fbc_bundle *b)
{
	quotes qs;

	qs.next = 0;
	if (b->n_channels == 0)
		return; /* C18 */
	if (!*b->image && b->n_bundle_objects == 0)
		add(v, "V9", &b->loc, p->name, NULL, b->name, "bundle image must be set");
	if (*b->release && b->has_semver &&
	    fbc_release_validate(b->release, strlen(b->release), NULL) == 0) {
		char norm[1024];

		snprintf(norm, sizeof(norm), "%s-v%s-%s", p->name, b->version, b->release);
		if (strcmp(norm, b->name) != 0)
			add(v, "V10", &b->loc, p->name, NULL, b->name,
			    "name %s does not match normalized name %s", q(&qs, b->name),
			    q(&qs, norm));
		if (b->semver.build)
			add(v, "V10", &b->loc, p->name, NULL, b->name,
			    "cannot use build metadata in version with a release version");
	}
}

typedef struct vkey {
	const char *key; /* version string */
	const fbc_bundle *b;
} vkey;

static int cmp_vkey(const void *a, const void *b)
{
	const vkey *x = a, *y = b;
	int c = strcmp(x->key, y->key);

	return c ? c : strcmp(x->b->name, y->b->name);
}

/* V11: bundles of a package sharing a version string. */
static void check_versions(vctx *v, const fbc_package *p)
{
	vkey *keys = calloc(p->n_bundles + 1, sizeof(*keys));
	char *strs = NULL;
	size_t i, j, n = 0;

	if (!keys) {
		nomem(v);
		return;
	}
	for (i = 0; i < p->n_bundles; i++) {
		const fbc_bundle *b = p->bundles[i];

		if (!b->has_semver || b->n_channels == 0 || (i && p->bundles[i - 1] == b))
			continue;
		if (i && strcmp(p->bundles[i - 1]->name, b->name) == 0)
			continue; /* C10 */
		keys[n].b = b;
		keys[n].key = *b->release ? fbc_arena_printf(v->diags->arena, "%s-%s", b->version,
							     b->release)
					  : b->version;
		if (!keys[n].key) {
			nomem(v);
			goto done;
		}
		n++;
	}
	qsort(keys, n, sizeof(*keys), cmp_vkey);
	for (i = 0; i < n; i = j) {
		fbc_buf msg;
		size_t k;
		int rc;

		for (j = i + 1; j < n && strcmp(keys[j].key, keys[i].key) == 0; j++)
			;
		if (j - i < 2)
			continue;
		fbc_buf_init(&msg, 1500);
		rc = fbc_buf_printf(&msg, "[{%s: [", keys[i].key);
		for (k = i; k < j && !rc; k++)
			rc = fbc_buf_printf(&msg, "%s%s", k > i ? ", " : "", keys[k].b->name);
		if (!rc)
			rc = fbc_buf_puts(&msg, "]}]");
		add(v, "V11", &keys[j - 1].b->loc, p->name, NULL, NULL,
		    "duplicate versions found in bundles: %s%s", msg.data ? msg.data : "",
		    rc ? "..." : "");
		fbc_buf_dispose(&msg);
	}
done:
	free(strs);
	free(keys);
}

static void check_deprecation_messages(vctx *v, const fbc_package *p)
{
	const fbc_deprecation *d = p->deprecation;
	entry_set es;
	size_t j;

	if (!d)
		return;
	entry_set_init(&es, p);
	for (j = 0; j < d->n_entries && !v->rc; j++) {
		const fbc_deprecation_entry *e = &d->entries[j];
		const char *ch = NULL, *bundle = NULL;

		if (*e->message)
			continue;
		if (strcmp(e->schema, "olm.package") == 0) {
			if (*e->name)
				continue;
		} else if (strcmp(e->schema, "olm.channel") == 0) {
			if (!fbc_package_channel(p, e->name))
				continue;
			ch = e->name;
		} else if (strcmp(e->schema, "olm.bundle") == 0) {
			if (!package_has_bundle(v, &es, e->name))
				continue;
			bundle = e->name;
		} else {
			continue;
		}
		add(v, "V12", &d->loc, p->name, ch, bundle,
		    "invalid deprecation: message must be set");
	}
	fbc_strmap_dispose(&es.names);
}

/* V1-V12 for the sorted packages [from, to). */
static void check_model(vctx *v, size_t from, size_t to)
{
	size_t i, j;

	for (i = from; i < to && !v->rc; i++) {
		const fbc_package *p = v->cat->sorted_packages[i];

		if (!*p->default_channel)
			add(v, "V1", &p->loc, p->name, NULL, NULL, "default channel must be set");
		if (p->n_channels == 0)
			add(v, "V2", &p->loc, p->name, NULL, NULL,
			    "package must contain at least one channel");
		for (j = 0; j < p->n_channels && !v->rc; j++) {
			const fbc_channel *c = p->channels[j];

			if (!*c->name || fbc_package_channel(p, c->name) != c)
				continue; /* C5, C6 */
			if (c->n_entries == 0) {
				add(v, "V3", &c->loc, p->name, c->name, NULL, "%s",
				    c->synthesized
					    ? "channel must contain at least one bundle "
					      "(the package's defaultChannel names a channel "
					      "that is not declared)"
					    : "channel must contain at least one bundle");
				continue;
			}
			check_channel_graph(v, p, c);
			check_entries(v, p, c);
		}
		for (j = 0; j < p->n_bundles && !v->rc; j++) {
			if (fbc_package_bundle(p, p->bundles[j]->name) == p->bundles[j])
				check_bundle_model(v, p, p->bundles[j]);
		}
		check_versions(v, p);
		check_deprecation_messages(v, p);
	}
}

/* ------------------------------------------------------------------ */
/* strict extras                                                       */

static bool serve_name_ok(const char *s)
{
	size_t i;

	if (!((s[0] >= 'a' && s[0] <= 'z') || (s[0] >= 'A' && s[0] <= 'Z') ||
	      (s[0] >= '0' && s[0] <= '9')))
		return false;
	for (i = 1; s[i]; i++) {
		char c = s[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '.' || c == '_' || c == '-'))
			return false;
	}
	return true;
}

/* operator-framework/api pkg/constraints: unknown fields are rejected. */
static const char *constraint_unknown_field(const json_t *c, int depth)
{
	static const char *const top[] = {
		"failureMessage", "cel", "gvk", "package", "all", "any", "not", NULL};
	const char *k;
	json_t *val;

	if (!json_is_object(c) || depth > 32)
		return NULL;
	json_object_foreach((json_t *)c, k, val)
	{
		const char *const *t;
		const char *bad = NULL;

		for (t = top; *t && strcmp(*t, k) != 0; t++)
			;
		if (!*t)
			return k;
		if (strcmp(k, "cel") == 0 && json_is_object(val)) {
			const char *kk;
			json_t *vv;

			json_object_foreach(val, kk, vv)
			{
				(void)vv;
				if (strcmp(kk, "rule") != 0)
					return kk;
			}
		} else if (strcmp(k, "gvk") == 0 && json_is_object(val)) {
			const char *kk;
			json_t *vv;

			json_object_foreach(val, kk, vv)
			{
				(void)vv;
				if (strcmp(kk, "group") && strcmp(kk, "version") &&
				    strcmp(kk, "kind"))
					return kk;
			}
		} else if (strcmp(k, "package") == 0 && json_is_object(val)) {
			const char *kk;
			json_t *vv;

			json_object_foreach(val, kk, vv)
			{
				(void)vv;
				if (strcmp(kk, "packageName") && strcmp(kk, "versionRange"))
					return kk;
			}
		} else if ((strcmp(k, "all") == 0 || strcmp(k, "any") == 0 ||
			    strcmp(k, "not") == 0) &&
			   json_is_object(val)) {
			const char *kk;
			json_t *vv;
			size_t i;

			json_object_foreach(val, kk, vv)
			{
				if (strcmp(kk, "constraints") != 0)
					return kk;
				for (i = 0; i < json_array_size(vv); i++) {
					bad = constraint_unknown_field(json_array_get(vv, i),
								       depth + 1);
					if (bad)
						return bad;
				}
			}
		}
	}
	return NULL;
}

static void check_strict(vctx *v)
{
	size_t i, k;

	for (i = 0; i < v->cat->bundles.len && !v->rc; i++) {
		const fbc_bundle *b = FBC_CATALOG_AT(v->cat->bundles, fbc_bundle, i);
		size_t n_csv = 0;

		for (k = 0; k < b->n_properties; k++) {
			const fbc_property *p = &b->properties[k];
			quotes qs;

			qs.next = 0;
			if (strcmp(p->type, "olm.csv.metadata") == 0)
				n_csv++;
			if (strcmp(p->type, "olm.constraint") == 0 && p->value) {
				json_t *c;
				const char *bad;

				if (p->value_len > 131072) {
					add(v, "S4", &b->loc, b->package, NULL, b->name,
					    "olm.constraint property[%zu] is %zu bytes, more than "
					    "the "
					    "131072 the OLM resolver accepts",
					    k, p->value_len);
					continue;
				}
				c = json_loadb(p->value, p->value_len,
					       JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL);
				bad = constraint_unknown_field(c, 0);
				if (bad)
					add(v, "S4", &b->loc, b->package, NULL, b->name,
					    "olm.constraint property[%zu]: json: unknown field %s",
					    k, q(&qs, bad));
				json_decref(c);
			}
		}
		for (k = 0; k < b->n_package_reqs; k++) {
			const fbc_package_req *r = &b->package_reqs[k];
			fbc_semver_range *rg = NULL;
			fbc_error e;
			quotes qs;

			qs.next = 0;
			if (fbc_semver_range_parse_blang(&rg, r->version_range, &e))
				add(v, "S5", &b->loc, b->package, NULL, b->name,
				    "olm.package.required for package %s: invalid versionRange %s: "
				    "%s",
				    q(&qs, r->package_name), q(&qs, r->version_range), e.message);
			fbc_semver_range_free(rg);
		}
		if (n_csv > 1)
			add(v, "S1", &b->loc, b->package, NULL, b->name,
			    "expected at most 1 property of type \"olm.csv.metadata\", found %zu",
			    n_csv);
	}
	for (i = 0; i < v->cat->others.len && !v->rc; i++) {
		const fbc_other *o = FBC_CATALOG_AT(v->cat->others, fbc_other, i);
		quotes qs;

		qs.next = 0;
		if (!serve_name_ok(o->schema))
			add(v, "S2", &o->loc, o->package, NULL, NULL,
			    "invalid custom schema meta: invalid schema %s: must match "
			    "^[a-zA-Z0-9][a-zA-Z0-9._-]*$",
			    q(&qs, o->schema));
		if (*o->package && !serve_name_ok(o->package))
			add(v, "S2", &o->loc, o->package, NULL, NULL,
			    "invalid custom schema meta: invalid package %s: must match "
			    "^[a-zA-Z0-9][a-zA-Z0-9._-]*$",
			    q(&qs, o->package));
	}
}

/* check_model on large catalogs: the sorted packages cut into parts, each
 * checked into findings of its own by whichever of two threads takes it
 * next (a thread of its own, and the calling thread once the other rules
 * are done), then appended in order. */
#define MODEL_PARTS 32

typedef struct model_job {
	vctx v; /* cat and opts for every part */
	size_t n_parts;
	size_t next; /* the next part to take (atomic) */
	fbc_diags diags[MODEL_PARTS];
	fbc_error err[MODEL_PARTS];
	int rc[MODEL_PARTS];
} model_job;

static void model_parts(model_job *j)
{
	size_t n = j->v.cat->n_sorted_packages;

	for (;;) {
		size_t k = __atomic_fetch_add(&j->next, 1, __ATOMIC_RELAXED);
		vctx v = j->v;

		if (k >= j->n_parts)
			return;
		v.diags = &j->diags[k];
		v.err = &j->err[k];
		v.rc = 0;
		check_model(&v, k * n / j->n_parts, (k + 1) * n / j->n_parts);
		j->rc[k] = v.rc;
	}
}

static void *model_thread(void *arg)
{
	model_parts(arg);
	return NULL;
}

/* The parts set up (NULL: too few packages or CPUs, or no memory). */
static model_job *model_in_parallel(const vctx *v)
{
	const fbc_catalog *cat = v->cat;
	model_job *j;
	size_t k;

	if (v->opts->threads == 1 ||
	    cat->bundles.len + cat->channels.len < FBC_VALIDATE_PARALLEL_MIN ||
	    sysconf(_SC_NPROCESSORS_ONLN) < 2 || !(j = calloc(1, sizeof(*j))))
		return NULL;
	j->v = *v;
	j->n_parts = cat->n_sorted_packages < MODEL_PARTS ? cat->n_sorted_packages : MODEL_PARTS;
	for (k = 0; k < j->n_parts; k++) {
		fbc_error_init(&j->err[k]);
		if (fbc_diags_init(&j->diags[k], v->diags->max))
			break;
	}
	if (k == j->n_parts && k > 0)
		return j;
	for (size_t i = 0; i <= k && i < j->n_parts; i++)
		fbc_diags_dispose(&j->diags[i]);
	free(j);
	return NULL;
}

int fbc_validate(const fbc_catalog *cat, const fbc_validate_opts *opts, fbc_diags *diags,
		 fbc_error *err)
{
	static const fbc_validate_opts defaults = {.strict = false};
	model_job *job;
	pthread_t th;
	bool parallel;
	vctx v;

	if (!cat || !diags)
		return fbc_error_set(err, FBC_EINVAL, NULL, "validate: missing catalog or diags");
	if (!cat->linked)
		return fbc_error_set(err, FBC_EINVAL, NULL, "validate: the catalog is not linked");
	memset(&v, 0, sizeof(v));
	v.cat = cat;
	v.opts = opts ? opts : &defaults;
	v.diags = diags;
	v.err = err;
	/* V1-V12 read the linked catalog only (as every check does), so they run
	 * next to the others; their findings follow the others' as they would */
	job = model_in_parallel(&v);
	parallel = job && pthread_create(&th, NULL, model_thread, job) == 0;
	if (job && !parallel) {
		for (size_t k = 0; k < job->n_parts; k++)
			fbc_diags_dispose(&job->diags[k]);
		free(job);
		job = NULL;
	}
	check_packages(&v);
	check_channels(&v);
	check_bundles(&v);
	check_entries_have_bundles(&v);
	check_deprecations(&v);
	if (parallel) {
		model_parts(job); /* the parts the other thread has not taken */
		pthread_join(th, NULL);
		for (size_t k = 0; k < job->n_parts; k++) {
			if (!v.rc && job->rc[k])
				v.rc = fbc_error_set(err, job->rc[k], NULL, "%s",
						     job->err[k].message);
			if (!v.rc && fbc_diags_append(diags, &job->diags[k]))
				nomem(&v);
			fbc_diags_dispose(&job->diags[k]);
		}
		free(job);
	} else {
		check_model(&v, 0, cat->n_sorted_packages);
	}
	if (v.opts->strict)
		check_strict(&v);
	return v.rc;
}
