/*
 * A fast path for the YAML documents of catalogs: one document read into the
 * json_t the libyaml path of yaml.c builds from the same bytes (same types,
 * same key order, same root line), without libyaml's token and event
 * machinery. It handles the block style opm, go-yaml and most people write:
 * block mappings with plain keys, block sequences (also "indentless" ones at
 * their key's column, and "- key: value" items), plain scalars (folded over
 * lines), single- and double-quoted scalars (escapes and folding as libyaml's
 * scanner does them), literal block scalars "|" and "|-", and the empty flow
 * collections {} and []. The whole document must be valid UTF-8 of printable
 * characters without tabs or carriage returns.
 *
 * Anything else — comments, anchors, aliases, tags, flow collections with
 * content, folded ">" and kept "|+" scalars, quoted keys, a typed key, the
 * merge key, a float JSON cannot hold, nesting or strings beyond the limits,
 * every syntax error — makes it give up, and the caller parses the document
 * with libyaml as before, so findings and their messages are libyaml's. The
 * unit test load_yamlfast compares both paths on every document of the real
 * catalogs, and the fuzz target yaml_fast on whatever it generates.
 */
#include "service/base/utf8.h"
#include "service/load/internal.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define DECLINE 1    /* leave the document to libyaml */
#define MAX_KEY 1000 /* libyaml refuses simple keys past 1024 characters */

typedef struct yf {
	const char *end; /* the end of the document */
	const char *p;	 /* start of the current line (p == end: no more lines) */
	const char *le;	 /* its end: the '\n' or end */
	int line;	 /* index of the current line in the document */
	const fbc_load_limits *lim;
	size_t depth;
	char *buf; /* scratch for scalars built from several pieces */
	size_t len, cap;
	int rc; /* DECLINE or FBC_ENOMEM once something failed */
} yf;

static int fail(yf *y, int rc)
{
	if (!y->rc)
		y->rc = rc;
	return y->rc;
}

static const char *line_end(const yf *y, const char *p)
{
	const char *nl = memchr(p, '\n', (size_t)(y->end - p));

	return nl ? nl : y->end;
}

/* Make p (a line start, or end) the current line. */
static void set_line(yf *y, const char *p)
{
	y->p = p;
	y->le = line_end(y, p);
}

static void next_line(yf *y)
{
	set_line(y, y->le < y->end ? y->le + 1 : y->end);
	y->line++;
}

static int indent_of(const char *p, const char *le)
{
	const char *q = p;

	while (q < le && *q == ' ')
		q++;
	return (int)(q - p);
}

/* Skip whitespace-only lines; a comment line is not for this path. */
static int skip_blank_lines(yf *y)
{
	while (y->p < y->end) {
		const char *le = y->le;
		int ind = indent_of(y->p, le);

		if (y->p + ind < le)
			return y->p[ind] == '#' ? fail(y, DECLINE) : 0;
		next_line(y);
	}
	return 0;
}

/* The indentation of the current line, -1 at the end of the document. */
static int cur_indent(const yf *y)
{
	return y->p < y->end ? indent_of(y->p, y->le) : -1;
}

static int buf_add(yf *y, const char *s, size_t n)
{
	if (y->len + n + 1 > y->cap) {
		size_t cap = y->cap ? y->cap : 256;
		char *nb;

		while (cap < y->len + n + 1)
			cap *= 2;
		if (!(nb = realloc(y->buf, cap)))
			return fail(y, FBC_ENOMEM);
		y->buf = nb;
		y->cap = cap;
	}
	memcpy(y->buf + y->len, s, n);
	y->len += n;
	return 0;
}

static int buf_repeat(yf *y, char c, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (buf_add(y, &c, 1))
			return y->rc;
	return 0;
}

/* The scalar built in the scratch buffer as a string. */
static int buf_string(yf *y, json_t **out)
{
	if (y->len > y->lim->max_string_bytes)
		return fail(y, DECLINE);
	if (!(*out = json_stringn_nocheck(y->buf ? y->buf : "", y->len)))
		return fail(y, FBC_ENOMEM);
	return 0;
}

/* The bytes libyaml accepts and this path understands: printable ASCII and
 * newlines, and valid UTF-8 above U+009F except the YAML 1.1 line breaks
 * U+2028 and U+2029 and the byte order mark. */
static bool text_ok(const unsigned char *s, const unsigned char *end)
{
	while (s < end) {
		unsigned c = *s;
		uint32_t v;
		size_t n;

		/* eight ASCII bytes at a time, none below 0x20 or equal to 0x7F */
		while (end - s >= 8) {
			uint64_t w;

			memcpy(&w, s, 8);
			if (fbc_word_has_high(w) || fbc_word_has_below(w, 0x20) ||
			    fbc_word_has_byte(w, 0x7F))
				break;
			s += 8;
		}
		if (s >= end)
			break;
		c = *s;
		if (c < 0x80) {
			if ((c < 0x20 && c != '\n') || c == 0x7F)
				return false;
			s++;
			continue;
		}
		if (c < 0xC2 || c > 0xF4)
			return false;
		n = c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
		if ((size_t)(end - s) < n)
			return false;
		v = c & (n == 2 ? 0x1F : n == 3 ? 0x0F : 0x07);
		for (size_t i = 1; i < n; i++) {
			if ((s[i] & 0xC0) != 0x80)
				return false;
			v = (v << 6) | (s[i] & 0x3F);
		}
		if ((n == 3 && v < 0x800) || (n == 4 && (v < 0x10000 || v > 0x10FFFF)) ||
		    (v >= 0xD800 && v <= 0xDFFF) || v < 0xA0 || v == 0x2028 || v == 0x2029 ||
		    v == 0xFEFF || v == 0xFFFE || v == 0xFFFF)
			return false;
		s += n;
	}
	return true;
}

/* Characters that cannot start a plain scalar (libyaml's indicators). */
static bool plain_start_ok(const char *p, const char *le)
{
	switch (*p) {
	case '-':
		return p + 1 < le && p[1] != ' ';
	case '?':
	case ':':
	case ',':
	case '[':
	case ']':
	case '{':
	case '}':
	case '#':
	case '&':
	case '*':
	case '!':
	case '|':
	case '>':
	case '\'':
	case '"':
	case '%':
	case '@':
	case '`':
		return false;
	default:
		return true;
	}
}

/* A plain key at p: its end (the ':' that ends it) when the line is
 * "key: ..." or "key:", else NULL. *bad: the line is beyond this path. */
static const char *key_colon(const char *p, const char *le, bool *bad)
{
	*bad = false;
	if (p >= le || !plain_start_ok(p, le))
		return NULL;
	for (const char *q = p; q < le; q++) {
		if (*q == ':' && (q + 1 == le || q[1] == ' '))
			return q;
		if (*q == '#' && q[-1] == ' ') {
			*bad = true; /* a comment */
			return NULL;
		}
	}
	return NULL;
}

static int parse_block_node(yf *y, int k, json_t **out);
static int parse_map(yf *y, int k, json_t **out);
static int parse_inline(yf *y, const char *v, int threshold, json_t **out);

static int enter(yf *y)
{
	if (++y->depth > y->lim->max_depth)
		return fail(y, DECLINE);
	return 0;
}

/* The rest of a line after a quoted scalar or {} must be spaces. */
static int rest_blank(yf *y, const char *q, const char *le)
{
	while (q < le && *q == ' ')
		q++;
	return q == le ? 0 : fail(y, DECLINE);
}

/* The words of one line of a plain scalar from w (not a space): the end of
 * the last one, or NULL when the line holds a comment or a ": " (libyaml
 * would end the scalar there; this path gives up). */
static const char *plain_words(const char *w, const char *le)
{
	const char *last = w;

	for (const char *r = w; r < le; r++) {
		if (*r == ' ')
			continue;
		if (*r == '#' && (r == w || r[-1] == ' '))
			return NULL;
		if (*r == ':' && (r + 1 == le || r[1] == ' '))
			return NULL;
		last = r + 1;
	}
	return last;
}

/* "---" or "..." at column 0 followed by a blank: a document indicator. */
static bool doc_indicator(const char *q, const char *qe)
{
	return qe - q >= 3 && (!memcmp(q, "...", 3) || !memcmp(q, "---", 3)) &&
	       (qe - q == 3 || q[3] == ' ');
}

/* A plain scalar starting at v on the current line; continuation lines are
 * the non-blank ones at or past column threshold (libyaml's parser->indent
 * + 1), folded as libyaml folds them: one line break is a space, n > 1 are
 * n - 1 newlines, spaces around breaks dropped. Leaves the cursor after its
 * last line. */
static int parse_plain(yf *y, const char *v, int threshold, json_t **out)
{
	const char *le = y->le;
	const char *last = plain_words(v, le);
	bool multi = false;
	int rc;

	if (!last)
		return fail(y, DECLINE);
	for (;;) {
		const char *q = le < y->end ? le + 1 : y->end, *qe = q, *w, *wl;
		size_t breaks = 1;
		int lines = 1, ind = 0;

		while (q < y->end) {
			qe = line_end(y, q);
			ind = indent_of(q, qe);
			if (q + ind < qe)
				break;
			breaks++;
			lines++;
			q = qe < y->end ? qe + 1 : y->end;
		}
		if (q >= y->end || ind < threshold) {
			/* the line looked at is the next one: no need to find its end again */
			if (q < y->end && lines == 1) {
				y->p = q;
				y->le = qe;
				y->line++;
			} else {
				next_line(y);
			}
			break;
		}
		if (ind == 0 && doc_indicator(q, qe))
			return fail(y, DECLINE);
		w = q + ind;
		if (!(wl = plain_words(w, qe)))
			return fail(y, DECLINE);
		if (!multi) {
			y->len = 0;
			if (buf_add(y, v, (size_t)(last - v)))
				return y->rc;
			multi = true;
		}
		if ((breaks == 1 ? buf_add(y, " ", 1) : buf_repeat(y, '\n', breaks - 1)) ||
		    buf_add(y, w, (size_t)(wl - w)))
			return y->rc;
		y->p = q;
		y->le = le = qe;
		y->line += lines;
	}
	{
		const char *s = multi ? y->buf : v;
		size_t n = multi ? y->len : (size_t)(last - v);

		if (n > y->lim->max_string_bytes)
			return fail(y, DECLINE);
		if ((rc = fbc_yaml_plain_json(out, s, n)))
			return fail(y, rc);
	}
	return 0;
}

/* One escape at r (r[0] == '\\', r[1] not a line break): appended, the
 * bytes it used returned, 0 to give up (unknown escape, bad hex, a
 * surrogate, past U+10FFFF, or U+0000, which the libyaml path turns into
 * text). */
static size_t dq_escape(yf *y, const char *r, const char *le)
{
	static const char simple_in[] = "abtnvfre \"/\\";
	static const char simple_out[] = "\a\b\t\n\v\f\r\x1b \"/\\";
	const char *hit;
	size_t digits;
	uint32_t v = 0;

	if (r + 1 >= le)
		return 0;
	if ((hit = strchr(simple_in, r[1])) && r[1]) {
		if (buf_add(y, &simple_out[hit - simple_in], 1))
			return 0;
		return 2;
	}
	switch (r[1]) {
	case 'N':
		return buf_add(y, "\xC2\x85", 2) ? 0 : 2;
	case '_':
		return buf_add(y, "\xC2\xA0", 2) ? 0 : 2;
	case 'L':
		return buf_add(y, "\xE2\x80\xA8", 3) ? 0 : 2;
	case 'P':
		return buf_add(y, "\xE2\x80\xA9", 3) ? 0 : 2;
	case 'x':
		digits = 2;
		break;
	case 'u':
		digits = 4;
		break;
	case 'U':
		digits = 8;
		break;
	default:
		return 0; /* "\0" too: NUL needs the libyaml path's care */
	}
	if ((size_t)(le - r - 2) < digits)
		return 0;
	for (size_t i = 0; i < digits; i++) {
		int h = fbc_hex_digit(r[2 + i]);

		if (h < 0)
			return 0;
		v = (v << 4) | (uint32_t)h;
	}
	if (v == 0 || (v >= 0xD800 && v <= 0xDFFF) || v > 0x10FFFF)
		return 0;
	{
		char u[4];

		return buf_add(y, u, fbc_utf8_encode(u, v)) ? 0 : 2 + digits;
	}
}

/* A single- or double-quoted scalar from q (the quote), over as many lines
 * as it takes, folded as libyaml's scanner folds it: within a line, spaces
 * kept; one line break a space, n > 1 breaks n - 1 newlines, spaces around
 * them dropped; an escaped line break ("\" at the end of a line) nothing.
 * Leaves the cursor after its last line, whose rest must be blank. */
static int parse_quoted(yf *y, const char *q, json_t **out)
{
	const char quote = *q;
	const char *r = q + 1, *le = y->le;

	y->len = 0;
	for (;;) {
		bool leading_blanks = false, lb_newline = false;
		size_t spaces = 0, trailing = 0;

		if (r == y->p && doc_indicator(r, le))
			return fail(y, DECLINE);
		if (r >= y->end)
			return fail(y, DECLINE); /* no closing quote */
		while (r < le && *r != ' ') {
			if (quote == '\'' && *r == '\'' && r + 1 < le && r[1] == '\'') {
				if (buf_add(y, "'", 1))
					return y->rc;
				r += 2;
			} else if (*r == quote) {
				break;
			} else if (quote == '"' && *r == '\\' && r + 1 == le) {
				if (le >= y->end)
					return fail(y, DECLINE);
				/* an escaped line break: nothing of it is kept */
				r = le + 1;
				set_line(y, r);
				y->line++;
				le = y->le;
				leading_blanks = true;
				break;
			} else if (quote == '"' && *r == '\\') {
				size_t used = dq_escape(y, r, le);

				if (!used)
					return fail(y, y->rc ? y->rc : DECLINE);
				r += used;
			} else {
				const char *s = r++;

				while (r < le && *r != ' ' && *r != quote &&
				       !(quote == '"' && *r == '\\'))
					r++;
				if (buf_add(y, s, (size_t)(r - s)))
					return y->rc;
			}
		}
		if (r < le && *r == quote) {
			r++;
			break;
		}
		while (r < y->end && (r == le || *r == ' ')) {
			if (r < le) {
				spaces += !leading_blanks;
				r++;
				continue;
			}
			if (!leading_blanks) {
				spaces = 0;
				leading_blanks = true;
				lb_newline = true;
			} else {
				trailing++;
			}
			r = le + 1;
			set_line(y, r);
			y->line++;
			le = y->le;
		}
		if (leading_blanks) {
			if (lb_newline && !trailing) {
				if (buf_add(y, " ", 1))
					return y->rc;
			} else if (buf_repeat(y, '\n', trailing)) {
				return y->rc;
			}
		} else if (buf_repeat(y, ' ', spaces)) {
			return y->rc;
		}
	}
	if (rest_blank(y, r, le))
		return y->rc;
	next_line(y);
	return buf_string(y, out);
}

/* A literal block scalar: header "|" or "|-" at h, lines below at the
 * indentation of the first non-empty one (at least threshold). */
static int parse_literal(yf *y, const char *h, int threshold, json_t **out)
{
	const char *le = y->le, *q;
	bool strip = h + 1 < le && h[1] == '-';
	int indent = -1;
	size_t trailing = 0;
	bool have_break = false, any = false;

	if (rest_blank(y, h + 1 + strip, le))
		return y->rc;
	y->len = 0;
	next_line(y);
	q = y->p;
	while (q < y->end) {
		const char *qe = line_end(y, q);
		int ind = indent_of(q, qe);

		if (q + ind == qe) {
			/* whitespace only: an empty line, or content past the indentation */
			if (indent < 0 && ind > 0)
				return fail(y, DECLINE); /* libyaml's indentation guess */
			if (indent < 0 || ind <= indent) {
				if (qe == y->end)
					break;
				trailing++;
				q = qe + 1;
				set_line(y, q);
				y->line++;
				continue;
			}
		} else if (indent < 0) {
			indent = ind < threshold ? threshold : ind;
			if (ind < indent)
				break;
		} else if (ind < indent) {
			break;
		}
		/* a content line */
		if (any && have_break && buf_add(y, "\n", 1))
			return y->rc;
		if (buf_repeat(y, '\n', trailing) ||
		    buf_add(y, q + indent, (size_t)(qe - q - indent)))
			return y->rc;
		any = true;
		trailing = 0;
		have_break = qe < y->end;
		q = have_break ? qe + 1 : y->end;
		set_line(y, q);
		y->line++;
	}
	if (any && !strip && have_break && buf_add(y, "\n", 1))
		return y->rc;
	return buf_string(y, out);
}

/* A value that starts on the current line at v. */
static int parse_inline(yf *y, const char *v, int threshold, json_t **out)
{
	const char *le = y->le;
	json_t *j;

	switch (*v) {
	case '"':
	case '\'':
		return parse_quoted(y, v, out);
	case '|':
		return parse_literal(y, v, threshold, out);
	case '{':
	case '[':
		if (v + 1 >= le || v[1] != (*v == '{' ? '}' : ']') || rest_blank(y, v + 2, le) ||
		    y->depth + 1 > y->lim->max_depth)
			return fail(y, DECLINE);
		if (!(j = *v == '{' ? json_object() : json_array()))
			return fail(y, FBC_ENOMEM);
		next_line(y);
		*out = j;
		return 0;
	default:
		if (!plain_start_ok(v, le))
			return fail(y, DECLINE);
		return parse_plain(y, v, threshold, out);
	}
}

/* A block sequence whose dashes are at column d of the current line. */
static int parse_seq(yf *y, int d, json_t **out)
{
	json_t *arr;
	int rc = 0;

	if (enter(y))
		return y->rc;
	if (!(arr = json_array()))
		return fail(y, FBC_ENOMEM);
	for (;;) {
		const char *le = y->le, *c = y->p + d + 1, *kc;
		json_t *v = NULL;
		bool bad;

		if (c >= le || *c != ' ')
			goto decline; /* "-" alone: the item is on the lines below */
		while (c < le && *c == ' ')
			c++;
		if (c == le || (*c == '-' && (c + 1 == le || c[1] == ' ')))
			goto decline;
		kc = key_colon(c, le, &bad);
		if (bad)
			goto decline;
		rc = kc ? parse_map(y, (int)(c - y->p), &v) : parse_inline(y, c, d + 1, &v);
		if (rc)
			goto out;
		if (json_array_append_new(arr, v)) {
			rc = fail(y, FBC_ENOMEM);
			goto out;
		}
		if (skip_blank_lines(y))
			goto out_rc;
		{
			int ind = cur_indent(y);
			const char *p = y->p + d;

			if (ind < d)
				break;
			if (ind > d)
				goto decline;
			if (p[0] != '-' || (p + 1 < y->le && p[1] != ' '))
				break; /* the next key of the mapping this sequence is in */
		}
	}
	y->depth--;
	*out = arr;
	return 0;
decline:
	rc = fail(y, DECLINE);
	goto out;
out_rc:
	rc = y->rc;
out:
	json_decref(arr);
	return rc;
}

/* What follows "key:" with nothing after it on the line: the block below,
 * or null. k: the mapping's column. */
static int parse_block_node(yf *y, int k, json_t **out)
{
	const char *le, *c;
	int ind;
	bool bad;

	next_line(y);
	if (skip_blank_lines(y))
		return y->rc;
	ind = cur_indent(y);
	if (ind < k || y->p >= y->end)
		goto null;
	le = y->le;
	c = y->p + ind;
	if (*c == '-' && (c + 1 == le || c[1] == ' '))
		return parse_seq(y, ind, out);
	if (ind == k)
		goto null;
	if (!key_colon(c, le, &bad))
		return fail(y, DECLINE); /* a scalar on the next line */
	return parse_map(y, ind, out);
null:
	if (!(*out = json_null()))
		return fail(y, FBC_ENOMEM);
	return 0;
}

/* A block mapping whose keys are at column k; the first key is on the
 * current line. */
static int parse_map(yf *y, int k, json_t **out)
{
	json_t *obj;
	int rc = 0;

	if (enter(y))
		return y->rc;
	if (!(obj = json_object()))
		return fail(y, FBC_ENOMEM);
	for (;;) {
		const char *le = y->le, *key = y->p + k, *kc, *v;
		json_t *val = NULL;
		bool bad;
		size_t klen;

		if (k == 0 && doc_indicator(key, le))
			goto decline; /* "..." ends the document */
		kc = key_colon(key, le, &bad);
		if (!kc || kc[-1] == ' ')
			goto decline;
		klen = (size_t)(kc - key);
		if (klen > MAX_KEY || klen > y->lim->max_string_bytes ||
		    (klen == 2 && key[0] == '<' && key[1] == '<') ||
		    !fbc_yaml_plain_is_string(key, klen))
			goto decline;
		v = kc + 1;
		while (v < le && *v == ' ')
			v++;
		rc = v == le ? parse_block_node(y, k, &val) : parse_inline(y, v, k + 1, &val);
		if (rc)
			goto out;
		if (json_object_setn_new_nocheck(obj, key, klen, val)) {
			rc = fail(y, FBC_ENOMEM);
			goto out;
		}
		if (skip_blank_lines(y)) {
			rc = y->rc;
			goto out;
		}
		{
			int ind = cur_indent(y);

			if (ind < k)
				break;
			if (ind > k)
				goto decline;
		}
	}
	y->depth--;
	*out = obj;
	return 0;
decline:
	rc = fail(y, DECLINE);
out:
	json_decref(obj);
	return rc;
}

int fbc_yaml_fast_doc(json_t **out, int *content_line, const char *data, size_t len, int line0,
		      const fbc_load_limits *lim)
{
	yf y = {.end = data + len, .lim = lim};
	json_t *root = NULL;
	int rc;

	if (!text_ok((const unsigned char *)data, (const unsigned char *)data + len))
		return DECLINE;
	set_line(&y, data);
	if (len >= 3 && !memcmp(data, "---", 3)) {
		if (rest_blank(&y, data + 3, y.le))
			return DECLINE;
		next_line(&y);
	}
	if (skip_blank_lines(&y) || y.p >= y.end || cur_indent(&y) != 0)
		return DECLINE;
	{
		bool bad;

		if (!key_colon(y.p, y.le, &bad))
			return DECLINE;
	}
	if (content_line)
		*content_line = line0 + y.line;
	rc = parse_map(&y, 0, &root);
	if (!rc && !skip_blank_lines(&y) && y.p < y.end)
		rc = fail(&y, DECLINE);
	rc = rc ? rc : y.rc;
	free(y.buf);
	if (rc) {
		json_decref(root);
		return rc;
	}
	*out = root;
	return 0;
}
