/*
 * UTF-8 decoding with Go's rules (unicode/utf8.DecodeRune): shortest form
 * only, no UTF-16 surrogates, nothing above U+10FFFF. fbcd must accept and
 * refuse exactly the bytes opm does (JSON text, file names, semver text,
 * CEL strings, database keys), so there is one decoder.
 * Pure functions: no state, safe from any thread.
 */
#ifndef FBC_BASE_UTF8_H
#define FBC_BASE_UTF8_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The length (1 to 4) of the valid UTF-8 sequence at p, of which avail
 * bytes may be read, and its code point in *cp (cp may be NULL); 0 when
 * the bytes there are not valid UTF-8 or avail is 0 (Go then reads
 * RuneError with width 1). */
size_t fbc_utf8_decode(uint32_t *cp, const unsigned char *p, size_t avail);

/* Whether all n bytes at s are valid UTF-8. */
bool fbc_utf8_valid(const char *s, size_t n);

#endif
