/*
 * One file's bytes -> items: format detection (§1.3), the JSON value stream
 * and the exact YAML document splitter (§1.4); each value then goes through
 * the per-object meta rules L6-L9 (meta.c). Runs on worker threads: touches
 * nothing shared.
 */
#include "service/load/internal.h"
#include "service/load/json_arena.h"
#include "service/base/utf8.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SNIFF_BYTES 4096
#define DEFAULT_MB  ((size_t)1 << 20)

#define DEFAULT_EXPAND_RATIO 10
#define DEFAULT_EXPANDED     (256 * DEFAULT_MB)

static size_t expand_ratio = DEFAULT_EXPAND_RATIO;
static size_t expanded_bytes = DEFAULT_EXPANDED;

void fbc_load_limits_set_expansion(size_t ratio, size_t max_bytes)
{
	expand_ratio = ratio ? ratio : DEFAULT_EXPAND_RATIO;
	expanded_bytes = max_bytes ? max_bytes : DEFAULT_EXPANDED;
}

void fbc_load_limits_default(fbc_load_limits *lim)
{
	memset(lim, 0, sizeof(*lim)); /* fields added later start at 0 too */
	lim->max_file_bytes = 64 * DEFAULT_MB;
	lim->max_total_bytes = (size_t)4 << 30;
	lim->max_depth = 64;
	lim->max_alias_nodes = 10000;
	lim->max_string_bytes = 16 * DEFAULT_MB;
	lim->max_expand_ratio = expand_ratio;
	lim->max_expanded_bytes = expanded_bytes;
	lim->max_blobs = 1000000;
	lim->max_files = 100000;
	lim->threads = 0;
	lim->validate_only = false;
	lim->validate_lean = false;
}

void fbc_load_limits_resolve(fbc_load_limits *out, const fbc_load_limits *lim)
{
	fbc_load_limits d;

	fbc_load_limits_default(&d);
	if (lim == NULL) {
		*out = d;
		return;
	}
	*out = *lim;
	if (out->max_file_bytes == 0)
		out->max_file_bytes = d.max_file_bytes;
	if (out->max_total_bytes == 0)
		out->max_total_bytes = d.max_total_bytes;
	if (out->max_depth == 0)
		out->max_depth = d.max_depth;
	if (out->max_alias_nodes == 0)
		out->max_alias_nodes = d.max_alias_nodes;
	if (out->max_string_bytes == 0)
		out->max_string_bytes = d.max_string_bytes;
	if (out->max_expand_ratio == 0)
		out->max_expand_ratio = d.max_expand_ratio;
	if (out->max_expanded_bytes == 0)
		out->max_expanded_bytes = d.max_expanded_bytes;
	if (out->max_blobs == 0)
		out->max_blobs = d.max_blobs;
	if (out->max_files == 0)
		out->max_files = d.max_files;
}

int fbc_load_item_finding(fbc_vec *items, const char *code, int line, const char *fmt, ...)
{
	fbc_load_item *it;
	va_list ap;
	char *msg = NULL;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&msg, fmt, ap);
	va_end(ap);
	if (n < 0)
		return FBC_ENOMEM;
	it = fbc_vec_push(items);
	if (it == NULL) {
		free(msg);
		return FBC_ENOMEM;
	}
	it->code = code;
	it->message = msg;
	it->line = line;
	return 0;
}

void fbc_load_items_clear_staged(fbc_vec *items, const fbc_load_stage *stage)
{
	for (size_t i = 0; i < items->len; i++) {
		fbc_load_item *it = FBC_VEC_AT(items, fbc_load_item, i);
		json_decref(it->blob);
		free(it->message);
		if (it->prepared != NULL && stage != NULL && stage->discard != NULL)
			stage->discard(stage->ctx, it->prepared);
	}
	items->len = 0;
}

void fbc_load_items_clear(fbc_vec *items)
{
	fbc_load_items_clear_staged(items, NULL);
}

static int error_item(fbc_vec *items, int code, int line, const char *json_code, const fbc_error *e)
{
	if (code == FBC_ENOMEM)
		return FBC_ENOMEM;
	return fbc_load_item_finding(items, code == FBC_ELIMIT ? "LIMIT" : json_code, line, "%s",
				     e->message);
}

static int count_lines(const char *p, const char *end)
{
	int n = 0;

	while (p < end && (p = memchr(p, '\n', (size_t)(end - p))) != NULL) {
		n++;
		p++;
	}
	return n;
}

static bool json_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* Bounds on a decoded JSON value: nesting depth and string length (the
 * file size already bounds everything else). */
bool fbc_json_within(const json_t *v, size_t depth, const fbc_load_limits *lim, const char **which)
{
	const char *k;
	json_t *child;
	size_t i;

	if (json_is_string(v)) {
		if (json_string_length(v) > lim->max_string_bytes) {
			*which = "max_string_bytes";
			return false;
		}
		return true;
	}
	if (!json_is_object(v) && !json_is_array(v))
		return true;
	if (depth + 1 > lim->max_depth) {
		*which = "max_depth";
		return false;
	}
	if (json_is_object(v)) {
		json_object_foreach((json_t *)v, k, child)
		{
			if (strlen(k) > lim->max_string_bytes) {
				*which = "max_string_bytes";
				return false;
			}
			if (!fbc_json_within(child, depth + 1, lim, which))
				return false;
		}
	} else {
		json_array_foreach(v, i, child)
		{
			if (!fbc_json_within(child, depth + 1, lim, which))
				return false;
		}
	}
	return true;
}

static bool hex4(const char *p, const char *end, unsigned *out)
{
	unsigned v = 0;

	if (end - p < 4)
		return false;
	for (int i = 0; i < 4; i++) {
		char c = p[i];
		v <<= 4;
		if (c >= '0' && c <= '9')
			v |= (unsigned)(c - '0');
		else if ((c | 0x20) >= 'a' && (c | 0x20) <= 'f')
			v |= (unsigned)((c | 0x20) - 'a' + 10);
		else
			return false;
	}
	*out = v;
	return true;
}

/*
 * What Go's encoding/json accepts and jansson does not, rewritten so that
 * jansson decodes it the way opm sees it: invalid UTF-8 bytes and lone
 * UTF-16 surrogate escapes become U+FFFD, and an escaped NUL becomes the
 * visible text \u0000 (fbcd strings are NUL-terminated; keeping the NUL
 * would silently truncate names, keeping it visible keeps them distinct
 * and invalid wherever a NUL makes them invalid for opm). Newlines are
 * kept, so line numbers do not move. Returns a malloc'd copy or NULL.
 */
static char *json_sanitize(const char *data, size_t len, size_t *out_len)
{
	const char *p = data, *end = data + len;
	size_t cap = len + 1;
	bool in_str = false;
	char *o, *w;

	/* worst case: +2 per non-ASCII byte (U+FFFD), +1 per backslash (\\u0000) */
	for (size_t i = 0; i < len; i++)
		cap += (unsigned char)data[i] >= 0x80 ? 2 : data[i] == '\\' ? 1 : 0;
	o = w = malloc(cap);
	if (o == NULL)
		return NULL;
	while (p < end) {
		unsigned char c = (unsigned char)*p;
		unsigned u, u2;

		if (c >= 0x80) {
			size_t n =
				fbc_utf8_decode(NULL, (const unsigned char *)p, (size_t)(end - p));
			if (n == 0) {
				memcpy(w, "\xef\xbf\xbd", 3);
				w += 3;
				p++;
			} else {
				memcpy(w, p, n);
				w += n;
				p += n;
			}
			continue;
		}
		if (!in_str || c != '\\') {
			if (c == '"')
				in_str = !in_str;
			*w++ = *p++;
			continue;
		}
		if (end - p >= 2 && p[1] == 'u' && hex4(p + 2, end, &u)) {
			if (u == 0) {
				memcpy(w, "\\\\u0000", 7);
				w += 7;
				p += 6;
				continue;
			}
			if (u >= 0xd800 && u <= 0xdfff &&
			    !(u <= 0xdbff && end - p >= 12 && p[6] == '\\' && p[7] == 'u' &&
			      hex4(p + 8, end, &u2) && u2 >= 0xdc00 && u2 <= 0xdfff)) {
				memcpy(w, "\\ufffd", 6);
				w += 6;
				p += 6;
				continue;
			}
			if (u >= 0xd800 && u <= 0xdbff) {
				memcpy(w, p, 12); /* a valid pair */
				w += 12;
				p += 12;
				continue;
			}
		}
		*w++ = *p++; /* the backslash; what it escapes is copied next */
		if (p < end && (unsigned char)*p < 0x80)
			*w++ = *p++;
	}
	*w = 0;
	*out_len = (size_t)(w - o);
	return o;
}

/*
 * JSON stream: values separated by optional whitespace. The JSON-to-YAML
 * fallback of apimachinery is deliberately not copied (spec §1.3 allows
 * either): a JSON syntax error is reported as L4 and ends the file.
 */
static int parse_json_stream(fbc_vec *items, const char *data, size_t len,
			     const fbc_load_limits *lim, const fbc_load_stagecall *sc)
{
	size_t pos = 0;
	int line = 1;
	const char *counted = data;
	char *clean = NULL; /* json_sanitize's copy of the rest, once needed */
	fbc_vec skimmed;    /* of fbc_json_skimmed: a blob's values not built */
	int rc = 0;

	fbc_vec_init(&skimmed, sizeof(fbc_json_skimmed));

	for (;;) {
		json_error_t jerr;
		json_t *v;
		const char *which = NULL;
		bool within = false; /* the fast path measured it within the limits */
		int doc_lines = -1;  /* the fast path counted the value's lines */

		while (pos < len && json_space(data[pos]))
			pos++;
		if (pos >= len)
			break;
		line += count_lines(counted, data + pos);
		counted = data + pos;
		/* catalogs' objects: the fast path, or jansson for anything unusual */
		skimmed.len = 0;
		{
			fbc_json_fast_info info = {0};

			if (sc && sc->stage->skim) {
				info.skim = sc->stage->skim;
				info.skimmed = &skimmed;
			}
			if ((v = fbc_json_fast_parse(data + pos, len - pos, lim, &info)) != NULL) {
				pos += info.consumed;
				within = info.within;
				doc_lines = info.lines;
				goto parsed;
			}
		}
		v = json_loadb(data + pos, len - pos, JSON_DISABLE_EOF_CHECK | JSON_DECODE_ANY,
			       &jerr);
		if (v == NULL && strstr(jerr.text, "too big") != NULL)
			v = json_loadb(data + pos, len - pos,
				       JSON_DISABLE_EOF_CHECK | JSON_DECODE_ANY |
					       JSON_DECODE_INT_AS_REAL,
				       &jerr);
		if (v == NULL && clean == NULL) {
			/* rare: retry the rest of the file once, as Go would read it */
			size_t clean_len = 0;
			clean = json_sanitize(data + pos, len - pos, &clean_len);
			if (clean == NULL) {
				rc = FBC_ENOMEM;
				goto done;
			}
			if (clean_len != len - pos || memcmp(clean, data + pos, clean_len) != 0) {
				data = clean;
				len = clean_len;
				pos = 0;
				counted = clean;
				continue;
			}
		}
		if (v == NULL) {
			int eline = line + (jerr.line > 0 ? jerr.line - 1 : 0);
			/* jansson's own nesting cap (2048) is our max_depth too */
			bool deep = strstr(jerr.text, "depth") != NULL;
			rc = fbc_load_item_finding(items, deep ? "LIMIT" : "L4", line,
						   "json: line %d column %d: %s", eline,
						   jerr.column, jerr.text);
			goto done;
		}
		if (jerr.position <= 0) {
			json_decref(v);
			rc = fbc_load_item_finding(items, "L4", line,
						   "json: line %d: cannot frame value", line);
			goto done;
		}
		pos += (size_t)jerr.position;
	parsed:
		if (!within && !fbc_json_within(v, 0, lim, &which)) {
			json_decref(v);
			rc = fbc_load_item_finding(items, "LIMIT", line,
						   "JSON value exceeds the %s limit (%zu)", which,
						   strcmp(which, "max_depth") == 0
							   ? lim->max_depth
							   : lim->max_string_bytes);
		} else {
			rc = fbc_load_check_meta(items, v, line, sc, &skimmed);
		}
		if (rc != 0)
			goto done;
		if (doc_lines >= 0) { /* no need to count them again */
			line += doc_lines;
			counted = data + pos;
		}
	}
done:
	fbc_vec_dispose(&skimmed);
	free(clean);
	return rc;
}

static int parse_yaml_doc(fbc_vec *items, const char *p, size_t n, int line,
			  const fbc_load_limits *lim, const fbc_load_stagecall *sc)
{
	json_t *v = NULL;
	int content_line = line;
	fbc_error e;
	int rc;

	fbc_error_init(&e);
	rc = fbc_yaml_doc_parse(&v, &content_line, p, n, line, lim, &e);
	if (rc != 0)
		return error_item(items, rc, line, "L5", &e);
	return fbc_load_check_meta(items, v, content_line, sc, NULL);
}

static bool trim_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

/*
 * The §1.4 splitter. A document is always a contiguous byte range of the
 * file (separator lines are only dropped at its edges), so documents are
 * parsed in place, without copying.
 */
static int parse_yaml_stream(fbc_vec *items, const char *data, size_t len,
			     const fbc_load_limits *lim, const fbc_load_stagecall *sc)
{
	const char *end = data + len;
	const char *p = data;
	const char *doc = NULL; /* start of the buffered document, NULL when empty */
	int doc_line = 0;
	int lineno = 1;
	int rc;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *next = nl ? nl + 1 : end;

		if (next - p >= 3 && p[0] == '-' && p[1] == '-' && p[2] == '-') {
			const char *r = p + 3, *re = next;
			while (r < re && trim_space(*r))
				r++;
			while (re > r && trim_space(re[-1]))
				re--;
			if (r < re && *r != '#') {
				rc = fbc_load_item_finding(items, "L5", lineno,
							   "invalid Yaml document separator: %.*s",
							   (int)(re - r > 200 ? 200 : re - r), r);
				if (rc != 0)
					return rc;
				/* carry on as if it were a separator, to report more */
				if (doc != NULL) {
					rc = parse_yaml_doc(items, doc, (size_t)(p - doc), doc_line,
							    lim, sc);
					if (rc != 0)
						return rc;
					doc = NULL;
				}
			} else if (doc != NULL) {
				rc = parse_yaml_doc(items, doc, (size_t)(p - doc), doc_line, lim,
						    sc);
				if (rc != 0)
					return rc;
				doc = NULL;
			} else {
				doc = p; /* the separator starts the next document */
				doc_line = lineno;
			}
		} else if (doc == NULL) {
			doc = p;
			doc_line = lineno;
		}
		p = next;
		lineno++;
	}
	if (doc != NULL)
		return parse_yaml_doc(items, doc, (size_t)(end - doc), doc_line, lim, sc);
	return 0;
}

int fbc_load_parse_data(fbc_vec *items, const char *data, size_t len, const fbc_load_limits *lim)
{
	return fbc_load_parse_data_staged(items, data, len, lim, NULL);
}

int fbc_load_parse_data_staged(fbc_vec *items, const char *data, size_t len,
			       const fbc_load_limits *lim, const fbc_load_stagecall *sc)
{
	size_t sniff = len < SNIFF_BYTES ? len : SNIFF_BYTES;
	size_t i = 0;

	if (len > lim->max_file_bytes)
		return fbc_load_item_finding(
			items, "LIMIT", 0,
			"file of %zu bytes exceeds the max_file_bytes limit (%zu)", len,
			lim->max_file_bytes);
	while (i < sniff && trim_space(data[i]))
		i++;
	if (i < sniff && data[i] == '{')
		return parse_json_stream(items, data, len, lim, sc);
	return parse_yaml_stream(items, data, len, lim, sc);
}
