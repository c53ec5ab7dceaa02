/*
 * fbc_bundle_validate: every rule of bundles.md §6 that applies to a bundle
 * directory, each finding with its rule id, file and line; all findings,
 * not only the first. B: what fails `opm render` (the first one in opm's
 * order, plus every further B5/B10 case); VF/VC: `opm alpha bundle
 * validate`; N4/N5: accepted by render, rejected by FBC validation later;
 * FB1-FB3: what opm tolerates silently but a reviewer must see (bundles.md
 * §9.8); W*: tolerated, reported as warnings.
 */
#include "service/bundle/internal.h"
#include "service/cel/cel.h"
#include "service/semver/semver.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct vctx {
	const fbc_bundle_dir *b;
	fbc_diags *d;
	const char *pkg; /* NULL when empty */
	const char *name;
	int rc;
} vctx;

static void add(vctx *c, const char *code, const char *file, int line, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
static void add(vctx *c, const char *code, const char *file, int line, const char *fmt, ...)
{
	va_list ap;
	fbc_loc loc = {file, line};

	if (c->rc)
		return;
	va_start(ap, fmt);
	c->rc = fbc_diags_vadd(c->d, code, &loc, c->pkg, NULL, c->name, fmt, ap);
	va_end(ap);
}

bool fbc_bundle_code_is_error(const char *code)
{
	/* W rules and the N rules nobody rejects (N6 CRD not owned, N8
	 * duplicate or empty related images) are warnings */
	return code == NULL ||
	       !(code[0] == 'W' || strcmp(code, "N6") == 0 || strcmp(code, "N8") == 0);
}

static const bentry *ment(const fbc_bundle_dir *b, size_t i)
{
	return FBC_VEC_AT(&b->manifests, bentry, i);
}

static const bentry *mdent(const fbc_bundle_dir *b, size_t i)
{
	return FBC_VEC_AT(&b->metadata, bentry, i);
}

/* line of a field: path segments, NULL-terminated */
static int line_at(const bentry *e, ...)
{
	const char *path[16];
	size_t n = 0;
	va_list ap;

	if (e == NULL || e->text == NULL)
		return 0;
	va_start(ap, e);
	while (n < 16 && (path[n] = va_arg(ap, const char *)) != NULL)
		n++;
	va_end(ap);
	return fbc_bundle_line_of(e->text, e->len, path, n);
}

static const char *sval(const json_t *v)
{
	return json_is_string(v) ? json_string_value(v) : "";
}

/* ---- W2: a second document or JSON value ---- */
static int second_doc_line(const bentry *e)
{
	const char *s = e->text;
	size_t n = e->len, i = 0;
	int line = 1;
	bool content = false, in_second = false;
	int sep_line = 0;

	if (s == NULL || e->doc == NULL)
		return 0;
	if (e->is_json) {
		size_t z = fbc_bundle_json_skip(s, n, 0, NULL);
		if (z == SIZE_MAX)
			return 0;
		for (size_t k = 0; k < z; k++)
			line += s[k] == '\n';
		for (; z < n; z++) {
			if (s[z] == '\n')
				line++;
			else if (s[z] != ' ' && s[z] != '\t' && s[z] != '\r')
				return line;
		}
		return 0;
	}
	while (i < n) {
		const char *nl = memchr(s + i, '\n', n - i);
		size_t e2 = nl ? (size_t)(nl - s) : n, a = i;
		bool sep = e2 - i >= 3 && memcmp(s + i, "---", 3) == 0;

		while (a < e2 && (s[a] == ' ' || s[a] == '\t' || s[a] == '\r'))
			a++;
		if (sep) {
			if (content && !in_second) {
				in_second = true;
				sep_line = line;
			}
			if (in_second && e2 > i + 3) {
				size_t k = i + 3;
				while (k < e2 && (s[k] == ' ' || s[k] == '\t' || s[k] == '\r'))
					k++;
				if (k < e2 && s[k] != '#')
					return sep_line;
			}
		} else if (a < e2 && s[a] != '#') {
			if (in_second)
				return sep_line;
			content = true;
		}
		line++;
		i = nl ? e2 + 1 : n;
	}
	return 0;
}

/* ---- names (Kubernetes validation) ---- */
static bool is_alnum_lower(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

static bool dns1123_subdomain(const char *s)
{
	size_t n = strlen(s);
	if (n == 0 || n > 253)
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if (is_alnum_lower(c))
			continue;
		if ((c == '-' || c == '.') && i > 0 && i + 1 < n &&
		    (c != '.' || (is_alnum_lower(s[i - 1]) && is_alnum_lower(s[i + 1]))))
			continue;
		return false;
	}
	return true;
}

static bool label_value(const char *s)
{
	size_t n = strlen(s);
	if (n == 0)
		return true;
	if (n > 63)
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		bool an =
			(c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
		if (an)
			continue;
		if ((c == '-' || c == '_' || c == '.') && i > 0 && i + 1 < n)
			continue;
		return false;
	}
	return true;
}

static const char *const supported_kinds[] = {"ClusterServiceVersion",
					      "CustomResourceDefinition",
					      "ClusterRole",
					      "ClusterRoleBinding",
					      "ConfigMap",
					      "ConsoleCLIDownload",
					      "ConsoleLink",
					      "ConsolePlugin",
					      "ConsoleQuickStart",
					      "ConsoleYAMLSample",
					      "NetworkPolicy",
					      "PodDisruptionBudget",
					      "PodMonitor",
					      "PriorityClass",
					      "PrometheusRule",
					      "Role",
					      "RoleBinding",
					      "Secret",
					      "Service",
					      "ServiceAccount",
					      "ServiceMonitor",
					      "VerticalPodAutoscaler"};

static bool supported_kind(const char *k)
{
	for (size_t i = 0; i < sizeof(supported_kinds) / sizeof(supported_kinds[0]); i++)
		if (strcmp(k, supported_kinds[i]) == 0)
			return true;
	return false;
}

static const char *version_part(const char *av)
{
	const char *s = strrchr(av, '/');
	return s ? s + 1 : av;
}

/* ---- manifests/ entries ---- */
static void check_entries(vctx *c, const char *mediatype)
{
	const fbc_bundle_dir *b = c->b;
	size_t regular = 0;

	for (size_t i = 0; i < b->manifests.len; i++) {
		const bentry *e = ment(b, i);
		int l2;

		if (e->is_dir) {
			add(c, "VC1", e->file, 0,
			    "%s is a sub-directory: opm alpha bundle validate cannot read it (opm "
			    "render ignores it, W4)",
			    e->file);
			continue;
		}
		if (e->unreadable) {
			add(c, "VC1", e->file, 0, "Unable to read file %s in bundle: %s", e->file,
			    e->why ? e->why : "");
			continue;
		}
		regular++;
		if (e->hidden)
			add(c, "W4", e->file, 0, "hidden file %s is ignored by opm render",
			    e->file);
		if (e->kind == NULL) {
			if (e->hidden)
				add(c, "VC1", e->file, e->why_line, "%s", e->why ? e->why : "");
			else
				add(c, "FB3", e->file, e->why_line,
				    "%s does not decode and opm render skips it silently (W1): %s",
				    e->file, e->why ? e->why : "not an object with a kind");
			continue;
		}
		if ((l2 = second_doc_line(e)) > 0)
			add(c, "W2", e->file, l2,
			    "found more than one document inside %s, using only the first one",
			    e->file);
		if (strcmp(mediatype, "registry+v1") == 0 && !supported_kind(e->kind))
			add(c, "VC2", e->file, line_at(e, "kind", NULL),
			    "%s is not supported type for registryV1 bundle: %s", e->kind, e->file);
		if (strcmp(e->kind, "CustomResourceDefinition") == 0) {
			const char *av = sval(json_object_get(e->doc, "apiVersion"));
			const char *vp = version_part(av);
			if (strcmp(vp, "v1") != 0 && strcmp(vp, "v1beta1") != 0)
				add(c, "W7", e->file, line_at(e, "apiVersion", NULL),
				    "CustomResourceDefinition with apiVersion %s provides no API "
				    "(only v1 and v1beta1 are read)",
				    av);
			if (strcmp(av, "apiextensions.k8s.io/v1") != 0 &&
			    strcmp(av, "apiextensions.k8s.io/v1beta1") != 0)
				add(c, "VC5", e->file, line_at(e, "apiVersion", NULL),
				    "Unsupported api version of CRD: %s", av);
		} else if (strcmp(e->kind, "ClusterServiceVersion") != 0) {
			json_t *meta = json_object_get(e->doc, "metadata");
			if (*sval(json_object_get(meta, "name")) == 0 &&
			    *sval(json_object_get(meta, "generateName")) == 0)
				add(c, "VC6", e->file, line_at(e, "metadata", NULL),
				    "error validating object metadata: metadata.name: Required "
				    "value: "
				    "name or generateName is required");
		}
	}
	if (regular == 0)
		add(c, "VF3", "manifests", 0, "The directory manifests contains no yaml files");
}

/* ---- the CSV ---- */
static bool gvk_owned(const json_t *spec, const char *group, const char *version, const char *kind)
{
	json_t *owned = fbc_bundle_fold_get(fbc_bundle_fold_get(spec, "customresourcedefinitions"),
					    "owned");
	json_t *aso =
		fbc_bundle_fold_get(fbc_bundle_fold_get(spec, "apiservicedefinitions"), "owned");
	for (size_t i = 0; i < json_array_size(owned); i++) {
		json_t *d = json_array_get(owned, i);
		const char *n = sval(fbc_bundle_fold_get(d, "name")), *dot = strchr(n, '.');
		if (dot && strcmp(dot + 1, group) == 0 &&
		    strcmp(sval(fbc_bundle_fold_get(d, "version")), version) == 0 &&
		    strcmp(sval(fbc_bundle_fold_get(d, "kind")), kind) == 0)
			return true;
	}
	for (size_t i = 0; i < json_array_size(aso); i++) {
		json_t *d = json_array_get(aso, i);
		if (strcmp(sval(fbc_bundle_fold_get(d, "group")), group) == 0 &&
		    strcmp(sval(fbc_bundle_fold_get(d, "version")), version) == 0 &&
		    strcmp(sval(fbc_bundle_fold_get(d, "kind")), kind) == 0)
			return true;
	}
	return false;
}

static void check_examples(vctx *c, const bentry *ce, const json_t *ann, const char *key,
			   const json_t *spec)
{
	json_t *v = json_object_get(ann, key), *ex;
	json_error_t je;
	size_t i;
	json_t *it;
	int line;

	if (!json_is_string(v) || json_string_length(v) == 0)
		return;
	line = line_at(ce, "metadata", "annotations", key, NULL);
	ex = json_loads(json_string_value(v), JSON_DECODE_ANY, &je);
	if (ex == NULL || !json_is_array(ex)) {
		add(c, "VC4", ce->file, line, "Error: Value %s: invalid example: %s", key,
		    ex ? "not a list" : je.text);
		json_decref(ex);
		return;
	}
	json_array_foreach(ex, i, it)
	{
		const char *av = sval(json_object_get(it, "apiVersion"));
		const char *kind = sval(json_object_get(it, "kind"));
		const char *slash = strrchr(av, '/');
		char group[256] = "";
		if (slash && (size_t)(slash - av) < sizeof(group))
			snprintf(group, sizeof(group), "%.*s", (int)(slash - av), av);
		if (!gvk_owned(spec, group, slash ? slash + 1 : av, kind))
			add(c, "VC4", ce->file, line,
			    "Error: Value %s, Kind=%s: example must have a provided API", av, kind);
	}
	json_decref(ex);
}

static void check_csv(vctx *c)
{
	const fbc_bundle_dir *b = c->b;
	const bentry *ce;
	json_t *meta, *spec, *ann, *v, *inst;
	const char *name;
	static const char *const wellknown[] = {"olm.skipRange", "olm.substitutesFor",
						"olm.properties", "olm.maxOpenShiftVersion",
						"operatorframework.io/suggested-namespace"};

	for (size_t i = 0; i < b->nextra_csv; i++) {
		const bentry *e = ment(b, b->extra_csv[i]);
		add(c, "FB1", e->file, line_at(e, "kind", NULL),
		    "a second ClusterServiceVersion (%s) in the bundle; opm render uses only the "
		    "first by file name (%s) and drops this one silently (W3)",
		    sval(fbc_bundle_fold_get(fbc_bundle_fold_get(e->doc, "metadata"), "name")),
		    ment(b, b->csv)->file);
	}
	if (b->csv == SIZE_MAX)
		return;
	ce = ment(b, b->csv);
	meta = fbc_bundle_fold_get(ce->doc, "metadata");
	spec = fbc_bundle_fold_get(ce->doc, "spec");
	ann = fbc_bundle_fold_get(meta, "annotations");
	name = b->name;
	if (*name == 0) {
		add(c, "N4", ce->file, line_at(ce, "metadata", NULL),
		    "the CSV has no metadata.name: the bundle is rendered without a name, which "
		    "FBC validation rejects (name must be set)");
	} else if (!dns1123_subdomain(name) || !label_value(name)) {
		add(c, "VC4", ce->file, line_at(ce, "metadata", "name", NULL),
		    "Error: Value : (%s) metadata.name \"%s\" is invalid: must be a DNS-1123 "
		    "subdomain and a valid label value",
		    name, name);
	}
	if (*b->replaces && (!dns1123_subdomain(b->replaces) || !label_value(b->replaces)))
		add(c, "VC4", ce->file, line_at(ce, "spec", "replaces", NULL),
		    "Error: Value : (%s) spec.replaces \"%s\" is invalid: must be a DNS-1123 "
		    "subdomain and a valid label value",
		    name, b->replaces);
	v = json_object_get(spec, "version");
	if (json_is_string(v)) {
		fbc_semver sv;
		fbc_error e2;
		fbc_error_init(&e2);
		if (fbc_semver_parse(&sv, json_string_value(v), json_string_length(v), &e2) != 0)
			add(c, "N5", ce->file, line_at(ce, "spec", "version", NULL),
			    "spec.version \"%s\" is copied verbatim into olm.package and is not "
			    "strict semver, which FBC validation rejects: %s",
			    json_string_value(v), e2.message);
	} else if (v == NULL || json_is_null(v)) {
		add(c, "N5", ce->file, line_at(ce, "spec", NULL),
		    "spec.version is missing: olm.package gets version \"\", which FBC validation "
		    "rejects");
	}
	/* VC4: required fields */
	if (*sval(fbc_bundle_fold_get(ce->doc, "apiVersion")) == 0)
		add(c, "VC4", ce->file, 1,
		    "Error: Field apiVersion, Value field: required field missing");
	if (!json_is_object(spec)) {
		add(c, "VC4", ce->file, 1,
		    "Error: Field spec, Value field: required field missing");
	} else {
		inst = fbc_bundle_fold_get(spec, "install");
		if (!json_is_object(inst))
			add(c, "VC4", ce->file, line_at(ce, "spec", NULL),
			    "Error: Field Spec.InstallStrategy, Value field: required field "
			    "missing");
		else if (*sval(fbc_bundle_fold_get(inst, "strategy")) == 0)
			add(c, "VC4", ce->file, line_at(ce, "spec", "install", NULL),
			    "Error: Field Spec.InstallStrategy.StrategyName, Value field: required "
			    "field missing");
		else if (!json_is_array(fbc_bundle_fold_get(fbc_bundle_fold_get(inst, "spec"),
							    "deployments")))
			add(c, "VC4", ce->file, line_at(ce, "spec", "install", NULL),
			    "Error: Field Spec.InstallStrategy.StrategySpec.DeploymentSpecs, Value "
			    "field: required field missing");
		if (*sval(fbc_bundle_fold_get(spec, "displayName")) == 0)
			add(c, "VC4", ce->file, line_at(ce, "spec", NULL),
			    "Error: Field Spec.DisplayName, Value field: required field missing");
		v = fbc_bundle_fold_get(spec, "installModes");
		{
			bool any = false;
			for (size_t i = 0; i < json_array_size(v); i++)
				any |= json_is_true(
					fbc_bundle_fold_get(json_array_get(v, i), "supported"));
			if (!any)
				add(c, "VC4", ce->file, line_at(ce, "spec", "installModes", NULL),
				    "Error: Value : (%s) %s", name,
				    json_array_size(v) == 0
					    ? "install modes not found"
					    : "none of InstallModeTypes are supported");
		}
		v = fbc_bundle_fold_get(spec, "minKubeVersion");
		if (json_is_string(v) && json_string_length(v) > 0) {
			fbc_semver sv;
			fbc_error e2;
			fbc_error_init(&e2);
			if (fbc_semver_parse(&sv, json_string_value(v), json_string_length(v), &e2))
				add(c, "VC4", ce->file, line_at(ce, "spec", "minKubeVersion", NULL),
				    "Error: Value : (%s) csv.Spec.MinKubeVersion has an invalid "
				    "value: "
				    "%s",
				    name, json_string_value(v));
		}
	}
	if (json_is_object(ann)) {
		const char *k;
		json_t *av;
		check_examples(c, ce, ann, "alm-examples", spec);
		check_examples(c, ce, ann, "olm.examples", spec);
		json_object_foreach(ann, k, av)
		{
			for (size_t i = 0; i < sizeof(wellknown) / sizeof(wellknown[0]); i++)
				if (strcasecmp(k, wellknown[i]) == 0 &&
				    strcmp(k, wellknown[i]) != 0)
					add(c, "VC4", ce->file,
					    line_at(ce, "metadata", "annotations", k, NULL),
					    "Error: Value : (%s) annotation key %s should be %s",
					    name, k, wellknown[i]);
		}
		v = json_object_get(ann, "olm.properties");
		if (json_is_string(v)) {
			json_t *j = json_loads(json_string_value(v), JSON_DECODE_ANY, NULL);
			if (j == NULL)
				add(c, "W6", ce->file,
				    line_at(ce, "metadata", "annotations", "olm.properties", NULL),
				    "the olm.properties annotation is not valid JSON: opm ignores "
				    "it");
			json_decref(j);
		}
		if (json_object_get(spec, "release") &&
		    !json_is_null(json_object_get(spec, "release")) &&
		    json_object_get(ann, "olm.substitutesFor"))
			add(c, "VC8", ce->file, line_at(ce, "spec", "release", NULL),
			    "%s cannot have both a release version (\"%s\") and olm.substitutesFor "
			    "annotation (\"%s\")",
			    name, sval(json_object_get(spec, "release")),
			    sval(json_object_get(ann, "olm.substitutesFor")));
	}
	/* VC3 / B19: the typed CSV */
	{
		fbc_buf tmp;
		fbc_error e2;
		fbc_buf_init(&tmp, 0);
		fbc_error_init(&e2);
		if (fbc_bundle_csv_metadata(&tmp, ce->doc, &e2) == FBC_EINVAL)
			add(c, "B19", ce->file, line_at(ce, "spec", NULL),
			    "migrate: %s (fails opm render --migrate-level "
			    "bundle-object-to-csv-metadata, used by catalogs v4.17 and later)",
			    e2.message);
		fbc_buf_dispose(&tmp);
	}
	/* N8: duplicate and empty related images */
	v = json_object_get(spec, "relatedImages");
	for (size_t i = 0; i < json_array_size(v); i++) {
		const char *im = sval(fbc_bundle_fold_get(json_array_get(v, i), "image"));
		int l = line_at(ce, "spec", "relatedImages", NULL);
		if (*im == 0) {
			add(c, "N8", ce->file, l, "spec.relatedImages[%zu] has an empty image", i);
			continue;
		}
		for (size_t k = 0; k < i; k++)
			if (strcmp(sval(fbc_bundle_fold_get(json_array_get(v, k), "image")), im) ==
			    0) {
				add(c, "N8", ce->file, l,
				    "spec.relatedImages lists %s twice (kept twice in the blob, "
				    "N8)",
				    im);
				break;
			}
	}
}

/* VC7 (owned CRDs among the CRD files), B10 for every owned CRD that is not
 * provided, B5 for every CRD that does not decode, N6 (CRD not owned). */
static void check_crds(vctx *c)
{
	const fbc_bundle_dir *b = c->b;
	const bentry *ce = b->csv != SIZE_MAX ? ment(b, b->csv) : NULL;
	json_t *spec = ce ? fbc_bundle_fold_get(ce->doc, "spec") : NULL;
	json_t *owned = fbc_bundle_fold_get(fbc_bundle_fold_get(spec, "customresourcedefinitions"),
					    "owned");
	fbc_error e2;

	for (size_t i = 0; i < b->nobjects; i++) {
		const bentry *e = ment(b, b->objects[i]);
		const char *nm;
		bool listed = false;
		if (strcmp(e->kind, "CustomResourceDefinition") != 0)
			continue;
		nm = sval(json_object_get(json_object_get(e->doc, "metadata"), "name"));
		for (size_t k = 0; k < json_array_size(owned); k++)
			listed |=
				strcmp(sval(fbc_bundle_fold_get(json_array_get(owned, k), "name")),
				       nm) == 0;
		if (ce && !listed)
			add(c, "N6", e->file, line_at(e, "metadata", "name", NULL),
			    "CRD %s is in the bundle but not owned by the CSV (it still gives "
			    "olm.gvk properties, N6)",
			    nm);
	}
	if (ce == NULL || !json_is_array(owned))
		return;
	for (size_t k = 0; k < json_array_size(owned); k++) {
		json_t *d = json_array_get(owned, k);
		const char *nm = sval(fbc_bundle_fold_get(d, "name"));
		const char *ver = sval(fbc_bundle_fold_get(d, "version"));
		const char *kind = sval(fbc_bundle_fold_get(d, "kind"));
		const char *dot = strchr(nm, '.');
		bool file_found = false, provided = false;
		int line = fbc_bundle_line_of(
			ce->text, ce->len,
			(const char *const[]){"spec", "customresourcedefinitions", "owned", NULL},
			3);
		char idx[32];
		snprintf(idx, sizeof(idx), "#%zu", k);
		line = fbc_bundle_line_of(
			ce->text, ce->len,
			(const char *const[]){"spec", "customresourcedefinitions", "owned", idx},
			4);
		for (size_t i = 0; i < b->nobjects; i++) {
			const bentry *e = ment(b, b->objects[i]);
			json_t *cs, *vers;
			if (strcmp(e->kind, "CustomResourceDefinition") != 0)
				continue;
			cs = json_object_get(e->doc, "spec");
			if (strcmp(sval(json_object_get(json_object_get(e->doc, "metadata"),
							"name")),
				   nm) != 0)
				continue;
			vers = json_object_get(cs, "versions");
			for (size_t v = 0; v < json_array_size(vers); v++) {
				const char *vn =
					sval(json_object_get(json_array_get(vers, v), "name"));
				if (strcmp(vn, ver) == 0 &&
				    strcmp(sval(json_object_get(json_object_get(cs, "names"),
								"kind")),
					   kind) == 0)
					file_found = true;
			}
			if (strcmp(sval(json_object_get(cs, "version")), ver) == 0 &&
			    strcmp(sval(json_object_get(json_object_get(cs, "names"), "kind")),
				   kind) == 0)
				file_found = true;
			/* B10 compares group, version, kind and plural with the CRD's */
			if (dot && strcmp(sval(json_object_get(cs, "group")), dot + 1) == 0 &&
			    strncmp(sval(json_object_get(json_object_get(cs, "names"), "plural")),
				    nm, (size_t)(dot - nm)) == 0 &&
			    strlen(sval(json_object_get(json_object_get(cs, "names"), "plural"))) ==
				    (size_t)(dot - nm) &&
			    file_found)
				provided = true;
		}
		if (!file_found)
			add(c, "VC7", ce->file, line,
			    "Error: Value {%s %s %s %s}: owned CRD %s/%s not found in bundle "
			    "\"%s\"",
			    dot ? dot + 1 : "", kind, nm, ver, nm, ver, b->name);
		if (dot && !provided) {
			bool api = false;
			json_t *aso = fbc_bundle_fold_get(
				fbc_bundle_fold_get(spec, "apiservicedefinitions"), "owned");
			for (size_t i = 0; i < json_array_size(aso); i++) {
				json_t *a = json_array_get(aso, i);
				api |= strcmp(sval(fbc_bundle_fold_get(a, "group")), dot + 1) ==
					       0 &&
				       strcmp(sval(fbc_bundle_fold_get(a, "version")), ver) == 0 &&
				       strcmp(sval(fbc_bundle_fold_get(a, "kind")), kind) == 0 &&
				       strcmp(sval(fbc_bundle_fold_get(a, "name")), nm) == 0;
			}
			if (!api)
				add(c, "B10", ce->file, line,
				    "error checking provided apis in bundle %s: couldn't find "
				    "%s/%s/%s (%.*s) in bundle",
				    b->name, dot + 1, ver, kind, (int)(dot - nm), nm);
		}
	}
	(void)e2;
}

/* ---- metadata/ ---- */
static void check_metadata(vctx *c)
{
	const fbc_bundle_dir *b = c->b;
	size_t vf4 = SIZE_MAX;
	const bentry *ae;
	json_t *ann;
	static const char *const keys[] = {"operators.operatorframework.io.bundle.mediatype.v1",
					   "operators.operatorframework.io.bundle.manifests.v1",
					   "operators.operatorframework.io.bundle.metadata.v1",
					   "operators.operatorframework.io.bundle.package.v1",
					   "operators.operatorframework.io.bundle.channels.v1"};
	const char *detected = "plain";

	for (size_t i = 0; i < b->metadata.len; i++) {
		const bentry *e = mdent(b, i);
		json_t *a;
		bool strings = true;
		const char *k;
		json_t *v;
		if (e->doc == NULL) {
			add(c, "W5", e->file, e->why_line, "%s does not decode and is ignored: %s",
			    e->file, e->why ? e->why : "");
			continue;
		}
		if (i != b->ann_file && i != b->dep_file && i != b->prop_file)
			add(c, "W5", e->file, 0,
			    "%s is ignored: it is not the first annotations, dependencies or "
			    "properties file",
			    e->file);
		a = fbc_bundle_fold_get(e->doc, "annotations");
		if (!json_is_object(a))
			continue;
		json_object_foreach(a, k, v) strings &= json_is_string(v);
		if (strings && vf4 == SIZE_MAX)
			vf4 = i;
	}
	if (vf4 == SIZE_MAX) {
		add(c, "VF4", "metadata", 0, "Could not find annotations file");
	} else {
		ae = mdent(b, vf4);
		ann = fbc_bundle_fold_get(ae->doc, "annotations");
		for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
			if (json_object_get(ann, keys[i]) == NULL)
				add(c, "VF5", ae->file, line_at(ae, "annotations", NULL),
				    "Missing annotation \"%s\"", keys[i]);
		for (size_t i = 0; i < b->manifests.len; i++)
			if (ment(b, i)->kind &&
			    strcmp(ment(b, i)->kind, "ClusterServiceVersion") == 0)
				detected = "registry+v1";
		if (json_object_get(ann, keys[0]) &&
		    strcmp(sval(json_object_get(ann, keys[0])), detected) != 0)
			add(c, "VF6", ae->file, line_at(ae, "annotations", keys[0], NULL),
			    "Expecting annotation \"%s\" to have value \"%s\" instead of \"%s\"",
			    keys[0], detected, sval(json_object_get(ann, keys[0])));
		if (json_object_get(ann, keys[4]) && *sval(json_object_get(ann, keys[4])) == 0)
			add(c, "VF7", ae->file, line_at(ae, "annotations", keys[4], NULL),
			    "Expecting annotation \"%s\" to have non-empty value", keys[4]);
		{
			const char *dk = "operators.operatorframework.io.bundle.channel.default.v1";
			if (json_object_get(ann, dk) && *sval(json_object_get(ann, dk)) == 0)
				add(c, "VF8", ae->file, line_at(ae, "annotations", dk, NULL),
				    "Expecting annotation \"%s\" to have non-empty value", dk);
		}
	}
	if (*fbc_bundle_package(b) == 0)
		add(c, "FB2", b->ann_file != SIZE_MAX ? mdent(b, b->ann_file)->file : "metadata",
		    b->ann_file != SIZE_MAX ? line_at(mdent(b, b->ann_file), "annotations", NULL)
					    : 0,
		    "the bundle has no package name (annotation "
		    "operators.operatorframework.io.bundle.package.v1): opm render writes nothing "
		    "for it (N3)");
}

/* VF9: the dependencies (first file with a non-empty list) */
static void check_dependencies(vctx *c)
{
	const fbc_bundle_dir *b = c->b;
	const bentry *de;

	if (b->dep_file == SIZE_MAX)
		return;
	de = mdent(b, b->dep_file);
	for (size_t i = 0; i < b->ndeps; i++) {
		const rawprop *p = &b->deps[i];
		json_t *v = json_loadb(p->value, p->len, JSON_DECODE_ANY, NULL);
		char idx[32];
		int line;
		snprintf(idx, sizeof(idx), "#%zu", i);
		line = fbc_bundle_line_of(de->text, de->len,
					  (const char *const[]){"dependencies", idx, NULL}, 2);
		if (strcmp(p->type, "olm.gvk") == 0) {
			if (*sval(json_object_get(v, "group")) == 0)
				add(c, "VF9", de->file, line, "API Group is empty");
			if (*sval(json_object_get(v, "version")) == 0)
				add(c, "VF9", de->file, line, "API Version is empty");
			if (*sval(json_object_get(v, "kind")) == 0)
				add(c, "VF9", de->file, line, "API Kind is empty");
		} else if (strcmp(p->type, "olm.package") == 0) {
			const char *ver = sval(json_object_get(v, "version"));
			if (*sval(json_object_get(v, "packageName")) == 0)
				add(c, "VF9", de->file, line, "Package name is empty");
			if (*ver == 0) {
				add(c, "VF9", de->file, line, "Package version is empty");
			} else {
				fbc_semver_range *r = NULL;
				fbc_error e2;
				fbc_error_init(&e2);
				if (fbc_semver_range_parse_blang(&r, ver, &e2) != 0)
					add(c, "VF9", de->file, line,
					    "Invalid semver format version: %s", e2.message);
				fbc_semver_range_free(r);
			}
		} else if (strcmp(p->type, "olm.label") == 0) {
			if (*sval(json_object_get(v, "label")) == 0)
				add(c, "VF9", de->file, line, "Label information is missing");
		} else if (strcmp(p->type, "olm.constraint") == 0) {
			json_t *cel = json_object_get(v, "cel");
			if (!json_is_object(cel)) {
				add(c, "VF9", de->file, line, "The CEL field is missing");
			} else if (*sval(json_object_get(cel, "rule")) == 0) {
				add(c, "VF9", de->file, line, "The CEL expression is missing");
			} else {
				fbc_cel_program *prog = NULL;
				fbc_error e2;
				const char *rule = sval(json_object_get(cel, "rule"));
				fbc_error_init(&e2);
				if (fbc_cel_compile(&prog, rule, strlen(rule), &e2) != 0)
					add(c, "VF9", de->file, line, "Invalid CEL expression: %s",
					    e2.message);
				fbc_cel_program_free(prog);
			}
		} else {
			add(c, "VF9", de->file, line, "couldn't parse dependency of type %s",
			    p->type);
		}
		json_decref(v);
	}
}

/* The line of the first B error, from its rule. */
static void add_render_error(vctx *c, const char *rule, const fbc_error *e)
{
	const fbc_bundle_dir *b = c->b;
	const bentry *ce = b->csv != SIZE_MAX ? ment(b, b->csv) : NULL;
	const char *file = e->where[0] ? e->where : NULL;
	int line = 0;

	if (strcmp(rule, "B5") == 0 || strcmp(rule, "B10") == 0)
		return; /* reported for every case by check_crds and below */
	if (ce && file && strcmp(file, ce->file) == 0) {
		if (!strcmp(rule, "B4"))
			line = line_at(ce, "metadata", NULL);
		else if (!strcmp(rule, "B6"))
			line = line_at(ce, "spec", NULL);
		else if (!strcmp(rule, "B7"))
			line = line_at(ce, "spec", "apiservicedefinitions", NULL);
		else if (!strcmp(rule, "B8") || !strcmp(rule, "B9"))
			line = line_at(ce, "spec", "customresourcedefinitions", NULL);
		else if (!strcmp(rule, "B12"))
			line = line_at(ce, "spec", "version", NULL);
		else if (!strcmp(rule, "B13"))
			line = line_at(ce, "spec", "release", NULL);
		else if (!strcmp(rule, "B16"))
			line = line_at(ce, "spec", "customresourcedefinitions", "required", NULL);
		else if (!strcmp(rule, "B17"))
			line = strstr(e->message, "relatedImages")
				       ? line_at(ce, "spec", "relatedImages", NULL)
				       : line_at(ce, "spec", "install", NULL);
	} else if (!strcmp(rule, "B14") && b->prop_file != SIZE_MAX) {
		file = mdent(b, b->prop_file)->file;
		line = line_at(mdent(b, b->prop_file), "properties", NULL);
	} else if (!strcmp(rule, "B15") && b->dep_file != SIZE_MAX) {
		file = mdent(b, b->dep_file)->file;
		line = line_at(mdent(b, b->dep_file), "dependencies", NULL);
	}
	add(c, rule, file, line, "%s", e->message);
}

int fbc_bundle_validate(const fbc_bundle_dir *b, fbc_diags *diags, fbc_error *err)
{
	vctx c = {b, diags, NULL, NULL, 0};
	const char *mediatype = "registry+v1";
	const char *rule = NULL;
	fbc_error e;

	c.pkg = *fbc_bundle_package(b) ? fbc_bundle_package(b) : NULL;
	c.name = *b->name ? b->name : NULL;
	if (b->annotations &&
	    json_is_string(json_object_get(b->annotations,
					   "operators.operatorframework.io.bundle.mediatype.v1")))
		mediatype = json_string_value(json_object_get(
			b->annotations, "operators.operatorframework.io.bundle.mediatype.v1"));
	check_entries(&c, mediatype);
	check_csv(&c);
	check_crds(&c);
	check_metadata(&c);
	check_dependencies(&c);
	/* B5 for every CRD */
	for (size_t i = 0; i < b->nobjects && c.rc == 0; i++) {
		const bentry *en = ment(b, b->objects[i]);
		fbc_bundle_dir *one = NULL;
		(void)one;
		if (strcmp(en->kind, "CustomResourceDefinition") != 0)
			continue;
		fbc_error_init(&e);
		if (fbc_bundle_check_crd(en, &e) != 0)
			add(&c, "B5", en->file, line_at(en, "spec", NULL), "%s", e.message);
	}
	fbc_error_init(&e);
	if (fbc_bundle_assemble(b, "", NULL, NULL, false, &rule, &e) != 0) {
		if (e.code == FBC_ENOMEM)
			return fbc_error_set(err, FBC_ENOMEM, NULL, "out of memory");
		if (rule)
			add_render_error(&c, rule, &e);
	}
	if (c.rc)
		return fbc_error_set(err, FBC_ENOMEM, NULL, "out of memory");
	return 0;
}
