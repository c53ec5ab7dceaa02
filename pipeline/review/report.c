/* forge.report and pr.merge: results of pr.check to GitHub or GitLab, and
 * the merge of what passed (pipeline.md §6, §7; review.h). */
#include "pipeline/review/review.h"

#include "db/gitops.h"
#include "pipeline/checks/checks.h"
#include "pipeline/checks/settings.h"
#include "pipeline/forge/api.h"
#include "pipeline/forge/secret.h"
#include "pipeline/git/git.h"
#include "pipeline/ingest/ingest.h"
#include "service/base/log.h"
#include "service/base/tree.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ANNOTATIONS_PER_CALL 50

static const char *jstr(json_t *o, const char *a, const char *b)
{
	json_t *v = json_object_get(o, a);
	if (b)
		v = json_object_get(v, b);
	return json_is_string(v) && json_string_length(v) ? json_string_value(v) : NULL;
}

/* What one report run works with. */
struct rep {
	fbc_db *db;
	const fbc_pipeline_env *env;
	json_t *repo, *pull;
	const char *name, *sha;
	long number;
	fbc_forge_api *api;
	char *project; /* as a path component */
	char path[1024];
	char link[1024]; /* the pull request in the fbcd API, or "" */
};

static int rep_open(struct rep *r, fbc_queue_ctx *ctx, json_t *payload, fbc_error *err)
{
	char *token = NULL;
	int rc;

	memset(r, 0, sizeof(*r));
	r->db = ctx->db;
	r->env = ctx->app;
	r->name = jstr(payload, "repository", NULL);
	r->sha = jstr(payload, "sha", NULL);
	r->number = (long)json_integer_value(json_object_get(payload, "number"));
	if (!r->name || !r->sha || r->number <= 0)
		return fbc_error_set(err, FBC_EINVAL, "payload",
				     "repository, number and sha required");
	if ((rc = fbc_db_repo_get(&r->repo, r->db, r->name, err)))
		return rc == FBC_ENOTFOUND ? FBC_EINVAL : rc;
	if (!fbc_review_forge_reports(r->repo))
		return fbc_error_set(err, FBC_EINVAL, "forge.kind",
				     "repository %s reports to no forge", r->name);
	rc = fbc_db_pull_get(&r->pull, r->db, r->name, r->number, err);
	if (rc == FBC_ENOTFOUND) {
		fbc_error_init(err);
		rc = 0;
	}
	if (rc)
		return rc;
	const char *tf = jstr(r->repo, "credentials", "tokenFile"),
		   *te = jstr(r->repo, "credentials", "tokenEnv");
	if ((tf || te) && (rc = fbc_secret_read(&token, tf, te, err)) != 0)
		return rc == FBC_ENOTFOUND ? FBC_EUNAVAIL : rc; /* may appear: retried */
	rc = fbc_forge_api_open(&r->api, jstr(r->repo, "forge", "kind"),
				jstr(r->repo, "forge", "api"), token,
				r->env ? r->env->ca_file : NULL, err);
	fbc_secret_free(token);
	if (rc)
		return rc;
	if (!(r->project = fbc_forge_api_project(r->api, jstr(r->repo, "forge", "project"))))
		return fbc_error_set(err, FBC_ENOMEM, "forge", "out of memory");
	if (r->env && r->env->public_url)
		snprintf(r->link, sizeof(r->link), "%s/v1/repositories/%s/pulls/%ld",
			 r->env->public_url, r->name, r->number);
	return 0;
}

static void rep_close(struct rep *r)
{
	fbc_forge_api_free(r->api);
	free(r->project);
	json_decref(r->pull);
	json_decref(r->repo);
}

/* One call; a non-2xx answer is the job's error. *out may be NULL. */
static int call(struct rep *r, const char *what, const char *method, json_t *body, json_t **out,
		long *status_out, fbc_error *err)
{
	json_t *ans = NULL;
	long status = 0;
	int rc = fbc_forge_api_call(r->api, method, r->path, body, &ans, &status, err);

	json_decref(body);
	if (rc)
		return rc;
	if (status_out)
		*status_out = status;
	if ((status < 200 || status > 299) && !status_out) {
		rc = fbc_forge_api_error(r->api, what, status, ans, err);
		json_decref(ans);
		return rc;
	}
	if (out)
		*out = ans;
	else
		json_decref(ans);
	return 0;
}

/* ------------------------------------------------------------ mapping */

static const char *gh_conclusion(const char *c)
{
	if (!strcmp(c, "success"))
		return "success";
	if (!strcmp(c, "warning"))
		return "neutral";
	if (!strcmp(c, "skipped"))
		return "skipped";
	if (!strcmp(c, "action_required"))
		return "action_required";
	return "failure";
}

/* Commit status states: GitHub success|failure|error|pending; GitLab
 * success|failed|running|pending|skipped. Waiting for /approve is pending. */
static const char *status_state(bool gitlab, const char *c)
{
	if (!strcmp(c, "success") || !strcmp(c, "warning"))
		return "success";
	if (!strcmp(c, "skipped"))
		return gitlab ? "skipped" : "success";
	if (!strcmp(c, "action_required"))
		return "pending";
	return gitlab ? "failed" : "failure";
}

static const char *gh_level(const char *l)
{
	return !strcmp(l, "failure") ? "failure" : !strcmp(l, "warning") ? "warning" : "notice";
}

/* A description of at most 140 characters (GitHub's limit; GitLab's 255). */
static json_t *short_text(const char *conclusion, const char *summary)
{
	char d[141];
	int n = snprintf(d, sizeof(d), "%s: %s", conclusion, summary ? summary : "");
	if (n >= (int)sizeof(d))
		memcpy(d + sizeof(d) - 4, "...", 4);
	return json_string(d);
}

/* ------------------------------------------------------- GitHub checks */

static json_t *annotations(json_t *check, size_t from, size_t *next)
{
	json_t *out = json_array(), *a;
	json_t *all = json_object_get(check, "annotations");
	size_t i = from;

	for (; i < json_array_size(all) && json_array_size(out) < ANNOTATIONS_PER_CALL; i++) {
		a = json_array_get(all, i);
		const char *path = jstr(a, "path", NULL);
		json_int_t line = json_integer_value(json_object_get(a, "line"));
		if (!path) /* about the whole change: in the summary comment only */
			continue;
		char title[128];
		snprintf(title, sizeof(title), "%s/%s", jstr(check, "id", NULL),
			 jstr(a, "code", NULL) ? jstr(a, "code", NULL) : "finding");
		json_array_append_new(
			out, json_pack("{s:s,s:I,s:I,s:s,s:s,s:s}", "path", path, "start_line",
				       line > 0 ? line : 1, "end_line", line > 0 ? line : 1,
				       "annotation_level", gh_level(jstr(a, "level", NULL) ?: ""),
				       "title", title, "message",
				       jstr(a, "message", NULL) ? jstr(a, "message", NULL) : ""));
	}
	*next = i;
	return out;
}

static json_t *runs_of(struct rep *r)
{
	json_t *cr = json_object_get(r->pull, "checkRuns");
	const char *sha = jstr(cr, "sha", NULL);
	return sha && !strcmp(sha, r->sha) ? json_object_get(cr, "runs") : NULL;
}

static int save_runs(struct rep *r, json_t *runs, fbc_error *err)
{
	json_t *o = json_pack("{s:s,s:O}", "sha", r->sha, "runs", runs);
	char *text = o ? json_dumps(o, JSON_COMPACT) : NULL;
	int rc;

	json_decref(o);
	if (!text)
		return fbc_error_set(err, FBC_ENOMEM, "forge", "out of memory");
	rc = fbc_db_pull_report_set(r->db, r->name, r->number, NULL, text, err);
	free(text);
	return rc;
}

static int gh_checks_pending(struct rep *r, json_t *res, fbc_error *err)
{
	json_t *have = runs_of(r), *runs = have ? json_deep_copy(have) : json_object();
	int rc = 0;

	for (size_t i = 0; fbc_checks_ids[i] && rc == 0; i++) {
		char name[64];
		json_t *ans = NULL;
		if (json_object_get(runs, fbc_checks_ids[i]))
			continue; /* a retry: created already */
		snprintf(name, sizeof(name), "fbcd/%s", fbc_checks_ids[i]);
		snprintf(r->path, sizeof(r->path), "/repos/%s/check-runs", r->project);
		json_t *body = json_pack("{s:s,s:s,s:s,s:s}", "name", name, "head_sha", r->sha,
					 "status", "in_progress", "external_id", fbc_checks_ids[i]);
		if (r->link[0])
			json_object_set_new(body, "details_url", json_string(r->link));
		if ((rc = call(r, "create check run", "POST", body, &ans, NULL, err)) == 0) {
			json_object_set(runs, fbc_checks_ids[i], json_object_get(ans, "id"));
			rc = save_runs(r, runs, err);
		}
		json_decref(ans);
	}
	json_object_set_new(res, "checkRuns", json_integer((json_int_t)json_object_size(runs)));
	json_decref(runs);
	return rc;
}

static int gh_checks_final(struct rep *r, json_t *doc, json_t *res, fbc_error *err)
{
	json_t *have = runs_of(r), *runs = have ? json_deep_copy(have) : json_object(), *c;
	size_t i, calls = 0;
	int rc = 0;

	json_array_foreach(json_object_get(doc, "checks"), i, c)
	{
		const char *id = jstr(c, "id", NULL), *concl = jstr(c, "conclusion", NULL);
		const char *summary = jstr(c, "summary", NULL) ? jstr(c, "summary", NULL) : "";
		json_t *run = json_object_get(runs, id), *ans = NULL;
		size_t next = 0;
		char title[160], name[64];

		if (!id || !concl)
			continue;
		snprintf(title, sizeof(title), "%s (%zu findings)", concl,
			 json_array_size(json_object_get(c, "annotations")));
		json_t *body =
			json_pack("{s:s,s:s,s:{s:s,s:s,s:o}}", "status", "completed", "conclusion",
				  gh_conclusion(concl), "output", "title", title, "summary",
				  summary, "annotations", annotations(c, 0, &next));
		if (r->link[0])
			json_object_set_new(body, "details_url", json_string(r->link));
		if (json_is_integer(run)) {
			snprintf(r->path, sizeof(r->path), "/repos/%s/check-runs/%lld", r->project,
				 (long long)json_integer_value(run));
			rc = call(r, "complete check run", "PATCH", body, &ans, NULL, err);
		} else { /* the pending report did not run: one completed run */
			snprintf(name, sizeof(name), "fbcd/%s", id);
			json_object_set_new(body, "name", json_string(name));
			json_object_set_new(body, "head_sha", json_string(r->sha));
			snprintf(r->path, sizeof(r->path), "/repos/%s/check-runs", r->project);
			rc = call(r, "create check run", "POST", body, &ans, NULL, err);
			if (rc == 0)
				json_object_set(runs, id, json_object_get(ans, "id"));
		}
		json_decref(ans);
		calls++;
		/* the rest of the annotations, 50 a request, added to the run */
		while (rc == 0 && next < json_array_size(json_object_get(c, "annotations"))) {
			json_t *batch = annotations(c, next, &next);
			if (!json_array_size(batch)) {
				json_decref(batch);
				continue;
			}
			snprintf(r->path, sizeof(r->path), "/repos/%s/check-runs/%lld", r->project,
				 (long long)json_integer_value(json_object_get(runs, id)));
			rc = call(r, "add annotations", "PATCH",
				  json_pack("{s:{s:s,s:s,s:o}}", "output", "title", title,
					    "summary", summary, "annotations", batch),
				  NULL, NULL, err);
			calls++;
		}
		if (rc)
			break;
	}
	if (rc == 0)
		rc = save_runs(r, runs, err);
	json_object_set_new(res, "checkRunCalls", json_integer((json_int_t)calls));
	json_decref(runs);
	return rc;
}

/* ------------------------------------------------------ commit statuses */

static int status_post(struct rep *r, const char *id, const char *state, json_t *desc,
		       fbc_error *err)
{
	char name[64];
	bool gl = fbc_forge_api_gitlab(r->api);

	snprintf(name, sizeof(name), "fbcd/%s", id);
	if (gl)
		snprintf(r->path, sizeof(r->path), "/projects/%s/statuses/%s", r->project, r->sha);
	else
		snprintf(r->path, sizeof(r->path), "/repos/%s/statuses/%s", r->project, r->sha);
	json_t *body = json_pack("{s:s,s:s,s:o}", "state", state, gl ? "name" : "context", name,
				 "description", desc);
	if (r->link[0])
		json_object_set_new(body, "target_url", json_string(r->link));
	return call(r, "commit status", "POST", body, NULL, NULL, err);
}

static int statuses(struct rep *r, json_t *doc, json_t *res, fbc_error *err)
{
	bool gl = fbc_forge_api_gitlab(r->api);
	size_t i, n = 0;
	json_t *c;
	int rc = 0;

	if (!doc) {
		for (i = 0; fbc_checks_ids[i] && rc == 0; i++, n++)
			rc = status_post(r, fbc_checks_ids[i], gl ? "running" : "pending",
					 json_string("running"), err);
	} else {
		json_array_foreach(json_object_get(doc, "checks"), i, c)
		{
			const char *concl = jstr(c, "conclusion", NULL);
			if (!concl || !jstr(c, "id", NULL))
				continue;
			if ((rc = status_post(r, jstr(c, "id", NULL), status_state(gl, concl),
					      short_text(concl, jstr(c, "summary", NULL)), err)))
				break;
			n++;
		}
	}
	json_object_set_new(res, "statuses", json_integer((json_int_t)n));
	return rc;
}

/* ---------------------------------------------------- summary comment */

static int comment_put(struct rep *r, json_t *doc, const char *merge_note, json_t *res,
		       fbc_error *err)
{
	bool gl = fbc_forge_api_gitlab(r->api);
	const char *cid = jstr(r->pull, "commentId", NULL);
	char *text = fbc_review_comment(doc, merge_note, r->link[0] ? r->link : NULL);
	json_t *ans = NULL;
	long status = 0;
	int rc;

	if (!text)
		return fbc_error_set(err, FBC_ENOMEM, "comment", "out of memory");
	if (cid) { /* edited in place */
		if (gl)
			snprintf(r->path, sizeof(r->path),
				 "/projects/%s/merge_requests/%ld/notes/%s", r->project, r->number,
				 cid);
		else
			snprintf(r->path, sizeof(r->path), "/repos/%s/issues/comments/%s",
				 r->project, cid);
		rc = call(r, "edit the summary comment", gl ? "PUT" : "PATCH",
			  json_pack("{s:s}", "body", text), NULL, &status, err);
		if (rc == 0 && status >= 200 && status <= 299) {
			json_object_set_new(res, "comment", json_string("edited"));
			goto done;
		}
		if (rc == 0 && status != 404) {
			rc = fbc_forge_api_error(r->api, "edit the summary comment", status, NULL,
						 err);
			goto done;
		}
		if (rc)
			goto done;
		/* 404: someone deleted it; write a new one */
	}
	if (gl)
		snprintf(r->path, sizeof(r->path), "/projects/%s/merge_requests/%ld/notes",
			 r->project, r->number);
	else
		snprintf(r->path, sizeof(r->path), "/repos/%s/issues/%ld/comments", r->project,
			 r->number);
	if ((rc = call(r, "write the summary comment", "POST", json_pack("{s:s}", "body", text),
		       &ans, NULL, err)) == 0) {
		json_t *id = json_object_get(ans, "id");
		char buf[32];
		snprintf(buf, sizeof(buf), "%lld", (long long)json_integer_value(id));
		rc = json_is_integer(id)
			     ? fbc_db_pull_report_set(r->db, r->name, r->number, buf, NULL, err)
			     : fbc_error_set(err, FBC_EINVAL, "comment", "the forge gave no id");
		json_object_set_new(res, "comment", json_string("created"));
	}
done:
	json_decref(ans);
	free(text);
	return rc;
}

/* ------------------------------------------------------------- jobs */

static int enqueue_merge(struct rep *r, int64_t check, fbc_error *err)
{
	char key[FBC_DB_JOB_KEY_MAX + 1], *text;
	json_t *pl =
		json_pack("{s:s,s:i,s:s,s:I}", "repository", r->name, "number",
			  (json_int_t)r->number, "sha", r->sha, "pullCheck", (json_int_t)check);
	int64_t id;
	int rc;

	text = pl ? json_dumps(pl, JSON_COMPACT) : NULL;
	json_decref(pl);
	if (!text)
		return fbc_error_set(err, FBC_ENOMEM, "merge", "out of memory");
	snprintf(key, sizeof(key), "merge:%s:%ld", r->name, r->number);
	fbc_db_job_spec spec = {.kind = FBC_REVIEW_MERGE_KIND,
				.key = key,
				.repository = r->name,
				.payload = text,
				.priority = 10,
				.max_attempts = 5};
	rc = fbc_db_job_enqueue(&id, NULL, r->db, &spec, err);
	free(text);
	return rc == FBC_ECONFLICT ? 0 : rc;
}

static char *result_text(json_t *res, fbc_error *err)
{
	char *t = json_dumps(res, JSON_COMPACT);
	if (!t)
		fbc_error_set(err, FBC_ENOMEM, "forge", "out of memory");
	return t;
}

/* Is a queued or running job of this key live? */
static int pending_live(bool *live, fbc_db *db, const char *key, fbc_error *err)
{
	static const char *const states[] = {"queued", "running"};
	fbc_db_page page = {0};
	int rc = 0;

	*live = false;
	page.limit = 1;
	for (size_t i = 0; i < 2 && !*live && rc == 0; i++) {
		fbc_db_job_filter f = {
			.kind = FBC_REVIEW_REPORT_KIND, .state = states[i], .key = key};
		json_t *out = NULL;
		if ((rc = fbc_db_job_list(&out, db, &f, &page, err)) == 0)
			*live = json_array_size(json_object_get(out, "items")) > 0;
		json_decref(out);
	}
	return rc;
}

int fbc_review_report_run(fbc_queue_ctx *ctx, json_t *payload, char **result, fbc_error *err)
{
	const char *phase = jstr(payload, "phase", NULL);
	bool final = phase && !strcmp(phase, "final");
	json_t *chk = NULL, *res = json_object();
	struct rep r;
	int rc;

	if (!phase || (!final && strcmp(phase, "pending")))
		return fbc_error_set(err, FBC_EINVAL, "phase", "pending or final");
	if (!res)
		return fbc_error_set(err, FBC_ENOMEM, "forge", "out of memory");
	if ((rc = rep_open(&r, ctx, payload, err)))
		goto done;
	if (final) {
		int64_t id = json_integer_value(json_object_get(payload, "pullCheck"));
		/* the pending report of this head goes first: it creates the check
		 * runs this one completes (it may be waiting out a rate limit) */
		char key[FBC_DB_JOB_KEY_MAX + 1];
		bool live = false;
		snprintf(key, sizeof(key), "report:%s:%ld:pending:%s", r.name, r.number, r.sha);
		if ((rc = pending_live(&live, ctx->db, key, err)))
			goto done;
		if (live) {
			ctx->retry_after_ms = 200; /* it is running now: soon done */
			rc = fbc_error_set(err, FBC_EUNAVAIL, "forge.report",
					   "the pending report of %.12s has not run yet", r.sha);
			goto done;
		}
		/* the pull request as the pending report left it: read before,
		 * it may miss the runs that report created after (a run would be
		 * created twice, once in progress and once completed) */
		json_decref(r.pull);
		r.pull = NULL;
		rc = fbc_db_pull_get(&r.pull, r.db, r.name, r.number, err);
		if (rc == FBC_ENOTFOUND) {
			fbc_error_init(err);
			rc = 0;
		}
		if (rc)
			goto done;
		if ((rc = fbc_db_pull_check_get(&chk, ctx->db, id, err)))
			goto done;
		if (!json_is_true(json_object_get(chk, "newest"))) {
			/* a newer check reports itself; this one would overwrite it */
			json_object_set_new(res, "skipped", json_string("a newer check exists"));
			goto out;
		}
	} else if (jstr(r.pull, "headSha", NULL) && strcmp(jstr(r.pull, "headSha", NULL), r.sha)) {
		json_object_set_new(res, "skipped", json_string("the head moved"));
		goto out;
	}
	json_t *doc = final ? json_object_get(chk, "result") : NULL;
	const char *mode = jstr(r.repo, "forge", "report");
	if (!fbc_forge_api_gitlab(r.api) && (!mode || !strcmp(mode, "checks")))
		rc = final ? gh_checks_final(&r, doc, res, err) : gh_checks_pending(&r, res, err);
	else
		rc = statuses(&r, doc, res, err);
	if (rc == 0 && final)
		rc = comment_put(&r, doc, NULL, res, err);
	/* §7: what passed merges when the repository says so */
	const char *merge = jstr(r.repo, "merge", NULL);
	if (rc == 0 && final && merge && !strcmp(merge, "auto") &&
	    !strcmp(jstr(chk, "conclusion", NULL) ?: "", "success")) {
		rc = enqueue_merge(&r, json_integer_value(json_object_get(chk, "id")), err);
		json_object_set_new(res, "merge", json_string("queued"));
	}
out:
	if (rc == 0 && !(*result = result_text(res, err)))
		rc = FBC_ENOMEM;
done:
	json_decref(chk);
	json_decref(res);
	rep_close(&r);
	return rc;
}

/* Does every changed package allow merging (operator layout: ci.yaml
 * `merge` not false at the base commit)? *why names the first that does not. */
static int packages_allow(bool *ok, char *why, size_t whysz, struct rep *r, json_t *doc,
			  fbc_error *err)
{
	json_t *pkgs = json_object_get(json_object_get(doc, "changes"), "packages"), *p;
	char *path = NULL, file[512];
	fbc_git *g = NULL;
	fbc_tree *t = NULL;
	size_t i;
	int rc;

	*ok = true;
	if (strcmp(jstr(doc, "layout", NULL) ?: "", "operators") || !json_array_size(pkgs))
		return 0;
	if ((rc = fbc_ingest_mirror(&path, r->db, r->env, r->repo, err)) ||
	    (rc = fbc_git_open(&g, path, err)) ||
	    (rc = fbc_git_tree_open(&t, g, jstr(doc, "base", NULL), err)))
		goto done;
	json_array_foreach(pkgs, i, p)
	{
		fbc_tree_blob blob = {0};
		fbc_ci_yaml ci;
		fbc_arena *a = NULL;
		fbc_error e2;

		snprintf(file, sizeof(file), "operators/%s/ci.yaml", json_string_value(p));
		if (fbc_tree_read(t, &blob, file, FBC_SETTINGS_MAX_BYTES, &e2) != 0)
			continue; /* a new package: no ci.yaml at the base */
		memset(&ci, 0, sizeof(ci));
		ci.merge = true;
		if (fbc_arena_create(&a, 0) == 0 &&
		    fbc_settings_parse_ci(&ci, a, file, blob.data, blob.len, &e2) == 0 &&
		    !ci.merge) {
			*ok = false;
			snprintf(why, whysz, "%s says `merge: false`", file);
		}
		fbc_arena_free(a);
		fbc_tree_blob_release(t, &blob);
		if (!*ok)
			break;
	}
done:
	fbc_tree_free(t);
	fbc_git_free(g);
	free(path);
	return rc;
}

int fbc_review_merge_run(fbc_queue_ctx *ctx, json_t *payload, char **result, fbc_error *err)
{
	json_t *chk = NULL, *res = json_object(), *ans = NULL;
	char note[512] = "";
	struct rep r;
	long status = 0;
	bool ok = true;
	int rc;

	if (!res)
		return fbc_error_set(err, FBC_ENOMEM, "merge", "out of memory");
	if ((rc = rep_open(&r, ctx, payload, err)) ||
	    (rc = fbc_db_pull_check_get(&chk, ctx->db,
					json_integer_value(json_object_get(payload, "pullCheck")),
					err)))
		goto done;
	if (!json_is_true(json_object_get(chk, "newest")) ||
	    strcmp(jstr(chk, "conclusion", NULL) ?: "", "success") ||
	    strcmp(jstr(chk, "headSha", NULL) ?: "", r.sha)) {
		json_object_set_new(res, "skipped", json_string("not the newest passing check"));
		goto out;
	}
	json_t *doc = json_object_get(chk, "result");
	if ((rc = packages_allow(&ok, note, sizeof(note), &r, doc, err)))
		goto done;
	if (!ok) {
		json_object_set_new(res, "merged", json_false());
		goto report;
	}
	bool gl = fbc_forge_api_gitlab(r.api);
	if (gl)
		snprintf(r.path, sizeof(r.path), "/projects/%s/merge_requests/%ld/merge", r.project,
			 r.number);
	else
		snprintf(r.path, sizeof(r.path), "/repos/%s/pulls/%ld/merge", r.project, r.number);
	/* the checked head is the precondition: a moved head is refused */
	if ((rc = call(&r, "merge", "PUT", json_pack("{s:s}", "sha", r.sha), &ans, &status, err)))
		goto done;
	if (status >= 200 && status <= 299) {
		const char *m = jstr(ans, gl ? "merge_commit_sha" : "sha", NULL);
		json_object_set_new(res, "merged", json_true());
		json_object_set_new(res, "mergeSha", m ? json_string(m) : json_null());
		rc = fbc_db_pull_merge_set(ctx->db, r.name, r.number, m ? m : r.sha, NULL, err);
		goto out;
	}
	if (status == 429 || status >= 500 || status == 401 || status == 403 || status == 404) {
		rc = fbc_forge_api_error(r.api, "merge", status, ans, err);
		goto done;
	}
	/* 405, 406, 409, 422: not mergeable, moved head, conflict — said, not retried */
	json_t *m = json_object_get(ans, "message");
	snprintf(note, sizeof(note), "the forge refused (%ld%s%.300s)%s", status,
		 json_is_string(m) ? ": " : "", json_is_string(m) ? json_string_value(m) : "",
		 status == 409 ? "; the head moved since it was checked" : "");
	json_object_set_new(res, "merged", json_false());
report:
	json_object_set_new(res, "why", json_string(note));
	if ((rc = fbc_db_pull_merge_set(ctx->db, r.name, r.number, NULL, note, err)) == 0)
		rc = comment_put(&r, doc, note, res, err);
out:
	if (rc == 0 && !(*result = result_text(res, err)))
		rc = FBC_ENOMEM;
done:
	json_decref(ans);
	json_decref(chk);
	json_decref(res);
	rep_close(&r);
	return rc;
}
