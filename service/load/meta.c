/*
 * The per-object meta rules L6-L9 (§1.5) on one decoded value: an object,
 * keys unique under Go's case folding, schema/package/name strings, a
 * non-empty schema; then the meta handed to prepare (staged) or kept.
 * Runs on worker threads: touches nothing shared.
 */
#include "service/load/internal.h"
#include "service/load/json_arena.h"
#include "service/base/utf8.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define BLOB_IN_MESSAGE 256

/* ---- case folding for L7/L8 ---- */

static size_t utf8_decode(const unsigned char *s, size_t n, unsigned *cp)
{
	if (s[0] < 0x80) {
		*cp = s[0];
		return 1;
	}
	if ((s[0] & 0xe0) == 0xc0 && n >= 2) {
		*cp = (unsigned)(s[0] & 0x1f) << 6 | (s[1] & 0x3f);
		return 2;
	}
	if ((s[0] & 0xf0) == 0xe0 && n >= 3) {
		*cp = (unsigned)(s[0] & 0x0f) << 12 | (unsigned)(s[1] & 0x3f) << 6 | (s[2] & 0x3f);
		return 3;
	}
	if ((s[0] & 0xf8) == 0xf0 && n >= 4) {
		*cp = (unsigned)(s[0] & 0x07) << 18 | (unsigned)(s[1] & 0x3f) << 12 |
		      (unsigned)(s[2] & 0x3f) << 6 | (s[3] & 0x3f);
		return 4;
	}
	*cp = s[0];
	return 1;
}

/* Simple case folding: ASCII, Latin-1, Latin Extended-A, Greek, Cyrillic,
 * and the two compatibility letters that fold onto ASCII (long s, Kelvin
 * sign), which matter because they can spell "schema" or "package". */
static unsigned fold_cp(unsigned c)
{
	if (c < 0x80)
		return c >= 'A' && c <= 'Z' ? c + 32 : c;
	if (c == 0x17f)
		return 's';
	if (c == 0x212a)
		return 'k';
	if (c == 0x212b)
		return 0xe5;
	if (c == 0xb5)
		return 0x3bc;
	if ((c >= 0xc0 && c <= 0xde && c != 0xd7))
		return c + 32;
	if (c >= 0x100 && c <= 0x137 && (c & 1) == 0)
		return c + 1;
	if (c >= 0x139 && c <= 0x148 && (c & 1) == 1)
		return c + 1;
	if (c >= 0x14a && c <= 0x177 && (c & 1) == 0)
		return c + 1;
	if (c == 0x178)
		return 0xff;
	if (c >= 0x179 && c <= 0x17e && (c & 1) == 1)
		return c + 1;
	if (c >= 0x391 && c <= 0x3ab && c != 0x3a2)
		return c + 32;
	if (c == 0x3c2)
		return 0x3c3;
	if (c >= 0x410 && c <= 0x42f)
		return c + 32;
	if (c >= 0x400 && c <= 0x40f)
		return c + 80;
	return c;
}

/* Fold s into a malloc'd NUL-terminated string (at most 4 bytes per input
 * byte is never exceeded: folding keeps or shrinks the encoding length
 * except Latin-1 -> Greek mu, hence the factor 2). */
static char *fold_key(const char *s, size_t n)
{
	char *o = malloc(n * 2 + 1);
	size_t j = 0;

	if (o == NULL)
		return NULL;
	for (size_t i = 0; i < n;) {
		unsigned cp;
		size_t k = utf8_decode((const unsigned char *)s + i, n - i, &cp);
		if (cp < 0x80) {
			o[j++] = (char)fold_cp(cp);
		} else if (k == 1) {
			o[j++] = s[i];
		} else {
			j += fbc_utf8_encode(o + j, fold_cp(cp));
		}
		i += k;
	}
	o[j] = 0;
	return o;
}

typedef struct keyrec {
	const char *key;
	char *folded;
} keyrec;

static int cmp_keyrec(const void *a, const void *b)
{
	const keyrec *x = a, *y = b;
	int c = strcmp(x->folded, y->folded);
	return c != 0 ? c : strcmp(x->key, y->key);
}

/* The "got ..." part of L8, shaped like opm's "%t: %v" of a Go value. */
static void describe_value(char *buf, size_t size, const json_t *v)
{
	char num[64];

	switch (json_typeof(v)) {
	case JSON_TRUE:
		snprintf(buf, size, "true: true");
		return;
	case JSON_FALSE:
		snprintf(buf, size, "false: false");
		return;
	case JSON_NULL:
		snprintf(buf, size, "%%!t(<nil>): <nil>");
		return;
	case JSON_INTEGER:
		snprintf(num, sizeof(num), "%" JSON_INTEGER_FORMAT, json_integer_value(v));
		snprintf(buf, size, "%%!t(float64=%s): %s", num, num);
		return;
	case JSON_REAL:
		snprintf(num, sizeof(num), "%.17g", json_real_value(v));
		snprintf(buf, size, "%%!t(float64=%s): %s", num, num);
		return;
	case JSON_ARRAY:
		snprintf(buf, size, "%%!t([]interface {}=[...]): [...]");
		return;
	default:
		snprintf(buf, size, "%%!t(map[string]interface {}=map[...]): map[...]");
		return;
	}
}

/* The first cap bytes of a dump (n counts them all). */
typedef struct head {
	char *p;
	size_t n, cap;
} head;

static int keep_head(const char *b, size_t size, void *data)
{
	head *h = data;

	if (h->n < h->cap)
		memcpy(h->p + h->n, b, size < h->cap - h->n ? size : h->cap - h->n);
	h->n += size;
	return 0;
}

/* L7 and L8 for an object of at most 16 keys, all ASCII (folding them is
 * ASCII lower-casing) and none equal to another ignoring case: 1 with found[]
 * (schema, package, name) set, or -1 with *bad the first key (in folded
 * order) of those three that is not a string (L8); 0 for any other object
 * (the caller folds and sorts its keys). */
static int quick_keys(json_t *v, const char *found[3], const char **bad)
{
	static const char *const fields[3] = {"schema", "package", "name"};
	const char *keys[16];
	size_t lens[16], n = 0;
	const char *k;
	size_t kl;
	json_t *val;

	if (json_object_size(v) > 16)
		return 0;
	json_object_keylen_foreach(v, k, kl, val)
	{
		for (size_t i = 0; i < kl; i++)
			if ((unsigned char)k[i] >= 0x80 || k[i] == '\0')
				return 0;
		for (size_t i = 0; i < n; i++)
			if (lens[i] == kl && strcasecmp(keys[i], k) == 0)
				return 0; /* L7: the caller reports it */
		keys[n] = k;
		lens[n++] = kl;
	}
	/* in folded order: name, package, schema */
	for (int f = 2; f >= 0; f--) {
		for (size_t i = 0; i < n; i++) {
			if (strcasecmp(keys[i], fields[f]) != 0)
				continue;
			val = json_object_get(v, keys[i]);
			if (!json_is_string(val)) {
				*bad = keys[i];
				return -1;
			}
			found[f] = json_string_value(val);
		}
	}
	return 1;
}

/* Apply L6-L9 to one decoded value (reference stolen) and append the meta
 * or the findings. */
int fbc_load_check_meta(fbc_vec *items, json_t *v, int line, const fbc_load_stagecall *sc,
			fbc_vec *skimmed)
{
	keyrec *keys = NULL;
	size_t nkeys = 0, i;
	const char *k;
	json_t *val;
	const char *fields[3] = {"schema", "package", "name"};
	const char *found[3] = {"", "", ""};
	bool dup = false;
	fbc_load_item *it;
	int rc = 0;

	if (json_is_null(v)) {
		rc = fbc_load_item_finding(items, "L9", line,
					   "object 'null' is missing root schema field");
		goto done;
	}
	if (!json_is_object(v)) {
		rc = fbc_load_item_finding(
			items, "L6", line,
			"json: cannot unmarshal %s into Go value of type map[string]interface {}",
			fbc_gt_json_kind(v));
		goto done;
	}
	/* The usual blob: a few ASCII keys, none equal to another ignoring case;
	 * L7 and L8 then need no folded copy of each key. */
	switch (quick_keys(v, found, &k)) {
	case 1:
		goto l9;
	case -1: /* L8 on key k */
		val = json_object_get(v, k);
		{
			char got[160];
			describe_value(got, sizeof(got), val);
			rc = fbc_load_item_finding(
				items, "L8", line,
				"expected value for key \"%s\" to be a string, got %s", k, got);
		}
		goto done;
	default:
		break;
	}
	/* L7: keys unique under case folding */
	keys = calloc(json_object_size(v) + 1, sizeof(*keys));
	if (keys == NULL) {
		rc = FBC_ENOMEM;
		goto done;
	}
	json_object_foreach(v, k, val)
	{
		keys[nkeys].key = k;
		keys[nkeys].folded = fold_key(k, strlen(k));
		if (keys[nkeys].folded == NULL) {
			rc = FBC_ENOMEM;
			goto done;
		}
		nkeys++;
	}
	qsort(keys, nkeys, sizeof(*keys), cmp_keyrec);
	for (i = 0; i < nkeys;) {
		size_t j = i + 1;
		while (j < nkeys && strcmp(keys[j].folded, keys[i].folded) == 0)
			j++;
		if (j - i > 1) {
			char list[1024];
			size_t off = 0;
			for (size_t m = i; m < j && off < sizeof(list); m++) {
				int w = snprintf(list + off, sizeof(list) - off, "%s%s",
						 m == i ? "" : " ", keys[m].key);
				if (w < 0)
					break;
				off += (size_t)w;
			}
			dup = true;
			rc = fbc_load_item_finding(items, "L7", line,
						   "duplicate keys for key \"%s\": [%s]",
						   keys[i].folded, list);
			if (rc != 0)
				goto done;
		}
		i = j;
	}
	if (dup)
		goto done;
	/* L8: schema/package/name, matched case-insensitively, are strings */
	for (i = 0; i < nkeys; i++) {
		for (size_t f = 0; f < 3; f++) {
			if (strcmp(keys[i].folded, fields[f]) != 0)
				continue;
			val = json_object_get(v, keys[i].key);
			if (!json_is_string(val)) {
				char got[160];
				describe_value(got, sizeof(got), val);
				rc = fbc_load_item_finding(
					items, "L8", line,
					"expected value for key \"%s\" to be a string, got %s",
					keys[i].key, got);
				goto done;
			}
			found[f] = json_string_value(val);
		}
	}
l9:
	/* values skimmed (fbc_load_skim) are built again unless the blob is of the
	 * schema whose prepare takes their placeholders */
	if (skimmed && skimmed->len && (!sc || strcmp(found[0], sc->stage->skim->schema) != 0) &&
	    (rc = fbc_json_fast_unskim(skimmed)) != 0)
		goto done;
	/* L9: a non-empty schema */
	if (found[0][0] == 0) {
		/* the head only, into a buffer of ours (not json_dumps: what jansson
		 * allocates may be an arena's here, never free()'s) */
		char dump[BLOB_IN_MESSAGE + 1];
		head h = {dump, 0, sizeof(dump)};
		size_t n = json_dump_callback(v, keep_head, &h,
					      JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY) == 0
				   ? h.n
				   : 0;
		const char *ell = "";
		if (n > BLOB_IN_MESSAGE) {
			n = BLOB_IN_MESSAGE;
			while (n > 0 && ((unsigned char)dump[n] & 0xc0) == 0x80)
				n--; /* keep whole UTF-8 sequences */
			ell = "...";
		}
		rc = fbc_load_item_finding(items, "L9", line,
					   "object '%.*s%s' is missing root schema field", (int)n,
					   dump, ell);
		goto done;
	}
	it = fbc_vec_push(items);
	if (it == NULL) {
		rc = FBC_ENOMEM;
		goto done;
	}
	it->is_meta = true;
	it->line = line;
	if (sc != NULL) {
		/* prepare now and drop the tree: only the result waits for delivery */
		fbc_meta m = {found[0], found[1], found[2], v, {sc->file, line}, NULL};
		it->prepared = sc->stage->prepare(sc->stage->ctx, sc->worker, &m);
		goto done;
	}
	it->blob = v;
	v = NULL;
	it->schema = found[0];
	it->package = found[1];
	it->name = found[2];
done:
	for (i = 0; i < nkeys; i++)
		free(keys[i].folded);
	free(keys);
	if (sc != NULL && fbc_json_arena_active())
		fbc_json_arena_reset(); /* the whole tree at once, prepare is done with it */
	else
		json_decref(v);
	return rc;
}
