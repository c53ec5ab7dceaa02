/*
 * Add mode: adding bundles to a catalog the way IIB does (`opm registry add
 * --mode replaces|semver|semver-skippatch` on the index's hidden database,
 * then `opm migrate`), spec index-add.md. Rule ids in comments (RM-8, SV-4,
 * ...) and error ids (A1-A36) are that document's.
 *
 * An fbc_addmode_index is the state of one index: per package the store of
 * every bundle ever added (stranded ones included), tombstones, the rows of
 * every channel and the default channel (§1). It is more than the FBC
 * shows; fbc_addmode_index_load rebuilds it from an FBC with the §7.3 rules
 * where nothing better is known. fbc_addmode_add adds bundles; a failed add
 * leaves the index exactly as it was (IIB restores its copy, P-6).
 * fbc_addmode_write_package renders a package as `opm migrate` would (§7.1).
 *
 * Errors: every add failure returns a negative FBC_E* code and fills the
 * fbc_error with `where` = "<package>/<bundle>" and a message that starts
 * with the rule id ("A21: add prunes bundle ..."), followed by opm's
 * wording. fbc_addmode_error_rule extracts the id.
 *
 * Ownership: the index owns everything it records (strings are copied,
 * json_t blobs are referenced). Inputs are borrowed for the call only.
 * Thread-safety: an index is not thread-safe; separate indexes are
 * independent.
 */
#ifndef FBC_ADDMODE_ADDMODE_H
#define FBC_ADDMODE_ADDMODE_H

#include "service/base/buf.h"
#include "service/base/error.h"
#include "service/fbc/model.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

/* Input bounds (an add beyond them fails with FBC_ELIMIT). */
#define FBC_ADDMODE_NAME_MAX	1024   /* bytes in a name, version, channel or image */
#define FBC_ADDMODE_LIST_MAX	4096   /* skips or channels of one bundle */
#define FBC_ADDMODE_REQUEST_MAX 1024   /* bundles in one add */
#define FBC_ADDMODE_PACKAGE_MAX 100000 /* bundles stored in one package */

typedef enum fbc_addmode_mode {
	FBC_ADDMODE_REPLACES = 0,
	FBC_ADDMODE_SEMVER = 1,
	FBC_ADDMODE_SEMVER_SKIPPATCH = 2,
} fbc_addmode_mode;

/* IN-8: "replaces", "semver", "semver-skippatch", case-insensitive; anything
 * else is A1. */
int fbc_addmode_mode_parse(fbc_addmode_mode *out, const char *s, fbc_error *err);
const char *fbc_addmode_mode_name(fbc_addmode_mode m);

/* One property of a bundle: type and value as compact JSON text. */
typedef struct fbc_addmode_property {
	const char *type;
	const char *value;
} fbc_addmode_property;

/* What an add needs to know about one bundle (§2). Strings NUL-terminated;
 * "" or NULL for absent. */
typedef struct fbc_addmode_bundle {
	const char *package;	  /* IN-3: the annotation, not the CSV */
	const char *name;	  /* CSV metadata.name (empty: A2) */
	const char *version;	  /* CSV spec.version ("" when missing) */
	const char *replaces;	  /* CSV spec.replaces */
	const char *const *skips; /* CSV spec.skips, n_skips of them */
	size_t n_skips;
	const char *skip_range;	     /* CSV annotation olm.skipRange, verbatim */
	const char *const *channels; /* IN-4: the annotation split on ',' */
	size_t n_channels;
	const char *default_channel; /* IN-5 */
	const char *image;	     /* IN-7: the bundle path */
	const char *substitutes_for; /* IN-6, 6.4 */
	const char *ocp_versions;    /* com.redhat.openshift.versions (not used by add, P-3) */
	const char *icon_data;	     /* CSV spec.icon[0].base64data (OUT-1) */
	const char *icon_mediatype;
	/* The olm.bundle blob as `opm render` writes it (service/bundle), or
	 * NULL: then a blob is made of name, package, image, the olm.package
	 * property and `properties` (OUT-7). */
	const json_t *blob;
	const fbc_addmode_property *properties;
	size_t n_properties;
} fbc_addmode_bundle;

typedef struct fbc_addmode_opts {
	fbc_addmode_mode mode;
	bool overwrite_latest; /* OW rules (never used by community production, OW-6) */
	bool disable_alpha;    /* without --enable-alpha: olm.substitutesFor is A8 */
	bool no_validate;      /* skip the §7.2 validation after the add */
	/* Do not apply SV-13: in the semver modes opm clears the stored CSV and
	 * manifests of every bundle of the index that heads no channel, so the
	 * FBC IIB publishes has no olm.bundle.object / olm.csv.metadata for
	 * them and their relatedImages have no names. Set, every bundle keeps
	 * its blob as rendered. */
	bool keep_bundle_objects;
} fbc_addmode_opts;

typedef struct fbc_addmode_index fbc_addmode_index;

int fbc_addmode_index_create(fbc_addmode_index **out, fbc_error *err);
void fbc_addmode_index_free(fbc_addmode_index *ix);
/* A deep copy (a new index for a new OCP version built from an old one). */
int fbc_addmode_index_clone(fbc_addmode_index **out, const fbc_addmode_index *ix, fbc_error *err);

/* §7.3 (ST-1..ST-6): rebuild the state of `package` (NULL: every package)
 * from a linked catalog. A package already in the index is replaced. */
int fbc_addmode_index_load(fbc_addmode_index *ix, const fbc_catalog *cat, const char *package,
			   fbc_error *err);

/* Add bundles. The bundles of one package form one request (in the given
 * order, which matters in the semver modes, IN-9): all are added or none.
 * Several packages are added one after the other in name order; a failure
 * stops there, the packages before it stay added. */
int fbc_addmode_add(fbc_addmode_index *ix, const fbc_addmode_bundle *const *bundles, size_t n,
		    const fbc_addmode_opts *opts, fbc_error *err);

/* `opm registry deprecatetruncate` (§6.2, DP-1..DP-5) on bundles of one
 * package. On failure the index is unchanged. */
int fbc_addmode_deprecate(fbc_addmode_index *ix, const char *package, const char *const *names,
			  size_t n, bool allow_package_removal, fbc_error *err);

/* §7.1: the package's blobs in `opm migrate` order (olm.package, channels
 * by name, bundles by name) appended to `out` (a JSON array, created by the
 * caller). FBC_ENOTFOUND when the package is unknown; A31 when a visible
 * bundle has no valid version. */
int fbc_addmode_package_blobs(const fbc_addmode_index *ix, const char *package, json_t *out,
			      fbc_error *err);
/* The same written as a JSON stream (one indented blob after another, as
 * `opm migrate` writes catalog.json). */
int fbc_addmode_write_package(const fbc_addmode_index *ix, const char *package, fbc_buf *out,
			      fbc_error *err);
/* §7.2: validate the package's FBC alone (fbc_validate). Findings go to
 * diags (may be NULL); returns A32 (FBC_EINVAL) with the first finding when
 * invalid. */
int fbc_addmode_validate_package(const fbc_addmode_index *ix, const char *package, fbc_diags *diags,
				 fbc_error *err);

/* Introspection (tests, reports). Strings are borrowed from the index and
 * valid until its next change. */
size_t fbc_addmode_package_count(const fbc_addmode_index *ix);
/* Package names in name order; i < fbc_addmode_package_count. */
const char *fbc_addmode_package_name(const fbc_addmode_index *ix, size_t i);
bool fbc_addmode_has_package(const fbc_addmode_index *ix, const char *package);
const char *fbc_addmode_default_channel(const fbc_addmode_index *ix, const char *package);
/* Head of a channel, NULL when the channel does not exist. */
const char *fbc_addmode_channel_head(const fbc_addmode_index *ix, const char *package,
				     const char *channel);
/* Whether a bundle is in the store / a tombstone / stranded (in the store,
 * member of no channel, RM-10). */
bool fbc_addmode_stored(const fbc_addmode_index *ix, const char *package, const char *name);
bool fbc_addmode_deprecated(const fbc_addmode_index *ix, const char *package, const char *name);
bool fbc_addmode_stranded(const fbc_addmode_index *ix, const char *package, const char *name);

/* The rule id ("A21") at the start of an add error's message, or "" when
 * the message has none (out of memory, I/O). Writes at most 8 bytes. */
void fbc_addmode_error_rule(const fbc_error *err, char out[8]);

#endif
