/*
 * libFuzzer target for the loader's JSON fast path (service/load/jsonfast.c):
 * whenever fbc_json_fast_object accepts an input, jansson's json_loadb with
 * the flags the loader uses must read the same value (same types, same key
 * order) from the same bytes, consuming as many; otherwise the fast path
 * would change what the loader yields. Its verdict on the depth and string
 * limits (picked from the input's size, so that both answers occur) must be
 * fbc_json_within's, and the newlines it counts those of the bytes it used.
 *
 * Skimming (fbc_load_skim, with the small Go types below: property types "a"
 * and "b"): a value skimmed must be one the tree check would accept
 * (fbc_json_fast_skim_oracle), and once built again (fbc_json_fast_unskim)
 * the tree must be jansson's, with the same bytes used, lines and verdict on
 * the limits. Aborts on any difference.
 */
#include "tests/fuzz/fuzz.h"

#include "service/base/base64.h"
#include "service/load/internal.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

int fbc_json_same_tree(const json_t *a, const json_t *b); /* json_same.c */
size_t fbc_json_fast_skim_check(const char *data, size_t size, const fbc_load_limits *lim);

static const fbc_gt_type t_str = {FBC_GT_STRING, "string", NULL, NULL};
static const fbc_gt_type t_int = {FBC_GT_INT, "int32", NULL, NULL};
static const fbc_gt_type t_bool = {FBC_GT_BOOL, "bool", NULL, NULL};
static const fbc_gt_type t_bytes = {FBC_GT_BYTES, "[]uint8", NULL, NULL};
static const fbc_gt_type t_raw = {FBC_GT_ANY, "json.RawMessage", NULL, NULL};
static const fbc_gt_type t_map = {FBC_GT_MAP, "map[string]string", &t_str, NULL};
static const fbc_gt_field f_inner[] = {{"x", 1, &t_str}, {"On", 2, &t_bool}, {NULL, 0, NULL}};
static const fbc_gt_type t_inner = {FBC_GT_STRUCT, "t.Inner", NULL, f_inner};
static const fbc_gt_type t_inners = {FBC_GT_ARRAY, "[]t.Inner", &t_inner, NULL};
static const fbc_gt_field f_top[] = {
	{"s", 1, &t_str},    {"n", 1, &t_int}, {"b", 1, &t_bytes},     {"m", 1, &t_map},
	{"l", 1, &t_inners}, {"r", 1, &t_raw}, {"Inner", 5, &t_inner}, {NULL, 0, NULL}};
static const fbc_gt_type t_top = {FBC_GT_STRUCT, "t.Top", NULL, f_top};
static const fbc_gt_field f_obj[] = {{"data", 4, &t_bytes}, {NULL, 0, NULL}};
static const fbc_gt_type t_obj = {FBC_GT_STRUCT, "t.Obj", NULL, f_obj};
static const fbc_load_skim_type skim_types[] = {{"a", &t_top, false, "{}"},
						{"b", &t_obj, true, "{\"data\":\"e30=\"}"}};
/* a related image "checks out" unless it holds an 'x' */
static bool image_ok(const char *image, size_t n)
{
	return strlen(image) == n && memchr(image, 'x', n) == NULL;
}
static const fbc_load_skim skim = {"s", skim_types, 2, image_ok};

/* Whether a skimmed relatedImages array, built, is what skimming promised:
 * objects of string members "name" and "image" only, each image OK. */
static bool related_as_promised(const json_t *v)
{
	const char *k;
	json_t *e, *m;
	size_t i;

	if (!json_is_array(v))
		return false;
	json_array_foreach(v, i, e)
	{
		if (!json_is_object(e))
			return false;
		json_object_foreach(e, k, m)
		{
			if ((strcmp(k, "name") != 0 && strcmp(k, "image") != 0) ||
			    !json_is_string(m))
				return false;
			if (strcmp(k, "image") == 0 && json_string_length(m) > 0 &&
			    !image_ok(json_string_value(m), json_string_length(m)))
				return false;
		}
	}
	return true;
}

/* The tree check's verdict (service/fbc fbc_gt_check's rules, on a built
 * value): whether v decodes into t. */
static bool decodes(const fbc_gt_type *t, const json_t *v)
{
	size_t i, bad;
	const char *k;
	json_t *m;

	if (!t || !v || json_is_null(v) || t->kind == FBC_GT_ANY)
		return true;
	switch (t->kind) {
	case FBC_GT_STRING:
		return json_is_string(v);
	case FBC_GT_BOOL:
		return json_is_boolean(v);
	case FBC_GT_INT:
		return json_is_integer(v) && json_integer_value(v) >= INT32_MIN &&
		       json_integer_value(v) <= INT32_MAX;
	case FBC_GT_BYTES:
		return json_is_string(v) &&
		       fbc_base64_decode(NULL, NULL, &bad, json_string_value(v),
					 json_string_length(v)) == 0;
	case FBC_GT_ARRAY:
		if (!json_is_array(v))
			return false;
		for (i = 0; i < json_array_size(v); i++)
			if (!decodes(t->elem, json_array_get(v, i)))
				return false;
		return true;
	case FBC_GT_MAP:
	case FBC_GT_STRUCT:
		if (!json_is_object(v))
			return false;
		json_object_foreach((json_t *)v, k, m)
		{
			const fbc_gt_field *f =
				t->kind == FBC_GT_MAP ? NULL : fbc_gt_find_field(t, k, strlen(k));

			if (!decodes(t->kind == FBC_GT_MAP ? t->elem : f ? f->type : NULL, m))
				return false;
		}
		return true;
	default:
		return true;
	}
}

/* Whether a skimmed value of type st, built, is what skimming promised. */
static bool as_promised(const fbc_load_skim_type *st, const json_t *v)
{
	unsigned char *out = NULL;
	size_t n = 0, bad, i = 0;
	const json_t *d;
	bool ok;

	if (!st->base64_json)
		return decodes(st->go, v);
	if (!json_is_object(v) || json_object_size(v) != 1 ||
	    !json_is_string(d = json_object_get(v, "data")) ||
	    fbc_base64_decode(&out, &n, &bad, json_string_value(d), json_string_length(d)))
		return false;
	while (i < n && out[i] && strchr(" \t\n\r\v\f", out[i]))
		i++;
	ok = i < n && out[i] == '{';
	free(out);
	return ok;
}

/* Parse data with skimming; check every skimmed value and the tree built again
 * against jansson's. Returns how many values were skimmed. */
size_t fbc_json_fast_skim_check(const char *data, size_t size, const fbc_load_limits *lim)
{
	fbc_vec sk;
	fbc_json_fast_info info = {.skim = &skim, .skimmed = &sk};
	json_t *v, *slow;
	json_error_t jerr;
	const char *which = NULL;
	size_t n;
	int lines = 0;

	fbc_vec_init(&sk, sizeof(fbc_json_skimmed));
	if (!(v = fbc_json_fast_parse(data, size, lim, &info))) {
		if (sk.len)
			abort(); /* nothing listed for a value not read */
		fbc_vec_dispose(&sk);
		return 0;
	}
	n = sk.len;
	slow = json_loadb(data, size, JSON_DISABLE_EOF_CHECK | JSON_DECODE_ANY, &jerr);
	if (!slow || jerr.position <= 0 || (size_t)jerr.position != info.consumed)
		abort();
	for (size_t i = 0; i < info.consumed; i++)
		lines += data[i] == '\n';
	if (lines != info.lines)
		abort();
	for (size_t i = 0; i < n; i++) {
		const fbc_json_skimmed *r = FBC_VEC_AT(&sk, fbc_json_skimmed, i);
		json_t *built = json_loadb(r->text, r->len, JSON_DECODE_ANY, &jerr);

		if (!built)
			abort();
		if (strcmp(r->key, "relatedImages") == 0) {
			if (!related_as_promised(built))
				abort();
		} else {
			const fbc_load_skim_type *st =
				strcmp(json_string_value(json_object_get(r->obj, "type")), "a") == 0
					? &skim_types[0]
					: &skim_types[1];

			if (strcmp(r->key, "value") != 0 || !as_promised(st, built))
				abort();
		}
		json_decref(built);
	}
	if (fbc_json_fast_unskim(&sk) != 0 || sk.len != 0)
		abort();
	if (!fbc_json_same_tree(v, slow) || info.within != fbc_json_within(slow, 0, lim, &which))
		abort();
	json_decref(v);
	json_decref(slow);
	fbc_vec_dispose(&sk);
	return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t used = 0;
	fbc_load_limits lim;
	fbc_json_fast_info info = {0};
	const char *which = NULL;
	json_t *fast, *slow;
	json_error_t jerr;
	int lines = 0;

	fbc_load_limits_default(&lim);
	(void)fbc_json_fast_skim_check((const char *)data, size, &lim);
	lim.max_depth = 1 + size % 7;
	lim.max_string_bytes = size % 61;
	(void)fbc_json_fast_skim_check((const char *)data, size, &lim);
	fast = fbc_json_fast_parse((const char *)data, size, &lim, &info);
	if (!fast)
		return 0;
	used = info.consumed;
	if (info.within != fbc_json_within(fast, 0, &lim, &which))
		abort();
	for (size_t i = 0; i < used; i++)
		lines += data[i] == '\n';
	if (lines != info.lines)
		abort();
	slow = json_loadb((const char *)data, size, JSON_DISABLE_EOF_CHECK | JSON_DECODE_ANY,
			  &jerr);
	if (!slow || !fbc_json_same_tree(fast, slow) || jerr.position <= 0 ||
	    (size_t)jerr.position != used)
		abort();
	json_decref(fast);
	json_decref(slow);
	return 0;
}
