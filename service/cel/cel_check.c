/*
 * A light CEL type checker: computes each node's static type bottom-up,
 * resolves identifiers and rejects unknown functions, wrong arities and
 * operand types that no overload accepts, as cel-go's checker would. `dyn`
 * defers to run time. Errors carry the line and column of the node.
 */
#include "service/cel/cel_int.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

const cel_type cel_t_dyn = {T_DYN, NULL, NULL};
const cel_type cel_t_bool = {T_BOOL, NULL, NULL};
const cel_type cel_t_int = {T_INT, NULL, NULL};
const cel_type cel_t_uint = {T_UINT, NULL, NULL};
const cel_type cel_t_double = {T_DOUBLE, NULL, NULL};
const cel_type cel_t_string = {T_STRING, NULL, NULL};
const cel_type cel_t_bytes = {T_BYTES, NULL, NULL};
const cel_type cel_t_null = {T_NULL, NULL, NULL};
const cel_type cel_t_type = {T_TYPE, NULL, NULL};

struct scope {
	const struct scope *up;
	const char *name;
	const cel_type *type;
};

struct checker {
	fbc_cel_program *p;
	fbc_error *err;
	int rc;
};

static const cel_type *mklist(fbc_arena *a, const cel_type *elem)
{
	cel_type *t = fbc_arena_calloc(a, 1, sizeof(*t));

	if (t) {
		t->k = T_LIST;
		t->p1 = elem;
	}
	return t;
}

static const cel_type *mkmap(fbc_arena *a, const cel_type *k, const cel_type *v)
{
	cel_type *t = fbc_arena_calloc(a, 1, sizeof(*t));

	if (t) {
		t->k = T_MAP;
		t->p1 = k;
		t->p2 = v;
	}
	return t;
}

/* ---- type text ---- */

static const cel_type *parse_type(fbc_arena *a, const char **s, int depth)
{
	static const struct {
		const char *name;
		const cel_type *t;
	} prims[] = {
		{"dyn", &cel_t_dyn},	 {"bool", &cel_t_bool},	     {"int", &cel_t_int},
		{"uint", &cel_t_uint},	 {"double", &cel_t_double},  {"string", &cel_t_string},
		{"bytes", &cel_t_bytes}, {"null_type", &cel_t_null}, {"type", &cel_t_type},
	};
	const char *p = *s;
	size_t n, i;

	if (depth > 32)
		return NULL;
	while (*p == ' ')
		p++;
	for (n = 0; (p[n] >= 'a' && p[n] <= 'z') || p[n] == '_'; n++)
		;
	if (n == 4 && memcmp(p, "list", 4) == 0 && p[4] == '(') {
		const cel_type *e;

		p += 5;
		e = parse_type(a, &p, depth + 1);
		if (!e || *p != ')')
			return NULL;
		*s = p + 1;
		return mklist(a, e);
	}
	if (n == 3 && memcmp(p, "map", 3) == 0 && p[3] == '(') {
		const cel_type *k, *v;

		p += 4;
		k = parse_type(a, &p, depth + 1);
		if (!k || *p != ',')
			return NULL;
		p++;
		v = parse_type(a, &p, depth + 1);
		if (!v || *p != ')')
			return NULL;
		*s = p + 1;
		return mkmap(a, k, v);
	}
	for (i = 0; i < sizeof(prims) / sizeof(prims[0]); i++)
		if (strlen(prims[i].name) == n && memcmp(p, prims[i].name, n) == 0) {
			p += n;
			while (*p == ' ')
				p++;
			*s = p;
			return prims[i].t;
		}
	return NULL;
}

const cel_type *cel_type_parse(fbc_arena *a, const char *s)
{
	const cel_type *t = parse_type(a, &s, 0);

	while (t && *s == ' ')
		s++;
	return t && *s == '\0' ? t : NULL;
}

static void type_text(fbc_buf *b, const cel_type *t)
{
	switch (t->k) {
	case T_DYN:
		fbc_buf_puts(b, "dyn");
		break;
	case T_BOOL:
		fbc_buf_puts(b, "bool");
		break;
	case T_INT:
		fbc_buf_puts(b, "int");
		break;
	case T_UINT:
		fbc_buf_puts(b, "uint");
		break;
	case T_DOUBLE:
		fbc_buf_puts(b, "double");
		break;
	case T_STRING:
		fbc_buf_puts(b, "string");
		break;
	case T_BYTES:
		fbc_buf_puts(b, "bytes");
		break;
	case T_NULL:
		fbc_buf_puts(b, "null_type");
		break;
	case T_TYPE:
		fbc_buf_puts(b, "type");
		break;
	case T_LIST:
		fbc_buf_puts(b, "list(");
		type_text(b, t->p1);
		fbc_buf_puts(b, ")");
		break;
	case T_MAP:
		fbc_buf_puts(b, "map(");
		type_text(b, t->p1);
		fbc_buf_puts(b, ", ");
		type_text(b, t->p2);
		fbc_buf_puts(b, ")");
		break;
	}
}

char *cel_type_text(fbc_arena *a, const cel_type *t)
{
	fbc_buf b;
	char *s;

	fbc_buf_init(&b, 4096);
	type_text(&b, t);
	s = fbc_arena_strdup(a, b.data ? b.data : "");
	fbc_buf_dispose(&b);
	return s;
}

/* ---- checking ---- */

__attribute__((format(printf, 3, 4))) static const cel_type *cerr(struct checker *c, size_t pos,
								  const char *fmt, ...)
{
	char msg[512];
	size_t line, col;
	va_list ap;

	if (c->rc)
		return NULL;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	cel_position(c->p->expr, c->p->expr_len, pos, &line, &col);
	fbc_error_set(c->err, FBC_EINVAL, "cel", "%zu:%zu: %s", line, col, msg);
	c->rc = FBC_EINVAL;
	return NULL;
}

static const cel_type *nomem(struct checker *c)
{
	if (!c->rc) {
		fbc_error_set(c->err, FBC_ENOMEM, "cel", "out of memory");
		c->rc = FBC_ENOMEM;
	}
	return NULL;
}

/* Can a value of static type a meet one of static type b (dyn matches all)? */
static bool compatible(const cel_type *a, const cel_type *b)
{
	if (a->k == T_DYN || b->k == T_DYN)
		return true;
	if (a->k != b->k)
		return false;
	if (a->k == T_LIST)
		return compatible(a->p1, b->p1);
	if (a->k == T_MAP)
		return compatible(a->p1, b->p1) && compatible(a->p2, b->p2);
	return true;
}

static bool same(const cel_type *a, const cel_type *b)
{
	if (a->k != b->k)
		return false;
	if (a->k == T_LIST)
		return same(a->p1, b->p1);
	if (a->k == T_MAP)
		return same(a->p1, b->p1) && same(a->p2, b->p2);
	return true;
}

/* Join for list/map literals and ?: branches: the common type, else dyn. */
static const cel_type *join(const cel_type *a, const cel_type *b)
{
	if (!a)
		return b;
	if (same(a, b))
		return a;
	if (a->k == T_DYN)
		return a;
	return &cel_t_dyn;
}

static bool is_num(const cel_type *t)
{
	return t->k == T_INT || t->k == T_UINT || t->k == T_DOUBLE;
}

static const char *tname(struct checker *c, const cel_type *t)
{
	const char *s = cel_type_text(c->p->arena, t);

	return s ? s : "?";
}

static const cel_type *no_overload(struct checker *c, const cel_node *n, const char *fn,
				   const cel_type *const *args, size_t nargs)
{
	char list[400];
	size_t i, off = 0;

	list[0] = '\0';
	for (i = 0; i < nargs && off < sizeof(list); i++)
		off += (size_t)snprintf(list + off, sizeof(list) - off, "%s%s", i ? ", " : "",
					tname(c, args[i]));
	return cerr(c, n->pos, "found no matching overload for '%s' applied to '(%s)'", fn, list);
}

static const char *op_name(int op)
{
	static const char *const names[] = {"_+_",  "_-_", "_*_",  "_/_", "_%_",  "_==_",
					    "_!=_", "_<_", "_<=_", "_>_", "_>=_", "@in"};
	return names[op];
}

static const cel_type *check(struct checker *c, cel_node *n, const struct scope *sc);

static const cel_type *check_binop(struct checker *c, cel_node *n, const cel_type *l,
				   const cel_type *r)
{
	const cel_type *args[2] = {l, r};
	bool dyn = l->k == T_DYN || r->k == T_DYN;

	switch (n->op) {
	case OP_EQ:
	case OP_NE:
		if (!compatible(l, r) && !(l->k == T_NULL || r->k == T_NULL))
			return no_overload(c, n, op_name(n->op), args, 2);
		return &cel_t_bool;
	case OP_LT:
	case OP_LE:
	case OP_GT:
	case OP_GE:
		if (dyn) {
			const cel_type *k = l->k == T_DYN ? r : l;

			if (k->k == T_DYN || is_num(k) || k->k == T_STRING || k->k == T_BYTES ||
			    k->k == T_BOOL)
				return &cel_t_bool;
			return no_overload(c, n, op_name(n->op), args, 2);
		}
		if ((is_num(l) && is_num(r)) ||
		    (l->k == r->k && (l->k == T_STRING || l->k == T_BYTES || l->k == T_BOOL)))
			return &cel_t_bool;
		return no_overload(c, n, op_name(n->op), args, 2);
	case OP_IN:
		if (r->k == T_DYN)
			return &cel_t_bool;
		if (r->k == T_LIST && compatible(l, r->p1))
			return &cel_t_bool;
		if (r->k == T_MAP && compatible(l, r->p1))
			return &cel_t_bool;
		return no_overload(c, n, op_name(n->op), args, 2);
	default:
		break;
	}
	/* arithmetic */
	if (dyn) {
		const cel_type *k = l->k == T_DYN ? r : l;

		if (k->k == T_DYN)
			return &cel_t_dyn;
		if (is_num(k) && (n->op != OP_MOD || k->k != T_DOUBLE))
			return k;
		if (n->op == OP_ADD && (k->k == T_STRING || k->k == T_BYTES || k->k == T_LIST))
			return k->k == T_LIST ? &cel_t_dyn : k;
		return no_overload(c, n, op_name(n->op), args, 2);
	}
	if (l->k == r->k && is_num(l) && (n->op != OP_MOD || l->k != T_DOUBLE))
		return l;
	if (n->op == OP_ADD && l->k == r->k && (l->k == T_STRING || l->k == T_BYTES))
		return l;
	if (n->op == OP_ADD && l->k == T_LIST && r->k == T_LIST) {
		const cel_type *e = join(l->p1, r->p1);

		return mklist(c->p->arena, e) ?: nomem(c);
	}
	return no_overload(c, n, op_name(n->op), args, 2);
}

static bool type_in(const cel_type *t, unsigned mask)
{
	return t->k == T_DYN || (mask & (1u << t->k)) != 0;
}

#define M(k) (1u << (k))

static const cel_type *check_call(struct checker *c, cel_node *n, const struct scope *sc)
{
	const cel_type *at[4];
	const cel_type *tt = NULL;
	const char *f = n->name;
	size_t i, na = n->nargs;

	if (n->target) {
		tt = check(c, n->target, sc);
		if (!tt)
			return NULL;
	}
	if (na > 3) {
		for (i = 0; i < na; i++)
			if (!check(c, n->args[i], sc))
				return NULL;
		goto unknown;
	}
	for (i = 0; i < na; i++) {
		at[i] = check(c, n->args[i], sc);
		if (!at[i])
			return NULL;
	}
	if (strcmp(f, "size") == 0) {
		const cel_type *x = n->target ? tt : (na == 1 ? at[0] : NULL);

		if ((n->target ? na == 0 : na == 1) &&
		    type_in(x, M(T_STRING) | M(T_BYTES) | M(T_LIST) | M(T_MAP)))
			return &cel_t_int;
		goto overload;
	}
	if (strcmp(f, "contains") == 0 || strcmp(f, "startsWith") == 0 ||
	    strcmp(f, "endsWith") == 0 || strcmp(f, "matches") == 0) {
		const cel_type *s = tt, *arg = na ? at[0] : NULL;

		if (!n->target && strcmp(f, "matches") == 0 && na == 2) {
			s = at[0];
			arg = at[1];
		} else if (!n->target || na != 1) {
			if (!n->target && strcmp(f, "matches") != 0)
				goto unknown;
			goto overload;
		}
		if (type_in(s, M(T_STRING)) && type_in(arg, M(T_STRING)))
			return &cel_t_bool;
		goto overload;
	}
	if (strcmp(f, "semver_compare") == 0) {
		if (n->target || na != 2)
			goto overload;
		return &cel_t_int;
	}
	{
		static const struct {
			const char *name;
			unsigned accept;
			const cel_type *result;
		} conv[] = {
			{"int", M(T_INT) | M(T_UINT) | M(T_DOUBLE) | M(T_STRING), &cel_t_int},
			{"uint", M(T_INT) | M(T_UINT) | M(T_DOUBLE) | M(T_STRING), &cel_t_uint},
			{"double", M(T_INT) | M(T_UINT) | M(T_DOUBLE) | M(T_STRING), &cel_t_double},
			{"string",
			 M(T_INT) | M(T_UINT) | M(T_DOUBLE) | M(T_STRING) | M(T_BYTES) | M(T_BOOL),
			 &cel_t_string},
			{"bytes", M(T_BYTES) | M(T_STRING), &cel_t_bytes},
			{"bool", M(T_BOOL) | M(T_STRING), &cel_t_bool},
			{"dyn", ~0u, &cel_t_dyn},
			{"type", ~0u, &cel_t_type},
		};

		for (i = 0; i < sizeof(conv) / sizeof(conv[0]); i++) {
			if (strcmp(f, conv[i].name) != 0)
				continue;
			if (n->target || na != 1 || !type_in(at[0], conv[i].accept))
				goto overload;
			return conv[i].result;
		}
	}
unknown:
	return cerr(c, n->pos, "undeclared reference to '%s'", f);
overload : {
	const cel_type *all[5];
	size_t k = 0;

	if (tt)
		all[k++] = tt;
	for (i = 0; i < na && i < 4; i++)
		all[k++] = at[i];
	return no_overload(c, n, f, all, k);
}
}

static const char *const type_idents[] = {"int",   "uint", "double", "bool",	  "string",
					  "bytes", "list", "map",    "null_type", "type"};

static const cel_type *check(struct checker *c, cel_node *n, const struct scope *sc)
{
	const cel_type *t = NULL;
	size_t i;

	if (c->rc)
		return NULL;
	switch (n->kind) {
	case N_LIT:
		switch (n->lit.k) {
		case CEL_NULL:
			t = &cel_t_null;
			break;
		case CEL_BOOL:
			t = &cel_t_bool;
			break;
		case CEL_INT:
			t = &cel_t_int;
			break;
		case CEL_UINT:
			t = &cel_t_uint;
			break;
		case CEL_DOUBLE:
			t = &cel_t_double;
			break;
		case CEL_STRING:
			t = &cel_t_string;
			break;
		case CEL_BYTES:
			t = &cel_t_bytes;
			break;
		default:
			t = &cel_t_dyn;
			break;
		}
		break;
	case N_IDENT: {
		const struct scope *s;

		for (s = sc; s; s = s->up)
			if (strcmp(s->name, n->name) == 0) {
				t = s->type;
				n->op = REF_LOCAL;
				break;
			}
		if (t)
			break;
		for (i = 0; i < c->p->nvars; i++)
			if (strcmp(c->p->var_names[i], n->name) == 0) {
				t = c->p->var_types[i];
				n->op = REF_VAR;
				n->var_index = i;
				break;
			}
		if (t)
			break;
		for (i = 0; i < sizeof(type_idents) / sizeof(type_idents[0]); i++)
			if (strcmp(type_idents[i], n->name) == 0) {
				t = &cel_t_type;
				n->op = REF_TYPE;
				break;
			}
		if (!t)
			return cerr(c, n->pos, "undeclared reference to '%s'", n->name);
		break;
	}
	case N_SELECT:
	case N_HAS: {
		const cel_type *tt = check(c, n->target, sc);

		if (!tt)
			return NULL;
		if (tt->k == T_MAP && type_in(tt->p1, M(T_STRING)))
			t = n->kind == N_HAS ? &cel_t_bool : tt->p2;
		else if (tt->k == T_DYN)
			t = n->kind == N_HAS ? &cel_t_bool : &cel_t_dyn;
		else
			return cerr(c, n->pos, "type '%s' does not support field selection",
				    tname(c, tt));
		break;
	}
	case N_INDEX: {
		const cel_type *tt = check(c, n->args[0], sc), *it;
		const cel_type *args[2];

		if (!tt)
			return NULL;
		it = check(c, n->args[1], sc);
		if (!it)
			return NULL;
		args[0] = tt;
		args[1] = it;
		if (tt->k == T_LIST && type_in(it, M(T_INT) | M(T_UINT) | M(T_DOUBLE)))
			t = tt->p1;
		else if (tt->k == T_MAP && compatible(tt->p1, it))
			t = tt->p2;
		else if (tt->k == T_DYN)
			t = &cel_t_dyn;
		else
			return no_overload(c, n, "_[_]", args, 2);
		break;
	}
	case N_CALL:
		t = check_call(c, n, sc);
		break;
	case N_LIST: {
		const cel_type *e = NULL;

		for (i = 0; i < n->nargs; i++) {
			const cel_type *x = check(c, n->args[i], sc);

			if (!x)
				return NULL;
			e = join(e, x);
		}
		t = mklist(c->p->arena, e ? e : &cel_t_dyn);
		if (!t)
			return nomem(c);
		break;
	}
	case N_MAP: {
		const cel_type *kt = NULL, *vt = NULL;

		for (i = 0; i < n->nargs; i += 2) {
			const cel_type *k = check(c, n->args[i], sc);
			const cel_type *v = k ? check(c, n->args[i + 1], sc) : NULL;

			if (!v)
				return NULL;
			if (!type_in(k, M(T_INT) | M(T_UINT) | M(T_STRING) | M(T_BOOL)))
				return cerr(c, n->args[i]->pos, "unsupported map key type '%s'",
					    tname(c, k));
			kt = join(kt, k);
			vt = join(vt, v);
		}
		t = mkmap(c->p->arena, kt ? kt : &cel_t_dyn, vt ? vt : &cel_t_dyn);
		if (!t)
			return nomem(c);
		break;
	}
	case N_COND: {
		const cel_type *ct = check(c, n->args[0], sc), *a, *b;

		if (!ct)
			return NULL;
		if (!type_in(ct, M(T_BOOL))) {
			const cel_type *args[1] = {ct};

			return no_overload(c, n, "_?_:_", args, 1);
		}
		a = check(c, n->args[1], sc);
		b = a ? check(c, n->args[2], sc) : NULL;
		if (!b)
			return NULL;
		if (!compatible(a, b) && a->k != T_NULL && b->k != T_NULL) {
			const cel_type *args[3] = {ct, a, b};

			return no_overload(c, n, "_?_:_", args, 3);
		}
		t = join(a, b);
		break;
	}
	case N_AND:
	case N_OR:
	case N_NOT:
		for (i = 0; i < n->nargs; i++) {
			const cel_type *x = check(c, n->args[i], sc);
			const cel_type *args[1];

			if (!x)
				return NULL;
			args[0] = x;
			if (!type_in(x, M(T_BOOL)))
				return no_overload(c, n,
						   n->kind == N_AND  ? "_&&_"
						   : n->kind == N_OR ? "_||_"
								     : "!_",
						   args, 1);
		}
		t = &cel_t_bool;
		break;
	case N_NEG: {
		const cel_type *x = check(c, n->args[0], sc);
		const cel_type *args[1];

		if (!x)
			return NULL;
		args[0] = x;
		if (!type_in(x, M(T_INT) | M(T_DOUBLE)))
			return no_overload(c, n, "-_", args, 1);
		t = x;
		break;
	}
	case N_BINOP: {
		const cel_type *l = check(c, n->args[0], sc), *r;

		if (!l)
			return NULL;
		r = check(c, n->args[1], sc);
		if (!r)
			return NULL;
		t = check_binop(c, n, l, r);
		break;
	}
	case N_COMPR: {
		const cel_type *rt = check(c, n->target, sc), *et, *x, *last = NULL;
		struct scope inner;

		if (!rt)
			return NULL;
		if (rt->k == T_LIST)
			et = rt->p1;
		else if (rt->k == T_MAP)
			et = rt->p1;
		else if (rt->k == T_DYN)
			et = &cel_t_dyn;
		else
			return cerr(
				c, n->target->pos,
				"expression of type '%s' cannot be the range of a comprehension "
				"(must be list, map, or dynamic)",
				tname(c, rt));
		inner.up = sc;
		inner.name = n->name;
		inner.type = et;
		for (i = 0; i < n->nargs; i++) {
			x = check(c, n->args[i], &inner);
			if (!x)
				return NULL;
			last = x;
			/* every argument but a map transform is a predicate */
			if (!((n->op == C_MAP && i == 0) || (n->op == C_MAP3 && i == 1)) &&
			    !type_in(x, M(T_BOOL))) {
				const cel_type *args[1] = {x};

				return no_overload(c, n->args[i], "predicate", args, 1);
			}
		}
		switch (n->op) {
		case C_MAP:
		case C_MAP3:
			t = mklist(c->p->arena, last);
			break;
		case C_FILTER:
			t = mklist(c->p->arena, et);
			break;
		default:
			t = &cel_t_bool;
			break;
		}
		if (!t)
			return c->rc ? NULL : nomem(c);
		break;
	}
	}
	if (t)
		n->type = t;
	return t;
}

int cel_check(fbc_cel_program *p, fbc_error *err)
{
	struct checker c = {.p = p, .err = err};
	const cel_type *t = check(&c, p->root, NULL);

	if (!t)
		return c.rc ? c.rc : FBC_EINTERNAL;
	if ((p->flags & FBC_CEL_REQUIRE_BOOL) && t->k != T_BOOL)
		return fbc_error_set(err, FBC_EINVAL, "cel",
				     "cel expressions must have type Bool (found '%s')",
				     tname(&c, t));
	p->type_text = cel_type_text(p->arena, t);
	if (!p->type_text)
		return fbc_error_set(err, FBC_ENOMEM, "cel", "out of memory");
	return 0;
}
