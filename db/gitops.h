/*
 * The GitOps half of the database layer (pipeline.md §2, §4, §9): the
 * durable job queue, watched repositories, webhook deliveries, pull-request
 * check results and commits. Same rules as db.h: named prepared statements,
 * JSON results shaped like the REST responses, 0 or a negative FBC_E* code.
 *
 * Queue semantics (jobs / job_events, migrations/0002_gitops.sql):
 *  - a job is identified for deduplication by (kind, key): at most one live
 *    (queued or running) job per pair. Enqueueing a live pair again is a
 *    no-op returning the live job, unless `supersede` (a newer head of a pull
 *    request): then the live job is cancelled and a new one queued.
 *  - claims take queued jobs whose run_after has come, highest priority then
 *    lowest id, with FOR UPDATE SKIP LOCKED; an `ordered` job (writes of a
 *    repository) is claimable only when no older ordered job of the same
 *    repository is queued or running.
 *  - a running job holds a lease (worker id + lease_until) renewed by its
 *    worker; an expired lease returns the job to queued (or failed when its
 *    attempts are spent).
 *  - complete/fail only apply while the caller still holds the job
 *    (FBC_ECONFLICT otherwise: the lease expired or the job was cancelled),
 *    in one transaction with the job's effect, so a job whose lease was lost
 *    leaves no effect behind.
 *  - every transition is a job_events row with a reason; enqueue sends
 *    NOTIFY fbcd_jobs (delivered at commit).
 *
 * Thread-safety: as db.h. A listener belongs to one thread.
 */
#ifndef FBC_DB_GITOPS_H
#define FBC_DB_GITOPS_H

#include "db/db.h"

#include <stdbool.h>
#include <stdint.h>

/* ---------------------------------------------------------------- jobs */

#define FBC_DB_JOB_CHANNEL     "fbcd_jobs"
#define FBC_DB_JOB_KEY_MAX     512
#define FBC_DB_JOB_PAYLOAD_MAX (1u << 20)

typedef struct fbc_db_job_spec {
	const char *kind;	/* required, <= 64 bytes */
	const char *key;	/* dedup key, required, <= FBC_DB_JOB_KEY_MAX */
	const char *repository; /* may be NULL */
	const char *payload;	/* JSON object text; NULL = {} */
	int priority;		/* higher first */
	bool ordered;		/* one at a time per repository, in id order */
	int max_attempts;	/* 0 = 5 */
	bool supersede;		/* cancel the live job of the same key first */
	int64_t delay_ms;	/* run_after = now + delay */
} fbc_db_job_spec;

/* *id receives the new job, or the live one when the key was already live
 * (then *created is false). created may be NULL. */
int fbc_db_job_enqueue(int64_t *id, bool *created, fbc_db *db, const fbc_db_job_spec *spec,
		       fbc_error *err);

/* A claimed job (strings malloc'd; fbc_db_job_dispose). */
typedef struct fbc_db_job {
	int64_t id;
	char *kind, *key, *repository, *payload;
	int attempts, max_attempts;
} fbc_db_job;
void fbc_db_job_dispose(fbc_db_job *job);

/* Claim one job for `worker` with a lease of lease_ms. kinds (NULL-terminated,
 * may be NULL = any) restricts the kinds claimed. Returns 1 with *job filled,
 * 0 when nothing is claimable, or a negative code. */
int fbc_db_job_claim(fbc_db_job *job, fbc_db *db, const char *worker, unsigned lease_ms,
		     const char *const *kinds, fbc_error *err);
/* Extend the lease of the listed running jobs of `worker` (ids: a
 * PostgreSQL bigint[] literal, "{1,2}"); *n (may be NULL) receives how many
 * are still held. */
int fbc_db_job_renew(int *n, fbc_db *db, const char *worker, const char *ids, unsigned lease_ms,
		     fbc_error *err);
/* Return running jobs with an expired lease to queued (failed when their
 * attempts are spent). *n (may be NULL) receives how many. */
int fbc_db_job_requeue_expired(int *n, fbc_db *db, fbc_error *err);
/* Is the job still running for this worker? 1 yes, 0 no (cancelled,
 * superseded or lease lost). */
int fbc_db_job_held(fbc_db *db, int64_t id, const char *worker, fbc_error *err);

/* Mark succeeded with result (JSON text or NULL). When effect is true, the
 * job's effect is recorded in job_effects under its key in the same
 * transaction (a later run of the key sees it with fbc_db_job_effect_get). */
int fbc_db_job_complete(fbc_db *db, int64_t id, const char *worker, const char *result, bool effect,
			fbc_error *err);
/* The recorded effect of a key: 1 with *result (JSON text, malloc'd, may be
 * NULL) when present, 0 when absent. */
int fbc_db_job_effect_get(char **result, fbc_db *db, const char *key, fbc_error *err);
/* A failed attempt: back to queued after backoff_ms when retry and
 * attempts remain, else failed. error is kept in the job and its history. */
int fbc_db_job_fail(fbc_db *db, int64_t id, const char *worker, const char *error, bool retry,
		    int64_t backoff_ms, fbc_error *err);

/* Admin actions. cancel: a queued or running job becomes cancelled
 * (FBC_ECONFLICT when already finished). retry: a failed or cancelled job
 * is queued again with its attempts reset (FBC_ECONFLICT when it is not
 * finished, or another live job has its key). out: the job JSON. */
int fbc_db_job_cancel(json_t **out, fbc_db *db, int64_t id, const char *reason, fbc_error *err);
int fbc_db_job_retry(json_t **out, fbc_db *db, int64_t id, const char *reason, fbc_error *err);

/* Job JSON: {"id", "kind", "key", "repository"|null, "payload", "state",
 *   "priority", "ordered", "attempts", "maxAttempts", "runAfter",
 *   "leaseUntil"|null, "worker"|null, "error"|null, "result"|null,
 *   "createdAt", "updatedAt", "startedAt"|null, "finishedAt"|null}
 * get adds "events": [{"at", "from"|null, "to", "attempt", "worker"|null,
 * "reason"|null}] oldest first. list: newest first, filters may be NULL. */
typedef struct fbc_db_job_filter {
	const char *kind, *state, *repository, *key;
} fbc_db_job_filter;
int fbc_db_job_list(json_t **out, fbc_db *db, const fbc_db_job_filter *f, const fbc_db_page *page,
		    fbc_error *err);
int fbc_db_job_get(json_t **out, fbc_db *db, int64_t id, fbc_error *err);
/* Jobs per kind and state: [{"kind", "state", "count"}] (metrics). */
int fbc_db_job_counts(json_t **out, fbc_db *db, fbc_error *err);

/* -------------------------------------------------------- repositories */

/* A repository (pipeline.md §2) as JSON, in and out:
 *   {"name", "url", "branch", "forge": {"kind", "api", "project", "report"},
 *    "credentials": {"tokenFile", "tokenEnv", "sshKeyFile",
 *                    "webhookSecretFile", "webhookSecretEnv"},
 *    "pollSeconds", "catalogs"|null, "publish"|null}
 * Output adds "origin" ("api"|"config"), "headCommit"|null, "fetchedAt"|null,
 * "createdAt", "updatedAt". Credentials are references only: a file path or
 * an environment variable name; any other key there is refused. */

/* Check a repository document (full, with defaults filled in place:
 * branch main, forge {kind none, report checks}, pollSeconds 300).
 * FBC_EINVAL with the field in err->where. */
int fbc_db_repo_check(json_t *spec, fbc_error *err);
/* Insert (FBC_ECONFLICT when the name exists) or, with upsert, insert or
 * replace. origin is "api" or "config". */
int fbc_db_repo_put(json_t **out, fbc_db *db, json_t *spec, const char *origin, bool upsert,
		    fbc_error *err);
/* Apply a JSON merge patch (RFC 7386) to the stored document, check it, store
 * it. The name cannot change. */
int fbc_db_repo_patch(json_t **out, fbc_db *db, const char *name, const json_t *patch,
		      fbc_error *err);
int fbc_db_repo_get(json_t **out, fbc_db *db, const char *name, fbc_error *err);
/* By name. */
int fbc_db_repo_list(json_t **out, fbc_db *db, const fbc_db_page *page, fbc_error *err);
int fbc_db_repo_delete(fbc_db *db, const char *name, fbc_error *err);
/* The repository whose forge (kind) project equals project (or, GitLab, the
 * numeric project id). FBC_ENOTFOUND when none. */
int fbc_db_repo_find_by_project(json_t **out, fbc_db *db, const char *kind, const char *project,
				const char *project_id, fbc_error *err);

/* ---------------------------------------------------------- deliveries */

typedef struct fbc_db_delivery {
	const char *forge, *delivery_id, *event, *action, *repository, *head_sha;
	long pull_request; /* 0 = none */
} fbc_db_delivery;

/* Pull-request bookkeeping done with a delivery (may be NULL). */
typedef struct fbc_db_pull_update {
	long number;
	const char *state; /* open, closed, merged */
	const char *head_sha, *base_ref, *author, *title;
	const char *approver;  /* added to the approvals, or NULL */
	const char *merge_sha; /* the merge commit of a merged PR, or NULL */
} fbc_db_pull_update;

/* Store a verified delivery, update its pull request and enqueue its jobs
 * (NULL-terminated array, may be NULL), all in one transaction. *dup is
 * true (and nothing changes) when the delivery id was already stored.
 * *job_id receives the first job's id (0 when none). */
int fbc_db_delivery_store(bool *dup, int64_t *job_id, fbc_db *db, const fbc_db_delivery *d,
			  const fbc_db_pull_update *pull, const struct fbc_db_job_spec *const *jobs,
			  fbc_error *err);
/* The pull request as stored: {"repository", "number", "state", "headSha",
 * "baseRef", "author", "title", "approvals": [...], "updatedAt"} plus
 * "checks": every pr.check result, newest first [{"headSha", "conclusion",
 * "result", "job", "createdAt"}] and "jobs": its pr.check jobs. */
int fbc_db_pull_get(json_t **out, fbc_db *db, const char *repository, long number, fbc_error *err);

/* One pr.check run (pipeline.md §5): the engine's JSON document. */
typedef struct fbc_db_pull_check {
	const char *repository;
	long number;
	const char *head_sha, *base_sha;
	const char *conclusion; /* success, action_required, failure */
	const char *result;	/* JSON text */
} fbc_db_pull_check;

/* Complete pr.check job job_id of worker with job_result and, in the same
 * transaction, store its pull_checks row (*check_id), set the pull
 * request's head, and — report_kind not NULL — enqueue the follow-up job
 * report_kind with key "report:<repository>:<number>:<check id>" and
 * payload {"repository", "number", "sha", "phase": "final", "pullCheck"}.
 * FBC_ECONFLICT, nothing stored, when the job is no longer held (superseded
 * by a newer head, cancelled, or its lease lost). */
int fbc_db_pull_check_store(int64_t *check_id, fbc_db *db, int64_t job_id, const char *worker,
			    const fbc_db_pull_check *pc, const char *job_result,
			    const char *report_kind, fbc_error *err);

/* GET /v1/repositories/{r}/pulls: {"items": [{"number", "state", "headSha",
 * "author", "title", "approvals", "mergeSha", "updatedAt", "conclusion" (of
 * the newest check)|null, "checks" (how many runs)}]}, the 500 most recently
 * updated first. FBC_ENOTFOUND for an unknown repository. */
int fbc_db_pull_list(json_t **out, fbc_db *db, const char *repository, fbc_error *err);
/* A stored check: {"id", "repository", "number", "headSha", "baseSha",
 * "conclusion", "result", "job", "newest": no later check of the pull
 * request exists}. FBC_ENOTFOUND when absent. */
int fbc_db_pull_check_get(json_t **out, fbc_db *db, int64_t id, fbc_error *err);
/* Remember the forge's summary comment id and/or the GitHub check runs
 * (JSON text) of the pull request; NULL leaves a value as it is. */
int fbc_db_pull_report_set(fbc_db *db, const char *repository, long number, const char *comment_id,
			   const char *check_runs, fbc_error *err);
/* The forge merged the pull request as merge_sha (state becomes merged), or
 * refused with error (merge_sha NULL; error NULL clears it). */
int fbc_db_pull_merge_set(fbc_db *db, const char *repository, long number, const char *merge_sha,
			  const char *error, fbc_error *err);

/* -------------------------------------------------------------- images */

/* One pushed image of a revision (pipeline.md §8): platforms and tags are
 * PostgreSQL text[] literals ("{linux/amd64,linux/arm64}"). */
typedef struct fbc_db_image {
	const char *catalog;
	int64_t revision;
	const char *digest, *media_type, *platforms, *repository, *tags;
	int64_t job_id; /* 0: none */
} fbc_db_image;

/* Record it; pushing the same digest again adds its tags. */
int fbc_db_image_record(fbc_db *db, const fbc_db_image *im, fbc_error *err);
/* GET /v1/catalogs/{c}/images: {"items": [{"catalog", "revision", "digest",
 * "mediaType", "platforms", "repository", "tags", "job", "pushedAt"}]},
 * newest first. FBC_ENOTFOUND for an unknown catalog. */
int fbc_db_image_list(json_t **out, fbc_db *db, const char *catalog, fbc_error *err);
/* GET /v1/images/{digest}: {"digest", "images": [...]}; FBC_ENOTFOUND when
 * nothing was pushed with it. */
int fbc_db_image_get(json_t **out, fbc_db *db, const char *digest, fbc_error *err);
/* What a build of revision `number` (0: the current one) needs:
 * {"catalog", "revision", "digest", "created" (commit time, else the
 * revision's time, in seconds), "commit"|null, "repository"|null,
 * "source" (the repository's URL)|null}. */
int fbc_db_revision_facts(json_t **out, fbc_db *db, const char *catalog, int64_t number,
			  fbc_error *err);

/* ---------------------------------------------------------- provenance */

typedef struct fbc_db_provenance {
	const char *repository, *commit, *author;
	long pull_request;    /* 0 = none */
	int64_t committed_at; /* seconds since the epoch */
} fbc_db_provenance;

/* Record where revision `number` of catalog came from, unless it already
 * says (the first commit that produced a content keeps it). */
int fbc_db_revision_provenance(fbc_db *db, const char *catalog, int64_t number,
			       const fbc_db_provenance *p, fbc_error *err);
/* The mirror of repository was fetched; head is the tracked branch's commit. */
int fbc_db_repo_fetched(fbc_db *db, const char *repository, const char *head, fbc_error *err);
/* Repositories with pollSeconds > 0 and no live repo.poll job (key
 * "poll:<name>"): [{"name", "delayMs"}], delayMs being what remains of
 * pollSeconds since the mirror was last fetched (0 when never or overdue). */
int fbc_db_repo_poll_due(json_t **out, fbc_db *db, fbc_error *err);
/* Remember a commit fbcd has looked at (idempotent). */
int fbc_db_commit_seen(fbc_db *db, const fbc_db_provenance *p, fbc_error *err);
/* The merged pull request whose merge (head or merge commit) is sha, 0 when
 * none is known. */
int fbc_db_pull_of_commit(long *number, fbc_db *db, const char *repository, const char *sha,
			  fbc_error *err);

/* GET /v1/repositories/{r}/commits/{sha} (§9): {"repository", "commit",
 * "pullRequest"|null, "author"|null, "committedAt"|null, "checks": [check
 * results of this head], "revisions": [{"catalog", "revision", "digest"}],
 * "images": [{"catalog", "revision", "digest", "repository", "tags"}],
 * "ingest": {"job", "state", "error"}|null}. sha may be a prefix of at least
 * 7 hex digits. FBC_ENOTFOUND for a commit fbcd has neither seen nor queued. */
int fbc_db_commit_get(json_t **out, fbc_db *db, const char *repository, const char *sha,
		      fbc_error *err);
/* GET .../bundles/{b}/history (§9): {"catalog", "package", "bundle",
 * "firstRevision": {"revision", "digest", "createdAt", "provenance"}|null,
 * "revisions": [numbers holding it, ascending], "images": [{"revision",
 * "digest", "repository", "tags", "pushedAt"}] of those revisions}. FBC_ENOTFOUND when no
 * revision of the catalog ever held the bundle. */
int fbc_db_bundle_history(json_t **out, fbc_db *db, const char *catalog, const char *package,
			  const char *bundle, fbc_error *err);

/* A session advisory lock (one fetch per repository across replicas):
 * blocks until held, for at most the statement timeout. */
typedef struct fbc_db_lock fbc_db_lock;
int fbc_db_lock_acquire(fbc_db_lock **out, fbc_db *db, const char *key, fbc_error *err);
void fbc_db_lock_release(fbc_db_lock *lk);

/* ------------------------------------------------------------ listener */

/* A dedicated connection LISTENing on a channel, outside the pool. */
typedef struct fbc_db_listener fbc_db_listener;
int fbc_db_listener_open(fbc_db_listener **out, fbc_db *db, const char *channel, fbc_error *err);
/* Wait up to timeout_ms for a notification: 1 notified, 0 timeout, or a
 * negative code (the connection is re-established on the next call). */
int fbc_db_listener_wait(fbc_db_listener *l, unsigned timeout_ms, fbc_error *err);
void fbc_db_listener_close(fbc_db_listener *l);

#endif
