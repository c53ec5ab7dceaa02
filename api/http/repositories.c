/* Watched repositories (pipeline.md §2): list, create, read, patch, delete;
 * and the pipeline's view of a pull request. Credentials are references
 * (file path, variable name) and are returned as such. */
#include "api/http/handlers.h"
#include "db/gitops.h"
#include "pipeline/publish/publish.h"

#include <stdio.h>
#include <string.h>

int fbc_http_repo_list(fbc_http_req *req, fbc_http_resp *resp)
{
	fbc_db_page page;
	json_t *out = NULL;
	fbc_error err;

	if (fbc_http_page_db(&page, req, resp) != 0)
		return 0;
	fbc_error_init(&err);
	int rc = fbc_db_repo_list(&out, app_of(req)->db, &page, &err);
	return fbc_http_reply_db(req, resp, rc, out, &err);
}

static int bad_spec(fbc_http_resp *resp, fbc_http_req *req, const fbc_error *err)
{
	if (err->code == FBC_EINVAL || err->code == FBC_ELIMIT)
		return fbc_http_problem(resp, req, err->code == FBC_ELIMIT ? 413 : 400,
					"bad_repository", "%s: %s", err->where, err->message);
	return fbc_http_problem_from_error(resp, req, err);
}

int fbc_http_repo_publish_check(json_t *spec, fbc_error *err)
{
	json_t *t;
	size_t i;
	int rc;

	json_array_foreach(json_object_get(spec, "publish"), i, t)
	{
		if ((rc = fbc_publish_target_check(t, true, err)) != 0) {
			char where[sizeof(err->where)];
			snprintf(where, sizeof(where), "publish[%zu]: %s", i, err->where);
			snprintf(err->where, sizeof(err->where), "%s", where);
			return rc;
		}
	}
	return 0;
}

int fbc_http_repo_create(fbc_http_req *req, fbc_http_resp *resp)
{
	json_t *body = NULL, *out = NULL;
	fbc_error err;
	int rc;

	if (fbc_http_read_json_object(&body, req, resp) != 0)
		return 0;
	const char *ro[] = {"origin", "headCommit", "fetchedAt", "createdAt", "updatedAt"};
	for (size_t i = 0; i < sizeof(ro) / sizeof(ro[0]); i++)
		if (json_object_get(body, ro[i]))
			return fbc_http_problem(resp, req, 400, "bad_repository",
						"%s: read-only field", ro[i]);
	fbc_error_init(&err);
	if ((rc = fbc_http_repo_publish_check(body, &err)) != 0 ||
	    (rc = fbc_db_repo_put(&out, app_of(req)->db, body, "api", false, &err)) != 0)
		return bad_spec(resp, req, &err);
	fbc_http_resp_header(resp, "Location",
			     fbc_arena_printf(req->arena, "/v1/repositories/%s",
					      json_string_value(json_object_get(out, "name"))));
	return fbc_http_json(resp, req, 201, out);
}

int fbc_http_repo_get(fbc_http_req *req, fbc_http_resp *resp)
{
	json_t *out = NULL;
	fbc_error err;

	fbc_error_init(&err);
	int rc = fbc_db_repo_get(&out, app_of(req)->db, fbc_http_param(req, "repository"), &err);
	return fbc_http_reply_db(req, resp, rc, out, &err);
}

int fbc_http_repo_patch(fbc_http_req *req, fbc_http_resp *resp)
{
	json_t *body = NULL, *out = NULL;
	fbc_error err;
	int rc;

	if (fbc_http_read_json_object(&body, req, resp) != 0)
		return 0;
	fbc_error_init(&err);
	rc = fbc_http_repo_publish_check(body, &err);
	if (rc == 0)
		rc = fbc_db_repo_patch(&out, app_of(req)->db, fbc_http_param(req, "repository"),
				       body, &err);
	if (rc != 0)
		return bad_spec(resp, req, &err);
	return fbc_http_json(resp, req, 200, out);
}

int fbc_http_repo_delete(fbc_http_req *req, fbc_http_resp *resp)
{
	fbc_error err;

	fbc_error_init(&err);
	if (fbc_db_repo_delete(app_of(req)->db, fbc_http_param(req, "repository"), &err) != 0)
		return fbc_http_problem_from_error(resp, req, &err);
	fbc_http_body(resp, 204, NULL, NULL, 0);
	return 0;
}

int fbc_http_pull_list(fbc_http_req *req, fbc_http_resp *resp)
{
	json_t *out = NULL;
	fbc_error err;

	fbc_error_init(&err);
	int rc = fbc_db_pull_list(&out, app_of(req)->db, fbc_http_param(req, "repository"), &err);
	return fbc_http_reply_db(req, resp, rc, out, &err);
}

int fbc_http_pull_get(fbc_http_req *req, fbc_http_resp *resp)
{
	json_t *out = NULL;
	fbc_error err;
	int64_t n;

	if (fbc_http_parse_int64(&n, fbc_http_param(req, "number"), 1) != 0 || n > 2147483647)
		return fbc_http_problem(resp, req, 400, "bad_request",
					"number: a positive pull request number");
	fbc_error_init(&err);
	int rc = fbc_db_pull_get(&out, app_of(req)->db, fbc_http_param(req, "repository"), (long)n,
				 &err);
	return fbc_http_reply_db(req, resp, rc, out, &err);
}

int fbc_http_commit_get(fbc_http_req *req, fbc_http_resp *resp)
{
	json_t *out = NULL;
	fbc_error err;

	fbc_error_init(&err);
	int rc = fbc_db_commit_get(&out, app_of(req)->db, fbc_http_param(req, "repository"),
				   fbc_http_param(req, "sha"), &err);
	if (rc == FBC_EINVAL)
		return fbc_http_problem(resp, req, 400, "bad_request", "sha: %s", err.message);
	return fbc_http_reply_db(req, resp, rc, out, &err);
}

int fbc_http_bundle_history(fbc_http_req *req, fbc_http_resp *resp)
{
	json_t *out = NULL;
	fbc_error err;

	fbc_error_init(&err);
	int rc = fbc_db_bundle_history(&out, app_of(req)->db, fbc_http_param(req, "catalog"),
				       fbc_http_param(req, "package"),
				       fbc_http_param(req, "bundle"), &err);
	return fbc_http_reply_db(req, resp, rc, out, &err);
}
