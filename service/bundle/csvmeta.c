/*
 * olm.csv.metadata (bundles.md §4.2-§4.4): the CSV decoded as opm's typed
 * v1alpha1.ClusterServiceVersion and re-encoded as property.CSVMetadata,
 * compact, HTML escaping off, members in Go struct order. Type mismatches
 * in the fields read fail like Go's decoder (B19); the typed decode of the
 * parts not kept (install strategy, webhooks, status) is not replicated.
 */
#include "service/bundle/internal.h"
#include "service/gojson/gojson.h"
#include "service/semver/semver.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct cm {
	fbc_buf *b;
	fbc_error *err;
	int rc;
	bool first;
} cm;

#define G(obj, name) fbc_bundle_fold_get((obj), (name))

static bool present(const json_t *v)
{
	return v != NULL && !json_is_null(v);
}

static int bad(cm *c, const json_t *v, const char *field, const char *type)
{
	if (c->rc == 0)
		c->rc = fbc_error_set(
			c->err, FBC_EINVAL, NULL,
			"json: cannot unmarshal %s into Go struct field %s of type %s",
			fbc_gt_json_kind(v), field, type);
	return c->rc;
}

static void put(cm *c, const char *s)
{
	if (c->rc == 0 && fbc_buf_puts(c->b, s))
		c->rc = fbc_error_set(c->err, FBC_ENOMEM, NULL, "out of memory");
}

static void put_str(cm *c, const char *s)
{
	if (c->rc == 0 && fbc_gojson_string(c->b, s, strlen(s), false))
		c->rc = fbc_error_set(c->err, FBC_ENOMEM, NULL, "out of memory");
}

static void key(cm *c, const char *k)
{
	if (!c->first)
		put(c, ",");
	c->first = false;
	put_str(c, k);
	put(c, ":");
}

/* A string member; omitempty unless always. */
static void str_member(cm *c, const json_t *obj, const char *field, const char *out, bool always,
		       const char *gofield)
{
	json_t *v = G(obj, field);

	if (present(v) && !json_is_string(v)) {
		bad(c, v, gofield, "string");
		return;
	}
	if (!always && (!json_is_string(v) || json_string_length(v) == 0))
		return;
	key(c, out);
	put_str(c, json_is_string(v) ? json_string_value(v) : "");
}

static void open_obj(cm *c, bool *saved)
{
	*saved = c->first;
	put(c, "{");
	c->first = true;
}

static void close_obj(cm *c, bool saved)
{
	put(c, "}");
	c->first = saved;
}

/* map[string]string, keys sorted; omitted when empty */
static void string_map(cm *c, const json_t *m, const char *out, const char *gofield)
{
	const char *k;
	json_t *v;
	bool saved;

	if (!present(m))
		return;
	if (!json_is_object(m)) {
		bad(c, m, gofield, "map[string]string");
		return;
	}
	json_object_foreach((json_t *)m, k, v)
	{
		if (present(v) && !json_is_string(v)) {
			bad(c, v, gofield, "string");
			return;
		}
	}
	if (json_object_size(m) == 0)
		return;
	{
		/* Go sorts map keys; a null value is "" */
		json_t *copy = json_object();
		if (copy == NULL) {
			c->rc = FBC_ENOMEM;
			return;
		}
		json_object_foreach((json_t *)m, k, v)
		{
			json_object_set_new(
				copy, k,
				json_string(json_is_string(v) ? json_string_value(v) : ""));
		}
		key(c, out);
		saved = c->first;
		if (c->rc == 0 && fbc_gojson_value(c->b, copy, false))
			c->rc = FBC_ENOMEM;
		c->first = saved;
		json_decref(copy);
	}
}

static bool list_ok(cm *c, const json_t *l, const char *gofield, const char *type)
{
	if (!present(l))
		return false;
	if (!json_is_array(l)) {
		bad(c, l, gofield, type);
		return false;
	}
	for (size_t i = 0; i < json_array_size(l); i++) {
		json_t *e = json_array_get(l, i);
		if (present(e) && !json_is_object(e) && strcmp(type, "[]string") != 0) {
			bad(c, e, gofield, type + 2);
			return false;
		}
		if (strcmp(type, "[]string") == 0 && present(e) && !json_is_string(e)) {
			bad(c, e, gofield, "string");
			return false;
		}
	}
	return json_array_size(l) > 0;
}

static void string_list(cm *c, const json_t *l, const char *out, const char *gofield)
{
	if (!list_ok(c, l, gofield, "[]string"))
		return;
	key(c, out);
	put(c, "[");
	for (size_t i = 0; i < json_array_size(l); i++) {
		json_t *e = json_array_get(l, i);
		if (i)
			put(c, ",");
		put_str(c, json_is_string(e) ? json_string_value(e) : "");
	}
	put(c, "]");
}

static void descriptors(cm *c, const json_t *l, const char *out, const char *gofield)
{
	if (!list_ok(c, l, gofield, "[]Descriptor"))
		return;
	key(c, out);
	put(c, "[");
	for (size_t i = 0; i < json_array_size(l); i++) {
		json_t *d = json_array_get(l, i), *val;
		bool saved;
		if (i)
			put(c, ",");
		open_obj(c, &saved);
		str_member(c, d, "path", "path", true, "path");
		str_member(c, d, "displayName", "displayName", false, "displayName");
		str_member(c, d, "description", "description", false, "description");
		string_list(c, G(d, "x-descriptors"), "x-descriptors", "x-descriptors");
		val = G(d, "value");
		if (val != NULL) {
			/* raw bytes cut from the HTML-escaped CSV JSON */
			key(c, "value");
			if (c->rc == 0 && fbc_gojson_value(c->b, val, true))
				c->rc = FBC_ENOMEM;
		}
		close_obj(c, saved);
	}
	put(c, "]");
}

static void resources(cm *c, const json_t *l)
{
	if (!list_ok(c, l, "resources", "[]APIResourceReference"))
		return;
	key(c, "resources");
	put(c, "[");
	for (size_t i = 0; i < json_array_size(l); i++) {
		json_t *r = json_array_get(l, i);
		bool saved;
		if (i)
			put(c, ",");
		open_obj(c, &saved);
		str_member(c, r, "name", "name", true, "name");
		str_member(c, r, "kind", "kind", true, "kind");
		str_member(c, r, "version", "version", true, "version");
		close_obj(c, saved);
	}
	put(c, "]");
}

static void tail_descriptions(cm *c, const json_t *d)
{
	str_member(c, d, "displayName", "displayName", false, "displayName");
	str_member(c, d, "description", "description", false, "description");
	resources(c, G(d, "resources"));
	descriptors(c, G(d, "statusDescriptors"), "statusDescriptors", "statusDescriptors");
	descriptors(c, G(d, "specDescriptors"), "specDescriptors", "specDescriptors");
	descriptors(c, G(d, "actionDescriptors"), "actionDescriptors", "actionDescriptors");
}

static void definitions(cm *c, const json_t *defs, const char *out, bool api)
{
	bool saved;

	if (present(defs) && !json_is_object(defs)) {
		bad(c, defs, out, api ? "APIServiceDefinitions" : "CustomResourceDefinitions");
		return;
	}
	key(c, out);
	open_obj(c, &saved);
	for (int w = 0; w < 2; w++) {
		const char *which = w ? "required" : "owned";
		json_t *l = G(defs, which);
		if (!list_ok(c, l, which, api ? "[]APIServiceDescription" : "[]CRDDescription"))
			continue;
		key(c, which);
		put(c, "[");
		for (size_t i = 0; i < json_array_size(l); i++) {
			json_t *d = json_array_get(l, i), *port;
			bool s2;
			if (i)
				put(c, ",");
			open_obj(c, &s2);
			str_member(c, d, "name", "name", true, "name");
			if (api)
				str_member(c, d, "group", "group", true, "group");
			str_member(c, d, "version", "version", true, "version");
			str_member(c, d, "kind", "kind", true, "kind");
			if (api) {
				str_member(c, d, "deploymentName", "deploymentName", false,
					   "deploymentName");
				port = G(d, "containerPort");
				if (present(port) && !json_is_integer(port))
					bad(c, port, "containerPort", "int32");
				else if (json_is_integer(port) && json_integer_value(port) != 0) {
					key(c, "containerPort");
					if (c->rc == 0 &&
					    fbc_buf_printf(c->b, "%" JSON_INTEGER_FORMAT,
							   json_integer_value(port)))
						c->rc = FBC_ENOMEM;
				}
			}
			tail_descriptions(c, d);
			close_obj(c, s2);
		}
		put(c, "]");
	}
	close_obj(c, saved);
}

/* [{a?, b?}] lists (links, maintainers) */
static void pair_list(cm *c, const json_t *l, const char *out, const char *a, const char *b2)
{
	if (!list_ok(c, l, out, "[]struct"))
		return;
	key(c, out);
	put(c, "[");
	for (size_t i = 0; i < json_array_size(l); i++) {
		json_t *e = json_array_get(l, i);
		bool saved;
		if (i)
			put(c, ",");
		open_obj(c, &saved);
		str_member(c, e, a, a, false, a);
		str_member(c, e, b2, b2, false, b2);
		close_obj(c, saved);
	}
	put(c, "]");
}

int fbc_bundle_csv_metadata(fbc_buf *out, const json_t *csv, fbc_error *err)
{
	cm c = {out, err, 0, true};
	json_t *meta = G(csv, "metadata"), *spec = G(csv, "spec"), *v;
	bool saved;

	if (present(spec) && !json_is_object(spec))
		return bad(&c, spec, "ClusterServiceVersion.spec",
			   "v1alpha1.ClusterServiceVersionSpec");
	/* spec.version: blang ParseTolerant (a string); spec.release: a string of
	 * pre-release identifiers */
	v = G(spec, "version");
	if (present(v)) {
		fbc_semver sv;
		fbc_error e2;
		if (!json_is_string(v))
			return bad(&c, v, "ClusterServiceVersionSpec.spec.version",
				   "version.OperatorVersion");
		fbc_error_init(&e2);
		if (fbc_semver_parse_tolerant(&sv, json_string_value(v), json_string_length(v),
					      &e2) != 0)
			return fbc_error_set(err, FBC_EINVAL, NULL, "%s", e2.message);
	}
	v = G(spec, "release");
	if (present(v)) {
		fbc_error e2;
		if (!json_is_string(v))
			return bad(&c, v, "ClusterServiceVersionSpec.spec.release",
				   "release.OperatorRelease");
		fbc_error_init(&e2);
		if (fbc_release_validate(json_string_value(v), json_string_length(v), &e2) != 0)
			return fbc_error_set(err, FBC_EINVAL, NULL, "%s", e2.message);
	}
	open_obj(&c, &saved);
	string_map(&c, G(meta, "annotations"), "annotations", "ObjectMeta.metadata.annotations");
	definitions(&c, G(spec, "apiservicedefinitions"), "apiServiceDefinitions", true);
	definitions(&c, G(spec, "customresourcedefinitions"), "crdDescriptions", false);
	str_member(&c, spec, "description", "description", false, "description");
	str_member(&c, spec, "displayName", "displayName", false, "displayName");
	v = G(spec, "installModes");
	if (list_ok(&c, v, "installModes", "[]InstallMode")) {
		key(&c, "installModes");
		put(&c, "[");
		for (size_t i = 0; i < json_array_size(v); i++) {
			json_t *m = json_array_get(v, i), *sup = G(m, "supported");
			bool s2;
			if (i)
				put(&c, ",");
			open_obj(&c, &s2);
			str_member(&c, m, "type", "type", true, "type");
			if (present(sup) && !json_is_boolean(sup))
				bad(&c, sup, "InstallMode.supported", "bool");
			key(&c, "supported");
			put(&c, json_is_true(sup) ? "true" : "false");
			close_obj(&c, s2);
		}
		put(&c, "]");
	}
	string_list(&c, G(spec, "keywords"), "keywords", "keywords");
	string_map(&c, G(meta, "labels"), "labels", "ObjectMeta.metadata.labels");
	pair_list(&c, G(spec, "links"), "links", "name", "url");
	pair_list(&c, G(spec, "maintainers"), "maintainers", "name", "email");
	str_member(&c, spec, "maturity", "maturity", false, "maturity");
	str_member(&c, spec, "minKubeVersion", "minKubeVersion", false, "minKubeVersion");
	v = G(spec, "nativeAPIs");
	if (list_ok(&c, v, "nativeAPIs", "[]GroupVersionKind")) {
		key(&c, "nativeAPIs");
		put(&c, "[");
		for (size_t i = 0; i < json_array_size(v); i++) {
			json_t *g = json_array_get(v, i);
			bool s2;
			if (i)
				put(&c, ",");
			open_obj(&c, &s2);
			str_member(&c, g, "group", "group", true, "group");
			str_member(&c, g, "version", "version", true, "version");
			str_member(&c, g, "kind", "kind", true, "kind");
			close_obj(&c, s2);
		}
		put(&c, "]");
	}
	v = G(spec, "provider");
	if (present(v) && !json_is_object(v)) {
		bad(&c, v, "provider", "AppLink");
	} else {
		bool s2;
		key(&c, "provider");
		open_obj(&c, &s2);
		str_member(&c, v, "name", "name", false, "name");
		str_member(&c, v, "url", "url", false, "url");
		close_obj(&c, s2);
	}
	close_obj(&c, saved);
	if (c.rc == FBC_ENOMEM && err->code == 0)
		fbc_error_set(err, FBC_ENOMEM, NULL, "out of memory");
	return c.rc;
}

int fbc_bundle_csv_metadata_value(fbc_buf *out, const json_t *csv, fbc_error *err)
{
	return fbc_bundle_csv_metadata(out, csv, err);
}
