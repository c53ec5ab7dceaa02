/*
 * The olm.bundle blob (bundles.md §3): properties P1-P9, related images,
 * the B errors in opm's evaluation order (§6.1), the CSV-metadata migration
 * (§4.1) and the compact/indented writers (§5.1, §5.2).
 */
#include "service/bundle/internal.h"
#include "service/gojson/gojson.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TRY(expr)                       \
	do {                            \
		if ((rc = (expr)) != 0) \
			goto done;      \
	} while (0)

static int oom(fbc_error *err)
{
	return fbc_error_set(err, FBC_ENOMEM, NULL, "out of memory");
}

static const bentry *entry(const fbc_bundle_dir *b, size_t i)
{
	return FBC_VEC_AT(&b->manifests, bentry, i);
}

/* ---- provided and required APIs ---- */

typedef struct api {
	const char *group, *version, *kind, *plural;
} api;

typedef struct apiset {
	api *v;
	size_t n, cap;
} apiset;

static int api_cmp(const api *a, const api *b, bool plural)
{
	int c;
	if ((c = strcmp(a->group, b->group)) || (c = strcmp(a->version, b->version)) ||
	    (c = strcmp(a->kind, b->kind)))
		return c;
	return plural ? strcmp(a->plural, b->plural) : 0;
}

static int apiset_add(apiset *s, api a, bool plural)
{
	for (size_t i = 0; i < s->n; i++)
		if (api_cmp(&s->v[i], &a, plural) == 0)
			return 0;
	if (s->n == s->cap) {
		size_t nc = s->cap ? s->cap * 2 : 16;
		api *nv = realloc(s->v, nc * sizeof(*nv));
		if (nv == NULL)
			return FBC_ENOMEM;
		s->v = nv;
		s->cap = nc;
	}
	s->v[s->n++] = a;
	return 0;
}

static const char *sval(const json_t *v)
{
	return json_is_string(v) ? json_string_value(v) : "";
}

/* A field that Go decodes as a string: absent/null/string; else a type error. */
static bool str_ok(const json_t *v)
{
	return v == NULL || json_is_null(v) || json_is_string(v);
}

static int type_error(fbc_error *err, const char *where, const char *prefix, const json_t *v,
		      const char *field, const char *gotype)
{
	return fbc_error_set(err, FBC_EINVAL, where,
			     "%sjson: cannot unmarshal %s into Go struct field %s of type %s",
			     prefix, fbc_gt_json_kind(v), field, gotype);
}

/* The version part of an apiVersion: after the last '/'. */
static const char *version_part(const char *av)
{
	const char *s = strrchr(av, '/');
	return s ? s + 1 : av;
}

/* Is this collected object a CRD that opm decodes (§2.7)? 1 = v1, 2 = v1beta1. */
static int crd_kind(const json_t *o)
{
	const char *av;
	if (strcmp(sval(json_object_get(o, "kind")), "CustomResourceDefinition") != 0)
		return 0;
	av = version_part(sval(json_object_get(o, "apiVersion")));
	return strcmp(av, "v1") == 0 ? 1 : strcmp(av, "v1beta1") == 0 ? 2 : 0;
}

/* B5: the typed CRD decode, for the fields opm reads and their parents. */
static int check_crd(const bentry *e, int ver, fbc_error *err)
{
	const json_t *o = e->doc;
	const char *av = sval(json_object_get(o, "apiVersion"));
	const char *pre = ver == 1 ? "error decoding v1 CRD: " : "error decoding v1beta1 CRD: ";
	json_t *spec = json_object_get(o, "spec"), *names, *vers;

	if (strcmp(av, ver == 1 ? "apiextensions.k8s.io/v1" : "apiextensions.k8s.io/v1beta1"))
		return fbc_error_set(err, FBC_EINVAL, e->file,
				     "%sno kind \"CustomResourceDefinition\" is registered for "
				     "version \"%s\" in scheme \"pkg/runtime/scheme.go:100\"",
				     pre, av);
	if (spec != NULL && !json_is_null(spec) && !json_is_object(spec))
		return type_error(err, e->file, pre, spec, "CustomResourceDefinition.spec",
				  "CustomResourceDefinitionSpec");
	if (!str_ok(json_object_get(spec, "group")))
		return type_error(err, e->file, pre, json_object_get(spec, "group"),
				  "CustomResourceDefinitionSpec.spec.group", "string");
	if (ver == 2 && !str_ok(json_object_get(spec, "version")))
		return type_error(err, e->file, pre, json_object_get(spec, "version"),
				  "CustomResourceDefinitionSpec.spec.version", "string");
	names = json_object_get(spec, "names");
	if (names != NULL && !json_is_null(names) && !json_is_object(names))
		return type_error(err, e->file, pre, names,
				  "CustomResourceDefinitionSpec.spec.names",
				  "CustomResourceDefinitionNames");
	if (!str_ok(json_object_get(names, "kind")) || !str_ok(json_object_get(names, "plural")))
		return type_error(err, e->file, pre,
				  str_ok(json_object_get(names, "kind"))
					  ? json_object_get(names, "plural")
					  : json_object_get(names, "kind"),
				  "CustomResourceDefinitionNames.spec.names.kind", "string");
	vers = json_object_get(spec, "versions");
	if (vers != NULL && !json_is_null(vers) && !json_is_array(vers))
		return type_error(err, e->file, pre, vers,
				  "CustomResourceDefinitionSpec.spec.versions",
				  "[]CustomResourceDefinitionVersion");
	for (size_t i = 0; i < json_array_size(vers); i++) {
		json_t *v = json_array_get(vers, i);
		if (!json_is_null(v) && !json_is_object(v))
			return type_error(err, e->file, pre, v,
					  "CustomResourceDefinitionSpec.spec.versions",
					  "CustomResourceDefinitionVersion");
		if (!str_ok(json_object_get(v, "name")))
			return type_error(err, e->file, pre, json_object_get(v, "name"),
					  "CustomResourceDefinitionVersion.spec.versions.name",
					  "string");
		if (json_object_get(v, "served") &&
		    !json_is_boolean(json_object_get(v, "served")) &&
		    !json_is_null(json_object_get(v, "served")))
			return type_error(err, e->file, pre, json_object_get(v, "served"),
					  "CustomResourceDefinitionVersion.spec.versions.served",
					  "bool");
	}
	return 0;
}

/* B4: the CSV's object meta as Kubernetes types it (the fields that matter). */
static int check_string_map(const json_t *m, const char *field, const char *file, fbc_error *err)
{
	const char *k;
	json_t *v;

	if (m == NULL || json_is_null(m))
		return 0;
	if (!json_is_object(m))
		return type_error(err, file, "", m, field, "map[string]string");
	json_object_foreach((json_t *)m, k, v)
	{
		if (!str_ok(v))
			return type_error(err, file, "", v, field, "string");
	}
	return 0;
}

/* Go time.Parse(time.RFC3339, s): 2006-01-02T15:04:05[.frac](Z|±hh:mm) */
static bool rfc3339(const char *s)
{
	static const char pat[] = "dddd-dd-ddTdd:dd:dd";
	size_t i = 0;

	for (; pat[i]; i++) {
		char c = s[i];
		if (pat[i] == 'd' ? !(c >= '0' && c <= '9') : c != pat[i])
			return false;
	}
	if (s[i] == '.') {
		size_t st = ++i;
		while (s[i] >= '0' && s[i] <= '9')
			i++;
		if (i == st)
			return false;
	}
	if (s[i] == 'Z')
		return s[i + 1] == 0;
	if ((s[i] == '+' || s[i] == '-') && s[i + 1] >= '0' && s[i + 1] <= '9' && s[i + 2] >= '0' &&
	    s[i + 2] <= '9' && s[i + 3] == ':' && s[i + 4] >= '0' && s[i + 4] <= '9' &&
	    s[i + 5] >= '0' && s[i + 5] <= '9')
		return s[i + 6] == 0;
	return false;
}

static int check_csv_meta(const bentry *e, fbc_error *err)
{
	const json_t *o = e->doc;
	json_t *meta = fbc_bundle_fold_get(o, "metadata");
	int rc;

	if (!str_ok(fbc_bundle_fold_get(o, "apiVersion")))
		return type_error(err, e->file, "", fbc_bundle_fold_get(o, "apiVersion"),
				  "ClusterServiceVersion.apiVersion", "string");
	if (meta == NULL || json_is_null(meta))
		return 0;
	if (!json_is_object(meta))
		return type_error(err, e->file, "", meta, "ClusterServiceVersion.metadata",
				  "v1.ObjectMeta");
	static const char *const strs[] = {"name",     "generateName", "namespace",
					   "selfLink", "uid",	       "resourceVersion"};
	for (size_t i = 0; i < sizeof(strs) / sizeof(strs[0]); i++)
		if (!str_ok(fbc_bundle_fold_get(meta, strs[i])))
			return type_error(err, e->file, "", fbc_bundle_fold_get(meta, strs[i]),
					  "ClusterServiceVersion.metadata", "string");
	if ((rc = check_string_map(fbc_bundle_fold_get(meta, "annotations"),
				   "ClusterServiceVersion.metadata.annotations", e->file, err)) ||
	    (rc = check_string_map(fbc_bundle_fold_get(meta, "labels"),
				   "ClusterServiceVersion.metadata.labels", e->file, err)))
		return rc;
	for (int k = 0; k < 2; k++) {
		const char *f = k ? "deletionTimestamp" : "creationTimestamp";
		json_t *ts = fbc_bundle_fold_get(meta, f);
		if (ts == NULL || json_is_null(ts))
			continue;
		if (!json_is_string(ts))
			return type_error(err, e->file, "", ts, "ClusterServiceVersion.metadata",
					  "Time");
		if (!rfc3339(json_string_value(ts)))
			return fbc_error_set(
				err, FBC_EINVAL, e->file,
				"parsing time \"%s\" as \"2006-01-02T15:04:05Z07:00\": "
				"cannot parse as RFC3339 (metadata.%s)",
				json_string_value(ts), f);
	}
	return 0;
}

int fbc_bundle_check_crd(const bentry *e, fbc_error *err)
{
	int k = crd_kind(e->doc);
	return k ? check_crd(e, k, err) : 0;
}

/* Provided APIs of the CRD objects: v1 first, then v1beta1 (§2.7). */
static int crd_apis(const fbc_bundle_dir *b, apiset *out)
{
	for (int pass = 1; pass <= 2; pass++) {
		for (size_t i = 0; i < b->nobjects; i++) {
			const json_t *o = entry(b, b->objects[i])->doc;
			json_t *spec, *vers;
			api a;
			int rc;

			if (crd_kind(o) != pass)
				continue;
			spec = json_object_get(o, "spec");
			a.group = sval(json_object_get(spec, "group"));
			a.kind = sval(json_object_get(json_object_get(spec, "names"), "kind"));
			a.plural = sval(json_object_get(json_object_get(spec, "names"), "plural"));
			vers = json_object_get(spec, "versions");
			for (size_t k = 0; k < json_array_size(vers); k++) {
				a.version = sval(json_object_get(json_array_get(vers, k), "name"));
				if ((rc = apiset_add(out, a, true)))
					return rc;
			}
			if (pass == 2 && *sval(json_object_get(spec, "version"))) {
				a.version = sval(json_object_get(spec, "version"));
				if ((rc = apiset_add(out, a, true)))
					return rc;
			}
		}
	}
	return 0;
}

/* spec.apiservicedefinitions / customresourcedefinitions: {owned, required}
 * of {group, kind, name, version} strings. Returns the field that is wrong
 * (0 = fine). */
static const json_t *bad_defs(const json_t *defs)
{
	if (defs == NULL || json_is_null(defs))
		return NULL;
	if (!json_is_object(defs))
		return defs;
	for (int w = 0; w < 2; w++) {
		json_t *l = fbc_bundle_fold_get(defs, w ? "required" : "owned");
		if (l == NULL || json_is_null(l))
			continue;
		if (!json_is_array(l))
			return l;
		for (size_t i = 0; i < json_array_size(l); i++) {
			json_t *d = json_array_get(l, i);
			static const char *const f[] = {"group",   "kind",	  "name",
							"version", "displayName", "description"};
			if (json_is_null(d))
				continue;
			if (!json_is_object(d))
				return d;
			for (size_t k = 0; k < sizeof(f) / sizeof(f[0]); k++)
				if (!str_ok(fbc_bundle_fold_get(d, f[k])))
					return fbc_bundle_fold_get(d, f[k]);
		}
	}
	return NULL;
}

static json_t *defs_list(const json_t *defs, const char *which)
{
	return fbc_bundle_fold_get(defs, which);
}

static int map_string(fbc_buf *out, const apiset *s)
{
	/* Go prints map[APIKey]struct{} with keys sorted field by field */
	api *v = NULL;
	int rc = 0;

	if (s->n) {
		v = malloc(s->n * sizeof(*v));
		if (v == NULL)
			return FBC_ENOMEM;
		memcpy(v, s->v, s->n * sizeof(*v));
		for (size_t i = 1; i < s->n; i++)
			for (size_t j = i; j > 0 && api_cmp(&v[j - 1], &v[j], true) > 0; j--) {
				api t = v[j];
				v[j] = v[j - 1];
				v[j - 1] = t;
			}
	}
	rc = fbc_buf_puts(out, "map[");
	for (size_t i = 0; rc == 0 && i < s->n; i++)
		rc = fbc_buf_printf(out, "%s%s/%s/%s (%s):{}", i ? " " : "", v[i].group,
				    v[i].version, v[i].kind, v[i].plural);
	if (rc == 0)
		rc = fbc_buf_putc(out, ']');
	free(v);
	return rc;
}

/* ---- properties ---- */

static int prop_add(fbc_vec *v, const char *type, const char *value, size_t len)
{
	bprop *p = fbc_vec_push(v);
	if (p == NULL)
		return FBC_ENOMEM;
	/* built values and values from YAML are compact already */
	p->compact = memchr(value, ' ', len) == NULL && memchr(value, '\n', len) == NULL &&
		     memchr(value, '\t', len) == NULL && memchr(value, '\r', len) == NULL;
	p->type = strdup(type);
	p->value = malloc(len + 1);
	if (p->type == NULL || p->value == NULL)
		return FBC_ENOMEM;
	memcpy(p->value, value, len);
	p->value[len] = 0;
	p->len = len;
	return 0;
}

void fbc_bundle_props_dispose(fbc_vec *props)
{
	for (size_t i = 0; i < props->len; i++) {
		bprop *p = FBC_VEC_AT(props, bprop, i);
		free(p->type);
		free(p->value);
	}
	fbc_vec_dispose(props);
}

void fbc_bundle_related_dispose(fbc_vec *related)
{
	for (size_t i = 0; i < related->len; i++) {
		brelated *r = FBC_VEC_AT(related, brelated, i);
		free(r->name);
		free(r->image);
	}
	fbc_vec_dispose(related);
}

static int gvk_value(fbc_buf *b, const char *g, const char *k, const char *v)
{
	int rc;
	fbc_buf_reset(b);
	if ((rc = fbc_buf_puts(b, "{\"group\":")) ||
	    (rc = fbc_gojson_string(b, g, strlen(g), false)) ||
	    (rc = fbc_buf_puts(b, ",\"kind\":")) ||
	    (rc = fbc_gojson_string(b, k, strlen(k), false)) ||
	    (rc = fbc_buf_puts(b, ",\"version\":")) ||
	    (rc = fbc_gojson_string(b, v, strlen(v), false)) || (rc = fbc_buf_putc(b, '}')))
		return rc;
	return 0;
}

static int package_value(fbc_buf *b, const char *p, const char *v, const char *r)
{
	int rc;
	fbc_buf_reset(b);
	if ((rc = fbc_buf_puts(b, "{\"packageName\":")) ||
	    (rc = fbc_gojson_string(b, p, strlen(p), false)) ||
	    (rc = fbc_buf_puts(b, ",\"version\":")) ||
	    (rc = fbc_gojson_string(b, v, strlen(v), false)))
		return rc;
	if (r && *r &&
	    ((rc = fbc_buf_puts(b, ",\"release\":")) ||
	     (rc = fbc_gojson_string(b, r, strlen(r), false))))
		return rc;
	return fbc_buf_putc(b, '}');
}

/* spec.version / spec.release as derivedProperties reads them (B12, B13). */
static int csv_version(const json_t *spec, char **ver, char **rel, int *which)
{
	json_t *v = json_object_get(spec, "version"), *r = json_object_get(spec, "release");
	char tmp[64];

	*which = 0;
	if (v == NULL || json_is_null(v))
		*ver = strdup("");
	else if (json_is_string(v))
		*ver = strdup(json_string_value(v));
	else {
		*which = 12;
		return 0;
	}
	if (r == NULL || json_is_null(r))
		*rel = strdup("");
	else if (json_is_string(r))
		*rel = strdup(json_string_value(r));
	else if (json_is_integer(r)) {
		snprintf(tmp, sizeof(tmp), "%" JSON_INTEGER_FORMAT, json_integer_value(r));
		*rel = strdup(tmp);
	} else if (json_is_real(r)) {
		double d = json_real_value(r);
		if (d == (double)(long long)d && d > -1e18 && d < 1e18)
			snprintf(tmp, sizeof(tmp), "%lld", (long long)d);
		else
			snprintf(tmp, sizeof(tmp), "%g", d);
		*rel = strdup(tmp);
	} else {
		*which = 13;
		return 0;
	}
	return *ver && *rel ? 0 : FBC_ENOMEM;
}

/* Decode raw bytes into a {fields} struct of strings (case-insensitive);
 * a message in *why on a type or syntax error. */
static int decode_struct(const char *raw, size_t len, const char *const *fields, size_t nf,
			 char **out, char *why, size_t whysz)
{
	json_error_t je;
	json_t *j = json_loadb(raw, len, JSON_DECODE_ANY | JSON_ALLOW_NUL, &je);
	int rc = 0;

	for (size_t i = 0; i < nf; i++)
		out[i] = NULL;
	if (j == NULL) {
		snprintf(why, whysz, "%s", je.text);
		return FBC_EPARSE;
	}
	if (!json_is_object(j) && !json_is_null(j)) {
		snprintf(why, whysz, "json: cannot unmarshal %s into Go value of type struct",
			 fbc_gt_json_kind(j));
		rc = FBC_EPARSE;
		goto done;
	}
	for (size_t i = 0; i < nf; i++) {
		json_t *v = fbc_bundle_fold_get(j, fields[i]);
		if (!str_ok(v)) {
			snprintf(
				why, whysz,
				"json: cannot unmarshal %s into Go struct field .%s of type string",
				fbc_gt_json_kind(v), fields[i]);
			rc = FBC_EPARSE;
			goto done;
		}
		out[i] = strdup(sval(v));
		if (out[i] == NULL) {
			rc = FBC_ENOMEM;
			goto done;
		}
	}
done:
	json_decref(j);
	if (rc)
		for (size_t i = 0; i < nf; i++) {
			free(out[i]);
			out[i] = NULL;
		}
	return rc;
}

typedef struct pkgreq {
	char *name, *range;
} pkgreq;

static int cmp_prop(const void *pa, const void *pb)
{
	const bprop *a = pa, *b = pb;
	int c = strcmp(a->type, b->type);
	size_t n;

	if (c)
		return c;
	n = a->len < b->len ? a->len : b->len;
	c = memcmp(a->value, b->value, n);
	if (c)
		return c;
	return a->len < b->len ? -1 : a->len > b->len;
}

static bool is_moved(const char *type)
{
	return strcmp(type, "olm.bundle.object") == 0 || strcmp(type, "olm.csv.metadata") == 0;
}

/* Dedup by (type, raw bytes), keeping the first. */
static bool has_prop(const fbc_vec *v, const char *type, const char *val, size_t len)
{
	for (size_t i = 0; i < v->len; i++) {
		const bprop *p = FBC_VEC_AT(v, bprop, i);
		if (p->len == len && strcmp(p->type, type) == 0 && memcmp(p->value, val, len) == 0)
			return true;
	}
	return false;
}

static int add_unique(fbc_vec *v, const char *type, const char *val, size_t len)
{
	return has_prop(v, type, val, len) ? 0 : prop_add(v, type, val, len);
}

/* P1: the olm.properties CSV annotation. */
static int annotation_props(const json_t *csv, rawprop **out, size_t *n)
{
	json_t *ann = fbc_bundle_fold_get(fbc_bundle_fold_get(csv, "metadata"), "annotations");
	json_t *v = json_object_get(ann, "olm.properties");
	bool te = false;
	int rc;

	*out = NULL;
	*n = 0;
	if (!json_is_string(v))
		return 0;
	rc = fbc_bundle_raw_list(out, n, &te, json_string_value(v), json_string_length(v), NULL);
	if (rc == FBC_ENOMEM)
		return rc;
	if (rc != 0) { /* W6: syntax error ignored; a type error leaves what decoded */
		*out = NULL;
		*n = 0;
	}
	return 0;
}

/* ---- related images (§3.6) ---- */

static int related_add(fbc_vec *rel, const char *name, const char *image)
{
	brelated *r = fbc_vec_push(rel);
	if (r == NULL)
		return FBC_ENOMEM;
	r->name = strdup(name);
	r->image = strdup(image);
	return r->name && r->image ? 0 : FBC_ENOMEM;
}

static bool seen_image(const fbc_vec *rel, size_t upto, const char *image)
{
	for (size_t i = 0; i < upto; i++)
		if (strcmp(FBC_VEC_AT(rel, brelated, i)->image, image) == 0)
			return true;
	return false;
}

/* B17 checks and collection of the operator images of a deployment install. */
static int deployment_images(const json_t *spec, fbc_vec *imgs, const char *file,
			     const char *csvname, fbc_error *err)
{
	json_t *inst = fbc_bundle_fold_get(spec, "install"), *ispec, *deps;
	char pre[FBC_ERROR_MESSAGE_MAX];

	snprintf(pre, sizeof(pre), "get related images for bundle \"%s\": ", csvname);
	if (inst == NULL || json_is_null(inst))
		return 0;
	if (!json_is_object(inst))
		return type_error(err, file, pre, inst, "csvSpec.install", "strategy");
	if (!str_ok(fbc_bundle_fold_get(inst, "strategy")))
		return type_error(err, file, pre, fbc_bundle_fold_get(inst, "strategy"),
				  "strategy.install.strategy", "string");
	if (strcmp(sval(fbc_bundle_fold_get(inst, "strategy")), "deployment") != 0)
		return 0;
	ispec = fbc_bundle_fold_get(inst, "spec");
	if (ispec != NULL && !json_is_null(ispec) && !json_is_object(ispec))
		return type_error(err, file, pre, ispec, "strategy.install.spec", "strategySpec");
	deps = fbc_bundle_fold_get(ispec, "deployments");
	if (deps != NULL && !json_is_null(deps) && !json_is_array(deps))
		return type_error(err, file, pre, deps, "strategySpec.install.spec.deployments",
				  "[]dep");
	for (size_t i = 0; i < json_array_size(deps); i++) {
		json_t *d = json_array_get(deps, i), *ds, *tmpl, *ps, *rep;
		if (json_is_null(d))
			continue;
		if (!json_is_object(d))
			return type_error(err, file, pre, d,
					  "strategySpec.install.spec.deployments", "dep");
		ds = fbc_bundle_fold_get(d, "spec");
		if (ds != NULL && !json_is_null(ds) && !json_is_object(ds))
			return type_error(err, file, pre, ds, "dep.install.spec.deployments.spec",
					  "v1.DeploymentSpec");
		rep = fbc_bundle_fold_get(ds, "replicas");
		if (rep != NULL && !json_is_null(rep) && !json_is_integer(rep))
			return type_error(err, file, pre, rep,
					  "dep.install.spec.deployments.spec.replicas", "int32");
		tmpl = fbc_bundle_fold_get(ds, "template");
		if (tmpl != NULL && !json_is_null(tmpl) && !json_is_object(tmpl))
			return type_error(err, file, pre, tmpl,
					  "dep.install.spec.deployments.spec.template",
					  "v1.PodTemplateSpec");
		ps = fbc_bundle_fold_get(tmpl, "spec");
		if (ps != NULL && !json_is_null(ps) && !json_is_object(ps))
			return type_error(err, file, pre, ps,
					  "dep.install.spec.deployments.spec.template.spec",
					  "v1.PodSpec");
		for (int w = 0; w < 2; w++) {
			json_t *cs = fbc_bundle_fold_get(ps, w ? "initContainers" : "containers");
			if (cs != NULL && !json_is_null(cs) && !json_is_array(cs))
				return type_error(err, file, pre, cs,
						  "dep.install.spec.deployments.spec.template.spec."
						  "containers",
						  "[]v1.Container");
			for (size_t k = 0; k < json_array_size(cs); k++) {
				json_t *c = json_array_get(cs, k), *img;
				if (json_is_null(c))
					continue;
				if (!json_is_object(c))
					return type_error(err, file, pre, c,
							  "dep.install.spec.deployments.spec."
							  "template.spec.containers",
							  "v1.Container");
				img = fbc_bundle_fold_get(c, "image");
				if (!str_ok(img))
					return type_error(err, file, pre, img,
							  "Container.install.spec.deployments."
							  "spec.template.spec.containers.image",
							  "string");
				if (!seen_image(imgs, imgs->len, sval(img)) &&
				    related_add(imgs, "", sval(img)))
					return oom(err);
			}
		}
	}
	return 0;
}

static int related_images(const fbc_bundle_dir *b, const char *image, fbc_vec *rel, fbc_error *err)
{
	const bentry *ce = entry(b, b->csv);
	json_t *spec = fbc_bundle_fold_get(ce->doc, "spec");
	json_t *ri = json_object_get(spec, "relatedImages");
	char pre[FBC_ERROR_MESSAGE_MAX];
	fbc_vec imgs;
	size_t nseen;
	int rc = 0;

	snprintf(pre, sizeof(pre), "get related images for bundle \"%s\": ", b->name);
	fbc_vec_init(&imgs, sizeof(brelated));
	if (ri != NULL && !json_is_null(ri) && !json_is_array(ri))
		return type_error(err, ce->file, pre, ri, "relatedImages",
				  "[]registry.RelatedImage");
	for (size_t i = 0; i < json_array_size(ri); i++) {
		json_t *e = json_array_get(ri, i), *n, *im;
		if (!json_is_null(e) && !json_is_object(e))
			return type_error(err, ce->file, pre, e, "relatedImages",
					  "registry.RelatedImage");
		n = fbc_bundle_fold_get(e, "name");
		im = fbc_bundle_fold_get(e, "image");
		if (!str_ok(n) || !str_ok(im))
			return type_error(err, ce->file, pre, str_ok(n) ? im : n,
					  str_ok(n) ? "RelatedImage.image" : "RelatedImage.name",
					  "string");
		if (related_add(rel, sval(n), sval(im)))
			return oom(err);
	}
	nseen = rel->len;
	if (image && *image && !seen_image(rel, nseen, image) && related_add(rel, "", image))
		return oom(err);
	rc = deployment_images(spec, &imgs, ce->file, b->name, err);
	if (rc == 0) {
		/* Go ranges over a map: order is irrelevant, they are sorted below */
		for (size_t i = 0; i < imgs.len; i++) {
			const char *im = FBC_VEC_AT(&imgs, brelated, i)->image;
			if (seen_image(rel, nseen, im))
				continue;
			if (related_add(rel, "", im)) {
				rc = oom(err);
				break;
			}
			/* added to seen: move it into the seen prefix */
			if (rel->len - 1 != nseen) {
				brelated t = *FBC_VEC_AT(rel, brelated, rel->len - 1);
				memmove(FBC_VEC_AT(rel, brelated, nseen + 1),
					FBC_VEC_AT(rel, brelated, nseen),
					(rel->len - 1 - nseen) * sizeof(brelated));
				*FBC_VEC_AT(rel, brelated, nseen) = t;
			}
			nseen++;
		}
	}
	fbc_bundle_related_dispose(&imgs);
	return rc;
}

/* sort.Slice by image: insertion sort (exact for <= 12 entries, where Go
 * uses insertion sort too; for more, Go's pdqsort may order equal images
 * differently: a stable order matched every real case, bundles.md §3.6). */
static void sort_related(fbc_vec *rel)
{
	brelated *v = rel->items;
	for (size_t i = 1; i < rel->len; i++)
		for (size_t j = i; j > 0 && strcmp(v[j - 1].image, v[j].image) > 0; j--) {
			brelated t = v[j];
			v[j] = v[j - 1];
			v[j - 1] = t;
		}
}

/* ---- the assembly ---- */

int fbc_bundle_assemble(const fbc_bundle_dir *b, const char *image, fbc_vec *props,
			fbc_vec *related, bool skip_objects, const char **rule, fbc_error *err)
{
	const char *r = NULL;
	const char *pstage = "B14";
	apiset provided = {0}, owned_prov = {0}, req = {0}, prov_set = {0};
	fbc_vec parsed, derived, others;
	rawprop *p1 = NULL;
	size_t np1 = 0;
	pkgreq *preq = NULL;
	size_t npreq = 0;
	char *ver = NULL, *rel = NULL, *pk[3] = {NULL, NULL, NULL};
	const bentry *ce = NULL;
	json_t *spec = NULL;
	fbc_buf tmp;
	char why[FBC_ERROR_MESSAGE_MAX];
	char pre[FBC_ERROR_MESSAGE_MAX];
	const char *pkg = fbc_bundle_package(b);
	int which = 0, rc = 0;
	bool have_pkg = false;

	fbc_vec_init(&parsed, sizeof(bprop));
	fbc_vec_init(&derived, sizeof(bprop));
	fbc_vec_init(&others, sizeof(bprop));
	fbc_buf_init(&tmp, 0);

	/* S1: addManifests */
	if (b->nobjects == 0) {
		r = "B2";
		rc = fbc_error_set(err, FBC_EINVAL, "manifests", "no bundle objects found");
		goto done;
	}
	if (b->csv != SIZE_MAX) {
		ce = entry(b, b->csv);
		r = "B4";
		TRY(check_csv_meta(ce, err));
	}
	for (size_t i = 0; i < b->nobjects; i++) {
		const bentry *e = entry(b, b->objects[i]);
		int k = crd_kind(e->doc);
		r = "B5";
		if (k)
			TRY(check_crd(e, k, err));
	}
	if (ce == NULL) {
		r = "B3";
		rc = fbc_error_set(err, FBC_EINVAL, "manifests", "no csv in bundle");
		goto done;
	}
	spec = fbc_bundle_fold_get(ce->doc, "spec");
	snprintf(pre, sizeof(pre), "error checking provided apis in bundle %s: ", b->name);
	if (!json_is_object(spec)) {
		r = "B6";
		rc = fbc_error_set(
			err, FBC_EINVAL, ce->file,
			"%serror getting apiservice definitions: error unmarshaling into "
			"object map: %s",
			pre,
			spec == NULL ? "unexpected end of JSON input"
				     : "json: cannot unmarshal non-object into Go value "
				       "of type map[string]*json.RawMessage");
		goto done;
	}
	{
		const json_t *bad = bad_defs(json_object_get(spec, "apiservicedefinitions"));
		if (bad) {
			r = "B7";
			rc = fbc_error_set(err, FBC_EINVAL, ce->file,
					   "%serror getting apiservice definitions: json: cannot "
					   "unmarshal %s into Go value of type "
					   "registry.APIServiceDefinitions",
					   pre, fbc_gt_json_kind(bad));
			goto done;
		}
		bad = bad_defs(json_object_get(spec, "customresourcedefinitions"));
		if (bad) {
			r = "B8";
			rc = fbc_error_set(err, FBC_EINVAL, ce->file,
					   "%sjson: cannot unmarshal %s into Go value of type "
					   "registry.CustomResourceDefinitions",
					   pre, fbc_gt_json_kind(bad));
			goto done;
		}
	}
	if ((rc = crd_apis(b, &provided)))
		goto nomem;
	{
		json_t *asd = json_object_get(spec, "apiservicedefinitions");
		json_t *owned = defs_list(asd, "owned");
		for (size_t i = 0; i < json_array_size(owned); i++) {
			json_t *d = json_array_get(owned, i);
			api a = {sval(fbc_bundle_fold_get(d, "group")),
				 sval(fbc_bundle_fold_get(d, "version")),
				 sval(fbc_bundle_fold_get(d, "kind")),
				 sval(fbc_bundle_fold_get(d, "name"))};
			if ((rc = apiset_add(&owned_prov, a, true)) ||
			    (rc = apiset_add(&provided, a, true)))
				goto nomem;
		}
	}
	{
		json_t *owned =
			defs_list(json_object_get(spec, "customresourcedefinitions"), "owned");
		for (size_t i = 0; i < json_array_size(owned); i++) {
			const char *name =
				sval(fbc_bundle_fold_get(json_array_get(owned, i), "name"));
			if (strchr(name, '.') == NULL) {
				r = "B9";
				rc = fbc_error_set(
					err, FBC_EINVAL, ce->file,
					"%scouldn't parse plural.group from crd name: %s", pre,
					name);
				goto done;
			}
		}
		for (size_t i = 0; i < json_array_size(owned); i++) {
			json_t *d = json_array_get(owned, i);
			const char *name = sval(fbc_bundle_fold_get(d, "name"));
			const char *dot = strchr(name, '.');
			char *plural = strndup(name, (size_t)(dot - name));
			api a = {dot + 1, sval(fbc_bundle_fold_get(d, "version")),
				 sval(fbc_bundle_fold_get(d, "kind")), plural};
			bool found = false;
			if (plural == NULL)
				goto nomem;
			for (size_t k = 0; k < provided.n && !found; k++)
				found = api_cmp(&provided.v[k], &a, true) == 0;
			if (!found) {
				r = "B10";
				fbc_buf_reset(&tmp);
				if (map_string(&tmp, &provided)) {
					free(plural);
					goto nomem;
				}
				rc = fbc_error_set(
					err, FBC_EINVAL, ce->file,
					"%scouldn't find %s/%s/%s (%s) in bundle. found: %s", pre,
					a.group, a.version, a.kind, a.plural, tmp.data);
				free(plural);
				goto done;
			}
			free(plural);
		}
	}
	/* S2: addMetadata */
	if (b->ann_file == SIZE_MAX) {
		r = "B11";
		rc = fbc_error_set(err, FBC_EINVAL, "metadata", "Could not find annotations file");
		goto done;
	}
	/* S3: derivedProperties */
	if ((rc = csv_version(spec, &ver, &rel, &which)))
		goto nomem;
	if (which && *pkg) {
		r = which == 12 ? "B12" : "B13";
		rc = fbc_error_set(
			err, FBC_EINVAL, ce->file,
			which == 12 ? "failed to derive properties: json: cannot unmarshal "
				      "%s into Go value of type string"
				    : "failed to derive properties: release field must be "
				      "a string or number%s",
			which == 12 ? fbc_gt_json_kind(json_object_get(spec, "version")) : "");
		goto done;
	}
	if (*pkg) {
		TRY(package_value(&tmp, pkg, ver ? ver : "", rel));
		TRY(prop_add(&derived, "olm.package", tmp.data, tmp.len));
	}
	if ((rc = annotation_props(ce->doc, &p1, &np1)))
		goto nomem;
	for (size_t i = 0; i < np1; i++)
		TRY(add_unique(&derived, p1[i].type, p1[i].value, p1[i].len));
	for (size_t i = 0; i < provided.n; i++) {
		TRY(gvk_value(&tmp, provided.v[i].group, provided.v[i].kind,
			      provided.v[i].version));
		TRY(add_unique(&derived, "olm.gvk", tmp.data, tmp.len));
	}
	for (size_t i = 0; i < b->nprops; i++)
		TRY(add_unique(&parsed, b->props[i].type, b->props[i].value, b->props[i].len));
	for (size_t i = 0; i < derived.len; i++) {
		bprop *d = FBC_VEC_AT(&derived, bprop, i);
		TRY(add_unique(&parsed, d->type, d->value, d->len));
	}
	snprintf(pre, sizeof(pre), "get properties for bundle \"%s\": ", b->name);
	/* P4 */
	pstage = "B14";
	for (size_t i = 0; i < parsed.len; i++) {
		bprop *p = FBC_VEC_AT(&parsed, bprop, i);
		if (strcmp(p->type, "olm.gvk") == 0) {
			static const char *const f[] = {"group", "kind", "version"};
			char *g[3];
			rc = decode_struct(p->value, p->len, f, 3, g, why, sizeof(why));
			if (rc == FBC_ENOMEM)
				goto nomem;
			if (rc) {
				r = pstage;
				rc = fbc_error_set(err, FBC_EINVAL, "metadata",
						   "%sparse property[%zu] of type \"olm.gvk\": %s",
						   pre, i, why);
				goto done;
			}
			api a = {g[0], g[2], g[1], ""};
			bool dup = false;
			for (size_t k = 0; k < prov_set.n && !dup; k++)
				dup = api_cmp(&prov_set.v[k], &a, false) == 0;
			if (dup || apiset_add(&prov_set, a, false)) {
				free(g[0]);
				free(g[1]);
				free(g[2]);
				if (!dup)
					goto nomem;
			}
		} else if (strcmp(p->type, "olm.package") == 0) {
			static const char *const f[] = {"packageName", "version", "release"};
			char *g[3];
			rc = decode_struct(p->value, p->len, f, 3, g, why, sizeof(why));
			if (rc == FBC_ENOMEM)
				goto nomem;
			if (rc) {
				r = pstage;
				rc = fbc_error_set(
					err, FBC_EINVAL, "metadata",
					"%sparse property[%zu] of type \"olm.package\": %s", pre, i,
					why);
				goto done;
			}
			for (int k = 0; k < 3; k++) {
				free(pk[k]);
				pk[k] = g[k];
			}
			have_pkg = true;
		} else {
			TRY(prop_add(&others, p->type, p->value, p->len));
		}
	}
	/* P5 */
	pstage = "B15";
	for (size_t i = 0; i < b->ndeps; i++) {
		rawprop *d = &b->deps[i];
		if (strcmp(d->type, "olm.gvk") == 0) {
			static const char *const f[] = {"group", "kind", "version"};
			char *g[3];
			rc = decode_struct(d->value, d->len, f, 3, g, why, sizeof(why));
			if (rc == FBC_ENOMEM)
				goto nomem;
			if (rc) {
				r = pstage;
				rc = fbc_error_set(err, FBC_EINVAL, "metadata",
						   "%sparse property[%zu] of type \"olm.gvk\": %s",
						   pre, i, why);
				goto done;
			}
			api a = {g[0], g[2], g[1], ""};
			bool dup = false;
			for (size_t k = 0; k < req.n && !dup; k++)
				dup = api_cmp(&req.v[k], &a, false) == 0;
			if (dup || apiset_add(&req, a, false)) {
				free(g[0]);
				free(g[1]);
				free(g[2]);
				if (!dup)
					goto nomem;
			}
		} else if (strcmp(d->type, "olm.package") == 0) {
			static const char *const f[] = {"packageName", "version"};
			char *g[2];
			pkgreq *np;
			rc = decode_struct(d->value, d->len, f, 2, g, why, sizeof(why));
			if (rc == FBC_ENOMEM)
				goto nomem;
			if (rc) {
				r = pstage;
				rc = fbc_error_set(
					err, FBC_EINVAL, "metadata",
					"%sparse property[%zu] of type \"olm.package\": %s", pre, i,
					why);
				goto done;
			}
			np = realloc(preq, (npreq + 1) * sizeof(*preq));
			if (np == NULL) {
				free(g[0]);
				free(g[1]);
				goto nomem;
			}
			preq = np;
			preq[npreq].name = g[0];
			preq[npreq].range = g[1];
			npreq++;
		} else {
			TRY(prop_add(&others, d->type, d->value, d->len));
		}
	}
	if (which) {
		r = which == 12 ? "B12" : "B13";
		rc = fbc_error_set(
			err, FBC_EINVAL, ce->file,
			which == 12 ? "get properties for bundle \"%s\": get version: json: "
				      "cannot unmarshal non-string into Go value of type string"
				    : "get properties for bundle \"%s\": get release: release "
				      "field must be a string or number",
			b->name);
		goto done;
	}
	/* P6: provided APIs (the plural dropped) and required CRDs/API services */
	for (size_t i = 0; i < provided.n; i++) {
		api a = {strdup(provided.v[i].group), strdup(provided.v[i].version),
			 strdup(provided.v[i].kind), ""};
		bool dup = false;
		for (size_t k = 0; k < prov_set.n && !dup; k++)
			dup = api_cmp(&prov_set.v[k], &a, false) == 0;
		if (dup || !a.group || !a.version || !a.kind || apiset_add(&prov_set, a, false)) {
			free((char *)a.group);
			free((char *)a.version);
			free((char *)a.kind);
			if (!dup)
				goto nomem;
		}
	}
	{
		json_t *rq =
			defs_list(json_object_get(spec, "customresourcedefinitions"), "required");
		for (size_t i = 0; i < json_array_size(rq); i++) {
			json_t *d = json_array_get(rq, i);
			const char *name = sval(fbc_bundle_fold_get(d, "name"));
			const char *dot = strchr(name, '.');
			if (dot == NULL) {
				r = "B16";
				rc = fbc_error_set(
					err, FBC_EINVAL, ce->file,
					"%sget required apis: couldn't parse plural.group "
					"from crd name: %s",
					pre, name);
				goto done;
			}
			api a = {strdup(dot + 1), strdup(sval(fbc_bundle_fold_get(d, "version"))),
				 strdup(sval(fbc_bundle_fold_get(d, "kind"))), ""};
			bool dup = false;
			for (size_t k = 0; k < req.n && !dup; k++)
				dup = api_cmp(&req.v[k], &a, false) == 0;
			if (dup || !a.group || !a.version || !a.kind ||
			    apiset_add(&req, a, false)) {
				free((char *)a.group);
				free((char *)a.version);
				free((char *)a.kind);
				if (!dup)
					goto nomem;
			}
		}
		rq = defs_list(json_object_get(spec, "apiservicedefinitions"), "required");
		for (size_t i = 0; i < json_array_size(rq); i++) {
			json_t *d = json_array_get(rq, i);
			api a = {strdup(sval(fbc_bundle_fold_get(d, "group"))),
				 strdup(sval(fbc_bundle_fold_get(d, "version"))),
				 strdup(sval(fbc_bundle_fold_get(d, "kind"))), ""};
			bool dup = false;
			for (size_t k = 0; k < req.n && !dup; k++)
				dup = api_cmp(&req.v[k], &a, false) == 0;
			if (dup || !a.group || !a.version || !a.kind ||
			    apiset_add(&req, a, false)) {
				free((char *)a.group);
				free((char *)a.version);
				free((char *)a.kind);
				if (!dup)
					goto nomem;
			}
		}
	}
	/* S6: related images (B17) */
	{
		fbc_vec scratch;
		fbc_vec *rv = related ? related : &scratch;
		fbc_vec_init(&scratch, sizeof(brelated));
		r = "B17";
		rc = related_images(b, image, rv, err);
		fbc_bundle_related_dispose(&scratch);
		if (rc)
			goto done;
		if (related)
			sort_related(related);
	}
	if (props == NULL)
		goto done;
	/* P7 (bundle objects are left out when the caller replaces them by
	 * olm.csv.metadata anyway: they would be built only to be dropped) */
	for (size_t i = 0; i < b->nobjects && !skip_objects; i++) {
		const bentry *e = entry(b, b->objects[i]);
		fbc_buf js;
		fbc_buf_init(&js, 0);
		fbc_buf_reset(&tmp);
		rc = fbc_gojson_value(&js, e->doc, true);
		if (rc == 0)
			rc = fbc_buf_puts(&tmp, "{\"data\":\"");
		if (rc == 0)
			rc = fbc_gojson_base64(&tmp, js.data, js.len);
		if (rc == 0)
			rc = fbc_buf_puts(&tmp, "\"}");
		fbc_buf_dispose(&js);
		if (rc)
			goto nomem;
		TRY(prop_add(props, "olm.bundle.object", tmp.data, tmp.len));
	}
	if (have_pkg)
		TRY(package_value(&tmp, pk[0], pk[1], pk[2]));
	else
		TRY(package_value(&tmp, pkg, ver ? ver : "", rel));
	TRY(prop_add(props, "olm.package", tmp.data, tmp.len));
	for (size_t i = 0; i < prov_set.n; i++) {
		TRY(gvk_value(&tmp, prov_set.v[i].group, prov_set.v[i].kind,
			      prov_set.v[i].version));
		TRY(prop_add(props, "olm.gvk", tmp.data, tmp.len));
	}
	for (size_t i = 0; i < req.n; i++) {
		TRY(gvk_value(&tmp, req.v[i].group, req.v[i].kind, req.v[i].version));
		TRY(prop_add(props, "olm.gvk.required", tmp.data, tmp.len));
	}
	for (size_t i = 0; i < npreq; i++) {
		fbc_buf_reset(&tmp);
		if (fbc_buf_puts(&tmp, "{\"packageName\":") ||
		    fbc_gojson_string(&tmp, preq[i].name, strlen(preq[i].name), false) ||
		    fbc_buf_puts(&tmp, ",\"versionRange\":") ||
		    fbc_gojson_string(&tmp, preq[i].range, strlen(preq[i].range), false) ||
		    fbc_buf_putc(&tmp, '}'))
			goto nomem;
		TRY(prop_add(props, "olm.package.required", tmp.data, tmp.len));
	}
	for (size_t i = 0; i < others.len; i++) {
		bprop *o = FBC_VEC_AT(&others, bprop, i);
		TRY(prop_add(props, o->type, o->value, o->len));
	}
	/* P8, P9 */
	qsort(props->items, props->len, sizeof(bprop), cmp_prop);
	{
		bprop *v = props->items;
		size_t n = props->len, k = 0;
		bprop *t = malloc((n + 1) * sizeof(*t));
		if (t == NULL)
			goto nomem;
		for (size_t i = 0; i < n; i++)
			if (!is_moved(v[i].type))
				t[k++] = v[i];
		for (size_t i = 0; i < n; i++)
			if (is_moved(v[i].type))
				t[k++] = v[i];
		memcpy(v, t, n * sizeof(*t));
		free(t);
	}
	rc = 0;
	goto done;
nomem:
	rc = oom(err);
done:
	if (rc == FBC_ENOMEM && err->code != FBC_ENOMEM)
		oom(err);
	if (rule)
		*rule = rc == FBC_EINVAL ? r : NULL;
	free(provided.v);
	free(owned_prov.v);
	for (size_t i = 0; i < prov_set.n; i++) {
		free((char *)prov_set.v[i].group);
		free((char *)prov_set.v[i].version);
		free((char *)prov_set.v[i].kind);
	}
	free(prov_set.v);
	for (size_t i = 0; i < req.n; i++) {
		free((char *)req.v[i].group);
		free((char *)req.v[i].version);
		free((char *)req.v[i].kind);
	}
	free(req.v);
	for (size_t i = 0; i < npreq; i++) {
		free(preq[i].name);
		free(preq[i].range);
	}
	free(preq);
	fbc_bundle_rawprops_free(p1, np1);
	fbc_bundle_props_dispose(&parsed);
	fbc_bundle_props_dispose(&derived);
	fbc_bundle_props_dispose(&others);
	for (int k = 0; k < 3; k++)
		free(pk[k]);
	free(ver);
	free(rel);
	fbc_buf_dispose(&tmp);
	return rc;
}

int fbc_bundle_migrate_parse(fbc_bundle_migrate *out, const char *level, fbc_error *err)
{
	if (level == NULL || strcmp(level, "none") == 0 || *level == 0) {
		*out = FBC_BUNDLE_MIGRATE_NONE;
		return 0;
	}
	if (strcmp(level, "bundle-object-to-csv-metadata") == 0) {
		*out = FBC_BUNDLE_MIGRATE_CSV_METADATA;
		return 0;
	}
	return fbc_error_set(err, FBC_EINVAL, "--migrate-level", "unknown migration level \"%s\"",
			     level);
}

static int write_blob(fbc_buf *out, const fbc_bundle_dir *b, const char *image,
		      const fbc_vec *props, const fbc_vec *related)
{
	int rc;
	const char *pkg = fbc_bundle_package(b);

	if ((rc = fbc_buf_puts(out, "{\"schema\":\"olm.bundle\"")))
		return rc;
	if (*b->name && ((rc = fbc_buf_puts(out, ",\"name\":")) ||
			 (rc = fbc_gojson_string(out, b->name, strlen(b->name), false))))
		return rc;
	if ((rc = fbc_buf_puts(out, ",\"package\":")) ||
	    (rc = fbc_gojson_string(out, pkg, strlen(pkg), false)) ||
	    (rc = fbc_buf_puts(out, ",\"image\":")) ||
	    (rc = fbc_gojson_string(out, image, strlen(image), false)))
		return rc;
	if (props->len) {
		if ((rc = fbc_buf_puts(out, ",\"properties\":[")))
			return rc;
		for (size_t i = 0; i < props->len; i++) {
			const bprop *p = FBC_VEC_AT(props, bprop, i);
			if ((i && (rc = fbc_buf_putc(out, ','))) ||
			    (rc = fbc_buf_puts(out, "{\"type\":")) ||
			    (rc = fbc_gojson_string(out, p->type, strlen(p->type), false)) ||
			    (rc = fbc_buf_puts(out, ",\"value\":")) ||
			    (rc = p->compact ? fbc_buf_append(out, p->value, p->len)
					     : fbc_gojson_compact(out, p->value, p->len, false)) ||
			    (rc = fbc_buf_putc(out, '}')))
				return rc;
		}
		if ((rc = fbc_buf_putc(out, ']')))
			return rc;
	}
	if (related->len) {
		if ((rc = fbc_buf_puts(out, ",\"relatedImages\":[")))
			return rc;
		for (size_t i = 0; i < related->len; i++) {
			const brelated *r = FBC_VEC_AT(related, brelated, i);
			if ((i && (rc = fbc_buf_putc(out, ','))) ||
			    (rc = fbc_buf_puts(out, "{\"name\":")) ||
			    (rc = fbc_gojson_string(out, r->name, strlen(r->name), false)) ||
			    (rc = fbc_buf_puts(out, ",\"image\":")) ||
			    (rc = fbc_gojson_string(out, r->image, strlen(r->image), false)) ||
			    (rc = fbc_buf_putc(out, '}')))
				return rc;
		}
		if ((rc = fbc_buf_putc(out, ']')))
			return rc;
	}
	return fbc_buf_putc(out, '}');
}

int fbc_bundle_render(fbc_buf *out, bool *written, const fbc_bundle_dir *b, const char *image,
		      fbc_bundle_migrate migrate, fbc_error *err)
{
	fbc_vec props, related;
	fbc_buf meta;
	bool migrating;
	int rc;

	if (image == NULL)
		image = "";
	if (written)
		*written = false;
	fbc_vec_init(&props, sizeof(bprop));
	fbc_vec_init(&related, sizeof(brelated));
	fbc_buf_init(&meta, 0);
	/* Bundle objects can be skipped when the migration will drop them: it
	 * runs unless a property already is olm.csv.metadata (§4.1 step 3),
	 * which only the properties file or the olm.properties annotation can
	 * supply; then the render is done again in full. */
	migrating = migrate == FBC_BUNDLE_MIGRATE_CSV_METADATA && *image && b->csv != SIZE_MAX;
	if ((rc = fbc_bundle_assemble(b, image, &props, &related, migrating, NULL, err)))
		goto done;
	if (migrating) {
		bool has_meta = false;
		for (size_t i = 0; i < props.len; i++)
			has_meta |=
				strcmp(FBC_VEC_AT(&props, bprop, i)->type, "olm.csv.metadata") == 0;
		if (has_meta) {
			fbc_bundle_props_dispose(&props);
			fbc_bundle_related_dispose(&related);
			fbc_vec_init(&props, sizeof(bprop));
			fbc_vec_init(&related, sizeof(brelated));
			if ((rc = fbc_bundle_assemble(b, image, &props, &related, false, NULL,
						      err)))
				goto done;
		}
		if ((rc = fbc_bundle_csv_metadata(&meta, fbc_bundle_csv(b), err))) {
			fbc_error_prefix(err, "migrate");
			goto done;
		}
		if (!has_meta) {
			size_t k = 0;
			for (size_t i = 0; i < props.len; i++) {
				bprop *p = FBC_VEC_AT(&props, bprop, i);
				if (strcmp(p->type, "olm.bundle.object") == 0) {
					free(p->type);
					free(p->value);
					continue;
				}
				*FBC_VEC_AT(&props, bprop, k++) = *p;
			}
			props.len = k;
			if ((rc = prop_add(&props, "olm.csv.metadata", meta.data, meta.len))) {
				oom(err);
				goto done;
			}
		}
	}
	if (*fbc_bundle_package(b) == 0)
		goto done; /* N3: opm writes nothing */
	if ((rc = write_blob(out, b, image, &props, &related))) {
		fbc_error_set(err, rc, NULL, "rendering the bundle: %s",
			      rc == FBC_ELIMIT ? "output exceeds the buffer limit"
					       : "out of memory");
		goto done;
	}
	if (written)
		*written = true;
done:
	fbc_bundle_props_dispose(&props);
	fbc_bundle_related_dispose(&related);
	fbc_buf_dispose(&meta);
	return rc;
}

int fbc_bundle_render_json(fbc_buf *out, bool *written, const fbc_bundle_dir *b, const char *image,
			   fbc_bundle_migrate migrate, fbc_error *err)
{
	fbc_buf c;
	bool w = false;
	int rc;

	fbc_buf_init(&c, 0);
	rc = fbc_bundle_render(&c, &w, b, image, migrate, err);
	if (rc == 0 && w) {
		rc = fbc_gojson_indent(out, c.data, c.len, "    ");
		if (rc == 0)
			rc = fbc_buf_putc(out, '\n');
		if (rc)
			fbc_error_set(err, rc, NULL, "rendering the bundle: out of memory");
	}
	if (written)
		*written = w;
	fbc_buf_dispose(&c);
	return rc;
}
