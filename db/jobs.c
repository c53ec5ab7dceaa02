/* The durable job queue (see gitops.h for its rules). */
#include "db/gitops.h"
#include "db/internal.h"

#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* clang-format off */
#define JOB_JSON                                                                              \
	"json_build_object('id', j.id, 'kind', j.kind, 'key', j.key, "                        \
	"'repository', j.repository, 'payload', j.payload, 'state', j.state, "                 \
	"'priority', j.priority, 'ordered', j.ordered, 'attempts', j.attempts, "              \
	"'maxAttempts', j.max_attempts, "                                                     \
	"'runAfter', " DB_TS("j.run_after") ", "                                              \
	"'leaseUntil', " DB_TS("j.lease_until") ", "                                          \
	"'worker', j.worker, 'error', j.error, 'result', j.result, "                          \
	"'createdAt', " DB_TS("j.created_at") ", "                                            \
	"'updatedAt', " DB_TS("j.updated_at") ", "                                            \
	"'startedAt', " DB_TS("j.started_at") ", "                                            \
	"'finishedAt', " DB_TS("j.finished_at") ")"
#define EVENTS_JSON                                                                           \
	"coalesce(jsonb_agg(jsonb_build_object('at', " DB_TS("e.at") ", "                     \
	"'from', e.from_state, 'to', e.to_state, 'attempt', e.attempt, "                      \
	"'worker', e.worker, 'reason', e.reason) ORDER BY e.id), '[]')"
/* clang-format on */

void fbc_db_job_dispose(fbc_db_job *job)
{
	if (!job)
		return;
	free(job->kind);
	free(job->key);
	free(job->repository);
	free(job->payload);
	memset(job, 0, sizeof(*job));
}

static int check_spec(const fbc_db_job_spec *s, fbc_error *err)
{
	json_error_t jerr;
	json_t *p;

	if (!s->kind || !*s->kind || strlen(s->kind) > 64)
		return fbc_error_set(err, FBC_EINVAL, "kind", "a job kind has 1 to 64 bytes");
	if (!s->key || !*s->key || strlen(s->key) > FBC_DB_JOB_KEY_MAX)
		return fbc_error_set(err, FBC_EINVAL, "key", "a job key has 1 to %d bytes",
				     FBC_DB_JOB_KEY_MAX);
	if (s->max_attempts < 0 || s->max_attempts > 100)
		return fbc_error_set(err, FBC_EINVAL, "maxAttempts", "maxAttempts is 1 to 100");
	if (s->payload) {
		if (strlen(s->payload) > FBC_DB_JOB_PAYLOAD_MAX)
			return fbc_error_set(err, FBC_ELIMIT, "payload", "payload over %u bytes",
					     FBC_DB_JOB_PAYLOAD_MAX);
		if (!(p = json_loads(s->payload, 0, &jerr)))
			return fbc_error_set(err, FBC_EINVAL, "payload", "payload: %s", jerr.text);
		int obj = json_is_object(p);
		json_decref(p);
		if (!obj)
			return fbc_error_set(err, FBC_EINVAL, "payload",
					     "payload is not an object");
	}
	return 0;
}

int db_job_enqueue_conn(int64_t *id, bool *created, fbc_db_conn *c, const fbc_db_job_spec *s,
			fbc_error *err)
{
	static const db_stmt cancel = {
		"job_supersede",
		"WITH o AS (SELECT id, state FROM jobs WHERE kind = $1 AND key = $2 AND state IN "
		"('queued', 'running') FOR UPDATE), u AS (UPDATE jobs j SET state = 'cancelled', "
		"lease_until = NULL, finished_at = now(), updated_at = now(), error = 'superseded' "
		"FROM o WHERE j.id = o.id RETURNING j.id, o.state, j.attempts, j.worker) INSERT "
		"INTO "
		"job_events (job_id, from_state, to_state, attempt, worker, reason) SELECT id, "
		"state, "
		"'cancelled', attempts, worker, 'superseded by a newer job of the same key' FROM u",
		2};
	static const db_stmt ins = {
		"job_insert",
		"WITH i AS (INSERT INTO jobs (kind, key, repository, payload, priority, ordered, "
		"max_attempts, run_after) VALUES ($1, $2, $3, coalesce($4::jsonb, '{}'), $5, $6, "
		"$7, "
		"now() + make_interval(secs => $8::double precision / 1000)) ON CONFLICT (kind, "
		"key) "
		"WHERE state IN ('queued', 'running') DO NOTHING RETURNING id), e AS (INSERT INTO "
		"job_events (job_id, to_state, reason) SELECT id, 'queued', 'enqueued' FROM i), n "
		"AS "
		"(SELECT pg_notify('" FBC_DB_JOB_CHANNEL "', $1) FROM i) SELECT id, true FROM i, n "
		"UNION ALL SELECT id, false FROM jobs WHERE kind = $1 AND key = $2 AND state IN "
		"('queued', 'running') AND NOT EXISTS (SELECT 1 FROM i)",
		8};
	PGresult *res = NULL;
	char prio[16], maxa[16], delay[24];
	int rc;

	if ((rc = check_spec(s, err)))
		return rc;
	if (s->supersede) {
		if ((rc = db_exec(&res, c, &cancel, (const char *[]){s->kind, s->key}, NULL, NULL,
				  0, err)))
			return rc;
		PQclear(res);
		res = NULL;
	}
	snprintf(prio, sizeof(prio), "%d", s->priority);
	snprintf(maxa, sizeof(maxa), "%d", s->max_attempts ? s->max_attempts : 5);
	snprintf(delay, sizeof(delay), "%lld", (long long)(s->delay_ms > 0 ? s->delay_ms : 0));
	if ((rc = db_exec(&res, c, &ins,
			  (const char *[]){s->kind, s->key, s->repository, s->payload, prio,
					   s->ordered ? "t" : "f", maxa, delay},
			  NULL, NULL, 0, err)))
		return rc;
	if (PQntuples(res) < 1) {
		/* the live job finished between the two halves: the caller retries */
		rc = fbc_error_set(err, FBC_ECONFLICT, s->key, "job key changed state, try again");
		goto done;
	}
	*id = strtoll(PQgetvalue(res, 0, 0), NULL, 10);
	if (created)
		*created = PQgetvalue(res, 0, 1)[0] == 't';
done:
	PQclear(res);
	return rc;
}

struct enqueue_ctx {
	const fbc_db_job_spec *spec;
	int64_t id;
	bool created;
};

static int enqueue_tx(fbc_db_conn *c, void *ctx, fbc_error *err)
{
	struct enqueue_ctx *e = ctx;
	return db_job_enqueue_conn(&e->id, &e->created, c, e->spec, err);
}

int fbc_db_job_enqueue(int64_t *id, bool *created, fbc_db *db, const fbc_db_job_spec *spec,
		       fbc_error *err)
{
	struct enqueue_ctx e = {spec, 0, false};
	int rc;

	if ((rc = db_tx(db, enqueue_tx, &e, err)))
		return rc;
	*id = e.id;
	if (created)
		*created = e.created;
	return 0;
}

static char *dup_val(PGresult *res, int row, int col)
{
	return PQgetisnull(res, row, col) ? NULL : strdup(PQgetvalue(res, row, col));
}

int fbc_db_job_claim(fbc_db_job *job, fbc_db *db, const char *worker, unsigned lease_ms,
		     const char *const *kinds, fbc_error *err)
{
	static const db_stmt st = {
		"job_claim",
		"WITH c AS (SELECT id FROM jobs j WHERE state = 'queued' AND run_after <= now() "
		"AND "
		"($3::text[] IS NULL OR kind = ANY ($3::text[])) AND (NOT ordered OR NOT EXISTS "
		"(SELECT 1 FROM jobs o WHERE o.ordered AND o.repository = j.repository AND o.id < "
		"j.id AND o.state IN ('queued', 'running'))) ORDER BY priority DESC, id LIMIT 1 "
		"FOR "
		"UPDATE SKIP LOCKED), u AS (UPDATE jobs j SET state = 'running', attempts = "
		"attempts + 1, worker = $1, lease_until = now() + make_interval(secs => "
		"$2::double precision / 1000), started_at = coalesce(started_at, now()), "
		"updated_at = now() FROM c WHERE j.id = c.id RETURNING j.id, j.kind, j.key, "
		"j.repository, j.payload::text AS payload, j.attempts, j.max_attempts), e AS "
		"(INSERT INTO job_events (job_id, from_state, to_state, attempt, worker, reason) "
		"SELECT id, 'queued', 'running', attempts, $1, 'claimed' FROM u) SELECT * FROM u",
		3};
	PGresult *res = NULL;
	fbc_buf arr;
	char lease[16];
	int rc;

	fbc_buf_init(&arr, 64 * 1024);
	if (kinds) {
		/* a text[] literal; kinds are code constants ([a-z.]) */
		fbc_buf_append(&arr, "{", 1);
		for (size_t i = 0; kinds[i]; i++) {
			if ((i && fbc_buf_append(&arr, ",", 1)) ||
			    fbc_buf_append(&arr, kinds[i], strlen(kinds[i]))) {
				rc = fbc_error_set(err, FBC_ENOMEM, "kinds", "out of memory");
				goto done;
			}
		}
		if (fbc_buf_append(&arr, "}", 2)) {
			rc = fbc_error_set(err, FBC_ENOMEM, "kinds", "out of memory");
			goto done;
		}
	}
	snprintf(lease, sizeof(lease), "%u", lease_ms);
	if ((rc = db_query(&res, db, &st,
			   (const char *[]){worker, lease, kinds ? (const char *)arr.data : NULL},
			   err)))
		goto done;
	if (PQntuples(res) < 1) {
		rc = 0;
		goto done;
	}
	memset(job, 0, sizeof(*job));
	job->id = strtoll(PQgetvalue(res, 0, 0), NULL, 10);
	job->kind = dup_val(res, 0, 1);
	job->key = dup_val(res, 0, 2);
	job->repository = dup_val(res, 0, 3);
	job->payload = dup_val(res, 0, 4);
	job->attempts = (int)strtol(PQgetvalue(res, 0, 5), NULL, 10);
	job->max_attempts = (int)strtol(PQgetvalue(res, 0, 6), NULL, 10);
	if (!job->kind || !job->key || !job->payload) {
		fbc_db_job_dispose(job);
		rc = fbc_error_set(err, FBC_ENOMEM, "job", "out of memory");
		goto done;
	}
	rc = 1;
done:
	fbc_buf_dispose(&arr);
	PQclear(res);
	return rc;
}

int fbc_db_job_renew(int *n, fbc_db *db, const char *worker, const char *ids, unsigned lease_ms,
		     fbc_error *err)
{
	static const db_stmt st = {"job_renew",
				   "UPDATE jobs SET lease_until = now() + make_interval(secs => "
				   "$2::double precision / 1000) WHERE worker = $1 AND state = "
				   "'running' AND id = ANY ($3::bigint[])",
				   3};
	PGresult *res = NULL;
	char lease[16];
	int rc;

	snprintf(lease, sizeof(lease), "%u", lease_ms);
	if ((rc = db_query(&res, db, &st, (const char *[]){worker, lease, ids}, err)))
		return rc;
	if (n)
		*n = (int)strtol(PQcmdTuples(res), NULL, 10);
	PQclear(res);
	return 0;
}

int fbc_db_job_requeue_expired(int *n, fbc_db *db, fbc_error *err)
{
	static const db_stmt st = {
		"job_requeue_expired",
		"WITH x AS (SELECT id, worker FROM jobs WHERE state = 'running' AND lease_until < "
		"now() FOR UPDATE SKIP LOCKED), u AS (UPDATE jobs j SET state = CASE WHEN "
		"j.attempts >= j.max_attempts THEN 'failed' ELSE 'queued' END, worker = NULL, "
		"lease_until = NULL, run_after = now(), updated_at = now(), error = 'lease of "
		"worker ' || coalesce(x.worker, '?') || ' expired', finished_at = CASE WHEN "
		"j.attempts >= j.max_attempts THEN now() END FROM x WHERE j.id = x.id RETURNING "
		"j.id, j.state, j.attempts, x.worker, j.error) INSERT INTO job_events (job_id, "
		"from_state, to_state, attempt, worker, reason) SELECT id, 'running', state, "
		"attempts, worker, error FROM u",
		0};
	PGresult *res = NULL;
	int rc;

	if ((rc = db_query(&res, db, &st, NULL, err)))
		return rc;
	if (n)
		*n = (int)strtol(PQcmdTuples(res), NULL, 10);
	PQclear(res);
	return 0;
}

int fbc_db_job_held(fbc_db *db, int64_t id, const char *worker, fbc_error *err)
{
	static const db_stmt st = {"job_held",
				   "SELECT 1 FROM jobs WHERE id = $1 AND worker = $2 AND state = "
				   "'running'",
				   2};
	PGresult *res = NULL;
	char num[24];
	int rc;

	snprintf(num, sizeof(num), "%lld", (long long)id);
	if ((rc = db_query(&res, db, &st, (const char *[]){num, worker}, err)))
		return rc;
	rc = PQntuples(res) > 0;
	PQclear(res);
	return rc;
}

struct finish_ctx {
	int64_t id;
	const char *worker, *result, *error;
	bool effect, retry;
	int64_t backoff_ms;
};

int db_job_complete_conn(fbc_db_conn *c, int64_t id, const char *worker, const char *result,
			 bool effect, fbc_error *err)
{
	static const db_stmt done_st = {
		"job_complete",
		"WITH u AS (UPDATE jobs SET state = 'succeeded', result = $3::jsonb, lease_until = "
		"NULL, error = NULL, finished_at = now(), updated_at = now() WHERE id = $1 AND "
		"worker = $2 AND state = 'running' RETURNING id, attempts, key, kind), e AS "
		"(INSERT "
		"INTO job_events (job_id, from_state, to_state, attempt, worker, reason) SELECT "
		"id, "
		"'running', 'succeeded', attempts, $2, 'done' FROM u), f AS (INSERT INTO "
		"job_effects "
		"(key, kind, job_id, result) SELECT key, kind, id, $3::jsonb FROM u WHERE $4 ON "
		"CONFLICT (key) DO NOTHING) SELECT id FROM u",
		4};
	PGresult *res = NULL;
	char num[24];
	int rc;

	snprintf(num, sizeof(num), "%lld", (long long)id);
	if ((rc = db_exec(&res, c, &done_st,
			  (const char *[]){num, worker, result, effect ? "t" : "f"}, NULL, NULL, 0,
			  err)))
		return rc;
	if (PQntuples(res) < 1)
		rc = fbc_error_set(err, FBC_ECONFLICT, "job",
				   "job %lld is no longer held by %s (cancelled or lease expired)",
				   (long long)id, worker);
	PQclear(res);
	return rc;
}

static int complete_tx(fbc_db_conn *c, void *ctx, fbc_error *err)
{
	struct finish_ctx *f = ctx;
	return db_job_complete_conn(c, f->id, f->worker, f->result, f->effect, err);
}

int fbc_db_job_complete(fbc_db *db, int64_t id, const char *worker, const char *result, bool effect,
			fbc_error *err)
{
	struct finish_ctx f = {id, worker, result, NULL, effect, false, 0};
	return db_tx(db, complete_tx, &f, err);
}

int fbc_db_job_effect_get(char **result, fbc_db *db, const char *key, fbc_error *err)
{
	static const db_stmt st = {"job_effect_get",
				   "SELECT result::text FROM job_effects WHERE key = $1", 1};
	PGresult *res = NULL;
	int rc;

	if ((rc = db_query(&res, db, &st, (const char *[]){key}, err)))
		return rc;
	if (PQntuples(res) < 1) {
		rc = 0;
		goto done;
	}
	*result = PQgetisnull(res, 0, 0) ? NULL : strdup(PQgetvalue(res, 0, 0));
	rc = 1;
done:
	PQclear(res);
	return rc;
}

int fbc_db_job_fail(fbc_db *db, int64_t id, const char *worker, const char *error, bool retry,
		    int64_t backoff_ms, fbc_error *err)
{
	static const db_stmt st = {
		"job_fail",
		"WITH u AS (UPDATE jobs SET state = CASE WHEN $4 AND attempts < max_attempts THEN "
		"'queued' ELSE 'failed' END, run_after = now() + make_interval(secs => "
		"$5::double precision / 1000), error = $3, worker = NULL, lease_until = NULL, "
		"updated_at = now(), finished_at = CASE WHEN $4 AND attempts < max_attempts THEN "
		"NULL ELSE now() END WHERE id = $1 AND worker = $2 AND state = 'running' RETURNING "
		"id, state, attempts), e AS (INSERT INTO job_events (job_id, from_state, to_state, "
		"attempt, worker, reason) SELECT id, 'running', state, attempts, $2, $3 FROM u) "
		"SELECT id FROM u",
		5};
	PGresult *res = NULL;
	char num[24], back[24];
	int rc;

	snprintf(num, sizeof(num), "%lld", (long long)id);
	snprintf(back, sizeof(back), "%lld", (long long)(backoff_ms > 0 ? backoff_ms : 0));
	if ((rc = db_query(&res, db, &st,
			   (const char *[]){num, worker, error ? error : "failed",
					    retry ? "t" : "f", back},
			   err)))
		return rc;
	if (PQntuples(res) < 1)
		rc = fbc_error_set(err, FBC_ECONFLICT, "job", "job %lld is no longer held",
				   (long long)id);
	PQclear(res);
	return rc;
}

static int job_change(json_t **out, fbc_db *db, const db_stmt *st, int64_t id, const char *reason,
		      const char *what, fbc_error *err)
{
	char num[24];
	int rc;

	snprintf(num, sizeof(num), "%lld", (long long)id);
	rc = db_query_json(out, db, st, (const char *[]){num, reason}, "job", err);
	if (rc == FBC_ENOTFOUND) {
		json_t *j = NULL;
		fbc_error e2;

		fbc_error_init(&e2);
		if (fbc_db_job_get(&j, db, id, &e2) == 0) {
			rc = fbc_error_set(err, FBC_ECONFLICT, "job", "job %lld is %s: cannot %s",
					   (long long)id,
					   json_string_value(json_object_get(j, "state")), what);
			json_decref(j);
		}
	}
	return rc;
}

int fbc_db_job_cancel(json_t **out, fbc_db *db, int64_t id, const char *reason, fbc_error *err)
{
	static const db_stmt st = {
		"job_cancel",
		"WITH o AS (SELECT id, state FROM jobs WHERE id = $1 AND state IN ('queued', "
		"'running') FOR UPDATE), u AS (UPDATE jobs j SET state = 'cancelled', lease_until "
		"= "
		"NULL, finished_at = now(), updated_at = now() FROM o WHERE j.id = o.id RETURNING "
		"j.*, o.state AS old_state), e AS (INSERT INTO job_events (job_id, from_state, "
		"to_state, attempt, worker, reason) SELECT id, old_state, 'cancelled', attempts, "
		"worker, $2 FROM u) SELECT " JOB_JSON " FROM u j",
		2};
	return job_change(out, db, &st, id, reason, "cancel", err);
}

int fbc_db_job_retry(json_t **out, fbc_db *db, int64_t id, const char *reason, fbc_error *err)
{
	static const db_stmt st = {
		"job_retry",
		"WITH o AS (SELECT id, state FROM jobs WHERE id = $1 AND state IN ('failed', "
		"'cancelled') FOR UPDATE), u AS (UPDATE jobs j SET state = 'queued', attempts = 0, "
		"run_after = now(), worker = NULL, lease_until = NULL, finished_at = NULL, "
		"updated_at = now() FROM o WHERE j.id = o.id RETURNING j.*, o.state AS old_state), "
		"e "
		"AS (INSERT INTO job_events (job_id, from_state, to_state, attempt, reason) SELECT "
		"id, old_state, 'queued', 0, $2 FROM u), n AS (SELECT "
		"pg_notify('" FBC_DB_JOB_CHANNEL "', kind) FROM u) SELECT " JOB_JSON " FROM u j, n",
		2};
	return job_change(out, db, &st, id, reason, "retry", err);
}

int fbc_db_job_list(json_t **out, fbc_db *db, const fbc_db_job_filter *f, const fbc_db_page *page,
		    fbc_error *err)
{
	static const db_stmt st = {
		"job_list",
		"SELECT lpad(j.id::text, 20, '0'), " JOB_JSON
		" FROM jobs j WHERE ($1::text IS NULL "
		"OR lpad(j.id::text, 20, '0') < $1) AND ($2::text IS NULL OR j.kind = $2) AND "
		"($3::text IS NULL OR j.state = $3) AND ($4::text IS NULL OR j.repository = $4) "
		"AND "
		"($5::text IS NULL OR j.key = $5) ORDER BY j.id DESC LIMIT $6",
		6};
	const char *vals[6];
	char *key = NULL;
	unsigned limit;
	int rc;

	if ((rc = db_page_args(&limit, &key, page, err)))
		return rc;
	vals[0] = key;
	vals[1] = f ? f->kind : NULL;
	vals[2] = f ? f->state : NULL;
	vals[3] = f ? f->repository : NULL;
	vals[4] = f ? f->key : NULL;
	rc = db_query_page(out, db, &st, vals, 6, limit, err);
	free(key);
	return rc;
}

int fbc_db_job_get(json_t **out, fbc_db *db, int64_t id, fbc_error *err)
{
	static const db_stmt st = {"job_get",
				   "SELECT " JOB_JSON "::jsonb || jsonb_build_object('events', "
				   "(SELECT " EVENTS_JSON
				   " FROM job_events e WHERE e.job_id = j.id)) "
				   "FROM jobs j WHERE j.id = $1",
				   1};
	char num[24];

	snprintf(num, sizeof(num), "%lld", (long long)id);
	return db_query_json(out, db, &st, (const char *[]){num}, "job", err);
}

/* ------------------------------------------------------------ listener */

struct fbc_db_listener {
	fbc_db *db;
	char *channel;
	PGconn *pg;
};

static int listen_connect(fbc_db_listener *l, fbc_error *err)
{
	PGresult *res = NULL;
	char *ident = NULL, sql[300];
	int rc;

	if ((rc = db_connect(&l->pg, l->db->url, l->db->connect_timeout_s, 0, err)))
		return rc;
	if (!(ident = PQescapeIdentifier(l->pg, l->channel, strlen(l->channel)))) {
		rc = db_pg_error(err, l->pg, NULL, "listen");
		goto done;
	}
	snprintf(sql, sizeof(sql), "LISTEN %s", ident);
	res = PQexec(l->pg, sql);
	if (PQresultStatus(res) != PGRES_COMMAND_OK)
		rc = db_pg_error(err, l->pg, res, "listen");
done:
	PQfreemem(ident);
	PQclear(res);
	if (rc) {
		PQfinish(l->pg);
		l->pg = NULL;
	}
	return rc;
}

int fbc_db_listener_open(fbc_db_listener **out, fbc_db *db, const char *channel, fbc_error *err)
{
	fbc_db_listener *l;
	int rc;

	if (!channel || strlen(channel) > 63)
		return fbc_error_set(err, FBC_EINVAL, "channel", "a channel has at most 63 bytes");
	if (!(l = calloc(1, sizeof(*l))) || !(l->channel = strdup(channel))) {
		free(l);
		return fbc_error_set(err, FBC_ENOMEM, "listen", "out of memory");
	}
	l->db = db;
	if ((rc = listen_connect(l, err))) {
		fbc_db_listener_close(l);
		return rc;
	}
	*out = l;
	return 0;
}

int fbc_db_listener_wait(fbc_db_listener *l, unsigned timeout_ms, fbc_error *err)
{
	PGnotify *n;
	struct pollfd pfd;
	int got = 0, rc;

	if (!l->pg || PQstatus(l->pg) != CONNECTION_OK) {
		PQfinish(l->pg);
		l->pg = NULL;
		if ((rc = listen_connect(l, err)))
			return rc;
		return 1; /* notifications may have been missed: act as if woken */
	}
	pfd.fd = PQsocket(l->pg);
	pfd.events = POLLIN;
	pfd.revents = 0;
	if (poll(&pfd, 1, (int)timeout_ms) < 0)
		return 0;
	if (pfd.revents && !PQconsumeInput(l->pg))
		return db_pg_error(err, l->pg, NULL, "listen");
	while ((n = PQnotifies(l->pg))) {
		got = 1;
		PQfreemem(n);
	}
	if (PQstatus(l->pg) != CONNECTION_OK)
		return fbc_error_set(err, FBC_EUNAVAIL, "listen", "listen connection lost");
	return got;
}

void fbc_db_listener_close(fbc_db_listener *l)
{
	if (!l)
		return;
	PQfinish(l->pg);
	free(l->channel);
	free(l);
}

/* ------------------------------------------------------------ transactions */

static int tx_once(fbc_db_conn *c, db_tx_fn fn, void *ctx, fbc_error *err)
{
	int rc;

	if ((rc = db_exec_simple(c, "BEGIN", err)))
		return rc;
	if ((rc = fn(c, ctx, err))) {
		if (PQstatus(c->pg) == CONNECTION_OK) {
			PGresult *r = PQexec(c->pg, "ROLLBACK");
			PQclear(r);
		}
		return rc;
	}
	return db_exec_simple(c, "COMMIT", err);
}

int db_tx(fbc_db *db, db_tx_fn fn, void *ctx, fbc_error *err)
{
	fbc_db_conn *c = NULL;
	int rc;

	if ((rc = db_checkout(&c, db, err)))
		return rc;
	rc = tx_once(c, fn, ctx, err);
	if (rc == FBC_EUNAVAIL && PQstatus(c->pg) == CONNECTION_BAD) {
		/* BEGIN or a statement found the server gone; COMMIT can fail the
		 * same way, and then nothing was committed either. */
		if ((rc = db_conn_reset(db, c, err)) == 0)
			rc = tx_once(c, fn, ctx, err);
	}
	db_release(db, c);
	return rc;
}

int fbc_db_job_counts(json_t **out, fbc_db *db, fbc_error *err)
{
	static const db_stmt st = {
		"job_counts",
		"SELECT coalesce(jsonb_agg(jsonb_build_object('kind', kind, 'state', state, "
		"'count', n) ORDER BY kind, state), '[]') FROM (SELECT kind, state, count(*) AS n "
		"FROM jobs GROUP BY kind, state) c",
		0};
	return db_query_json(out, db, &st, NULL, "jobs", err);
}
