/*
 * repo.ingest (pipeline.md §4, §8): bring a watched repository's mirror up
 * to date, build each catalog of one commit from git objects (never a
 * checkout) — the operator layout through pipeline/catalogs, else the plain
 * layout (the root is one catalog named after the repository) — validate it
 * and store it as a revision with its provenance {repository, commit,
 * pullRequest, author, committedAt}. Unchanged content makes no revision
 * (the digest is the same). An invalid catalog is not stored: the job
 * succeeds and its result lists the findings.
 *
 * Thread-safety: handlers run concurrently; the mirror fetch of one
 * repository is serialised across replicas by an advisory lock.
 */
#ifndef FBC_PIPELINE_INGEST_H
#define FBC_PIPELINE_INGEST_H

#include "pipeline/queue/queue.h"

/* What handlers need beyond the database (fbc_queue_options.app). */
typedef struct fbc_pipeline_env {
	const char *data_dir;	/* mirrors live in <data_dir>/mirrors/<repo>.git */
	const char *public_url; /* this service for forge users (report links), or NULL */
	const char *ca_file;	/* PEM bundle trusted instead of the system CAs for the
				 * forge API and registries (git: fbc_git_tls_init), or NULL */
	/* Called after a job made a new revision of catalog, so that a server
	 * in the same process stops answering "latest" from its caches. */
	void (*revision_created)(void *ctx, const char *catalog);
	void *revision_created_ctx;
} fbc_pipeline_env;

/* Fetch the repository's mirror (tracked branch and review refs) under the
 * advisory lock "mirror:<name>". repo is the repository JSON of db/gitops.h;
 * *path receives the mirror path (malloc'd). */
int fbc_ingest_mirror(char **path, fbc_db *db, const fbc_pipeline_env *env, json_t *repo,
		      fbc_error *err);

/* The repo.ingest handler: payload {"repository", "commit"}. */
int fbc_ingest_run(fbc_queue_ctx *ctx, json_t *payload, char **result, fbc_error *err);

/* The repo.poll handler (poll.c): payload {"repository"}. Fetches the mirror
 * and, when the tracked branch's tip is not the repository's head commit
 * (the last one ingested), enqueues repo.ingest of the tip under the key a
 * push webhook would use. Result {"head", "moved", "ingest"?}. */
int fbc_poll_run(fbc_queue_ctx *ctx, json_t *payload, char **result, fbc_error *err);

/* Enqueue a repo.poll job, delayed to its due time, for every repository
 * with pollSeconds > 0 and none live (fbc_db_repo_poll_due). Called by the
 * queue's periodic tick of every fbcd serve/worker process; the job key
 * keeps replicas from doubling polls. */
int fbc_poll_schedule(fbc_db *db, fbc_error *err);

#endif
