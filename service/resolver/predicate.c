/*
 * Dependency properties as predicates over one candidate bundle (spec §2.3):
 * olm.gvk.required, olm.package.required, olm.label.required and
 * olm.constraint (gvk, package, all, any, not, cel; failureMessage; size
 * limit; unknown fields rejected). A property that fails to parse aborts the
 * resolution with kind "error" (r_input_error).
 */
#include "service/resolver/internal.h"

#include "service/cel/cel.h"

#include <string.h>

#define MAX_CONSTRAINT_BYTES (2 << 16) /* upstream MaxConstraintSize: 131072 */
#define MAX_CONSTRAINT_DEPTH 32

static int oom(r_ctx *c)
{
	return fbc_error_set(c->err, FBC_ENOMEM, NULL, "out of memory");
}

bool r_property_is_dependency(const char *type)
{
	return strcmp(type, "olm.gvk.required") == 0 || strcmp(type, "olm.package.required") == 0 ||
	       strcmp(type, "olm.label.required") == 0 || strcmp(type, "olm.constraint") == 0;
}

static void free_range(void *p)
{
	fbc_semver_range_free(p);
}

static void free_cel(void *p)
{
	fbc_cel_program_free(p);
}

static void free_json(void *p)
{
	json_decref(p);
}

/* Only the listed keys may appear (Go's DisallowUnknownFields). */
static const char *unknown_key(json_t *o, const char *const *allowed)
{
	const char *key;
	json_t *v;

	json_object_foreach(o, key, v)
	{
		size_t i;
		(void)v;
		for (i = 0; allowed[i]; i++)
			if (strcmp(key, allowed[i]) == 0)
				break;
		if (!allowed[i])
			return key;
	}
	return NULL;
}

static int str_field(r_ctx *c, const char **out, json_t *o, const char *key, const char *what)
{
	json_t *v = json_object_get(o, key);

	if (v && !json_is_string(v))
		return r_input_error(c, "%s: field \"%s\" must be a string", what, key);
	*out = v ? fbc_arena_strdup(c->arena, json_string_value(v)) : "";
	return *out ? 0 : oom(c);
}

static r_pred *pred_new(r_ctx *c, int kind)
{
	r_pred *p = fbc_arena_calloc(c->arena, 1, sizeof(*p));
	if (p)
		p->kind = kind;
	return p;
}

static int gvk_pred(r_ctx *c, json_t *o, const char *what, bool strict, r_pred **out)
{
	static const char *const keys[] = {"group", "version", "kind", NULL};
	const char *bad;
	r_pred *p;
	int rc;

	if (!json_is_object(o))
		return r_input_error(c, "%s: the value must be an object", what);
	if (strict && (bad = unknown_key(o, keys)))
		return r_input_error(c, "%s: json: unknown field \"%s\"", what, bad);
	if (!(p = pred_new(c, P_GVK)))
		return oom(c);
	if ((rc = str_field(c, &p->group, o, "group", what)) < 0 ||
	    (rc = str_field(c, &p->version, o, "version", what)) < 0 ||
	    (rc = str_field(c, &p->kind_name, o, "kind", what)) < 0)
		return rc;
	p->text =
		fbc_arena_printf(c->arena, "providing an API with group: %s, version: %s, kind: %s",
				 p->group, p->version, p->kind_name);
	*out = p;
	return p->text ? 0 : oom(c);
}

static int package_pred(r_ctx *c, json_t *o, const char *what, bool strict, r_pred **out)
{
	static const char *const keys[] = {"packageName", "versionRange", NULL};
	const char *bad;
	fbc_error e;
	r_pred *p;
	int rc;

	if (!json_is_object(o))
		return r_input_error(c, "%s: the value must be an object", what);
	if (strict && (bad = unknown_key(o, keys)))
		return r_input_error(c, "%s: json: unknown field \"%s\"", what, bad);
	if (!(p = pred_new(c, P_PACKAGE)))
		return oom(c);
	if ((rc = str_field(c, &p->package, o, "packageName", what)) < 0 ||
	    (rc = str_field(c, &p->range_text, o, "versionRange", what)) < 0)
		return rc;
	fbc_error_init(&e);
	rc = fbc_semver_range_parse_blang(&p->range, p->range_text, &e);
	if (rc == FBC_ENOMEM)
		return oom(c);
	if (rc < 0)
		return r_input_error(c, "%s: invalid version range \"%s\" for package %s: %s", what,
				     p->range_text, p->package, e.message);
	if (fbc_arena_defer(c->arena, free_range, p->range) < 0)
		return oom(c);
	p->text = fbc_arena_printf(c->arena, "with package: %s and with version in range: %s",
				   p->package, p->range_text);
	*out = p;
	return p->text ? 0 : oom(c);
}

static int constraint_pred(r_ctx *c, json_t *o, const char *what, int depth, r_pred **out);

static int compound_pred(r_ctx *c, int kind, json_t *o, const char *what, int depth, r_pred **out)
{
	static const char *const keys[] = {"constraints", NULL};
	const char *bad, *sep = kind == P_ALL ? " and " : " or ";
	json_t *arr;
	fbc_buf b;
	r_pred *p;
	int rc = 0;

	if (!json_is_object(o))
		return r_input_error(c, "%s: the compound constraint must be an object", what);
	if ((bad = unknown_key(o, keys)))
		return r_input_error(c, "%s: json: unknown field \"%s\"", what, bad);
	arr = json_object_get(o, "constraints");
	if (arr && !json_is_array(arr))
		return r_input_error(c, "%s: \"constraints\" must be an array", what);
	if (!(p = pred_new(c, kind)))
		return oom(c);
	p->n_kids = arr ? json_array_size(arr) : 0;
	p->kids = fbc_arena_calloc(c->arena, p->n_kids + 1, sizeof(*p->kids));
	if (!p->kids)
		return oom(c);
	fbc_buf_init(&b, 1 << 20);
	if (kind == P_NOT)
		fbc_buf_puts(&b, "not (");
	for (size_t i = 0; i < p->n_kids; i++) {
		if ((rc = constraint_pred(c, json_array_get(arr, i), what, depth + 1,
					  &p->kids[i])) < 0)
			goto done;
		/* Nested all/any are parenthesised so that texts (also the cache key
		 * of candidate lists) are unambiguous. */
		bool paren = p->kids[i]->kind == P_ALL || p->kids[i]->kind == P_ANY;
		fbc_buf_printf(&b, "%s%s%s%s", i ? (kind == P_NOT ? " or " : sep) : "",
			       paren ? "(" : "", p->kids[i]->text, paren ? ")" : "");
	}
	if (kind == P_NOT)
		fbc_buf_puts(&b, ")");
	if (!p->n_kids)
		fbc_buf_puts(&b, kind == P_ALL ? "(all of nothing)" : "(any of nothing)");
	p->text = fbc_arena_strdup(c->arena, b.data ? b.data : "");
	if (!p->text)
		rc = oom(c);
	*out = p;
done:
	fbc_buf_dispose(&b);
	return rc;
}

static int cel_pred(r_ctx *c, json_t *o, const char *what, r_pred **out)
{
	static const char *const keys[] = {"rule", NULL};
	const char *bad;
	fbc_cel_program *prog = NULL;
	fbc_error e;
	r_pred *p;
	int rc;

	if (!json_is_object(o))
		return r_input_error(c, "%s: the cel constraint must be an object", what);
	if ((bad = unknown_key(o, keys)))
		return r_input_error(c, "%s: json: unknown field \"%s\"", what, bad);
	if (!(p = pred_new(c, P_CEL)))
		return oom(c);
	if ((rc = str_field(c, &p->rule, o, "rule", what)) < 0)
		return rc;
	fbc_error_init(&e);
	rc = fbc_cel_compile(&prog, p->rule, strlen(p->rule), &e);
	if (rc == FBC_ENOMEM)
		return oom(c);
	if (rc < 0)
		return r_input_error(c, "%s: the cel rule \"%s\" does not compile: %s", what,
				     p->rule, e.message);
	if (fbc_arena_defer(c->arena, free_cel, prog) < 0)
		return oom(c);
	p->cel = prog;
	p->text = fbc_arena_printf(c->arena, "with constraint: \"%s\"", p->rule);
	*out = p;
	return p->text ? 0 : oom(c);
}

/* One olm.constraint object; the first of gvk, package, all, any, not, cel wins. */
static int constraint_pred(r_ctx *c, json_t *o, const char *what, int depth, r_pred **out)
{
	static const char *const keys[] = {
		"failureMessage", "gvk", "package", "all", "any", "not", "cel", NULL};
	const char *bad, *fm = NULL;
	json_t *v;
	r_pred *p = NULL;
	int rc;

	if (depth > MAX_CONSTRAINT_DEPTH)
		return r_input_error(c, "%s: constraints nested deeper than %d levels", what,
				     MAX_CONSTRAINT_DEPTH);
	if (!json_is_object(o))
		return r_input_error(c, "%s: a constraint must be a JSON object", what);
	if ((bad = unknown_key(o, keys)))
		return r_input_error(c, "%s: json: unknown field \"%s\"", what, bad);
	v = json_object_get(o, "failureMessage");
	if (v) {
		if (!json_is_string(v))
			return r_input_error(c, "%s: failureMessage must be a string", what);
		fm = json_string_value(v);
	}
	if ((v = json_object_get(o, "gvk")))
		rc = gvk_pred(c, v, what, true, &p);
	else if ((v = json_object_get(o, "package")))
		rc = package_pred(c, v, what, true, &p);
	else if ((v = json_object_get(o, "all")))
		rc = compound_pred(c, P_ALL, v, what, depth, &p);
	else if ((v = json_object_get(o, "any")))
		rc = compound_pred(c, P_ANY, v, what, depth, &p);
	else if ((v = json_object_get(o, "not")))
		rc = compound_pred(c, P_NOT, v, what, depth, &p);
	else if ((v = json_object_get(o, "cel")))
		rc = cel_pred(c, v, what, &p);
	else
		return r_input_error(c, "%s: constraint is empty", what);
	if (rc < 0)
		return rc;
	if (fm && *fm) {
		p->failure = fbc_arena_strdup(c->arena, fm);
		p->text = fbc_arena_printf(c->arena, "%s and message: \"%s\"", p->text, fm);
		if (!p->failure || !p->text)
			return oom(c);
	}
	*out = p;
	return 0;
}

int r_pred_from_property(r_ctx *c, const fbc_property *prop, const char *bundle_id, r_pred **out)
{
	json_t *v = NULL;
	json_error_t je;
	const char *what;
	int rc = 0;

	*out = NULL;
	what = fbc_arena_printf(c->arena, "property %s of bundle %s", prop->type, bundle_id);
	if (!what)
		return oom(c);
	if (!prop->value)
		return r_input_error(c, "%s: the property has no value", what);
	if (strcmp(prop->type, "olm.constraint") == 0 && prop->value_len > MAX_CONSTRAINT_BYTES)
		return r_input_error(c,
				     "%s: olm.constraint value is greater than max constraint "
				     "size %d bytes",
				     what, MAX_CONSTRAINT_BYTES);
	v = json_loadb(prop->value, prop->value_len, JSON_DECODE_ANY, &je);
	if (!v)
		return r_input_error(c, "%s: invalid JSON: %s", what, je.text);
	if (fbc_arena_defer(c->arena, free_json, v) < 0)
		return oom(c);
	if (strcmp(prop->type, "olm.gvk.required") == 0) {
		rc = gvk_pred(c, v, what, false, out);
	} else if (strcmp(prop->type, "olm.package.required") == 0) {
		rc = package_pred(c, v, what, false, out);
	} else if (strcmp(prop->type, "olm.label.required") == 0) {
		r_pred *p;
		if (!json_is_object(v))
			return r_input_error(c, "%s: the value must be an object", what);
		if (!(p = pred_new(c, P_LABEL)))
			return oom(c);
		if ((rc = str_field(c, &p->label, v, "label", what)) < 0)
			return rc;
		p->text = fbc_arena_printf(c->arena, "with label: %s", p->label);
		if (!p->text)
			return oom(c);
		*out = p;
	} else if (strcmp(prop->type, "olm.constraint") == 0) {
		rc = constraint_pred(c, v, what, 0, out);
	}
	return rc;
}

static bool has_label(const fbc_bundle *b, const char *label)
{
	for (size_t i = 0; b && i < b->n_properties; i++) {
		const fbc_property *p = &b->properties[i];
		json_t *v;
		bool ok;

		if (strcmp(p->type, "olm.label") != 0 || !p->value)
			continue;
		v = json_loadb(p->value, p->value_len, JSON_DECODE_ANY, NULL);
		ok = v && json_is_string(json_object_get(v, "label")) &&
		     strcmp(json_string_value(json_object_get(v, "label")), label) == 0;
		json_decref(v);
		if (ok)
			return true;
	}
	return false;
}

/* properties[i] = {"type", "value"} as CEL sees them (§5). An installed bundle
 * without a catalog copy has just its olm.package property. */
static json_t *cel_properties(const r_entry *e)
{
	json_t *arr = json_array();

	if (!arr)
		return NULL;
	if (!e->b) {
		json_t *o = json_pack("{s:s,s:{s:s,s:s}}", "type", "olm.package", "value",
				      "packageName", e->package, "version", e->version);
		if (!o || json_array_append_new(arr, o) < 0) {
			json_decref(arr);
			return NULL;
		}
		return arr;
	}
	for (size_t i = 0; i < e->b->n_properties; i++) {
		const fbc_property *p = &e->b->properties[i];
		json_t *val =
			p->value ? json_loadb(p->value, p->value_len, JSON_DECODE_ANY, NULL) : NULL;
		json_t *o = json_object();

		if (!o || json_object_set_new(o, "type", json_string(p->type)) < 0 ||
		    json_object_set_new(o, "value", val ? val : json_null()) < 0 ||
		    json_array_append_new(arr, o) < 0) {
			json_decref(arr);
			return NULL;
		}
	}
	return arr;
}

int r_pred_test(r_ctx *c, const r_pred *p, const r_entry *e, bool *out)
{
	size_t i;
	int rc;

	*out = false;
	switch (p->kind) {
	case P_GVK:
		for (i = 0; e->b && i < e->b->n_provided; i++)
			if (strcmp(e->b->provided[i].group, p->group) == 0 &&
			    strcmp(e->b->provided[i].version, p->version) == 0 &&
			    strcmp(e->b->provided[i].kind, p->kind_name) == 0)
				*out = true;
		return 0;
	case P_PACKAGE:
		*out = strcmp(e->package, p->package) == 0 && e->has_ver &&
		       fbc_semver_range_contains(p->range, &e->ver);
		return 0;
	case P_LABEL:
		*out = has_label(e->b, p->label);
		return 0;
	case P_ALL:
	case P_ANY:
	case P_NOT: {
		bool any = false, all = true;
		for (i = 0; i < p->n_kids; i++) {
			bool k;
			if ((rc = r_pred_test(c, p->kids[i], e, &k)) < 0)
				return rc;
			any = any || k;
			all = all && k;
		}
		*out = p->kind == P_ALL ? all : p->kind == P_ANY ? any : !any;
		return 0;
	}
	case P_CEL: {
		json_t *props = e->b ? r_ptrmap_get(&c->cel_props, e->b) : NULL;
		bool cached = props != NULL;
		fbc_error ce;
		bool r = false;

		if (!props && !(props = cel_properties(e)))
			return oom(c);
		/* Decoding every property is the expensive part: keep it per bundle. */
		if (!cached && e->b) {
			if (r_ptrmap_put(&c->cel_props, e->b, props) < 0) {
				json_decref(props);
				return oom(c);
			}
			cached = true;
		}
		/* Evaluation errors make the predicate false (upstream behaviour). */
		fbc_error_init(&ce);
		if (fbc_cel_eval_bool(&r, p->cel, props, &ce) == 0)
			*out = r;
		if (!cached)
			json_decref(props);
		return 0;
	}
	}
	return 0;
}
