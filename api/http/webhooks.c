/* POST /v1/webhooks/github and /v1/webhooks/gitlab (pipeline.md §4): verify,
 * store the delivery, enqueue its job, answer 202 — or 401 and nothing
 * stored. The repository is the one whose forge project the payload names
 * (or ?repository=NAME); its secret is read from its reference now. */
#include "api/http/handlers.h"
#include "db/gitops.h"
#include "pipeline/forge/secret.h"
#include "pipeline/forge/webhook.h"
#include "service/base/metrics.h"

#include <stdio.h>
#include <string.h>

static int unauthorized(fbc_http_resp *resp, fbc_http_req *req)
{
	return fbc_http_problem(resp, req, 401, "bad_signature",
				"the delivery's signature or token does not verify");
}

static int reply_status(fbc_http_resp *resp, fbc_http_req *req, int status, const char *what,
			int64_t job)
{
	json_t *o = json_pack("{s:s}", "status", what);
	if (o && job)
		json_object_set_new(o, "job", json_integer(job));
	if (!o)
		return FBC_ENOMEM;
	return fbc_http_json(resp, req, status, o);
}

/* The jobs a verified event asks for; specs point into ev and bufs. */
struct plan {
	fbc_db_job_spec spec;
	const fbc_db_job_spec *jobs[2];
	fbc_db_pull_update pull;
	bool has_pull;
	char key[FBC_DB_JOB_KEY_MAX + 1];
	char *payload;
};

static void plan_jobs(struct plan *p, const fbc_webhook_event *ev, const char *repo,
		      const char *branch)
{
	json_t *pl = NULL;

	memset(p, 0, sizeof(*p));
	switch (ev->kind) {
	case FBC_WEBHOOK_PR_UPDATED:
	case FBC_WEBHOOK_RECHECK:
	case FBC_WEBHOOK_APPROVE:
		p->has_pull = true;
		p->pull.number = ev->number;
		p->pull.head_sha = ev->head_sha;
		p->pull.base_ref = ev->base_ref;
		p->pull.title = ev->title;
		if (ev->kind == FBC_WEBHOOK_PR_UPDATED) {
			p->pull.state = "open";
			p->pull.author = ev->author;
		}
		if (ev->kind == FBC_WEBHOOK_APPROVE)
			p->pull.approver = ev->sender;
		snprintf(p->key, sizeof(p->key), "pr:%s:%ld", repo, ev->number);
		pl = json_pack("{s:s,s:i,s:s?,s:s?,s:s?,s:s?,s:s}", "repository", repo, "number",
			       (json_int_t)ev->number, "head", ev->head_sha, "base", ev->base_sha,
			       "baseRef", ev->base_ref, "author", ev->author, "trigger",
			       ev->kind == FBC_WEBHOOK_PR_UPDATED ? ev->action
			       : ev->kind == FBC_WEBHOOK_RECHECK  ? "recheck"
								  : "approve");
		p->spec.kind = "pr.check";
		p->spec.supersede = true; /* a newer head or request replaces the older check */
		p->spec.priority = 10;
		break;
	case FBC_WEBHOOK_PR_CLOSED:
	case FBC_WEBHOOK_PR_MERGED:
		p->has_pull = true;
		p->pull.number = ev->number;
		p->pull.state = ev->kind == FBC_WEBHOOK_PR_MERGED ? "merged" : "closed";
		p->pull.head_sha = ev->head_sha;
		p->pull.base_ref = ev->base_ref;
		p->pull.author = ev->author;
		p->pull.title = ev->title;
		p->pull.merge_sha = ev->merge_sha;
		return;
	case FBC_WEBHOOK_PUSH: {
		char want[300];
		snprintf(want, sizeof(want), "refs/heads/%s", branch);
		if (ev->deleted || strcmp(ev->ref, want))
			return; /* another branch: nothing to ingest */
		snprintf(p->key, sizeof(p->key), "ingest:%s:%s", repo, ev->head_sha);
		pl = json_pack("{s:s,s:s,s:s?}", "repository", repo, "commit", ev->head_sha,
			       "before", ev->base_sha);
		p->spec.kind = "repo.ingest";
		p->spec.ordered = true; /* writes of a repository run in commit order */
		break;
	}
	default:
		return;
	}
	if (!pl)
		return;
	p->payload = json_dumps(pl, JSON_COMPACT);
	json_decref(pl);
	if (!p->payload)
		return;
	p->spec.key = p->key;
	p->spec.repository = repo;
	p->spec.payload = p->payload;
	p->jobs[0] = &p->spec;
}

static int handle(fbc_http_req *req, fbc_http_resp *resp, fbc_webhook_forge forge,
		  const char **result)
{
	const bool gh = forge == FBC_FORGE_GITHUB;
	const char *event = fbc_http_header(req, gh ? "X-GitHub-Event" : "X-Gitlab-Event");
	const char *delivery =
		fbc_http_header(req, gh ? "X-GitHub-Delivery" : "X-Gitlab-Event-UUID");
	const char *sig = fbc_http_header(req, gh ? "X-Hub-Signature-256" : "X-Gitlab-Token");
	const char *only = fbc_http_query(req, "repository");
	fbc_webhook_event ev;
	json_t *repo = NULL;
	char *secret = NULL;
	fbc_error err;
	struct plan plan;
	bool have_ev = false, dup = false;
	int64_t job = 0;
	int rc = 0;

	memset(&plan, 0, sizeof(plan));
	fbc_error_init(&err);
	if (!gh && !delivery)
		delivery = fbc_http_header(req, "Idempotency-Key");
	if (req->body_len > FBC_WEBHOOK_MAX_BODY)
		return fbc_http_problem(resp, req, 413, "too_large",
					"a delivery is at most %zu bytes", FBC_WEBHOOK_MAX_BODY);
	if (!sig || !*sig)
		return unauthorized(resp, req);
	if (!event || !delivery)
		return fbc_http_problem(
			resp, req, 400, "bad_delivery", "missing %s header",
			!event ? (gh ? "X-GitHub-Event" : "X-Gitlab-Event")
			       : (gh ? "X-GitHub-Delivery" : "X-Gitlab-Event-UUID"));
	if (fbc_webhook_parse(&ev, forge, event, req->body, req->body_len, &err) != 0) {
		/* unauthenticated input: say what is wrong with it, store nothing */
		rc = fbc_http_problem(resp, req, 400, "bad_delivery", "%s: %s", err.where,
				      err.message);
		goto done;
	}
	have_ev = true;
	if (only)
		rc = fbc_db_repo_get(&repo, app_of(req)->db, only, &err);
	else if (ev.project)
		rc = fbc_db_repo_find_by_project(&repo, app_of(req)->db, gh ? "github" : "gitlab",
						 ev.project, ev.project_id, &err);
	else
		rc = FBC_ENOTFOUND;
	if (rc == FBC_ENOTFOUND ||
	    (repo &&
	     strcmp(json_string_value(json_object_get(json_object_get(repo, "forge"), "kind")),
		    gh ? "github" : "gitlab"))) {
		rc = unauthorized(resp, req); /* no repository expects this delivery */
		goto done;
	}
	if (rc != 0) {
		rc = fbc_http_problem_from_error(resp, req, &err);
		goto done;
	}
	const char *name = json_string_value(json_object_get(repo, "name"));
	json_t *cred = json_object_get(repo, "credentials");
	if (fbc_secret_read(&secret, json_string_value(json_object_get(cred, "webhookSecretFile")),
			    json_string_value(json_object_get(cred, "webhookSecretEnv")),
			    &err) != 0) {
		fprintf(stderr, "fbcd: webhook for repository %s: no usable secret: %s: %s\n", name,
			err.where, err.message);
		rc = unauthorized(resp, req);
		goto done;
	}
	if (gh ? !fbc_webhook_github_verify(secret, req->body ? req->body : "", req->body_len, sig)
	       : !fbc_webhook_gitlab_verify(secret, sig)) {
		rc = unauthorized(resp, req);
		goto done;
	}
	if (ev.kind == FBC_WEBHOOK_PING) {
		*result = "ping";
		rc = reply_status(resp, req, 200, "pong", 0);
		goto done;
	}
	plan_jobs(&plan, &ev, name, json_string_value(json_object_get(repo, "branch")));
	if (plan.spec.kind && !plan.jobs[0]) {
		rc = fbc_http_problem(resp, req, 500, "internal", "out of memory");
		goto done;
	}
	fbc_db_delivery d = {
		gh ? "github" : "gitlab", delivery, event, ev.action, name, ev.head_sha, ev.number};
	if (fbc_db_delivery_store(&dup, &job, app_of(req)->db, &d,
				  plan.has_pull ? &plan.pull : NULL,
				  plan.jobs[0] ? plan.jobs : NULL, &err) != 0) {
		rc = fbc_http_problem_from_error(resp, req, &err);
		goto done;
	}
	*result = dup ? "duplicate" : plan.jobs[0] || plan.has_pull ? "accepted" : "ignored";
	rc = reply_status(resp, req, dup ? 200 : 202, *result, job);
done:
	free(plan.payload);
	fbc_secret_free(secret);
	json_decref(repo);
	if (have_ev)
		fbc_webhook_event_dispose(&ev);
	return rc;
}

static const fbc_metric_def m_deliveries = {.name = "fbcd_webhook_deliveries_total",
					    .help = "Webhook deliveries by forge, event and result "
						    "(accepted, ignored, duplicate, ping, "
						    "unauthorized, invalid, too_large, error).",
					    .type = FBC_METRIC_COUNTER,
					    .labels = {"forge", "event", "result"}};

/* The event label: the forges' events fbcd knows, else "other" (the header
 * is read before the signature is checked: its values must stay bounded). */
static const char *event_label(const char *e)
{
	static const char *const known[] = {"push",	 "pull_request", "issue_comment",
					    "ping",	 "Push Hook",	 "Merge Request Hook",
					    "Note Hook", "System Hook",	 NULL};
	for (size_t i = 0; e && known[i]; i++)
		if (!strcmp(e, known[i]))
			return known[i];
	return "other";
}

static int count(fbc_http_req *req, fbc_http_resp *resp, fbc_webhook_forge forge)
{
	const bool gh = forge == FBC_FORGE_GITHUB;
	const char *result = NULL;
	int rc = handle(req, resp, forge, &result);

	if (!result)
		result = resp->status == 401   ? "unauthorized"
			 : resp->status == 413 ? "too_large"
			 : resp->status == 400 ? "invalid"
					       : "error";
	fbc_metric_add(&m_deliveries,
		       (const char *[]){gh ? "github" : "gitlab",
					event_label(fbc_http_header(req, gh ? "X-GitHub-Event"
									    : "X-Gitlab-Event")),
					result},
		       1);
	return rc;
}

int fbc_http_webhook_github(fbc_http_req *req, fbc_http_resp *resp)
{
	return count(req, resp, FBC_FORGE_GITHUB);
}

int fbc_http_webhook_gitlab(fbc_http_req *req, fbc_http_resp *resp)
{
	return count(req, resp, FBC_FORGE_GITLAB);
}
