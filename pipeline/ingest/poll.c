/* repo.poll: fetch a repository's mirror every pollSeconds and ingest the
 * tracked branch when it moved without a webhook saying so (ingest.h). */
#include "pipeline/ingest/ingest.h"

#include "db/gitops.h"
#include "pipeline/git/git.h"
#include "service/base/log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *jstr(json_t *o, const char *a, const char *b)
{
	json_t *v = json_object_get(o, a);
	if (b)
		v = json_object_get(v, b);
	return json_is_string(v) ? json_string_value(v) : NULL;
}

int fbc_poll_run(fbc_queue_ctx *ctx, json_t *payload, char **result, fbc_error *err)
{
	const fbc_pipeline_env *env = ctx->app;
	const char *name = jstr(payload, "repository", NULL);
	json_t *repo = NULL, *res = NULL;
	char *path = NULL, ref[300], tip[FBC_GIT_ID_MAX], key[FBC_DB_JOB_KEY_MAX];
	fbc_git *g = NULL;
	int64_t job = 0;
	bool created = false;
	(void)created;
	int rc;

	if (!env || !env->data_dir)
		return fbc_error_set(err, FBC_EINVAL, "poll", "no data directory configured");
	if (!name)
		return fbc_error_set(err, FBC_EINVAL, "payload", "repository required");
	if ((rc = fbc_db_repo_get(&repo, ctx->db, name, err)))
		return rc == FBC_ENOTFOUND ? FBC_EINVAL : rc; /* deleted meanwhile: give up */
	if ((rc = fbc_ingest_mirror(&path, ctx->db, env, repo, err)) ||
	    (rc = fbc_db_repo_fetched(ctx->db, name, NULL, err)) ||
	    (rc = fbc_git_open(&g, path, err)))
		goto done;
	snprintf(ref, sizeof(ref), "refs/heads/%s", jstr(repo, "branch", NULL));
	if ((rc = fbc_git_resolve(tip, g, ref, err))) {
		rc = fbc_error_set(err, FBC_EINVAL, ref, "the tracked branch is not in %s",
				   jstr(repo, "url", NULL));
		goto done;
	}
	const char *head = jstr(repo, "headCommit", NULL);
	if (!head || strcmp(head, tip)) {
		/* the same key as a push webhook's: a delivery and a poll that see
		 * the same commit make one ingest */
		snprintf(key, sizeof(key), "ingest:%s:%s", name, tip);
		json_t *pl = json_pack("{s:s,s:s,s:s?,s:s}", "repository", name, "commit", tip,
				       "before", head, "trigger", "poll");
		char *text = pl ? json_dumps(pl, JSON_COMPACT) : NULL;
		json_decref(pl);
		if (!text) {
			rc = fbc_error_set(err, FBC_ENOMEM, "poll", "out of memory");
			goto done;
		}
		fbc_db_job_spec spec = {.kind = "repo.ingest",
					.key = key,
					.repository = name,
					.payload = text,
					.ordered = true};
		rc = fbc_db_job_enqueue(&job, &created, ctx->db, &spec, err);
		if (rc == FBC_ECONFLICT) { /* the live one just finished: once more */
			fbc_error_init(err);
			rc = fbc_db_job_enqueue(&job, &created, ctx->db, &spec, err);
		}
		free(text);
		if (rc)
			goto done;
		fbc_log(FBC_LOG_INFO,
			(fbc_log_field[]){FBC_LOG_STR("repository", name),
					  FBC_LOG_STR("commit", tip), FBC_LOG_NUM("job", job)},
			3, "poll: the tracked branch moved");
	}
	res = json_pack("{s:s,s:b}", "head", tip, "moved", !head || strcmp(head, tip));
	if (res && job)
		json_object_set_new(res, "ingest", json_integer(job));
	if (!res || !(*result = json_dumps(res, JSON_COMPACT)))
		rc = fbc_error_set(err, FBC_ENOMEM, "poll", "out of memory");
done:
	json_decref(res);
	json_decref(repo);
	fbc_git_free(g);
	free(path);
	return rc;
}

int fbc_poll_schedule(fbc_db *db, fbc_error *err)
{
	json_t *due = NULL, *r;
	size_t i;
	int rc;

	if ((rc = fbc_db_repo_poll_due(&due, db, err)))
		return rc;
	json_array_foreach(due, i, r)
	{
		const char *name = jstr(r, "name", NULL);
		char key[FBC_DB_JOB_KEY_MAX], *text;
		json_t *pl = json_pack("{s:s}", "repository", name);

		text = pl ? json_dumps(pl, JSON_COMPACT) : NULL;
		json_decref(pl);
		if (!text) {
			rc = fbc_error_set(err, FBC_ENOMEM, "poll", "out of memory");
			break;
		}
		snprintf(key, sizeof(key), "poll:%s", name);
		/* not ordered: a poll only fetches; the ingest it may enqueue is */
		fbc_db_job_spec spec = {
			.kind = "repo.poll",
			.key = key,
			.repository = name,
			.payload = text,
			.priority = -1,
			.max_attempts = 1, /* the next poll is the retry */
			.delay_ms = json_integer_value(json_object_get(r, "delayMs")),
		};
		int64_t id;
		rc = fbc_db_job_enqueue(&id, NULL, db, &spec, err);
		free(text);
		if (rc == FBC_ECONFLICT) { /* a poll finished meanwhile: next tick */
			fbc_error_init(err);
			rc = 0;
		}
		if (rc)
			break;
	}
	json_decref(due);
	return rc;
}
