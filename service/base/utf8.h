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

/* Write code point cp (at most U+10FFFF; the caller rules out surrogates
 * where they are not wanted) as UTF-8 at out; returns its length, 1 to 4. */
size_t fbc_utf8_encode(char out[4], uint32_t cp);

/* The value of hexadecimal digit c (either case), -1 when c is not one. */
int fbc_hex_digit(int c);

/* Eight bytes at a time, for scanners that skip runs of ordinary ASCII (read
 * a word with memcpy): whether any of its bytes has the high bit set, is
 * below n (n <= 128), or equals b. Exact (the classic "has a zero byte"
 * tests), whatever the byte order. */
#define FBC_WORD_ONES  0x0101010101010101ull
#define FBC_WORD_HIGHS 0x8080808080808080ull

static inline bool fbc_word_has_high(uint64_t w)
{
	return (w & FBC_WORD_HIGHS) != 0;
}

static inline bool fbc_word_has_below(uint64_t w, unsigned n)
{
	return ((w - FBC_WORD_ONES * n) & ~w & FBC_WORD_HIGHS) != 0;
}

static inline bool fbc_word_has_byte(uint64_t w, unsigned char b)
{
	return fbc_word_has_below(w ^ (FBC_WORD_ONES * b), 1);
}

#endif
