/*
 * The basic template (`olm.template.basic`, templates.md §2): entries kept
 * and normalised as declcfg.LoadSlice does, bundle references replaced by
 * rendered blobs, everything written in WriteYAML's order.
 */
#include "service/template/internal.h"
#include "service/load/gotype.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

typedef struct basic {
	const char *file;
	const char *text;
	size_t len;
	json_t *packages, *channels, *bundles, *others, *deprecations;
} basic;

/* The line of the idx-th item of the top-level block sequence `entries:`
 * (0 when the template is not laid out that way: flow style or JSON). */
static int item_line(const char *t, size_t n, size_t idx)
{
	size_t i = 0;
	int line = 1;
	/* find a line "entries:" at column 0 */
	while (i < n) {
		if ((i == 0 || t[i - 1] == '\n') && n - i >= 8 && memcmp(t + i, "entries:", 8) == 0)
			break;
		line += t[i] == '\n';
		i++;
	}
	if (i >= n)
		return 0;
	long dash_col = -1;
	size_t count = 0;
	while (i < n) {
		/* next line */
		while (i < n && t[i] != '\n')
			i++;
		if (i >= n)
			return 0;
		i++;
		line++;
		size_t col = 0;
		while (i + col < n && t[i + col] == ' ')
			col++;
		if (i + col >= n)
			return 0;
		char c = t[i + col];
		if (c == '\n' || c == '#')
			continue;
		if (col == 0 && c != '-')
			return 0; /* the next top-level key: entries ended */
		if (c == '-' && (dash_col < 0 || (long)col == dash_col)) {
			dash_col = (long)col;
			if (count++ == idx)
				return line;
		}
	}
	return 0;
}

static int entry_line(const basic *b, const json_t *entry, size_t idx)
{
	int l = item_line(b->text, b->len, idx);
	if (l > 0)
		return l;
	const char *img = json_string_value(tpl_fold_get(entry, "image", NULL));
	if (img != NULL && img[0] != '\0')
		return tpl_line_of(b->text, b->len, img, 0);
	return tpl_line_of(b->text, b->len, "entries", 0);
}

/* a string field of a typed decode: absent/null -> "", else must be a string */
static int str_field(const char **out, const json_t *obj, const char *name, const char *what,
		     fbc_error *err)
{
	json_t *v = tpl_fold_get(obj, name, NULL);
	if (v == NULL || json_is_null(v)) {
		*out = "";
		return 0;
	}
	if (!json_is_string(v))
		return fbc_error_set(err, FBC_EINVAL, NULL,
				     "parse %s: json: cannot unmarshal %s into Go struct field of "
				     "type string (field %s)",
				     what, fbc_gt_json_kind(v), name);
	*out = json_string_value(v);
	return 0;
}

/* properties: [{type, value}] kept as given (Go: property.Property) */
static int props_field(json_t **out, const json_t *obj, const char *what, fbc_error *err)
{
	json_t *v = tpl_fold_get(obj, "properties", NULL);
	*out = NULL;
	if (v == NULL || json_is_null(v) || (json_is_array(v) && json_array_size(v) == 0))
		return 0;
	if (!json_is_array(v))
		return fbc_error_set(err, FBC_EINVAL, NULL,
				     "parse %s: json: cannot unmarshal %s into Go struct field "
				     "properties of type []property.Property",
				     what, fbc_gt_json_kind(v));
	json_t *res = json_array();
	size_t i;
	json_t *p;
	json_array_foreach(v, i, p)
	{
		if (!json_is_object(p)) {
			json_decref(res);
			return fbc_error_set(err, FBC_EINVAL, NULL,
					     "parse %s: json: cannot unmarshal %s into property",
					     what, fbc_gt_json_kind(p));
		}
		const char *t = json_string_value(tpl_fold_get(p, "type", NULL));
		json_t *val = tpl_fold_get(p, "value", NULL);
		json_array_append_new(res, json_pack("{s:s,s:O}", "type", t ? t : "", "value",
						     val ? val : json_null()));
	}
	*out = res;
	return 0;
}

static int do_package(basic *b, const json_t *e, fbc_error *err)
{
	const char *name, *def, *desc;
	int rc;
	if ((rc = str_field(&name, e, "name", "package", err)) != 0 ||
	    (rc = str_field(&def, e, "defaultChannel", "package", err)) != 0 ||
	    (rc = str_field(&desc, e, "description", "package", err)) != 0)
		return rc;
	json_t *o = json_object();
	json_object_set_new(o, "schema", json_string("olm.package"));
	json_object_set_new(o, "name", json_string(name));
	json_object_set_new(o, "defaultChannel", json_string(def));
	json_t *icon = tpl_fold_get(e, "icon", NULL);
	if (icon != NULL && !json_is_null(icon)) {
		if (!json_is_object(icon)) {
			json_decref(o);
			return fbc_error_set(err, FBC_EINVAL, NULL,
					     "parse package: json: cannot unmarshal %s into Go "
					     "struct field Package.icon of type declcfg.Icon",
					     fbc_gt_json_kind(icon));
		}
		json_t *data = NULL;
		rc = tpl_icon_canonical(&data, tpl_fold_get(icon, "base64data", NULL), err);
		if (rc != 0) {
			json_decref(o);
			fbc_error_prefix(err, "parse package");
			return rc;
		}
		const char *mt = json_string_value(tpl_fold_get(icon, "mediatype", NULL));
		json_object_set_new(
			o, "icon",
			json_pack("{s:o,s:s}", "base64data", data, "mediatype", mt ? mt : ""));
	}
	if (desc[0] != '\0')
		json_object_set_new(o, "description", json_string(desc));
	json_t *props = NULL;
	if ((rc = props_field(&props, e, "package", err)) != 0) {
		json_decref(o);
		return rc;
	}
	if (props != NULL)
		json_object_set_new(o, "properties", props);
	json_array_append_new(b->packages, o);
	return 0;
}

static int do_channel(basic *b, const json_t *e, fbc_error *err)
{
	const char *name, *pkg;
	int rc;
	if ((rc = str_field(&name, e, "name", "channel", err)) != 0 ||
	    (rc = str_field(&pkg, e, "package", "channel", err)) != 0)
		return rc;
	json_t *o = json_object();
	json_object_set_new(o, "schema", json_string("olm.channel"));
	json_object_set_new(o, "name", json_string(name));
	json_object_set_new(o, "package", json_string(pkg));
	json_t *ents = tpl_fold_get(e, "entries", NULL);
	if (ents == NULL || json_is_null(ents)) {
		json_object_set_new(o, "entries", json_null());
	} else if (!json_is_array(ents)) {
		json_decref(o);
		return fbc_error_set(
			err, FBC_EINVAL, NULL,
			"parse channel: json: cannot unmarshal %s into Go struct field "
			"Channel.entries of type []declcfg.ChannelEntry",
			fbc_gt_json_kind(ents));
	} else {
		json_t *list = json_array();
		size_t i;
		json_t *ce;
		json_array_foreach(ents, i, ce)
		{
			const char *en, *rep, *sr;
			if (!json_is_object(ce)) {
				rc = fbc_error_set(
					err, FBC_EINVAL, NULL,
					"parse channel: json: cannot unmarshal %s into Go "
					"struct field of type declcfg.ChannelEntry",
					fbc_gt_json_kind(ce));
			} else if ((rc = str_field(&en, ce, "name", "channel", err)) == 0 &&
				   (rc = str_field(&rep, ce, "replaces", "channel", err)) == 0 &&
				   (rc = str_field(&sr, ce, "skipRange", "channel", err)) == 0) {
				json_t *x = json_object();
				json_object_set_new(x, "name", json_string(en));
				if (rep[0] != '\0')
					json_object_set_new(x, "replaces", json_string(rep));
				json_t *sk = tpl_fold_get(ce, "skips", NULL);
				if (sk != NULL && !json_is_null(sk)) {
					size_t k;
					json_t *s;
					if (!json_is_array(sk))
						rc = fbc_error_set(
							err, FBC_EINVAL, NULL,
							"parse channel: json: cannot "
							"unmarshal %s into Go struct field "
							"ChannelEntry.entries.skips of type "
							"[]string",
							fbc_gt_json_kind(sk));
					json_array_foreach(sk, k, s)
					{
						if (!json_is_string(s) && !json_is_null(s))
							rc = fbc_error_set(err, FBC_EINVAL, NULL,
									   "parse channel: json: "
									   "cannot unmarshal %s "
									   "into Go struct field "
									   "ChannelEntry.entries."
									   "skips of type string",
									   fbc_gt_json_kind(s));
					}
					if (rc == 0 && json_array_size(sk) > 0) {
						json_t *cp = json_array();
						json_array_foreach(sk, k, s) json_array_append_new(
							cp,
							json_string(json_is_string(s)
									    ? json_string_value(s)
									    : ""));
						json_object_set_new(x, "skips", cp);
					}
				}
				if (sr[0] != '\0')
					json_object_set_new(x, "skipRange", json_string(sr));
				json_array_append_new(list, x);
			}
			if (rc != 0) {
				json_decref(list);
				json_decref(o);
				return rc;
			}
		}
		json_object_set_new(o, "entries", list);
	}
	json_t *props = NULL;
	if ((rc = props_field(&props, e, "channel", err)) != 0) {
		json_decref(o);
		return rc;
	}
	if (props != NULL)
		json_object_set_new(o, "properties", props);
	json_array_append_new(b->channels, o);
	return 0;
}

static int do_deprecation(basic *b, const json_t *e, fbc_error *err)
{
	const char *pkg;
	int rc;
	if ((rc = str_field(&pkg, e, "package", "deprecation", err)) != 0)
		return rc;
	json_t *o = json_object();
	json_object_set_new(o, "schema", json_string("olm.deprecations"));
	json_object_set_new(o, "package", json_string(pkg));
	json_t *list = json_array();
	json_t *ents = tpl_fold_get(e, "entries", NULL);
	size_t i;
	json_t *de;
	json_array_foreach(ents, i, de)
	{
		json_t *ref = tpl_fold_get(de, "reference", NULL);
		const char *rs = json_string_value(tpl_fold_get(ref, "schema", NULL));
		const char *rn = json_string_value(tpl_fold_get(ref, "name", NULL));
		const char *msg = json_string_value(tpl_fold_get(de, "message", NULL));
		json_t *r = json_pack("{s:s}", "schema", rs ? rs : "");
		if (rn != NULL && rn[0] != '\0')
			json_object_set_new(r, "name", json_string(rn));
		json_array_append_new(
			list, json_pack("{s:o,s:s}", "reference", r, "message", msg ? msg : ""));
	}
	json_object_set_new(o, "entries", list);
	json_array_append_new(b->deprecations, o);
	return 0;
}

static int do_bundle(basic *b, const json_t *e, size_t idx, size_t nth_image,
		     const fbc_template_opts *o, fbc_template_sources *src, fbc_error *err)
{
	const char *schema = json_string_value(tpl_fold_get(e, "schema", NULL));
	const char *image = json_string_value(tpl_fold_get(e, "image", NULL));
	const char *pkg = json_string_value(tpl_fold_get(e, "package", NULL));
	json_t *props = tpl_fold_get(e, "properties", NULL);
	json_t *rel = tpl_fold_get(e, "relatedImages", NULL);
	int line = entry_line(b, e, idx);
	if (image != NULL && image[0] != '\0')
		line = tpl_line_of(b->text, b->len, image, nth_image);
	if (schema == NULL || schema[0] == '\0' || image == NULL || image[0] == '\0' ||
	    (pkg != NULL && pkg[0] != '\0') || json_array_size(props) > 0 ||
	    json_array_size(rel) > 0)
		return tpl_fail(err, FBC_EINVAL, b->file, line,
				"unexpected fields present in basic template bundle");
	json_t *blob = NULL;
	int rc = tpl_sources_resolve(&blob, src, image, o->migrate, err);
	if (rc != 0) {
		char msg[FBC_ERROR_MESSAGE_MAX];
		snprintf(msg, sizeof(msg), "render reference \"%s\": %s", image, err->message);
		return tpl_fail(err, rc, b->file, line, "%s", msg);
	}
	json_array_append_new(b->bundles, blob);
	return 0;
}

/* entry keys schema/package/name: no two folding to the same, strings only */
static int check_meta_keys(const json_t *e, fbc_error *err)
{
	static const char *const names[] = {"schema", "package", "name"};
	for (int n = 0; n < 3; n++) {
		const char *k, *seen = NULL;
		json_t *v;
		json_object_foreach((json_t *)e, k, v)
		{
			if (strcasecmp(k, names[n]) != 0)
				continue;
			if (seen != NULL)
				return fbc_error_set(err, FBC_EINVAL, NULL,
						     "unmarshalling template: duplicate keys for "
						     "key \"%s\": [%s %s]",
						     names[n], seen, k);
			seen = k;
			if (!json_is_string(v))
				return fbc_error_set(err, FBC_EINVAL, NULL,
						     "unmarshalling template: expected value for "
						     "key \"%s\" to be a string, got %s",
						     k, fbc_gt_json_kind(v));
		}
	}
	return 0;
}

int tpl_render_basic(fbc_template_result *r, const json_t *doc, const char *text, size_t len,
		     const fbc_template_opts *o, fbc_template_sources *src, fbc_error *err)
{
	basic b = {o->file,	 text,	       len,	     json_array(),
		   json_array(), json_array(), json_array(), json_array()};
	int rc = 0;
	if (!json_is_object(doc)) {
		rc = tpl_fail(err, FBC_EINVAL, o->file, 1,
			      "unmarshalling template: json: cannot unmarshal %s into Go value of "
			      "type basic.BasicTemplate",
			      fbc_gt_json_kind(doc));
		goto done;
	}
	json_t *entries = tpl_fold_get(doc, "entries", NULL);
	if (entries != NULL && !json_is_null(entries) && !json_is_array(entries)) {
		rc = tpl_fail(err, FBC_EINVAL, o->file, tpl_line_of(text, len, "entries", 0),
			      "unmarshalling template: json: cannot unmarshal %s into Go struct "
			      "field BasicTemplate.entries of type []*declcfg.Meta",
			      fbc_gt_json_kind(entries));
		goto done;
	}
	size_t i;
	json_t *e;
	json_array_foreach(entries, i, e)
	{
		if (!json_is_object(e)) {
			rc = tpl_fail(err, FBC_EINVAL, o->file,
				      tpl_line_of(text, len, "entries", 0),
				      "unmarshalling template: entry %zu is a %s, not an object", i,
				      fbc_gt_json_kind(e));
			goto done;
		}
		if ((rc = check_meta_keys(e, err)) != 0) {
			char msg[FBC_ERROR_MESSAGE_MAX];
			snprintf(msg, sizeof(msg), "%s", err->message);
			rc = tpl_fail(err, rc, o->file, entry_line(&b, e, i), "%s", msg);
			goto done;
		}
	}
	const char *schema = json_string_value(tpl_fold_get(doc, "schema", NULL));
	if (schema == NULL || strcmp(schema, "olm.template.basic") != 0) {
		rc = tpl_fail(err, FBC_EINVAL, o->file, tpl_line_of(text, len, "schema", 0),
			      "template has unknown schema (\"%s\"), should be "
			      "\"olm.template.basic\"",
			      schema ? schema : "");
		goto done;
	}
	/* images seen so far, to point at the right line of a repeated image */
	json_t *seen = json_object();
	json_array_foreach(entries, i, e)
	{
		const char *es = json_string_value(tpl_fold_get(e, "schema", NULL));
		if (es == NULL || es[0] == '\0') {
			char *dump = json_dumps(e, JSON_COMPACT | JSON_SORT_KEYS);
			rc = tpl_fail(err, FBC_EINVAL, o->file, entry_line(&b, e, i),
				      "object '%s' is missing root schema field", dump ? dump : "");
			free(dump);
		} else if (strcmp(es, "olm.package") == 0) {
			rc = do_package(&b, e, err);
		} else if (strcmp(es, "olm.channel") == 0) {
			rc = do_channel(&b, e, err);
		} else if (strcmp(es, "olm.deprecations") == 0) {
			rc = do_deprecation(&b, e, err);
		} else if (strcmp(es, "olm.bundle") == 0) {
			const char *img = json_string_value(tpl_fold_get(e, "image", NULL));
			size_t nth = 0;
			if (img != NULL) {
				nth = (size_t)json_integer_value(json_object_get(seen, img));
				json_object_set_new(seen, img, json_integer((json_int_t)nth + 1));
			}
			rc = do_bundle(&b, e, i, nth, o, src, err);
		} else {
			json_t *copy = json_deep_copy(e);
			json_array_append_new(b.others, copy);
		}
		if (rc != 0 && strchr(err->where, ':') == NULL) {
			char msg[FBC_ERROR_MESSAGE_MAX];
			snprintf(msg, sizeof(msg), "%s", err->message);
			rc = tpl_fail(err, rc, o->file, entry_line(&b, e, i), "%s", msg);
		}
		if (rc != 0)
			break;
	}
	json_decref(seen);
	if (rc == 0)
		rc = tpl_order(&r->blobs, b.packages, b.channels, b.bundles, b.others,
			       b.deprecations, err);
done:
	json_decref(b.packages);
	json_decref(b.channels);
	json_decref(b.bundles);
	json_decref(b.others);
	json_decref(b.deprecations);
	return rc;
}
