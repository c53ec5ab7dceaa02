/* Table-driven routing: method + path pattern with {param} segments. */
#include "api/http/http.h"

#include <stdio.h>
#include <string.h>

/* Match one pattern against path; on success fill params (arena copies). */
static bool match_pattern(const char *pattern, const char *path, fbc_http_req *req)
{
	const char *p = pattern, *s = path;
	size_t n_params = 0;

	while (*p && *s) {
		if (*p != '/' || *s != '/')
			return false;
		p++;
		s++;
		const char *pe = strchr(p, '/'), *se = strchr(s, '/');
		size_t plen = pe ? (size_t)(pe - p) : strlen(p);
		size_t slen = se ? (size_t)(se - s) : strlen(s);

		if (plen >= 2 && p[0] == '{' && p[plen - 1] == '}') {
			if (slen == 0 || slen > FBC_HTTP_MAX_SEGMENT ||
			    n_params >= FBC_HTTP_MAX_PARAMS)
				return false;
			if (req) {
				req->params[n_params].key =
					fbc_arena_strndup(req->arena, p + 1, plen - 2);
				req->params[n_params].value =
					fbc_arena_strndup(req->arena, s, slen);
				if (!req->params[n_params].key || !req->params[n_params].value)
					return false;
			}
			n_params++;
		} else if (plen != slen || memcmp(p, s, plen) != 0) {
			return false;
		}
		p += plen;
		s += slen;
	}
	if (*p || *s)
		return false;
	if (req)
		req->n_params = n_params;
	return true;
}

const fbc_http_route *fbc_http_route_match(const fbc_http_route *routes, size_t n,
					   const char *method, const char *path, fbc_http_req *req,
					   bool *path_matched)
{
	bool head = strcmp(method, "HEAD") == 0;

	*path_matched = false;
	for (size_t i = 0; i < n; i++) {
		const fbc_http_route *r = &routes[i];
		bool method_ok =
			strcmp(r->method, method) == 0 || (head && strcmp(r->method, "GET") == 0);

		if (!method_ok) {
			if (!*path_matched && match_pattern(r->pattern, path, NULL))
				*path_matched = true;
			continue;
		}
		if (match_pattern(r->pattern, path, req))
			return r;
	}
	return NULL;
}

char *fbc_http_route_allow(const fbc_http_route *routes, size_t n, const char *path,
			   fbc_arena *arena)
{
	char buf[128];
	size_t o = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < n; i++) {
		if (!match_pattern(routes[i].pattern, path, NULL))
			continue;
		bool get = strcmp(routes[i].method, "GET") == 0;
		int w = snprintf(buf + o, sizeof(buf) - o, "%s%s%s", o ? ", " : "",
				 routes[i].method, get ? ", HEAD" : "");
		if (w < 0 || (size_t)w >= sizeof(buf) - o)
			break;
		o += (size_t)w;
	}
	return fbc_arena_strdup(arena, buf);
}

const char *fbc_http_param(const fbc_http_req *req, const char *name)
{
	for (size_t i = 0; i < req->n_params; i++) {
		if (strcmp(req->params[i].key, name) == 0)
			return req->params[i].value;
	}
	return NULL;
}

const char *fbc_http_query(const fbc_http_req *req, const char *name)
{
	for (size_t i = 0; i < req->n_query; i++) {
		if (strcmp(req->query[i].key, name) == 0)
			return req->query[i].value ? req->query[i].value : "";
	}
	return NULL;
}

const char *fbc_http_header(const fbc_http_req *req, const char *name)
{
	return req->header_fn ? req->header_fn(req->header_ctx, name) : NULL;
}
