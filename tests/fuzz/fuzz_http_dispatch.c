/*
 * libFuzzer target for the HTTP layer's request parsing without a socket
 * (fbc_http_dispatch): routing over the real route table (path patterns and
 * parameters), query arguments, limit and cursor (fbc_http_page_args and the
 * database layer's cursor decoding db_page_args), the Authorization scope
 * check, JSON request bodies, If-None-Match, Range/If-Range,
 * Accept-Encoding (with gzip of the body) and the upload Content-Type.
 *
 * Input, one field per line: method, path, Range, If-Range, If-None-Match,
 * Accept-Encoding, Authorization, Content-Type (an empty line is an absent
 * header), then query arguments "key=value" up to an empty line, then the
 * body. The route handlers are replaced by one that exercises the helpers
 * handlers use and returns a body whose size comes from the path.
 */
#include "tests/fuzz/fuzz.h"

#include "api/http/http.h"
#include "api/http/app.h"
#include "api/http/content.h"
#include "db/internal.h"

#include <stdlib.h>
#include <string.h>

#define N_HEADERS  6
#define MAX_ROUTES 128

static const char body_bytes[4096];

static int handler(fbc_http_req *req, fbc_http_resp *resp)
{
	size_t limit, blen;
	const char *cursor;
	fbc_error err;
	json_t *obj;

	for (size_t i = 0; i < req->n_params; i++) {
		const char *v = fbc_http_param(req, req->params[i].key);
		/* a parameter is one non-empty path segment, bounded */
		if (!v || !*v || strchr(v, '/') || strlen(v) > FBC_HTTP_MAX_SEGMENT)
			abort();
	}
	if (fbc_http_page_args(&limit, &cursor, req, resp, FBC_DB_PAGE_DEFAULT, FBC_DB_PAGE_MAX))
		return resp->status == 400 ? 0 : -1;
	if (limit < 1 || limit > FBC_DB_PAGE_MAX)
		abort();
	if (cursor) {
		fbc_db_page page = {.limit = (unsigned)limit, .cursor = cursor};
		unsigned l = 0;
		char *key = NULL, *again = NULL;

		fbc_error_init(&err);
		if (db_page_args(&l, &key, &page, &err) == 0) {
			size_t n = 0;
			char *dec = NULL;
			/* a decoded key re-encodes to a cursor that decodes to it */
			if (!key || db_base64url_encode(&again, key, strlen(key)) != 0 ||
			    db_base64url_decode(&dec, &n, again) != 0 || n != strlen(key) ||
			    memcmp(dec, key, n) != 0)
				abort();
			free(dec);
		} else if (err.code != FBC_EINVAL || key) {
			abort();
		}
		free(key);
		free(again);
	}
	if (req->body && (!strcmp(req->method, "POST") || !strcmp(req->method, "PUT"))) {
		if (fbc_http_read_json_object(&obj, req, resp) != 0)
			return resp->status >= 400 ? 0 : -1;
	}
	blen = strlen(req->path) * 7 % sizeof(body_bytes);
	fbc_http_body(resp, 200, "application/json", body_bytes, blen);
	resp->etag = "\"fuzz\"";
	return 0;
}

static int auth(void *app, const char *authorization, unsigned *scopes, fbc_error *err)
{
	(void)app;
	if (!strcmp(authorization, "Bearer down"))
		return fbc_error_set(err, FBC_EUNAVAIL, "database", "down");
	*scopes = 0;
	if (strstr(authorization, "read"))
		*scopes |= FBC_SCOPE_READ;
	if (strstr(authorization, "write"))
		*scopes |= FBC_SCOPE_WRITE;
	if (strstr(authorization, "admin"))
		*scopes |= FBC_SCOPE_ADMIN;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static fbc_http_route routes[MAX_ROUTES];
	static size_t n_routes;
	const char *fields[2 + N_HEADERS] = {0};
	fbc_http_server_opts opts;
	fbc_http_resp resp;
	fbc_http_req req;
	fbc_arena *arena = NULL;
	char *buf, *p, *end;
	size_t nf = 0, before;

	if (!n_routes) {
		size_t n;
		const fbc_http_route *r = fbc_http_api_routes(&n);
		for (size_t i = 0; i < n && i < MAX_ROUTES; i++) {
			routes[i] = r[i];
			routes[i].fn = handler;
		}
		n_routes = n < MAX_ROUTES ? n : MAX_ROUTES;
	}
	if (!(buf = fuzz_strndup(data, size)))
		return 0;
	p = buf;
	end = buf + size;
	memset(&req, 0, sizeof(req));
	memset(&resp, 0, sizeof(resp));
	/* method, path and the headers */
	while (nf < 2 + N_HEADERS && p < end) {
		char *nl = memchr(p, '\n', (size_t)(end - p));
		if (nl)
			*nl = '\0';
		fields[nf++] = *p ? p : NULL;
		p = nl ? nl + 1 : end;
	}
	if (!fields[0] || !fields[1])
		goto done;
	req.method = fields[0];
	req.path = fields[1];
	req.range = fields[2];
	req.if_range = fields[3];
	req.if_none_match = fields[4];
	req.accept_encoding = fields[5];
	req.authorization = fields[6];
	req.content_type = fields[7];
	/* query arguments, as libmicrohttpd hands them over */
	while (p < end) {
		char *nl = memchr(p, '\n', (size_t)(end - p));
		if (nl)
			*nl = '\0';
		if (!*p) {
			p = nl ? nl + 1 : end;
			break;
		}
		if (req.n_query >= FBC_HTTP_MAX_QUERY) {
			req.query_overflow = true;
		} else {
			char *eq = strchr(p, '=');
			if (eq)
				*eq = '\0';
			req.query[req.n_query].key = p;
			req.query[req.n_query].value = eq ? eq + 1 : "";
			req.n_query++;
		}
		p = nl ? nl + 1 : end;
	}
	if (p < end) {
		req.body = p;
		req.body_len = (size_t)(end - p);
	}
	if (fbc_arena_create(&arena, 4096) != 0)
		goto done;
	req.arena = arena;
	memset(&opts, 0, sizeof(opts));
	opts.routes = routes;
	opts.n_routes = n_routes;
	opts.auth = auth;
	opts.read_auth = size & 1;
	before = strlen(req.path) * 7 % sizeof(body_bytes);
	if (fbc_http_dispatch(&opts, &req, &resp) == 0) {
		if (resp.status < 200 || resp.status > 599)
			abort();
		if (resp.status == 206 && (resp.body_len == 0 || resp.body < body_bytes ||
					   resp.body + resp.body_len > body_bytes + before))
			abort();
		if (resp.body && resp.status != 206 && resp.status != 304 &&
		    fbc_http_accepts_gzip(req.accept_encoding)) {
			fbc_buf gz;
			fbc_error err;
			fbc_buf_init(&gz, resp.body_len + 1024);
			fbc_error_init(&err);
			if (fbc_http_gzip(&gz, resp.body, resp.body_len, &err) != 0)
				abort();
			fbc_buf_dispose(&gz);
		}
	}
	(void)fbc_http_etag_matches(req.if_none_match, "\"fuzz\"");
	(void)fbc_http_content_kind(req.content_type);
	fbc_http_resp_dispose(&resp);
done:
	fbc_arena_free(arena);
	free(buf);
	return 0;
}
