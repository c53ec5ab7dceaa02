/*
 * The JSON fast path's skimming (see fbc_load_skim in load.h): values checked
 * on the raw text instead of built.
 */
#include "service/base/base64.h"
#include "service/load/jsonscan.h"

/* Skimming: a value checked against a Go type on the raw text. Each
 * function returns true only when the value is one the fast path reads
 * (fbc_json_fast_object) and decodes into the type the way the tree check
 * (service/fbc fbc_gt_check) would find; anything else, false: the caller
 * builds the value as usual and the tree check gives its verdict. Every
 * member is checked, duplicates included (the tree keeps the last one: a
 * value all of whose members decode has its last ones decode). Strings and
 * depths are measured as the tree walk would, and past a limit it is false
 * (so the blob's verdict on the limits is the rest's). */

static bool skim_measure(jf *j, size_t n)
{
	if (n > j->lim->max_string_bytes)
		return false;
	if (n > j->longest)
		j->longest = n;
	return true;
}

/* A string at j->p: its raw bytes (*s, *n) and *esc false, or with escapes
 * *esc true and *n its decoded length. */
static bool skim_string(jf *j, const char **s, size_t *n, bool *esc)
{
	json_t *v;

	if (j->p >= j->end || *j->p != '"')
		return false;
	if (scan_string(j, s, n, esc))
		return skim_measure(j, *n);
	if (!*esc || !(v = escaped_string(j, j->p + 1)))
		return false;
	*n = json_string_length(v);
	json_decref(v);
	return skim_measure(j, *n);
}

static bool skim_container(jf *j, int depth)
{
	if (depth > MAX_DEPTH || (size_t)depth > j->lim->max_depth)
		return false;
	if (depth > j->deepest)
		j->deepest = depth;
	j->p++;
	skip_space(j);
	return true;
}

/* t NULL: any JSON (json.RawMessage, or a member no field takes). */
static bool skim_value(jf *j, const fbc_gt_type *t, int depth)
{
	const char *s;
	size_t n, bad;
	bool esc, any = !t || t->kind == FBC_GT_ANY;
	long long iv;
	int at;

	if (depth > MAX_DEPTH || j->p >= j->end)
		return false;
	switch (*j->p) {
	case 'n':
		return word_at(j, "null"); /* null leaves the zero value */
	case 't':
		return word_at(j, "true") && (any || t->kind == FBC_GT_BOOL);
	case 'f':
		return word_at(j, "false") && (any || t->kind == FBC_GT_BOOL);
	case '"':
		if (!skim_string(j, &s, &n, &esc))
			return false;
		if (any || t->kind == FBC_GT_STRING)
			return true;
		return t->kind == FBC_GT_BYTES && !esc &&
		       fbc_base64_decode(NULL, NULL, &bad, s, n) == 0;
	case '[':
		if (!any && t->kind != FBC_GT_ARRAY)
			return false;
		if (!skim_container(j, depth))
			return false;
		if (j->p < j->end && *j->p == ']') {
			j->p++;
			return true;
		}
		do {
			if (!skim_value(j, any ? NULL : t->elem, depth + 1))
				return false;
		} while ((at = after_item(j, ']')) == 0);
		return at == 1;
	case '{':
		if (!any && t->kind != FBC_GT_STRUCT && t->kind != FBC_GT_MAP)
			return false;
		if (!skim_container(j, depth))
			return false;
		if (j->p < j->end && *j->p == '}') {
			j->p++;
			return true;
		}
		do {
			const fbc_gt_type *mt = NULL;

			if (!skim_string(j, &s, &n, &esc))
				return false;
			if (!any && t->kind == FBC_GT_MAP) {
				mt = t->elem;
			} else if (!any) {
				const fbc_gt_field *f;

				if (esc)
					return false; /* the field's name: left to the tree */
				f = fbc_gt_find_field(t, s, n);
				mt = f ? f->type : NULL;
			}
			skip_space(j);
			if (j->p >= j->end || *j->p != ':')
				return false;
			j->p++;
			skip_space(j);
			if (!skim_value(j, mt, depth + 1))
				return false;
		} while ((at = after_item(j, '}')) == 0);
		return at == 1;
	default:
		if (*j->p != '-' && (*j->p < '0' || *j->p > '9'))
			return false;
		if (!integer(j, &iv))
			return false;
		return any || (t->kind == FBC_GT_INT && iv >= INT32_MIN && iv <= INT32_MAX);
	}
}

/* {"data": S} exactly, S base64 (no escapes) of bytes whose first one after
 * white space is '{' (what service/fbc's bundle-object reading needs no more
 * of in a catalog loaded to be validated). */
static bool skim_base64_json(jf *j, int depth)
{
	const char *s;
	size_t n, bad, head, out_len = 0, i = 0;
	unsigned char *out = NULL;
	bool esc, json;

	if (j->p >= j->end || *j->p != '{' || !skim_container(j, depth))
		return false;
	if (!skim_string(j, &s, &n, &esc) || esc || n != 4 || memcmp(s, "data", 4) != 0)
		return false;
	skip_space(j);
	if (j->p >= j->end || *j->p != ':')
		return false;
	j->p++;
	skip_space(j);
	if (!skim_string(j, &s, &n, &esc) || esc || fbc_base64_decode(NULL, NULL, &bad, s, n))
		return false;
	/* the first bytes are enough (64 characters: whole groups, no padding
	 * unless they are all of it) */
	head = n < 64 ? n : 64;
	if (fbc_base64_decode(&out, &out_len, &bad, s, head))
		return false;
	while (i < out_len && (out[i] == ' ' || out[i] == '\t' || out[i] == '\n' ||
			       out[i] == '\r' || out[i] == '\v' || out[i] == '\f'))
		i++;
	json = i < out_len && out[i] == '{';
	free(out);
	return json && after_item(j, '}') == 1;
}

/* The skim type of a property object o whose only member so far is "type",
 * NULL when none. */
const fbc_load_skim_type *fbc_json_skim_type_of(const jf *j, json_t *o)
{
	void *it = json_object_iter(o);
	const char *t;

	if (json_object_size(o) != 1 || strcmp(json_object_iter_key(it), "type") != 0 ||
	    !(t = json_string_value(json_object_iter_value(it))))
		return NULL;
	for (size_t i = 0; i < j->skim->n_types; i++) {
		if (strcmp(t, j->skim->types[i].type) == 0)
			return &j->skim->types[i];
	}
	return NULL;
}

/* The placeholder of a property value at j->p that checks out and ends its
 * object, listed in j->skimmed; NULL, j as it was, otherwise. */
json_t *fbc_json_skim_property_value(jf *j, json_t *o, const fbc_load_skim_type *st, int depth)
{
	jf saved = *j;
	const unsigned char *start = j->p, *after;
	fbc_json_skimmed *r;
	json_t *ph;
	size_t used;
	int lines;
	bool ok = st->base64_json ? skim_base64_json(j, depth) : skim_value(j, st->go, depth);

	if (ok) {
		/* a peek: "value" must be the last member (the caller reads on from after) */
		after = j->p;
		lines = j->lines;
		skip_space(j);
		ok = j->p < j->end && *j->p == '}';
		j->p = after;
		j->lines = lines;
	}
	if (ok && (ph = fbc_json_fast_object(st->placeholder, strlen(st->placeholder), &used))) {
		if ((r = fbc_vec_push(j->skimmed)) != NULL) {
			r->obj = o;
			r->key = "value";
			r->text = (const char *)start;
			r->len = (size_t)(after - start);
			return ph;
		}
		json_decref(ph);
	}
	*j = saved;
	return NULL;
}

/* One element of a skimmed relatedImages array at j->p (see fbc_load_skim). */
static bool skim_related_image(jf *j, int depth)
{
	bool seen_name = false, seen_image = false;
	char buf[1024];
	const char *s;
	size_t n;
	bool esc;
	int at;

	if (j->p >= j->end || *j->p != '{' || !skim_container(j, depth))
		return false;
	if (j->p < j->end && *j->p == '}') {
		j->p++;
		return true;
	}
	do {
		bool image;

		if (!skim_string(j, &s, &n, &esc) || esc)
			return false;
		image = n == 5 && memcmp(s, "image", 5) == 0;
		if (image ? seen_image : (n != 4 || memcmp(s, "name", 4) != 0 || seen_name))
			return false; /* another member, or twice: left to the tree */
		seen_image |= image;
		seen_name |= !image;
		skip_space(j);
		if (j->p >= j->end || *j->p != ':')
			return false;
		j->p++;
		skip_space(j);
		if (!skim_string(j, &s, &n, &esc) || esc)
			return false;
		if (image && n > 0) {
			if (n >= sizeof(buf))
				return false;
			memcpy(buf, s, n);
			buf[n] = '\0';
			if (!j->skim->related_image_ok(buf, n))
				return false;
		}
	} while ((at = after_item(j, '}')) == 0);
	return at == 1;
}

/* The placeholder [] of a top-level relatedImages array at j->p that
 * checks out, listed in j->skimmed; NULL, j as it was, otherwise. */
json_t *fbc_json_skim_related_images(jf *j, json_t *o, int depth)
{
	jf saved = *j;
	const unsigned char *start = j->p;
	fbc_json_skimmed *r;
	json_t *ph;
	int at = 0;

	if (!skim_container(j, depth))
		goto fail;
	if (j->p < j->end && *j->p == ']') {
		j->p++;
	} else {
		while (at == 0) {
			if (!skim_related_image(j, depth + 1) || (at = after_item(j, ']')) < 0)
				goto fail;
		}
	}
	if ((ph = json_array()) != NULL) {
		if ((r = fbc_vec_push(j->skimmed)) != NULL) {
			r->obj = o;
			r->key = "relatedImages";
			r->text = (const char *)start;
			r->len = (size_t)(j->p - start);
			return ph;
		}
		json_decref(ph);
	}
fail:
	*j = saved;
	return NULL;
}
