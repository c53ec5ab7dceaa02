/*
 * Helpers for the resolver tests: run a request given as JSON text (inline
 * FBC catalogs or catalog directories) and get the result JSON back, and a
 * subset matcher for expected outputs. Test-only; not thread-safe.
 */
#ifndef FBC_TEST_RESOLVER_RTEST_H
#define FBC_TEST_RESOLVER_RTEST_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

/* Resolve `input`; relative catalog paths are taken from base_dir (may be
 * NULL). Returns the result JSON (with stats) or NULL, printing why. */
json_t *rtest_resolve(json_t *input, const char *base_dir);
json_t *rtest_resolve_text(const char *input_json);

/* Does `actual` match `expected`? Objects: every expected key matches.
 * Arrays: same length, elementwise. Strings starting with "~" match when
 * the rest is a substring. Writes a path to the first mismatch into why. */
bool rtest_match(const json_t *expected, const json_t *actual, char *why, size_t why_size);

/* The names of the selected bundles, sorted, joined by spaces (static buffer). */
const char *rtest_selected(const json_t *result);

#endif
