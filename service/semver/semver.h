/*
 * Semantic versions and version ranges, in the two dialects OLM uses.
 *
 *  - blang/semver v4 (spec fbc-validation.md §2.7, resolver.md §4.1): strict
 *    versions (bundle versions), ParseTolerant (classic resolver), and
 *    ParseRange (skipRange; olm.package.required versionRange in classic).
 *  - Masterminds/semver v3 (resolver.md §4.2): the v1 `versionRange` of a
 *    request; `,` lists, x, X and * wildcards, ~, ^, ||, hyphen ranges, and its
 *    pre-release rules.
 *  - OLM releases (model.NewRelease): `olm.package.release`.
 *
 * Ownership: fbc_semver is a value type whose pre/build point into the
 * string that was parsed (borrowed; keep it alive). Ranges are opaque,
 * created with *_parse and released with fbc_semver_range_free; a parsed
 * range owns all its memory and is immutable, so it can be shared between
 * threads. All functions are thread-safe.
 */
#ifndef FBC_SEMVER_H
#define FBC_SEMVER_H

#include "service/base/error.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Input bounds: longer strings fail with FBC_ELIMIT. */
#define FBC_SEMVER_VERSION_MAX	    1024 /* bytes in a version string */
#define FBC_SEMVER_RANGE_MAX	    4096 /* bytes in a range string */
#define FBC_SEMVER_RANGE_TERMS_MAX  256	 /* comparators in one range, after expansion */
#define FBC_SEMVER_RANGE_GROUPS_MAX 64	 /* ||-separated groups in one range */

typedef struct fbc_semver {
	uint64_t major, minor, patch;
	const char *pre; /* pre-release without '-', borrowed; NULL if none */
	size_t pre_len;
	const char *build; /* build metadata without '+', borrowed; NULL if none */
	size_t build_len;
} fbc_semver;

/* blang semver.Parse: strict MAJOR.MINOR.PATCH[-PRE][+BUILD]. */
int fbc_semver_parse(fbc_semver *out, const char *s, size_t len, fbc_error *err);
/* blang semver.ParseTolerant: trims spaces, strips a leading v, pads missing
 * minor/patch with 0 and tolerates leading zeros as blang does. Pointers in
 * *out still point into s; the numeric parts are normalised. */
int fbc_semver_parse_tolerant(fbc_semver *out, const char *s, size_t len, fbc_error *err);

/* SemVer 2.0 precedence; build metadata ignored. Returns <0, 0, >0. */
int fbc_semver_compare(const fbc_semver *a, const fbc_semver *b);
/* Write the canonical form (with build metadata) into buf; returns the length
 * it needs (like snprintf). */
size_t fbc_semver_format(const fbc_semver *v, char *buf, size_t size);

/* OLM release (model.NewRelease): "" is no release; ≤20 chars; dot-separated
 * pre-release identifiers. Returns 0 when valid. */
int fbc_release_validate(const char *s, size_t len, fbc_error *err);
/* Compare two releases as pre-release identifier lists; "" sorts lowest. */
int fbc_release_compare(const char *a, const char *b);

typedef struct fbc_semver_range fbc_semver_range;

/* blang semver.ParseRange, quirks included (single-character tokens are
 * dropped, only lowercase x wildcards, no ~ ^ or brackets). Errors are
 * FBC_EPARSE with blang's message text, FBC_ELIMIT past the bounds above.
 * An empty group ("a || || b") parses, as in blang, and matches nothing
 * (blang would panic when evaluating it). */
int fbc_semver_range_parse_blang(fbc_semver_range **out, const char *s, fbc_error *err);
/* Masterminds semver.NewConstraint (v3.4), checked as Constraints.Check with
 * IncludePrerelease false: a pre-release version can only match an
 * ||-group that has a comparator with a pre-release. Messages are the
 * library's ("improper constraint: ...", "constraint parser error"). */
int fbc_semver_range_parse_masterminds(fbc_semver_range **out, const char *s, fbc_error *err);
/* Whether v is in the range (build metadata ignored); false for NULL. */
bool fbc_semver_range_contains(const fbc_semver_range *r, const fbc_semver *v);
void fbc_semver_range_free(fbc_semver_range *r);

#endif
