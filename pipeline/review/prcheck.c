/* pr.check: run the pull-request check engine on a pull request's head in
 * the repository's mirror and store the result (review.h). */
#include "pipeline/review/review.h"

#include "db/gitops.h"
#include "pipeline/checks/checks.h"
#include "pipeline/git/git.h"
#include "pipeline/git/mirror.h"
#include "pipeline/ingest/ingest.h"
#include "service/base/log.h"
#include "service/base/metrics.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const double check_buckets[] = {0.001, 0.005, 0.01, 0.025, 0.05, 0.1,
				       0.25,  0.5,   1,	   2.5,	  5,	10};
static const fbc_metric_def m_check_duration = {
	.name = "fbcd_pr_check_duration_seconds",
	.help = "Time one check of a pull request's pr.check job took, by check id.",
	.type = FBC_METRIC_HISTOGRAM,
	.labels = {"check"},
	.buckets = check_buckets,
	.n_buckets = sizeof(check_buckets) / sizeof(check_buckets[0])};

/* One check cache per process, shared by every pr.check: a catalog unchanged between pull
 * requests is parsed and validated once, and the add-mode builds of a pull request checked
 * again (a new push that adds nothing, a re-run) are taken from it. The builds also live in
 * <data_dir>/cache (checks-v1, 1 GiB at most), so they outlast a restart and are shared with
 * `fbcd worker` processes on the same data directory. */
static fbc_checks_cache *cache;
static bool cache_tried;
static pthread_mutex_t cache_mu = PTHREAD_MUTEX_INITIALIZER;

static fbc_checks_cache *shared_cache(const char *data_dir)
{
	pthread_mutex_lock(&cache_mu);
	if (!cache_tried) {
		char dir[4096];
		fbc_error e;

		cache_tried = true;
		fbc_error_init(&e);
		snprintf(dir, sizeof(dir), "%s/cache", data_dir);
		if (fbc_checks_cache_create(&cache, 0, dir, &e) != 0) {
			fbc_log(FBC_LOG_WARN,
				(fbc_log_field[]){FBC_LOG_STR("dir", dir),
						  FBC_LOG_STR("error", e.message)},
				2, "pr.check: no on-disk check cache; keeping it in memory only");
			if (fbc_checks_cache_create(&cache, 0, NULL, &e) != 0)
				cache = NULL; /* each run then uses a private one */
		}
	}
	pthread_mutex_unlock(&cache_mu);
	return cache;
}

static const char *jstr(json_t *o, const char *a, const char *b)
{
	json_t *v = json_object_get(o, a);
	if (b)
		v = json_object_get(v, b);
	return json_is_string(v) && json_string_length(v) ? json_string_value(v) : NULL;
}

bool fbc_review_forge_reports(json_t *repo)
{
	const char *kind = jstr(repo, "forge", "kind");
	return kind && (!strcmp(kind, "github") || !strcmp(kind, "gitlab"));
}

/* The forge's review ref of pull request n in the mirror. */
static void review_ref(char *out, size_t size, json_t *repo, long n)
{
	const char *kind = jstr(repo, "forge", "kind");
	if (kind && !strcmp(kind, "gitlab"))
		snprintf(out, size, "refs/merge-requests/%ld/head", n);
	else
		snprintf(out, size, "refs/pull/%ld/head", n);
}

static int enqueue_pending(fbc_db *db, const char *repo, long number, const char *head,
			   fbc_error *err)
{
	char key[FBC_DB_JOB_KEY_MAX + 1], *text;
	json_t *pl = json_pack("{s:s,s:i,s:s,s:s}", "repository", repo, "number",
			       (json_int_t)number, "sha", head, "phase", "pending");
	int64_t id;
	int rc;

	text = pl ? json_dumps(pl, JSON_COMPACT) : NULL;
	json_decref(pl);
	if (!text)
		return fbc_error_set(err, FBC_ENOMEM, "pr.check", "out of memory");
	snprintf(key, sizeof(key), "report:%s:%ld:pending:%s", repo, number, head);
	fbc_db_job_spec spec = {.kind = FBC_REVIEW_REPORT_KIND,
				.key = key,
				.repository = repo,
				.payload = text,
				.priority = 10,
				.max_attempts = 8};
	rc = fbc_db_job_enqueue(&id, NULL, db, &spec, err);
	free(text);
	return rc == FBC_ECONFLICT ? 0 : rc;
}

int fbc_review_check_run(fbc_queue_ctx *ctx, json_t *payload, char **result, fbc_error *err)
{
	const fbc_pipeline_env *env = ctx->app;
	const char *name = jstr(payload, "repository", NULL);
	long number = (long)json_integer_value(json_object_get(payload, "number"));
	json_t *repo = NULL, *pull = NULL, *doc = NULL, *res = NULL;
	char *path = NULL, *doc_text = NULL, *res_text = NULL;
	char head[FBC_GIT_ID_MAX], base[FBC_GIT_ID_MAX], ref[300];
	const char **approvers = NULL;
	fbc_checks_result *r = NULL;
	fbc_git *g = NULL;
	int64_t check_id = 0;
	int rc;

	if (!env || !env->data_dir)
		return fbc_error_set(err, FBC_EINVAL, "pr.check", "no data directory configured");
	if (!name || number <= 0)
		return fbc_error_set(err, FBC_EINVAL, "payload", "repository and number required");
	if ((rc = fbc_db_repo_get(&repo, ctx->db, name, err)))
		return rc == FBC_ENOTFOUND ? FBC_EINVAL : rc; /* deleted meanwhile: give up */
	rc = fbc_db_pull_get(&pull, ctx->db, name, number, err);
	if (rc == FBC_ENOTFOUND) {
		fbc_error_init(err);
		rc = 0;
	}
	if (rc || (rc = fbc_ingest_mirror(&path, ctx->db, env, repo, err)) ||
	    (rc = fbc_git_open(&g, path, err)))
		goto done;

	/* the head: the delivery's sha, else the stored one, else the review ref */
	const char *want = jstr(payload, "head", NULL);
	if (!want)
		want = jstr(pull, "headSha", NULL);
	review_ref(ref, sizeof(ref), repo, number);
	if ((rc = fbc_git_resolve(head, g, want ? want : ref, err))) {
		rc = fbc_error_set(err, FBC_EINVAL, want ? want : ref,
				   "the pull request's head is not in %s after fetching",
				   jstr(repo, "url", NULL));
		goto done;
	}
	/* the base: the target branch as it is now (the engine compares from the
	 * merge base), else the delivery's base sha */
	const char *base_ref = jstr(payload, "baseRef", NULL);
	if (!base_ref)
		base_ref = jstr(pull, "baseRef", NULL);
	if (!base_ref)
		base_ref = jstr(repo, "branch", NULL);
	snprintf(ref, sizeof(ref), "refs/heads/%s", base_ref ? base_ref : "main");
	if (fbc_git_resolve(base, g, ref, err) != 0) {
		const char *b = jstr(payload, "base", NULL);
		fbc_error_init(err);
		if (!b || (rc = fbc_git_resolve(base, g, b, err))) {
			rc = fbc_error_set(err, FBC_EINVAL, ref, "the base branch is not in %s",
					   jstr(repo, "url", NULL));
			goto done;
		}
	}
	if (fbc_review_forge_reports(repo) &&
	    (rc = enqueue_pending(ctx->db, name, number, head, err)))
		goto done;
	/* the head is a commit fbcd has looked at (GET .../commits/{sha}) */
	char *cauthor = NULL;
	long long when = 0;
	if ((rc = fbc_git_commit_info(&cauthor, &when, path, head, err)) == 0) {
		fbc_db_provenance seen = {name, head, cauthor, number, when};
		rc = fbc_db_commit_seen(ctx->db, &seen, err);
	}
	free(cauthor);
	if (rc)
		goto done;

	/* who: the author and the /approve comments recorded on the pull request */
	const char *author = jstr(payload, "author", NULL);
	if (!author)
		author = jstr(pull, "author", NULL);
	json_t *apr = json_object_get(pull, "approvals");
	size_t n_apr = json_array_size(apr);
	if (n_apr && !(approvers = calloc(n_apr, sizeof(*approvers)))) {
		rc = fbc_error_set(err, FBC_ENOMEM, "pr.check", "out of memory");
		goto done;
	}
	for (size_t i = 0; i < n_apr; i++)
		approvers[i] = json_string_value(json_array_get(apr, i));
	fbc_checks_options o = {.author = author,
				.approved_by = approvers,
				.n_approved_by = n_apr,
				.cache = shared_cache(env->data_dir)};
	if ((rc = fbc_checks_run(&r, g, base, head, &o, err)) ||
	    (rc = fbc_checks_result_json(&doc, r, err)))
		goto done;
	for (size_t i = 0; i < r->n_checks; i++)
		fbc_metric_observe(&m_check_duration, (const char *[]){r->checks[i].id},
				   r->checks[i].ms / 1e3);
	const char *concl = fbc_check_conclusion_name(r->conclusion);
	if (!(doc_text = json_dumps(doc, JSON_COMPACT))) {
		rc = fbc_error_set(err, FBC_ENOMEM, "pr.check", "out of memory");
		goto done;
	}
	fbc_db_pull_check pc = {name, number, head, base, concl, doc_text};
	res = json_pack("{s:s,s:s,s:s,s:f}", "conclusion", concl, "head", head, "base", base, "ms",
			r->total_ms);
	if (!res || !(res_text = json_dumps(res, JSON_COMPACT))) {
		rc = fbc_error_set(err, FBC_ENOMEM, "pr.check", "out of memory");
		goto done;
	}
	rc = fbc_db_pull_check_store(&check_id, ctx->db, ctx->job->id, ctx->worker, &pc, res_text,
				     fbc_review_forge_reports(repo) ? FBC_REVIEW_REPORT_KIND : NULL,
				     err);
	if (rc == FBC_ECONFLICT) {
		/* a newer head superseded this check while it ran: its result
		 * is stale and is neither stored nor reported */
		fbc_log(FBC_LOG_INFO,
			(fbc_log_field[]){FBC_LOG_STR("repository", name),
					  FBC_LOG_NUM("pull_request", number),
					  FBC_LOG_STR("head", head)},
			3, "pr.check superseded while running: result dropped");
		fbc_error_init(err);
		rc = 0;
	}
	if (rc == 0)
		ctx->completed = true;
done:
	(void)result;
	free(res_text);
	free(doc_text);
	free(approvers);
	json_decref(res);
	json_decref(doc);
	json_decref(pull);
	json_decref(repo);
	fbc_checks_result_free(r);
	fbc_git_free(g);
	free(path);
	return rc;
}
