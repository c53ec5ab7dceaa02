/* The worker pool of the job queue (see queue.h). */
#include "pipeline/queue/queue.h"
#include "service/base/log.h"
#include "service/base/metrics.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const double job_buckets[] = {0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900};
static const fbc_metric_def m_job_duration = {
	.name = "fbcd_job_duration_seconds",
	.help = "Time a job attempt ran, by kind and outcome (succeeded, retry, failed).",
	.type = FBC_METRIC_HISTOGRAM,
	.labels = {"kind", "outcome"},
	.buckets = job_buckets,
	.n_buckets = sizeof(job_buckets) / sizeof(job_buckets[0])};
static const fbc_metric_def m_job_retries = {
	.name = "fbcd_job_retries_total",
	.help = "Job attempts that failed and will be retried.",
	.type = FBC_METRIC_COUNTER,
	.labels = {"kind"}};

static double elapsed_s(struct timespec t0)
{
	struct timespec t1;

	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
}

#define MAX_WORKERS  64
#define BACKOFF_MAX  (10LL * 60 * 1000)
#define ERROR_REPORT 2000 /* bytes of an error kept in the job */

struct worker_arg {
	struct fbc_queue *q;
	unsigned slot;
};

struct fbc_queue {
	fbc_db *db;
	fbc_queue_options opt;
	char worker[128];
	const char **kinds; /* NULL-terminated names for the claim filter */
	pthread_mutex_t mu;
	pthread_cond_t wake;
	unsigned long wakeups; /* bumped on every notification */
	atomic_bool stop;
	pthread_t threads[MAX_WORKERS], heartbeat, listener;
	int64_t running[MAX_WORKERS]; /* the job each thread runs (0: none), under mu */
	unsigned n_threads;
	bool heartbeat_ok, listener_ok;
	atomic_llong last_requeue_ms;
	atomic_llong last_tick_ms;
	atomic_bool tick_failing;
	struct worker_arg args[MAX_WORKERS];
};

static long long now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

long long fbc_queue_backoff_ms(unsigned base_ms, int attempt, double rnd)
{
	long long d = base_ms ? base_ms : 1000;

	for (int i = 1; i < attempt && d < BACKOFF_MAX; i++)
		d *= 2;
	if (d > BACKOFF_MAX)
		d = BACKOFF_MAX;
	return (long long)((double)d * (0.5 + rnd));
}

bool fbc_queue_transient(int code)
{
	return code == FBC_EUNAVAIL || code == FBC_EIO || code == FBC_EINTERNAL ||
	       code == FBC_ENOMEM;
}

const char *fbc_queue_worker_id(const fbc_queue *q)
{
	return q->worker;
}

/* Sleep up to ms, or until woken (a notification or stop). */
static void idle_wait(fbc_queue *q, unsigned ms, unsigned long seen)
{
	struct timespec dl;

	clock_gettime(CLOCK_REALTIME, &dl);
	dl.tv_sec += ms / 1000;
	dl.tv_nsec += (long)(ms % 1000) * 1000000L;
	if (dl.tv_nsec >= 1000000000L) {
		dl.tv_sec++;
		dl.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&q->mu);
	while (!atomic_load(&q->stop) && q->wakeups == seen)
		if (pthread_cond_timedwait(&q->wake, &q->mu, &dl) == ETIMEDOUT)
			break;
	pthread_mutex_unlock(&q->mu);
}

static void wake_all(fbc_queue *q)
{
	pthread_mutex_lock(&q->mu);
	q->wakeups++;
	pthread_cond_broadcast(&q->wake);
	pthread_mutex_unlock(&q->mu);
}

static const fbc_queue_kind *find_kind(fbc_queue *q, const char *kind)
{
	for (size_t i = 0; i < q->opt.n_kinds; i++)
		if (!strcmp(q->opt.kinds[i].kind, kind))
			return &q->opt.kinds[i];
	return NULL;
}

static double rnd01(unsigned *seed)
{
	return (double)(rand_r(seed) % 10000) / 10000.0;
}

static void set_running(fbc_queue *q, unsigned slot, int64_t id)
{
	pthread_mutex_lock(&q->mu);
	q->running[slot] = id;
	pthread_mutex_unlock(&q->mu);
}

static void sleep_ms(unsigned ms)
{
	struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
	while (nanosleep(&ts, &ts) != 0)
		;
}

/* The work is done: keep trying to record it while the lease lasts (a
 * database restart takes a few seconds); after that the job runs again
 * elsewhere, which its idempotence makes harmless. */
static int complete_job(fbc_queue *q, fbc_db_job *job, const char *result, bool effect,
			fbc_error *err)
{
	long long until = now_ms() + q->opt.lease_ms;
	int rc;

	for (;;) {
		rc = fbc_db_job_complete(q->db, job->id, q->worker, result, effect, err);
		if (rc != FBC_EUNAVAIL || now_ms() + 500 >= until || atomic_load(&q->stop))
			return rc;
		sleep_ms(500);
	}
}

static void run_job(fbc_queue *q, fbc_db_job *job, unsigned *seed)
{
	const fbc_queue_kind *k = find_kind(q, job->kind);
	fbc_queue_ctx ctx = {q->db, q->worker, job, q->opt.app, false, 0};
	json_error_t jerr;
	json_t *payload = NULL;
	char *result = NULL, msg[ERROR_REPORT];
	fbc_error err, e2;
	struct timespec t0;
	int rc;

	fbc_error_init(&err);
	fbc_error_init(&e2);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (q->opt.log)
		fbc_log(FBC_LOG_INFO,
			(fbc_log_field[]){FBC_LOG_STR("worker", q->worker),
					  FBC_LOG_NUM("job_id", job->id),
					  FBC_LOG_STR("job_kind", job->kind),
					  FBC_LOG_STR("job_key", job->key),
					  FBC_LOG_NUM("attempt", job->attempts),
					  FBC_LOG_NUM("max_attempts", job->max_attempts)},
			6, "job started");
	if (!k) {
		rc = fbc_error_set(&err, FBC_EINVAL, job->kind, "no handler for job kind '%s'",
				   job->kind);
	} else if (!(payload = json_loads(job->payload, 0, &jerr))) {
		rc = fbc_error_set(&err, FBC_EINVAL, "payload", "payload: %s", jerr.text);
	} else {
		rc = k->fn(&ctx, payload, &result, &err);
	}
	if (rc == 0 && !ctx.completed) {
		rc = complete_job(q, job, result, k ? k->record_effect : false, &err);
		if (rc != 0) {
			/* cancelled, lease lost or database gone: the effect was not
			 * committed, and the job runs again if it is still wanted */
			fbc_log(FBC_LOG_WARN,
				(fbc_log_field[]){FBC_LOG_STR("worker", q->worker),
						  FBC_LOG_NUM("job_id", job->id),
						  FBC_LOG_STR("job_kind", job->kind),
						  FBC_LOG_STR("error", err.message)},
				4, "job: cannot record completion");
			goto done;
		}
	}
	if (rc == 0) {
		if (q->opt.log)
			fbc_log(FBC_LOG_INFO,
				(fbc_log_field[]){FBC_LOG_STR("worker", q->worker),
						  FBC_LOG_NUM("job_id", job->id),
						  FBC_LOG_STR("job_kind", job->kind),
						  FBC_LOG_NUM("duration_ms", elapsed_s(t0) * 1e3)},
				4, "job succeeded");
		fbc_metric_observe(&m_job_duration, (const char *[]){job->kind, "succeeded"},
				   elapsed_s(t0));
		goto done;
	}
	bool retry = fbc_queue_transient(rc);
	long long back = ctx.retry_after_ms > 0 ? ctx.retry_after_ms
						: fbc_queue_backoff_ms(q->opt.retry_base_ms,
								       job->attempts, rnd01(seed));
	snprintf(msg, sizeof(msg), "%s: %s%s%s", fbc_error_code_name(rc), err.where,
		 err.where[0] ? ": " : "", err.message);
	fbc_log(FBC_LOG_WARN,
		(fbc_log_field[]){
			FBC_LOG_STR("worker", q->worker), FBC_LOG_NUM("job_id", job->id),
			FBC_LOG_STR("job_kind", job->kind), FBC_LOG_NUM("attempt", job->attempts),
			FBC_LOG_STR("retry",
				    retry && job->attempts < job->max_attempts ? "yes" : "no"),
			FBC_LOG_STR("error", msg)},
		6, "job attempt failed");
	fbc_metric_observe(&m_job_duration,
			   (const char *[]){job->kind, retry && job->attempts < job->max_attempts
							       ? "retry"
							       : "failed"},
			   elapsed_s(t0));
	if (retry && job->attempts < job->max_attempts)
		fbc_metric_add(&m_job_retries, (const char *[]){job->kind}, 1);
	if (fbc_db_job_fail(q->db, job->id, q->worker, msg, retry, back, &e2) != 0)
		fbc_log(FBC_LOG_WARN,
			(fbc_log_field[]){FBC_LOG_STR("worker", q->worker),
					  FBC_LOG_NUM("job_id", job->id),
					  FBC_LOG_STR("error", e2.message)},
			3, "job: cannot record the failure");
done:
	free(result);
	json_decref(payload);
}

static void *worker_main(void *arg)
{
	fbc_queue *q = ((struct worker_arg *)arg)->q;
	unsigned slot = ((struct worker_arg *)arg)->slot;
	unsigned seed = (unsigned)(now_ms() ^ (long long)(uintptr_t)&seed);
	bool db_down = false;

	while (!atomic_load(&q->stop)) {
		fbc_error err;
		fbc_db_job job;
		unsigned long seen;
		long long t = now_ms();
		int rc;

		fbc_error_init(&err);
		pthread_mutex_lock(&q->mu);
		seen = q->wakeups;
		pthread_mutex_unlock(&q->mu);
		if (t - atomic_load(&q->last_requeue_ms) > (long long)q->opt.lease_ms / 4) {
			int n = 0;
			atomic_store(&q->last_requeue_ms, t);
			if (fbc_db_job_requeue_expired(&n, q->db, &err) == 0 && n > 0)
				fbc_log(FBC_LOG_WARN,
					(fbc_log_field[]){FBC_LOG_STR("worker", q->worker),
							  FBC_LOG_NUM("jobs", n)},
					2, "jobs with an expired lease returned to the queue");
		}
		long long last_tick = atomic_load(&q->last_tick_ms);
		if (q->opt.tick && t - last_tick > (long long)q->opt.tick_ms &&
		    atomic_compare_exchange_strong(&q->last_tick_ms, &last_tick, t)) {
			fbc_error_init(&err);
			if (q->opt.tick(q->db, &err) != 0) {
				if (!atomic_exchange(&q->tick_failing, true))
					fbc_log(FBC_LOG_WARN,
						(fbc_log_field[]){
							FBC_LOG_STR("worker", q->worker),
							FBC_LOG_STR("error", err.message)},
						2, "periodic queue work failed");
			} else {
				atomic_store(&q->tick_failing, false);
			}
			fbc_error_init(&err);
		}
		memset(&job, 0, sizeof(job));
		rc = fbc_db_job_claim(&job, q->db, q->worker, q->opt.lease_ms, q->kinds, &err);
		if (rc == 1) {
			db_down = false;
			set_running(q, slot, job.id);
			run_job(q, &job, &seed);
			set_running(q, slot, 0);
			fbc_db_job_dispose(&job);
			continue;
		}
		if (rc < 0) {
			if (!db_down)
				fbc_log(FBC_LOG_WARN,
					(fbc_log_field[]){FBC_LOG_STR("worker", q->worker),
							  FBC_LOG_STR("error", err.message)},
					2, "cannot claim jobs");
			db_down = true;
			idle_wait(q, 1000, seen);
			continue;
		}
		db_down = false;
		idle_wait(q, q->opt.poll_ms, seen);
	}
	return NULL;
}

static void *heartbeat_main(void *arg)
{
	fbc_queue *q = arg;

	while (!atomic_load(&q->stop)) {
		fbc_error err;
		unsigned long seen;

		pthread_mutex_lock(&q->mu);
		seen = q->wakeups;
		pthread_mutex_unlock(&q->mu);
		/* the heartbeat sleeps a third of the lease; wake-ups only shorten it */
		long long until = now_ms() + q->opt.lease_ms / 3;
		while (!atomic_load(&q->stop) && now_ms() < until) {
			idle_wait(q, (unsigned)(until - now_ms()), seen);
			pthread_mutex_lock(&q->mu);
			seen = q->wakeups;
			pthread_mutex_unlock(&q->mu);
		}
		if (atomic_load(&q->stop))
			break;
		fbc_error_init(&err);
		char ids[MAX_WORKERS * 24 + 3];
		size_t len = 1;
		ids[0] = '{';
		pthread_mutex_lock(&q->mu);
		for (unsigned i = 0; i < q->n_threads; i++)
			if (q->running[i])
				len += (size_t)snprintf(ids + len, sizeof(ids) - len, "%s%lld",
							len > 1 ? "," : "",
							(long long)q->running[i]);
		pthread_mutex_unlock(&q->mu);
		snprintf(ids + len, sizeof(ids) - len, "}");
		if (len > 1 &&
		    fbc_db_job_renew(NULL, q->db, q->worker, ids, q->opt.lease_ms, &err) != 0)
			fbc_log(FBC_LOG_WARN,
				(fbc_log_field[]){FBC_LOG_STR("worker", q->worker),
						  FBC_LOG_STR("error", err.message)},
				2, "cannot renew leases");
	}
	return NULL;
}

static void *listener_main(void *arg)
{
	fbc_queue *q = arg;
	fbc_db_listener *l = NULL;
	bool reported = false;

	while (!atomic_load(&q->stop)) {
		fbc_error err;
		int rc;

		fbc_error_init(&err);
		if (!l) {
			if (fbc_db_listener_open(&l, q->db, FBC_DB_JOB_CHANNEL, &err) != 0) {
				if (!reported)
					fbc_log(FBC_LOG_WARN,
						(fbc_log_field[]){
							FBC_LOG_STR("worker", q->worker),
							FBC_LOG_NUM("poll_ms", q->opt.poll_ms),
							FBC_LOG_STR("error", err.message)},
						3, "LISTEN unavailable: polling");
				reported = true;
				l = NULL;
				sleep(1);
				continue;
			}
			reported = false;
			wake_all(q); /* notifications may have been missed meanwhile */
		}
		rc = fbc_db_listener_wait(l, 500, &err);
		if (rc == 1)
			wake_all(q);
		else if (rc < 0) {
			fbc_db_listener_close(l);
			l = NULL;
		}
	}
	fbc_db_listener_close(l);
	return NULL;
}

int fbc_queue_start(fbc_queue **out, fbc_db *db, const fbc_queue_options *opt, fbc_error *err)
{
	fbc_queue *q;
	char host[64];
	long cpus;
	int rc = 0;

	if (!(q = calloc(1, sizeof(*q))))
		return fbc_error_set(err, FBC_ENOMEM, "queue", "out of memory");
	q->db = db;
	q->opt = *opt;
	if (!q->opt.workers) {
		cpus = sysconf(_SC_NPROCESSORS_ONLN);
		q->opt.workers = cpus > 0 ? (unsigned)cpus : 1;
	}
	if (q->opt.workers > MAX_WORKERS)
		q->opt.workers = MAX_WORKERS;
	if (!q->opt.lease_ms)
		q->opt.lease_ms = 30000;
	if (!q->opt.poll_ms)
		q->opt.poll_ms = 2000;
	if (!q->opt.tick_ms) {
		q->opt.tick_ms = 5 * q->opt.poll_ms;
		q->opt.tick_ms = q->opt.tick_ms < 1000	  ? 1000
				 : q->opt.tick_ms > 10000 ? 10000
							  : q->opt.tick_ms;
	}
	if (!q->opt.retry_base_ms)
		q->opt.retry_base_ms = 1000;
	if (gethostname(host, sizeof(host)) != 0)
		snprintf(host, sizeof(host), "localhost");
	host[sizeof(host) - 1] = '\0';
	snprintf(q->worker, sizeof(q->worker), "%s:%ld", host, (long)getpid());
	pthread_mutex_init(&q->mu, NULL);
	pthread_cond_init(&q->wake, NULL);
	if (!(q->kinds = calloc(q->opt.n_kinds + 1, sizeof(*q->kinds)))) {
		rc = fbc_error_set(err, FBC_ENOMEM, "queue", "out of memory");
		goto fail;
	}
	for (size_t i = 0; i < q->opt.n_kinds; i++)
		q->kinds[i] = q->opt.kinds[i].kind;
	if (pthread_create(&q->listener, NULL, listener_main, q) == 0)
		q->listener_ok = true;
	if (pthread_create(&q->heartbeat, NULL, heartbeat_main, q) == 0)
		q->heartbeat_ok = true;
	for (unsigned i = 0; i < q->opt.workers; i++) {
		q->args[i].q = q;
		q->args[i].slot = i;
		if (pthread_create(&q->threads[i], NULL, worker_main, &q->args[i]) != 0) {
			rc = fbc_error_set(err, FBC_EINTERNAL, "queue", "cannot start a thread");
			goto fail;
		}
		q->n_threads++;
	}
	if (!q->listener_ok || !q->heartbeat_ok) {
		rc = fbc_error_set(err, FBC_EINTERNAL, "queue", "cannot start a thread");
		goto fail;
	}
	fbc_log(FBC_LOG_INFO,
		(fbc_log_field[]){FBC_LOG_STR("worker", q->worker),
				  FBC_LOG_NUM("threads", q->opt.workers),
				  FBC_LOG_NUM("lease_ms", q->opt.lease_ms)},
		3, "workers started");
	*out = q;
	return 0;
fail:
	fbc_queue_stop(q);
	return rc;
}

void fbc_queue_stop(fbc_queue *q)
{
	if (!q)
		return;
	atomic_store(&q->stop, true);
	wake_all(q);
	for (unsigned i = 0; i < q->n_threads; i++)
		pthread_join(q->threads[i], NULL);
	if (q->heartbeat_ok)
		pthread_join(q->heartbeat, NULL);
	if (q->listener_ok)
		pthread_join(q->listener, NULL);
	pthread_cond_destroy(&q->wake);
	pthread_mutex_destroy(&q->mu);
	free(q->kinds);
	free(q);
}
