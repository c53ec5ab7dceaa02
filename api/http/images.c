/* Catalog images (pipeline.md §8): GET/POST /v1/catalogs/{c}/images and
 * GET /v1/images/{digest}. Publishing is a catalog.publish job; these
 * endpoints enqueue it and read what it recorded. */
#include "api/http/handlers.h"
#include "db/gitops.h"
#include "pipeline/publish/publish.h"

#include <stdio.h>
#include <string.h>

int fbc_http_image_list(fbc_http_req *req, fbc_http_resp *resp)
{
	json_t *out = NULL;
	fbc_error err;

	fbc_error_init(&err);
	int rc = fbc_db_image_list(&out, app_of(req)->db, fbc_http_param(req, "catalog"), &err);
	return fbc_http_reply_db(req, resp, rc, out, &err);
}

int fbc_http_image_get(fbc_http_req *req, fbc_http_resp *resp)
{
	const char *d = fbc_http_param(req, "digest");
	json_t *out = NULL;
	fbc_error err;

	if (strncmp(d, "sha256:", 7) || strlen(d) != 71 || strspn(d + 7, "0123456789abcdef") != 64)
		return fbc_http_problem(resp, req, 400, "bad_digest",
					"digest: sha256: and 64 lowercase hex digits");
	fbc_error_init(&err);
	int rc = fbc_db_image_get(&out, app_of(req)->db, d, &err);
	return fbc_http_reply_db(req, resp, rc, out, &err);
}

/* Body: a publish target {"image", "tags"?, "platforms"?, "insecure"?,
 * "authfile"?} and "revision" (default: the current one). 202 {"job",
 * "catalog", "revision"}. */
int fbc_http_image_publish(fbc_http_req *req, fbc_http_resp *resp)
{
	const char *catalog = fbc_http_param(req, "catalog");
	json_t *body = NULL, *v;
	fbc_db_rev rev;
	fbc_error err;
	int64_t job = 0, number = 0;
	int rc;

	if (fbc_http_read_json_object(&body, req, resp) != 0)
		return 0;
	v = json_object_get(body, "revision");
	/* body belongs to the request arena: never json_decref it here. */
	if (v && (!json_is_integer(v) || json_integer_value(v) < 1)) {
		return fbc_http_problem(resp, req, 400, "bad_request",
					"revision: a revision number (1, 2, ...)");
	}
	number = v ? json_integer_value(v) : 0;
	json_object_del(body, "revision");
	fbc_error_init(&err);
	if ((rc = fbc_publish_target_check(body, false, &err)) != 0) {
		return fbc_http_problem(resp, req, 400, "bad_request", "%s: %s", err.where,
					err.message);
	}
	if ((rc = fbc_db_revision_resolve(&rev, app_of(req)->db, catalog, number, &err)) == 0)
		rc = fbc_publish_enqueue(&job, app_of(req)->db, NULL, catalog, rev.number, body,
					 &err);
	if (rc != 0)
		return fbc_http_reply_db(req, resp, rc, NULL, &err);
	json_t *out = json_pack("{s:I,s:s,s:I}", "job", (json_int_t)job, "catalog", catalog,
				"revision", (json_int_t)rev.number);
	if (!out)
		return FBC_ENOMEM;
	fbc_http_resp_header(resp, "Location",
			     fbc_arena_printf(req->arena, "/v1/jobs/%lld", (long long)job));
	return fbc_http_json(resp, req, 202, out);
}
