/* Jobs of the pipeline's queue: list with filters, one job with its history,
 * and the admin actions retry and cancel. */
#include "api/http/handlers.h"
#include "db/gitops.h"

#include <string.h>

static const char *const job_states[] = {"queued", "running", "succeeded", "failed", "cancelled"};

int fbc_http_job_list(fbc_http_req *req, fbc_http_resp *resp)
{
	fbc_db_job_filter f;
	fbc_db_page page;
	json_t *out = NULL;
	fbc_error err;
	bool ok = false;

	if (fbc_http_page_db(&page, req, resp) != 0)
		return 0;
	memset(&f, 0, sizeof(f));
	f.kind = fbc_http_query(req, "kind");
	f.state = fbc_http_query(req, "state");
	f.repository = fbc_http_query(req, "repository");
	f.key = fbc_http_query(req, "key");
	if (f.state) {
		for (size_t i = 0; i < sizeof(job_states) / sizeof(job_states[0]); i++)
			ok |= strcmp(f.state, job_states[i]) == 0;
		if (!ok)
			return fbc_http_problem(resp, req, 400, "bad_request",
						"state: one of queued, running, succeeded, failed, "
						"cancelled");
	}
	if ((f.kind && strlen(f.kind) > 64) || (f.repository && strlen(f.repository) > 253) ||
	    (f.key && strlen(f.key) > FBC_DB_JOB_KEY_MAX))
		return fbc_http_problem(resp, req, 400, "bad_request", "filter value too long");
	fbc_error_init(&err);
	int rc = fbc_db_job_list(&out, app_of(req)->db, &f, &page, &err);
	return fbc_http_reply_db(req, resp, rc, out, &err);
}

static int job_id(int64_t *id, fbc_http_req *req, fbc_http_resp *resp)
{
	if (fbc_http_parse_int64(id, fbc_http_param(req, "job"), 1) != 0) {
		fbc_http_problem(resp, req, 400, "bad_request", "job: a positive integer id");
		return 1;
	}
	return 0;
}

int fbc_http_job_get(fbc_http_req *req, fbc_http_resp *resp)
{
	json_t *out = NULL;
	fbc_error err;
	int64_t id;

	if (job_id(&id, req, resp))
		return 0;
	fbc_error_init(&err);
	int rc = fbc_db_job_get(&out, app_of(req)->db, id, &err);
	return fbc_http_reply_db(req, resp, rc, out, &err);
}

int fbc_http_job_retry(fbc_http_req *req, fbc_http_resp *resp)
{
	json_t *out = NULL;
	fbc_error err;
	int64_t id;

	if (job_id(&id, req, resp))
		return 0;
	fbc_error_init(&err);
	int rc = fbc_db_job_retry(&out, app_of(req)->db, id, "retried through the API", &err);
	return fbc_http_reply_db(req, resp, rc, out, &err);
}

int fbc_http_job_cancel(fbc_http_req *req, fbc_http_resp *resp)
{
	json_t *out = NULL;
	fbc_error err;
	int64_t id;

	if (job_id(&id, req, resp))
		return 0;
	fbc_error_init(&err);
	int rc = fbc_db_job_cancel(&out, app_of(req)->db, id, "cancelled through the API", &err);
	return fbc_http_reply_db(req, resp, rc, out, &err);
}
