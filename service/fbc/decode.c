/*
 * Typed decoding of metas into the catalog model (rules L10, L11, L12) and
 * the Go encoding/json imitation shared with validate.c (internal.h).
 */
#include "service/base/utf8.h"
#include "service/base/base64.h"
#include "service/fbc/imageref.h"
#include "service/fbc/internal.h"
#include "service/fbc/model.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ------------------------------------------------------------------ */
/* Go type tables                                                      */

#define F(n, t)                     \
	{                           \
		n, sizeof(n) - 1, t \
	}
#define END                   \
	{                     \
		NULL, 0, NULL \
	}

static const fbc_gt_type t_raw = {FBC_GT_ANY, "json.RawMessage", NULL, NULL};
static const fbc_gt_type t_string = {FBC_GT_STRING, "string", NULL, NULL};
static const fbc_gt_type t_bool = {FBC_GT_BOOL, "bool", NULL, NULL};
static const fbc_gt_type t_int32 = {FBC_GT_INT, "int32", NULL, NULL};
static const fbc_gt_type t_bytes = {FBC_GT_BYTES, "[]uint8", NULL, NULL};
static const fbc_gt_type t_strings = {FBC_GT_ARRAY, "[]string", &t_string, NULL};
static const fbc_gt_type t_strmap = {FBC_GT_MAP, "map[string]string", &t_string, NULL};

static const fbc_gt_field f_property[] = {F("type", &t_string), F("value", &t_raw), END};
static const fbc_gt_type t_property = {FBC_GT_STRUCT, "property.Property", NULL, f_property};
static const fbc_gt_type t_properties = {FBC_GT_ARRAY, "[]property.Property", &t_property, NULL};

static const fbc_gt_field f_icon[] = {F("base64data", &t_bytes), F("mediatype", &t_string), END};
static const fbc_gt_type t_icon = {FBC_GT_STRUCT, "declcfg.Icon", NULL, f_icon};

static const fbc_gt_field f_package[] = {F("schema", &t_string),
					 F("name", &t_string),
					 F("defaultChannel", &t_string),
					 F("icon", &t_icon),
					 F("description", &t_string),
					 F("properties", &t_properties),
					 END};
const fbc_gt_type fbc_gt_package = {FBC_GT_STRUCT, "declcfg.Package", NULL, f_package};

static const fbc_gt_field f_entry[] = {F("name", &t_string), F("replaces", &t_string),
				       F("skips", &t_strings), F("skipRange", &t_string), END};
static const fbc_gt_type t_entry = {FBC_GT_STRUCT, "declcfg.ChannelEntry", NULL, f_entry};
static const fbc_gt_type t_entries = {FBC_GT_ARRAY, "[]declcfg.ChannelEntry", &t_entry, NULL};
static const fbc_gt_field f_channel[] = {F("schema", &t_string),	 F("name", &t_string),
					 F("package", &t_string),	 F("entries", &t_entries),
					 F("properties", &t_properties), END};
const fbc_gt_type fbc_gt_channel = {FBC_GT_STRUCT, "declcfg.Channel", NULL, f_channel};

static const fbc_gt_field f_related[] = {F("name", &t_string), F("image", &t_string), END};
static const fbc_gt_type t_related = {FBC_GT_STRUCT, "declcfg.RelatedImage", NULL, f_related};
static const fbc_gt_type t_relateds = {FBC_GT_ARRAY, "[]declcfg.RelatedImage", &t_related, NULL};
static const fbc_gt_field f_bundle[] = {F("schema", &t_string),
					F("name", &t_string),
					F("package", &t_string),
					F("image", &t_string),
					F("properties", &t_properties),
					F("relatedImages", &t_relateds),
					END};
const fbc_gt_type fbc_gt_bundle = {FBC_GT_STRUCT, "declcfg.Bundle", NULL, f_bundle};

static const fbc_gt_field f_ref[] = {F("schema", &t_string), F("name", &t_string), END};
static const fbc_gt_type t_ref = {FBC_GT_STRUCT, "declcfg.PackageScopedReference", NULL, f_ref};
static const fbc_gt_field f_depentry[] = {F("reference", &t_ref), F("message", &t_string), END};
static const fbc_gt_type t_depentry = {FBC_GT_STRUCT, "declcfg.DeprecationEntry", NULL, f_depentry};
static const fbc_gt_type t_depentries = {FBC_GT_ARRAY, "[]declcfg.DeprecationEntry", &t_depentry,
					 NULL};
static const fbc_gt_field f_deprecation[] = {F("schema", &t_string), F("package", &t_string),
					     F("entries", &t_depentries), END};
const fbc_gt_type fbc_gt_deprecation = {FBC_GT_STRUCT, "declcfg.Deprecation", NULL, f_deprecation};

/* alpha/property types */
static const fbc_gt_field f_ppackage[] = {F("packageName", &t_string), F("version", &t_string),
					  F("release", &t_string), END};
const fbc_gt_type fbc_gt_prop_package = {FBC_GT_STRUCT, "property.Package", NULL, f_ppackage};
static const fbc_gt_field f_preq[] = {F("packageName", &t_string), F("versionRange", &t_string),
				      END};
const fbc_gt_type fbc_gt_prop_package_required = {FBC_GT_STRUCT, "property.PackageRequired", NULL,
						  f_preq};
static const fbc_gt_field f_gvk[] = {F("group", &t_string), F("kind", &t_string),
				     F("version", &t_string), END};
const fbc_gt_type fbc_gt_prop_gvk = {FBC_GT_STRUCT, "property.GVK", NULL, f_gvk};
const fbc_gt_type fbc_gt_prop_gvk_required = {FBC_GT_STRUCT, "property.GVKRequired", NULL, f_gvk};
static const fbc_gt_field f_bobj[] = {F("data", &t_bytes), END};
const fbc_gt_type fbc_gt_prop_bundle_object = {FBC_GT_STRUCT, "property.BundleObject", NULL,
					       f_bobj};
static const fbc_gt_field f_pchannel[] = {F("channelName", &t_string), END};
const fbc_gt_type fbc_gt_prop_channel = {FBC_GT_STRUCT, "property.Channel", NULL, f_pchannel};

/* olm.csv.metadata: the operator-framework/api v1alpha1 types it embeds. */
static const fbc_gt_field f_resref[] = {F("name", &t_string), F("kind", &t_string),
					F("version", &t_string), END};
static const fbc_gt_type t_resref = {FBC_GT_STRUCT, "v1alpha1.APIResourceReference", NULL,
				     f_resref};
static const fbc_gt_type t_resrefs = {FBC_GT_ARRAY, "[]v1alpha1.APIResourceReference", &t_resref,
				      NULL};
static const fbc_gt_field f_descr[] = {F("path", &t_string),	    F("displayName", &t_string),
				       F("description", &t_string), F("x-descriptors", &t_strings),
				       F("value", &t_raw),	    END};
static const fbc_gt_type t_statusd = {FBC_GT_STRUCT, "v1alpha1.StatusDescriptor", NULL, f_descr};
static const fbc_gt_type t_statusds = {FBC_GT_ARRAY, "[]v1alpha1.StatusDescriptor", &t_statusd,
				       NULL};
static const fbc_gt_type t_specd = {FBC_GT_STRUCT, "v1alpha1.SpecDescriptor", NULL, f_descr};
static const fbc_gt_type t_specds = {FBC_GT_ARRAY, "[]v1alpha1.SpecDescriptor", &t_specd, NULL};
static const fbc_gt_field f_actd[] = {F("path", &t_string), F("displayName", &t_string),
				      F("description", &t_string), F("x-descriptors", &t_strings),
				      END};
static const fbc_gt_type t_actd = {FBC_GT_STRUCT, "v1alpha1.ActionDescriptor", NULL, f_actd};
static const fbc_gt_type t_actds = {FBC_GT_ARRAY, "[]v1alpha1.ActionDescriptor", &t_actd, NULL};
static const fbc_gt_field f_crdd[] = {F("name", &t_string),
				      F("version", &t_string),
				      F("kind", &t_string),
				      F("displayName", &t_string),
				      F("description", &t_string),
				      F("resources", &t_resrefs),
				      F("statusDescriptors", &t_statusds),
				      F("specDescriptors", &t_specds),
				      F("actionDescriptors", &t_actds),
				      END};
static const fbc_gt_type t_crdd = {FBC_GT_STRUCT, "v1alpha1.CRDDescription", NULL, f_crdd};
static const fbc_gt_type t_crdds = {FBC_GT_ARRAY, "[]v1alpha1.CRDDescription", &t_crdd, NULL};
static const fbc_gt_field f_crds[] = {F("owned", &t_crdds), F("required", &t_crdds), END};
static const fbc_gt_type t_crds = {FBC_GT_STRUCT, "v1alpha1.CustomResourceDefinitions", NULL,
				   f_crds};
static const fbc_gt_field f_apisd[] = {F("name", &t_string),
				       F("group", &t_string),
				       F("version", &t_string),
				       F("kind", &t_string),
				       F("deploymentName", &t_string),
				       F("containerPort", &t_int32),
				       F("displayName", &t_string),
				       F("description", &t_string),
				       F("resources", &t_resrefs),
				       F("statusDescriptors", &t_statusds),
				       F("specDescriptors", &t_specds),
				       F("actionDescriptors", &t_actds),
				       END};
static const fbc_gt_type t_apisd = {FBC_GT_STRUCT, "v1alpha1.APIServiceDescription", NULL, f_apisd};
static const fbc_gt_type t_apisds = {FBC_GT_ARRAY, "[]v1alpha1.APIServiceDescription", &t_apisd,
				     NULL};
static const fbc_gt_field f_apis[] = {F("owned", &t_apisds), F("required", &t_apisds), END};
static const fbc_gt_type t_apis = {FBC_GT_STRUCT, "v1alpha1.APIServiceDefinitions", NULL, f_apis};
static const fbc_gt_field f_imode[] = {F("type", &t_string), F("supported", &t_bool), END};
static const fbc_gt_type t_imode = {FBC_GT_STRUCT, "v1alpha1.InstallMode", NULL, f_imode};
static const fbc_gt_type t_imodes = {FBC_GT_ARRAY, "[]v1alpha1.InstallMode", &t_imode, NULL};
static const fbc_gt_field f_link[] = {F("name", &t_string), F("url", &t_string), END};
static const fbc_gt_type t_link = {FBC_GT_STRUCT, "v1alpha1.AppLink", NULL, f_link};
static const fbc_gt_type t_links = {FBC_GT_ARRAY, "[]v1alpha1.AppLink", &t_link, NULL};
static const fbc_gt_field f_maint[] = {F("name", &t_string), F("email", &t_string), END};
static const fbc_gt_type t_maint = {FBC_GT_STRUCT, "v1alpha1.Maintainer", NULL, f_maint};
static const fbc_gt_type t_maints = {FBC_GT_ARRAY, "[]v1alpha1.Maintainer", &t_maint, NULL};
static const fbc_gt_field f_mgvk[] = {F("group", &t_string), F("version", &t_string),
				      F("kind", &t_string), END};
static const fbc_gt_type t_mgvk = {FBC_GT_STRUCT, "v1.GroupVersionKind", NULL, f_mgvk};
static const fbc_gt_type t_mgvks = {FBC_GT_ARRAY, "[]v1.GroupVersionKind", &t_mgvk, NULL};
static const fbc_gt_field f_csvmeta[] = {F("annotations", &t_strmap),
					 F("apiServiceDefinitions", &t_apis),
					 F("crdDescriptions", &t_crds),
					 F("description", &t_string),
					 F("displayName", &t_string),
					 F("installModes", &t_imodes),
					 F("keywords", &t_strings),
					 F("labels", &t_strmap),
					 F("links", &t_links),
					 F("maintainers", &t_maints),
					 F("maturity", &t_string),
					 F("minKubeVersion", &t_string),
					 F("nativeAPIs", &t_mgvks),
					 F("provider", &t_link),
					 END};
const fbc_gt_type fbc_gt_prop_csv_metadata = {FBC_GT_STRUCT, "property.CSVMetadata", NULL,
					      f_csvmeta};

const fbc_gt_type *fbc_gt_for_property(const char *type)
{
	if (strcmp(type, "olm.package") == 0)
		return &fbc_gt_prop_package;
	if (strcmp(type, "olm.package.required") == 0)
		return &fbc_gt_prop_package_required;
	if (strcmp(type, "olm.gvk") == 0)
		return &fbc_gt_prop_gvk;
	if (strcmp(type, "olm.gvk.required") == 0)
		return &fbc_gt_prop_gvk_required;
	if (strcmp(type, "olm.bundle.object") == 0)
		return &fbc_gt_prop_bundle_object;
	if (strcmp(type, "olm.csv.metadata") == 0)
		return &fbc_gt_prop_csv_metadata;
	if (strcmp(type, "olm.channel") == 0)
		return &fbc_gt_prop_channel;
	return NULL;
}

/* ------------------------------------------------------------------ */
/* Go encoding/json imitation                                          */

typedef struct gt_ctx {
	const char *structname; /* innermost struct (short name), NULL at the top */
	char path[512];
	size_t plen;
	fbc_buf *msg;
	bool fast; /* members in storage order: only "does it decode" counts */
} gt_ctx;

static const char *short_name(const char *goname)
{
	const char *dot = strrchr(goname, '.');

	return dot ? dot + 1 : goname;
}

static int type_error(gt_ctx *c, const char *value, const fbc_gt_type *t)
{
	int rc;

	if (c->structname)
		rc = fbc_buf_printf(
			c->msg, "json: cannot unmarshal %s into Go struct field %s.%s of type %s",
			value, c->structname, c->path, t->goname);
	else
		rc = fbc_buf_printf(c->msg, "json: cannot unmarshal %s into Go value of type %s",
				    value, t->goname);
	return rc ? rc : 1;
}

static int cmp_cstr(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Object keys in sorted order (malloc'd array of borrowed keys). */
static const char **sorted_keys(const json_t *obj, size_t *n_out)
{
	size_t n = json_object_size(obj), i = 0;
	const char **keys = malloc((n ? n : 1) * sizeof(*keys));
	const char *k;
	json_t *v;

	if (!keys)
		return NULL;
	json_object_foreach((json_t *)obj, k, v)
	{
		(void)v;
		keys[i++] = k;
	}
	qsort(keys, i, sizeof(*keys), cmp_cstr);
	*n_out = i;
	return keys;
}

static int check(const fbc_gt_type *t, const json_t *v, gt_ctx *c, int depth);

static int check_struct(const fbc_gt_type *t, const json_t *v, gt_ctx *c, int depth)
{
	const char **keys = NULL;
	size_t n = 0, i;
	int rc = 0;
	void *it = NULL;

	if (c->fast) {
		it = json_object_iter((json_t *)v);
		n = json_object_size(v);
	} else if (!(keys = sorted_keys(v, &n))) {
		return FBC_ENOMEM;
	}
	for (i = 0; i < n && rc == 0; i++) {
		const char *key = keys ? keys[i] : json_object_iter_key(it);
		size_t kl = keys ? strlen(key) : json_object_iter_key_len(it);
		const json_t *val = keys ? json_object_get(v, key) : json_object_iter_value(it);
		const fbc_gt_field *f = fbc_gt_find_field(t, key, kl);
		const char *saved_struct = c->structname;

		if (it)
			it = json_object_iter_next((json_t *)v, it);
		size_t saved_len = c->plen, fl;

		if (!f)
			continue;
		if (c->fast) {
			/* only whether it decodes: no path for a message */
			rc = check(f->type, val, c, depth + 1);
			continue;
		}
		fl = f->len;
		if (c->plen + fl + 2 < sizeof(c->path)) {
			if (c->plen)
				c->path[c->plen++] = '.';
			memcpy(c->path + c->plen, f->name, fl + 1);
			c->plen += fl;
		}
		c->structname = short_name(t->goname);
		rc = check(f->type, val, c, depth + 1);
		c->structname = saved_struct;
		c->plen = saved_len;
		c->path[c->plen] = '\0';
	}
	free(keys);
	return rc;
}

static int check(const fbc_gt_type *t, const json_t *v, gt_ctx *c, int depth)
{
	size_t i, bad;
	int rc;

	if (!v || json_is_null(v) || t->kind == FBC_GT_ANY)
		return 0;
	if (depth > 64)
		return 0; /* the tables are not that deep; defensive only */
	switch (t->kind) {
	case FBC_GT_STRING:
		return json_is_string(v) ? 0 : type_error(c, fbc_gt_json_kind(v), t);
	case FBC_GT_BOOL:
		return json_is_boolean(v) ? 0 : type_error(c, fbc_gt_json_kind(v), t);
	case FBC_GT_INT: {
		/* the only integer field is an int32 (containerPort): Go rejects
		 * fractions and values out of its range alike */
		char num[64];

		if (json_is_integer(v)) {
			json_int_t n = json_integer_value(v);

			if (n >= INT32_MIN && n <= INT32_MAX)
				return 0;
			snprintf(num, sizeof(num), "number %" JSON_INTEGER_FORMAT, n);
			return type_error(c, num, t);
		}
		if (json_is_real(v)) {
			double d = json_real_value(v);

			if (d >= INT32_MIN && d <= INT32_MAX && d == (double)(long long)d)
				return 0;
			snprintf(num, sizeof(num), "number %g", d);
			return type_error(c, num, t);
		}
		return type_error(c, fbc_gt_json_kind(v), t);
	}
	case FBC_GT_BYTES:
		if (!json_is_string(v))
			return type_error(c, fbc_gt_json_kind(v), t);
		rc = fbc_base64_decode(NULL, NULL, &bad, json_string_value(v),
				       json_string_length(v));
		if (rc == FBC_EPARSE) {
			rc = fbc_buf_printf(c->msg, "illegal base64 data at input byte %zu", bad);
			return rc ? rc : 1;
		}
		return rc;
	case FBC_GT_ARRAY:
		if (!json_is_array(v))
			return type_error(c, fbc_gt_json_kind(v), t);
		for (i = 0; i < json_array_size(v); i++) {
			if ((rc = check(t->elem, json_array_get(v, i), c, depth + 1)))
				return rc;
		}
		return 0;
	case FBC_GT_MAP: {
		const char **keys;
		size_t n = 0;

		if (!json_is_object(v))
			return type_error(c, fbc_gt_json_kind(v), t);
		if (c->fast) {
			const char *k;
			json_t *mv;

			rc = 0;
			json_object_foreach((json_t *)v, k, mv)
			{
				(void)k;
				if ((rc = check(t->elem, mv, c, depth + 1)))
					break;
			}
			return rc;
		}
		keys = sorted_keys(v, &n);
		if (!keys)
			return FBC_ENOMEM;
		rc = 0;
		for (i = 0; i < n && rc == 0; i++)
			rc = check(t->elem, json_object_get(v, keys[i]), c, depth + 1);
		free(keys);
		return rc;
	}
	case FBC_GT_STRUCT:
		if (!json_is_object(v))
			return type_error(c, fbc_gt_json_kind(v), t);
		return check_struct(t, v, c, depth);
	default:
		return 0;
	}
}

int fbc_gt_check(const fbc_gt_type *t, const json_t *v, fbc_buf *msg)
{
	size_t saved = msg ? msg->len : 0;
	gt_ctx c;
	int rc;

	/* Whether v decodes does not depend on the order of its members, so
	 * first check them as stored, without sorting any keys; only on an
	 * error check again in Go's order (opm re-serialises blobs with sorted
	 * keys), which decides the error that Go reports. */
	memset(&c, 0, sizeof(c));
	c.msg = msg;
	c.fast = true;
	rc = check(t, v, &c, 0);
	if (rc == 0)
		return 0;
	if (msg && msg->data) {
		msg->len = saved;
		msg->data[saved] = '\0';
	}
	memset(&c, 0, sizeof(c));
	c.msg = msg;
	return check(t, v, &c, 0);
}

static bool all_lower(const char *s)
{
	for (; *s; s++) {
		if (*s >= 'A' && *s <= 'Z')
			return false;
	}
	return true;
}

static json_t *member(const json_t *obj, const char *name, bool allow_null)
{
	const char *k, *best_key = NULL;
	size_t klen, nlen;
	json_t *v, *best = NULL;

	if (!obj || !json_is_object(obj))
		return NULL;
	v = json_object_get(obj, name);
	if (v && json_object_size(obj) == 1)
		return (!allow_null && json_is_null(v)) ? NULL : v;
	/* Another key equal to an all-lowercase name ignoring case has an
	 * uppercase letter where the name has its lowercase one, so it sorts
	 * below the name: the exact key wins unless it is a null not allowed. */
	if (v && (allow_null || !json_is_null(v)) && all_lower(name))
		return v;
	nlen = strlen(name);
	json_object_keylen_foreach((json_t *)obj, k, klen, v)
	{
		/* keys equal ignoring ASCII case have the same length */
		if (klen != nlen || strcasecmp(k, name) != 0 || (!allow_null && json_is_null(v)))
			continue;
		if (!best_key || strcmp(k, best_key) > 0) {
			best_key = k;
			best = v;
		}
	}
	return best;
}

void fbc_gt_members(const json_t *obj, const char *const *names, size_t n, unsigned nulls,
		    json_t **out)
{
	size_t lens[FBC_GT_MEMBERS_MAX];
	const char *best[FBC_GT_MEMBERS_MAX];
	const char *k;
	size_t klen, i;
	json_t *v;

	for (i = 0; i < n; i++) {
		out[i] = NULL;
		best[i] = NULL;
		lens[i] = strlen(names[i]);
	}
	if (!obj || !json_is_object(obj))
		return;
	json_object_keylen_foreach((json_t *)obj, k, klen, v)
	{
		for (i = 0; i < n; i++) {
			/* keys equal ignoring ASCII case have the same length */
			if (klen != lens[i] ||
			    (memcmp(k, names[i], klen) != 0 && strcasecmp(k, names[i]) != 0))
				continue;
			if ((json_is_null(v) && !(nulls >> i & 1)) ||
			    (best[i] && strcmp(k, best[i]) <= 0))
				break;
			best[i] = k;
			out[i] = v;
			break; /* the names differ ignoring case: no other takes it */
		}
	}
}

json_t *fbc_gt_get(const json_t *obj, const char *name)
{
	return member(obj, name, false);
}

const char *fbc_gt_get_str(const json_t *obj, const char *name)
{
	json_t *v = member(obj, name, false);

	return json_is_string(v) ? json_string_value(v) : "";
}

/* ------------------------------------------------------------------ */
/* Go %q and compact JSON                                              */

int fbc_buf_put_goquote(fbc_buf *b, const char *s)
{
	static const char hex[] = "0123456789abcdef";
	int rc = fbc_buf_putc(b, '"');

	for (; *s && rc == 0; s++) {
		unsigned char c = (unsigned char)*s;

		switch (c) {
		case '"':
			rc = fbc_buf_puts(b, "\\\"");
			break;
		case '\\':
			rc = fbc_buf_puts(b, "\\\\");
			break;
		case '\n':
			rc = fbc_buf_puts(b, "\\n");
			break;
		case '\r':
			rc = fbc_buf_puts(b, "\\r");
			break;
		case '\t':
			rc = fbc_buf_puts(b, "\\t");
			break;
		default:
			if (c < 0x20 || c == 0x7f) {
				char e[5] = {'\\', 'x', hex[c >> 4], hex[c & 15], 0};

				rc = fbc_buf_puts(b, e);
			} else {
				rc = fbc_buf_putc(b, (char)c);
			}
		}
	}
	return rc ? rc : fbc_buf_putc(b, '"');
}

const char *fbc_goquote(char *dst, size_t size, const char *s)
{
	fbc_buf b;

	fbc_buf_init(&b, size > 1 ? size - 1 : 1);
	if (fbc_buf_put_goquote(&b, s) == 0 && b.data) {
		snprintf(dst, size, "%s", b.data);
	} else {
		/* Too long for the message: cut it, keep it quoted. */
		snprintf(dst, size, "\"%.*s...\"", size > 8 ? (int)(size - 8) : 0, s);
	}
	fbc_buf_dispose(&b);
	return dst;
}

/*
 * Canonical compact JSON, byte for byte what jansson's json_dumps gives with
 * JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY, without its per-call
 * allocations (a key array and a strbuffer per dump): keys are sorted on a
 * stack array (insertion sort for small objects), text goes to a reusable
 * fbc_buf.
 */

#define CANON_STACK_KEYS 16

typedef struct canon_key {
	const char *k;
	size_t len;
	const json_t *v;
} canon_key;

static int canon_key_cmp(const canon_key *a, const canon_key *b)
{
	size_t n = a->len < b->len ? a->len : b->len;
	int c = memcmp(a->k, b->k, n);

	return c ? c : (a->len > b->len) - (a->len < b->len);
}

static int canon_key_qcmp(const void *a, const void *b)
{
	return canon_key_cmp(a, b);
}

/* Bytes that need an escape in a JSON string: controls, '"' and '\\'. */
static const unsigned char canon_esc[256] = {
	[0] = 1,  [1] = 1,  [2] = 1,  [3] = 1,	[4] = 1,  [5] = 1,   [6] = 1,	 [7] = 1,  [8] = 1,
	[9] = 1,  [10] = 1, [11] = 1, [12] = 1, [13] = 1, [14] = 1,  [15] = 1,	 [16] = 1, [17] = 1,
	[18] = 1, [19] = 1, [20] = 1, [21] = 1, [22] = 1, [23] = 1,  [24] = 1,	 [25] = 1, [26] = 1,
	[27] = 1, [28] = 1, [29] = 1, [30] = 1, [31] = 1, ['"'] = 1, ['\\'] = 1,
};

static int canon_string(fbc_buf *b, const char *s, size_t n)
{
	static const char hex[] = "0123456789ABCDEF";
	const unsigned char *u = (const unsigned char *)s;
	size_t i = 0;
	char *o;
	int rc;

	/* room for the common case (nothing to escape) in one go */
	if ((rc = fbc_buf_reserve(b, n + 2)))
		return rc;
	o = b->data + b->len;
	*o++ = '"';
	for (;;) {
		size_t start = i;
		char e[6];
		size_t el = 2;

		for (uint64_t w; n - i >= 8; i += 8) {
			memcpy(&w, u + i, 8);
			if (fbc_word_has_below(w, 0x20) || fbc_word_has_byte(w, '"') ||
			    fbc_word_has_byte(w, '\\'))
				break;
		}
		while (i < n && !canon_esc[u[i]])
			i++;
		memcpy(o, s + start, i - start);
		o += i - start;
		if (i == n)
			break;
		e[0] = '\\';
		switch (u[i]) {
		case '"':
		case '\\':
			e[1] = (char)u[i];
			break;
		case '\b':
			e[1] = 'b';
			break;
		case '\f':
			e[1] = 'f';
			break;
		case '\n':
			e[1] = 'n';
			break;
		case '\r':
			e[1] = 'r';
			break;
		case '\t':
			e[1] = 't';
			break;
		default:
			e[1] = 'u';
			e[2] = '0';
			e[3] = '0';
			e[4] = hex[u[i] >> 4];
			e[5] = hex[u[i] & 15];
			el = 6;
		}
		i++;
		/* an escape grows the text: keep room for the rest plus the quote */
		b->len = (size_t)(o - b->data);
		if ((rc = fbc_buf_reserve(b, el + (n - i) + 1)))
			return rc;
		o = b->data + b->len;
		memcpy(o, e, el);
		o += el;
	}
	*o++ = '"';
	b->len = (size_t)(o - b->data);
	return 0;
}

/* One byte; the buffer has room or grows. */
static inline int canon_putc(fbc_buf *b, char c)
{
	if (b->len + 1 < b->cap) {
		b->data[b->len++] = c;
		return 0;
	}
	return fbc_buf_putc(b, c);
}

/* jansson's jsonp_dtostr with precision 17: "%.17g", a ".0" when the text
 * would read back as an integer, no '+' and no leading zeros in exponents. */
static int canon_real(fbc_buf *b, double d)
{
	char t[64];
	int n = snprintf(t, sizeof(t) - 3, "%.17g", d);
	char *e;

	if (n < 0 || (size_t)n >= sizeof(t) - 3)
		return FBC_EINVAL;
	if (!strchr(t, '.') && !strchr(t, 'e')) {
		t[n++] = '.';
		t[n++] = '0';
		t[n] = 0;
	}
	e = strchr(t, 'e');
	if (e) {
		char *start = e + 1, *end = e + 2;

		if (*start == '-')
			start++;
		while (*end == '0')
			end++;
		if (end != start) {
			memmove(start, end, (size_t)(t + n - end) + 1);
			n -= (int)(end - start);
		}
	}
	return fbc_buf_append(b, t, (size_t)n);
}

static int canon(fbc_buf *b, const json_t *v)
{
	char num[32];
	int rc, n;

	switch (json_typeof(v)) {
	case JSON_OBJECT: {
		canon_key stack[CANON_STACK_KEYS], *keys = stack;
		size_t cnt = json_object_size(v), i = 0, j;
		const char *k;
		size_t klen;
		json_t *child;

		if (cnt > CANON_STACK_KEYS && !(keys = malloc(cnt * sizeof(*keys))))
			return FBC_ENOMEM;
		json_object_keylen_foreach((json_t *)v, k, klen, child)
		{
			canon_key ck = {k, klen, child};

			if (cnt <= CANON_STACK_KEYS) {
				for (j = i; j > 0 && canon_key_cmp(&keys[j - 1], &ck) > 0; j--)
					keys[j] = keys[j - 1];
				keys[j] = ck;
			} else {
				keys[i] = ck;
			}
			i++;
		}
		if (cnt > CANON_STACK_KEYS)
			qsort(keys, i, sizeof(*keys), canon_key_qcmp);
		rc = canon_putc(b, '{');
		for (j = 0; j < i && !rc; j++) {
			if (j && (rc = canon_putc(b, ',')))
				break;
			if ((rc = canon_string(b, keys[j].k, keys[j].len)) ||
			    (rc = canon_putc(b, ':')))
				break;
			rc = canon(b, keys[j].v);
		}
		if (keys != stack)
			free(keys);
		return rc ? rc : canon_putc(b, '}');
	}
	case JSON_ARRAY: {
		size_t i, cnt = json_array_size(v);

		rc = canon_putc(b, '[');
		for (i = 0; i < cnt && !rc; i++) {
			if (i && (rc = canon_putc(b, ',')))
				break;
			rc = canon(b, json_array_get(v, i));
		}
		return rc ? rc : canon_putc(b, ']');
	}
	case JSON_STRING:
		return canon_string(b, json_string_value(v), json_string_length(v));
	case JSON_INTEGER:
		n = snprintf(num, sizeof(num), "%" JSON_INTEGER_FORMAT, json_integer_value(v));
		return fbc_buf_append(b, num, (size_t)n);
	case JSON_REAL:
		return canon_real(b, json_real_value(v));
	case JSON_TRUE:
		return fbc_buf_append(b, "true", 4);
	case JSON_FALSE:
		return fbc_buf_append(b, "false", 5);
	default:
		return fbc_buf_append(b, "null", 4);
	}
}

int fbc_json_canonical(fbc_buf *out, const json_t *v)
{
	fbc_buf_reset(out);
	return canon(out, v);
}

const char *fbc_json_compact_buf(fbc_arena *a, fbc_buf *scratch, const json_t *v, size_t *len_out)
{
	const char *r;

	if (fbc_json_canonical(scratch, v))
		return NULL;
	r = fbc_arena_strndup(a, scratch->data ? scratch->data : "", scratch->len);
	if (r && len_out)
		*len_out = scratch->len;
	return r;
}

const char *fbc_json_compact(fbc_arena *a, const json_t *v, size_t *len_out)
{
	fbc_buf b;
	const char *r;

	fbc_buf_init(&b, 0);
	r = fbc_json_compact_buf(a, &b, v, len_out);
	fbc_buf_dispose(&b);
	return r;
}

/* ------------------------------------------------------------------ */
/* Typed decoding of metas                                             */

/* A finding of the prepare stage, replayed into the diags at commit. */
typedef struct prep_finding {
	struct prep_finding *next;
	const char *code, *pkg, *bundle, *message;
	int line;
} prep_finding;

/* The result of fbc_catalog_prepare_meta, in the worker's arena. */
struct fbc_prepared {
	int kind; /* P_* */
	void *rec;
	prep_finding *first, **tail;
	int rc; /* a hard error (out of memory) */
};

enum { P_NONE, P_PACKAGE, P_CHANNEL, P_BUNDLE, P_DEPRECATION, P_OTHER };

typedef struct dctx {
	fbc_catalog *cat; /* read-only while preparing: limits */
	fbc_arena *arena; /* where records go */
	fbc_buf *scratch; /* canonical JSON text */
	fbc_prepared *pp; /* prepare stage: findings and the record go here */
	const fbc_meta *meta;
	fbc_diags *diags;
	fbc_loc loc;
	fbc_error *err;
} dctx;

static int finding(dctx *d, const char *code, const char *pkg, const char *bundle, const char *fmt,
		   ...) __attribute__((format(printf, 5, 6)));
static int finding(dctx *d, const char *code, const char *pkg, const char *bundle, const char *fmt,
		   ...)
{
	va_list ap;
	int rc;

	if (d->pp) {
		prep_finding *f = fbc_arena_calloc(d->arena, 1, sizeof(*f));
		char *msg = NULL;

		va_start(ap, fmt);
		rc = vasprintf(&msg, fmt, ap);
		va_end(ap);
		if (!f || rc < 0 || !(f->message = fbc_arena_strdup(d->arena, msg))) {
			free(rc < 0 ? NULL : msg);
			return fbc_error_set(d->err, FBC_ENOMEM, NULL,
					     "recording a finding: out of memory");
		}
		free(msg);
		f->code = code;
		f->pkg = pkg;
		f->bundle = bundle;
		f->line = d->loc.line;
		*d->pp->tail = f;
		d->pp->tail = &f->next;
		return 0;
	}
	if (!d->diags)
		return 0;
	va_start(ap, fmt);
	rc = fbc_diags_vadd(d->diags, code, &d->loc, pkg, NULL, bundle, fmt, ap);
	va_end(ap);
	return rc ? fbc_error_set(d->err, rc, NULL, "recording a finding: out of memory") : 0;
}

static int oom(dctx *d)
{
	return fbc_error_set(d->err, FBC_ENOMEM, d->loc.file, "out of memory decoding a blob");
}

/* An arena copy of a string field; "" (static) when empty. */
static const char *dup_str(dctx *d, const char *s)
{
	if (!s || !*s)
		return "";
	return fbc_arena_strdup(d->arena, s);
}

#define DUP(d, var, s)                            \
	do {                                      \
		if (!((var) = dup_str((d), (s)))) \
			return oom(d);            \
	} while (0)

static int intern_file(dctx *d)
{
	const char *f = d->meta->loc.file;
	char *copy;
	void *v;

	d->loc.line = d->meta->loc.line;
	d->loc.file = NULL;
	if (!f)
		return 0;
	if (d->pp) {
		d->loc.file = f; /* borrowed until commit interns it */
		return 0;
	}
	v = fbc_strmap_get(&d->cat->files, f);
	if (v) {
		d->loc.file = v;
		return 0;
	}
	copy = fbc_arena_strdup(d->arena, f);
	if (!copy || fbc_strmap_add(&d->cat->files, copy, copy) < 0)
		return oom(d);
	d->loc.file = copy;
	return 0;
}

/* The typed check (L10): records "parse <what>: <go error>" and returns 1
 * when the blob does not decode; decoding then goes on best-effort so that
 * later rules still see the rest of the blob. */
static int typed_check(dctx *d, const fbc_gt_type *t, const char *what, const char *pkg)
{
	fbc_buf msg;
	int rc;

	fbc_buf_init(&msg, 4096);
	rc = fbc_gt_check(t, d->meta->blob, &msg);
	if (rc == 1)
		rc = finding(d, "L10", pkg && *pkg ? pkg : NULL, NULL, "parse %s: %s", what,
			     msg.data ? msg.data : "invalid");
	else if (rc < 0 && rc != FBC_ELIMIT)
		rc = oom(d);
	else
		rc = 0;
	fbc_buf_dispose(&msg);
	return rc;
}

const char FBC_PROPERTY_NOT_KEPT[] = "";
const char FBC_IMAGE_NOT_KEPT[] = "(image not kept: the catalog was loaded to be validated)";

/* The property types every bundle repeats, shared instead of copied (a
 * catalog holds one per property: thousands). */
static const struct known {
	const char *s;
	size_t n;
} known_types[] = {
#define K(t)                     \
	{                        \
		t, sizeof(t) - 1 \
	}
	K("olm.package"),
	K("olm.gvk"),
	K("olm.gvk.required"),
	K("olm.package.required"),
	K("olm.csv.metadata"),
	K("olm.bundle.object"),
	K("olm.channel"),
	K("olm.constraint"),
	K("olm.maxOpenShiftVersion"),
	K("olm.deprecated"),
	K("olm.substitutesFor"),
#undef K
};
/* by position in known_types: keep in step with the list above */
#define KNOWN_CSV_METADATA  (known_types[4].s)
#define KNOWN_BUNDLE_OBJECT (known_types[5].s)

/* Whether t (a shared copy) is one of the types derive_from_values reads:
 * olm.package, olm.gvk, olm.gvk.required, olm.package.required. */
static bool is_derived_type(const char *t)
{
	return t == known_types[0].s || t == known_types[1].s || t == known_types[2].s ||
	       t == known_types[3].s;
}

/* The shared copy of t, or NULL for any other text. */
static const char *known_type(const char *t)
{
	size_t n = strlen(t);

	for (size_t i = 0; i < sizeof(known_types) / sizeof(known_types[0]); i++) {
		if (known_types[i].n == n && memcmp(t, known_types[i].s, n) == 0)
			return known_types[i].s;
	}
	return NULL;
}

/* C11's verdict on one value, with the same message buffer bound as the
 * validator's own check; anything but a plain verdict is left undecided. */
static int check_value(dctx *d, fbc_property_check *pc, const char *type, const json_t *val)
{
	const fbc_gt_type *t = fbc_gt_for_property(type);
	fbc_buf msg;
	int rc;

	/* bundle objects: L11 checks them at load and C11 skips them */
	if (!t || !val || t == &fbc_gt_prop_bundle_object)
		return 0;
	fbc_buf_init(&msg, 2048);
	rc = fbc_gt_check(t, val, &msg);
	if (rc == 0) {
		pc->state = 1;
	} else if (rc == 1) {
		pc->state = -1;
		pc->error = fbc_arena_strdup(d->arena, msg.data ? msg.data : "invalid");
		if (!pc->error)
			rc = FBC_ENOMEM;
	}
	fbc_buf_dispose(&msg);
	return rc < 0 && rc != FBC_ELIMIT ? oom(d) : 0;
}

/* checks_out: when set, the C11 verdict of every property too (bundles). */
static int decode_properties(dctx *d, const json_t *arr, fbc_property **out, size_t *n_out,
			     fbc_property_check **checks_out)
{
	size_t n = json_array_size(arr), i, k = 0;
	fbc_property *props;
	fbc_property_check *checks = NULL;

	*out = NULL;
	*n_out = 0;
	if (!json_is_array(arr) || n == 0)
		return 0;
	props = fbc_arena_calloc(d->arena, n, sizeof(*props));
	if (!props)
		return oom(d);
	if (checks_out && !(checks = fbc_arena_calloc(d->arena, n, sizeof(*checks))))
		return oom(d);
	for (i = 0; i < n; i++) {
		static const char *const prop_keys[] = {"type", "value"};
		const json_t *p = json_array_get(arr, i);
		json_t *val, *m[2];

		/* Go decodes a null element as the zero Property (no type, no
		 * value: C11 for a bundle); other non-objects are L10 */
		if (!json_is_object(p) && !json_is_null(p))
			continue;
		fbc_gt_members(p, prop_keys, 2, 2u /* a null value too */, m);
		if (!(props[k].type = known_type(fbc_gt_str(m[0]))))
			DUP(d, props[k].type, fbc_gt_str(m[0]));
		val = m[1];
		if (val) {
			if (checks && check_value(d, &checks[k], props[k].type, val))
				return FBC_ENOMEM;
			/* in a catalog loaded to be validated: an olm.csv.metadata that
			 * decodes (C11), and every olm.bundle.object (L11 reads the
			 * parsed blob, C11 skips them), are never read again; when
			 * only validation reads it (validate_lean), nor is a valid
			 * olm.package, olm.gvk, olm.gvk.required or
			 * olm.package.required value: derive_from_values reads them
			 * from this tree, and validation reads the derived fields */
			if (d->cat->limits.validate_only &&
			    ((checks && checks[k].state > 0 &&
			      (props[k].type == KNOWN_CSV_METADATA ||
			       (d->cat->limits.validate_lean && is_derived_type(props[k].type)))) ||
			     props[k].type == KNOWN_BUNDLE_OBJECT)) {
				props[k].value = FBC_PROPERTY_NOT_KEPT;
				props[k].value_len = 0;
				k++;
				continue;
			}
			props[k].value = fbc_json_compact_buf(d->arena, d->scratch, val,
							      &props[k].value_len);
			if (!props[k].value)
				return oom(d);
		}
		k++;
	}
	*out = props;
	*n_out = k;
	if (checks_out)
		*checks_out = checks;
	return 0;
}

static int push_ptr(dctx *d, fbc_vec *v, void *p)
{
	void **slot;

	if (d->pp) {
		d->pp->rec = p;
		d->pp->kind = v == &d->cat->packages	   ? P_PACKAGE
			      : v == &d->cat->channels	   ? P_CHANNEL
			      : v == &d->cat->bundles	   ? P_BUNDLE
			      : v == &d->cat->deprecations ? P_DEPRECATION
							   : P_OTHER;
		return 0;
	}
	slot = fbc_vec_push(v);

	if (!slot)
		return oom(d);
	*slot = p;
	return 0;
}

static int decode_package(dctx *d)
{
	const json_t *blob = d->meta->blob;
	fbc_package *p = fbc_arena_calloc(d->arena, 1, sizeof(*p));
	json_t *icon;
	int rc;

	if (!p)
		return oom(d);
	DUP(d, p->name, fbc_gt_get_str(blob, "name"));
	if ((rc = typed_check(d, &fbc_gt_package, "package", p->name)))
		return rc;
	DUP(d, p->default_channel, fbc_gt_get_str(blob, "defaultChannel"));
	DUP(d, p->description, fbc_gt_get_str(blob, "description"));
	icon = fbc_gt_get(blob, "icon");
	if (json_is_object(icon)) {
		DUP(d, p->icon_data, fbc_gt_get_str(icon, "base64data"));
		DUP(d, p->icon_mediatype, fbc_gt_get_str(icon, "mediatype"));
	}
	if ((rc = decode_properties(d, fbc_gt_get(blob, "properties"), &p->properties,
				    &p->n_properties, NULL)))
		return rc;
	p->loc = d->loc;
	return push_ptr(d, &d->cat->packages, p);
}

static int decode_channel(dctx *d)
{
	static const char *const channel_keys[] = {"name", "package", "entries", "properties"};
	static const char *const entry_keys[] = {"name", "replaces", "skipRange", "skips"};
	const json_t *blob = d->meta->blob, *entries;
	fbc_channel *c = fbc_arena_calloc(d->arena, 1, sizeof(*c));
	json_t *m[4];
	size_t i, n;
	int rc;

	if (!c)
		return oom(d);
	fbc_gt_members(blob, channel_keys, 4, 0, m);
	DUP(d, c->name, fbc_gt_str(m[0]));
	DUP(d, c->package, fbc_gt_str(m[1]));
	if ((rc = typed_check(d, &fbc_gt_channel, "channel", c->package)))
		return rc;
	entries = m[2];
	n = json_is_array(entries) ? json_array_size(entries) : 0;
	if (n) {
		c->entries = fbc_arena_calloc(d->arena, n, sizeof(*c->entries));
		if (!c->entries)
			return oom(d);
	}
	for (i = 0; i < n; i++) {
		const json_t *e = json_array_get(entries, i), *skips;
		fbc_channel_entry *ce = &c->entries[c->n_entries];
		json_t *em[4];
		size_t j, ns;

		/* a null element is a zero entry (empty name), as in Go */
		if (!json_is_object(e) && !json_is_null(e))
			continue;
		fbc_gt_members(e, entry_keys, 4, 0, em);
		DUP(d, ce->name, fbc_gt_str(em[0]));
		DUP(d, ce->replaces, fbc_gt_str(em[1]));
		DUP(d, ce->skip_range, fbc_gt_str(em[2]));
		skips = em[3];
		ns = json_is_array(skips) ? json_array_size(skips) : 0;
		if (ns) {
			ce->skips = fbc_arena_calloc(d->arena, ns, sizeof(*ce->skips));
			if (!ce->skips)
				return oom(d);
		}
		for (j = 0; j < ns; j++) {
			const json_t *s = json_array_get(skips, j);

			if (json_is_string(s))
				DUP(d, ce->skips[ce->n_skips++], json_string_value(s));
			else if (json_is_null(s))
				ce->skips[ce->n_skips++] = ""; /* Go's zero string: V7 */
		}
		c->n_entries++;
	}
	if ((rc = decode_properties(d, m[3], &c->properties, &c->n_properties, NULL)))
		return rc;
	c->loc = d->loc;
	return push_ptr(d, &d->cat->channels, c);
}

static bool has_json_prefix(const unsigned char *p, size_t n)
{
	size_t i = 0;

	while (i < n && (p[i] == ' ' || p[i] == '\t' || p[i] == '\n' || p[i] == '\r' ||
			 p[i] == '\v' || p[i] == '\f'))
		i++;
	return i < n && p[i] == '{';
}

/* A bundle object's base64 data decoded into d->scratch, reused from one
 * object to the next (no fresh pages per object), or into a new allocation
 * (*owned) when the scratch buffer's bound is too small. */
static int object_data(dctx *d, const json_t *s, unsigned char **data, size_t *len, size_t *bad,
		       bool *owned)
{
	int rc =
		fbc_base64_decode_buf(d->scratch, bad, json_string_value(s), json_string_length(s));

	*owned = false;
	if (rc == 0) {
		*data = (unsigned char *)d->scratch->data;
		*len = d->scratch->len;
		return 0;
	}
	if (rc != FBC_ELIMIT)
		return rc;
	*owned = true;
	return fbc_base64_decode(data, len, bad, json_string_value(s), json_string_length(s));
}

/* L11: every olm.bundle.object must be {"data": base64} whose bytes convert
 * from YAML to JSON; the first ClusterServiceVersion becomes csv_json. */
/* A bundle's package and name as Go's %q for L11 messages, made when a
 * message needs them (most bundles have none). */
typedef struct quoted_names {
	char pkg[256], bundle[256];
	bool made;
} quoted_names;

static quoted_names *quote_names(quoted_names *q, const fbc_bundle *b)
{
	if (!q->made) {
		fbc_goquote(q->pkg, sizeof(q->pkg), b->package);
		fbc_goquote(q->bundle, sizeof(q->bundle), b->name);
		q->made = true;
	}
	return q;
}

static int read_bundle_objects(dctx *d, fbc_bundle *b, const json_t *props)
{
	quoted_names qn = {.made = false};
	size_t i, n = json_is_array(props) ? json_array_size(props) : 0;
	const char *pkg = *b->package ? b->package : NULL;
	int rc = 0;

	for (i = 0; i < n && rc == 0; i++) {
		const json_t *p = json_array_get(props, i);
		json_t *val, *obj = NULL, *only;
		unsigned char *data = NULL;
		bool owned = false; /* data was allocated, it is not d->scratch's */
		size_t len = 0, bad = 0;
		fbc_buf msg;
		fbc_error e;
		bool undecodable;

		if (!json_is_object(p) || strcmp(fbc_gt_get_str(p, "type"), "olm.bundle.object"))
			continue;
		b->n_bundle_objects++;
		val = member(p, "value", true);
		if (!val) {
			rc = finding(
				d, "L11", pkg, b->name,
				"read bundle objects: package %s, bundle %s: parse property at "
				"index %zu as bundle object: unexpected end of JSON input",
				quote_names(&qn, b)->pkg, quote_names(&qn, b)->bundle, i);
			continue;
		}
		/* The shape opm writes, {"data": STRING}: when the string decodes,
		 * the Go type check would pass as well (it decodes the same base64
		 * and there is nothing else to check), so decode it once. */
		only = json_object_size(val) == 1 ? json_object_get(val, "data") : NULL;
		if (json_is_string(only)) {
			rc = object_data(d, only, &data, &len, &bad, &owned);
			if (rc == FBC_ENOMEM)
				return oom(d);
			rc = 0;
		}
		if (!data) {
			fbc_buf_init(&msg, 4096);
			rc = fbc_gt_check(&fbc_gt_prop_bundle_object, val, &msg);
			undecodable = rc == 1;
			if (rc == 1)
				rc = finding(d, "L11", pkg, b->name,
					     "read bundle objects: package %s, bundle %s: parse "
					     "property at index %zu as bundle object: %s",
					     quote_names(&qn, b)->pkg, quote_names(&qn, b)->bundle,
					     i, msg.data ? msg.data : "invalid");
			else if (rc < 0)
				rc = oom(d);
			fbc_buf_dispose(&msg);
			if (rc || undecodable || !json_is_object(val))
				continue; /* a finding or a hard error (which ends the loop) */
		}
		if (!data && json_is_string(fbc_gt_get(val, "data"))) {
			json_t *s = fbc_gt_get(val, "data");

			if (object_data(d, s, &data, &len, &bad, &owned))
				return oom(d); /* parse errors were caught by the check */
		}
		fbc_error_init(&e);
		if (data && has_json_prefix(data, len)) {
			/* opm passes such bytes through unchecked; only the CSV look-up
			 * below needs them to parse, and only when they can name a CSV:
			 * without a backslash escape, "kind" can only say
			 * ClusterServiceVersion verbatim. Validation never reads the
			 * CSV: a catalog loaded only to be validated has no csv_json. */
			if (!b->csv_json && !d->cat->limits.validate_only &&
			    (memmem(data, len, "ClusterServiceVersion", 21) ||
			     memchr(data, '\\', len)))
				obj = json_loadb((const char *)data, len, 0, NULL);
		} else if (fbc_yaml_to_json(&obj, data ? (const char *)data : "", len,
					    &d->cat->limits, &e) != 0) {
			obj = NULL;
			rc = finding(d, "L11", pkg, b->name,
				     "read bundle objects: package %s, bundle %s: convert bundle "
				     "object property at index %zu to JSON: %s",
				     quote_names(&qn, b)->pkg, quote_names(&qn, b)->bundle, i,
				     e.message);
		}
		if (owned)
			free(data);
		if (obj && !b->csv_json && json_is_object(obj) &&
		    json_is_string(json_object_get(obj, "kind")) &&
		    strcmp(json_string_value(json_object_get(obj, "kind")),
			   "ClusterServiceVersion") == 0) {
			b->csv_json = fbc_json_compact_buf(d->arena, d->scratch, obj, NULL);
			if (!b->csv_json)
				rc = oom(d);
		}
		json_decref(obj);
	}
	return rc;
}

/* The fields fbc_catalog_link would derive from the valid olm.package,
 * olm.gvk, olm.gvk.required and olm.package.required properties (model.c,
 * derive_bundle), computed here while the values are parsed, on the parser
 * thread; link then leaves the bundle alone. Valid means C11-valid, the same
 * test as derive_bundle's re-parse. */
static const char *get_dup(dctx *d, const json_t *v, const char *field)
{
	return dup_str(d, fbc_gt_get_str(v, field));
}

static int derive_gvk(dctx *d, fbc_gvk *g, const json_t *v)
{
	g->group = get_dup(d, v, "group");
	g->version = get_dup(d, v, "version");
	g->kind = get_dup(d, v, "kind");
	return (g->group && g->version && g->kind) ? 0 : oom(d);
}

static int derive_from_values(dctx *d, fbc_bundle *b, const json_t *arr)
{
	size_t n = json_is_array(arr) ? json_array_size(arr) : 0, i, k = 0;
	size_t n_gvk = 0, n_req = 0, n_preq = 0;
	bool have_pkg = false;
	/* validation reads no GVK: a lean load derives none */
	bool gvks = !d->cat->limits.validate_only || !d->cat->limits.validate_lean;
	int rc = 0;

	for (i = 0; i < b->n_properties; i++) {
		const char *t = b->properties[i].type;

		if (gvks && strcmp(t, "olm.gvk") == 0)
			n_gvk++;
		else if (gvks && strcmp(t, "olm.gvk.required") == 0)
			n_req++;
		else if (strcmp(t, "olm.package.required") == 0)
			n_preq++;
	}
	b->provided = n_gvk ? fbc_arena_calloc(d->arena, n_gvk, sizeof(fbc_gvk)) : NULL;
	b->required = n_req ? fbc_arena_calloc(d->arena, n_req, sizeof(fbc_gvk)) : NULL;
	b->package_reqs =
		n_preq ? fbc_arena_calloc(d->arena, n_preq, sizeof(fbc_package_req)) : NULL;
	if ((n_gvk && !b->provided) || (n_req && !b->required) || (n_preq && !b->package_reqs))
		return oom(d);
	for (i = 0; i < n && rc == 0 && k < b->n_properties; i++) {
		const json_t *p = json_array_get(arr, i), *v;
		const char *t;

		/* the same elements decode_properties kept, in the same order */
		if (!json_is_object(p) && !json_is_null(p))
			continue;
		t = b->properties[k].type;
		if (!b->property_checks || b->property_checks[k++].state != 1)
			continue;
		v = member(p, "value", true);
		if (!v)
			continue;
		if (strcmp(t, "olm.package") == 0) {
			if (!have_pkg) {
				fbc_error e;

				static const char *const keys[] = {"version", "release",
								   "packageName"};
				json_t *m[3];

				have_pkg = true;
				fbc_gt_members(v, keys, 3, 0, m);
				b->version = dup_str(d, fbc_gt_str(m[0]));
				b->release = dup_str(d, fbc_gt_str(m[1]));
				b->olm_package_name = dup_str(d, fbc_gt_str(m[2]));
				if (!b->version || !b->release || !b->olm_package_name)
					return oom(d);
				b->has_semver = fbc_semver_parse(&b->semver, b->version,
								 strlen(b->version), &e) == 0;
			}
		} else if (gvks && strcmp(t, "olm.gvk") == 0) {
			rc = derive_gvk(d, &b->provided[b->n_provided++], v);
		} else if (gvks && strcmp(t, "olm.gvk.required") == 0) {
			rc = derive_gvk(d, &b->required[b->n_required++], v);
		} else if (strcmp(t, "olm.package.required") == 0) {
			static const char *const keys[] = {"packageName", "versionRange"};
			fbc_package_req *r = &b->package_reqs[b->n_package_reqs++];
			json_t *m[2];

			fbc_gt_members(v, keys, 2, 0, m);
			r->package_name = dup_str(d, fbc_gt_str(m[0]));
			r->version_range = dup_str(d, fbc_gt_str(m[1]));
			if (!r->package_name || !r->version_range)
				rc = oom(d);
		}
	}
	b->derived = true;
	return rc;
}

/* Whether the bundle's image and every relatedImages image parse as pull
 * specs (validation's C14/C15), decided here on the parser thread from the
 * blob's strings, as decode_bundle reads them. */
static bool images_parse(const char *img, const json_t *rel)
{
	size_t n = json_is_array(rel) ? json_array_size(rel) : 0;
	fbc_error e;

	if (*img && fbc_imageref_parse(NULL, img, &e))
		return false;
	for (size_t i = 0; i < n; i++) {
		const json_t *r = json_array_get(rel, i);

		if (!json_is_object(r))
			continue;
		img = fbc_gt_get_str(r, "image");
		if (*img && fbc_imageref_parse(NULL, img, &e))
			return false;
	}
	return true;
}

static int decode_bundle(dctx *d)
{
	static const char *const bundle_keys[] = {"name", "package", "image", "relatedImages",
						  "properties"};
	static const char *const related_keys[] = {"name", "image"};
	const json_t *blob = d->meta->blob, *rel;
	fbc_bundle *b = fbc_arena_calloc(d->arena, 1, sizeof(*b));
	json_t *m[5];
	size_t i, n;
	int rc;

	if (!b)
		return oom(d);
	fbc_gt_members(blob, bundle_keys, 5, 0, m);
	DUP(d, b->name, fbc_gt_str(m[0]));
	DUP(d, b->package, fbc_gt_str(m[1]));
	if ((rc = typed_check(d, &fbc_gt_bundle, "bundle", b->package)))
		return rc;
	b->images_valid = images_parse(fbc_gt_str(m[2]), m[3]);
	if (d->cat->limits.validate_only && d->cat->limits.validate_lean && b->images_valid) {
		/* validation reads them no further (V9 asks whether there is an image) */
		b->image = *fbc_gt_str(m[2]) ? FBC_IMAGE_NOT_KEPT : "";
		rel = NULL;
	} else {
		DUP(d, b->image, fbc_gt_str(m[2]));
		rel = m[3];
	}
	if ((rc = decode_properties(d, m[4], &b->properties, &b->n_properties,
				    &b->property_checks)))
		return rc;
	n = json_is_array(rel) ? json_array_size(rel) : 0;
	if (n) {
		b->related_images = fbc_arena_calloc(d->arena, n, sizeof(*b->related_images));
		if (!b->related_images)
			return oom(d);
	}
	for (i = 0; i < n; i++) {
		const json_t *r = json_array_get(rel, i);
		fbc_related_image *ri = &b->related_images[b->n_related_images];
		json_t *rm[2];

		if (!json_is_object(r))
			continue;
		fbc_gt_members(r, related_keys, 2, 0, rm);
		DUP(d, ri->name, fbc_gt_str(rm[0]));
		DUP(d, ri->image, fbc_gt_str(rm[1]));
		b->n_related_images++;
	}
	b->loc = d->loc;
	b->version = "";
	b->release = "";
	if ((rc = derive_from_values(d, b, m[4])))
		return rc;
	if ((rc = read_bundle_objects(d, b, m[4])))
		return rc;
	return push_ptr(d, &d->cat->bundles, b);
}

static int decode_deprecation(dctx *d)
{
	const json_t *blob = d->meta->blob, *entries;
	fbc_deprecation *x = fbc_arena_calloc(d->arena, 1, sizeof(*x));
	size_t i, n;
	int rc;

	if (!x)
		return oom(d);
	DUP(d, x->package, fbc_gt_get_str(blob, "package"));
	if ((rc = typed_check(d, &fbc_gt_deprecation, "deprecation", x->package)))
		return rc;
	entries = fbc_gt_get(blob, "entries");
	n = json_is_array(entries) ? json_array_size(entries) : 0;
	if (n) {
		x->entries = fbc_arena_calloc(d->arena, n, sizeof(*x->entries));
		if (!x->entries)
			return oom(d);
	}
	for (i = 0; i < n; i++) {
		const json_t *e = json_array_get(entries, i), *ref;
		fbc_deprecation_entry *de = &x->entries[x->n_entries];

		/* a null element is a zero entry (no schema: C23), as in Go */
		if (!json_is_object(e) && !json_is_null(e))
			continue;
		ref = fbc_gt_get(e, "reference");
		DUP(d, de->schema, fbc_gt_get_str(ref, "schema"));
		DUP(d, de->name, fbc_gt_get_str(ref, "name"));
		DUP(d, de->message, fbc_gt_get_str(e, "message"));
		x->n_entries++;
	}
	x->loc = d->loc;
	return push_ptr(d, &d->cat->deprecations, x);
}

static int decode_other(dctx *d)
{
	fbc_other *o = fbc_arena_calloc(d->arena, 1, sizeof(*o));

	if (!o)
		return oom(d);
	DUP(d, o->schema, d->meta->schema);
	DUP(d, o->package, d->meta->package);
	DUP(d, o->name, d->meta->name);
	o->blob = fbc_json_compact_buf(d->arena, d->scratch, d->meta->blob, &o->blob_len);
	if (!o->blob)
		return oom(d);
	o->loc = d->loc;
	return push_ptr(d, &d->cat->others, o);
}

static int decode_meta(dctx *d)
{
	const fbc_meta *meta = d->meta;
	int rc;

	if ((rc = intern_file(d)))
		return rc;
	if (!json_is_object(meta->blob))
		return fbc_error_set(d->err, FBC_EINVAL, d->loc.file,
				     "add_meta: the blob is not an object");
	if (strcmp(meta->schema, "olm.package") == 0)
		return decode_package(d);
	if (strcmp(meta->schema, "olm.channel") == 0)
		return decode_channel(d);
	if (strcmp(meta->schema, "olm.bundle") == 0)
		return decode_bundle(d);
	if (strcmp(meta->schema, "olm.deprecations") == 0)
		return decode_deprecation(d);
	return decode_other(d);
}

int fbc_catalog_add_meta(fbc_catalog *cat, const fbc_meta *meta, fbc_diags *diags, fbc_error *err)
{
	fbc_buf scratch;
	dctx d;
	int rc;

	if (!cat || !meta || !meta->schema || !meta->blob)
		return fbc_error_set(err, FBC_EINVAL, NULL, "add_meta: missing catalog or meta");
	if (cat->linked)
		return fbc_error_set(err, FBC_EINVAL, NULL,
				     "add_meta: the catalog is already linked (read-only)");
	memset(&d, 0, sizeof(d));
	fbc_buf_init(&scratch, 0);
	d.cat = cat;
	d.arena = cat->arena;
	d.scratch = &scratch;
	d.meta = meta;
	d.diags = diags;
	d.err = err;
	rc = decode_meta(&d);
	fbc_buf_dispose(&scratch);
	return rc;
}

fbc_prepared *fbc_catalog_prepare_meta(const fbc_catalog *cat, fbc_arena *arena, fbc_buf *scratch,
				       const fbc_meta *meta)
{
	fbc_prepared *pp = fbc_arena_calloc(arena, 1, sizeof(*pp));
	fbc_error e;
	dctx d;

	if (!pp)
		return NULL;
	pp->tail = &pp->first;
	if (!meta || !meta->schema || !meta->blob) {
		pp->rc = FBC_EINVAL;
		return pp;
	}
	fbc_error_init(&e);
	memset(&d, 0, sizeof(d));
	d.cat = (fbc_catalog *)cat; /* read only: the limits */
	d.arena = arena;
	d.scratch = scratch;
	d.pp = pp;
	d.meta = meta;
	d.err = &e;
	pp->rc = decode_meta(&d);
	return pp;
}

/*
 * The copy of a record a catalog commits when records are shared (a file
 * cache keeps them for other catalogs): the struct itself, whose link fields
 * (package, channel and bundle lists, derived arrays) this catalog's link
 * fills, and a channel's entries (link sets each entry's bundle). What
 * decoding made and nothing writes afterwards (strings, properties, skips,
 * derived arrays of a bundle derived while decoding) is shared.
 */
static void *copy_record(fbc_catalog *cat, int kind, const void *rec)
{
	size_t size = kind == P_PACKAGE	      ? sizeof(fbc_package)
		      : kind == P_CHANNEL     ? sizeof(fbc_channel)
		      : kind == P_BUNDLE      ? sizeof(fbc_bundle)
		      : kind == P_DEPRECATION ? sizeof(fbc_deprecation)
					      : sizeof(fbc_other);
	void *c = fbc_arena_alloc(cat->arena, size);

	if (!c)
		return NULL;
	memcpy(c, rec, size);
	if (kind == P_PACKAGE) {
		fbc_package *p = c;

		p->channels = NULL;
		p->n_channels = 0;
		p->bundles = NULL;
		p->n_bundles = 0;
		p->deprecation = NULL;
		p->others = NULL;
		p->n_others = 0;
	} else if (kind == P_CHANNEL) {
		fbc_channel *ch = c;

		ch->pkg = NULL;
		if (ch->n_entries) {
			fbc_channel_entry *e =
				fbc_arena_alloc(cat->arena, ch->n_entries * sizeof(*e));

			if (!e)
				return NULL;
			memcpy(e, ch->entries, ch->n_entries * sizeof(*e));
			for (size_t i = 0; i < ch->n_entries; i++)
				e[i].bundle = NULL;
			ch->entries = e;
		}
	} else if (kind == P_BUNDLE) {
		fbc_bundle *b = c;

		b->pkg = NULL;
		b->channels = NULL;
		b->n_channels = 0;
	}
	return c;
}

int fbc_catalog_commit_meta(fbc_catalog *cat, const fbc_meta *meta, fbc_diags *diags,
			    fbc_error *err)
{
	fbc_prepared *pp = meta->prepared;
	prep_finding *f;
	fbc_vec *vec = NULL;
	fbc_loc *recloc = NULL;
	void **slot, *rec;
	dctx d;
	int rc;

	memset(&d, 0, sizeof(d));
	d.cat = cat;
	d.arena = cat->arena;
	d.meta = meta;
	d.diags = diags;
	d.err = err;
	if ((rc = intern_file(&d)))
		return rc;
	if (!pp)
		return oom(&d);
	/* findings first, in the order decoding produced them */
	for (f = pp->first; f; f = f->next) {
		fbc_loc loc = {d.loc.file, f->line};

		if (diags &&
		    fbc_diags_add(diags, f->code, &loc, f->pkg, NULL, f->bundle, "%s", f->message))
			return fbc_error_set(err, FBC_ENOMEM, NULL,
					     "recording a finding: out of memory");
	}
	if (pp->rc)
		return pp->rc == FBC_ENOMEM ? oom(&d)
					    : fbc_error_set(err, pp->rc, d.loc.file,
							    "add_meta: the blob is not an object");
	rec = pp->rec;
	if (cat->shared_records && pp->kind != P_NONE && !(rec = copy_record(cat, pp->kind, rec)))
		return oom(&d);
	switch (pp->kind) {
	case P_PACKAGE:
		vec = &cat->packages;
		recloc = &((fbc_package *)rec)->loc;
		break;
	case P_CHANNEL:
		vec = &cat->channels;
		recloc = &((fbc_channel *)rec)->loc;
		break;
	case P_BUNDLE:
		vec = &cat->bundles;
		recloc = &((fbc_bundle *)rec)->loc;
		break;
	case P_DEPRECATION:
		vec = &cat->deprecations;
		recloc = &((fbc_deprecation *)rec)->loc;
		break;
	case P_OTHER:
		vec = &cat->others;
		recloc = &((fbc_other *)rec)->loc;
		break;
	default:
		return 0; /* nothing to add */
	}
	recloc->file = d.loc.file;
	slot = fbc_vec_push(vec);
	if (!slot)
		return oom(&d);
	*slot = rec;
	return 0;
}
