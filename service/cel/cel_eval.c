/*
 * Tree-walking CEL evaluator. Errors are values (CEL_ERROR) so that && ||
 * and the all/exists macros can absorb them as CEL specifies; bounds (steps,
 * memory) set flags on the context that the entry points turn into
 * FBC_ELIMIT whatever the expression did with the error value.
 */
#include "service/cel/cel_int.h"
#include "service/semver/semver.h"

#include <errno.h>
#include <math.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct escope {
	const struct escope *up;
	const char *name;
	cel_val v;
};

static cel_val eval(cel_ctx *c, const cel_node *n, const struct escope *sc);

static const cel_val v_true = {.k = CEL_BOOL, .v.b = true};
static const cel_val v_false = {.k = CEL_BOOL, .v.b = false};

static cel_val mkbool(bool b)
{
	return b ? v_true : v_false;
}

static cel_val mkint(int64_t i)
{
	cel_val v = {.k = CEL_INT, .v.i = i};

	return v;
}

static cel_val no_overload(cel_ctx *c, const char *fn, const cel_val *a, const cel_val *b)
{
	if (b)
		return cel_error(c, "no such overload: %s(%s, %s)", fn, cel_kind_name(a->k),
				 cel_kind_name(b->k));
	return cel_error(c, "no such overload: %s(%s)", fn, cel_kind_name(a->k));
}

static bool mem_ok(cel_ctx *c)
{
	if (fbc_arena_used(c->a) > FBC_CEL_MAX_MEM) {
		c->limit = true;
		return false;
	}
	return true;
}

static cel_val limit_error(cel_ctx *c, const char *what)
{
	c->limit = true;
	return cel_error(c, "%s", what);
}

static cel_val oom_error(cel_ctx *c)
{
	c->oom = true;
	return (cel_val){.k = CEL_ERROR, .v.err = "out of memory"};
}

static cel_val new_list(cel_ctx *c, size_t n, cel_val **items)
{
	struct cel_list *l;
	cel_val v = {.k = CEL_LIST};

	if (!mem_ok(c))
		return limit_error(c, "evaluation exceeded the memory limit");
	l = fbc_arena_alloc(c->a, sizeof(*l));
	*items = n ? fbc_arena_calloc(c->a, n, sizeof(cel_val)) : NULL;
	if (!l || (n && !*items))
		return oom_error(c);
	l->n = n;
	l->items = *items;
	v.v.l = l;
	return v;
}

static cel_val new_str(cel_ctx *c, cel_kind k, size_t n, char **p)
{
	cel_val v = {.k = k};

	if (!mem_ok(c))
		return limit_error(c, "evaluation exceeded the memory limit");
	*p = fbc_arena_alloc(c->a, n + 1);
	if (!*p)
		return oom_error(c);
	(*p)[n] = '\0';
	v.v.s.p = *p;
	v.v.s.n = n;
	return v;
}

/* ---- arithmetic ---- */

static cel_val arith(cel_ctx *c, int op, const cel_val *a, const cel_val *b)
{
	static const char *const names[] = {"_+_", "_-_", "_*_", "_/_", "_%_"};

	if (a->k != b->k)
		return no_overload(c, names[op], a, b);
	switch (a->k) {
	case CEL_INT: {
		int64_t r;
		bool ovf = false;

		switch (op) {
		case OP_ADD:
			ovf = __builtin_add_overflow(a->v.i, b->v.i, &r);
			break;
		case OP_SUB:
			ovf = __builtin_sub_overflow(a->v.i, b->v.i, &r);
			break;
		case OP_MUL:
			ovf = __builtin_mul_overflow(a->v.i, b->v.i, &r);
			break;
		case OP_DIV:
		case OP_MOD:
			if (b->v.i == 0)
				return cel_error(c, op == OP_DIV ? "division by zero"
								 : "modulus by zero");
			if (a->v.i == INT64_MIN && b->v.i == -1)
				return cel_error(c, "integer overflow");
			r = op == OP_DIV ? a->v.i / b->v.i : a->v.i % b->v.i;
			break;
		default:
			r = 0;
		}
		if (ovf)
			return cel_error(c, "integer overflow");
		return mkint(r);
	}
	case CEL_UINT: {
		uint64_t r;
		bool ovf = false;
		cel_val v = {.k = CEL_UINT};

		switch (op) {
		case OP_ADD:
			ovf = __builtin_add_overflow(a->v.u, b->v.u, &r);
			break;
		case OP_SUB:
			ovf = __builtin_sub_overflow(a->v.u, b->v.u, &r);
			break;
		case OP_MUL:
			ovf = __builtin_mul_overflow(a->v.u, b->v.u, &r);
			break;
		case OP_DIV:
		case OP_MOD:
			if (b->v.u == 0)
				return cel_error(c, op == OP_DIV ? "division by zero"
								 : "modulus by zero");
			r = op == OP_DIV ? a->v.u / b->v.u : a->v.u % b->v.u;
			break;
		default:
			r = 0;
		}
		if (ovf)
			return cel_error(c, "unsigned integer overflow");
		v.v.u = r;
		return v;
	}
	case CEL_DOUBLE: {
		cel_val v = {.k = CEL_DOUBLE};

		switch (op) {
		case OP_ADD:
			v.v.d = a->v.d + b->v.d;
			break;
		case OP_SUB:
			v.v.d = a->v.d - b->v.d;
			break;
		case OP_MUL:
			v.v.d = a->v.d * b->v.d;
			break;
		case OP_DIV:
			v.v.d = a->v.d / b->v.d;
			break;
		default:
			return no_overload(c, names[op], a, b);
		}
		return v;
	}
	case CEL_STRING:
	case CEL_BYTES: {
		char *p = NULL;
		cel_val v;

		if (op != OP_ADD)
			return no_overload(c, names[op], a, b);
		v = new_str(c, a->k, a->v.s.n + b->v.s.n, &p);
		if (v.k == CEL_ERROR)
			return v;
		if (a->v.s.n)
			memcpy(p, a->v.s.p, a->v.s.n);
		if (b->v.s.n)
			memcpy(p + a->v.s.n, b->v.s.p, b->v.s.n);
		return v;
	}
	case CEL_LIST: {
		cel_val *items, v;

		if (op != OP_ADD)
			return no_overload(c, names[op], a, b);
		v = new_list(c, a->v.l->n + b->v.l->n, &items);
		if (v.k == CEL_ERROR)
			return v;
		if (a->v.l->n)
			memcpy(items, a->v.l->items, a->v.l->n * sizeof(cel_val));
		if (b->v.l->n)
			memcpy(items + a->v.l->n, b->v.l->items, b->v.l->n * sizeof(cel_val));
		return v;
	}
	default:
		return no_overload(c, names[op], a, b);
	}
}

static cel_val binop(cel_ctx *c, int op, const cel_val *a, const cel_val *b)
{
	int cmp;
	size_t i;

	if (a->k == CEL_ERROR)
		return *a;
	if (b->k == CEL_ERROR)
		return *b;
	switch (op) {
	case OP_EQ:
		return mkbool(cel_equal(a, b));
	case OP_NE:
		return mkbool(!cel_equal(a, b));
	case OP_LT:
	case OP_LE:
	case OP_GT:
	case OP_GE: {
		static const char *const names[] = {"_<_", "_<=_", "_>_", "_>=_"};

		if (!cel_compare(a, b, &cmp))
			return no_overload(c, names[op - OP_LT], a, b);
		if (cmp == 2) /* NaN */
			return v_false;
		switch (op) {
		case OP_LT:
			return mkbool(cmp < 0);
		case OP_LE:
			return mkbool(cmp <= 0);
		case OP_GT:
			return mkbool(cmp > 0);
		default:
			return mkbool(cmp >= 0);
		}
	}
	case OP_IN:
		if (b->k == CEL_LIST) {
			for (i = 0; i < b->v.l->n; i++)
				if (cel_equal(a, &b->v.l->items[i]))
					return v_true;
			return v_false;
		}
		if (b->k == CEL_MAP) {
			for (i = 0; i < b->v.m->n; i++)
				if (cel_equal(a, &b->v.m->keys[i]))
					return v_true;
			return v_false;
		}
		return no_overload(c, "@in", a, b);
	default:
		return arith(c, op, a, b);
	}
}

/* ---- indexing and selection ---- */

static cel_val map_get(cel_ctx *c, const cel_val *m, const cel_val *key, bool *found)
{
	size_t i;

	for (i = 0; i < m->v.m->n; i++)
		if (cel_equal(&m->v.m->keys[i], key)) {
			*found = true;
			return m->v.m->vals[i];
		}
	*found = false;
	return v_false;
}

static cel_val key_error(cel_ctx *c, const cel_val *key)
{
	char buf[64];

	switch (key->k) {
	case CEL_STRING:
		return cel_error(c, "no such key: %.*s", (int)(key->v.s.n > 200 ? 200 : key->v.s.n),
				 key->v.s.p);
	case CEL_INT:
		return cel_error(c, "no such key: %lld", (long long)key->v.i);
	case CEL_UINT:
		return cel_error(c, "no such key: %llu", (unsigned long long)key->v.u);
	case CEL_DOUBLE:
		cel_format_double(key->v.d, buf, sizeof(buf));
		return cel_error(c, "no such key: %s", buf);
	case CEL_BOOL:
		return cel_error(c, "no such key: %s", key->v.b ? "true" : "false");
	default:
		return cel_error(c, "no such key");
	}
}

static cel_val do_index(cel_ctx *c, const cel_val *t, const cel_val *i)
{
	if (t->k == CEL_ERROR)
		return *t;
	if (i->k == CEL_ERROR)
		return *i;
	if (t->k == CEL_LIST) {
		int64_t idx;

		if (i->k == CEL_INT) {
			idx = i->v.i;
		} else if (i->k == CEL_UINT) {
			idx = i->v.u > INT64_MAX ? -1 : (int64_t)i->v.u;
		} else if (i->k == CEL_DOUBLE) {
			if (i->v.d != trunc(i->v.d) || fabs(i->v.d) > 9.0e15)
				return cel_error(c, "unsupported index value");
			idx = (int64_t)i->v.d;
		} else {
			return no_overload(c, "_[_]", t, i);
		}
		if (idx < 0 || (uint64_t)idx >= t->v.l->n)
			return cel_error(c, "index out of range: %lld", (long long)idx);
		return t->v.l->items[idx];
	}
	if (t->k == CEL_MAP) {
		bool found;
		cel_val v;

		if (i->k != CEL_STRING && i->k != CEL_INT && i->k != CEL_UINT && i->k != CEL_BOOL &&
		    i->k != CEL_DOUBLE)
			return cel_error(c, "unsupported key type: %s", cel_kind_name(i->k));
		v = map_get(c, t, i, &found);
		return found ? v : key_error(c, i);
	}
	return no_overload(c, "_[_]", t, i);
}

/* ---- functions ---- */

static cel_val to_str_for_semver(cel_ctx *c, const cel_val *v, char *buf, size_t size,
				 const char **s, size_t *n)
{
	switch (v->k) {
	case CEL_STRING:
		*s = v->v.s.p;
		*n = v->v.s.n;
		return v_true;
	case CEL_INT:
		*n = (size_t)snprintf(buf, size, "%lld", (long long)v->v.i);
		break;
	case CEL_UINT:
		*n = (size_t)snprintf(buf, size, "%llu", (unsigned long long)v->v.u);
		break;
	case CEL_DOUBLE:
		*n = cel_format_double(v->v.d, buf, size);
		break;
	case CEL_BOOL:
		*n = (size_t)snprintf(buf, size, "%s", v->v.b ? "true" : "false");
		break;
	default:
		return cel_error(c, "semver_compare: cannot use a %s as a version",
				 cel_kind_name(v->k));
	}
	*s = buf;
	return v_true;
}

static cel_val semver_cmp(cel_ctx *c, const cel_val *a, const cel_val *b)
{
	char ba[64], bb[64];
	const char *sa, *sb;
	size_t na, nb;
	fbc_semver va, vb;
	fbc_error e;
	cel_val r;
	int cmp;

	r = to_str_for_semver(c, a, ba, sizeof(ba), &sa, &na);
	if (r.k == CEL_ERROR)
		return r;
	r = to_str_for_semver(c, b, bb, sizeof(bb), &sb, &nb);
	if (r.k == CEL_ERROR)
		return r;
	fbc_error_init(&e);
	if (fbc_semver_parse_tolerant(&va, sa, na, &e))
		return cel_error(c, "semver_compare: invalid version '%.*s': %s",
				 (int)(na > 100 ? 100 : na), sa, e.message);
	if (fbc_semver_parse_tolerant(&vb, sb, nb, &e))
		return cel_error(c, "semver_compare: invalid version '%.*s': %s",
				 (int)(nb > 100 ? 100 : nb), sb, e.message);
	cmp = fbc_semver_compare(&va, &vb);
	return mkint(cmp < 0 ? -1 : (cmp > 0 ? 1 : 0));
}

static bool memfind(const char *h, size_t hn, const char *n, size_t nn)
{
	size_t i;

	if (nn == 0)
		return true;
	for (i = 0; i + nn <= hn; i++)
		if (h[i] == n[0] && memcmp(h + i, n, nn) == 0)
			return true;
	return false;
}

static cel_val regex_match(cel_ctx *c, const cel_val *s, const cel_val *re)
{
	regex_t rx;
	char *pat, *subj;
	int rc;

	if (s->k != CEL_STRING || re->k != CEL_STRING)
		return no_overload(c, "matches", s, re);
	pat = fbc_arena_strndup(c->a, re->v.s.p, re->v.s.n);
	subj = fbc_arena_strndup(c->a, s->v.s.p, s->v.s.n);
	if (!pat || !subj)
		return oom_error(c);
	if (strlen(pat) != re->v.s.n || strlen(subj) != s->v.s.n)
		return cel_error(c, "matches: NUL byte in string");
	rc = regcomp(&rx, pat, REG_EXTENDED | REG_NOSUB);
	if (rc)
		return cel_error(c, "invalid regular expression '%s'", pat);
	rc = regexec(&rx, subj, 0, NULL, 0);
	regfree(&rx);
	return mkbool(rc == 0);
}

static cel_val parse_int_string(cel_ctx *c, const cel_val *v, bool is_unsigned)
{
	char *s, *end;
	cel_val r;

	s = fbc_arena_strndup(c->a, v->v.s.p, v->v.s.n);
	if (!s)
		return oom_error(c);
	if (!*s || strlen(s) != v->v.s.n || *s == ' ' || *s == '\t' || *s == '\n' ||
	    (is_unsigned && (*s == '-' || *s == '+')))
		return cel_error(c, "cannot convert '%s' to %s", s, is_unsigned ? "uint" : "int");
	errno = 0;
	if (is_unsigned) {
		r.k = CEL_UINT;
		r.v.u = strtoull(s, &end, 10);
	} else {
		r.k = CEL_INT;
		r.v.i = strtoll(s, &end, 10);
	}
	if (*end || errno)
		return cel_error(c, "cannot convert '%s' to %s%s", s, is_unsigned ? "uint" : "int",
				 errno == ERANGE ? ": range error" : "");
	return r;
}

static cel_val convert(cel_ctx *c, const char *f, const cel_val *a)
{
	cel_val r;
	char buf[64];

	if (strcmp(f, "dyn") == 0)
		return *a;
	if (strcmp(f, "type") == 0) {
		r.k = CEL_TYPE;
		r.v.type = a->k == CEL_TYPE ? "type" : cel_kind_name(a->k);
		return r;
	}
	if (strcmp(f, "int") == 0) {
		switch (a->k) {
		case CEL_INT:
			return *a;
		case CEL_UINT:
			if (a->v.u > INT64_MAX)
				return cel_error(c, "range error converting uint to int");
			return mkint((int64_t)a->v.u);
		case CEL_DOUBLE:
			if (isnan(a->v.d) || a->v.d <= -9223372036854775808.0 ||
			    a->v.d >= 9223372036854775808.0)
				return cel_error(c, "range error converting double to int");
			return mkint((int64_t)a->v.d);
		case CEL_STRING:
			return parse_int_string(c, a, false);
		default:
			break;
		}
	} else if (strcmp(f, "uint") == 0) {
		r.k = CEL_UINT;
		switch (a->k) {
		case CEL_UINT:
			return *a;
		case CEL_INT:
			if (a->v.i < 0)
				return cel_error(c, "range error converting int to uint");
			r.v.u = (uint64_t)a->v.i;
			return r;
		case CEL_DOUBLE:
			if (isnan(a->v.d) || a->v.d < 0 || a->v.d >= 18446744073709551616.0)
				return cel_error(c, "range error converting double to uint");
			r.v.u = (uint64_t)a->v.d;
			return r;
		case CEL_STRING:
			return parse_int_string(c, a, true);
		default:
			break;
		}
	} else if (strcmp(f, "double") == 0) {
		r.k = CEL_DOUBLE;
		switch (a->k) {
		case CEL_DOUBLE:
			return *a;
		case CEL_INT:
			r.v.d = (double)a->v.i;
			return r;
		case CEL_UINT:
			r.v.d = (double)a->v.u;
			return r;
		case CEL_STRING: {
			char *s = fbc_arena_strndup(c->a, a->v.s.p, a->v.s.n), *end;

			if (!s)
				return oom_error(c);
			if (!*s || strlen(s) != a->v.s.n || *s == ' ')
				return cel_error(c, "cannot convert '%s' to double", s);
			r.v.d = strtod(s, &end);
			if (*end)
				return cel_error(c, "cannot convert '%s' to double", s);
			return r;
		}
		default:
			break;
		}
	} else if (strcmp(f, "string") == 0) {
		char *p = NULL;
		size_t n;

		switch (a->k) {
		case CEL_STRING:
			return *a;
		case CEL_BYTES:
			if (!cel_utf8_valid(a->v.s.p, a->v.s.n))
				return cel_error(
					c, "invalid UTF-8 in bytes, cannot convert to string");
			r = *a;
			r.k = CEL_STRING;
			return r;
		case CEL_INT:
			n = (size_t)snprintf(buf, sizeof(buf), "%lld", (long long)a->v.i);
			break;
		case CEL_UINT:
			n = (size_t)snprintf(buf, sizeof(buf), "%llu", (unsigned long long)a->v.u);
			break;
		case CEL_DOUBLE:
			n = cel_format_double(a->v.d, buf, sizeof(buf));
			break;
		case CEL_BOOL:
			n = (size_t)snprintf(buf, sizeof(buf), "%s", a->v.b ? "true" : "false");
			break;
		default:
			return no_overload(c, f, a, NULL);
		}
		r = new_str(c, CEL_STRING, n, &p);
		if (r.k != CEL_ERROR)
			memcpy(p, buf, n);
		return r;
	} else if (strcmp(f, "bytes") == 0) {
		if (a->k == CEL_BYTES || a->k == CEL_STRING) {
			r = *a;
			r.k = CEL_BYTES;
			return r;
		}
	} else if (strcmp(f, "bool") == 0) {
		static const char *const t[] = {"1", "t", "T", "TRUE", "true", "True"};
		static const char *const fl[] = {"0", "f", "F", "FALSE", "false", "False"};
		size_t i;

		if (a->k == CEL_BOOL)
			return *a;
		if (a->k == CEL_STRING) {
			for (i = 0; i < 6; i++) {
				if (strlen(t[i]) == a->v.s.n &&
				    memcmp(t[i], a->v.s.p, a->v.s.n) == 0)
					return v_true;
				if (strlen(fl[i]) == a->v.s.n &&
				    memcmp(fl[i], a->v.s.p, a->v.s.n) == 0)
					return v_false;
			}
			return cel_error(c, "cannot convert string to bool");
		}
	}
	return no_overload(c, f, a, NULL);
}

static cel_val call(cel_ctx *c, const cel_node *n, const struct escope *sc)
{
	cel_val args[4];
	cel_val tv = {.k = CEL_NULL};
	const char *f = n->name;
	size_t i, na = n->nargs;

	if (na > 3)
		return cel_error(c, "unbound function '%s'", f);
	if (n->target) {
		tv = eval(c, n->target, sc);
		if (tv.k == CEL_ERROR)
			return tv;
	}
	for (i = 0; i < na; i++) {
		args[i] = eval(c, n->args[i], sc);
		if (args[i].k == CEL_ERROR)
			return args[i];
	}
	if (strcmp(f, "size") == 0 && ((n->target && na == 0) || (!n->target && na == 1))) {
		const cel_val *x = n->target ? &tv : &args[0];

		switch (x->k) {
		case CEL_STRING:
			return mkint((int64_t)cel_utf8_count(x->v.s.p, x->v.s.n));
		case CEL_BYTES:
			return mkint((int64_t)x->v.s.n);
		case CEL_LIST:
			return mkint((int64_t)x->v.l->n);
		case CEL_MAP:
			return mkint((int64_t)x->v.m->n);
		default:
			return no_overload(c, "size", x, NULL);
		}
	}
	if (n->target && na == 1 &&
	    (strcmp(f, "contains") == 0 || strcmp(f, "startsWith") == 0 ||
	     strcmp(f, "endsWith") == 0)) {
		const cel_val *s = &tv, *x = &args[0];

		if (s->k != CEL_STRING || x->k != CEL_STRING)
			return no_overload(c, f, s, x);
		if (f[0] == 'c')
			return mkbool(memfind(s->v.s.p, s->v.s.n, x->v.s.p, x->v.s.n));
		if (x->v.s.n > s->v.s.n)
			return v_false;
		if (f[0] == 's')
			return mkbool(memcmp(s->v.s.p, x->v.s.p, x->v.s.n) == 0);
		return mkbool(memcmp(s->v.s.p + s->v.s.n - x->v.s.n, x->v.s.p, x->v.s.n) == 0);
	}
	if (strcmp(f, "matches") == 0) {
		if (n->target && na == 1)
			return regex_match(c, &tv, &args[0]);
		if (!n->target && na == 2)
			return regex_match(c, &args[0], &args[1]);
	}
	if (strcmp(f, "semver_compare") == 0 && !n->target && na == 2)
		return semver_cmp(c, &args[0], &args[1]);
	if (!n->target && na == 1) {
		static const char *const conv[] = {"int",   "uint", "double", "string",
						   "bytes", "bool", "dyn",    "type"};

		for (i = 0; i < sizeof(conv) / sizeof(conv[0]); i++)
			if (strcmp(f, conv[i]) == 0)
				return convert(c, f, &args[0]);
	}
	return cel_error(c, "unbound function '%s' (no matching overload)", f);
}

/* ---- logic ---- */

/* CEL's commutative &&: false wins over errors, errors over true. */
static cel_val logic_and(cel_ctx *c, const cel_val *a, const cel_val *b)
{
	if ((a->k == CEL_BOOL && !a->v.b) || (b->k == CEL_BOOL && !b->v.b))
		return v_false;
	if (a->k == CEL_ERROR)
		return *a;
	if (b->k == CEL_ERROR)
		return *b;
	if (a->k != CEL_BOOL)
		return no_overload(c, "_&&_", a, b);
	if (b->k != CEL_BOOL)
		return no_overload(c, "_&&_", a, b);
	return v_true;
}

static cel_val logic_or(cel_ctx *c, const cel_val *a, const cel_val *b)
{
	if ((a->k == CEL_BOOL && a->v.b) || (b->k == CEL_BOOL && b->v.b))
		return v_true;
	if (a->k == CEL_ERROR)
		return *a;
	if (b->k == CEL_ERROR)
		return *b;
	if (a->k != CEL_BOOL || b->k != CEL_BOOL)
		return no_overload(c, "_||_", a, b);
	return v_false;
}

static cel_val comprehension(cel_ctx *c, const cel_node *n, const struct escope *sc)
{
	cel_val range = eval(c, n->target, sc);
	const cel_val *elems;
	size_t count, i, nout = 0;
	struct escope inner;
	cel_val acc, *out = NULL, res;
	int64_t matches = 0;

	if (range.k == CEL_ERROR)
		return range;
	if (range.k == CEL_LIST) {
		elems = range.v.l->items;
		count = range.v.l->n;
	} else if (range.k == CEL_MAP) {
		elems = range.v.m->keys;
		count = range.v.m->n;
	} else {
		return cel_error(c, "cannot iterate over a %s", cel_kind_name(range.k));
	}
	inner.up = sc;
	inner.name = n->name;
	acc = n->op == C_ALL ? v_true : v_false;
	if (n->op == C_MAP || n->op == C_MAP3 || n->op == C_FILTER) {
		res = new_list(c, count, &out);
		if (res.k == CEL_ERROR)
			return res;
	}
	for (i = 0; i < count; i++) {
		cel_val v;

		if (++c->steps > FBC_CEL_MAX_STEPS)
			return limit_error(c, "evaluation exceeded the step limit");
		if (n->op == C_ALL && acc.k == CEL_BOOL && !acc.v.b)
			break;
		if (n->op == C_EXISTS && acc.k == CEL_BOOL && acc.v.b)
			break;
		inner.v = elems[i];
		v = eval(c, n->args[0], &inner);
		switch (n->op) {
		case C_ALL:
			acc = logic_and(c, &acc, &v);
			break;
		case C_EXISTS:
			acc = logic_or(c, &acc, &v);
			break;
		case C_EXISTS_ONE:
			if (v.k == CEL_ERROR)
				return v;
			if (v.k != CEL_BOOL)
				return no_overload(c, "exists_one", &v, NULL);
			matches += v.v.b;
			break;
		case C_MAP:
			if (v.k == CEL_ERROR)
				return v;
			out[nout++] = v;
			break;
		case C_MAP3:
		case C_FILTER:
			if (v.k == CEL_ERROR)
				return v;
			if (v.k != CEL_BOOL)
				return no_overload(c, "filter", &v, NULL);
			if (!v.v.b)
				break;
			if (n->op == C_FILTER) {
				out[nout++] = elems[i];
			} else {
				cel_val t = eval(c, n->args[1], &inner);

				if (t.k == CEL_ERROR)
					return t;
				out[nout++] = t;
			}
			break;
		default:
			break;
		}
	}
	switch (n->op) {
	case C_ALL:
	case C_EXISTS:
		return acc;
	case C_EXISTS_ONE:
		return mkbool(matches == 1);
	default: {
		/* shrink to the elements kept; the list struct is ours */
		struct cel_list *l = (struct cel_list *)res.v.l;

		l->n = nout;
		return res;
	}
	}
}

static const char *const type_idents[] = {"int",   "uint", "double", "bool",	  "string",
					  "bytes", "list", "map",    "null_type", "type"};

static cel_val eval(cel_ctx *c, const cel_node *n, const struct escope *sc)
{
	cel_val a, b;
	size_t i;

	if (++c->steps > FBC_CEL_MAX_STEPS)
		return limit_error(c, "evaluation exceeded the step limit");
	switch (n->kind) {
	case N_LIT:
		return n->lit;
	case N_IDENT: {
		const struct escope *s;

		for (s = sc; s; s = s->up)
			if (strcmp(s->name, n->name) == 0)
				return s->v;
		for (i = 0; i < c->prog->nvars; i++)
			if (strcmp(c->prog->var_names[i], n->name) == 0)
				return c->vars[i];
		for (i = 0; i < sizeof(type_idents) / sizeof(type_idents[0]); i++)
			if (strcmp(type_idents[i], n->name) == 0) {
				a.k = CEL_TYPE;
				a.v.type = type_idents[i];
				return a;
			}
		return cel_error(c, "undeclared reference to '%s'", n->name);
	}
	case N_SELECT:
	case N_HAS: {
		cel_val key = {.k = CEL_STRING};
		bool found;

		a = eval(c, n->target, sc);
		if (a.k == CEL_ERROR)
			return a;
		if (a.k != CEL_MAP)
			return cel_error(c, "type '%s' does not support field selection",
					 cel_kind_name(a.k));
		key.v.s.p = n->name;
		key.v.s.n = strlen(n->name);
		b = map_get(c, &a, &key, &found);
		if (n->kind == N_HAS)
			return mkbool(found);
		return found ? b : key_error(c, &key);
	}
	case N_INDEX:
		a = eval(c, n->args[0], sc);
		if (a.k == CEL_ERROR)
			return a;
		b = eval(c, n->args[1], sc);
		return do_index(c, &a, &b);
	case N_CALL:
		return call(c, n, sc);
	case N_LIST: {
		cel_val *items;
		cel_val l = new_list(c, n->nargs, &items);

		if (l.k == CEL_ERROR)
			return l;
		for (i = 0; i < n->nargs; i++) {
			items[i] = eval(c, n->args[i], sc);
			if (items[i].k == CEL_ERROR)
				return items[i];
		}
		return l;
	}
	case N_MAP: {
		struct cel_map *m = fbc_arena_alloc(c->a, sizeof(*m));
		size_t cnt = n->nargs / 2, j;
		cel_val *keys = cnt ? fbc_arena_calloc(c->a, cnt, sizeof(cel_val)) : NULL;
		cel_val *vals = cnt ? fbc_arena_calloc(c->a, cnt, sizeof(cel_val)) : NULL;

		if (!mem_ok(c))
			return limit_error(c, "evaluation exceeded the memory limit");
		if (!m || (cnt && (!keys || !vals)))
			return oom_error(c);
		for (i = 0; i < cnt; i++) {
			keys[i] = eval(c, n->args[2 * i], sc);
			if (keys[i].k == CEL_ERROR)
				return keys[i];
			if (keys[i].k != CEL_STRING && keys[i].k != CEL_INT &&
			    keys[i].k != CEL_UINT && keys[i].k != CEL_BOOL)
				return cel_error(c, "unsupported key type: %s",
						 cel_kind_name(keys[i].k));
			for (j = 0; j < i; j++)
				if (cel_equal(&keys[j], &keys[i]))
					return cel_error(c, "Failed with repeated key");
			vals[i] = eval(c, n->args[2 * i + 1], sc);
			if (vals[i].k == CEL_ERROR)
				return vals[i];
		}
		m->n = cnt;
		m->keys = keys;
		m->vals = vals;
		a.k = CEL_MAP;
		a.v.m = m;
		return a;
	}
	case N_COND:
		a = eval(c, n->args[0], sc);
		if (a.k == CEL_ERROR)
			return a;
		if (a.k != CEL_BOOL)
			return no_overload(c, "_?_:_", &a, NULL);
		return eval(c, n->args[a.v.b ? 1 : 2], sc);
	case N_AND:
		a = eval(c, n->args[0], sc);
		if (a.k == CEL_BOOL && !a.v.b)
			return v_false;
		b = eval(c, n->args[1], sc);
		return logic_and(c, &a, &b);
	case N_OR:
		a = eval(c, n->args[0], sc);
		if (a.k == CEL_BOOL && a.v.b)
			return v_true;
		b = eval(c, n->args[1], sc);
		return logic_or(c, &a, &b);
	case N_NOT:
		a = eval(c, n->args[0], sc);
		if (a.k == CEL_ERROR)
			return a;
		if (a.k != CEL_BOOL)
			return no_overload(c, "!_", &a, NULL);
		return mkbool(!a.v.b);
	case N_NEG:
		a = eval(c, n->args[0], sc);
		if (a.k == CEL_ERROR)
			return a;
		if (a.k == CEL_INT) {
			if (a.v.i == INT64_MIN)
				return cel_error(c, "integer overflow");
			return mkint(-a.v.i);
		}
		if (a.k == CEL_DOUBLE) {
			a.v.d = -a.v.d;
			return a;
		}
		return no_overload(c, "-_", &a, NULL);
	case N_BINOP:
		a = eval(c, n->args[0], sc);
		b = eval(c, n->args[1], sc);
		return binop(c, n->op, &a, &b);
	case N_COMPR:
		return comprehension(c, n, sc);
	}
	return cel_error(c, "internal error: unknown node");
}

cel_val cel_eval(cel_ctx *c, const cel_node *n)
{
	return eval(c, n, NULL);
}
