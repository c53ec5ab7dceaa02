/*
 * CEL values: errors, JSON mappings, heterogeneous equality and ordering
 * (cel-go semantics: numbers compare by value across int, uint and double),
 * and Go-compatible double formatting.
 */
#include "service/cel/cel_int.h"
#include "service/base/utf8.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define JSON_MAX_DEPTH 64

cel_val cel_error(cel_ctx *c, const char *fmt, ...)
{
	cel_val v = {.k = CEL_ERROR};
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	v.v.err = fbc_arena_strdup(c->a, msg);
	if (!v.v.err) {
		c->oom = true;
		v.v.err = "out of memory";
	}
	return v;
}

const char *cel_kind_name(cel_kind k)
{
	switch (k) {
	case CEL_NULL:
		return "null_type";
	case CEL_BOOL:
		return "bool";
	case CEL_INT:
		return "int";
	case CEL_UINT:
		return "uint";
	case CEL_DOUBLE:
		return "double";
	case CEL_STRING:
		return "string";
	case CEL_BYTES:
		return "bytes";
	case CEL_LIST:
		return "list";
	case CEL_MAP:
		return "map";
	case CEL_TYPE:
		return "type";
	case CEL_ERROR:
		return "error";
	}
	return "?";
}

bool cel_utf8_valid(const char *s, size_t n)
{
	return fbc_utf8_valid(s, n);
}

size_t cel_utf8_count(const char *s, size_t n)
{
	size_t i, c = 0;

	for (i = 0; i < n; i++)
		if (((unsigned char)s[i] & 0xC0) != 0x80)
			c++;
	return c;
}

static cel_val mklist(cel_ctx *c, size_t n, cel_val **items)
{
	struct cel_list *l = fbc_arena_alloc(c->a, sizeof(*l));
	cel_val v = {.k = CEL_LIST};

	*items = n ? fbc_arena_calloc(c->a, n, sizeof(cel_val)) : NULL;
	if (!l || (n && !*items)) {
		c->oom = true;
		return (cel_val){.k = CEL_ERROR, .v.err = "out of memory"};
	}
	l->n = n;
	l->items = *items;
	v.v.l = l;
	return v;
}

static cel_val mkmap(cel_ctx *c, size_t n, cel_val **keys, cel_val **vals)
{
	struct cel_map *m = fbc_arena_alloc(c->a, sizeof(*m));
	cel_val v = {.k = CEL_MAP};

	*keys = n ? fbc_arena_calloc(c->a, n, sizeof(cel_val)) : NULL;
	*vals = n ? fbc_arena_calloc(c->a, n, sizeof(cel_val)) : NULL;
	if (!m || (n && (!*keys || !*vals))) {
		c->oom = true;
		return (cel_val){.k = CEL_ERROR, .v.err = "out of memory"};
	}
	m->n = n;
	m->keys = *keys;
	m->vals = *vals;
	v.v.m = m;
	return v;
}

cel_val cel_from_json(cel_ctx *c, const json_t *j, int depth)
{
	cel_val v = {.k = CEL_NULL};

	if (depth > JSON_MAX_DEPTH)
		return cel_error(c, "JSON value nested too deeply");
	switch (json_typeof(j)) {
	case JSON_NULL:
		break;
	case JSON_TRUE:
	case JSON_FALSE:
		v.k = CEL_BOOL;
		v.v.b = json_is_true(j);
		break;
	case JSON_INTEGER:
		v.k = CEL_DOUBLE;
		v.v.d = (double)json_integer_value(j);
		break;
	case JSON_REAL:
		v.k = CEL_DOUBLE;
		v.v.d = json_real_value(j);
		break;
	case JSON_STRING:
		v.k = CEL_STRING;
		v.v.s.p = json_string_value(j);
		v.v.s.n = json_string_length(j);
		break;
	case JSON_ARRAY: {
		cel_val *items;
		size_t i;

		v = mklist(c, json_array_size(j), &items);
		if (v.k == CEL_ERROR)
			return v;
		for (i = 0; i < json_array_size(j); i++) {
			items[i] = cel_from_json(c, json_array_get(j, i), depth + 1);
			if (items[i].k == CEL_ERROR)
				return items[i];
		}
		break;
	}
	case JSON_OBJECT: {
		cel_val *keys, *vals;
		const char *k;
		json_t *x;
		size_t i = 0;

		v = mkmap(c, json_object_size(j), &keys, &vals);
		if (v.k == CEL_ERROR)
			return v;
		json_object_foreach((json_t *)j, k, x)
		{
			keys[i].k = CEL_STRING;
			keys[i].v.s.p = k;
			keys[i].v.s.n = strlen(k);
			vals[i] = cel_from_json(c, x, depth + 1);
			if (vals[i].k == CEL_ERROR)
				return vals[i];
			i++;
		}
		break;
	}
	}
	return v;
}

/* ---- base64 (proto JSON bytes) ---- */

static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

static int b64val(int ch)
{
	if (ch >= 'A' && ch <= 'Z')
		return ch - 'A';
	if (ch >= 'a' && ch <= 'z')
		return ch - 'a' + 26;
	if (ch >= '0' && ch <= '9')
		return ch - '0' + 52;
	if (ch == '+' || ch == '-')
		return 62;
	if (ch == '/' || ch == '_')
		return 63;
	return -1;
}

static cel_val from_base64(cel_ctx *c, const char *s, size_t n)
{
	char *o = fbc_arena_alloc(c->a, n + 1);
	size_t i, on = 0;
	uint32_t acc = 0;
	int bits = 0;
	cel_val v = {.k = CEL_BYTES};

	if (!o) {
		c->oom = true;
		return (cel_val){.k = CEL_ERROR, .v.err = "out of memory"};
	}
	for (i = 0; i < n; i++) {
		int x;

		if (s[i] == '=')
			break;
		x = b64val((unsigned char)s[i]);
		if (x < 0)
			return cel_error(c, "invalid base64 in bytesValue");
		acc = (acc << 6) | (uint32_t)x;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			o[on++] = (char)((acc >> bits) & 0xFF);
		}
	}
	v.v.s.p = o;
	v.v.s.n = on;
	return v;
}

static json_t *to_base64(const char *s, size_t n)
{
	size_t i, on = 0;
	char *o = malloc((n + 2) / 3 * 4 + 1);
	json_t *j;

	if (!o)
		return NULL;
	for (i = 0; i < n; i += 3) {
		uint32_t x = (uint32_t)(unsigned char)s[i] << 16;

		if (i + 1 < n)
			x |= (uint32_t)(unsigned char)s[i + 1] << 8;
		if (i + 2 < n)
			x |= (uint32_t)(unsigned char)s[i + 2];
		o[on++] = b64[(x >> 18) & 63];
		o[on++] = b64[(x >> 12) & 63];
		o[on++] = i + 1 < n ? b64[(x >> 6) & 63] : '=';
		o[on++] = i + 2 < n ? b64[x & 63] : '=';
	}
	o[on] = '\0';
	j = json_stringn(o, on);
	free(o);
	return j;
}

static bool parse_i64(const json_t *j, int64_t *out)
{
	if (json_is_integer(j)) {
		*out = json_integer_value(j);
		return true;
	}
	if (json_is_string(j)) {
		char *end;
		const char *s = json_string_value(j);

		if (!*s)
			return false;
		*out = strtoll(s, &end, 10);
		return *end == '\0';
	}
	return false;
}

static bool parse_u64(const json_t *j, uint64_t *out)
{
	if (json_is_integer(j) && json_integer_value(j) >= 0) {
		*out = (uint64_t)json_integer_value(j);
		return true;
	}
	if (json_is_string(j)) {
		char *end;
		const char *s = json_string_value(j);

		if (!*s || *s == '-')
			return false;
		*out = strtoull(s, &end, 10);
		return *end == '\0';
	}
	return false;
}

cel_val cel_from_proto_json(cel_ctx *c, const json_t *j, int depth)
{
	cel_val v = {.k = CEL_NULL};
	const json_t *x;

	if (depth > JSON_MAX_DEPTH)
		return cel_error(c, "value nested too deeply");
	if (!json_is_object(j))
		return cel_error(c, "value must be an object");
	if ((x = json_object_get(j, "nullValue")) != NULL) {
		return v;
	} else if ((x = json_object_get(j, "boolValue")) != NULL) {
		v.k = CEL_BOOL;
		v.v.b = json_is_true(x);
	} else if ((x = json_object_get(j, "int64Value")) != NULL) {
		v.k = CEL_INT;
		if (!parse_i64(x, &v.v.i))
			return cel_error(c, "bad int64Value");
	} else if ((x = json_object_get(j, "uint64Value")) != NULL) {
		v.k = CEL_UINT;
		if (!parse_u64(x, &v.v.u))
			return cel_error(c, "bad uint64Value");
	} else if ((x = json_object_get(j, "doubleValue")) != NULL) {
		v.k = CEL_DOUBLE;
		if (json_is_number(x)) {
			v.v.d = json_number_value(x);
		} else if (json_is_string(x)) {
			const char *s = json_string_value(x);

			if (strcmp(s, "NaN") == 0)
				v.v.d = NAN;
			else if (strcmp(s, "Infinity") == 0)
				v.v.d = INFINITY;
			else if (strcmp(s, "-Infinity") == 0)
				v.v.d = -INFINITY;
			else
				v.v.d = strtod(s, NULL);
		} else {
			return cel_error(c, "bad doubleValue");
		}
	} else if ((x = json_object_get(j, "stringValue")) != NULL) {
		if (!json_is_string(x))
			return cel_error(c, "bad stringValue");
		v.k = CEL_STRING;
		v.v.s.p = json_string_value(x);
		v.v.s.n = json_string_length(x);
	} else if ((x = json_object_get(j, "bytesValue")) != NULL) {
		if (!json_is_string(x))
			return cel_error(c, "bad bytesValue");
		return from_base64(c, json_string_value(x), json_string_length(x));
	} else if ((x = json_object_get(j, "typeValue")) != NULL) {
		if (!json_is_string(x))
			return cel_error(c, "bad typeValue");
		v.k = CEL_TYPE;
		v.v.type = json_string_value(x);
	} else if ((x = json_object_get(j, "listValue")) != NULL) {
		const json_t *vals = json_object_get(x, "values");
		size_t n = json_is_array(vals) ? json_array_size(vals) : 0, i;
		cel_val *items;

		v = mklist(c, n, &items);
		if (v.k == CEL_ERROR)
			return v;
		for (i = 0; i < n; i++) {
			items[i] = cel_from_proto_json(c, json_array_get(vals, i), depth + 1);
			if (items[i].k == CEL_ERROR)
				return items[i];
		}
	} else if ((x = json_object_get(j, "mapValue")) != NULL) {
		const json_t *ents = json_object_get(x, "entries");
		size_t n = json_is_array(ents) ? json_array_size(ents) : 0, i;
		cel_val *keys, *vals;

		v = mkmap(c, n, &keys, &vals);
		if (v.k == CEL_ERROR)
			return v;
		for (i = 0; i < n; i++) {
			const json_t *e = json_array_get(ents, i);

			keys[i] = cel_from_proto_json(c, json_object_get(e, "key"), depth + 1);
			if (keys[i].k == CEL_ERROR)
				return keys[i];
			vals[i] = cel_from_proto_json(c, json_object_get(e, "value"), depth + 1);
			if (vals[i].k == CEL_ERROR)
				return vals[i];
		}
	} else {
		return cel_error(c, "unsupported value kind");
	}
	return v;
}

json_t *cel_to_proto_json(const cel_val *v)
{
	char buf[64];
	json_t *inner = NULL;
	const char *key = NULL;
	json_t *out;
	size_t i;

	switch (v->k) {
	case CEL_NULL:
		key = "nullValue";
		inner = json_null();
		break;
	case CEL_BOOL:
		key = "boolValue";
		inner = json_boolean(v->v.b);
		break;
	case CEL_INT:
		key = "int64Value";
		snprintf(buf, sizeof(buf), "%lld", (long long)v->v.i);
		inner = json_string(buf);
		break;
	case CEL_UINT:
		key = "uint64Value";
		snprintf(buf, sizeof(buf), "%llu", (unsigned long long)v->v.u);
		inner = json_string(buf);
		break;
	case CEL_DOUBLE:
		key = "doubleValue";
		if (isnan(v->v.d))
			inner = json_string("NaN");
		else if (isinf(v->v.d))
			inner = json_string(v->v.d > 0 ? "Infinity" : "-Infinity");
		else
			inner = json_real(v->v.d);
		break;
	case CEL_STRING:
		key = "stringValue";
		inner = json_stringn(v->v.s.p, v->v.s.n);
		break;
	case CEL_BYTES:
		key = "bytesValue";
		inner = to_base64(v->v.s.p, v->v.s.n);
		break;
	case CEL_TYPE:
		key = "typeValue";
		inner = json_string(v->v.type);
		break;
	case CEL_LIST: {
		json_t *arr = json_array();

		key = "listValue";
		inner = json_object();
		if (!arr || !inner || json_object_set_new(inner, "values", arr)) {
			json_decref(inner);
			return NULL;
		}
		for (i = 0; i < v->v.l->n; i++)
			if (json_array_append_new(arr, cel_to_proto_json(&v->v.l->items[i]))) {
				json_decref(inner);
				return NULL;
			}
		break;
	}
	case CEL_MAP: {
		json_t *arr = json_array();

		key = "mapValue";
		inner = json_object();
		if (!arr || !inner || json_object_set_new(inner, "entries", arr)) {
			json_decref(inner);
			return NULL;
		}
		for (i = 0; i < v->v.m->n; i++) {
			json_t *e =
				json_pack("{s:o?,s:o?}", "key", cel_to_proto_json(&v->v.m->keys[i]),
					  "value", cel_to_proto_json(&v->v.m->vals[i]));

			if (!e || json_array_append_new(arr, e)) {
				json_decref(inner);
				return NULL;
			}
		}
		break;
	}
	case CEL_ERROR:
		return NULL;
	}
	if (!inner)
		return NULL;
	out = json_object();
	if (!out || json_object_set_new(out, key, inner)) {
		json_decref(out);
		return NULL;
	}
	return out;
}

/* ---- equality and ordering ---- */

static bool is_num(cel_kind k)
{
	return k == CEL_INT || k == CEL_UINT || k == CEL_DOUBLE;
}

/* Exact comparison of numbers of any kind; false when unordered (NaN). */
static bool num_cmp(const cel_val *a, const cel_val *b, int *cmp)
{
	if (a->k == CEL_DOUBLE || b->k == CEL_DOUBLE) {
		if (a->k == CEL_DOUBLE && b->k == CEL_DOUBLE) {
			if (isnan(a->v.d) || isnan(b->v.d))
				return false;
			*cmp = a->v.d < b->v.d ? -1 : (a->v.d > b->v.d ? 1 : 0);
			return true;
		}
		if (a->k == CEL_DOUBLE) {
			/* compare with roles swapped */
			if (!num_cmp(b, a, cmp))
				return false;
			*cmp = -*cmp;
			return true;
		}
		/* a is int or uint, b is double: as cel-go's compareIntDouble and
		 * compareUintDouble, doubles beyond the integer range are beyond
		 * every integer, otherwise the integer is converted to double
		 * (lossy near 2^63, as cel-go is). */
		if (isnan(b->v.d))
			return false;
		if (a->k == CEL_INT) {
			double ad;

			if (b->v.d < -9223372036854775808.0) {
				*cmp = 1;
				return true;
			}
			if (b->v.d > 9223372036854775808.0) {
				*cmp = -1;
				return true;
			}
			ad = (double)a->v.i;
			*cmp = ad < b->v.d ? -1 : (ad > b->v.d ? 1 : 0);
			return true;
		}
		{
			double ad;

			if (b->v.d < 0) {
				*cmp = 1;
				return true;
			}
			if (b->v.d > 18446744073709551616.0) {
				*cmp = -1;
				return true;
			}
			ad = (double)a->v.u;
			*cmp = ad < b->v.d ? -1 : (ad > b->v.d ? 1 : 0);
		}
		return true;
	}
	if (a->k == CEL_INT && b->k == CEL_INT) {
		*cmp = a->v.i < b->v.i ? -1 : (a->v.i > b->v.i ? 1 : 0);
	} else if (a->k == CEL_UINT && b->k == CEL_UINT) {
		*cmp = a->v.u < b->v.u ? -1 : (a->v.u > b->v.u ? 1 : 0);
	} else if (a->k == CEL_INT) { /* int vs uint */
		if (a->v.i < 0)
			*cmp = -1;
		else
			*cmp = (uint64_t)a->v.i < b->v.u ? -1 : ((uint64_t)a->v.i > b->v.u ? 1 : 0);
	} else {
		if (b->v.i < 0)
			*cmp = 1;
		else
			*cmp = a->v.u < (uint64_t)b->v.i ? -1 : (a->v.u > (uint64_t)b->v.i ? 1 : 0);
	}
	return true;
}

static int bytes_cmp(const cel_val *a, const cel_val *b)
{
	size_t n = a->v.s.n < b->v.s.n ? a->v.s.n : b->v.s.n;
	int r = n ? memcmp(a->v.s.p, b->v.s.p, n) : 0;

	if (r)
		return r < 0 ? -1 : 1;
	return a->v.s.n < b->v.s.n ? -1 : (a->v.s.n > b->v.s.n ? 1 : 0);
}

bool cel_compare(const cel_val *a, const cel_val *b, int *cmp)
{
	if (is_num(a->k) && is_num(b->k)) {
		if (!num_cmp(a, b, cmp))
			*cmp = 2;
		return true;
	}
	if (a->k != b->k)
		return false;
	switch (a->k) {
	case CEL_STRING:
	case CEL_BYTES:
		*cmp = bytes_cmp(a, b);
		return true;
	case CEL_BOOL:
		*cmp = (int)a->v.b - (int)b->v.b;
		return true;
	default:
		return false;
	}
}

bool cel_equal(const cel_val *a, const cel_val *b)
{
	size_t i, j;
	int cmp;

	if (is_num(a->k) && is_num(b->k))
		return num_cmp(a, b, &cmp) && cmp == 0;
	if (a->k != b->k)
		return false;
	switch (a->k) {
	case CEL_NULL:
		return true;
	case CEL_BOOL:
		return a->v.b == b->v.b;
	case CEL_STRING:
	case CEL_BYTES:
		return a->v.s.n == b->v.s.n && memcmp(a->v.s.p, b->v.s.p, a->v.s.n) == 0;
	case CEL_TYPE:
		return strcmp(a->v.type, b->v.type) == 0;
	case CEL_LIST:
		if (a->v.l->n != b->v.l->n)
			return false;
		for (i = 0; i < a->v.l->n; i++)
			if (!cel_equal(&a->v.l->items[i], &b->v.l->items[i]))
				return false;
		return true;
	case CEL_MAP:
		if (a->v.m->n != b->v.m->n)
			return false;
		for (i = 0; i < a->v.m->n; i++) {
			for (j = 0; j < b->v.m->n; j++)
				if (cel_equal(&a->v.m->keys[i], &b->v.m->keys[j]))
					break;
			if (j == b->v.m->n || !cel_equal(&a->v.m->vals[i], &b->v.m->vals[j]))
				return false;
		}
		return true;
	default:
		return false;
	}
}

/* ---- Go %g formatting ---- */

size_t cel_format_double(double d, char *buf, size_t size)
{
	char tmp[64], digits[32];
	int prec, exp, nd = 0, i;
	char *e;
	size_t n = 0;
	char out[64];

	if (isnan(d))
		return (size_t)snprintf(buf, size, "NaN");
	if (isinf(d))
		return (size_t)snprintf(buf, size, d > 0 ? "+Inf" : "-Inf");
	if (d == 0)
		return (size_t)snprintf(buf, size, signbit(d) ? "-0" : "0");
	/* shortest round-trip precision */
	for (prec = 1; prec <= 17; prec++) {
		snprintf(tmp, sizeof(tmp), "%.*e", prec - 1, d);
		if (strtod(tmp, NULL) == d)
			break;
	}
	/* tmp = [-]D.DDDDe[+-]XX */
	e = strchr(tmp, 'e');
	exp = (int)strtol(e + 1, NULL, 10);
	for (i = 0; tmp + i < e; i++)
		if (tmp[i] >= '0' && tmp[i] <= '9')
			digits[nd++] = tmp[i];
	while (nd > 1 && digits[nd - 1] == '0')
		nd--;
	if (d < 0)
		out[n++] = '-';
	if (exp < -4 || exp >= 6) {
		/* strconv 'g' with shortest precision switches to the %e form
		 * at the same exponents as precision 6 would. */
		out[n++] = digits[0];
		if (nd > 1) {
			out[n++] = '.';
			for (i = 1; i < nd; i++)
				out[n++] = digits[i];
		}
		n += (size_t)snprintf(out + n, sizeof(out) - n, "e%c%02d", exp < 0 ? '-' : '+',
				      exp < 0 ? -exp : exp);
	} else if (exp < 0) {
		out[n++] = '0';
		out[n++] = '.';
		for (i = -1; i > exp; i--)
			out[n++] = '0';
		for (i = 0; i < nd; i++)
			out[n++] = digits[i];
	} else {
		for (i = 0; i <= exp; i++)
			out[n++] = i < nd ? digits[i] : '0';
		if (nd > exp + 1) {
			out[n++] = '.';
			for (i = exp + 1; i < nd; i++)
				out[n++] = digits[i];
		}
	}
	out[n] = '\0';
	return (size_t)snprintf(buf, size, "%s", out);
}
