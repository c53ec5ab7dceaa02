/* The outcome of a pr.check job (gitops.h): its pull_checks row, the pull
 * request's head and the follow-up report job, committed with the job's
 * completion. */
#include "db/gitops.h"
#include "db/internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct store_ctx {
	int64_t job_id;
	const char *worker;
	const fbc_db_pull_check *pc;
	const char *job_result;
	const char *report_kind;
	int64_t check_id;
};

static int store_tx(fbc_db_conn *c, void *ctx, fbc_error *err)
{
	static const db_stmt ins = {
		"pull_check_store",
		"WITH p AS (INSERT INTO pulls (repository, number, head_sha) VALUES ($1, "
		"$2::integer, $3) ON CONFLICT (repository, number) DO UPDATE SET head_sha = $3, "
		"updated_at = now()) INSERT INTO pull_checks (repository, number, head_sha, "
		"base_sha, conclusion, result, job_id) VALUES ($1, $2::integer, $3, $4, $5, "
		"$6::jsonb, $7::bigint) ON CONFLICT (job_id) DO UPDATE SET result = "
		"EXCLUDED.result RETURNING id",
		7};
	struct store_ctx *s = ctx;
	const fbc_db_pull_check *pc = s->pc;
	PGresult *res = NULL;
	char num[24], job[24];
	int rc;

	snprintf(num, sizeof(num), "%ld", pc->number);
	snprintf(job, sizeof(job), "%lld", (long long)s->job_id);
	/* completion first: a superseded or cancelled job stores nothing */
	if ((rc = db_job_complete_conn(c, s->job_id, s->worker, s->job_result, false, err)))
		return rc;
	if ((rc = db_exec(&res, c, &ins,
			  (const char *[]){pc->repository, num, pc->head_sha, pc->base_sha,
					   pc->conclusion, pc->result, job},
			  NULL, NULL, 0, err)))
		return rc;
	s->check_id = strtoll(PQgetvalue(res, 0, 0), NULL, 10);
	PQclear(res);
	if (s->report_kind) {
		char key[FBC_DB_JOB_KEY_MAX + 1], *payload;
		json_t *pl = json_pack("{s:s,s:i,s:s,s:s,s:I}", "repository", pc->repository,
				       "number", (json_int_t)pc->number, "sha", pc->head_sha,
				       "phase", "final", "pullCheck", (json_int_t)s->check_id);
		int64_t id;

		payload = pl ? json_dumps(pl, JSON_COMPACT) : NULL;
		json_decref(pl);
		if (!payload)
			return fbc_error_set(err, FBC_ENOMEM, "pull check", "out of memory");
		snprintf(key, sizeof(key), "report:%s:%ld:%lld", pc->repository, pc->number,
			 (long long)s->check_id);
		fbc_db_job_spec spec = {.kind = s->report_kind,
					.key = key,
					.repository = pc->repository,
					.payload = payload,
					.priority = 10,
					.max_attempts = 8};
		rc = db_job_enqueue_conn(&id, NULL, c, &spec, err);
		free(payload);
	}
	return rc;
}

int fbc_db_pull_check_store(int64_t *check_id, fbc_db *db, int64_t job_id, const char *worker,
			    const fbc_db_pull_check *pc, const char *job_result,
			    const char *report_kind, fbc_error *err)
{
	struct store_ctx s = {job_id, worker, pc, job_result, report_kind, 0};
	int rc;

	if ((rc = db_tx(db, store_tx, &s, err)))
		return rc;
	if (check_id)
		*check_id = s.check_id;
	return 0;
}

int fbc_db_pull_check_get(json_t **out, fbc_db *db, int64_t id, fbc_error *err)
{
	static const db_stmt st = {
		"pull_check_get",
		"SELECT jsonb_build_object('id', c.id, 'repository', c.repository, 'number', "
		"c.number, 'headSha', c.head_sha, 'baseSha', c.base_sha, 'conclusion', "
		"c.conclusion, 'result', c.result, 'job', c.job_id, 'newest', NOT EXISTS (SELECT 1 "
		"FROM pull_checks n WHERE n.repository = c.repository AND n.number = c.number AND "
		"n.id > c.id)) FROM pull_checks c WHERE c.id = $1::bigint",
		1};
	char num[24];

	snprintf(num, sizeof(num), "%lld", (long long)id);
	return db_query_json(out, db, &st, (const char *[]){num}, "pull check", err);
}

int fbc_db_pull_report_set(fbc_db *db, const char *repository, long number, const char *comment_id,
			   const char *check_runs, fbc_error *err)
{
	static const db_stmt st = {
		"pull_report_set",
		"INSERT INTO pulls (repository, number, comment_id, check_runs) VALUES ($1, "
		"$2::integer, $3, $4::jsonb) ON CONFLICT (repository, number) DO UPDATE SET "
		"comment_id = coalesce($3, pulls.comment_id), check_runs = coalesce($4::jsonb, "
		"pulls.check_runs), updated_at = now()",
		4};
	PGresult *res = NULL;
	char num[24];
	int rc;

	snprintf(num, sizeof(num), "%ld", number);
	if ((rc = db_query(&res, db, &st, (const char *[]){repository, num, comment_id, check_runs},
			   err)))
		return rc;
	PQclear(res);
	return 0;
}

int fbc_db_pull_merge_set(fbc_db *db, const char *repository, long number, const char *merge_sha,
			  const char *error, fbc_error *err)
{
	static const db_stmt st = {
		"pull_merge_set",
		"UPDATE pulls SET merge_sha = coalesce($3, merge_sha), merge_error = $4, state = "
		"CASE WHEN $3::text IS NOT NULL THEN 'merged' ELSE state END, updated_at = now() "
		"WHERE repository = $1 AND number = $2::integer",
		4};
	PGresult *res = NULL;
	char num[24];
	int rc;

	snprintf(num, sizeof(num), "%ld", number);
	if ((rc = db_query(&res, db, &st, (const char *[]){repository, num, merge_sha, error},
			   err)))
		return rc;
	PQclear(res);
	return 0;
}

int fbc_db_pull_list(json_t **out, fbc_db *db, const char *repository, fbc_error *err)
{
	static const db_stmt st = {
		"pull_list",
		"SELECT jsonb_build_object('items', coalesce((SELECT jsonb_agg(jsonb_build_object("
		"'number', p.number, 'state', p.state, 'headSha', p.head_sha, 'author', p.author, "
		"'title', p.title, 'approvals', p.approvals, 'mergeSha', p.merge_sha, 'updatedAt', "
		" " DB_TS(
			"p.updated_at") ", 'conclusion', (SELECT c.conclusion FROM pull_checks c "
					"WHERE c.repository = p.repository AND c.number = p.number "
					"ORDER BY c.id DESC LIMIT 1), 'checks', (SELECT count(*) "
					"FROM "
					"pull_checks c WHERE c.repository = p.repository AND "
					"c.number "
					"= p.number)) ORDER BY p.updated_at DESC, p.number DESC) "
					"FROM "
					"(SELECT * FROM pulls WHERE repository = r.name ORDER BY "
					"updated_at DESC LIMIT 500) p), '[]')) FROM repositories r "
					"WHERE r.name = $1",
		1};
	return db_query_json(out, db, &st, (const char *[]){repository}, "repository", err);
}
