/*
 * Internals shared by the files of service/semver (not part of the contract).
 *
 * A parsed range is a list of terms grouped into OR-groups; each group is an
 * AND of its terms. Every term owns a copy of its version text, so a range
 * never points into the caller's string. Immutable after parse, hence safe
 * to share between threads.
 */
#ifndef FBC_SEMVER_INT_H
#define FBC_SEMVER_INT_H

#include "service/semver/semver.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

enum range_dialect { DIALECT_BLANG = 1, DIALECT_MASTERMINDS = 2 };

enum term_op {
	/* blang */
	OP_EQ,
	OP_NE,
	OP_GT,
	OP_GE,
	OP_LT,
	OP_LE,
	/* Masterminds */
	MM_TILDE_OR_EQ,
	MM_NE,
	MM_GT,
	MM_LT,
	MM_GE,
	MM_LE,
	MM_TILDE,
	MM_CARET,
};

struct range_term {
	enum term_op op;
	fbc_semver v;	  /* pre/build point into text */
	char *text;	  /* owned */
	bool dirty;	  /* Masterminds: a wildcard or short version */
	bool minor_dirty; /* Masterminds: 1, 1.x */
	bool patch_dirty; /* Masterminds: 1.2, 1.2.x */
};

struct range_group {
	size_t first, count; /* slice of terms */
	bool has_pre;	     /* Masterminds: a term of the group names a pre-release */
};

struct fbc_semver_range {
	enum range_dialect dialect;
	struct range_term *terms;
	size_t nterms, cap_terms;
	struct range_group *groups;
	size_t ngroups, cap_groups;
};

/* Allocation helpers used by both grammars. */
int range_new(struct fbc_semver_range **out, enum range_dialect d);
/* Start a new OR-group. */
int range_add_group(struct fbc_semver_range *r);
/* Append a term to the last group; text (len bytes) is copied and the
 * version's pre/build pointers are rebased into the copy. */
int range_add_term(struct fbc_semver_range *r, enum term_op op, const fbc_semver *v,
		   const char *text, size_t len, struct range_term **out_term);

/* Whether v satisfies one term (blang.c / masterminds.c). */
bool blang_term_matches(const struct range_term *t, const fbc_semver *v);
bool mm_term_matches(const struct range_term *t, const fbc_semver *v, bool include_pre);

/* Pre-release precedence as both libraries implement it (identifiers that
 * are all digits and fit in uint64 compare numerically and sort first). */
int semver_compare_pre(const char *a, size_t an, const char *b, size_t bn);

/* Write s quoted the way Go's %q does into dst (truncated with "..." if it
 * does not fit); returns dst. */
#define QUOTE_MAX 200
const char *go_quote(char dst[QUOTE_MAX], const char *s, size_t n);

/* Go's strings.TrimSpace (Unicode White_Space) on [*p, *p+*n). */
void go_trim_space(const char **p, size_t *n);

#endif
