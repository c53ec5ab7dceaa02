/* Go encoding/json byte rules; see gojson.h. */
#include "service/gojson/gojson.h"

#include "service/base/error.h"
#include "service/base/utf8.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int fbc_gojson_string(fbc_buf *b, const char *s, size_t n, bool html)
{
	static const char hex[] = "0123456789abcdef";
	size_t i = 0, start = 0;
	int rc;

	if ((rc = fbc_buf_putc(b, '"')))
		return rc;
	while (i < n) {
		unsigned char c = (unsigned char)s[i];
		char esc[7];
		size_t elen = 2, adv = 1;

		if (c >= 0x80) {
			uint32_t cp = 0;
			size_t k = fbc_utf8_decode(&cp, (const unsigned char *)s + i, n - i);

			if (k > 0 && cp != 0x2028 && cp != 0x2029) {
				i += k;
				continue;
			}
			if ((rc = fbc_buf_append(b, s + start, i - start)))
				return rc;
			if (k == 0) {
				rc = fbc_buf_append(b, "\\ufffd", 6);
				i++;
			} else {
				rc = fbc_buf_append(b, cp == 0x2028 ? "\\u2028" : "\\u2029", 6);
				i += k;
			}
			if (rc)
				return rc;
			start = i;
			continue;
		}
		if (c >= 0x20 && c != '"' && c != '\\' &&
		    !(html && (c == '<' || c == '>' || c == '&'))) {
			i++;
			continue;
		}
		if ((rc = fbc_buf_append(b, s + start, i - start)))
			return rc;
		esc[0] = '\\';
		switch (c) {
		case '"':
			esc[1] = '"';
			break;
		case '\\':
			esc[1] = '\\';
			break;
		case '\n':
			esc[1] = 'n';
			break;
		case '\r':
			esc[1] = 'r';
			break;
		case '\t':
			esc[1] = 't';
			break;
		case '\b':
			esc[1] = 'b';
			break;
		case '\f':
			esc[1] = 'f';
			break;
		default:
			esc[1] = 'u';
			esc[2] = '0';
			esc[3] = '0';
			esc[4] = hex[c >> 4];
			esc[5] = hex[c & 15];
			elen = 6;
			break;
		}
		if ((rc = fbc_buf_append(b, esc, elen)))
			return rc;
		i += adv;
		start = i;
	}
	if ((rc = fbc_buf_append(b, s + start, n - start)))
		return rc;
	return fbc_buf_putc(b, '"');
}

/* Shortest digits that round-trip: digits[] without the point, *exp10 the
 * decimal exponent of the first digit (d.ddd x 10^exp10). */
static size_t shortest_digits(double f, char *digits, size_t size, int *exp10)
{
	char tmp[40];
	size_t nd = 0;
	const char *e;

	for (int prec = 1; prec <= 17; prec++) {
		snprintf(tmp, sizeof(tmp), "%.*e", prec - 1, f);
		if (strtod(tmp, NULL) == f)
			break;
	}
	for (const char *p = tmp; *p && *p != 'e'; p++)
		if (*p >= '0' && *p <= '9' && nd + 1 < size)
			digits[nd++] = *p;
	digits[nd] = 0;
	while (nd > 1 && digits[nd - 1] == '0')
		digits[--nd] = 0;
	e = strchr(tmp, 'e');
	*exp10 = e ? (int)strtol(e + 1, NULL, 10) : 0;
	return nd;
}

int fbc_gojson_number(fbc_buf *b, double f)
{
	char digits[32];
	int exp10, rc;
	size_t nd;
	double a = fabs(f);

	if (!isfinite(f))
		return fbc_buf_puts(b, "null"); /* Go fails; callers never pass these */
	if (a == 0)
		return fbc_buf_puts(b, signbit(f) ? "-0" : "0");
	if (signbit(f) && (rc = fbc_buf_putc(b, '-')))
		return rc;
	nd = shortest_digits(a, digits, sizeof(digits), &exp10);
	if (a < 1e-6 || a >= 1e21) {
		int x = exp10 < 0 ? -exp10 : exp10;
		if ((rc = fbc_buf_putc(b, digits[0])))
			return rc;
		if (nd > 1 && ((rc = fbc_buf_putc(b, '.')) || (rc = fbc_buf_puts(b, digits + 1))))
			return rc;
		/* Go writes e-07 and the encoder trims it to e-7; e+21 stays */
		if (exp10 < 0)
			return fbc_buf_printf(b, "e-%d", x);
		return fbc_buf_printf(b, "e+%02d", x);
	}
	if (exp10 >= 0) {
		size_t ip = (size_t)exp10 + 1;
		for (size_t i = 0; i < ip; i++)
			if ((rc = fbc_buf_putc(b, i < nd ? digits[i] : '0')))
				return rc;
		if (nd > ip && ((rc = fbc_buf_putc(b, '.')) || (rc = fbc_buf_puts(b, digits + ip))))
			return rc;
		return 0;
	}
	if ((rc = fbc_buf_puts(b, "0.")))
		return rc;
	for (int i = 0; i < -exp10 - 1; i++)
		if ((rc = fbc_buf_putc(b, '0')))
			return rc;
	return fbc_buf_puts(b, digits);
}

typedef struct keyref {
	const char *k;
	size_t n;
	json_t *v;
} keyref;

static int cmp_key(const void *pa, const void *pb)
{
	const keyref *a = pa, *b = pb;
	size_t n = a->n < b->n ? a->n : b->n;
	int c = memcmp(a->k, b->k, n);

	if (c)
		return c;
	return a->n < b->n ? -1 : a->n > b->n;
}

static int value_at(fbc_buf *b, const json_t *v, bool html, int depth)
{
	int rc = 0;

	if (depth > 10000)
		return FBC_ELIMIT;
	switch (json_typeof(v)) {
	case JSON_OBJECT: {
		size_t n = json_object_size(v), i = 0;
		const char *k;
		size_t kl;
		json_t *c;
		keyref *keys = NULL;

		if (n == 0)
			return fbc_buf_puts(b, "{}");
		keys = malloc(n * sizeof(*keys));
		if (keys == NULL)
			return FBC_ENOMEM;
		json_object_keylen_foreach((json_t *)v, k, kl, c)
		{
			keys[i].k = k;
			keys[i].n = kl;
			keys[i].v = c;
			i++;
		}
		qsort(keys, n, sizeof(*keys), cmp_key);
		rc = fbc_buf_putc(b, '{');
		for (i = 0; rc == 0 && i < n; i++) {
			if (i && (rc = fbc_buf_putc(b, ',')))
				break;
			if ((rc = fbc_gojson_string(b, keys[i].k, keys[i].n, html)) ||
			    (rc = fbc_buf_putc(b, ':')))
				break;
			rc = value_at(b, keys[i].v, html, depth + 1);
		}
		free(keys);
		return rc ? rc : fbc_buf_putc(b, '}');
	}
	case JSON_ARRAY: {
		size_t n = json_array_size(v);
		if ((rc = fbc_buf_putc(b, '[')))
			return rc;
		for (size_t i = 0; i < n; i++) {
			if (i && (rc = fbc_buf_putc(b, ',')))
				return rc;
			if ((rc = value_at(b, json_array_get(v, i), html, depth + 1)))
				return rc;
		}
		return fbc_buf_putc(b, ']');
	}
	case JSON_STRING:
		return fbc_gojson_string(b, json_string_value(v), json_string_length(v), html);
	case JSON_INTEGER:
		return fbc_buf_printf(b, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
	case JSON_REAL:
		return fbc_gojson_number(b, json_real_value(v));
	case JSON_TRUE:
		return fbc_buf_puts(b, "true");
	case JSON_FALSE:
		return fbc_buf_puts(b, "false");
	case JSON_NULL:
		return fbc_buf_puts(b, "null");
	}
	return FBC_EINVAL;
}

int fbc_gojson_value(fbc_buf *b, const json_t *v, bool html)
{
	return value_at(b, v, html, 0);
}

static bool is_ws(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

int fbc_gojson_compact(fbc_buf *b, const char *raw, size_t n, bool html)
{
	size_t i = 0, start = 0;
	bool in_str = false;
	int rc;

	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)raw[i];
		const char *rep = NULL;
		size_t skip = 1;

		if (in_str) {
			if (c == '\\') {
				i++;
				continue;
			}
			if (c == '"') {
				in_str = false;
				continue;
			}
		} else if (c == '"') {
			in_str = true;
			continue;
		} else if (is_ws((char)c)) {
			if ((rc = fbc_buf_append(b, raw + start, i - start)))
				return rc;
			start = i + 1;
			continue;
		}
		if (!html)
			continue;
		if (c == '<')
			rep = "\\u003c";
		else if (c == '>')
			rep = "\\u003e";
		else if (c == '&')
			rep = "\\u0026";
		else if (c == 0xE2 && i + 2 < n && (unsigned char)raw[i + 1] == 0x80 &&
			 ((unsigned char)raw[i + 2] == 0xA8 || (unsigned char)raw[i + 2] == 0xA9)) {
			rep = (unsigned char)raw[i + 2] == 0xA8 ? "\\u2028" : "\\u2029";
			skip = 3;
		}
		if (rep == NULL)
			continue;
		if ((rc = fbc_buf_append(b, raw + start, i - start)) || (rc = fbc_buf_puts(b, rep)))
			return rc;
		i += skip - 1;
		start = i + 1;
	}
	if (in_str)
		return FBC_EPARSE;
	return fbc_buf_append(b, raw + start, n - start);
}

static int newline(fbc_buf *b, const char *indent, int depth)
{
	int rc = fbc_buf_putc(b, '\n');

	for (int d = 0; rc == 0 && d < depth; d++)
		rc = fbc_buf_puts(b, indent);
	return rc;
}

int fbc_gojson_indent(fbc_buf *b, const char *json, size_t n, const char *indent)
{
	int depth = 0, rc = 0;
	bool need = false, in_str = false;

	for (size_t i = 0; i < n; i++) {
		char c = json[i];

		if (in_str) {
			if ((rc = fbc_buf_putc(b, c)))
				return rc;
			if (c == '\\' && i + 1 < n) {
				if ((rc = fbc_buf_putc(b, json[++i])))
					return rc;
			} else if (c == '"') {
				in_str = false;
			}
			continue;
		}
		if (is_ws(c))
			continue;
		if (need && c != ']' && c != '}') {
			need = false;
			if ((rc = newline(b, indent, depth)))
				return rc;
		}
		switch (c) {
		case '"':
			in_str = true;
			rc = fbc_buf_putc(b, c);
			break;
		case '{':
		case '[':
			need = true;
			depth++;
			rc = fbc_buf_putc(b, c);
			break;
		case ',':
			rc = fbc_buf_putc(b, c);
			if (rc == 0)
				rc = newline(b, indent, depth);
			break;
		case ':':
			rc = fbc_buf_puts(b, ": ");
			break;
		case '}':
		case ']':
			if (depth == 0)
				return FBC_EPARSE;
			depth--;
			if (need)
				need = false;
			else if ((rc = newline(b, indent, depth)))
				return rc;
			rc = fbc_buf_putc(b, c);
			break;
		default:
			rc = fbc_buf_putc(b, c);
			break;
		}
		if (rc)
			return rc;
	}
	return in_str || depth ? FBC_EPARSE : 0;
}

int fbc_gojson_base64(fbc_buf *b, const void *data, size_t n)
{
	static const char al[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	const unsigned char *p = data;
	char chunk[4 * 256];
	size_t o = 0;
	int rc;

	if ((rc = fbc_buf_reserve(b, (n + 2) / 3 * 4)))
		return rc;
	for (size_t i = 0; i < n; i += 3) {
		uint32_t v = (uint32_t)p[i] << 16;
		size_t left = n - i;

		if (left > 1)
			v |= (uint32_t)p[i + 1] << 8;
		if (left > 2)
			v |= p[i + 2];
		chunk[o++] = al[(v >> 18) & 63];
		chunk[o++] = al[(v >> 12) & 63];
		chunk[o++] = left > 1 ? al[(v >> 6) & 63] : '=';
		chunk[o++] = left > 2 ? al[v & 63] : '=';
		if (o == sizeof(chunk)) {
			if ((rc = fbc_buf_append(b, chunk, o)))
				return rc;
			o = 0;
		}
	}
	return fbc_buf_append(b, chunk, o);
}
