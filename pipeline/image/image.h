/*
 * fbc_image_build: a catalog as a reproducible OCI image, written to an OCI
 * image layout directory. No network, no SQL: the caller loads the catalog
 * (a directory, an fbc_tree, a stored revision) and, for a runnable image,
 * puts the base image into an OCI layout first (pipeline/oci pulls it).
 *
 * Content (spec pipeline.md §8): one gzip layer holding
 * configs/<package>/catalog.json, the canonical render of each package
 * (service/fbc/render.h); other-schema blobs without a package go to
 * configs/_nopackage/catalog.json. Directories 0755, files 0644, owner 0:0,
 * no user or group names, entries sorted, every mtime `created`; gzip without
 * name or time and with OS "unknown" (255) in its header.
 *
 * One config and one manifest per platform (architecture, os, variant,
 * rootfs.diff_ids, the label operators.operatorframework.io.index.configs.v1
 * =/configs, org.opencontainers.image.{created,source,revision} and
 * io.fbcd.revision as labels and manifest annotations, user labels), an
 * OCI image index over them with platform on each descriptor — or, with
 * single_manifest and one platform, the manifest alone. JSON is written
 * compact with sorted keys, so equal inputs give equal digests.
 *
 * With a base layout: for each platform the base's manifest for it (its
 * only one, or the one its index lists for that platform; any other
 * platform is refused), its layers under ours, its config kept with
 * Entrypoint ["/bin/opm"] and Cmd ["serve","/configs","--cache-dir=/tmp/cache"]
 * (as `opm generate dockerfile` writes them), our labels merged into its own.
 *
 * Thread-safety: no shared state; one build per output directory.
 */
#ifndef FBC_IMAGE_IMAGE_H
#define FBC_IMAGE_IMAGE_H

#include "pipeline/oci/oci.h"
#include "service/base/error.h"
#include "service/fbc/model.h"

#include <stdbool.h>
#include <stdint.h>

#define FBC_IMAGE_PLATFORMS_MAX 16
#define FBC_IMAGE_LABELS_MAX	64

typedef struct fbc_image_build_options {
	const fbc_oci_platform *platforms; /* n_platforms == 0: linux/amd64 */
	size_t n_platforms;
	int64_t created;	   /* seconds since the epoch (mtimes and "created") */
	const char *source;	   /* org.opencontainers.image.source; NULL: absent */
	const char *revision;	   /* org.opencontainers.image.revision (a commit); NULL: absent */
	const char *fbcd_revision; /* io.fbcd.revision ("catalog@N" or a digest); NULL: absent */
	const char *const *labels; /* "KEY=VALUE" */
	size_t n_labels;
	bool single_manifest;	   /* one platform: the manifest without an index */
	const char *base_layout;   /* OCI layout of the base image; NULL: FROM scratch */
	const char *base_ref_name; /* its image name in the layout; NULL: the only one */
	int gzip_level;		   /* 0: 6 (gzip's default) */
} fbc_image_build_options;

typedef struct fbc_image_result {
	fbc_oci_descriptor top; /* what index.json names: the index, or the one manifest */
	char layer_digest[FBC_OCI_DIGEST_MAX];
	char diff_id[FBC_OCI_DIGEST_MAX];
	int64_t layer_size;
	size_t n_packages;
	size_t n_platforms;
	fbc_oci_descriptor manifests[FBC_IMAGE_PLATFORMS_MAX]; /* with platform */
} fbc_image_result;

/* `created` from SOURCE_DATE_EPOCH when set (FBC_EINVAL if malformed), else
 * dflt. */
int fbc_image_created_from_env(int64_t *out, int64_t dflt, fbc_error *err);

/* Build the image of cat (loaded and linked; the caller validates it) into
 * the OCI layout out_dir (created when missing; index.json names the image,
 * with ref_name as its org.opencontainers.image.ref.name when not NULL). */
int fbc_image_build(fbc_image_result *out, const fbc_catalog *cat, const char *out_dir,
		    const char *ref_name, const fbc_image_build_options *opts, fbc_error *err);

/* Just the layer: the tar (into tar_out when not NULL), the gzip (appended
 * to gz_out) and the sha256 of the tar (into diff_id when not NULL) of cat.
 * The tar is hashed and compressed as it is written (see layer.c): the whole
 * tar is only kept when tar_out asks for it. */
int fbc_image_layer(fbc_buf *tar_out, fbc_buf *gz_out, char diff_id[FBC_OCI_DIGEST_MAX],
		    const fbc_catalog *cat, int64_t created, int gzip_level, size_t *n_packages,
		    fbc_error *err);

#endif
