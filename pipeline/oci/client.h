/*
 * fbc_oci_client: push and pull over the OCI distribution API
 * (api-pipeline.md §6.1), on pipeline/net.
 *
 * Push (fbc_oci_push_layout) of the image an OCI layout holds: for every
 * blob, HEAD first; a cross-repository mount (?mount=&from=) from each
 * mount_from repository of the same registry; else a monolithic POST + PUT
 * (blobs up to chunk_size) or a chunked upload (POST, PATCH with
 * Content-Range per chunk, honouring OCI-Chunk-Min-Length, final PUT
 * ?digest=). Location headers are used exactly as returned. A blob whose
 * upload fails (a dropped connection, an upload session the registry lost)
 * is restarted from the POST, twice at most. Then every manifest by
 * digest, then the index by digest, the registry's Docker-Content-Digest
 * checked against ours each time, and only then the tags.
 *
 * Pull (fbc_oci_pull) of a manifest, OCI index, Docker v2s2 manifest or
 * manifest list into an OCI layout, choosing platforms, every digest and
 * size verified, manifests bounded (FBC_OCI_MANIFEST_MAX).
 *
 * Auth: anonymous; Basic; Bearer tokens from the challenge of a 401
 * (WWW-Authenticate: Bearer realm=,service=,scope=), asked for with the
 * credentials (or a refresh/identity token) and cached per scope until they
 * expire. Credentials from creds_file ("user:password", or a token alone),
 * else the docker config.json (docker_config, else $DOCKER_CONFIG/config.json,
 * else ~/.docker/config.json): `auths` (`auth` or `identitytoken`),
 * `credHelpers` / `credsStore` (running docker-credential-<name> get).
 * Credentials are never logged nor put in error messages.
 *
 * Thread-safety: one client per thread.
 */
#ifndef FBC_OCI_CLIENT_H
#define FBC_OCI_CLIENT_H

#include "pipeline/net/net.h"
#include "pipeline/oci/oci.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct fbc_oci_ref {
	char registry[256];   /* host[:port] to talk to (docker.io: registry-1.docker.io) */
	char repository[256]; /* path */
	char tag[129];	      /* "" when absent */
	char digest[FBC_OCI_DIGEST_MAX]; /* "" when absent */
} fbc_oci_ref;

/* A docker image reference (service/fbc/imageref.h grammar). A reference
 * without tag or digest gets the tag "latest". FBC_EINVAL with the reason. */
int fbc_oci_ref_parse(fbc_oci_ref *out, const char *s, fbc_error *err);
bool fbc_oci_tag_valid(const char *tag);

/* ---- WWW-Authenticate (exposed for the tests and the fuzz target) ---- */

#define FBC_OCI_CHALLENGE_PARAMS 8
typedef struct fbc_oci_challenge {
	char scheme[16]; /* "bearer" or "basic", lowercase */
	char realm[1024];
	char service[256];
	char scope[1024];
	char error[64];
} fbc_oci_challenge;

/* Parse a WWW-Authenticate value: the first Bearer or Basic challenge
 * (auth-params with quoted or token values, several challenges separated by
 * commas). FBC_EPARSE when there is none or it is malformed. */
int fbc_oci_challenge_parse(fbc_oci_challenge *out, const char *header, fbc_error *err);

/* ---- client ---- */

typedef struct fbc_oci_client_options {
	bool insecure;		       /* http:// instead of https:// */
	const char *ca_file;	       /* else the system CAs */
	const char *creds_file;	       /* "user:password" or a bare token */
	const char *docker_config;     /* config.json path */
	size_t chunk_size;	       /* 0: 8 MiB */
	int max_retries;	       /* per request (pipeline/net); -1: default */
	const char *log_path;	       /* request log (pipeline/net) */
	const char *const *mount_from; /* repositories of the same registry */
	size_t n_mount_from;
} fbc_oci_client_options;

typedef struct fbc_oci_client fbc_oci_client;

int fbc_oci_client_create(fbc_oci_client **out, const fbc_oci_client_options *opts, fbc_error *err);
void fbc_oci_client_free(fbc_oci_client *c);
/* The underlying HTTP client (its request log). */
fbc_net *fbc_oci_client_net(fbc_oci_client *c);

typedef struct fbc_oci_push_stats {
	char digest[FBC_OCI_DIGEST_MAX]; /* of the image pushed (index or manifest) */
	size_t blobs_uploaded;
	size_t blobs_mounted;
	size_t blobs_existing;
	uint64_t bytes_uploaded;
	size_t manifests;
	size_t tags;
} fbc_oci_push_stats;

/* Push the image of layout dir (ref_name: its name there, NULL: the only
 * one) to dst's repository, then tag it dst->tag (if any) and each of tags.
 * A dst digest must equal the image's. */
int fbc_oci_push_layout(fbc_oci_client *c, fbc_oci_push_stats *stats, const char *dir,
			const char *ref_name, const fbc_oci_ref *dst, const char *const *tags,
			size_t n_tags, fbc_error *err);

/* Pull src into layout dir (created when missing), index.json naming it
 * ref_name (may be NULL). platforms (n > 0): only those of an index (an
 * index is then rewritten with just them; a single manifest must match
 * one); n == 0: everything. *top: what index.json names. */
int fbc_oci_pull(fbc_oci_client *c, fbc_oci_descriptor *top, const fbc_oci_ref *src,
		 const fbc_oci_platform *platforms, size_t n_platforms, const char *dir,
		 const char *ref_name, fbc_error *err);

/* GET a manifest (any of the four media types), verified against the
 * reference's digest when it has one and against Docker-Content-Digest.
 * body is bounded by FBC_OCI_MANIFEST_MAX. */
int fbc_oci_get_manifest(fbc_oci_client *c, fbc_buf *body, fbc_oci_descriptor *desc,
			 const fbc_oci_ref *ref, const char *reference, fbc_error *err);

#endif
