/*
 * OCI image primitives shared by the builder (pipeline/image), the registry
 * client (client.h) and the CLI: media types, sha256 digests, platforms,
 * descriptors, manifest and index parsing (OCI and Docker v2s2 / manifest
 * list), and the OCI image layout on disk (oci-layout, index.json,
 * blobs/sha256/...).
 *
 * Every input is bounded: manifests and indexes at FBC_OCI_MANIFEST_MAX
 * bytes and FBC_OCI_ITEMS_MAX descriptors; strings at their field sizes.
 * Pure functions over caller-owned values; the layout functions touch only
 * the directory given. Thread-safe as long as two threads do not write the
 * same layout.
 */
#ifndef FBC_OCI_OCI_H
#define FBC_OCI_OCI_H

#include "service/base/buf.h"
#include "service/base/error.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define FBC_OCI_MT_INDEX	   "application/vnd.oci.image.index.v1+json"
#define FBC_OCI_MT_MANIFEST	   "application/vnd.oci.image.manifest.v1+json"
#define FBC_OCI_MT_CONFIG	   "application/vnd.oci.image.config.v1+json"
#define FBC_OCI_MT_LAYER_GZIP	   "application/vnd.oci.image.layer.v1.tar+gzip"
#define FBC_OCI_MT_LAYER_TAR	   "application/vnd.oci.image.layer.v1.tar"
#define FBC_OCI_MT_DOCKER_MANIFEST "application/vnd.docker.distribution.manifest.v2+json"
#define FBC_OCI_MT_DOCKER_LIST	   "application/vnd.docker.distribution.manifest.list.v2+json"
#define FBC_OCI_MT_DOCKER_CONFIG   "application/vnd.docker.container.image.v1+json"
#define FBC_OCI_MT_DOCKER_LAYER	   "application/vnd.docker.image.rootfs.diff.tar.gzip"

/* The label catalog consumers (catalogd, opm, IIB) look for. */
#define FBC_OCI_LABEL_CONFIGS "operators.operatorframework.io.index.configs.v1"

#define FBC_OCI_MANIFEST_MAX ((size_t)4 << 20)
#define FBC_OCI_CONFIG_MAX   ((size_t)8 << 20)
#define FBC_OCI_ITEMS_MAX    1024
#define FBC_OCI_DIGEST_MAX   72 /* "sha256:" + 64 hex + NUL, with room */
#define FBC_OCI_MT_MAX	     128

/* ---- digests ---- */

/* "sha256:<hex>" of data. */
void fbc_oci_sha256(char out[FBC_OCI_DIGEST_MAX], const void *data, size_t len);

/* Incremental sha256 (OpenSSL underneath). */
typedef struct fbc_oci_hasher {
	void *ctx;
} fbc_oci_hasher;
int fbc_oci_hasher_init(fbc_oci_hasher *h, fbc_error *err);
void fbc_oci_hasher_update(fbc_oci_hasher *h, const void *data, size_t len);
/* Writes "sha256:<hex>" and releases the context. */
void fbc_oci_hasher_final(fbc_oci_hasher *h, char out[FBC_OCI_DIGEST_MAX]);
void fbc_oci_hasher_dispose(fbc_oci_hasher *h);

/* "sha256:" followed by exactly 64 lowercase hex digits (the only algorithm
 * fbcd writes or accepts). */
bool fbc_oci_digest_valid(const char *d);

/* ---- platforms ---- */

typedef struct fbc_oci_platform {
	char os[32];
	char architecture[32];
	char variant[32]; /* "" when none */
} fbc_oci_platform;

/* "os/arch[/variant]" with os and arch among Go's GOOS/GOARCH values
 * (linux/amd64, linux/arm64, linux/arm/v7, linux/ppc64le, linux/s390x, ...).
 * FBC_EINVAL naming the part that is unknown. */
int fbc_oci_platform_parse(fbc_oci_platform *out, const char *s, fbc_error *err);
/* "os/arch[/variant]" into buf (always NUL-terminated). */
void fbc_oci_platform_format(const fbc_oci_platform *p, char *buf, size_t size);
/* Same os and architecture, and same variant (arm64's "" and "v8" are equal). */
bool fbc_oci_platform_equal(const fbc_oci_platform *a, const fbc_oci_platform *b);

/* ---- descriptors, manifests, indexes ---- */

typedef struct fbc_oci_descriptor {
	char media_type[FBC_OCI_MT_MAX];
	char digest[FBC_OCI_DIGEST_MAX];
	int64_t size;
	bool has_platform;
	fbc_oci_platform platform;
	char ref_name[256]; /* annotation org.opencontainers.image.ref.name; "" when none */
} fbc_oci_descriptor;

enum { FBC_OCI_KIND_MANIFEST = 1, FBC_OCI_KIND_INDEX = 2 };

typedef struct fbc_oci_manifest {
	int kind;			 /* FBC_OCI_KIND_* */
	char media_type[FBC_OCI_MT_MAX]; /* the document's own (or the Content-Type given) */
	fbc_oci_descriptor config;	 /* manifests only */
	fbc_oci_descriptor *items;	 /* layers (manifest) or manifests (index); malloc'd */
	size_t n_items;
} fbc_oci_manifest;

/* Parse an image manifest or index (OCI or Docker v2s2 / manifest list).
 * content_type (may be NULL) is the Content-Type it came with: it decides
 * when the document has no mediaType, and must agree when it has one.
 * Every descriptor needs a valid sha256 digest and a size >= 0; a manifest a
 * config and a schemaVersion of 2. FBC_EPARSE / FBC_EINVAL / FBC_ELIMIT with
 * the field at fault. */
int fbc_oci_manifest_parse(fbc_oci_manifest *out, const char *data, size_t len,
			   const char *content_type, fbc_error *err);
void fbc_oci_manifest_dispose(fbc_oci_manifest *m);

/* ---- OCI image layout ---- */

/* Create dir (and parents) with oci-layout and blobs/sha256/. An existing
 * layout is kept (blobs are content-addressed). */
int fbc_oci_layout_init(const char *dir, fbc_error *err);
/* Store data as a blob; writes its digest to digest_out (may be NULL).
 * Atomic (temporary file, then rename). */
int fbc_oci_layout_put(const char *dir, char digest_out[FBC_OCI_DIGEST_MAX], const void *data,
		       size_t len, fbc_error *err);
/* Store the file src_path, which the caller knows hashes to digest (hard
 * link when possible, else a copy). */
int fbc_oci_layout_put_file(const char *dir, const char *digest, const char *src_path,
			    fbc_error *err);
/* Path of a blob, into buf. FBC_EINVAL for a malformed digest. */
int fbc_oci_layout_blob_path(char *buf, size_t size, const char *dir, const char *digest,
			     fbc_error *err);
bool fbc_oci_layout_has(const char *dir, const char *digest);
/* Read a blob (at most max bytes) and check that it hashes to its name. */
int fbc_oci_layout_read(fbc_buf *out, const char *dir, const char *digest, size_t max,
			fbc_error *err);
/* Write index.json naming one image (the index or manifest `top`), with
 * ref_name as its org.opencontainers.image.ref.name when not NULL. */
int fbc_oci_layout_write_index(const char *dir, const fbc_oci_descriptor *top, const char *ref_name,
			       fbc_error *err);
/* The image of the layout: the descriptor of index.json whose ref name is
 * ref_name, or, with ref_name NULL, the only one (FBC_EINVAL when there are
 * several). */
int fbc_oci_layout_root(fbc_oci_descriptor *out, const char *dir, const char *ref_name,
			fbc_error *err);

/* Seconds since the epoch as RFC 3339 UTC ("2006-01-02T15:04:05Z"). */
void fbc_oci_format_time(char out[32], int64_t t);

#endif
