/*
 * fbc_queue: the workers of the durable job queue (pipeline.md §4) — a pool
 * of threads claiming jobs from PostgreSQL (db/gitops.h) and running the
 * handler of their kind from a table.
 *
 * Each process is one worker identity ("host:pid"); its threads claim with
 * FOR UPDATE SKIP LOCKED, a heartbeat thread renews the leases of the jobs
 * they run, a listener thread (LISTEN fbcd_jobs) wakes idle threads as soon
 * as a job is enqueued, and every idle thread polls anyway every poll_ms
 * (the fallback when notifications are lost, e.g. across a database
 * restart). Expired leases of dead workers are returned to the queue by
 * whichever worker notices first.
 *
 * Handler contract: read the payload, do the work, and either return 0 (the
 * queue marks the job succeeded with *result, and records the effect under
 * the job's key when the kind says so) or commit the effect together with
 * the completion itself (db functions taking the job id) and set
 * ctx->completed. A negative code fails the attempt: FBC_EUNAVAIL, FBC_EIO,
 * FBC_EINTERNAL and FBC_ENOMEM are transient and retried after an
 * exponential backoff with jitter until max_attempts; any other code fails
 * the job at once. A check that finds problems is a success.
 *
 * Ownership: the queue borrows db and the kind table. Thread-safety:
 * start/stop from one thread; handlers run concurrently.
 */
#ifndef FBC_PIPELINE_QUEUE_H
#define FBC_PIPELINE_QUEUE_H

#include "db/gitops.h"
#include "service/base/error.h"

#include <jansson.h>
#include <stdbool.h>

typedef struct fbc_queue fbc_queue;

typedef struct fbc_queue_ctx {
	fbc_db *db;
	const char *worker; /* this process's worker id */
	const fbc_db_job *job;
	void *app;	/* fbc_queue_options.app */
	bool completed; /* set by a handler that completed the job itself */
	/* a handler failing transiently because of another job it must wait
	 * for may ask for this backoff instead of the exponential one (ms) */
	long long retry_after_ms;
} fbc_queue_ctx;

/* *result (malloc'd JSON text or NULL) is stored with the job. */
typedef int (*fbc_queue_handler)(fbc_queue_ctx *ctx, json_t *payload, char **result,
				 fbc_error *err);

typedef struct fbc_queue_kind {
	const char *kind;
	fbc_queue_handler fn;
	bool record_effect; /* job_effects row under the key at completion */
} fbc_queue_kind;

typedef struct fbc_queue_options {
	unsigned workers;	/* threads; 0 = number of online CPUs */
	unsigned lease_ms;	/* 0 = 30000 */
	unsigned poll_ms;	/* 0 = 2000 */
	unsigned retry_base_ms; /* first backoff; 0 = 1000 (doubles, capped at 10 min) */
	const fbc_queue_kind *kinds;
	size_t n_kinds;
	void *app;
	bool log; /* one stderr line per job transition */
	/* Called every tick_ms (0 = 5 * poll_ms, within 1 s to 10 s) by one of
	 * the process's idle threads: periodic work such as scheduling polls.
	 * Its failures are logged once until it succeeds again. May be NULL. */
	int (*tick)(fbc_db *db, fbc_error *err);
	unsigned tick_ms;
} fbc_queue_options;

int fbc_queue_start(fbc_queue **out, fbc_db *db, const fbc_queue_options *opt, fbc_error *err);
/* Stop claiming, wait for the running handlers to return, join every thread.
 * Accepts NULL. */
void fbc_queue_stop(fbc_queue *q);
const char *fbc_queue_worker_id(const fbc_queue *q);

/* Backoff before attempt `attempt` + 1: base * 2^(attempt-1), capped at
 * 10 minutes, times a random factor in [0.5, 1.5) (jitter spreads retries
 * of many jobs failing together). rnd in [0, 1). */
long long fbc_queue_backoff_ms(unsigned base_ms, int attempt, double rnd);

/* Is the error code transient (worth a retry)? */
bool fbc_queue_transient(int code);

/* The built-in kinds (the table passed by `fbcd serve` and `fbcd worker`):
 * "noop" (payload {"sleepMs": n, "failAttempts": n}: sleeps, fails its first
 * n attempts with a transient error, logs "noop KEY attempt N" — the
 * diagnostic job the queue's tests and benchmark use) and the pipeline's
 * kinds as they are wired in. */
const fbc_queue_kind *fbc_queue_builtin_kinds(size_t *n);

#endif
