/*
 * Helpers for the fbc unit tests: build a linked catalog from JSON lines
 * (one blob per line, without the loader) and query the findings.
 * Test-only; not thread-safe.
 */
#ifndef FBC_TEST_FBC_UTIL_H
#define FBC_TEST_FBC_UTIL_H

#include "service/fbc/model.h"
#include "service/fbc/validate.h"

#include <stdbool.h>
#include <stdio.h>

typedef struct tcat {
	fbc_catalog *cat;
	fbc_diags diags;
} tcat;

/* Decode every line of `jsonl` as a meta of file "t.json" (line = line
 * number), add it, link. Aborts the test on a hard error. */
void tcat_load(tcat *t, const char *jsonl);
/* The same with these limits (NULL: defaults) given to fbc_catalog_create. */
void tcat_load_limits(tcat *t, const char *jsonl, const fbc_load_limits *lim);
/* tcat_load then fbc_validate (strict as given). */
void tcat_validate(tcat *t, const char *jsonl, bool strict);
void tcat_dispose(tcat *t);
/* One line per record and finding of cat and d, with everything decoding produces. */
void tcat_fingerprint(FILE *f, const fbc_catalog *cat, const fbc_diags *d);
/* Validate cat (findings added to diags), then its fingerprint as a malloc'd string. */
char *tcat_validate_print(fbc_catalog *cat, fbc_diags *diags);

size_t tcat_count(const tcat *t, const char *code);
/* The first finding with this code, or NULL. */
const fbc_diag *tcat_find(const tcat *t, const char *code);
/* Print all findings (for failing tests). */
void tcat_dump(const tcat *t);

#endif
