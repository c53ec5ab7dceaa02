/*
 * The go-yaml v2.4 emitter (emitterc.go), reduced to what JSONToYAML feeds
 * it: block mappings and sequences, empty flow collections, scalars without
 * tags or anchors. The state (column, whitespace, indention, indent) and
 * the scalar writers are ported line by line so that folding, indentation
 * and quoting come out as go-yaml's. Spec templates.md §6.
 */
#include "service/goyaml/goyaml.h"
#include "service/base/utf8.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BEST_INDENT 2
#define BEST_WIDTH  80

typedef struct em {
	fbc_buf *out;
	int rc;
	long column;
	bool whitespace;
	bool indention;
	long indent;
	bool mapping_ctx;
	bool simple_key_ctx;
	unsigned depth;
	bool too_deep;
	bool keep_order; /* write keys in the object's order (not go-yaml) */
} em;

enum style { ST_PLAIN, ST_SINGLE, ST_DOUBLE, ST_LITERAL };

static void put(em *e, char c)
{
	if (e->rc == 0)
		e->rc = fbc_buf_putc(e->out, c);
	e->column++;
}

static void put_break(em *e)
{
	if (e->rc == 0)
		e->rc = fbc_buf_putc(e->out, '\n');
	e->column = 0;
}

/* width of the UTF-8 sequence starting with byte c */
static size_t uwidth(unsigned char c)
{
	if ((c & 0x80) == 0)
		return 1;
	if ((c & 0xE0) == 0xC0)
		return 2;
	if ((c & 0xF0) == 0xE0)
		return 3;
	if ((c & 0xF8) == 0xF0)
		return 4;
	return 1;
}

/* write one character (all its bytes), column + 1 */
static void write_ch(em *e, const unsigned char *s, size_t n, size_t *i)
{
	size_t w = uwidth(s[*i]);
	if (*i + w > n)
		w = n - *i;
	if (e->rc == 0)
		e->rc = fbc_buf_append(e->out, s + *i, w);
	e->column++;
	*i += w;
}

static void write_indent(em *e)
{
	long indent = e->indent >= 0 ? e->indent : 0;
	if (!e->indention || e->column > indent || (e->column == indent && !e->whitespace))
		put_break(e);
	while (e->column < indent)
		put(e, ' ');
	e->whitespace = true;
	e->indention = true;
}

static void write_indicator(em *e, const char *ind, bool need_ws, bool is_ws, bool is_indention)
{
	if (need_ws && !e->whitespace)
		put(e, ' ');
	size_t n = strlen(ind);
	for (size_t i = 0; i < n;)
		write_ch(e, (const unsigned char *)ind, n, &i);
	e->whitespace = is_ws;
	e->indention = e->indention && is_indention;
}

/* character classes at s[i] (s has n bytes) */
static bool at(const unsigned char *s, size_t n, size_t i, unsigned char c)
{
	return i < n && s[i] == c;
}

static bool is_space(const unsigned char *s, size_t n, size_t i)
{
	return at(s, n, i, ' ');
}

static bool is_tab(const unsigned char *s, size_t n, size_t i)
{
	return at(s, n, i, '\t');
}

static bool is_blank(const unsigned char *s, size_t n, size_t i)
{
	return is_space(s, n, i) || is_tab(s, n, i);
}

static bool is_break(const unsigned char *s, size_t n, size_t i)
{
	if (i >= n)
		return false;
	return s[i] == '\r' || s[i] == '\n' || (s[i] == 0xC2 && i + 1 < n && s[i + 1] == 0x85) ||
	       (s[i] == 0xE2 && i + 2 < n && s[i + 1] == 0x80 &&
		(s[i + 2] == 0xA8 || s[i + 2] == 0xA9));
}

static bool is_blankz(const unsigned char *s, size_t n, size_t i)
{
	return i >= n || is_blank(s, n, i) || is_break(s, n, i) || s[i] == 0;
}

static bool is_printable(const unsigned char *s, size_t n, size_t i)
{
	unsigned char b = s[i];
	unsigned char b1 = i + 1 < n ? s[i + 1] : 0;
	unsigned char b2 = i + 2 < n ? s[i + 2] : 0;
	return b == 0x0A || (b >= 0x20 && b <= 0x7E) || (b == 0xC2 && b1 >= 0xA0) ||
	       (b > 0xC2 && b < 0xED) || (b == 0xED && b1 < 0xA0) || b == 0xEE ||
	       (b == 0xEF && !(b1 == 0xBB && b2 == 0xBF) &&
		!(b1 == 0xBF && (b2 == 0xBE || b2 == 0xBF)));
}

static bool is_bom0(const unsigned char *s, size_t n)
{
	return n >= 3 && s[0] == 0xEF && s[1] == 0xBB && s[2] == 0xBF;
}

typedef struct analysis {
	bool multiline;
	bool block_plain_allowed;
	bool single_quoted_allowed;
	bool block_allowed;
} analysis;

static void analyze(analysis *a, const unsigned char *s, size_t n)
{
	bool block_ind = false, line_breaks = false, special = false;
	bool leading_space = false, leading_break = false, trailing_space = false,
	     trailing_break = false, break_space = false, space_break = false;
	bool preceded_ws = true, followed_ws, prev_space = false, prev_break = false;

	if (n == 0) {
		a->multiline = false;
		a->block_plain_allowed = true;
		a->single_quoted_allowed = true;
		a->block_allowed = false;
		return;
	}
	if (n >= 3 && ((s[0] == '-' && s[1] == '-' && s[2] == '-') ||
		       (s[0] == '.' && s[1] == '.' && s[2] == '.')))
		block_ind = true;

	for (size_t i = 0, w; i < n; i += w) {
		w = uwidth(s[i]);
		followed_ws = i + w >= n || is_blank(s, n, i + w);
		unsigned char c = s[i];
		if (i == 0) {
			if (strchr("#,[]{}&*!|>'\"%@`", c) != NULL && c != 0)
				block_ind = true;
			if ((c == '?' || c == ':') && followed_ws)
				block_ind = true;
			if (c == '-' && followed_ws)
				block_ind = true;
		} else {
			if (c == ':' && followed_ws)
				block_ind = true;
			if (c == '#' && preceded_ws)
				block_ind = true;
		}
		if (!is_printable(s, n, i))
			special = true;
		if (is_break(s, n, i))
			line_breaks = true;
		if (is_space(s, n, i)) {
			if (i == 0)
				leading_space = true;
			if (i + w >= n)
				trailing_space = true;
			if (prev_break)
				break_space = true;
			prev_space = true;
			prev_break = false;
		} else if (is_break(s, n, i)) {
			if (i == 0)
				leading_break = true;
			if (i + w >= n)
				trailing_break = true;
			if (prev_space)
				space_break = true;
			prev_space = false;
			prev_break = true;
		} else {
			prev_space = false;
			prev_break = false;
		}
		preceded_ws = is_blankz(s, n, i);
	}
	a->multiline = line_breaks;
	a->block_plain_allowed = true;
	a->single_quoted_allowed = true;
	a->block_allowed = true;
	if (leading_space || leading_break || trailing_space || trailing_break)
		a->block_plain_allowed = false;
	if (trailing_space)
		a->block_allowed = false;
	if (break_space) {
		a->block_plain_allowed = false;
		a->single_quoted_allowed = false;
	}
	if (space_break || special) {
		a->block_plain_allowed = false;
		a->single_quoted_allowed = false;
		a->block_allowed = false;
	}
	if (line_breaks)
		a->block_plain_allowed = false;
	if (block_ind)
		a->block_plain_allowed = false;
}

/* base60float: ^[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?$ */
static bool is_base60_float(const char *s, size_t n)
{
	size_t i = 0;
	if (n == 0 || memchr(s, ':', n) == NULL)
		return false;
	if (s[i] == '+' || s[i] == '-')
		i++;
	if (i >= n || s[i] < '0' || s[i] > '9')
		return false;
	i++;
	while (i < n && ((s[i] >= '0' && s[i] <= '9') || s[i] == '_'))
		i++;
	size_t groups = 0;
	while (i < n && s[i] == ':') {
		i++;
		/* [0-5]?[0-9]: one or two digits, the first of two at most 5 */
		if (i + 1 < n && s[i] >= '0' && s[i] <= '5' && s[i + 1] >= '0' && s[i + 1] <= '9')
			i += 2;
		else if (i < n && s[i] >= '0' && s[i] <= '9')
			i += 1;
		else
			return false;
		groups++;
	}
	if (groups == 0)
		return false;
	if (i < n && s[i] == '.') {
		i++;
		while (i < n && ((s[i] >= '0' && s[i] <= '9') || s[i] == '_'))
			i++;
	}
	return i == n;
}

static void write_plain(em *e, const unsigned char *s, size_t n, bool allow_breaks)
{
	if (!e->whitespace)
		put(e, ' ');
	bool spaces = false, breaks = false;
	for (size_t i = 0; i < n;) {
		if (is_space(s, n, i)) {
			if (allow_breaks && !spaces && e->column > BEST_WIDTH &&
			    !is_space(s, n, i + 1)) {
				write_indent(e);
				i++;
			} else {
				write_ch(e, s, n, &i);
			}
			spaces = true;
		} else if (is_break(s, n, i)) {
			if (!breaks && s[i] == '\n')
				put_break(e);
			if (s[i] == '\n') {
				put_break(e);
				i++;
			} else {
				write_ch(e, s, n, &i);
				e->column = 0;
			}
			e->indention = true;
			breaks = true;
		} else {
			size_t j = i, cols = 0;

			if (breaks)
				write_indent(e);
			/* the run of characters up to the next space or break in one append:
			 * what write_ch would write, a character (column) at a time */
			while (j < n && !is_space(s, n, j) && !is_break(s, n, j)) {
				size_t w = uwidth(s[j]);

				j += j + w > n ? n - j : w;
				cols++;
			}
			if (e->rc == 0)
				e->rc = fbc_buf_append(e->out, s + i, j - i);
			e->column += (long)cols;
			i = j;
			e->indention = false;
			spaces = false;
			breaks = false;
		}
	}
	e->whitespace = false;
	e->indention = false;
}

static void write_single(em *e, const unsigned char *s, size_t n, bool allow_breaks)
{
	write_indicator(e, "'", true, false, false);
	bool spaces = false, breaks = false;
	for (size_t i = 0; i < n;) {
		if (is_space(s, n, i)) {
			if (allow_breaks && !spaces && e->column > BEST_WIDTH && i > 0 &&
			    i < n - 1 && !is_space(s, n, i + 1)) {
				write_indent(e);
				i++;
			} else {
				write_ch(e, s, n, &i);
			}
			spaces = true;
		} else if (is_break(s, n, i)) {
			if (!breaks && s[i] == '\n')
				put_break(e);
			if (s[i] == '\n') {
				put_break(e);
				i++;
			} else {
				write_ch(e, s, n, &i);
				e->column = 0;
			}
			e->indention = true;
			breaks = true;
		} else {
			if (breaks)
				write_indent(e);
			if (s[i] == '\'')
				put(e, '\'');
			write_ch(e, s, n, &i);
			e->indention = false;
			spaces = false;
			breaks = false;
		}
	}
	write_indicator(e, "'", false, false, false);
	e->whitespace = false;
	e->indention = false;
}

static void write_double(em *e, const unsigned char *s, size_t n, bool allow_breaks)
{
	static const char hex[] = "0123456789ABCDEF";
	bool spaces = false;
	bool bom = is_bom0(s, n);
	write_indicator(e, "\"", true, false, false);
	for (size_t i = 0; i < n;) {
		if (!is_printable(s, n, i) || bom || is_break(s, n, i) || s[i] == '"' ||
		    s[i] == '\\') {
			uint32_t v;
			size_t w = fbc_utf8_decode(&v, s + i, n - i);
			if (w == 0) {
				v = s[i];
				w = 1;
			}
			i += w;
			put(e, '\\');
			switch (v) {
			case 0x00:
				put(e, '0');
				break;
			case 0x07:
				put(e, 'a');
				break;
			case 0x08:
				put(e, 'b');
				break;
			case 0x09:
				put(e, 't');
				break;
			case 0x0A:
				put(e, 'n');
				break;
			case 0x0B:
				put(e, 'v');
				break;
			case 0x0C:
				put(e, 'f');
				break;
			case 0x0D:
				put(e, 'r');
				break;
			case 0x1B:
				put(e, 'e');
				break;
			case 0x22:
				put(e, '"');
				break;
			case 0x5C:
				put(e, '\\');
				break;
			case 0x85:
				put(e, 'N');
				break;
			case 0xA0:
				put(e, '_');
				break;
			case 0x2028:
				put(e, 'L');
				break;
			case 0x2029:
				put(e, 'P');
				break;
			default: {
				int digits;
				if (v <= 0xFF) {
					put(e, 'x');
					digits = 2;
				} else if (v <= 0xFFFF) {
					put(e, 'u');
					digits = 4;
				} else {
					put(e, 'U');
					digits = 8;
				}
				for (int k = (digits - 1) * 4; k >= 0; k -= 4)
					put(e, hex[(v >> k) & 0x0F]);
				break;
			}
			}
			spaces = false;
		} else if (is_space(s, n, i)) {
			if (allow_breaks && !spaces && e->column > BEST_WIDTH && i > 0 &&
			    i < n - 1) {
				write_indent(e);
				if (is_space(s, n, i + 1))
					put(e, '\\');
				i++;
			} else {
				write_ch(e, s, n, &i);
			}
			spaces = true;
		} else {
			write_ch(e, s, n, &i);
			spaces = false;
		}
	}
	write_indicator(e, "\"", false, false, false);
	e->whitespace = false;
	e->indention = false;
}

static void write_literal(em *e, const unsigned char *s, size_t n)
{
	write_indicator(e, "|", true, false, false);
	if (is_space(s, n, 0) || is_break(s, n, 0))
		write_indicator(e, "2", false, false, false);
	const char *chomp = NULL;
	if (n == 0) {
		chomp = "-";
	} else {
		size_t i = n - 1;
		while (i > 0 && (s[i] & 0xC0) == 0x80)
			i--;
		if (!is_break(s, n, i)) {
			chomp = "-";
		} else if (i == 0) {
			chomp = "+";
		} else {
			i--;
			while (i > 0 && (s[i] & 0xC0) == 0x80)
				i--;
			if (is_break(s, n, i))
				chomp = "+";
		}
	}
	if (chomp != NULL)
		write_indicator(e, chomp, false, false, false);
	put_break(e);
	e->indention = true;
	e->whitespace = true;
	bool breaks = true;
	for (size_t i = 0; i < n;) {
		if (is_break(s, n, i)) {
			if (s[i] == '\n') {
				put_break(e);
				i++;
			} else {
				write_ch(e, s, n, &i);
				e->column = 0;
			}
			e->indention = true;
			breaks = true;
		} else {
			if (breaks)
				write_indent(e);
			write_ch(e, s, n, &i);
			e->indention = false;
			breaks = false;
		}
	}
}

static void increase_indent(em *e, bool flow, bool indentless)
{
	if (e->indent < 0)
		e->indent = flow ? BEST_INDENT : 0;
	else if (!indentless)
		e->indent += BEST_INDENT;
}

/* A scalar event: text s (n bytes) with the requested style. */
static void emit_scalar(em *e, const char *text, size_t n, enum style requested)
{
	const unsigned char *s = (const unsigned char *)text;
	analysis a;
	analyze(&a, s, n);
	enum style st = requested;
	if (e->simple_key_ctx && a.multiline)
		st = ST_DOUBLE;
	if (st == ST_PLAIN) {
		if (!a.block_plain_allowed)
			st = ST_SINGLE;
		if (n == 0 && e->simple_key_ctx)
			st = ST_SINGLE;
	}
	if (st == ST_SINGLE && !a.single_quoted_allowed)
		st = ST_DOUBLE;
	if (st == ST_LITERAL && (!a.block_allowed || e->simple_key_ctx))
		st = ST_DOUBLE;

	long saved = e->indent;
	increase_indent(e, true, false);
	bool allow_breaks = !e->simple_key_ctx;
	switch (st) {
	case ST_PLAIN:
		write_plain(e, s, n, allow_breaks);
		break;
	case ST_SINGLE:
		write_single(e, s, n, allow_breaks);
		break;
	case ST_DOUBLE:
		write_double(e, s, n, allow_breaks);
		break;
	case ST_LITERAL:
		write_literal(e, s, n);
		break;
	}
	e->indent = saved;
}

static enum style string_style(const char *s, size_t n)
{
	if (memchr(s, '\n', n) != NULL)
		return ST_LITERAL;
	if (fbc_goyaml_plain_is_string(s, n) && !is_base60_float(s, n))
		return ST_PLAIN;
	return ST_DOUBLE;
}

/* go-yaml's check_simple_key for a scalar key */
static bool simple_key(const char *s, size_t n)
{
	analysis a;
	analyze(&a, (const unsigned char *)s, n);
	return !a.multiline && n <= 128;
}

static void emit_node(em *e, const json_t *v, bool mapping, bool simple_key_ctx);

typedef struct kv {
	const char *key;
	size_t klen;
	json_t *val;
} kv;

static int kv_cmp(const void *a, const void *b)
{
	return fbc_goyaml_key_cmp(((const kv *)a)->key, ((const kv *)b)->key);
}

static void emit_mapping(em *e, const json_t *v)
{
	size_t n = json_object_size(v);
	kv *items = calloc(n, sizeof(*items));
	if (items == NULL) {
		e->rc = FBC_ENOMEM;
		return;
	}
	size_t k = 0;
	const char *key;
	json_t *val;
	void *iter = json_object_iter((json_t *)v);
	while (iter != NULL && k < n) {
		key = json_object_iter_key(iter);
		val = json_object_iter_value(iter);
		items[k].key = key;
		items[k].klen = json_object_iter_key_len(iter);
		items[k].val = val;
		k++;
		iter = json_object_iter_next((json_t *)v, iter);
	}
	if (!e->keep_order)
		qsort(items, k, sizeof(*items), kv_cmp);

	long saved = e->indent;
	increase_indent(e, false, false);
	for (size_t i = 0; i < k && e->rc == 0; i++) {
		json_t *kj = json_stringn(items[i].key, items[i].klen);
		if (kj == NULL) {
			e->rc = FBC_ENOMEM;
			break;
		}
		write_indent(e);
		if (simple_key(items[i].key, items[i].klen)) {
			emit_node(e, kj, true, true);
			write_indicator(e, ":", false, false, false);
		} else {
			write_indicator(e, "?", true, false, true);
			emit_node(e, kj, true, false);
			write_indent(e);
			write_indicator(e, ":", true, false, true);
		}
		json_decref(kj);
		emit_node(e, items[i].val, true, false);
	}
	e->indent = saved;
	free(items);
}

static void emit_sequence(em *e, const json_t *v)
{
	long saved = e->indent;
	increase_indent(e, false, e->mapping_ctx && !e->indention);
	size_t n = json_array_size(v);
	for (size_t i = 0; i < n && e->rc == 0; i++) {
		write_indent(e);
		write_indicator(e, "-", true, false, true);
		emit_node(e, json_array_get(v, i), false, false);
	}
	e->indent = saved;
}

static void emit_node(em *e, const json_t *v, bool mapping, bool simple_key_ctx)
{
	char num[64];
	if (e->rc != 0)
		return;
	if (e->depth >= FBC_GOYAML_MAX_DEPTH) {
		e->rc = FBC_ELIMIT;
		e->too_deep = true;
		return;
	}
	e->depth++;
	e->mapping_ctx = mapping;
	e->simple_key_ctx = simple_key_ctx;
	switch (json_typeof(v)) {
	case JSON_OBJECT:
		if (json_object_size(v) == 0) {
			write_indicator(e, "{", true, true, false);
			write_indicator(e, "}", false, false, false);
		} else {
			emit_mapping(e, v);
		}
		break;
	case JSON_ARRAY:
		if (json_array_size(v) == 0) {
			write_indicator(e, "[", true, true, false);
			write_indicator(e, "]", false, false, false);
		} else {
			emit_sequence(e, v);
		}
		break;
	case JSON_STRING: {
		const char *s = json_string_value(v);
		size_t n = json_string_length(v);
		emit_scalar(e, s, n, string_style(s, n));
		break;
	}
	case JSON_INTEGER:
		snprintf(num, sizeof(num), "%lld", (long long)json_integer_value(v));
		emit_scalar(e, num, strlen(num), ST_PLAIN);
		break;
	case JSON_REAL: {
		double d = json_real_value(v);
		if (isfinite(d) && fabs(d) < 1e21 && d == floor(d))
			snprintf(num, sizeof(num), "%.0f", d == 0 ? 0.0 : d);
		else
			fbc_goyaml_format_float(num, sizeof(num), d);
		emit_scalar(e, num, strlen(num), ST_PLAIN);
		break;
	}
	case JSON_TRUE:
		emit_scalar(e, "true", 4, ST_PLAIN);
		break;
	case JSON_FALSE:
		emit_scalar(e, "false", 5, ST_PLAIN);
		break;
	case JSON_NULL:
		emit_scalar(e, "null", 4, ST_PLAIN);
		break;
	}
	e->depth--;
}

static int emit_doc(fbc_buf *out, const json_t *v, bool keep_order, fbc_error *err)
{
	if (v == NULL || (!json_is_object(v) && !json_is_array(v)))
		return fbc_error_set(err, FBC_EINVAL, NULL,
				     "goyaml: a document must be a mapping or a sequence");
	em e = {.out = out,
		.rc = 0,
		.column = 0,
		.whitespace = true,
		.indention = true,
		.indent = -1,
		.mapping_ctx = false,
		.simple_key_ctx = false,
		.depth = 0,
		.too_deep = false,
		.keep_order = keep_order};
	emit_node(&e, v, false, false);
	/* document end: write_indent at indent -1 breaks the last line */
	e.indent = -1;
	if (e.rc == 0)
		write_indent(&e);
	if (e.too_deep)
		return fbc_error_set(err, FBC_ELIMIT, NULL, "goyaml: nesting deeper than %d",
				     FBC_GOYAML_MAX_DEPTH);
	if (e.rc == FBC_ELIMIT)
		return fbc_error_set(err, FBC_ELIMIT, NULL, "goyaml: output larger than %zu bytes",
				     out->max);
	if (e.rc != 0)
		return fbc_error_set(err, e.rc, NULL, "goyaml: out of memory");
	return 0;
}

int fbc_goyaml_emit_document(fbc_buf *out, const json_t *v, fbc_error *err)
{
	int rc = fbc_buf_puts(out, "---\n");
	if (rc != 0)
		return fbc_error_set(err, rc, NULL, "goyaml: output limit reached");
	return fbc_goyaml_emit(out, v, err);
}

int fbc_goyaml_emit(fbc_buf *out, const json_t *v, fbc_error *err)
{
	return emit_doc(out, v, false, err);
}

int fbc_goyaml_emit_ordered(fbc_buf *out, const json_t *v, fbc_error *err)
{
	return emit_doc(out, v, true, err);
}
