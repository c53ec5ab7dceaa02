/*
 * A fast path for the JSON streams of catalogs: one top-level object read
 * into the json_t jansson's json_loadb (JSON_DECODE_ANY |
 * JSON_DISABLE_EOF_CHECK) would build from the same bytes, with the same key
 * order, consuming the same bytes. It handles what catalogs are made of —
 * objects, arrays, strings (valid UTF-8, no control characters; escapes
 * decoded as jansson decodes them), integers of up to 18 digits, true, false,
 * null — and scans strings 32 bytes at a time (AVX2) or 8 (a word) instead of one character,
 * which is where jansson spends its time on catalogs full of base64 bundle
 * objects. Anything else (\u0000 or a lone surrogate, a fraction or exponent,
 * a duplicate key, deep nesting, any syntax error) makes it give up, and the caller parses the
 * value with jansson as before, so findings and their messages are jansson's. The fuzz target
 * json_fast checks that every value it accepts equals jansson's.
 */
#include "service/load/jsonscan.h"

/* A string value at j->p, escapes decoded. */
static json_t *string(jf *j)
{
	const char *s;
	size_t n;
	bool esc;

	json_t *v;

	if (scan_string(j, &s, &n, &esc)) {
		v = json_stringn_nocheck(s, n);
	} else if (esc && (v = escaped_string(j, j->p + 1)) != NULL) {
		n = json_string_length(v);
	} else {
		return NULL;
	}
	if (n > j->longest)
		j->longest = n;
	return v;
}

static json_t *value(jf *j, int depth);

static json_t *number(jf *j)
{
	long long v;

	return integer(j, &v) ? json_integer(v) : NULL;
}

static json_t *literal(jf *j, const char *word, json_t *v)
{
	return word_at(j, word) ? v : NULL;
}

static json_t *array(jf *j, int depth)
{
	json_t *a = json_array();

	if (depth > j->deepest)
		j->deepest = depth;
	j->p++; /* [ */
	skip_space(j);
	if (j->p < j->end && *j->p == ']') {
		j->p++;
		return a;
	}
	while (a) {
		json_t *v = value(j, depth + 1);

		int at;

		if (!v || json_array_append_new(a, v) != 0 || (at = after_item(j, ']')) < 0)
			break;
		if (at == 1)
			return a;
	}
	json_decref(a);
	return NULL;
}

static json_t *object(jf *j, int depth)
{
	json_t *o = json_object();

	if (depth > j->deepest)
		j->deepest = depth;
	j->p++; /* { */
	skip_space(j);
	if (j->p < j->end && *j->p == '}') {
		j->p++;
		return o;
	}
	while (o) {
		const char *k;
		size_t kn, before;
		bool esc;
		json_t *v, *ks = NULL;
		int rc;

		if (j->p >= j->end || *j->p != '"')
			break;
		if (!scan_string(j, &k, &kn, &esc)) {
			/* a key with escapes: decoded; jansson's keys hold no NUL */
			if (!esc || !(ks = escaped_string(j, j->p + 1)))
				break;
			k = json_string_value(ks);
			kn = strlen(k);
		}
		if (kn > j->longest)
			j->longest = kn;
		skip_space(j);
		v = NULL;
		if (j->p < j->end && *j->p == ':') {
			const fbc_load_skim_type *st;

			j->p++;
			skip_space(j);
			if (j->skim && j->in_props && depth == 3 && kn == 5 &&
			    memcmp(k, "value", 5) == 0 && (st = fbc_json_skim_type_of(j, o)))
				v = fbc_json_skim_property_value(j, o, st, depth + 1);
			if (j->skim && j->skim->related_image_ok && depth == 1 && kn == 13 &&
			    memcmp(k, "relatedImages", 13) == 0 && j->p < j->end && *j->p == '[')
				v = fbc_json_skim_related_images(j, o, depth + 1);
			if (!v && j->skim && depth == 1 && kn == 10 &&
			    memcmp(k, "properties", 10) == 0 && j->p < j->end && *j->p == '[') {
				j->in_props = true;
				v = value(j, depth + 1);
				j->in_props = false;
			} else if (!v) {
				v = value(j, depth + 1);
			}
		}
		if (!v) {
			json_decref(ks);
			break;
		}
		/* the key straight from the input (jansson copies it) */
		before = json_object_size(o);
		rc = json_object_setn_new_nocheck(o, k, kn, v);
		json_decref(ks);
		if (rc != 0 || json_object_size(o) != before + 1)
			break; /* a duplicate key: jansson's rules decide */
		if ((rc = after_item(j, '}')) < 0)
			break;
		if (rc == 1)
			return o;
	}
	json_decref(o);
	return NULL;
}

static json_t *value(jf *j, int depth)
{
	if (depth > MAX_DEPTH || j->p >= j->end)
		return NULL;
	switch (*j->p) {
	case '{':
		return object(j, depth);
	case '[':
		return array(j, depth);
	case '"':
		return string(j);
	case 't':
		return literal(j, "true", json_true());
	case 'f':
		return literal(j, "false", json_false());
	case 'n':
		return literal(j, "null", json_null());
	default:
		return (*j->p == '-' || (*j->p >= '0' && *j->p <= '9')) ? number(j) : NULL;
	}
}

json_t *fbc_json_fast_parse(const char *data, size_t len, const fbc_load_limits *lim,
			    fbc_json_fast_info *info)
{
	jf j = {.p = (const unsigned char *)data,
		.end = (const unsigned char *)data + len,
		.lim = lim,
		.skim = lim && info->skimmed ? info->skim : NULL,
		.skimmed = info->skimmed};
	size_t listed = info->skimmed ? info->skimmed->len : 0;
	json_t *v;

	if (len == 0 || data[0] != '{')
		return NULL;
	if (!(v = object(&j, 1))) {
		if (info->skimmed)
			info->skimmed->len = listed; /* their objects are gone */
		return NULL;
	}
	info->consumed = (size_t)(j.p - (const unsigned char *)data);
	info->within =
		lim && (size_t)j.deepest <= lim->max_depth && j.longest <= lim->max_string_bytes;
	info->lines = j.lines;
	return v;
}

int fbc_json_fast_unskim(fbc_vec *skimmed)
{
	for (size_t i = 0; i < skimmed->len; i++) {
		fbc_json_skimmed *r = FBC_VEC_AT(skimmed, fbc_json_skimmed, i);
		jf j = {.p = (const unsigned char *)r->text,
			.end = (const unsigned char *)r->text + r->len};
		json_t *v = value(&j, 1);
		json_error_t jerr;

		/* a value with a duplicate key: jansson's, as the whole blob's would be */
		if (!v)
			v = json_loadb(r->text, r->len, JSON_DECODE_ANY, &jerr);
		if (!v || json_object_set_new_nocheck(r->obj, r->key, v) != 0)
			return FBC_ENOMEM;
	}
	skimmed->len = 0;
	return 0;
}

json_t *fbc_json_fast_object(const char *data, size_t len, size_t *consumed)
{
	fbc_json_fast_info info = {0};
	json_t *v = fbc_json_fast_parse(data, len, NULL, &info);

	if (v)
		*consumed = info.consumed;
	return v;
}
