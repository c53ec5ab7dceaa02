/* GET /healthz, /readyz and /openapi.json. */
#include "api/http/handlers.h"
#include "service/base/log.h"

#include <stdio.h>

int fbc_http_healthz(fbc_http_req *req, fbc_http_resp *resp)
{
	static const char ok[] = "{\"status\":\"ok\"}";
	(void)req;
	fbc_http_body(resp, 200, "application/json", ok, sizeof(ok) - 1);
	return 0;
}

int fbc_http_readyz(fbc_http_req *req, fbc_http_resp *resp)
{
	static const char ok[] = "{\"status\":\"ready\"}";
	fbc_error err;

	fbc_error_init(&err);
	if (fbc_db_ready(app_of(req)->db, &err) != 0) {
		/* libpq's text names the database host and port: log it only */
		fbc_log(FBC_LOG_WARN,
			(fbc_log_field[]){FBC_LOG_STR("request_id", req->request_id),
					  FBC_LOG_STR("error", err.message)},
			2, "readyz: the database is not reachable");
		return fbc_http_problem(resp, req, 503, "not_ready",
					"the database is not reachable");
	}
	fbc_http_body(resp, 200, "application/json", ok, sizeof(ok) - 1);
	return 0;
}

int fbc_http_openapi(fbc_http_req *req, fbc_http_resp *resp)
{
	(void)req;
	fbc_http_body(resp, 200, "application/json", fbc_http_openapi_json,
		      fbc_http_openapi_json_len);
	return 0;
}
