/*
 * gojson: JSON text exactly as Go's encoding/json writes it, for output that
 * must equal opm's byte for byte (rendered bundles, templates, `-o json`).
 *
 * - fbc_gojson_string: a string literal as Go's encoder writes it: `"` `\`
 *   \n \r \t \b \f escaped, other control bytes as \u00xx (lower-case hex),
 *   U+2028/U+2029 always as \u2028/\u2029, invalid UTF-8 as \ufffd, and with
 *   `html` also `<` `>` `&` as \u003c \u003e \u0026.
 * - fbc_gojson_number: a float64 as Go writes it (shortest round-trip
 *   digits, exponent form outside [1e-6, 1e21), `1e-07` -> `1e-7`).
 * - fbc_gojson_value: a decoded value (json_t) as json.Marshal writes an
 *   interface{}: compact, object keys sorted bytewise at every level.
 * - fbc_gojson_compact: json.Compact of raw JSON text (what Go does with a
 *   json.RawMessage): insignificant white space removed, nothing else
 *   changed; with `html`, `<` `>` `&` and U+2028/U+2029 escaped as Go's
 *   appendCompact does.
 * - fbc_gojson_indent: json.Indent of compact JSON text (prefix "", the
 *   given indent): what an Encoder with SetIndent writes; `{}` and `[]`
 *   stay on one line.
 *
 * All functions append to a caller-owned fbc_buf and return 0, FBC_ELIMIT
 * (the buffer's maximum) or FBC_ENOMEM; fbc_gojson_compact and
 * fbc_gojson_indent return FBC_EPARSE for text that is not JSON (the buffer
 * then holds a partial result). Pure functions: thread-safe.
 */
#ifndef FBC_GOJSON_H
#define FBC_GOJSON_H

#include "service/base/buf.h"
#include "service/base/error.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

int fbc_gojson_string(fbc_buf *b, const char *s, size_t n, bool html);
int fbc_gojson_number(fbc_buf *b, double f);
int fbc_gojson_value(fbc_buf *b, const json_t *v, bool html);
int fbc_gojson_compact(fbc_buf *b, const char *raw, size_t n, bool html);
int fbc_gojson_indent(fbc_buf *b, const char *json, size_t n, const char *indent);

/* Standard base64 (RFC 4648 alphabet, `=` padding, no line breaks), as Go's
 * base64.StdEncoding.EncodeToString. */
int fbc_gojson_base64(fbc_buf *b, const void *data, size_t n);

#endif
