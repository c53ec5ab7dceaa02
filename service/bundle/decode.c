/*
 * One manifest or metadata file to its first document, as opm's
 * decodeFileFS does it (bundles.md §2.2): apimachinery's YAMLOrJSONDecoder
 * with a 30-byte sniff, the first JSON value (falling back to YAML when the
 * JSON does not decode), or the first YAML document cut by apimachinery's
 * line-based splitter, then go-yaml v2 typing (service/load).
 */
#include "service/base/utf8.h"
#include "service/bundle/internal.h"
#include "service/load/load.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SNIFF 30

static char *msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *msg(const char *fmt, ...)
{
	char tmp[FBC_ERROR_MESSAGE_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	return strdup(tmp);
}

/* Go's unicode.IsSpace */
static bool go_space(uint32_t c)
{
	switch (c) {
	case '\t':
	case '\n':
	case '\v':
	case '\f':
	case '\r':
	case ' ':
	case 0x85:
	case 0xA0:
	case 0x1680:
	case 0x2028:
	case 0x2029:
	case 0x202F:
	case 0x205F:
	case 0x3000:
		return true;
	default:
		return c >= 0x2000 && c <= 0x200A;
	}
}

/* apimachinery hasJSONPrefix over the first 30 bytes */
static bool json_prefix(const char *s, size_t n)
{
	size_t i = 0, lim = n < SNIFF ? n : SNIFF;

	while (i < lim) {
		uint32_t cp;
		size_t k = fbc_utf8_decode(&cp, (const unsigned char *)s + i, lim - i);
		if (k == 0 || !go_space(cp))
			break;
		i += k;
	}
	return i < lim && s[i] == '{';
}

/* apimachinery YAMLReader.Read: the first document, lines re-terminated with
 * a single '\n'. *bad is set (malloc'd message) on an invalid separator. */
static int first_doc(fbc_buf *doc, char **bad, const char *s, size_t n)
{
	size_t i = 0;
	int rc;

	*bad = NULL;
	while (i < n) {
		size_t e = i, next;
		const char *nl = memchr(s + i, '\n', n - i);

		e = nl ? (size_t)(nl - s) : n;
		next = nl ? e + 1 : n;
		if (nl && e > i && s[e - 1] == '\r')
			e--;
		if (e - i >= 3 && memcmp(s + i, "---", 3) == 0) {
			size_t a = i + 3, z = e;
			while (a < z && (s[a] == ' ' || s[a] == '\t' || s[a] == '\r' ||
					 s[a] == '\v' || s[a] == '\f'))
				a++;
			while (z > a && (s[z - 1] == ' ' || s[z - 1] == '\t' || s[z - 1] == '\r' ||
					 s[z - 1] == '\v' || s[z - 1] == '\f'))
				z--;
			if (z > a && s[a] != '#') {
				*bad = msg("invalid Yaml document separator: %.*s",
					   (int)(z - a > 200 ? 200 : z - a), s + a);
				return *bad ? 0 : FBC_ENOMEM;
			}
			if (doc->len != 0)
				return 0;
		}
		if ((rc = fbc_buf_append(doc, s + i, e - i)) || (rc = fbc_buf_putc(doc, '\n')))
			return rc;
		i = next;
	}
	return 0;
}

static int yaml_path(json_t **out, int *line, char **why, int *why_line, const char *text,
		     size_t len, const fbc_load_limits *lim, fbc_error *err)
{
	fbc_buf doc;
	char *bad = NULL;
	fbc_error e;
	int rc;

	fbc_buf_init(&doc, 0);
	fbc_error_init(&e);
	if ((rc = first_doc(&doc, &bad, text, len)))
		goto done;
	if (bad != NULL) {
		*why = bad;
		*why_line = 0;
		goto done;
	}
	rc = fbc_yaml_doc_to_json(out, line, doc.data ? doc.data : "", doc.len, lim, &e);
	if (rc == FBC_ENOMEM) {
		fbc_error_set(err, rc, NULL, "out of memory");
		goto done;
	}
	if (rc != 0) {
		const char *p = strstr(e.message, "line ");
		*why_line = p ? (int)strtol(p + 5, NULL, 10) : 0;
		*why = strdup(e.message);
		rc = *why ? 0 : fbc_error_set(err, FBC_ENOMEM, NULL, "out of memory");
	}
done:
	fbc_buf_dispose(&doc);
	return rc;
}

/* Every byte that does not start a valid UTF-8 sequence becomes U+FFFD. */
static char *replace_invalid_utf8(const char *s, size_t n, size_t *out_len)
{
	char *o = malloc(n * 3 + 1);
	size_t k = 0;

	if (o == NULL)
		return NULL;
	for (size_t i = 0; i < n;) {
		size_t w = fbc_utf8_decode(NULL, (const unsigned char *)s + i, n - i);
		if (w == 0) {
			memcpy(o + k, "\xef\xbf\xbd", 3);
			k += 3;
			i++;
		} else {
			memcpy(o + k, s + i, w);
			k += w;
			i += w;
		}
	}
	*out_len = k;
	return o;
}

int fbc_bundle_decode_first(json_t **out, bool *is_json, int *line, char **why, int *why_line,
			    const char *text, size_t len, fbc_error *err)
{
	fbc_load_limits lim;
	json_t *j = NULL;
	int rc;

	*out = NULL;
	*why = NULL;
	*why_line = 0;
	*line = 1;
	*is_json = false;
	fbc_load_limits_default(&lim);
	lim.max_depth = 256;		 /* CRD schemas nest deeply */
	lim.max_file_bytes = (size_t)-1; /* the reader bounds files itself */
	if (json_prefix(text, len)) {
		json_error_t jerr;
		size_t fixed_len = 0;
		j = json_loadb(text, len, JSON_DISABLE_EOF_CHECK | JSON_ALLOW_NUL, &jerr);
		if (j == NULL && !fbc_utf8_valid(text, len)) {
			/* Go's decoder turns invalid UTF-8 into U+FFFD (one per
			 * byte) instead of failing; jansson refuses it */
			char *fixed = replace_invalid_utf8(text, len, &fixed_len);
			if (fixed == NULL)
				return fbc_error_set(err, FBC_ENOMEM, NULL, "out of memory");
			j = json_loadb(fixed, fixed_len, JSON_DISABLE_EOF_CHECK | JSON_ALLOW_NUL,
				       &jerr);
			free(fixed);
		}
		if (j != NULL) {
			*out = j;
			*is_json = true;
			*line = 1;
			for (size_t i = 0; i < len && text[i] != '{'; i++)
				*line += text[i] == '\n';
			return 0;
		}
		/* apimachinery >= 0.33 retries the whole file as YAML; the JSON
		 * error is the one reported when that fails too */
		rc = yaml_path(out, line, why, why_line, text, len, &lim, err);
		if (rc != 0 || *why == NULL)
			return rc;
		free(*why);
		*why = msg("json: line %d column %d: %s", jerr.line, jerr.column, jerr.text);
		*why_line = jerr.line;
		return *why ? 0 : fbc_error_set(err, FBC_ENOMEM, NULL, "out of memory");
	}
	return yaml_path(out, line, why, why_line, text, len, &lim, err);
}
