/*
 * `crds`: every CRD a new bundle owns is a safe upgrade of the same CRD in the
 * bundles it upgrades from (its CSV's replaces, skips and olm.skipRange, found
 * among the package's bundle directories at head). OLM v0's rule (every served
 * version of the old CRD is still there) fails; OLM v1's upgrade-safety rules
 * (scope, stored versions, removed fields, new required fields, type changes,
 * narrowed enums, tightened bounds and patterns, changed defaults) warn, and
 * fail with `checks: {crds: strict}`. The schema comparison recurses into
 * properties, items and additionalProperties.
 */
#include "pipeline/checks/internal.h"
#include "service/load/load.h"
#include "service/semver/semver.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_PREDECESSORS 16
#define MAX_DEPTH	 64

typedef struct manifest {
	const char *path; /* repository path of the file */
	json_t *doc;
} manifest;

typedef struct cmp_ctx {
	chk_ctx *c;
	chk_out *o;
	const char *path; /* new CRD file */
	const char *crd;
	const char *version;
	const char *from; /* the predecessor bundle directory */
	fbc_check_level v1_level;
	int findings;
} cmp_ctx;

static void manifests_dispose(fbc_vec *v)
{
	for (size_t i = 0; i < v->len; i++)
		json_decref(FBC_VEC_AT(v, manifest, i)->doc);
	fbc_vec_dispose(v);
}

/* The first document of every manifests/ file of a bundle directory at head. */
static int read_manifests(fbc_vec *out, chk_ctx *c, const char *dir, fbc_error *err)
{
	char *mdir = fbc_tree_join(dir, "manifests");
	fbc_vec v;
	fbc_load_limits lim;
	int rc = 0;

	fbc_vec_init(&v, sizeof(fbc_tree_entry));
	fbc_load_limits_default(&lim);
	if (!mdir)
		return fbc_error_set(err, FBC_ENOMEM, dir, "out of memory");
	if (fbc_tree_list(c->head_tree, &v, mdir, err) != 0) {
		fbc_error_init(err);
		goto done; /* no manifests: the bundles check says so */
	}
	fbc_tree_entries_sort(&v);
	for (size_t i = 0; i < v.len && rc == 0; i++) {
		fbc_tree_entry *e = FBC_VEC_AT(&v, fbc_tree_entry, i);
		char *p = fbc_tree_join(mdir, e->name), *data = NULL;
		size_t len = 0;
		json_t *doc = NULL;
		fbc_error e2;
		manifest *m;

		if (!p) {
			rc = fbc_error_set(err, FBC_ENOMEM, dir, "out of memory");
			break;
		}
		if (e->kind == FBC_TREE_FILE && e->name[0] != '.' &&
		    chk_read_head(&data, &len, c, p, 64u << 20, &e2) == 0 &&
		    fbc_yaml_to_json(&doc, data, len, &lim, &e2) == 0 && json_is_object(doc)) {
			if (!(m = fbc_vec_push(out))) {
				json_decref(doc);
				rc = fbc_error_set(err, FBC_ENOMEM, dir, "out of memory");
			} else {
				m->path = fbc_arena_strdup(c->arena, p);
				m->doc = doc;
			}
		} else {
			json_decref(doc);
		}
		free(data);
		free(p);
	}
done:
	fbc_tree_entries_dispose(&v);
	free(mdir);
	return rc;
}

static const char *kind_of(const json_t *doc)
{
	const char *k = json_string_value(json_object_get(doc, "kind"));

	return k ? k : "";
}

static const json_t *find_crd(const fbc_vec *ms, const char *name)
{
	for (size_t i = 0; i < ms->len; i++) {
		const json_t *d = FBC_VEC_AT(ms, manifest, i)->doc;

		if (strcmp(kind_of(d), "CustomResourceDefinition") == 0 &&
		    json_is_string(json_object_get(json_object_get(d, "metadata"), "name")) &&
		    strcmp(json_string_value(
				   json_object_get(json_object_get(d, "metadata"), "name")),
			   name) == 0)
			return d;
	}
	return NULL;
}

static const json_t *crd_version(const json_t *crd, const char *name)
{
	size_t i;
	json_t *v;

	json_array_foreach(json_object_get(json_object_get(crd, "spec"), "versions"), i, v)
	{
		const char *n = json_string_value(json_object_get(v, "name"));

		if (n && strcmp(n, name) == 0)
			return v;
	}
	return NULL;
}

static int report(cmp_ctx *x, fbc_check_level level, const char *field, const char *code,
		  const char *fmt, ...) __attribute__((format(printf, 5, 6)));
static int report(cmp_ctx *x, fbc_check_level level, const char *field, const char *code,
		  const char *fmt, ...)
{
	char what[1024];
	va_list ap;
	int line;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	line = chk_line_of(x->c, x->path, 1, x->version ? x->version : "versions");
	x->findings++;
	return chk_add(x->o, level, x->path, line ? line : 1, code,
		       "CRD %s%s%s%s%s: %s (upgrading from %s)", x->crd,
		       x->version ? " version " : "", x->version ? x->version : "",
		       field && *field ? " field " : "", field ? field : "", what, x->from);
}

static bool number_of(const json_t *o, const char *key, double *out)
{
	const json_t *v = json_object_get(o, key);

	if (!json_is_number(v))
		return false;
	*out = json_number_value(v);
	return true;
}

/* Bounds that may only stay or loosen: min-like keys may not rise, max-like not fall. */
static int bounds(cmp_ctx *x, const char *field, const json_t *o, const json_t *n)
{
	static const char *const mins[] = {"minimum", "minLength", "minItems", "minProperties"};
	static const char *const maxs[] = {"maximum", "maxLength", "maxItems", "maxProperties"};
	int rc;

	for (size_t i = 0; i < 4; i++) {
		double ov, nv;
		bool oh = number_of(o, mins[i], &ov), nh = number_of(n, mins[i], &nv);

		if (nh && (!oh || nv > ov) &&
		    (rc = report(x, x->v1_level, field, "bound-tightened", "%s tightened",
				 mins[i])))
			return rc;
		oh = number_of(o, maxs[i], &ov);
		nh = number_of(n, maxs[i], &nv);
		if (nh && (!oh || nv < ov) &&
		    (rc = report(x, x->v1_level, field, "bound-tightened", "%s tightened",
				 maxs[i])))
			return rc;
	}
	return 0;
}

static int compare_schema(cmp_ctx *x, const char *field, const json_t *o, const json_t *n,
			  int depth)
{
	const char *ot = json_string_value(json_object_get(o, "type"));
	const char *nt = json_string_value(json_object_get(n, "type"));
	const json_t *oe = json_object_get(o, "enum"), *ne = json_object_get(n, "enum");
	const json_t *op = json_object_get(o, "properties"), *np = json_object_get(n, "properties");
	const json_t *od = json_object_get(o, "default"), *nd = json_object_get(n, "default");
	const char *opat = json_string_value(json_object_get(o, "pattern"));
	const char *npat = json_string_value(json_object_get(n, "pattern"));
	const char *key;
	json_t *v;
	size_t i;
	int rc;

	if (depth > MAX_DEPTH || !json_is_object(o) || !json_is_object(n))
		return 0;
	if (ot && nt && strcmp(ot, nt) != 0 &&
	    (rc = report(x, x->v1_level, field, "type-changed", "type changed from %s to %s", ot,
			 nt)))
		return rc;
	if (ne && json_is_array(ne)) {
		json_array_foreach(oe, i, v)
		{
			bool kept = false;
			size_t k;
			json_t *w;

			json_array_foreach(ne, k, w) kept |= json_equal(v, w);
			if (!kept) {
				char *s = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);

				rc = report(x, x->v1_level, field, "enum-narrowed",
					    "enum value %s removed", s ? s : "?");
				free(s);
				if (rc)
					return rc;
			}
		}
		if (!oe &&
		    (rc = report(x, x->v1_level, field, "enum-narrowed", "an enum was added")))
			return rc;
	}
	if ((rc = bounds(x, field, o, n)) != 0)
		return rc;
	if (npat && (!opat || strcmp(opat, npat) != 0) &&
	    (rc = report(x, x->v1_level, field, "pattern", "pattern changed to %s", npat)))
		return rc;
	if (od && (!nd || !json_equal(od, nd)) &&
	    (rc = report(x, x->v1_level, field, "default-changed", "%s",
			 nd ? "default changed" : "default removed")))
		return rc;
	json_array_foreach(json_object_get(n, "required"), i, v)
	{
		bool had = false;
		size_t k;
		json_t *w;

		json_array_foreach(json_object_get(o, "required"), k, w) had |= json_equal(v, w);
		if (!had && json_is_string(v) &&
		    (rc = report(x, x->v1_level, field, "required-added", "new required field %s",
				 json_string_value(v))))
			return rc;
	}
	json_object_foreach((json_t *)op, key, v)
	{
		const json_t *nv = json_object_get(np, key);
		char sub[1024];

		snprintf(sub, sizeof(sub), "%s%s%s", field, *field ? "." : "", key);
		if (!nv) {
			if ((rc = report(x, x->v1_level, sub, "field-removed", "%s",
					 "field removed")))
				return rc;
			continue;
		}
		if ((rc = compare_schema(x, sub, v, nv, depth + 1)) != 0)
			return rc;
	}
	{
		char sub[1024];

		snprintf(sub, sizeof(sub), "%s[]", field);
		if ((rc = compare_schema(x, sub, json_object_get(o, "items"),
					 json_object_get(n, "items"), depth + 1)) != 0)
			return rc;
		snprintf(sub, sizeof(sub), "%s{}", field);
		return compare_schema(x, sub, json_object_get(o, "additionalProperties"),
				      json_object_get(n, "additionalProperties"), depth + 1);
	}
}

static int compare_crd(cmp_ctx *x, const json_t *oc, const json_t *nc)
{
	const json_t *os = json_object_get(oc, "spec"), *ns = json_object_get(nc, "spec");
	const char *oscope = json_string_value(json_object_get(os, "scope"));
	const char *nscope = json_string_value(json_object_get(ns, "scope"));
	size_t i;
	json_t *v;
	int rc;

	x->version = NULL;
	if (oscope && nscope && strcmp(oscope, nscope) != 0 &&
	    (rc = report(x, x->v1_level, "", "scope-changed", "scope changed from %s to %s", oscope,
			 nscope)))
		return rc;
	json_array_foreach(json_object_get(os, "versions"), i, v)
	{
		const char *name = json_string_value(json_object_get(v, "name"));
		const json_t *nv;

		if (!name)
			continue;
		nv = crd_version(nc, name);
		if (!nv) {
			if (json_is_true(json_object_get(v, "served")) &&
			    (rc = report(x, FBC_LEVEL_FAILURE, "", "served-version-removed",
					 "served version %s is gone: OLM refuses the upgrade",
					 name)))
				return rc;
			if (json_is_true(json_object_get(v, "storage")) &&
			    (rc = report(x, x->v1_level, "", "stored-version-removed",
					 "stored version %s is gone", name)))
				return rc;
			continue;
		}
		x->version = name;
		rc = compare_schema(
			x, "", json_object_get(json_object_get(v, "schema"), "openAPIV3Schema"),
			json_object_get(json_object_get(nv, "schema"), "openAPIV3Schema"), 0);
		x->version = NULL;
		if (rc)
			return rc;
	}
	return 0;
}

/* The version in a CSV name "pkg.v1.2.3" (or "pkg.1.2.3"). */
static bool name_version(fbc_semver *out, const char *name)
{
	const char *p = strstr(name, ".v");
	fbc_error e2;

	if (p && fbc_semver_parse_tolerant(out, p + 2, strlen(p + 2), &e2) == 0)
		return true;
	p = strchr(name, '.');
	return p && fbc_semver_parse_tolerant(out, p + 1, strlen(p + 1), &e2) == 0;
}

static bool dir_version(fbc_semver *out, const char *dir)
{
	const char *b = strrchr(dir, '/');
	fbc_error e2;

	b = b ? b + 1 : dir;
	if (*b == 'v')
		b++;
	return fbc_semver_parse_tolerant(out, b, strlen(b), &e2) == 0;
}

/* Bundle directories of pkg at head that the new CSV upgrades from. */
static int predecessors(fbc_vec *out, chk_ctx *c, const char *new_dir, const json_t *csv,
			fbc_error *err)
{
	const json_t *spec = json_object_get(csv, "spec");
	const char *replaces = json_string_value(json_object_get(spec, "replaces"));
	const char *range = json_string_value(json_object_get(
		json_object_get(json_object_get(csv, "metadata"), "annotations"), "olm.skipRange"));
	fbc_semver_range *sr = NULL;
	char *parent = strndup(new_dir, (size_t)(strrchr(new_dir, '/') - new_dir));
	fbc_vec v;
	fbc_error e2;
	int rc = 0;

	fbc_vec_init(&v, sizeof(fbc_tree_entry));
	if (!parent)
		return fbc_error_set(err, FBC_ENOMEM, new_dir, "out of memory");
	if (range && fbc_semver_range_parse_blang(&sr, range, &e2) != 0)
		sr = NULL;
	if (fbc_tree_list(c->head_tree, &v, parent, &e2) != 0)
		goto done;
	for (size_t i = 0; i < v.len && out->len < MAX_PREDECESSORS; i++) {
		fbc_tree_entry *e = FBC_VEC_AT(&v, fbc_tree_entry, i);
		char *d = fbc_tree_join(parent, e->name);
		fbc_semver dv, rv;
		bool match = false;
		size_t k;
		json_t *s;

		if (!d || e->kind != FBC_TREE_DIR || strcmp(d, new_dir) == 0 ||
		    !dir_version(&dv, d)) {
			free(d);
			continue;
		}
		if (replaces && name_version(&rv, replaces) && fbc_semver_compare(&rv, &dv) == 0)
			match = true;
		json_array_foreach(json_object_get(spec, "skips"), k, s)
		{
			if (json_is_string(s) && name_version(&rv, json_string_value(s)) &&
			    fbc_semver_compare(&rv, &dv) == 0)
				match = true;
		}
		if (sr && fbc_semver_range_contains(sr, &dv))
			match = true;
		if (match && chk_strvec_add(out, fbc_arena_strdup(c->arena, d))) {
			free(d);
			rc = fbc_error_set(err, FBC_ENOMEM, new_dir, "out of memory");
			goto done;
		}
		free(d);
	}
done:
	fbc_semver_range_free(sr);
	fbc_tree_entries_dispose(&v);
	free(parent);
	return rc;
}

int chk_run_crds(chk_ctx *c, chk_out *o, fbc_error *err)
{
	size_t added = 0, compared = 0;
	fbc_check_level v1 = fbc_settings_severity(&c->settings, "crds") == FBC_SEV_STRICT
				     ? FBC_LEVEL_FAILURE
				     : FBC_LEVEL_WARNING;
	int rc = 0;

	for (size_t i = 0; i < c->bundles.len && rc == 0; i++) {
		const chk_bundle *b = FBC_VEC_AT(&c->bundles, chk_bundle, i);
		fbc_vec ms, preds;
		const json_t *csv = NULL;

		if (b->state != CHK_B_ADDED)
			continue;
		added++;
		fbc_vec_init(&ms, sizeof(manifest));
		fbc_vec_init(&preds, sizeof(char *));
		if ((rc = read_manifests(&ms, c, b->dir, err)) != 0)
			goto next;
		for (size_t k = 0; k < ms.len && !csv; k++)
			if (strcmp(kind_of(FBC_VEC_AT(&ms, manifest, k)->doc),
				   "ClusterServiceVersion") == 0)
				csv = FBC_VEC_AT(&ms, manifest, k)->doc;
		if (!csv || (rc = predecessors(&preds, c, b->dir, csv, err)) != 0)
			goto next;
		for (size_t p = 0; p < preds.len && rc == 0; p++) {
			const char *pd = *FBC_VEC_AT(&preds, const char *, p);
			fbc_vec old;

			fbc_vec_init(&old, sizeof(manifest));
			rc = read_manifests(&old, c, pd, err);
			for (size_t k = 0; k < ms.len && rc == 0; k++) {
				const manifest *m = FBC_VEC_AT(&ms, manifest, k);
				const char *name = json_string_value(json_object_get(
					json_object_get(m->doc, "metadata"), "name"));
				const json_t *oc;
				cmp_ctx x = {c, o, m->path, name, NULL, pd, v1, 0};

				if (strcmp(kind_of(m->doc), "CustomResourceDefinition") != 0 ||
				    !name || !(oc = find_crd(&old, name)))
					continue;
				compared++;
				rc = compare_crd(&x, oc, m->doc);
			}
			manifests_dispose(&old);
		}
	next:
		manifests_dispose(&ms);
		fbc_vec_dispose(&preds);
	}
	if (rc)
		return rc;
	if (added == 0)
		return chk_summary(o, "no bundle is added by this change");
	return chk_summary(o,
			   "%zu CRD upgrades compared for %zu added bundles (OLM v0 rule fails, "
			   "v1 safety rules %s)",
			   compared, added, v1 == FBC_LEVEL_FAILURE ? "fail (strict)" : "warn");
}
