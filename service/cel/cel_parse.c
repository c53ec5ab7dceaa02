/*
 * CEL lexer and recursive-descent parser (grammar of cel-spec langdef.md),
 * producing the AST of cel_int.h with the standard macros expanded.
 * Every error reports the line and column of the offending token.
 */
#include "service/base/utf8.h"
#include "service/cel/cel_int.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum tok {
	TK_EOF,
	TK_INT,	 /* value in u (magnitude; may be 2^63 for a negated literal) */
	TK_UINT, /* value in u */
	TK_DOUBLE,
	TK_STRING,
	TK_BYTES,
	TK_IDENT,
	TK_EQ,
	TK_NE,
	TK_LT,
	TK_LE,
	TK_GT,
	TK_GE,
	TK_AND,
	TK_OR,
	TK_NOT,
	TK_PLUS,
	TK_MINUS,
	TK_STAR,
	TK_SLASH,
	TK_PERCENT,
	TK_QUESTION,
	TK_COLON,
	TK_DOT,
	TK_COMMA,
	TK_LBRACKET,
	TK_RBRACKET,
	TK_LPAREN,
	TK_RPAREN,
	TK_LBRACE,
	TK_RBRACE,
	TK_IN,	   /* the keyword `in` */
	TK_QIDENT, /* `quoted field name` (only after '.') */
};

struct token {
	enum tok t;
	size_t pos, end;
	uint64_t u;
	double d;
	const char *s; /* decoded string / bytes, ident text (arena) */
	size_t n;
};

struct parser {
	fbc_arena *a;
	const char *src;
	size_t len;
	size_t off;
	struct token tok; /* current lookahead */
	int depth;
	fbc_error *err;
	int rc;
};

void cel_position(const char *expr, size_t len, size_t pos, size_t *line, size_t *col)
{
	size_t i, l = 1, c = 1;

	for (i = 0; i < pos && i < len; i++) {
		if (expr[i] == '\n') {
			l++;
			c = 1;
		} else if (((unsigned char)expr[i] & 0xC0) != 0x80) {
			c++;
		}
	}
	*line = l;
	*col = c;
}

__attribute__((format(printf, 4, 5))) static int perr(struct parser *p, int code, size_t pos,
						      const char *fmt, ...)
{
	char msg[512];
	size_t line, col;
	va_list ap;

	if (p->rc)
		return p->rc;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	cel_position(p->src, p->len, pos, &line, &col);
	fbc_error_set(p->err, code, "cel", "%zu:%zu: %s", line, col, msg);
	p->rc = code;
	return code;
}

static int oom(struct parser *p)
{
	if (!p->rc) {
		fbc_error_set(p->err, FBC_ENOMEM, "cel", "out of memory");
		p->rc = FBC_ENOMEM;
	}
	return p->rc;
}

/* ---- lexer ---- */

static bool is_digit(int c)
{
	return c >= '0' && c <= '9';
}

static bool is_ident_start(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

/* Lex a quoted literal starting at the quote at p->off. */
static int lex_string(struct parser *p, struct token *t, bool raw, bool bytes)
{
	const char *s = p->src;
	size_t i = p->off, len = p->len, n = 0;
	char q = s[i];
	bool triple = i + 2 < len && s[i + 1] == q && s[i + 2] == q;
	char *o;

	i += triple ? 3 : 1;
	/* Decoded text is never longer than the source (escapes shrink). */
	o = fbc_arena_alloc(p->a, len - i + 1);
	if (!o)
		return oom(p);
	for (;;) {
		unsigned char c;

		if (i >= len)
			return perr(p, FBC_EPARSE, t->pos, "unterminated string literal");
		c = (unsigned char)s[i];
		if (c == (unsigned char)q) {
			if (!triple) {
				i++;
				break;
			}
			if (i + 2 < len && s[i + 1] == q && s[i + 2] == q) {
				i += 3;
				break;
			}
		}
		if (!triple && (c == '\n' || c == '\r'))
			return perr(p, FBC_EPARSE, t->pos, "newline in string literal");
		if (c != '\\' || raw) {
			o[n++] = (char)c;
			i++;
			continue;
		}
		/* escape */
		if (i + 1 >= len)
			return perr(p, FBC_EPARSE, i, "unterminated escape sequence");
		c = (unsigned char)s[i + 1];
		i += 2;
		switch (c) {
		case 'a':
			o[n++] = '\a';
			break;
		case 'b':
			o[n++] = '\b';
			break;
		case 'f':
			o[n++] = '\f';
			break;
		case 'n':
			o[n++] = '\n';
			break;
		case 'r':
			o[n++] = '\r';
			break;
		case 't':
			o[n++] = '\t';
			break;
		case 'v':
			o[n++] = '\v';
			break;
		case '\\':
		case '\'':
		case '"':
		case '`':
		case '?':
			o[n++] = (char)c;
			break;
		case 'x':
		case 'X':
		case 'u':
		case 'U': {
			int digits = (c == 'x' || c == 'X') ? 2 : (c == 'u' ? 4 : 8);
			uint32_t cp = 0;
			int k;

			if (bytes && (c == 'u' || c == 'U'))
				return perr(p, FBC_EPARSE, i - 2,
					    "unicode escape not allowed in bytes literal");
			for (k = 0; k < digits; k++) {
				int h = i < len ? fbc_hex_digit((unsigned char)s[i]) : -1;

				if (h < 0)
					return perr(p, FBC_EPARSE, i - 2 - (size_t)k,
						    "invalid escape sequence");
				cp = cp * 16 + (uint32_t)h;
				i++;
			}
			if (bytes) {
				o[n++] = (char)cp;
			} else {
				if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
					return perr(p, FBC_EPARSE, i - 2 - (size_t)digits,
						    "invalid unicode code point");
				n += fbc_utf8_encode(o + n, cp);
			}
			break;
		}
		case '0':
		case '1':
		case '2':
		case '3': {
			uint32_t cp = (uint32_t)(c - '0');
			int k;

			for (k = 0; k < 2; k++) {
				if (i >= len || s[i] < '0' || s[i] > '7')
					return perr(p, FBC_EPARSE, i, "invalid octal escape");
				cp = cp * 8 + (uint32_t)(s[i] - '0');
				i++;
			}
			if (bytes)
				o[n++] = (char)cp;
			else
				n += fbc_utf8_encode(o + n, cp);
			break;
		}
		default:
			return perr(p, FBC_EPARSE, i - 2, "invalid escape sequence '\\%c'", c);
		}
	}
	o[n] = '\0';
	if (!bytes && !cel_utf8_valid(o, n))
		return perr(p, FBC_EPARSE, t->pos, "string literal is not valid UTF-8");
	t->t = bytes ? TK_BYTES : TK_STRING;
	t->s = o;
	t->n = n;
	p->off = i;
	return 0;
}

static int lex_number(struct parser *p, struct token *t)
{
	const char *s = p->src;
	size_t i = p->off, len = p->len, start = i;
	bool is_float = false;
	char tmp[128];

	if (s[i] == '0' && i + 1 < len && (s[i + 1] == 'x' || s[i + 1] == 'X')) {
		uint64_t v = 0;
		size_t d0;

		i += 2;
		d0 = i;
		while (i < len && fbc_hex_digit((unsigned char)s[i]) >= 0) {
			if (v > (UINT64_MAX >> 4))
				return perr(p, FBC_EPARSE, start, "integer literal out of range");
			v = v * 16 + (uint64_t)fbc_hex_digit((unsigned char)s[i]);
			i++;
		}
		if (i == d0)
			return perr(p, FBC_EPARSE, start, "invalid hex literal");
		t->u = v;
		t->t = TK_INT;
	} else {
		while (i < len && is_digit((unsigned char)s[i]))
			i++;
		if (i + 1 < len && s[i] == '.' && is_digit((unsigned char)s[i + 1])) {
			is_float = true;
			i++;
			while (i < len && is_digit((unsigned char)s[i]))
				i++;
		}
		if (i < len && (s[i] == 'e' || s[i] == 'E')) {
			size_t j = i + 1;

			if (j < len && (s[j] == '+' || s[j] == '-'))
				j++;
			if (j < len && is_digit((unsigned char)s[j])) {
				is_float = true;
				i = j;
				while (i < len && is_digit((unsigned char)s[i]))
					i++;
			}
		}
		if (i - start >= sizeof(tmp))
			return perr(p, FBC_EPARSE, start, "numeric literal too long");
		memcpy(tmp, s + start, i - start);
		tmp[i - start] = '\0';
		if (is_float) {
			char *end;

			errno = 0;
			t->d = strtod(tmp, &end);
			if (*end)
				return perr(p, FBC_EPARSE, start, "invalid floating-point literal");
			t->t = TK_DOUBLE;
		} else {
			uint64_t v = 0;
			size_t k;

			for (k = 0; tmp[k]; k++) {
				uint64_t dgt = (uint64_t)(tmp[k] - '0');

				if (v > (UINT64_MAX - dgt) / 10)
					return perr(p, FBC_EPARSE, start,
						    "integer literal out of range");
				v = v * 10 + dgt;
			}
			t->u = v;
			t->t = TK_INT;
		}
	}
	if (t->t == TK_INT && i < len && (s[i] == 'u' || s[i] == 'U')) {
		t->t = TK_UINT;
		i++;
	}
	if (i < len && (is_ident_start((unsigned char)s[i]) || is_digit((unsigned char)s[i])))
		return perr(p, FBC_EPARSE, start, "invalid numeric literal");
	p->off = i;
	return 0;
}

static int next(struct parser *p)
{
	const char *s = p->src;
	size_t len = p->len;
	struct token *t = &p->tok;

	/* skip whitespace and comments */
	for (;;) {
		if (p->off >= len)
			break;
		if (s[p->off] == ' ' || s[p->off] == '\t' || s[p->off] == '\n' ||
		    s[p->off] == '\r' || s[p->off] == '\f') {
			p->off++;
			continue;
		}
		if (s[p->off] == '/' && p->off + 1 < len && s[p->off + 1] == '/') {
			while (p->off < len && s[p->off] != '\n')
				p->off++;
			continue;
		}
		break;
	}
	memset(t, 0, sizeof(*t));
	t->pos = p->off;
	if (p->off >= len) {
		t->t = TK_EOF;
		t->end = p->off;
		return 0;
	}
	{
		char c = s[p->off];
		char c2 = p->off + 1 < len ? s[p->off + 1] : '\0';
		int rc = 0;

		if (is_ident_start((unsigned char)c)) {
			size_t i = p->off;
			/* string prefixes: r, b, rb, br (any case) */
			bool raw = false, bytes = false;
			size_t k = i;

			while (k < len && k - i < 2 &&
			       (s[k] == 'r' || s[k] == 'R' || s[k] == 'b' || s[k] == 'B')) {
				if (s[k] == 'r' || s[k] == 'R') {
					if (raw)
						break;
					raw = true;
				} else {
					if (bytes)
						break;
					bytes = true;
				}
				k++;
			}
			if (k > i && k < len && (s[k] == '"' || s[k] == '\'')) {
				p->off = k;
				rc = lex_string(p, t, raw, bytes);
				t->end = p->off;
				return rc;
			}
			while (i < len && (is_ident_start((unsigned char)s[i]) ||
					   is_digit((unsigned char)s[i])))
				i++;
			t->t = TK_IDENT;
			t->s = fbc_arena_strndup(p->a, s + p->off, i - p->off);
			if (!t->s)
				return oom(p);
			t->n = i - p->off;
			p->off = i;
			if (t->n == 2 && memcmp(t->s, "in", 2) == 0)
				t->t = TK_IN;
			t->end = p->off;
			return 0;
		}
		if (is_digit((unsigned char)c) || (c == '.' && is_digit((unsigned char)c2))) {
			rc = lex_number(p, t);
			t->end = p->off;
			return rc;
		}
		if (c == '`') {
			size_t i = p->off + 1;

			while (i < len && s[i] != '`' && s[i] != '\n')
				i++;
			if (i >= len || s[i] != '`' || i == p->off + 1)
				return perr(p, FBC_EPARSE, t->pos,
					    "unterminated quoted identifier");
			t->t = TK_QIDENT;
			t->s = fbc_arena_strndup(p->a, s + p->off + 1, i - p->off - 1);
			if (!t->s)
				return oom(p);
			t->n = i - p->off - 1;
			p->off = i + 1;
			t->end = p->off;
			return 0;
		}
		if (c == '"' || c == '\'') {
			rc = lex_string(p, t, false, false);
			t->end = p->off;
			return rc;
		}
		p->off++;
		switch (c) {
		case '=':
			if (c2 != '=')
				return perr(p, FBC_EPARSE, t->pos, "unexpected '=' (use '==')");
			p->off++;
			t->t = TK_EQ;
			break;
		case '!':
			if (c2 == '=') {
				p->off++;
				t->t = TK_NE;
			} else {
				t->t = TK_NOT;
			}
			break;
		case '<':
			if (c2 == '=') {
				p->off++;
				t->t = TK_LE;
			} else {
				t->t = TK_LT;
			}
			break;
		case '>':
			if (c2 == '=') {
				p->off++;
				t->t = TK_GE;
			} else {
				t->t = TK_GT;
			}
			break;
		case '&':
			if (c2 != '&')
				return perr(p, FBC_EPARSE, t->pos, "unexpected '&' (use '&&')");
			p->off++;
			t->t = TK_AND;
			break;
		case '|':
			if (c2 != '|')
				return perr(p, FBC_EPARSE, t->pos, "unexpected '|' (use '||')");
			p->off++;
			t->t = TK_OR;
			break;
		case '+':
			t->t = TK_PLUS;
			break;
		case '-':
			t->t = TK_MINUS;
			break;
		case '*':
			t->t = TK_STAR;
			break;
		case '/':
			t->t = TK_SLASH;
			break;
		case '%':
			t->t = TK_PERCENT;
			break;
		case '?':
			t->t = TK_QUESTION;
			break;
		case ':':
			t->t = TK_COLON;
			break;
		case '.':
			t->t = TK_DOT;
			break;
		case ',':
			t->t = TK_COMMA;
			break;
		case '[':
			t->t = TK_LBRACKET;
			break;
		case ']':
			t->t = TK_RBRACKET;
			break;
		case '(':
			t->t = TK_LPAREN;
			break;
		case ')':
			t->t = TK_RPAREN;
			break;
		case '{':
			t->t = TK_LBRACE;
			break;
		case '}':
			t->t = TK_RBRACE;
			break;
		default:
			if ((unsigned char)c >= 0x20 && (unsigned char)c < 0x7F)
				return perr(p, FBC_EPARSE, t->pos, "unexpected character '%c'", c);
			return perr(p, FBC_EPARSE, t->pos, "unexpected character 0x%02x",
				    (unsigned char)c);
		}
		t->end = p->off;
	}
	return 0;
}

/* ---- AST helpers ---- */

static const char *const reserved[] = {
	"as",  "break", "const",   "continue",	"else",	  "for", "function", "if",    "import",
	"let", "loop",	"package", "namespace", "return", "var", "void",     "while",
};

static bool is_reserved(const char *s)
{
	size_t i;

	for (i = 0; i < sizeof(reserved) / sizeof(reserved[0]); i++)
		if (strcmp(s, reserved[i]) == 0)
			return true;
	return false;
}

static cel_node *mk(struct parser *p, cel_nkind kind, size_t pos)
{
	cel_node *n = fbc_arena_calloc(p->a, 1, sizeof(*n));

	if (!n) {
		oom(p);
		return NULL;
	}
	n->kind = kind;
	n->pos = pos;
	return n;
}

static cel_node *mk2(struct parser *p, cel_nkind kind, int op, size_t pos, cel_node *l, cel_node *r)
{
	cel_node *n;

	if (!l || !r)
		return NULL;
	n = mk(p, kind, pos);
	if (!n)
		return NULL;
	n->op = op;
	n->args = fbc_arena_alloc(p->a, 2 * sizeof(*n->args));
	if (!n->args) {
		oom(p);
		return NULL;
	}
	n->args[0] = l;
	n->args[1] = r;
	n->nargs = 2;
	return n;
}

static const char *tok_text(struct parser *p, char *buf, size_t size)
{
	const struct token *t = &p->tok;
	size_t n;

	if (t->t == TK_EOF)
		return "end of input";
	n = t->end - t->pos;
	if (n > 32)
		n = 32;
	snprintf(buf, size, "'%.*s'", (int)n, p->src + t->pos);
	return buf;
}

static int expect(struct parser *p, enum tok t, const char *what)
{
	char buf[64];

	if (p->rc)
		return p->rc;
	if (p->tok.t != t)
		return perr(p, FBC_EPARSE, p->tok.pos, "syntax error: expected %s, found %s", what,
			    tok_text(p, buf, sizeof(buf)));
	return next(p);
}

/* ---- grammar ---- */

static cel_node *parse_expr(struct parser *p);

static bool enter(struct parser *p)
{
	if (++p->depth > FBC_CEL_MAX_DEPTH) {
		perr(p, FBC_ELIMIT, p->tok.pos, "expression nested too deeply (max %d)",
		     FBC_CEL_MAX_DEPTH);
		return false;
	}
	return true;
}

/* Collect comma-separated expressions up to `close`; a trailing comma is allowed. */
static int parse_list(struct parser *p, enum tok close, cel_node ***out, size_t *nout, bool pairs)
{
	fbc_vec v;
	int rc = 0;

	fbc_vec_init(&v, sizeof(cel_node *));
	while (p->tok.t != close) {
		cel_node **slot;
		cel_node *e = parse_expr(p);

		if (!e) {
			rc = p->rc;
			goto done;
		}
		slot = fbc_vec_push(&v);
		if (!slot) {
			rc = oom(p);
			goto done;
		}
		*slot = e;
		if (pairs) {
			if ((rc = expect(p, TK_COLON, "':'")))
				goto done;
			e = parse_expr(p);
			if (!e) {
				rc = p->rc;
				goto done;
			}
			slot = fbc_vec_push(&v);
			if (!slot) {
				rc = oom(p);
				goto done;
			}
			*slot = e;
		}
		if (p->tok.t == TK_COMMA) {
			if ((rc = next(p)))
				goto done;
			continue;
		}
		if (p->tok.t != close)
			break;
	}
	if ((rc = expect(p, close,
			 close == TK_RPAREN ? "')'" : (close == TK_RBRACKET ? "']'" : "'}'"))))
		goto done;
	*nout = v.len;
	*out = NULL;
	if (v.len) {
		*out = fbc_arena_alloc(p->a, v.len * sizeof(cel_node *));
		if (!*out) {
			rc = oom(p);
			goto done;
		}
		memcpy(*out, v.items, v.len * sizeof(cel_node *));
	}
done:
	fbc_vec_dispose(&v);
	return rc;
}

static cel_node *make_call(struct parser *p, size_t pos, const char *name, cel_node *target,
			   cel_node **args, size_t nargs)
{
	cel_node *n;
	int kind = -1;

	/* macros */
	if (!target && strcmp(name, "has") == 0 && nargs == 1) {
		if (args[0]->kind != N_SELECT)
			return perr(p, FBC_EPARSE, args[0]->pos, "invalid argument to has() macro"),
			       NULL;
		n = args[0];
		n->kind = N_HAS;
		return n;
	}
	if (target) {
		if (nargs == 2 && strcmp(name, "all") == 0)
			kind = C_ALL;
		else if (nargs == 2 && strcmp(name, "exists") == 0)
			kind = C_EXISTS;
		else if (nargs == 2 && strcmp(name, "exists_one") == 0)
			kind = C_EXISTS_ONE;
		else if (nargs == 2 && strcmp(name, "map") == 0)
			kind = C_MAP;
		else if (nargs == 3 && strcmp(name, "map") == 0)
			kind = C_MAP3;
		else if (nargs == 2 && strcmp(name, "filter") == 0)
			kind = C_FILTER;
	}
	if (kind >= 0) {
		if (args[0]->kind != N_IDENT)
			return perr(p, FBC_EPARSE, args[0]->pos, "argument must be a simple name"),
			       NULL;
		n = mk(p, N_COMPR, pos);
		if (!n)
			return NULL;
		n->op = kind;
		n->name = args[0]->name;
		n->target = target;
		n->args = args + 1;
		n->nargs = nargs - 1;
		return n;
	}
	n = mk(p, N_CALL, pos);
	if (!n)
		return NULL;
	n->name = name;
	n->target = target;
	n->args = args;
	n->nargs = nargs;
	return n;
}

static cel_node *parse_primary(struct parser *p)
{
	struct token t = p->tok;
	cel_node *n = NULL;
	char buf[64];

	switch (t.t) {
	case TK_INT:
		if (t.u > INT64_MAX)
			return perr(p, FBC_EPARSE, t.pos, "integer literal out of range"), NULL;
		n = mk(p, N_LIT, t.pos);
		if (n) {
			n->lit.k = CEL_INT;
			n->lit.v.i = (int64_t)t.u;
		}
		break;
	case TK_UINT:
		n = mk(p, N_LIT, t.pos);
		if (n) {
			n->lit.k = CEL_UINT;
			n->lit.v.u = t.u;
		}
		break;
	case TK_DOUBLE:
		n = mk(p, N_LIT, t.pos);
		if (n) {
			n->lit.k = CEL_DOUBLE;
			n->lit.v.d = t.d;
		}
		break;
	case TK_STRING:
	case TK_BYTES:
		n = mk(p, N_LIT, t.pos);
		if (n) {
			n->lit.k = t.t == TK_STRING ? CEL_STRING : CEL_BYTES;
			n->lit.v.s.p = t.s;
			n->lit.v.s.n = t.n;
		}
		break;
	case TK_LPAREN:
		if (next(p))
			return NULL;
		n = parse_expr(p);
		if (!n || expect(p, TK_RPAREN, "')'"))
			return NULL;
		return n;
	case TK_LBRACKET:
	case TK_LBRACE: {
		cel_node **items = NULL;
		size_t nitems = 0;

		if (next(p))
			return NULL;
		if (parse_list(p, t.t == TK_LBRACKET ? TK_RBRACKET : TK_RBRACE, &items, &nitems,
			       t.t == TK_LBRACE))
			return NULL;
		n = mk(p, t.t == TK_LBRACKET ? N_LIST : N_MAP, t.pos);
		if (n) {
			n->args = items;
			n->nargs = nitems;
		}
		return n;
	}
	case TK_DOT:
	case TK_IDENT: {
		size_t pos = t.pos;

		if (t.t == TK_DOT) {
			/* a leading dot names the root namespace; same as plain here */
			if (next(p))
				return NULL;
			if (p->tok.t != TK_IDENT)
				return perr(p, FBC_EPARSE, p->tok.pos,
					    "syntax error: expected identifier, found %s",
					    tok_text(p, buf, sizeof(buf))),
				       NULL;
			t = p->tok;
		}
		if (strcmp(t.s, "true") == 0 || strcmp(t.s, "false") == 0) {
			n = mk(p, N_LIT, t.pos);
			if (n) {
				n->lit.k = CEL_BOOL;
				n->lit.v.b = t.s[0] == 't';
			}
			break;
		}
		if (strcmp(t.s, "null") == 0) {
			n = mk(p, N_LIT, t.pos);
			if (n)
				n->lit.k = CEL_NULL;
			break;
		}
		if (is_reserved(t.s))
			return perr(p, FBC_EPARSE, t.pos, "reserved identifier '%s'", t.s), NULL;
		if (next(p))
			return NULL;
		if (p->tok.t == TK_LPAREN) {
			cel_node **args = NULL;
			size_t nargs = 0;

			if (next(p) || parse_list(p, TK_RPAREN, &args, &nargs, false))
				return NULL;
			return make_call(p, pos, t.s, NULL, args, nargs);
		}
		if (p->tok.t == TK_LBRACE)
			return perr(p, FBC_EPARSE, p->tok.pos,
				    "message construction is not supported"),
			       NULL;
		n = mk(p, N_IDENT, t.pos);
		if (n)
			n->name = t.s;
		return n;
	}
	default:
		return perr(p, FBC_EPARSE, t.pos, "syntax error: unexpected %s",
			    tok_text(p, buf, sizeof(buf))),
		       NULL;
	}
	if (!n || next(p))
		return NULL;
	return n;
}

static cel_node *parse_member(struct parser *p)
{
	cel_node *n = parse_primary(p);
	char buf[64];

	while (n) {
		if (p->tok.t == TK_DOT) {
			struct token id;
			size_t dot = p->tok.pos;

			if (next(p))
				return NULL;
			id = p->tok;
			if (id.t != TK_IDENT && id.t != TK_QIDENT)
				return perr(p, FBC_EPARSE, id.pos,
					    "syntax error: expected field name, found %s",
					    tok_text(p, buf, sizeof(buf))),
				       NULL;
			if (next(p))
				return NULL;
			if (p->tok.t == TK_LPAREN) {
				cel_node **args = NULL;
				size_t nargs = 0;

				if (id.t == TK_QIDENT)
					return perr(p, FBC_EPARSE, id.pos,
						    "a quoted name cannot be called"),
					       NULL;
				if (next(p) || parse_list(p, TK_RPAREN, &args, &nargs, false))
					return NULL;
				n = make_call(p, dot, id.s, n, args, nargs);
			} else {
				cel_node *s = mk(p, N_SELECT, dot);

				if (!s)
					return NULL;
				s->target = n;
				s->name = id.s;
				n = s;
			}
		} else if (p->tok.t == TK_LBRACKET) {
			size_t pos = p->tok.pos;
			cel_node *idx;

			if (next(p))
				return NULL;
			idx = parse_expr(p);
			if (!idx || expect(p, TK_RBRACKET, "']'"))
				return NULL;
			n = mk2(p, N_INDEX, 0, pos, n, idx);
		} else {
			break;
		}
	}
	return n;
}

static cel_node *parse_unary(struct parser *p)
{
	size_t pos = p->tok.pos;
	cel_node *n, *inner;

	if (p->tok.t == TK_NOT || p->tok.t == TK_MINUS) {
		enum tok op = p->tok.t;

		if (!enter(p))
			return NULL;
		if (next(p))
			return NULL;
		/* `-` directly before a numeric literal is part of the literal, so
		 * that -9223372036854775808 is representable. */
		if (op == TK_MINUS && (p->tok.t == TK_INT || p->tok.t == TK_DOUBLE)) {
			struct token t = p->tok;

			if (t.t == TK_INT && t.u > (uint64_t)INT64_MAX + 1)
				return perr(p, FBC_EPARSE, pos, "integer literal out of range"),
				       NULL;
			n = mk(p, N_LIT, pos);
			if (!n)
				return NULL;
			if (t.t == TK_INT) {
				n->lit.k = CEL_INT;
				n->lit.v.i =
					t.u == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)t.u;
			} else {
				n->lit.k = CEL_DOUBLE;
				n->lit.v.d = -t.d;
			}
			if (next(p))
				return NULL;
			/* member access binds tighter than unary minus, but
			 * only a literal can start here: continue as member */
			while (p->tok.t == TK_DOT || p->tok.t == TK_LBRACKET) {
				/* rare: (-1).foo style; re-use parse_member's loop by
				 * wrapping — simplest is to reject */
				return perr(p, FBC_EPARSE, p->tok.pos,
					    "syntax error: member access on a negative literal"),
				       NULL;
			}
			p->depth--;
			return n;
		}
		inner = parse_unary(p);
		p->depth--;
		if (!inner)
			return NULL;
		n = mk(p, op == TK_NOT ? N_NOT : N_NEG, pos);
		if (!n)
			return NULL;
		n->args = fbc_arena_alloc(p->a, sizeof(*n->args));
		if (!n->args)
			return oom(p), NULL;
		n->args[0] = inner;
		n->nargs = 1;
		return n;
	}
	return parse_member(p);
}

static cel_node *parse_mult(struct parser *p)
{
	cel_node *n = parse_unary(p);

	while (n && (p->tok.t == TK_STAR || p->tok.t == TK_SLASH || p->tok.t == TK_PERCENT)) {
		int op = p->tok.t == TK_STAR ? OP_MUL : (p->tok.t == TK_SLASH ? OP_DIV : OP_MOD);
		size_t pos = p->tok.pos;

		if (next(p))
			return NULL;
		n = mk2(p, N_BINOP, op, pos, n, parse_unary(p));
	}
	return n;
}

static cel_node *parse_add(struct parser *p)
{
	cel_node *n = parse_mult(p);

	while (n && (p->tok.t == TK_PLUS || p->tok.t == TK_MINUS)) {
		int op = p->tok.t == TK_PLUS ? OP_ADD : OP_SUB;
		size_t pos = p->tok.pos;

		if (next(p))
			return NULL;
		n = mk2(p, N_BINOP, op, pos, n, parse_mult(p));
	}
	return n;
}

static int relop(enum tok t)
{
	switch (t) {
	case TK_EQ:
		return OP_EQ;
	case TK_NE:
		return OP_NE;
	case TK_LT:
		return OP_LT;
	case TK_LE:
		return OP_LE;
	case TK_GT:
		return OP_GT;
	case TK_GE:
		return OP_GE;
	case TK_IN:
		return OP_IN;
	default:
		return -1;
	}
}

static cel_node *parse_rel(struct parser *p)
{
	cel_node *n = parse_add(p);
	int op;

	while (n && (op = relop(p->tok.t)) >= 0) {
		size_t pos = p->tok.pos;

		if (next(p))
			return NULL;
		n = mk2(p, N_BINOP, op, pos, n, parse_add(p));
	}
	return n;
}

static cel_node *parse_and(struct parser *p)
{
	cel_node *n = parse_rel(p);

	while (n && p->tok.t == TK_AND) {
		size_t pos = p->tok.pos;

		if (next(p))
			return NULL;
		n = mk2(p, N_AND, 0, pos, n, parse_rel(p));
	}
	return n;
}

static cel_node *parse_or(struct parser *p)
{
	cel_node *n = parse_and(p);

	while (n && p->tok.t == TK_OR) {
		size_t pos = p->tok.pos;

		if (next(p))
			return NULL;
		n = mk2(p, N_OR, 0, pos, n, parse_and(p));
	}
	return n;
}

static cel_node *parse_expr(struct parser *p)
{
	cel_node *c, *a, *b, *n;
	size_t pos;

	if (!enter(p))
		return NULL;
	c = parse_or(p);
	if (!c || p->tok.t != TK_QUESTION) {
		p->depth--;
		return c;
	}
	pos = p->tok.pos;
	if (next(p))
		return NULL;
	a = parse_or(p);
	if (!a || expect(p, TK_COLON, "':'"))
		return NULL;
	b = parse_expr(p);
	if (!b)
		return NULL;
	n = mk(p, N_COND, pos);
	if (!n)
		return NULL;
	n->args = fbc_arena_alloc(p->a, 3 * sizeof(*n->args));
	if (!n->args)
		return oom(p), NULL;
	n->args[0] = c;
	n->args[1] = a;
	n->args[2] = b;
	n->nargs = 3;
	p->depth--;
	return n;
}

/* Depth of the finished tree: left-associative chains (a+b+c...) are built
 * iteratively, so the parser's recursion bound alone does not bound it. */
static size_t tree_depth(const cel_node *n, size_t limit)
{
	size_t d = 0, i, x;

	if (!n || limit == 0)
		return 1;
	if (n->target) {
		x = tree_depth(n->target, limit - 1);
		if (x > d)
			d = x;
	}
	for (i = 0; i < n->nargs && d < limit; i++) {
		x = tree_depth(n->args[i], limit - 1);
		if (x > d)
			d = x;
	}
	return d + 1;
}

int cel_parse(cel_node **out, fbc_arena *a, const char *expr, size_t len, fbc_error *err)
{
	struct parser p = {.a = a, .src = expr, .len = len, .err = err};
	cel_node *root;
	char buf[64];

	if (len > FBC_CEL_MAX_EXPR)
		return fbc_error_set(err, FBC_ELIMIT, "cel",
				     "expression is %zu bytes, more than the maximum of %d", len,
				     FBC_CEL_MAX_EXPR);
	if (next(&p))
		return p.rc;
	root = parse_expr(&p);
	if (!root)
		return p.rc ? p.rc : oom(&p);
	if (p.tok.t != TK_EOF)
		return perr(&p, FBC_EPARSE, p.tok.pos, "syntax error: unexpected %s",
			    tok_text(&p, buf, sizeof(buf)));
	if (tree_depth(root, 4 * FBC_CEL_MAX_DEPTH + 1) > 4 * FBC_CEL_MAX_DEPTH)
		return perr(&p, FBC_ELIMIT, 0, "expression nested too deeply (max %d)",
			    4 * FBC_CEL_MAX_DEPTH);
	*out = root;
	return 0;
}
