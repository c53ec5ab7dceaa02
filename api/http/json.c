/* Response helpers: problem+json, JSON bodies, list envelopes, paging,
 * conditional requests and gzip. */
#include "api/http/http.h"
#include "service/base/log.h"

#include <stdarg.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <strings.h>
#include <zlib.h>

static const char *status_title(int status)
{
	switch (status) {
	case 200:
		return "OK";
	case 201:
		return "Created";
	case 204:
		return "No Content";
	case 304:
		return "Not Modified";
	case 400:
		return "Bad Request";
	case 401:
		return "Unauthorized";
	case 403:
		return "Forbidden";
	case 404:
		return "Not Found";
	case 405:
		return "Method Not Allowed";
	case 406:
		return "Not Acceptable";
	case 409:
		return "Conflict";
	case 413:
		return "Content Too Large";
	case 415:
		return "Unsupported Media Type";
	case 422:
		return "Unprocessable Content";
	case 500:
		return "Internal Server Error";
	case 503:
		return "Service Unavailable";
	default:
		return "Error";
	}
}

static void free_json(void *p)
{
	json_decref(p);
}

void fbc_http_body(fbc_http_resp *resp, int status, const char *content_type, const char *data,
		   size_t len)
{
	resp->status = status;
	resp->content_type = content_type;
	resp->body = data;
	resp->body_len = len;
}

void fbc_http_resp_header(fbc_http_resp *resp, const char *name, const char *value)
{
	if (resp->n_headers < FBC_HTTP_MAX_HEADERS) {
		resp->headers[resp->n_headers].key = name;
		resp->headers[resp->n_headers].value = value;
		resp->n_headers++;
	}
}

static int dump_to_arena(fbc_http_req *req, json_t *json, const char **out, size_t *len)
{
	char *s = json_dumps(json, JSON_COMPACT);

	if (!s)
		return FBC_ENOMEM;
	if (fbc_arena_defer(req->arena, free, s) != 0)
		return FBC_ENOMEM;
	*out = s;
	*len = strlen(s);
	return 0;
}

int fbc_http_json(fbc_http_resp *resp, fbc_http_req *req, int status, json_t *json)
{
	const char *s = NULL;
	size_t len = 0;
	int rc;

	if (!json)
		return FBC_ENOMEM;
	rc = dump_to_arena(req, json, &s, &len);
	json_decref(json);
	if (rc != 0)
		return rc;
	fbc_http_body(resp, status, "application/json", s, len);
	return 0;
}

int fbc_http_problem_ext(fbc_http_resp *resp, fbc_http_req *req, int status, const char *code,
			 json_t *extra, const char *detail)
{
	json_t *p = json_object();
	const char *s = NULL;
	size_t len = 0;
	int rc = FBC_ENOMEM;

	if (!p)
		goto done;
	char *type = fbc_arena_printf(req->arena, "urn:fbcd:problem:%s", code);
	if (!type)
		goto done;
	if (json_object_set_new(p, "type", json_string(type)) != 0 ||
	    json_object_set_new(p, "title", json_string(status_title(status))) != 0 ||
	    json_object_set_new(p, "status", json_integer(status)) != 0 ||
	    json_object_set_new(p, "detail", json_string(detail ? detail : "")) != 0 ||
	    json_object_set_new(p, "code", json_string(code)) != 0)
		goto done;
	if (req->request_id &&
	    json_object_set_new(p, "requestId", json_string(req->request_id)) != 0)
		goto done;
	if (extra && json_object_update(p, extra) != 0)
		goto done;
	rc = dump_to_arena(req, p, &s, &len);
	if (rc != 0)
		goto done;
	fbc_http_body(resp, status, "application/problem+json", s, len);
	resp->etag = NULL;
	rc = 0;
done:
	json_decref(extra);
	json_decref(p);
	return rc;
}

int fbc_http_problem(fbc_http_resp *resp, fbc_http_req *req, int status, const char *code,
		     const char *fmt, ...)
{
	va_list ap;
	char detail[1024];

	va_start(ap, fmt);
	vsnprintf(detail, sizeof(detail), fmt, ap);
	va_end(ap);
	return fbc_http_problem_ext(resp, req, status, code, NULL, detail);
}

int fbc_http_problem_from_error(fbc_http_resp *resp, fbc_http_req *req, const fbc_error *err)
{
	int status = 500;
	const char *code = "internal";

	switch (err->code) {
	case FBC_EINVAL:
	case FBC_EPARSE:
		status = 400;
		code = "bad_request";
		break;
	case FBC_ENOTFOUND:
		status = 404;
		code = "not_found";
		break;
	case FBC_ECONFLICT:
		status = 409;
		code = "conflict";
		break;
	case FBC_ELIMIT:
		status = 413;
		code = "too_large";
		break;
	case FBC_EUNAVAIL:
		status = 503;
		code = "unavailable";
		break;
	case FBC_EAUTH:
		status = 401;
		code = "unauthorized";
		break;
	default:
		break;
	}
	if (status >= 500) {
		/* The detail of a server-side failure (libpq's "connection to server
		 * at HOST, port N failed", SQL error text) is for the operator, not
		 * for any client: it goes to the log; the client gets the kind. */
		fbc_log(status == 503 ? FBC_LOG_WARN : FBC_LOG_ERROR,
			(fbc_log_field[]){FBC_LOG_STR("request_id", req->request_id),
					  FBC_LOG_STR("method", req->method ? req->method : "-"),
					  FBC_LOG_STR("route", req->route ? req->route : "-"),
					  FBC_LOG_STR("path", req->path ? req->path : "-"),
					  FBC_LOG_NUM("status", status),
					  FBC_LOG_STR("where", err->where),
					  FBC_LOG_STR("error", err->message)},
			7, "request failed");
		if (status == 503)
			fbc_http_resp_header(resp, "Retry-After", "2");
		return fbc_http_problem(resp, req, status, code, "%s",
					status == 503
						? "a backing service (the database) is "
						  "unavailable; retry later"
						: "internal error (details in the server log)");
	}
	if (err->where[0])
		return fbc_http_problem(resp, req, status, code, "%s: %s", err->where,
					err->message);
	return fbc_http_problem(resp, req, status, code, "%s",
				err->message[0] ? err->message : status_title(status));
}

/* A decoded JSON document takes up to ~25 times its text (an array of
 * one-digit numbers): the server's body limit (512 MiB by default, sized for
 * uploads) would allow gigabytes per request, times the thread pool. 32 MiB
 * is twice the real community catalog given inline. */
#define FBC_HTTP_MAX_JSON_BODY (32u << 20)

int fbc_http_read_json_object(json_t **out, fbc_http_req *req, fbc_http_resp *resp)
{
	json_error_t jerr;
	json_t *j;

	if (!req->body || req->body_len == 0)
		return fbc_http_problem(resp, req, 400, "bad_request",
					"a JSON object body is required"),
		       FBC_EINVAL;
	if (req->body_len > FBC_HTTP_MAX_JSON_BODY)
		return fbc_http_problem(resp, req, 413, "too_large",
					"a JSON body is limited to %u bytes (catalog content "
					"goes to PUT .../content as a tar.gz)",
					FBC_HTTP_MAX_JSON_BODY),
		       FBC_ELIMIT;
	j = json_loadb(req->body, req->body_len, JSON_REJECT_DUPLICATES, &jerr);
	if (!j)
		return fbc_http_problem(resp, req, 400, "bad_json", "body: line %d column %d: %s",
					jerr.line, jerr.column, jerr.text),
		       FBC_EPARSE;
	if (!json_is_object(j)) {
		json_decref(j);
		return fbc_http_problem(resp, req, 400, "bad_json", "body: expected a JSON object"),
		       FBC_EINVAL;
	}
	if (fbc_arena_defer(req->arena, free_json, j) != 0)
		return FBC_ENOMEM;
	*out = j;
	return 0;
}

int fbc_http_page_args(size_t *limit, const char **cursor, fbc_http_req *req, fbc_http_resp *resp,
		       size_t def, size_t max)
{
	const char *l = fbc_http_query(req, "limit");
	const char *c = fbc_http_query(req, "cursor");
	size_t v = def;

	if (l) {
		char *end = NULL;
		unsigned long long n;

		if (l[0] < '0' || l[0] > '9' || strlen(l) > 9)
			goto bad;
		n = strtoull(l, &end, 10);
		if (*end || n < 1 || n > max)
			goto bad;
		v = (size_t)n;
	}
	if (c && (c[0] == '\0' || strlen(c) > 1024))
		return fbc_http_problem(resp, req, 400, "bad_cursor", "cursor: empty or too long"),
		       FBC_EINVAL;
	*limit = v;
	*cursor = c;
	return 0;
bad:
	fbc_http_problem(resp, req, 400, "bad_limit", "limit: expected an integer from 1 to %zu",
			 max);
	return FBC_EINVAL;
}

int fbc_http_list(fbc_http_resp *resp, fbc_http_req *req, json_t *items, const char *next)
{
	json_t *o = json_object();

	if (!o || !items) {
		json_decref(o);
		json_decref(items);
		return FBC_ENOMEM;
	}
	if (json_object_set_new(o, "items", items) != 0 ||
	    json_object_set_new(o, "next", next ? json_string(next) : json_null()) != 0) {
		json_decref(o);
		return FBC_ENOMEM;
	}
	return fbc_http_json(resp, req, 200, o);
}

bool fbc_http_etag_matches(const char *inm, const char *etag)
{
	if (!inm || !etag)
		return false;
	size_t elen = strlen(etag);
	const char *p = inm;

	while (*p) {
		while (*p == ' ' || *p == '\t' || *p == ',')
			p++;
		if (!*p)
			break;
		const char *start = p;
		while (*p && *p != ',')
			p++;
		const char *end = p;
		while (end > start && (end[-1] == ' ' || end[-1] == '\t'))
			end--;
		size_t n = (size_t)(end - start);
		if (n == 1 && start[0] == '*')
			return true;
		/* weak comparison, as RFC 9110 asks for If-None-Match */
		if (n >= 2 && start[0] == 'W' && start[1] == '/') {
			start += 2;
			n -= 2;
		}
		const char *e = etag;
		size_t en = elen;
		if (en >= 2 && e[0] == 'W' && e[1] == '/') {
			e += 2;
			en -= 2;
		}
		if (n == en && memcmp(start, e, n) == 0)
			return true;
	}
	return false;
}

bool fbc_http_accepts_gzip(const char *ae)
{
	const char *p = ae;

	if (!ae)
		return false;
	while (*p) {
		while (*p == ' ' || *p == ',')
			p++;
		const char *tok = p;
		while (*p && *p != ',' && *p != ';' && *p != ' ')
			p++;
		size_t n = (size_t)(p - tok);
		bool is_gzip =
			(n == 4 && strncasecmp(tok, "gzip", 4) == 0) || (n == 1 && tok[0] == '*');
		bool q_zero = false;
		while (*p && *p != ',') {
			if (*p == ';') {
				p++;
				while (*p == ' ')
					p++;
				if ((p[0] == 'q' || p[0] == 'Q') && p[1] == '=') {
					const char *q = p + 2;
					q_zero = q[0] == '0';
					for (q++; q_zero && *q && *q != ',' && *q != ';'; q++) {
						if (*q != '.' && *q != '0' && *q != ' ')
							q_zero = false;
					}
				}
				continue;
			}
			p++;
		}
		if (is_gzip)
			return !q_zero;
	}
	return false;
}

int fbc_http_gzip(fbc_buf *out, const char *data, size_t len, fbc_error *err)
{
	z_stream zs;
	int rc, zrc;
	unsigned char chunk[65536];

	memset(&zs, 0, sizeof(zs));
	if (deflateInit2(&zs, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return fbc_error_set(err, FBC_EINTERNAL, "gzip", "deflateInit2 failed");
	zs.next_in = (unsigned char *)(uintptr_t)data;
	/* zlib's avail_in is 32-bit; feed large inputs in slices */
	size_t left = len;
	do {
		size_t slice = left > (1u << 30) ? (1u << 30) : left;
		zs.avail_in = (uInt)slice;
		left -= slice;
		int flush = left ? Z_NO_FLUSH : Z_FINISH;
		do {
			zs.next_out = chunk;
			zs.avail_out = sizeof(chunk);
			zrc = deflate(&zs, flush);
			if (zrc == Z_STREAM_ERROR) {
				rc = fbc_error_set(err, FBC_EINTERNAL, "gzip", "deflate failed");
				goto done;
			}
			rc = fbc_buf_append(out, chunk, sizeof(chunk) - zs.avail_out);
			if (rc != 0) {
				fbc_error_set(err, rc, "gzip", "compressed body too large");
				goto done;
			}
		} while (zs.avail_out == 0);
	} while (left);
	rc = 0;
done:
	deflateEnd(&zs);
	return rc;
}
