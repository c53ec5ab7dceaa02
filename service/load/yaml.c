/*
 * YAML 1.1 -> json_t with go-yaml v2 implicit typing (what sigs.k8s.io/yaml
 * does for opm), built from libyaml's event API. Limits are applied while
 * building: nesting depth, scalar length, and nodes produced by aliases
 * (aliases are deep-copied, and the copy is counted and aborted early, so a
 * "billion laughs" document costs at most max_alias_nodes copies). Aliased
 * scalars share one json_t, but whatever serialises the document later pays
 * for every copy, so the bytes aliases produce are bounded too
 * (max_expand_ratio x the document's size, at most max_expanded_bytes).
 */
#include "service/base/base64.h"
#include "service/base/strmap.h"
#include "service/load/internal.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#define TAG_PREFIX "tag:yaml.org,2002:"

typedef struct anchor {
	char *name;
	json_t *value;
} anchor;

typedef struct frame {
	json_t *node; /* object or array */
	char *anchor; /* owned; registered when the node completes */
	char *key;    /* pending mapping key (owned), NULL when a key is expected */
	size_t key_len;
	bool merge; /* the pending key is the merge key "<<" */
	bool is_map;
} frame;

typedef struct conv {
	const fbc_load_limits *lim;
	int line0;
	frame *stack;
	size_t depth;
	size_t cap;
	anchor *anchors;
	size_t nanchors;
	size_t anchors_cap;
	fbc_strmap anchor_index; /* name -> index + 1 of its latest definition */
	size_t alias_nodes;
	size_t doc_bytes;    /* size of the document's text */
	size_t expanded;     /* doc_bytes + bytes produced through aliases */
	size_t expand_limit; /* bound on expanded */
	json_t *root;
	bool have_root;
	int content_line;
	fbc_error *err;
} conv;

enum rtag { R_STR, R_NULL, R_BOOL, R_INT, R_FLOAT };

/* ---- scalar resolution (go-yaml v2 resolve.go semantics) ---- */

static const struct {
	const char *word;
	enum rtag tag;
	int value; /* bool value, or float kind: 1 = +inf, -1 = -inf, 2 = nan */
} resolve_words[] = {
	{"y", R_BOOL, 1},	{"Y", R_BOOL, 1},	{"yes", R_BOOL, 1},
	{"Yes", R_BOOL, 1},	{"YES", R_BOOL, 1},	{"true", R_BOOL, 1},
	{"True", R_BOOL, 1},	{"TRUE", R_BOOL, 1},	{"on", R_BOOL, 1},
	{"On", R_BOOL, 1},	{"ON", R_BOOL, 1},	{"n", R_BOOL, 0},
	{"N", R_BOOL, 0},	{"no", R_BOOL, 0},	{"No", R_BOOL, 0},
	{"NO", R_BOOL, 0},	{"false", R_BOOL, 0},	{"False", R_BOOL, 0},
	{"FALSE", R_BOOL, 0},	{"off", R_BOOL, 0},	{"Off", R_BOOL, 0},
	{"OFF", R_BOOL, 0},	{"~", R_NULL, 0},	{"null", R_NULL, 0},
	{"Null", R_NULL, 0},	{"NULL", R_NULL, 0},	{".nan", R_FLOAT, 2},
	{".NaN", R_FLOAT, 2},	{".NAN", R_FLOAT, 2},	{".inf", R_FLOAT, 1},
	{".Inf", R_FLOAT, 1},	{".INF", R_FLOAT, 1},	{"+.inf", R_FLOAT, 1},
	{"+.Inf", R_FLOAT, 1},	{"+.INF", R_FLOAT, 1},	{"-.inf", R_FLOAT, -1},
	{"-.Inf", R_FLOAT, -1}, {"-.INF", R_FLOAT, -1},
};

typedef struct resolved {
	enum rtag tag;
	bool b;
	bool is_uint; /* integer above INT64_MAX */
	long long i;
	unsigned long long u;
	double f;
} resolved;

static bool is_digit_in_base(char c, int base, unsigned *d)
{
	unsigned v;

	if (c >= '0' && c <= '9')
		v = (unsigned)(c - '0');
	else if (c >= 'a' && c <= 'z')
		v = (unsigned)(c - 'a' + 10);
	else if (c >= 'A' && c <= 'Z')
		v = (unsigned)(c - 'A' + 10);
	else
		return false;
	if (v >= (unsigned)base)
		return false;
	*d = v;
	return true;
}

/* strconv.ParseUint(s, 0, 64) on an underscore-free string. */
static bool parse_uint0(const char *s, size_t n, unsigned long long *out)
{
	int base = 10;
	size_t i = 0;
	unsigned long long v = 0;

	if (n == 0)
		return false;
	if (s[0] == '0') {
		char l = n >= 3 ? (char)(s[1] | 0x20) : 0;
		if (l == 'b' || l == 'o' || l == 'x') {
			base = l == 'b' ? 2 : l == 'o' ? 8 : 16;
			i = 2;
		} else {
			base = 8;
			i = 1;
		}
	}
	for (; i < n; i++) {
		unsigned d;
		if (!is_digit_in_base(s[i], base, &d))
			return false;
		if (v > (ULLONG_MAX - d) / (unsigned)base)
			return false;
		v = v * (unsigned)base + d;
	}
	*out = v;
	return true;
}

/* strconv.ParseInt(s, 0, 64). */
static bool parse_int0(const char *s, size_t n, long long *out)
{
	bool neg = false;
	unsigned long long u;

	if (n > 0 && (s[0] == '+' || s[0] == '-')) {
		neg = s[0] == '-';
		s++;
		n--;
	}
	if (!parse_uint0(s, n, &u))
		return false;
	if (neg) {
		if (u > (unsigned long long)INT64_MAX + 1)
			return false;
		*out = u == (unsigned long long)INT64_MAX + 1 ? INT64_MIN : -(long long)u;
	} else {
		if (u > (unsigned long long)INT64_MAX)
			return false;
		*out = (long long)u;
	}
	return true;
}

/* ^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$ */
static bool yaml_style_float(const char *s, size_t n)
{
	size_t i = 0, d;

	if (i < n && (s[i] == '+' || s[i] == '-'))
		i++;
	if (i < n && s[i] == '.') {
		i++;
		for (d = i; i < n && s[i] >= '0' && s[i] <= '9'; i++)
			;
		if (i == d)
			return false;
	} else {
		for (d = i; i < n && s[i] >= '0' && s[i] <= '9'; i++)
			;
		if (i == d)
			return false;
		if (i < n && s[i] == '.')
			for (i++; i < n && s[i] >= '0' && s[i] <= '9'; i++)
				;
	}
	if (i < n && (s[i] == 'e' || s[i] == 'E')) {
		i++;
		if (i < n && (s[i] == '+' || s[i] == '-'))
			i++;
		for (d = i; i < n && s[i] >= '0' && s[i] <= '9'; i++)
			;
		if (i == d)
			return false;
	}
	return i == n;
}

static bool parse_float(const char *s, size_t n, double *out)
{
	char tmp[64];
	char *end = NULL;
	double v;

	if (n >= sizeof(tmp))
		return false; /* a float literal this long is kept as a string */
	memcpy(tmp, s, n);
	tmp[n] = 0;
	v = strtod(tmp, &end);
	if (end != tmp + n || isinf(v))
		return false; /* out of range: go-yaml keeps the string */
	*out = v;
	return true;
}

/* Resolve a plain scalar the way go-yaml v2 does for an untagged value. */
static void resolve_plain(resolved *r, const char *s, size_t n)
{
	char c;
	char plain[64];
	size_t pn = 0;

	memset(r, 0, sizeof(*r));
	r->tag = R_STR;
	if (n == 0) {
		r->tag = R_NULL;
		return;
	}
	c = s[0];
	if (!(c == '+' || c == '-' || (c >= '0' && c <= '9') || c == '.' || c == '~' ||
	      strchr("yYnNtTfFoO", c) != NULL))
		return;
	if (n <= 6) {
		for (size_t i = 0; i < sizeof(resolve_words) / sizeof(resolve_words[0]); i++) {
			const char *w = resolve_words[i].word;
			if (strlen(w) == n && memcmp(w, s, n) == 0) {
				r->tag = resolve_words[i].tag;
				if (r->tag == R_BOOL) {
					r->b = resolve_words[i].value != 0;
				} else if (r->tag == R_FLOAT) {
					int k = resolve_words[i].value;
					r->f = k == 2 ? NAN : k > 0 ? INFINITY : -INFINITY;
				}
				return;
			}
		}
	}
	if (c == '.') {
		/* only a plain decimal float can start with '.' */
		if (n < 64 && yaml_style_float(s, n) && parse_float(s, n, &r->f))
			r->tag = R_FLOAT;
		return;
	}
	if (!(c == '+' || c == '-' || (c >= '0' && c <= '9')))
		return;
	/* numbers: underscores are removed first; anything long is a string
	 * (no int64 or useful float literal needs more than 63 characters) */
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '_')
			continue;
		if (pn == sizeof(plain) - 1)
			return;
		plain[pn++] = s[i];
	}
	plain[pn] = 0;
	if (parse_int0(plain, pn, &r->i)) {
		r->tag = R_INT;
		return;
	}
	if (parse_uint0(plain, pn, &r->u)) {
		r->tag = R_INT;
		r->is_uint = true;
		return;
	}
	if (yaml_style_float(plain, pn) && parse_float(plain, pn, &r->f))
		r->tag = R_FLOAT;
}

static int conv_fail(conv *c, int code, const yaml_mark_t *mark, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int conv_fail(conv *c, int code, const yaml_mark_t *mark, const char *fmt, ...)
{
	char msg[FBC_ERROR_MESSAGE_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (code == FBC_EPARSE && mark != NULL)
		return fbc_error_set(c->err, code, NULL,
				     "error converting YAML to JSON: yaml: line %d: %s",
				     c->line0 + (int)mark->line, msg);
	if (code == FBC_EPARSE)
		return fbc_error_set(c->err, code, NULL, "error converting YAML to JSON: %s", msg);
	if (mark != NULL)
		return fbc_error_set(c->err, code, NULL, "%s (line %d)", msg,
				     c->line0 + (int)mark->line);
	return fbc_error_set(c->err, code, NULL, "%s", msg);
}

static json_t *resolved_to_json(const resolved *r, const char *s, size_t n)
{
	switch (r->tag) {
	case R_NULL:
		return json_null();
	case R_BOOL:
		return json_boolean(r->b);
	case R_INT:
		return r->is_uint ? json_real((double)r->u) : json_integer(r->i);
	case R_FLOAT:
		return json_real(r->f);
	case R_STR:
		break;
	}
	return json_stringn_nocheck(s, n);
}

bool fbc_yaml_plain_is_string(const char *s, size_t n)
{
	resolved r;

	resolve_plain(&r, s, n);
	return r.tag == R_STR;
}

int fbc_yaml_plain_json(json_t **out, const char *s, size_t n)
{
	resolved r;
	json_t *j;

	resolve_plain(&r, s, n);
	if (r.tag == R_FLOAT && !isfinite(r.f))
		return 1; /* an error on the libyaml path */
	if (!(j = resolved_to_json(&r, s, n)))
		return FBC_ENOMEM;
	*out = j;
	return 0;
}

/* A string that may hold NULs (double-quoted escapes, !!binary): each NUL
 * becomes the visible text \u0000, because fbcd strings are NUL-terminated
 * and a NUL would silently cut a name short (see stream.c json_sanitize). */
static json_t *string_without_nul(const char *s, size_t n)
{
	size_t nul = 0, i, o = 0;
	char *t;
	json_t *j;

	for (i = 0; i < n; i++)
		nul += s[i] == 0;
	t = malloc(n + nul * 5 + 1);
	if (t == NULL)
		return NULL;
	for (i = 0; i < n; i++) {
		if (s[i] == 0) {
			memcpy(t + o, "\\u0000", 6);
			o += 6;
		} else {
			t[o++] = s[i];
		}
	}
	j = json_stringn_nocheck(t, o);
	free(t);
	return j;
}

static const char *rtag_name(enum rtag t)
{
	switch (t) {
	case R_NULL:
		return "!!null";
	case R_BOOL:
		return "!!bool";
	case R_INT:
		return "!!int";
	case R_FLOAT:
		return "!!float";
	case R_STR:
		break;
	}
	return "!!str";
}

/* !!binary: go-yaml decodes it with base64.StdEncoding, as FBC icons are. */
static json_t *decode_binary(const char *s, size_t n)
{
	unsigned char *outb = NULL;
	size_t o = 0, bad;
	json_t *j;

	if (fbc_base64_decode(&outb, &o, &bad, s, n) != 0)
		return NULL;
	j = memchr(outb, 0, o) == NULL
		    ? json_stringn((const char *)outb, o) /* NULL for non-UTF-8 bytes */
		    : string_without_nul((const char *)outb, o);
	free(outb);
	return j;
}

static int scalar_to_json(conv *c, json_t **out, const yaml_event_t *ev)
{
	const char *s = (const char *)ev->data.scalar.value;
	size_t n = ev->data.scalar.length;
	const char *tag = (const char *)ev->data.scalar.tag;
	resolved r;
	json_t *j = NULL;

	if (n > c->lim->max_string_bytes)
		return conv_fail(c, FBC_ELIMIT, &ev->start_mark,
				 "scalar of %zu bytes exceeds the max_string_bytes limit (%zu)", n,
				 c->lim->max_string_bytes);
	if (tag == NULL) {
		if (ev->data.scalar.plain_implicit)
			resolve_plain(&r, s, n);
		else
			r.tag = R_STR;
	} else if (strncmp(tag, TAG_PREFIX, strlen(TAG_PREFIX)) != 0) {
		r.tag = R_STR; /* local and non-specific tags: go-yaml keeps the text */
	} else {
		const char *t = tag + strlen(TAG_PREFIX);
		enum rtag want;

		if (strcmp(t, "binary") == 0) {
			j = decode_binary(s, n);
			if (j == NULL)
				return conv_fail(c, FBC_EPARSE, &ev->start_mark,
						 "!!binary value contains invalid base64 data");
			*out = j;
			return 0;
		}
		if (strcmp(t, "bool") == 0)
			want = R_BOOL;
		else if (strcmp(t, "int") == 0)
			want = R_INT;
		else if (strcmp(t, "float") == 0)
			want = R_FLOAT;
		else
			want = R_STR; /* !!str, !!timestamp, !!null and the rest keep the text */
		if (want == R_STR) {
			r.tag = R_STR;
		} else {
			resolve_plain(&r, s, n);
			if (want == R_FLOAT && r.tag == R_INT) {
				r.f = r.is_uint ? (double)r.u : (double)r.i;
				r.tag = R_FLOAT;
			}
			if (r.tag != want)
				return conv_fail(c, FBC_EPARSE, &ev->start_mark,
						 "cannot decode %s `%.*s` as a %s",
						 rtag_name(r.tag), (int)(n > 100 ? 100 : n), s,
						 rtag_name(want));
		}
	}
	if (r.tag == R_FLOAT && !isfinite(r.f))
		return conv_fail(c, FBC_EPARSE, NULL, "json: unsupported value: %s",
				 isnan(r.f) ? "NaN"
				 : r.f > 0  ? "+Inf"
					    : "-Inf");
	if (r.tag == R_STR && ev->data.scalar.style == YAML_DOUBLE_QUOTED_SCALAR_STYLE &&
	    memchr(s, 0, n) != NULL)
		j = string_without_nul(s, n); /* "\0" and friends */
	else
		j = resolved_to_json(&r, s, n);
	if (j == NULL)
		return fbc_error_set(c->err, FBC_ENOMEM, NULL, "out of memory");
	*out = j;
	return 0;
}

/* strconv.FormatFloat(f, 'g', -1, 32), which sigs.k8s.io/yaml uses for
 * float map keys. */
static void format_float32_key(char *buf, size_t size, double f)
{
	float want = (float)f;
	int prec = 1;
	char tmp[64];
	int exp10;
	char *e;

	if (isnan(f)) {
		snprintf(buf, size, ".nan");
		return;
	}
	if (isinf(f)) {
		snprintf(buf, size, f > 0 ? ".inf" : "-.inf");
		return;
	}
	for (prec = 1; prec < 17; prec++) {
		snprintf(tmp, sizeof(tmp), "%.*e", prec - 1, (double)want);
		if (strtof(tmp, NULL) == want)
			break;
	}
	e = strchr(tmp, 'e');
	exp10 = e != NULL ? (int)strtol(e + 1, NULL, 10) : 0;
	if (exp10 < -4 || exp10 >= 6) {
		snprintf(buf, size, "%s", tmp);
	} else {
		int frac = prec - 1 - exp10;
		snprintf(buf, size, "%.*f", frac > 0 ? frac : 0, (double)want);
	}
}

/* Map keys become strings the way sigs.k8s.io/yaml converts them. */
static int key_string(conv *c, json_t *k, const yaml_mark_t *mark, char **out, size_t *out_len)
{
	char tmp[64];
	const char *s = tmp;
	size_t n;

	switch (json_typeof(k)) {
	case JSON_STRING:
		s = json_string_value(k);
		n = json_string_length(k);
		break;
	case JSON_INTEGER:
		n = (size_t)snprintf(tmp, sizeof(tmp), "%" JSON_INTEGER_FORMAT,
				     json_integer_value(k));
		break;
	case JSON_REAL:
		format_float32_key(tmp, sizeof(tmp), json_real_value(k));
		n = strlen(tmp);
		break;
	case JSON_TRUE:
		s = "true";
		n = 4;
		break;
	case JSON_FALSE:
		s = "false";
		n = 5;
		break;
	case JSON_NULL:
		return conv_fail(c, FBC_EPARSE, NULL, "unsupported map key of type: <nil>");
	default:
		return conv_fail(c, FBC_EPARSE, mark, "invalid map key: a %s cannot be a key",
				 json_is_array(k) ? "sequence" : "mapping");
	}
	*out = malloc(n + 1);
	if (*out == NULL)
		return fbc_error_set(c->err, FBC_ENOMEM, NULL, "out of memory");
	memcpy(*out, s, n);
	(*out)[n] = 0;
	*out_len = n;
	return 0;
}

static int merge_into(conv *c, json_t *obj, json_t *v, const yaml_mark_t *mark)
{
	if (json_is_object(v))
		return json_object_update(obj, v) == 0
			       ? 0
			       : fbc_error_set(c->err, FBC_ENOMEM, NULL, "out of memory");
	if (json_is_array(v)) {
		size_t n = json_array_size(v);
		for (size_t i = n; i-- > 0;)
			if (!json_is_object(json_array_get(v, i)))
				goto bad;
		for (size_t i = n; i-- > 0;)
			if (json_object_update(obj, json_array_get(v, i)) != 0)
				return fbc_error_set(c->err, FBC_ENOMEM, NULL, "out of memory");
		return 0;
	}
bad:
	return conv_fail(c, FBC_EPARSE, mark,
			 "map merge requires map or sequence of maps as the value");
}

/* Attach a finished node v (reference stolen) to the open collection or make
 * it the root. plain_merge: v is the plain scalar "<<". */
static int attach(conv *c, json_t *v, bool plain_merge, const yaml_mark_t *mark)
{
	frame *f;
	int rc = 0;

	if (c->depth == 0) {
		c->root = v;
		c->have_root = true;
		c->content_line = c->line0 + (int)mark->line;
		return 0;
	}
	f = &c->stack[c->depth - 1];
	if (!f->is_map) {
		if (json_array_append_new(f->node, v) != 0)
			return fbc_error_set(c->err, FBC_ENOMEM, NULL, "out of memory");
		return 0;
	}
	if (f->key == NULL && !f->merge) {
		if (plain_merge) {
			f->merge = true;
		} else {
			rc = key_string(c, v, mark, &f->key, &f->key_len);
		}
		json_decref(v);
		return rc;
	}
	if (f->merge) {
		f->merge = false;
		rc = merge_into(c, f->node, v, mark);
		json_decref(v);
		return rc;
	}
	if (json_object_setn_new_nocheck(f->node, f->key, f->key_len, v) != 0)
		rc = fbc_error_set(c->err, FBC_ENOMEM, NULL, "out of memory");
	free(f->key);
	f->key = NULL;
	return rc;
}

static int add_anchor(conv *c, const char *name, json_t *v)
{
	anchor *a;

	if (c->nanchors == c->anchors_cap) {
		size_t ncap = c->anchors_cap ? c->anchors_cap * 2 : 8;
		anchor *na = realloc(c->anchors, ncap * sizeof(*na));
		if (na == NULL)
			return fbc_error_set(c->err, FBC_ENOMEM, NULL, "out of memory");
		c->anchors = na;
		c->anchors_cap = ncap;
	}
	a = &c->anchors[c->nanchors];
	a->name = strdup(name);
	if (a->name == NULL)
		return fbc_error_set(c->err, FBC_ENOMEM, NULL, "out of memory");
	a->value = json_incref(v);
	c->nanchors++;
	/* a hash look-up: a linear scan made many anchors x aliases quadratic */
	if (fbc_strmap_put(&c->anchor_index, a->name, (void *)(uintptr_t)c->nanchors, NULL) < 0)
		return fbc_error_set(c->err, FBC_ENOMEM, NULL, "out of memory");
	return 0;
}

static int add_expanded(conv *c, size_t n, const yaml_mark_t *mark)
{
	if (n > c->expand_limit - c->expanded) /* expanded <= expand_limit always */
		return conv_fail(c, FBC_ELIMIT, mark,
				 "aliases expand the document of %zu bytes to more than %zu bytes "
				 "(max_expand_ratio %zu, max_expanded_bytes %zu)",
				 c->doc_bytes, c->expand_limit, c->lim->max_expand_ratio,
				 c->lim->max_expanded_bytes);
	c->expanded += n;
	return 0;
}

/* The bytes one copied node adds, about its JSON size (children of a
 * container are counted as they are copied). */
static int count_expanded(conv *c, json_t *v, const yaml_mark_t *mark)
{
	size_t n;

	switch (json_typeof(v)) {
	case JSON_STRING:
		n = json_string_length(v) + 3; /* quotes and a separator */
		break;
	case JSON_OBJECT:
	case JSON_ARRAY:
		n = 2;
		break;
	default:
		n = 8; /* a number, true, false, null */
		break;
	}
	return add_expanded(c, n, mark);
}

/* Deep copy for an alias, counting every node against max_alias_nodes and
 * the nesting against max_depth, so that expansion stops early. */
static int copy_counted(conv *c, json_t **out, json_t *v, size_t depth, const yaml_mark_t *mark)
{
	json_t *n = NULL;
	int rc = 0;

	if (++c->alias_nodes > c->lim->max_alias_nodes)
		return conv_fail(
			c, FBC_ELIMIT, mark,
			"aliases expand to more than the max_alias_nodes limit (%zu nodes)",
			c->lim->max_alias_nodes);
	rc = count_expanded(c, v, mark);
	if (rc != 0)
		return rc;
	if (json_is_object(v) || json_is_array(v)) {
		if (depth + 1 > c->lim->max_depth)
			return conv_fail(
				c, FBC_ELIMIT, mark,
				"nesting through an alias exceeds the max_depth limit (%zu)",
				c->lim->max_depth);
	}
	if (json_is_object(v)) {
		const char *k;
		size_t klen;
		json_t *child;
		n = json_object();
		if (n == NULL)
			goto oom;
		json_object_keylen_foreach(v, k, klen, child)
		{
			json_t *cc = NULL;
			rc = add_expanded(c, klen + 3, mark); /* "key": and a comma */
			if (rc != 0)
				goto done;
			rc = copy_counted(c, &cc, child, depth + 1, mark);
			if (rc != 0)
				goto done;
			if (json_object_setn_new_nocheck(n, k, klen, cc) != 0)
				goto oom;
		}
	} else if (json_is_array(v)) {
		size_t i;
		json_t *child;
		n = json_array();
		if (n == NULL)
			goto oom;
		json_array_foreach(v, i, child)
		{
			json_t *cc = NULL;
			rc = copy_counted(c, &cc, child, depth + 1, mark);
			if (rc != 0)
				goto done;
			if (json_array_append_new(n, cc) != 0)
				goto oom;
		}
	} else {
		n = json_incref(v); /* scalars are never mutated in place */
	}
	*out = n;
	return 0;
oom:
	rc = fbc_error_set(c->err, FBC_ENOMEM, NULL, "out of memory");
done:
	json_decref(n);
	return rc;
}

static int do_alias(conv *c, const yaml_event_t *ev)
{
	const char *name = (const char *)ev->data.alias.anchor;
	json_t *copy = NULL;
	size_t i = (size_t)(uintptr_t)fbc_strmap_get(&c->anchor_index, name);
	int rc;

	if (i > 0) {
		rc = copy_counted(c, &copy, c->anchors[i - 1].value, c->depth, &ev->start_mark);
		if (rc != 0)
			return rc;
		return attach(c, copy, false, &ev->start_mark);
	}
	return conv_fail(c, FBC_EPARSE, &ev->start_mark, "unknown anchor '%s' referenced", name);
}

static int push(conv *c, const yaml_event_t *ev, bool is_map)
{
	const char *anc = (const char *)(is_map ? ev->data.mapping_start.anchor
						: ev->data.sequence_start.anchor);
	frame *f;

	if (c->depth + 1 > c->lim->max_depth)
		return conv_fail(c, FBC_ELIMIT, &ev->start_mark,
				 "nesting exceeds the max_depth limit (%zu)", c->lim->max_depth);
	if (c->depth == c->cap) {
		size_t ncap = c->cap ? c->cap * 2 : 16;
		frame *ns = realloc(c->stack, ncap * sizeof(*ns));
		if (ns == NULL)
			return fbc_error_set(c->err, FBC_ENOMEM, NULL, "out of memory");
		c->stack = ns;
		c->cap = ncap;
	}
	f = &c->stack[c->depth];
	memset(f, 0, sizeof(*f));
	f->is_map = is_map;
	f->node = is_map ? json_object() : json_array();
	if (f->node == NULL)
		return fbc_error_set(c->err, FBC_ENOMEM, NULL, "out of memory");
	if (anc != NULL && (f->anchor = strdup(anc)) == NULL) {
		json_decref(f->node);
		return fbc_error_set(c->err, FBC_ENOMEM, NULL, "out of memory");
	}
	if (c->depth == 0)
		c->content_line = c->line0 + (int)ev->start_mark.line;
	c->depth++;
	return 0;
}

static int pop(conv *c, const yaml_event_t *ev)
{
	frame f = c->stack[--c->depth];
	int rc = 0;

	free(f.key);
	if (f.merge) {
		/* "<<" with no value cannot happen: the parser pairs keys */
		f.merge = false;
	}
	if (f.anchor != NULL) {
		rc = add_anchor(c, f.anchor, f.node);
		free(f.anchor);
		if (rc != 0) {
			json_decref(f.node);
			return rc;
		}
	}
	if (c->depth == 0) {
		int line = c->content_line;
		rc = attach(c, f.node, false, &ev->start_mark);
		c->content_line = line;
		return rc;
	}
	return attach(c, f.node, false, &ev->start_mark);
}

/* Fast path for the most common event: a mapping key that is a plain
 * string. The key takes over libyaml's buffer (malloc'd, NUL-terminated,
 * released with free), so no json_t is built for it. */
static bool take_string_key(conv *c, yaml_event_t *ev)
{
	frame *f;
	resolved r;
	const char *s = (const char *)ev->data.scalar.value;
	size_t n = ev->data.scalar.length;

	if (c->depth == 0 || ev->data.scalar.tag != NULL || ev->data.scalar.anchor != NULL ||
	    n > c->lim->max_string_bytes ||
	    (ev->data.scalar.style == YAML_DOUBLE_QUOTED_SCALAR_STYLE && memchr(s, 0, n) != NULL))
		return false;
	f = &c->stack[c->depth - 1];
	if (!f->is_map || f->key != NULL || f->merge)
		return false;
	if (ev->data.scalar.plain_implicit) {
		if (n == 2 && s[0] == '<' && s[1] == '<')
			return false;
		resolve_plain(&r, s, n);
		if (r.tag != R_STR)
			return false;
	}
	f->key = (char *)ev->data.scalar.value;
	f->key_len = n;
	ev->data.scalar.value = NULL;
	return true;
}

static void conv_dispose(conv *c)
{
	for (size_t i = 0; i < c->depth; i++) {
		json_decref(c->stack[i].node);
		free(c->stack[i].anchor);
		free(c->stack[i].key);
	}
	free(c->stack);
	for (size_t i = 0; i < c->nanchors; i++) {
		free(c->anchors[i].name);
		json_decref(c->anchors[i].value);
	}
	free(c->anchors);
	fbc_strmap_dispose(&c->anchor_index);
	json_decref(c->root);
}

static int parser_fail(conv *c, const yaml_parser_t *p)
{
	const char *problem = p->problem ? p->problem : "unknown error";
	yaml_mark_t mark = p->problem_mark;

	if (p->error == YAML_MEMORY_ERROR)
		return fbc_error_set(c->err, FBC_ENOMEM, NULL, "out of memory");
	/* go-yaml reports the problem line; scanner marks are 0-based */
	if (p->problem_mark.line == 0 && p->context_mark.line != 0)
		mark = p->context_mark;
	return conv_fail(c, FBC_EPARSE, &mark, "%s", problem);
}

int fbc_yaml_doc_parse(json_t **out, int *content_line, const char *data, size_t len, int line0,
		       const fbc_load_limits *lim, fbc_error *err)
{
	int rc = fbc_yaml_fast_doc(out, content_line, data, len, line0, lim);

	if (rc == FBC_ENOMEM)
		return fbc_error_set(err, FBC_ENOMEM, NULL, "out of memory");
	if (rc == 0)
		return 0;
	return fbc_yaml_doc_parse_libyaml(out, content_line, data, len, line0, lim, err);
}

int fbc_yaml_doc_parse_libyaml(json_t **out, int *content_line, const char *data, size_t len,
			       int line0, const fbc_load_limits *lim, fbc_error *err)
{
	yaml_parser_t parser;
	yaml_event_t ev;
	conv c;
	bool done = false;
	int rc = 0;

	memset(&c, 0, sizeof(c));
	fbc_strmap_init(&c.anchor_index);
	c.lim = lim;
	c.line0 = line0;
	c.doc_bytes = len;
	c.expanded = len;
	{
		size_t ratio = lim->max_expand_ratio ? lim->max_expand_ratio : 10;
		size_t cap = lim->max_expanded_bytes ? lim->max_expanded_bytes : SIZE_MAX;
		size_t bound = len > SIZE_MAX / ratio ? SIZE_MAX : len * ratio;
		if (bound < FBC_LOAD_EXPAND_FLOOR)
			bound = FBC_LOAD_EXPAND_FLOOR;
		if (bound > cap)
			bound = cap;
		/* the text itself is never refused here (max_file_bytes is) */
		c.expand_limit = bound > len ? bound : len;
	}
	c.content_line = line0;
	c.err = err;
	if (!yaml_parser_initialize(&parser))
		return fbc_error_set(err, FBC_ENOMEM, NULL, "out of memory");
	yaml_parser_set_input_string(&parser, (const unsigned char *)data, len);
	while (!done) {
		bool plain_merge;
		json_t *v = NULL;

		if (!yaml_parser_parse(&parser, &ev)) {
			rc = parser_fail(&c, &parser);
			goto done;
		}
		switch (ev.type) {
		case YAML_STREAM_END_EVENT:
		case YAML_DOCUMENT_END_EVENT:
			done = true; /* like go-yaml, only the first document counts */
			break;
		case YAML_SCALAR_EVENT:
			if (take_string_key(&c, &ev))
				break;
			rc = scalar_to_json(&c, &v, &ev);
			if (rc != 0)
				break;
			plain_merge = ev.data.scalar.tag == NULL && ev.data.scalar.plain_implicit &&
				      ev.data.scalar.length == 2 &&
				      memcmp(ev.data.scalar.value, "<<", 2) == 0;
			if (ev.data.scalar.tag != NULL &&
			    strcmp((const char *)ev.data.scalar.tag, TAG_PREFIX "merge") == 0)
				plain_merge = true;
			if (ev.data.scalar.anchor != NULL) {
				rc = add_anchor(&c, (const char *)ev.data.scalar.anchor, v);
				if (rc != 0) {
					json_decref(v);
					break;
				}
			}
			rc = attach(&c, v, plain_merge, &ev.start_mark);
			break;
		case YAML_ALIAS_EVENT:
			rc = do_alias(&c, &ev);
			break;
		case YAML_SEQUENCE_START_EVENT:
			rc = push(&c, &ev, false);
			break;
		case YAML_MAPPING_START_EVENT:
			rc = push(&c, &ev, true);
			break;
		case YAML_SEQUENCE_END_EVENT:
		case YAML_MAPPING_END_EVENT:
			rc = pop(&c, &ev);
			break;
		default:
			break;
		}
		yaml_event_delete(&ev);
		if (rc != 0)
			goto done;
	}
	*out = c.have_root ? c.root : json_null();
	if (*out == NULL) {
		rc = fbc_error_set(err, FBC_ENOMEM, NULL, "out of memory");
		goto done;
	}
	c.root = NULL;
	if (content_line != NULL)
		*content_line = c.content_line;
done:
	conv_dispose(&c);
	yaml_parser_delete(&parser);
	return rc;
}

static bool is_space(char ch)
{
	return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r' || ch == '\v' || ch == '\f';
}

int fbc_yaml_to_json(json_t **out, const char *data, size_t len, const fbc_load_limits *lim,
		     fbc_error *err)
{
	fbc_load_limits l;
	size_t i = 0;

	fbc_load_limits_resolve(&l, lim);
	if (len > l.max_file_bytes)
		return fbc_error_set(err, FBC_ELIMIT, NULL,
				     "document of %zu bytes exceeds the max_file_bytes limit (%zu)",
				     len, l.max_file_bytes);
	while (i < len && is_space(data[i]))
		i++;
	if (i < len && data[i] == '{') {
		json_error_t jerr;
		json_t *j = json_loadb(data, len, JSON_ALLOW_NUL, &jerr);
		if (j == NULL)
			return fbc_error_set(err, FBC_EPARSE, NULL, "json: line %d column %d: %s",
					     jerr.line, jerr.column, jerr.text);
		*out = j;
		return 0;
	}
	return fbc_yaml_doc_parse(out, NULL, data, len, 1, &l, err);
}

int fbc_yaml_doc_to_json(json_t **out, int *content_line, const char *data, size_t len,
			 const fbc_load_limits *lim, fbc_error *err)
{
	fbc_load_limits l;

	fbc_load_limits_resolve(&l, lim);
	if (len > l.max_file_bytes)
		return fbc_error_set(err, FBC_ELIMIT, NULL,
				     "document of %zu bytes exceeds the max_file_bytes limit (%zu)",
				     len, l.max_file_bytes);
	return fbc_yaml_doc_parse(out, content_line, data, len, 1, &l, err);
}
