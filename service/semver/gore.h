/*
 * gore: a tiny regular-expression matcher with Go's (RE2 leftmost-first)
 * semantics, private to service/semver. It exists so that the Masterminds
 * grammar can be run from the library's own patterns instead of a
 * hand-written approximation.
 *
 * Supported syntax: literals, `.`, `[...]` classes with ranges and `^`,
 * escapes `\s \d \S \D` and escaped punctuation, groups `( )` and `(?: )`,
 * `|`, greedy `? * +`, anchors `^ $` (text start/end). Bytes, not runes:
 * fine for ASCII-only patterns.
 *
 * Matching is a backtracker that remembers visited (instruction, position)
 * pairs, as RE2's BitState does: time and memory are O(program × text), so
 * callers bound the text length.
 *
 * Ownership: gore_compile allocates, gore_free releases. A compiled program
 * is immutable; gore_search may run on it from many threads at once.
 */
#ifndef FBC_SEMVER_GORE_H
#define FBC_SEMVER_GORE_H

#include <stddef.h>

typedef struct gore gore;

/* 0, or -1 on a syntax error or out of memory. */
int gore_compile(gore **out, const char *pattern);
void gore_free(gore *re);
/* Number of capture groups, group 0 (the whole match) included. */
int gore_ncap(const gore *re);
/* Find the leftmost match starting at or after `from`. caps receives
 * 2*gore_ncap() offsets (start, end) per group, -1 when a group did not
 * take part. Returns 1 on a match, 0 on none, -1 on out of memory. */
int gore_search(const gore *re, const char *text, size_t len, size_t from, long *caps);

#endif
