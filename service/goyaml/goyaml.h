/*
 * goyaml: a YAML writer that produces, byte for byte, what go-yaml v2.4
 * writes through sigs.k8s.io/yaml (JSONToYAML / Marshal), i.e. what
 * `opm render -o yaml` and `opm alpha render-template -o yaml` put into a
 * catalog file (spec templates.md §6): go-yaml's natural key order, block
 * layout with indentless sequences, plain/single/double/literal scalar
 * selection from go-yaml's resolver and analyser, folding at 80 columns,
 * double-quoted escapes, literal block headers, Go float formatting.
 *
 * The value is a jansson tree as JSON would hold it (the writer never sees
 * YAML tags or anchors): strings, integers, reals, booleans, null, arrays,
 * objects. Numbers follow Go: a real with an integral value below 1e21 is
 * written as an integer (Go's encoding/json prints it so and go-yaml reads
 * it back as an int); other reals as strconv.FormatFloat(f, 'g', -1, 64).
 *
 * Ownership: output is appended to a caller-owned fbc_buf; nothing is kept.
 * Thread-safety: pure functions, safe from any thread.
 */
#ifndef FBC_GOYAML_H
#define FBC_GOYAML_H

#include "service/base/buf.h"
#include "service/base/error.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

/* Nesting deeper than this is refused (FBC_ELIMIT): the writer recurses. */
#define FBC_GOYAML_MAX_DEPTH 512

/* Append the YAML document of v (an object or an array; anything else is
 * FBC_EINVAL) to out, without a document marker, ending with one newline.
 * On failure out may hold a partial document. */
int fbc_goyaml_emit(fbc_buf *out, const json_t *v, fbc_error *err);

/* The same layout and scalar rules, but mapping keys in the object's own
 * order (for files people edit, such as catalog templates, where sorting
 * would rewrite every line). Not something go-yaml writes. */
int fbc_goyaml_emit_ordered(fbc_buf *out, const json_t *v, fbc_error *err);

/* "---\n" followed by fbc_goyaml_emit: one blob as declcfg.WriteYAML writes it. */
int fbc_goyaml_emit_document(fbc_buf *out, const json_t *v, fbc_error *err);

/* Whether go-yaml's resolve("", s) gives !!str for the plain scalar s (n
 * bytes): false for null/bool/int/float/timestamp spellings (§6.2). */
bool fbc_goyaml_plain_is_string(const char *s, size_t n);

/* go-yaml's keyList.Less on two UTF-8 keys: <0, 0 or >0 (§6.3). */
int fbc_goyaml_key_cmp(const char *a, const char *b);

/* Go strconv.FormatFloat(d, 'g', -1, 64) with go-yaml's .inf/.nan
 * spellings, into out (at least 32 bytes). */
void fbc_goyaml_format_float(char *out, size_t cap, double d);

#endif
