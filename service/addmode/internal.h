/*
 * Private state of service/addmode (not for use outside this folder).
 *
 * Strings, lists and records live in the index's arena and are immutable
 * once recorded, so a copy of a package (taken before every add, so that a
 * failed add can be undone) shares them and copies only the containers.
 */
#ifndef FBC_ADDMODE_INTERNAL_H
#define FBC_ADDMODE_INTERNAL_H

#include "service/addmode/addmode.h"
#include "service/base/arena.h"
#include "service/base/strmap.h"
#include "service/base/vec.h"
#include "service/semver/semver.h"

typedef struct am_strs {
	const char **v;
	size_t n;
} am_strs;

/* One bundle of the store (§1). */
typedef struct am_rec {
	const char *name;
	const char *version; /* "" when missing */
	const char *replaces;
	am_strs skips;
	const char *skip_range;
	const char *image; /* "" when unknown (PC-5) */
	am_strs channels;  /* annotation channels (only known for bundles added here) */
	const char *default_channel;
	const char *substitutes_for;
	const char *icon_data, *icon_mediatype; /* NULL when none */
	json_t *blob;				/* olm.bundle, or NULL (synthesised) */
	const fbc_addmode_property *props;	/* when blob is NULL */
	size_t n_props;
	bool deprecated;      /* a tombstone (§6.2) */
	bool cleared;	      /* SV-13: its stored CSV and manifests are gone */
	bool version_unknown; /* a tombstone rebuilt from an FBC (ST-4) */
	bool has_sv;
	fbc_semver sv; /* parsed version (strict) when has_sv */
} am_rec;

/* The rows of one name in one channel, merged: its chain pointer and its
 * skip edges. A bare member (skipped only) has neither. */
typedef struct am_member {
	const char *name;
	const char *next; /* chain successor (the entry's replaces), NULL */
	fbc_vec skips;	  /* of const char *: skip edges */
} am_member;

typedef struct am_channel {
	const char *name;
	const char *head;
	fbc_vec members;  /* of am_member *, insertion order */
	fbc_strmap index; /* name -> am_member * */
} am_channel;

typedef struct am_pkg {
	const char *name;
	const char *default_channel; /* NULL for a new package */
	fbc_vec recs;		     /* of am_rec *, insertion order */
	fbc_strmap rec_index;	     /* name -> am_rec * */
	fbc_vec channels;	     /* of am_channel *, sorted by name */
} am_pkg;

struct fbc_addmode_index {
	fbc_arena *arena;
	fbc_vec pkgs;		     /* of am_pkg *, sorted by name */
	fbc_strmap deprecated_names; /* DP-5: bundle name -> (void *)1, outlives packages */
};

/* SV-13 (load.go ClearNonHeadBundles, run after every add in the semver
 * modes): every stored bundle with an image that heads no channel of the
 * index loses its stored CSV and manifests. `p`: a package being added, not
 * yet in the index (its heads count, its records are cleared); NULL: every
 * package of the index. Records are replaced by cleared copies (records are
 * shared between package copies). */
int am_clear_non_heads(fbc_addmode_index *ix, am_pkg *p);

/* containers */
am_pkg *am_pkg_new(fbc_arena *a, const char *name);
void am_pkg_free(am_pkg *p);
am_pkg *am_pkg_clone(const am_pkg *p);
am_channel *am_channel_new(const char *name);
void am_channel_free(am_channel *c);
am_channel *am_pkg_channel(const am_pkg *p, const char *name);
/* Insert c, keeping channels sorted; replaces a channel of the same name. */
int am_pkg_put_channel(am_pkg *p, am_channel *c);
void am_pkg_drop_channel(am_pkg *p, const char *name);
am_member *am_channel_member(const am_channel *c, const char *name);
/* The member of that name, created bare when absent. NULL on OOM. */
am_member *am_channel_ensure(am_channel *c, const char *name);
int am_member_add_skip(am_member *m, const char *name);
am_rec *am_pkg_rec(const am_pkg *p, const char *name);
int am_pkg_put_rec(am_pkg *p, am_rec *r);
void am_pkg_remove_rec(am_pkg *p, const char *name);
/* Member of at least one channel. */
bool am_pkg_is_member(const am_pkg *p, const char *name);
am_pkg *am_index_pkg(const fbc_addmode_index *ix, const char *name);
/* Replace (or insert) the package of that name; the old one is freed. */
int am_index_put_pkg(fbc_addmode_index *ix, am_pkg *p);
void am_index_remove_pkg(fbc_addmode_index *ix, const char *name);

/* Version order of §1 (BuildIdCompare); missing versions sort as 0.0.0-z. */
int am_version_order(const am_rec *a, const am_rec *b);
/* SemVer precedence without build metadata (SV-4). */
int am_version_precedence(const am_rec *a, const am_rec *b);

/* Record a new bundle (strings copied into the arena). */
int am_rec_from_input(am_rec **out, fbc_arena *a, const fbc_addmode_bundle *b,
		      const fbc_addmode_opts *opts, fbc_error *err);

/* Errors: "A<n>: message", where = "package/bundle". */
int am_fail(fbc_error *err, int code, const char *rule, const char *pkg, const char *bundle,
	    const char *fmt, ...) __attribute__((format(printf, 6, 7)));

/* The modes: run on a copy of the package. */
int am_add_replaces(fbc_addmode_index *ix, am_pkg *p, am_rec **news, size_t n,
		    const fbc_addmode_opts *opts, fbc_error *err);
int am_add_semver(fbc_addmode_index *ix, am_pkg *p, am_rec *nb, const fbc_addmode_opts *opts,
		  fbc_error *err);
/* RM-12: each new bundle reachable in each of its annotation channels. */
int am_check_reachable(const am_pkg *p, am_rec **news, size_t n, fbc_error *err);

/* §7.2 on one package (findings to diags when non-NULL): A32 when invalid.
 * full: the bundles whose whole blob is validated (NULL: all); the others
 * were validated by an earlier add and only their place in the graph is. */
int am_validate_pkg(const am_pkg *p, am_rec *const *full, size_t n_full, fbc_diags *diags,
		    fbc_error *err);

/* Format a list "[a b c]" (Go %v) into buf. */
void am_format_list(char *buf, size_t size, const char *const *v, size_t n);

#endif
