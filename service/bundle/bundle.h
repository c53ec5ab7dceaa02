/*
 * fbc_bundle_dir: a registry+v1 bundle directory (`manifests/` + `metadata/`),
 * read, validated and rendered into the `olm.bundle` blob exactly as opm
 * does it (design of record: spec bundles.md; rule ids B*, W*, N*, VF*, VC*
 * are that document's, FB1-FB3 are fbcd's own).
 *
 * Reading (fbc_bundle_read) goes through an fbc_tree, so a directory on
 * disk, a sub-view, files in memory and a git tree all work; the bundle is
 * the tree's root. It follows bundles.md §1.2 and §2 to the letter: the
 * files of manifests/ in byte order (no recursion, dot files skipped), the
 * 30-byte JSON sniff, only the first YAML document or JSON value of each
 * file, go-yaml v2 (YAML 1.1) typing, the first CSV by file name, and
 * metadata/ files chosen by content (first file satisfying each target).
 * Content problems never make reading fail: they are kept in the bundle and
 * reported by fbc_bundle_validate, and fbc_bundle_render fails on the first
 * one opm would fail on. fbc_bundle_read fails only when the tree cannot be
 * read (FBC_EIO, FBC_ENOMEM), when an input bound is exceeded (FBC_ELIMIT:
 * a file larger than max_file_bytes, too many files), or when the root is
 * not a bundle directory (FBC_ENOTFOUND: no manifests/ or metadata/
 * directory; see fbc_bundle_detect).
 *
 * Ownership: an fbc_bundle_dir is opaque, owned by the caller of
 * fbc_bundle_read and released with fbc_bundle_free; it does not keep the
 * tree (the tree may be freed after reading). Strings and json_t returned
 * by accessors are borrowed from the bundle.
 * Thread-safety: a bundle is immutable once read; accessors, render and
 * validate may run concurrently on the same bundle (each with its own
 * output buffer and diags). Reading several bundles concurrently is fine.
 */
#ifndef FBC_BUNDLE_H
#define FBC_BUNDLE_H

#include "service/base/buf.h"
#include "service/base/diag.h"
#include "service/base/error.h"
#include "service/base/tree.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

typedef struct fbc_bundle_dir fbc_bundle_dir;

typedef struct fbc_bundle_limits {
	size_t max_file_bytes;	/* one file in manifests/ or metadata/ (default 16 MiB) */
	size_t max_total_bytes; /* all files read (default 256 MiB) */
	size_t max_files;	/* entries in manifests/ plus metadata/ (default 10,000) */
} fbc_bundle_limits;

/* Whether directory `dir` of t ("" = root) is a bundle directory as opm
 * decides it (bundles.md §1.2): it has entries `manifests` and `metadata`
 * that are both directories (a symbolic link does not count). */
int fbc_bundle_detect(bool *out, fbc_tree *t, const char *dir, fbc_error *err);

/* Read the bundle at the root of t. lim may be NULL (defaults). Content
 * problems are kept in the bundle, not reported here: fbc_bundle_validate
 * reports them all (with file and line), fbc_bundle_render fails on the
 * first one opm fails on. File names in findings and errors are relative to
 * the bundle root ("manifests/csv.yaml"). */
int fbc_bundle_read(fbc_bundle_dir **out, fbc_tree *t, const fbc_bundle_limits *lim,
		    fbc_error *err);
void fbc_bundle_free(fbc_bundle_dir *b);

/* ---- What the bundle says (for add mode, templates, checks) ----
 * Strings are "" when absent (never NULL unless stated). */
const char *fbc_bundle_package(const fbc_bundle_dir *b);    /* annotations package.v1 */
const char *fbc_bundle_name(const fbc_bundle_dir *b);	    /* CSV metadata.name */
const char *fbc_bundle_version(const fbc_bundle_dir *b);    /* CSV spec.version, verbatim */
const char *fbc_bundle_replaces(const fbc_bundle_dir *b);   /* CSV spec.replaces */
const char *fbc_bundle_skip_range(const fbc_bundle_dir *b); /* CSV olm.skipRange annotation */
size_t fbc_bundle_skips_count(const fbc_bundle_dir *b);	    /* CSV spec.skips (strings only) */
const char *fbc_bundle_skip(const fbc_bundle_dir *b, size_t i);
/* annotations channels.v1 split on ',' as opm stores them (no trimming) */
size_t fbc_bundle_channels_count(const fbc_bundle_dir *b);
const char *fbc_bundle_channel(const fbc_bundle_dir *b, size_t i);
const char *fbc_bundle_default_channel(const fbc_bundle_dir *b);
/* Any key of the annotations file's `annotations` map (for example
 * "com.redhat.openshift.versions"), exact key; NULL when absent or not a
 * string. */
const char *fbc_bundle_annotation(const fbc_bundle_dir *b, const char *key);
/* The CSV object (first ClusterServiceVersion), NULL when there is none. */
const json_t *fbc_bundle_csv(const fbc_bundle_dir *b);

/* ---- Rendering (bundles.md §3-§5) ---- */
typedef enum fbc_bundle_migrate {
	FBC_BUNDLE_MIGRATE_NONE = 0,
	FBC_BUNDLE_MIGRATE_CSV_METADATA = 1 /* bundle-object-to-csv-metadata (also what opm's
					       deprecated --migrate means: all migrations) */
} fbc_bundle_migrate;

/* Parse an opm --migrate-level value: "none", "bundle-object-to-csv-metadata";
 * FBC_EINVAL with opm's `unknown migration level "L"` otherwise. */
int fbc_bundle_migrate_parse(fbc_bundle_migrate *out, const char *level, fbc_error *err);

/* Append the olm.bundle blob as compact JSON, member order as opm writes it
 * ({schema, name, package, image, properties, relatedImages}), HTML escaping
 * off, bundle objects base64 of Go's HTML-escaped sorted JSON: the exact
 * text opm's -o json writes before indentation. image is the bundle image
 * reference ("" for a plain directory, as `opm render DIR`). Fails with the
 * first B rule opm fails on (FBC_EINVAL, err->message is opm's message
 * without the `render reference "REF": ` wrapper, err->where the file).
 * With an empty package (N3) opm writes nothing: *written is false and
 * nothing is appended (written may be NULL). */
int fbc_bundle_render(fbc_buf *out, bool *written, const fbc_bundle_dir *b, const char *image,
		      fbc_bundle_migrate migrate, fbc_error *err);

/* `opm render -o json` of one blob: 4-space indentation, a final newline. */
int fbc_bundle_render_json(fbc_buf *out, bool *written, const fbc_bundle_dir *b, const char *image,
			   fbc_bundle_migrate migrate, fbc_error *err);

/* The olm.csv.metadata value (compact JSON, bundles.md §4.2) that migration
 * bundle-object-to-csv-metadata builds from a CSV object; used by templates
 * to migrate olm.bundle blobs taken from committed catalogs. FBC_EINVAL
 * (B19) where opm's typed decode fails. */
int fbc_bundle_csv_metadata_value(fbc_buf *out, const json_t *csv, fbc_error *err);

/* ---- Validation (bundles.md §6) ----
 * Adds every finding to diags: B2-B19 (what would fail `opm render`), VF1-VF9
 * and VC1-VC8 (`opm alpha bundle validate`), FB1 (a second CSV), FB2 (empty
 * package name), FB3 (a manifests/ file that does not decode); and, as
 * warnings (codes starting with "W"), W rules opm tolerates silently.
 * Returns 0 or FBC_ENOMEM. fbc_bundle_severity tells errors from warnings. */
int fbc_bundle_validate(const fbc_bundle_dir *b, fbc_diags *diags, fbc_error *err);

/* true when a finding code is an error (fails validation), false for the
 * W* warnings. */
bool fbc_bundle_code_is_error(const char *code);

#endif
