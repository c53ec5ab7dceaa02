/*
 * catalog.publish (pipeline.md §8): build the reproducible OCI image of a
 * stored revision (pipeline/image) and push it (pipeline/oci): blobs, the
 * manifests by digest, and only then the tags; then record it (table
 * images). Enqueued by repo.ingest for each publish target of the
 * repository whose catalog got a new revision, and by
 * POST /v1/catalogs/{c}/images.
 *
 * A publish target (a repository's `publish` list, or a POST body):
 *   {"catalog": NAME or glob (targets of a repository only),
 *    "image": "registry/repository[:tag]",
 *    "tags": ["latest", "rev-{revision}", "{commit}"],   extra tags
 *    "platforms": ["linux/amd64", ...],                  default linux/amd64
 *    "insecure": false,                                  plain HTTP registry
 *    "authfile": "/path/config.json",                    docker credentials
 *    "base": "registry/opm:tag"}                         a runnable image
 * Tags may use {catalog}, {revision} and {commit} (12 hex digits; a tag
 * naming {commit} is skipped for a revision without one).
 * The image is stamped with the revision's commit time (else the time the
 * revision was stored), so republishing a revision gives the same digest.
 */
#ifndef FBC_PIPELINE_PUBLISH_H
#define FBC_PIPELINE_PUBLISH_H

#include "db/db.h"
#include "pipeline/queue/queue.h"
#include "service/base/diag.h"
#include "service/fbc/model.h"

#include <jansson.h>

#define FBC_PUBLISH_KIND "catalog.publish"

/* Check a target (catalog_required: a repository's list). FBC_EINVAL with
 * the field. */
int fbc_publish_target_check(json_t *t, bool catalog_required, fbc_error *err);

/* Enqueue catalog.publish of catalog@revision to target (key
 * "publish:<catalog>:<revision>:<image>"); repository (may be NULL) orders
 * it after the repository's other writes. *job gets its id. */
int fbc_publish_enqueue(int64_t *job, fbc_db *db, const char *repository, const char *catalog,
			int64_t revision, json_t *target, fbc_error *err);

/* The publish targets (a list) whose catalog pattern matches catalog, each
 * enqueued for revision in repository's order. *n gets how many. */
int fbc_publish_for_revision(size_t *n, fbc_db *db, const char *repository, json_t *targets,
			     const char *catalog, int64_t revision, fbc_error *err);

/* A stored revision as a loaded, linked catalog (its canonical stream). */
int fbc_publish_load_revision(fbc_catalog **out, fbc_db *db, const fbc_db_rev *rev,
			      fbc_diags *diags, fbc_error *err);

/* The job handler: payload {"catalog", "revision", "target"}. */
int fbc_publish_run(fbc_queue_ctx *ctx, json_t *payload, char **result, fbc_error *err);

#endif
