/*
 * The in-memory catalog model: the typed form of olm.package, olm.channel,
 * olm.bundle and olm.deprecations blobs, plus other schemas kept verbatim.
 *
 * Build: fbc_catalog_create, then fbc_catalog_add_meta for each loaded meta
 * (typed decoding, rules L10-L12), then fbc_catalog_link (indexes by name,
 * derived bundle fields). fbc_validate (validate.h) runs rules C1-C28 and
 * V1-V12 on a linked catalog. fbc_catalog_load_dir does all of it for a tree.
 *
 * Ownership: the catalog owns everything reachable from it (one arena); all
 * strings are NUL-terminated and never NULL unless the field says so.
 * After fbc_catalog_link a catalog is read-only and may be shared between
 * threads. The structs are public for reading; only fbc/ writes them.
 */
#ifndef FBC_FBC_MODEL_H
#define FBC_FBC_MODEL_H

#include "service/base/arena.h"
#include "service/base/error.h"
#include "service/base/strmap.h"
#include "service/base/vec.h"
#include "service/base/diag.h"
#include "service/load/load.h"
#include "service/semver/semver.h"

#include <stdbool.h>
#include <stddef.h>

typedef struct fbc_property {
	const char *type;
	/* compact JSON text, keys sorted; NULL when `value` was absent;
	 * FBC_PROPERTY_NOT_KEPT (length 0) in a catalog loaded with
	 * fbc_load_limits.validate_only for a value that decoded (C11 passed)
	 * and that validation never reads */
	const char *value;
	size_t value_len;
} fbc_property;

extern const char FBC_PROPERTY_NOT_KEPT[];
/* A bundle's image in a catalog loaded with fbc_load_limits.validate_only and
 * validate_lean when it and every relatedImages image parse (images_valid): validation only
 * asks whether there is one (V9); the related images are not kept either. */
extern const char FBC_IMAGE_NOT_KEPT[];

/* The C11 verdict on one bundle property, decided at load while the value
 * is still parsed, so that validation need not parse the text again. */
typedef struct fbc_property_check {
	int state;	   /* 0 not decided (check the text), 1 decodes, -1 does not */
	const char *error; /* state -1: Go's error text */
} fbc_property_check;

typedef struct fbc_gvk {
	const char *group, *version, *kind;
} fbc_gvk;

typedef struct fbc_package_req {
	const char *package_name;
	const char *version_range; /* blang range text as written; may be "" */
} fbc_package_req;

typedef struct fbc_channel fbc_channel;
typedef struct fbc_bundle fbc_bundle;
typedef struct fbc_deprecation fbc_deprecation;
typedef struct fbc_other fbc_other;

typedef struct fbc_package {
	const char *name;
	const char *default_channel;
	const char *description;
	const char *icon_data;	    /* base64 text as written; NULL when no icon */
	const char *icon_mediatype; /* NULL when no icon */
	fbc_property *properties;
	size_t n_properties;
	fbc_loc loc;
	/* Filled by fbc_catalog_link. Channels and bundles sorted by name. */
	fbc_channel **channels;
	size_t n_channels;
	fbc_bundle **bundles;
	size_t n_bundles;
	fbc_deprecation *deprecation; /* NULL if none */
	fbc_other **others;	      /* other-schema blobs with this package, load order */
	size_t n_others;
} fbc_package;

typedef struct fbc_channel_entry {
	const char *name;
	const char *replaces; /* "" when absent */
	const char **skips;   /* may contain "" (V7) */
	size_t n_skips;
	const char *skip_range; /* "" when absent */
	fbc_bundle *bundle;	/* linked: the bundle of this name in the package, or NULL */
} fbc_channel_entry;

struct fbc_channel {
	const char *name;
	const char *package;
	fbc_channel_entry *entries;
	size_t n_entries;
	fbc_property *properties;
	size_t n_properties;
	fbc_loc loc;
	bool synthesized; /* created by the default-channel fix-up (spec §2.2) */
	fbc_package *pkg; /* linked, NULL if the package is unknown */
};

typedef struct fbc_related_image {
	const char *name;
	const char *image;
} fbc_related_image;

struct fbc_bundle {
	const char *name;
	const char *package;
	const char *image; /* "" when absent; FBC_IMAGE_NOT_KEPT (see above) */
	fbc_property *properties;
	size_t n_properties;
	fbc_related_image *related_images; /* NULL, 0 with FBC_IMAGE_NOT_KEPT */
	size_t n_related_images;
	fbc_loc loc;
	/* Derived by fbc_catalog_link from the properties (valid ones only). */
	fbc_package *pkg;	      /* NULL if unknown */
	const char *version;	      /* olm.package version text, "" if none */
	const char *release;	      /* olm.package release, "" if none */
	const char *olm_package_name; /* its packageName; NULL: no valid olm.package */
	fbc_semver semver;	      /* valid when has_semver */
	bool has_semver;
	fbc_gvk *provided; /* olm.gvk (none derived in a validate_lean load) */
	size_t n_provided;
	fbc_gvk *required; /* olm.gvk.required (the same) */
	size_t n_required;
	fbc_package_req *package_reqs; /* olm.package.required */
	size_t n_package_reqs;
	size_t n_bundle_objects; /* olm.bundle.object properties */
	const char *csv_json;	 /* the ClusterServiceVersion object as compact JSON, or NULL
				  * (always NULL when loaded with validate_only) */
	fbc_channel **channels;	 /* linked: channels (of its package) listing it, sorted by name */
	size_t n_channels;
	fbc_property_check *property_checks; /* NULL, or one per property (decode) */
	/* decode: the image and every relatedImages image parse, so C14/C15
	 * have nothing to report (decided on the parser threads); false: not
	 * known, validation parses them */
	bool images_valid;
	bool derived; /* the derived fields above are filled (decode or link) */
};

typedef struct fbc_deprecation_entry {
	const char *schema; /* reference.schema */
	const char *name;   /* reference.name, "" for olm.package */
	const char *message;
} fbc_deprecation_entry;

struct fbc_deprecation {
	const char *package;
	fbc_deprecation_entry *entries;
	size_t n_entries;
	fbc_loc loc;
};

struct fbc_other {
	const char *schema;
	const char *package; /* "" when absent */
	const char *name;    /* "" when absent */
	const char *blob;    /* compact JSON, keys sorted */
	size_t blob_len;
	fbc_loc loc;
};

typedef struct fbc_catalog {
	fbc_arena *arena;
	/* Load order, pointers into the arena. */
	fbc_vec packages;     /* of fbc_package * */
	fbc_vec channels;     /* of fbc_channel * */
	fbc_vec bundles;      /* of fbc_bundle * */
	fbc_vec deprecations; /* of fbc_deprecation * */
	fbc_vec others;	      /* of fbc_other * */
	/* After link: the first package of each name, and packages sorted by name. */
	fbc_strmap package_index;
	fbc_package **sorted_packages;
	size_t n_sorted_packages;
	bool linked;
	bool shared_records; /* records decoded for a file cache: commit copies them */
	fbc_load_limits limits;
	fbc_strmap files; /* interned blob file names (keys and values in the arena) */
} fbc_catalog;

#define FBC_CATALOG_AT(vec, type, i) (((type **)(vec).items)[(i)])

int fbc_catalog_create(fbc_catalog **out, const fbc_load_limits *lim, fbc_error *err);
void fbc_catalog_free(fbc_catalog *cat);

/* Typed decode of one meta (L10, L11, L12). Findings go to diags; returns an
 * error only when the catalog could not record it (out of memory). */
int fbc_catalog_add_meta(fbc_catalog *cat, const fbc_meta *meta, fbc_diags *diags, fbc_error *err);

/* Build indexes and derived fields. Idempotent. */
int fbc_catalog_link(fbc_catalog *cat, fbc_error *err);

/* Load a tree (any fbc_tree backend) into a new, linked catalog (findings
 * in diags, files relative to the tree's root). */
int fbc_catalog_load_tree(fbc_catalog **out, fbc_tree *t, const fbc_load_limits *lim,
			  fbc_diags *diags, fbc_error *err);
/* The same over a directory on disk. */
/*
 * A file cache for catalog loads (service/fbc/load.c): the decoded records
 * of each file a load read from a tree whose entries have content ids (git
 * trees), by that id and the limits that shape the records. A later load of
 * any tree holding the same file takes its records instead of reading and
 * parsing it again (findings included, placed at the new path), so a catalog
 * in which one package changed re-reads that package only. Thread-safe;
 * bounded by max_bytes (0: 256 MiB) of file content, least recently used out.
 * Catalogs loaded through it hold what they use: the cache may be freed first.
 */
typedef struct fbc_catalog_cache fbc_catalog_cache;
int fbc_catalog_cache_create(fbc_catalog_cache **out, size_t max_bytes, fbc_error *err);
void fbc_catalog_cache_free(fbc_catalog_cache *c);
void fbc_catalog_cache_stats(fbc_catalog_cache *c, size_t *files, size_t *bytes, size_t *hits,
			     size_t *misses);
/* fbc_catalog_load_tree through cache cc (NULL: none). */
int fbc_catalog_load_tree_cached(fbc_catalog **out, fbc_tree *t, const fbc_load_limits *lim,
				 fbc_catalog_cache *cc, fbc_diags *diags, fbc_error *err);

int fbc_catalog_load_dir(fbc_catalog **out, const char *root, const fbc_load_limits *lim,
			 fbc_diags *diags, fbc_error *err);

/* Look-ups on a linked catalog; NULL when absent. */
fbc_package *fbc_catalog_package(const fbc_catalog *cat, const char *name);
fbc_channel *fbc_package_channel(const fbc_package *pkg, const char *name);
fbc_bundle *fbc_package_bundle(const fbc_package *pkg, const char *name);

#endif
