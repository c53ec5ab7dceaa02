/*
 * libFuzzer target for POST /v1/resolve as the HTTP layer handles it
 * (fbc_http_api_resolve): body parsing and size checks, the rewriting of
 * the catalog list, request parsing, inline catalogs, the resolution and
 * the answer. There is no database, so bodies naming a registered catalog
 * (an object without "fbc" or "path") are skipped; everything else is
 * answered, and the answer is JSON with a 2xx or 4xx status.
 */
#include "tests/fuzz/fuzz.h"

#include "api/http/app.h"

#include <stdlib.h>
#include <string.h>

static bool names_registered(const uint8_t *data, size_t size)
{
	json_error_t jerr;
	json_t *body = json_loadb((const char *)data, size, 0, &jerr), *cats, *c;
	bool reg = false;
	size_t i;

	cats = json_object_get(body, "catalogs");
	json_array_foreach(cats, i, c)
	{
		json_t *fbc = json_object_get(c, "fbc");
		if (json_is_object(c) && !json_object_get(c, "path") && (!fbc || json_is_null(fbc)))
			reg = true;
	}
	json_decref(body);
	return reg;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static fbc_http_app app;
	static bool ready;
	fbc_http_req req;
	fbc_http_resp resp;
	fbc_arena *a = NULL;
	json_error_t jerr;
	json_t *ans;
	char *body;

	if (!ready) {
		if (fbc_http_app_init(&app, NULL, NULL, 0, 0) != 0)
			abort();
		ready = true;
	}
	if (names_registered(data, size) || !(body = fuzz_strndup(data, size)))
		return 0;
	if (fbc_arena_create(&a, 0) != 0) {
		free(body);
		return 0;
	}
	memset(&req, 0, sizeof(req));
	memset(&resp, 0, sizeof(resp));
	req.arena = a;
	req.method = "POST";
	req.path = "/v1/resolve";
	req.body = body;
	req.body_len = size;
	req.app = &app;
	if (size && data[0] == ' ') { /* a leading space also asks for statistics */
		req.query[0].key = "stats";
		req.query[0].value = "true";
		req.n_query = 1;
	}
	if (fbc_http_api_resolve(&req, &resp) == 0) {
		if (resp.status < 200 || (resp.status >= 300 && resp.status < 400) ||
		    resp.status >= 500)
			abort();
		ans = json_loadb(resp.body, resp.body_len, 0, &jerr);
		if (!ans)
			abort();
		json_decref(ans);
	}
	fbc_http_resp_dispose(&resp);
	fbc_arena_free(a);
	free(body);
	return 0;
}
