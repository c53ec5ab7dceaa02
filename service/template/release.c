/*
 * Insertion of a released bundle into a catalog template, as the release
 * pipeline's add_bundle_to_fbc.py does from the bundle's
 * release-config.yaml (templates.md §5.3): create or amend, channels and
 * entries appended at the end, defaultChannel never changed on amend.
 */
#include "service/template/internal.h"
#include "service/load/load.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void fbc_template_release_dispose(fbc_template_release *rc)
{
	if (rc == NULL)
		return;
	json_decref(rc->doc);
	memset(rc, 0, sizeof(*rc));
}

int fbc_template_release_parse(fbc_template_release *out, const char *data, size_t len,
			       const char *file, fbc_error *err)
{
	fbc_load_limits lim;
	json_t *doc = NULL;
	fbc_load_limits_default(&lim);
	memset(out, 0, sizeof(*out));
	int rc = fbc_yaml_doc_to_json(&doc, NULL, data, len, &lim, err);
	if (rc != 0) {
		char msg[FBC_ERROR_MESSAGE_MAX];
		snprintf(msg, sizeof(msg), "%s", err->message);
		return fbc_error_set(err, rc, file, "%s", msg);
	}
	json_t *items = json_object_get(doc, "catalog_templates");
	if (!json_is_array(items) || json_array_size(items) == 0) {
		json_decref(doc);
		return tpl_fail(err, FBC_EINVAL, file,
				tpl_line_of(data, len, "catalog_templates", 0),
				"catalog_templates: required non-empty list");
	}
	size_t i;
	json_t *it;
	json_array_foreach(items, i, it)
	{
		const char *tn = json_string_value(json_object_get(it, "template_name"));
		json_t *ch = json_object_get(it, "channels");
		int line = tn ? tpl_line_of(data, len, tn, 0) : 1;
		const char *why = NULL;
		if (tn == NULL || tn[0] == '\0')
			why = "template_name: required string";
		else if (!json_is_array(ch) || json_array_size(ch) == 0)
			why = "channels: required non-empty list";
		else {
			size_t k;
			json_t *c;
			json_array_foreach(ch, k, c) if (!json_is_string(c)) why =
				"channels: every channel must be a string";
			const char *def = json_string_value(json_object_get(it, "defaultChannel"));
			bool listed = def == NULL;
			json_array_foreach(ch, k, c) if (def && json_is_string(c) &&
							 strcmp(json_string_value(c), def) == 0)
				listed = true;
			if (!listed)
				why = "defaultChannel: must be one of channels";
		}
		if (why != NULL) {
			json_decref(doc);
			return tpl_fail(err, FBC_EINVAL, file, line, "catalog_templates[%zu].%s", i,
					why);
		}
	}
	out->doc = doc;
	return 0;
}

size_t fbc_template_release_count(const fbc_template_release *rc)
{
	return json_array_size(json_object_get(rc->doc, "catalog_templates"));
}

const char *fbc_template_release_template(const fbc_template_release *rc, size_t i)
{
	return json_string_value(json_object_get(
		json_array_get(json_object_get(rc->doc, "catalog_templates"), i), "template_name"));
}

static bool has_channel_named(const json_t *entries, const char *name)
{
	size_t i;
	json_t *e;
	json_array_foreach(entries, i, e)
	{
		const char *s = json_string_value(json_object_get(e, "schema"));
		const char *n = json_string_value(json_object_get(e, "name"));
		if (s && n && strcmp(s, "olm.channel") == 0 && strcmp(n, name) == 0)
			return true;
	}
	return false;
}

static json_t *channel_entry(const json_t *item, const char *bundle_name)
{
	json_t *e = json_pack("{s:s}", "name", bundle_name);
	const char *keys[] = {"replaces", "skips", "skipRange"};
	for (int k = 0; k < 3; k++) {
		json_t *v = json_object_get(item, keys[k]);
		if (v != NULL)
			json_object_set(e, keys[k], v);
	}
	return e;
}

static int add_basic(json_t **io, const json_t *item, const char *op, const char *image,
		     const char *bundle_name)
{
	json_t *ch = json_object_get(item, "channels");
	json_t *doc = *io;
	if (doc == NULL) {
		const char *def = json_string_value(json_object_get(item, "defaultChannel"));
		if (def == NULL)
			def = json_string_value(json_array_get(ch, 0));
		json_t *entries = json_array();
		json_array_append_new(entries, json_pack("{s:s,s:s,s:s}", "schema", "olm.package",
							 "name", op, "defaultChannel", def));
		size_t i;
		json_t *c;
		json_array_foreach(ch, i, c)
		{
			json_t *list = json_array();
			json_array_append_new(list, channel_entry(item, bundle_name));
			json_array_append_new(entries, json_pack("{s:s,s:O,s:s,s:o}", "schema",
								 "olm.channel", "name", c,
								 "package", op, "entries", list));
		}
		json_array_append_new(
			entries, json_pack("{s:s,s:s}", "schema", "olm.bundle", "image", image));
		*io = json_pack("{s:s,s:o}", "schema", "olm.template.basic", "entries", entries);
		return *io ? 0 : FBC_ENOMEM;
	}
	json_t *entries = json_object_get(doc, "entries");
	if (!json_is_array(entries)) {
		entries = json_array();
		json_object_set_new(doc, "entries", entries);
	}
	size_t i;
	json_t *c;
	json_array_foreach(ch, i, c)
	{
		if (!has_channel_named(entries, json_string_value(c)))
			json_array_append_new(entries, json_pack("{s:s,s:O,s:s,s:[]}", "schema",
								 "olm.channel", "name", c,
								 "package", op, "entries"));
	}
	bool have_bundle = false;
	json_t *e;
	json_array_foreach(entries, i, e)
	{
		const char *s = json_string_value(json_object_get(e, "schema"));
		const char *im = json_string_value(json_object_get(e, "image"));
		if (s && im && strcmp(s, "olm.bundle") == 0 && strcmp(im, image) == 0)
			have_bundle = true;
	}
	if (!have_bundle)
		json_array_append_new(
			entries, json_pack("{s:s,s:s}", "schema", "olm.bundle", "image", image));
	json_t *want = channel_entry(item, bundle_name);
	json_array_foreach(entries, i, e)
	{
		const char *s = json_string_value(json_object_get(e, "schema"));
		const char *n = json_string_value(json_object_get(e, "name"));
		if (!s || !n || strcmp(s, "olm.channel") != 0)
			continue;
		bool listed = false;
		size_t k;
		json_array_foreach(ch, k, c) if (strcmp(json_string_value(c), n) == 0) listed =
			true;
		if (!listed)
			continue;
		json_t *list = json_object_get(e, "entries");
		if (!json_is_array(list)) {
			list = json_array();
			json_object_set_new(e, "entries", list);
		}
		bool present = false;
		json_t *x;
		json_array_foreach(list, k, x) if (json_equal(x, want)) present = true;
		if (!present)
			json_array_append(list, want);
	}
	json_decref(want);
	return 0;
}

static int add_semver(json_t **io, const json_t *item, const char *image)
{
	json_t *ch = json_object_get(item, "channels");
	size_t i;
	json_t *c;
	if (*io == NULL) {
		*io = json_pack("{s:s,s:b,s:b}", "Schema", "olm.semver", "GenerateMajorChannels", 1,
				"GenerateMinorChannels", 1);
		if (*io == NULL)
			return FBC_ENOMEM;
	}
	json_array_foreach(ch, i, c)
	{
		const char *name = json_string_value(c);
		json_t *arch = json_object_get(*io, name);
		if (!json_is_object(arch)) {
			arch = json_pack("{s:[]}", "Bundles");
			json_object_set_new(*io, name, arch);
		}
		json_t *list = json_object_get(arch, "Bundles");
		if (!json_is_array(list)) {
			list = json_array();
			json_object_set_new(arch, "Bundles", list);
		}
		json_t *want = json_pack("{s:s}", "Image", image);
		bool present = false;
		size_t k;
		json_t *x;
		json_array_foreach(list, k, x) if (json_equal(x, want)) present = true;
		if (!present)
			json_array_append(list, want);
		json_decref(want);
	}
	return 0;
}

int fbc_template_add_bundle(json_t **io, const fbc_template_release *rc, size_t i,
			    fbc_template_type type, const char *op, const char *image,
			    const char *bundle_name, fbc_error *err)
{
	const json_t *item = json_array_get(json_object_get(rc->doc, "catalog_templates"), i);
	int r;
	if (item == NULL)
		return fbc_error_set(err, FBC_EINVAL, NULL, "no catalog_templates item %zu", i);
	if (type == FBC_TEMPLATE_SEMVER) {
		size_t k;
		json_t *c;
		json_array_foreach(json_object_get(item, "channels"), k, c)
		{
			const char *n = json_string_value(c);
			if (strcmp(n, "Candidate") != 0 && strcmp(n, "Fast") != 0 &&
			    strcmp(n, "Stable") != 0)
				return fbc_error_set(err, FBC_EINVAL, NULL,
						     "semver template %s: channel \"%s\" is not "
						     "Candidate, Fast or Stable",
						     fbc_template_release_template(rc, i), n);
		}
		r = add_semver(io, item, image);
	} else {
		r = add_basic(io, item, op, image, bundle_name);
	}
	if (r != 0)
		return fbc_error_set(err, r, NULL, "out of memory");
	return 0;
}
