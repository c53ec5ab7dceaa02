/*
 * fbc_template: render catalog templates (`olm.template.basic`, `olm.semver`)
 * into the FBC opm's `alpha render-template` writes, without pulling images
 * (design of record: spec templates.md). Bundle images are resolved from
 * fbc_template_sources in the order of §4.5: `olm.bundle` blobs of FBC
 * directories (exact image string), else a bundle directory
 * `<root>/<package>/<version>/` rendered by service/bundle, else an error
 * naming the image and the template line.
 *
 * Output is a list of blobs in opm's output order (§2.4), written as YAML
 * with service/goyaml (byte for byte as opm -o yaml) or as opm -o json.
 *
 * Ownership: fbc_template_sources is opaque (create/free); it keeps the
 * blobs it loaded and borrows nothing. fbc_template_result is caller-owned
 * (fbc_template_result_dispose). Errors: FBC_EINVAL with opm's message in
 * err->message and "FILE:LINE" in err->where; FBC_ENOTFOUND for an image
 * that resolves nowhere; FBC_EIO/FBC_ENOMEM/FBC_ELIMIT as usual.
 * Thread-safety: sources are read-only once built, and may be shared by
 * concurrent renders; building them is single-threaded.
 */
#ifndef FBC_TEMPLATE_H
#define FBC_TEMPLATE_H

#include "service/base/buf.h"
#include "service/base/diag.h"
#include "service/base/error.h"
#include "service/base/tree.h"
#include "service/bundle/bundle.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

typedef enum fbc_template_type {
	FBC_TEMPLATE_AUTO = 0, /* from the document's `schema` (opm v1.63+) */
	FBC_TEMPLATE_BASIC = 1,
	FBC_TEMPLATE_SEMVER = 2
} fbc_template_type;

typedef enum fbc_semver_rules {
	FBC_SEMVER_RULES_V171 = 0, /* §3.4 edges, §3.7 package icon/description */
	FBC_SEMVER_RULES_V146 = 1  /* §3.5 edges, no package metadata */
} fbc_semver_rules;

/* Parse "basic"/"semver" (type), "v1.71"/"v1.46" (rules). FBC_EINVAL otherwise. */
int fbc_template_type_parse(fbc_template_type *out, const char *s, fbc_error *err);
int fbc_semver_rules_parse(fbc_semver_rules *out, const char *s, fbc_error *err);

/* ---- bundle sources ---- */
typedef struct fbc_template_sources fbc_template_sources;

int fbc_template_sources_create(fbc_template_sources **out, fbc_error *err);
void fbc_template_sources_free(fbc_template_sources *s);
/* Index every olm.bundle blob (with a non-empty image) of the FBC directory
 * `dir` (a --bundles-from). Load findings go to diags (may be NULL); the
 * call fails only when the directory cannot be loaded. */
int fbc_template_sources_add_fbc(fbc_template_sources *s, const char *dir, fbc_diags *diags,
				 fbc_error *err);
/* Same from a tree (a git commit's catalogs/ directory, a sub-view): every
 * file below `dir` of t that the loader reads. */
int fbc_template_sources_add_fbc_tree(fbc_template_sources *s, fbc_tree *t, const char *dir,
				      fbc_error *err);
/* A --bundle-root: `<root>/<package>/<version>/` bundle directories. The
 * tree is borrowed and must outlive the sources. */
int fbc_template_sources_add_bundle_root(fbc_template_sources *s, fbc_tree *root, fbc_error *err);
/* --pull: images that resolve nowhere fail with "pulling is not available
 * yet" instead of "not found in any bundle source" (when no puller is set). */
void fbc_template_sources_set_pull(fbc_template_sources *s, bool pull);
/* The last source (templates.md §4.5): an image found in no FBC source and
 * no bundle root is read by pull(), which fetches it (service/ has no
 * network: the caller brings the registry client) and reads its bundle
 * directory into *out. Sets pull on. Called under no lock, possibly from
 * several render threads. */
typedef int (*fbc_template_puller)(fbc_bundle_dir **out, const char *image, void *ctx,
				   fbc_error *err);
void fbc_template_sources_set_puller(fbc_template_sources *s, fbc_template_puller pull, void *ctx);
/* Number of distinct images indexed from FBC sources. */
size_t fbc_template_sources_images(const fbc_template_sources *s);

/* ---- rendering ---- */
typedef struct fbc_template_opts {
	fbc_template_type type;
	fbc_bundle_migrate migrate;
	fbc_semver_rules semver_rules;
	const char *file; /* name used in messages (file:line) */
} fbc_template_opts;

typedef struct fbc_template_result {
	json_t *blobs; /* array of blob objects in output order */
} fbc_template_result;

void fbc_template_result_dispose(fbc_template_result *r);

/* Render the template text data[0..len) into r. */
int fbc_template_render(fbc_template_result *r, const char *data, size_t len,
			const fbc_template_opts *opts, fbc_template_sources *src, fbc_error *err);

/* The blobs as `opm ... -o yaml` writes them ("---\n" before each). */
int fbc_template_write_yaml(fbc_buf *out, const fbc_template_result *r, fbc_error *err);
/* The blobs as `opm ... -o json` writes them (4-space indent, struct order). */
int fbc_template_write_json(fbc_buf *out, const fbc_template_result *r, fbc_error *err);

/* For the pull-request checks: render template bytes and write YAML in
 * one call (opts->migrate as given; fbc_template_catalog_migrate gives the
 * community's level for a catalog name). */
int fbc_template_render_yaml(fbc_buf *out, const char *data, size_t len,
			     const fbc_template_opts *opts, fbc_template_sources *src,
			     fbc_error *err);

/* The same for the template at `path` of tree t (a git commit's tree, a
 * directory) rendered for catalog `catalog`: the migrate level comes from
 * the catalog name (§5.4), file names in errors are `path`. */
int fbc_template_render_tree_yaml(fbc_buf *out, fbc_tree *t, const char *path,
				  fbc_template_type type, const char *catalog,
				  fbc_semver_rules rules, fbc_template_sources *src,
				  fbc_error *err);

/* Compare rendered YAML with a committed catalog file: *same is true when
 * the bytes are equal; otherwise *blob is the 0-based index of the first
 * document that differs and *line the 1-based line of that document's
 * "---" in the committed file (in the rendered text when the committed
 * file is shorter). */
typedef struct fbc_template_diff {
	bool same;
	size_t blob;
	size_t line;
	size_t rendered_line;
} fbc_template_diff;

void fbc_template_compare(fbc_template_diff *out, const char *rendered, size_t rlen,
			  const char *committed, size_t clen);

/* ---- community conventions (§5) ---- */

/* Migrate level of a catalog by name (§5.4, the pipeline's rule): names
 * `vX.Y` (or `X.Y`) with version >= 4.17 migrate to olm.csv.metadata. */
fbc_bundle_migrate fbc_template_catalog_migrate(const char *catalog);

typedef struct fbc_template_mapping {
	char *template_name;
	fbc_template_type type;
	char **catalogs;
	size_t ncatalogs;
} fbc_template_mapping;

typedef struct fbc_template_ci {
	bool enabled;
	fbc_template_mapping *maps;
	size_t nmaps;
} fbc_template_ci;

/* Parse a ci.yaml's `fbc` block (§5.2). A file without `fbc` gives
 * enabled=false and no mappings. Errors name the file and field. */
int fbc_template_ci_parse(fbc_template_ci *out, const char *data, size_t len, const char *file,
			  fbc_error *err);
void fbc_template_ci_dispose(fbc_template_ci *ci);

/* release-config.yaml (§5.3) of a bundle directory. */
typedef struct fbc_template_release {
	json_t *doc; /* the decoded file */
} fbc_template_release;

int fbc_template_release_parse(fbc_template_release *out, const char *data, size_t len,
			       const char *file, fbc_error *err);
void fbc_template_release_dispose(fbc_template_release *rc);
size_t fbc_template_release_count(const fbc_template_release *rc);
const char *fbc_template_release_template(const fbc_template_release *rc, size_t i);

/* Apply catalog_templates item i of rc to the template *io (NULL: create it;
 * the result is then a new object) as the release bot does: basic templates
 * get missing channels appended, the bundle reference appended unless its
 * image is there, and {name, replaces?, skips?, skipRange?} appended to each
 * listed channel unless identical; defaultChannel is never changed on
 * amend. Semver templates get {Image} appended to each listed archetype
 * (Candidate, Fast, Stable, spelled as given). */
int fbc_template_add_bundle(json_t **io, const fbc_template_release *rc, size_t i,
			    fbc_template_type type, const char *op, const char *image,
			    const char *bundle_name, fbc_error *err);

#endif
