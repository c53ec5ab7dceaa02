/* Unit tests for the HTTP layer: routing, conditional requests, gzip
 * negotiation, paging, dispatch with authentication, configuration files,
 * safe tar extraction, upgrade graphs, and a real server on a socket. */
#include "api/http/http.h"
#include "api/http/app.h"
#include "api/http/cache.h"
#include "api/http/config.h"
#include "service/load/load.h"
#include "api/http/content.h"

#include <archive.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <archive_entry.h>
#include <curl/curl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <cmocka.h>

/* ------------------------------------------------------------ fixtures */

static int h_echo(fbc_http_req *req, fbc_http_resp *resp)
{
	const char *id = fbc_http_param(req, "id");
	char *s = fbc_arena_printf(req->arena, "id=%s", id ? id : "-");
	fbc_http_body(resp, 200, "text/plain", s, strlen(s));
	resp->etag = "\"sha256:abc\"";
	return 0;
}

static int h_write(fbc_http_req *req, fbc_http_resp *resp)
{
	(void)req;
	fbc_http_body(resp, 201, "text/plain", "made", 4);
	return 0;
}

static int h_big(fbc_http_req *req, fbc_http_resp *resp)
{
	char *s = fbc_arena_alloc(req->arena, 100000);
	for (size_t i = 0; i < 100000; i++)
		s[i] = (char)('a' + i % 7);
	fbc_http_body(resp, 200, "text/plain", s, 100000);
	return 0;
}

static int h_body_len(fbc_http_req *req, fbc_http_resp *resp)
{
	char *s = fbc_arena_printf(req->arena, "%zu", req->body_len);
	fbc_http_body(resp, 200, "text/plain", s, strlen(s));
	return 0;
}

static int h_fail(fbc_http_req *req, fbc_http_resp *resp)
{
	(void)req;
	(void)resp;
	return FBC_EINTERNAL;
}

static const fbc_http_route test_routes[] = {
	{"GET", "/things/{id}", h_echo, FBC_SCOPE_READ, "getThing"},
	{"POST", "/things", h_write, FBC_SCOPE_WRITE, "makeThing"},
	{"DELETE", "/things/{id}", h_write, FBC_SCOPE_ADMIN, "dropThing"},
	{"GET", "/big", h_big, FBC_SCOPE_NONE, "big"},
	{"POST", "/len", h_body_len, FBC_SCOPE_NONE, "len"},
	{"GET", "/fail", h_fail, FBC_SCOPE_NONE, "fail"},
};

/* "Bearer r" grants read, "Bearer w" write+read, "Bearer a" everything. */
static int fake_auth(void *app, const char *authorization, unsigned *scopes, fbc_error *err)
{
	(void)app;
	(void)err;
	*scopes = 0;
	if (!strcmp(authorization, "Bearer r"))
		*scopes = FBC_SCOPE_READ;
	else if (!strcmp(authorization, "Bearer w"))
		*scopes = FBC_SCOPE_WRITE | FBC_SCOPE_READ;
	else if (!strcmp(authorization, "Bearer a"))
		*scopes = FBC_SCOPE_ADMIN | FBC_SCOPE_WRITE | FBC_SCOPE_READ;
	return 0;
}

static void opts_init(fbc_http_server_opts *o, bool read_auth)
{
	memset(o, 0, sizeof(*o));
	o->routes = test_routes;
	o->n_routes = sizeof(test_routes) / sizeof(test_routes[0]);
	o->auth = fake_auth;
	o->read_auth = read_auth;
	o->max_body = 1000;
	o->listen = "127.0.0.1:0";
	o->threads = 2;
}

/* Dispatch method+path with an optional Authorization; returns the status
 * and copies the body into out (if non-NULL). */
static int run(const fbc_http_server_opts *o, const char *method, const char *path,
	       const char *auth, const char *inm, char *out, size_t out_size)
{
	fbc_http_req req;
	fbc_http_resp resp;
	fbc_arena *a = NULL;

	assert_int_equal(fbc_arena_create(&a, 0), 0);
	memset(&req, 0, sizeof(req));
	memset(&resp, 0, sizeof(resp));
	req.arena = a;
	req.method = method;
	req.path = path;
	req.authorization = auth;
	req.if_none_match = inm;
	assert_int_equal(fbc_http_dispatch(o, &req, &resp), 0);
	if (out) {
		size_t n = resp.body_len < out_size - 1 ? resp.body_len : out_size - 1;
		memcpy(out, resp.body ? resp.body : "", n);
		out[n] = '\0';
	}
	int status = resp.status;
	fbc_http_resp_dispose(&resp);
	fbc_arena_free(a);
	return status;
}

/* -------------------------------------------------------------- router */

static void fbc_http_route_match__extracts_params(void **state)
{
	(void)state;
	fbc_arena *a;
	fbc_http_req req;
	bool pm;

	assert_int_equal(fbc_arena_create(&a, 0), 0);
	memset(&req, 0, sizeof(req));
	req.arena = a;
	const fbc_http_route *r =
		fbc_http_route_match(test_routes, 6, "GET", "/things/x-1", &req, &pm);
	assert_non_null(r);
	assert_string_equal(r->operation_id, "getThing");
	assert_string_equal(fbc_http_param(&req, "id"), "x-1");
	assert_null(fbc_http_param(&req, "other"));
	fbc_arena_free(a);
}

static void fbc_http_route_match__distinguishes_404_and_405(void **state)
{
	(void)state;
	fbc_arena *a;
	fbc_http_req req;
	bool pm;

	assert_int_equal(fbc_arena_create(&a, 0), 0);
	memset(&req, 0, sizeof(req));
	req.arena = a;
	assert_null(fbc_http_route_match(test_routes, 6, "PUT", "/things/1", &req, &pm));
	assert_true(pm);
	assert_null(fbc_http_route_match(test_routes, 6, "GET", "/things/1/more", &req, &pm));
	assert_false(pm);
	assert_null(fbc_http_route_match(test_routes, 6, "GET", "/things/", &req, &pm));
	assert_null(fbc_http_route_match(test_routes, 6, "GET", "/thingsx/1", &req, &pm));
	char *allow = fbc_http_route_allow(test_routes, 6, "/things/1", a);
	assert_string_equal(allow, "GET, HEAD, DELETE");
	/* HEAD is answered by GET routes */
	assert_non_null(fbc_http_route_match(test_routes, 6, "HEAD", "/things/1", &req, &pm));
	fbc_arena_free(a);
}

/* ------------------------------------------------------------- helpers */

static void fbc_http_etag_matches__lists_weak_and_star(void **state)
{
	(void)state;
	assert_true(fbc_http_etag_matches("\"a\"", "\"a\""));
	assert_true(fbc_http_etag_matches("\"x\", \"a\"", "\"a\""));
	assert_true(fbc_http_etag_matches("W/\"a\"", "\"a\""));
	assert_true(fbc_http_etag_matches("*", "\"a\""));
	assert_false(fbc_http_etag_matches("\"ab\"", "\"a\""));
	assert_false(fbc_http_etag_matches("\"a", "\"a\""));
	assert_false(fbc_http_etag_matches(NULL, "\"a\""));
	assert_false(fbc_http_etag_matches("", "\"a\""));
}

static void fbc_http_accepts_gzip__honours_q(void **state)
{
	(void)state;
	assert_true(fbc_http_accepts_gzip("gzip"));
	assert_true(fbc_http_accepts_gzip("deflate, gzip;q=0.5"));
	assert_true(fbc_http_accepts_gzip("br, *"));
	assert_false(fbc_http_accepts_gzip("gzip;q=0"));
	assert_false(fbc_http_accepts_gzip("gzip; q=0.000"));
	assert_false(fbc_http_accepts_gzip("identity"));
	assert_false(fbc_http_accepts_gzip("gzipx"));
	assert_false(fbc_http_accepts_gzip(NULL));
}

static void fbc_http_gzip__round_trips(void **state)
{
	(void)state;
	fbc_buf z;
	fbc_error err;
	const char *text = "hello hello hello hello hello hello";
	unsigned char back[256];
	z_stream zs;

	fbc_buf_init(&z, 0);
	assert_int_equal(fbc_http_gzip(&z, text, strlen(text), &err), 0);
	assert_true(z.len > 10);
	assert_int_equal((unsigned char)z.data[0], 0x1f);
	memset(&zs, 0, sizeof(zs));
	assert_int_equal(inflateInit2(&zs, 15 + 16), Z_OK);
	zs.next_in = (unsigned char *)z.data;
	zs.avail_in = (uInt)z.len;
	zs.next_out = back;
	zs.avail_out = sizeof(back);
	assert_int_equal(inflate(&zs, Z_FINISH), Z_STREAM_END);
	assert_int_equal(zs.total_out, strlen(text));
	assert_memory_equal(back, text, strlen(text));
	inflateEnd(&zs);
	fbc_buf_dispose(&z);
}

static void fbc_http_page_args__bounds_limit(void **state)
{
	(void)state;
	fbc_arena *a;
	fbc_http_req req;
	fbc_http_resp resp;
	size_t limit;
	const char *cursor;
	const char *bad[] = {"0", "1001", "-1", "x", "10x", ""};

	assert_int_equal(fbc_arena_create(&a, 0), 0);
	memset(&req, 0, sizeof(req));
	req.arena = a;
	req.n_query = 1;
	req.query[0].key = "limit";
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		memset(&resp, 0, sizeof(resp));
		req.query[0].value = bad[i];
		assert_int_equal(fbc_http_page_args(&limit, &cursor, &req, &resp, 100, 1000),
				 FBC_EINVAL);
		assert_int_equal(resp.status, 400);
		assert_non_null(strstr(resp.body, "\"code\":\"bad_limit\""));
	}
	req.query[0].value = "1000";
	assert_int_equal(fbc_http_page_args(&limit, &cursor, &req, &resp, 100, 1000), 0);
	assert_int_equal(limit, 1000);
	assert_null(cursor);
	req.n_query = 0;
	assert_int_equal(fbc_http_page_args(&limit, &cursor, &req, &resp, 100, 1000), 0);
	assert_int_equal(limit, 100);
	fbc_arena_free(a);
}

/* Client errors say what was wrong; server-side failures (database text
 * with host and port, SQL errors) are logged, never sent to the client. */
static void fbc_http_problem_from_error__hides_server_side_detail(void **state)
{
	(void)state;
	static const struct {
		int code, status;
		bool detail_shown;
	} cases[] = {
		{FBC_EINVAL, 400, true},    {FBC_ENOTFOUND, 404, true},	 {FBC_ELIMIT, 413, true},
		{FBC_EUNAVAIL, 503, false}, {FBC_EINTERNAL, 500, false}, {FBC_EIO, 500, false},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		fbc_arena *a;
		fbc_http_req req;
		fbc_http_resp resp;
		fbc_error err;
		char body[1024];

		assert_int_equal(fbc_arena_create(&a, 0), 0);
		memset(&req, 0, sizeof(req));
		memset(&resp, 0, sizeof(resp));
		req.arena = a;
		req.method = "GET";
		req.path = "/x";
		fbc_error_init(&err);
		fbc_error_set(&err, cases[i].code, "database",
			      "connection to server at \"10.1.2.3\", port 5432 failed");
		assert_int_equal(fbc_http_problem_from_error(&resp, &req, &err), 0);
		assert_int_equal(resp.status, cases[i].status);
		assert_true(resp.body_len < sizeof(body));
		memcpy(body, resp.body, resp.body_len);
		body[resp.body_len] = '\0';
		assert_int_equal(strstr(body, "10.1.2.3") != NULL, cases[i].detail_shown);
		fbc_arena_free(a);
	}
}

static void fbc_http_problem__has_rfc9457_members(void **state)
{
	(void)state;
	fbc_arena *a;
	fbc_http_req req;
	fbc_http_resp resp;
	json_error_t je;

	assert_int_equal(fbc_arena_create(&a, 0), 0);
	memset(&req, 0, sizeof(req));
	memset(&resp, 0, sizeof(resp));
	req.arena = a;
	assert_int_equal(fbc_http_problem(&resp, &req, 404, "not_found", "no %s", "thing"), 0);
	assert_string_equal(resp.content_type, "application/problem+json");
	json_t *j = json_loadb(resp.body, resp.body_len, 0, &je);
	assert_non_null(j);
	assert_int_equal(json_integer_value(json_object_get(j, "status")), 404);
	assert_string_equal(json_string_value(json_object_get(j, "code")), "not_found");
	assert_string_equal(json_string_value(json_object_get(j, "detail")), "no thing");
	assert_string_equal(json_string_value(json_object_get(j, "title")), "Not Found");
	assert_non_null(json_object_get(j, "type"));
	json_decref(j);
	fbc_arena_free(a);
}

/* ------------------------------------------------------------ dispatch */

static void fbc_http_dispatch__enforces_scopes(void **state)
{
	(void)state;
	fbc_http_server_opts o;
	char body[256];

	opts_init(&o, false);
	/* reads open by configuration */
	assert_int_equal(run(&o, "GET", "/things/7", NULL, NULL, body, sizeof(body)), 200);
	assert_string_equal(body, "id=7");
	/* writes always need a token */
	assert_int_equal(run(&o, "POST", "/things", NULL, NULL, body, sizeof(body)), 401);
	assert_non_null(strstr(body, "unauthorized"));
	assert_int_equal(run(&o, "POST", "/things", "Bearer nope", NULL, NULL, 0), 401);
	assert_int_equal(run(&o, "POST", "/things", "Bearer r", NULL, body, sizeof(body)), 403);
	assert_non_null(strstr(body, "forbidden"));
	assert_int_equal(run(&o, "POST", "/things", "Bearer w", NULL, NULL, 0), 201);
	assert_int_equal(run(&o, "DELETE", "/things/1", "Bearer w", NULL, NULL, 0), 403);
	assert_int_equal(run(&o, "DELETE", "/things/1", "Bearer a", NULL, NULL, 0), 201);

	opts_init(&o, true);
	assert_int_equal(run(&o, "GET", "/things/7", NULL, NULL, NULL, 0), 401);
	assert_int_equal(run(&o, "GET", "/things/7", "Bearer r", NULL, NULL, 0), 200);
	assert_int_equal(run(&o, "GET", "/things/7", "Bearer w", NULL, NULL, 0), 200);
	assert_int_equal(run(&o, "GET", "/big", NULL, NULL, NULL, 0), 200);
}

static void fbc_http_dispatch__not_modified_and_errors(void **state)
{
	(void)state;
	fbc_http_server_opts o;
	char body[512];

	opts_init(&o, false);
	assert_int_equal(run(&o, "GET", "/things/7", NULL, "\"sha256:abc\"", body, sizeof(body)),
			 304);
	assert_string_equal(body, "");
	assert_int_equal(run(&o, "GET", "/things/7", NULL, "\"sha256:abd\"", NULL, 0), 200);
	assert_int_equal(run(&o, "GET", "/nowhere", NULL, NULL, body, sizeof(body)), 404);
	assert_non_null(strstr(body, "\"code\":\"not_found\""));
	assert_int_equal(run(&o, "PUT", "/things/7", NULL, NULL, body, sizeof(body)), 405);
	assert_int_equal(run(&o, "GET", "/fail", NULL, NULL, body, sizeof(body)), 500);
	assert_non_null(strstr(body, "\"code\":\"internal\""));
}

/* Paths and arguments go to PostgreSQL as text: invalid UTF-8 is a 400
 * here, not a database error (500) later. */
/* JSON bodies are capped well below the upload limit (a parsed document
 * takes many times its text), and deep nesting is refused by the parser. */
static void fbc_http_read_json_object__bounds_size_and_depth(void **state)
{
	(void)state;
	size_t big = (32u << 20) + 1;
	char *text = malloc(big + 1);
	fbc_http_req req;
	fbc_http_resp resp;
	fbc_arena *a = NULL;
	json_t *j = NULL;

	assert_non_null(text);
	memset(text, ' ', big);
	text[0] = '{';
	text[big - 1] = '}';
	text[big] = '\0';
	assert_int_equal(fbc_arena_create(&a, 0), 0);
	memset(&req, 0, sizeof(req));
	memset(&resp, 0, sizeof(resp));
	req.arena = a;
	req.body = text;
	req.body_len = big;
	assert_int_equal(fbc_http_read_json_object(&j, &req, &resp), FBC_ELIMIT);
	assert_int_equal(resp.status, 413);
	req.body_len = big - 1; /* "{" + spaces: under the cap, parsed (and bad) */
	memset(&resp, 0, sizeof(resp));
	assert_int_equal(fbc_http_read_json_object(&j, &req, &resp), FBC_EPARSE);
	assert_int_equal(resp.status, 400);
	/* 100,000 nested arrays: a parse error, not a stack overflow */
	for (size_t i = 0; i < 100000; i++)
		text[i + 5] = '[';
	memcpy(text, "{\"a\":", 5);
	req.body_len = 100005;
	memset(&resp, 0, sizeof(resp));
	assert_int_equal(fbc_http_read_json_object(&j, &req, &resp), FBC_EPARSE);
	assert_int_equal(resp.status, 400);
	fbc_arena_free(a);
	free(text);
}

static void fbc_http_dispatch__rejects_invalid_utf8(void **state)
{
	(void)state;
	fbc_http_server_opts o;
	char body[512];

	opts_init(&o, false);
	assert_int_equal(run(&o, "GET", "/things/\xc3\xa9", NULL, NULL, body, sizeof(body)), 200);
	assert_string_equal(body, "id=\xc3\xa9");
	static const char *const bad[] = {
		"/things/\xff",		"/things/\xc0\x80",	    "/things/a\xc3",
		"/things/\xed\xa0\x80", "/things/\xf4\x90\x80\x80", "/things/\xe0\x80\xaf"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(run(&o, "GET", bad[i], NULL, NULL, body, sizeof(body)), 400);
		assert_non_null(strstr(body, "not valid UTF-8"));
	}

	fbc_http_req req;
	fbc_http_resp resp;
	fbc_arena *a = NULL;
	assert_int_equal(fbc_arena_create(&a, 0), 0);
	memset(&req, 0, sizeof(req));
	memset(&resp, 0, sizeof(resp));
	req.arena = a;
	req.method = "GET";
	req.path = "/things/7";
	req.query[0].key = "cursor";
	req.query[0].value = "\xfe";
	req.n_query = 1;
	assert_int_equal(fbc_http_dispatch(&o, &req, &resp), 0);
	assert_int_equal(resp.status, 400);
	fbc_http_resp_dispose(&resp);
	fbc_arena_free(a);
}

static void fbc_http_dispatch__single_byte_ranges(void **state)
{
	(void)state;
	fbc_http_server_opts o;
	const char *cases[][3] = {
		/* Range, If-Range, expected "status body" */
		{"bytes=0-1", NULL, "206 id"},
		{"bytes=2-", NULL, "206 =42"},
		{"bytes=-2", NULL, "206 42"},
		{"bytes=4-100", NULL, "206 2"},
		{"bytes=9-", NULL, "416 "},
		{"bytes=0-1,3-4", NULL, "200 id=42"},
		{"lines=1-2", NULL, "200 id=42"},
		{"bytes=2-1", NULL, "200 id=42"},
		{"bytes=0-1", "\"sha256:abc\"", "206 id"},
		{"bytes=0-1", "\"sha256:old\"", "200 id=42"},
	};

	opts_init(&o, false);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		fbc_http_req req;
		fbc_http_resp resp;
		fbc_arena *a = NULL;
		char got[64];

		assert_int_equal(fbc_arena_create(&a, 0), 0);
		memset(&req, 0, sizeof(req));
		memset(&resp, 0, sizeof(resp));
		req.arena = a;
		req.method = "GET";
		req.path = "/things/42";
		req.range = cases[i][0];
		req.if_range = cases[i][1];
		assert_int_equal(fbc_http_dispatch(&o, &req, &resp), 0);
		snprintf(got, sizeof(got), "%d %.*s", resp.status, (int)resp.body_len,
			 resp.body ? resp.body : "");
		assert_string_equal(got, cases[i][2]);
		fbc_arena_free(a);
	}
}

/* --------------------------------------------------------------- config */

static char *write_tmp(const char *content)
{
	char *path = strdup("/tmp/fbcd-test-XXXXXX");
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, content, strlen(content)), (ssize_t)strlen(content));
	close(fd);
	return path;
}

static void fbc_http_config_load_file__applies_settings(void **state)
{
	(void)state;
	fbc_http_config c;
	fbc_error err;
	char *p = write_tmp("# fbcd\nlisten: 0.0.0.0:9000\nreadAuth: token\nthreads: 3\n"
			    "databaseURL: postgresql:///x\naccessLog: true\n");

	fbc_http_config_init(&c);
	assert_int_equal(fbc_http_config_load_file(&c, p, &err), 0);
	assert_string_equal(c.listen, "0.0.0.0:9000");
	assert_true(c.read_auth);
	assert_int_equal(c.threads, 3);
	assert_string_equal(c.database_url, "postgresql:///x");
	assert_true(c.access_log);
	fbc_http_config_dispose(&c);
	unlink(p);
	free(p);
}

static void fbc_http_config_load_file__reports_file_and_line(void **state)
{
	(void)state;
	fbc_http_config c;
	fbc_error err;
	char want[600];
	char *p = write_tmp("listen: 1.2.3.4:1\nthreads: 3\nreadAuth: maybe\n");

	fbc_http_config_init(&c);
	fbc_error_init(&err);
	assert_int_equal(fbc_http_config_load_file(&c, p, &err), FBC_EINVAL);
	snprintf(want, sizeof(want), "%s:3", p);
	assert_string_equal(err.where, want);
	assert_non_null(strstr(err.message, "readAuth"));
	fbc_http_config_dispose(&c);
	unlink(p);
	free(p);

	p = write_tmp("listen: 1.2.3.4:1\nbogus: 1\n");
	fbc_http_config_init(&c);
	assert_int_equal(fbc_http_config_load_file(&c, p, &err), FBC_EINVAL);
	snprintf(want, sizeof(want), "%s:2", p);
	assert_string_equal(err.where, want);
	fbc_http_config_dispose(&c);
	unlink(p);
	free(p);

	p = write_tmp("threads: 2\nlisten: a: b\n");
	fbc_http_config_init(&c);
	assert_int_equal(fbc_http_config_load_file(&c, p, &err), FBC_EPARSE);
	snprintf(want, sizeof(want), "%s:2", p);
	assert_string_equal(err.where, want);
	fbc_http_config_dispose(&c);
	unlink(p);
	free(p);
}

static void fbc_http_config_from_args__flags_beat_env(void **state)
{
	(void)state;
	fbc_http_config c;
	fbc_error err;
	char a0[] = "serve", a1[] = "--listen", a2[] = "127.0.0.1:7";
	char *argv[] = {a0, a1, a2, NULL};

	setenv("FBCD_LISTEN", "127.0.0.1:6", 1);
	setenv("FBCD_READ_AUTH", "token", 1);
	fbc_http_config_init(&c);
	assert_int_equal(fbc_http_config_from_args(&c, 3, argv, &err), 0);
	assert_string_equal(c.listen, "127.0.0.1:7");
	assert_true(c.read_auth);
	fbc_http_config_dispose(&c);

	setenv("FBCD_READ_AUTH", "sometimes", 1);
	fbc_http_config_init(&c);
	assert_int_equal(fbc_http_config_from_args(&c, 3, argv, &err), FBC_EINVAL);
	assert_string_equal(err.where, "FBCD_READ_AUTH");
	fbc_http_config_dispose(&c);
	unsetenv("FBCD_LISTEN");
	unsetenv("FBCD_READ_AUTH");
}

static void fbc_http_config_from_args__yaml_expansion(void **state)
{
	(void)state;
	fbc_http_config c;
	fbc_error err;
	fbc_load_limits lim;
	char a0[] = "serve", a1[] = "--yaml-expand-ratio", a2[] = "4", a3[] = "--yaml-expand-max",
	     a4[] = "1000000";
	char *argv[] = {a0, a1, a2, a3, a4, NULL};

	setenv("FBCD_YAML_EXPAND_RATIO", "7", 1);
	fbc_http_config_init(&c);
	assert_int_equal(fbc_http_config_from_args(&c, 5, argv, &err), 0);
	assert_int_equal(c.yaml_expand_ratio, 4);
	assert_int_equal(c.yaml_expand_max, 1000000);
	fbc_load_limits_default(&lim);
	assert_int_equal(lim.max_expand_ratio, 4);
	assert_int_equal(lim.max_expanded_bytes, 1000000);
	fbc_http_config_dispose(&c);
	/* the environment alone; the cap left at its default */
	fbc_http_config_init(&c);
	assert_int_equal(fbc_http_config_from_args(&c, 1, argv, &err), 0);
	fbc_load_limits_default(&lim);
	assert_int_equal(lim.max_expand_ratio, 7);
	assert_int_equal(lim.max_expanded_bytes, 256u << 20);
	fbc_http_config_dispose(&c);
	unsetenv("FBCD_YAML_EXPAND_RATIO");
	fbc_http_config_init(&c);
	assert_int_equal(fbc_http_config_set(&c, "yamlExpandRatio", "0", "t", &err), FBC_EINVAL);
	assert_int_equal(fbc_http_config_set(&c, "yamlExpandMaxBytes", "100", "t", &err),
			 FBC_EINVAL);
	fbc_http_config_dispose(&c);
	fbc_load_limits_set_expansion(0, 0);
}

static void fbc_http_config_set__limits_and_timeouts(void **state)
{
	(void)state;
	fbc_http_config c;
	fbc_error err;

	fbc_http_config_init(&c);
	assert_int_equal(c.head_deadline_s, 30);
	assert_int_equal(fbc_http_config_set(&c, "headDeadlineSeconds", "0", "t", &err), 0);
	assert_int_equal(c.head_deadline_s, 0);
	assert_int_equal(fbc_http_config_set(&c, "headDeadlineSeconds", "7", "t", &err), 0);
	assert_int_equal(c.head_deadline_s, 7);
	assert_int_equal(fbc_http_config_set(&c, "headDeadlineSeconds", "3601", "t", &err),
			 FBC_EINVAL);
	assert_int_equal(c.max_connections_per_ip, 128);
	assert_true(c.max_body_anon < c.max_body);
	assert_true(c.max_extract_anon < c.max_extract);
	assert_int_equal(fbc_http_config_set(&c, "maxConnectionsPerIP", "0", "t", &err), 0);
	assert_int_equal(c.max_connections_per_ip, 0);
	assert_int_equal(fbc_http_config_set(&c, "uploadBudgetBytes", "1048576", "t", &err), 0);
	assert_int_equal(c.upload_budget, 1048576);
	assert_int_equal(fbc_http_config_set(&c, "maxBodyBytesAnonymous", "5000", "t", &err), 0);
	assert_int_equal(c.max_body_anon, 5000);
	assert_int_equal(fbc_http_config_set(&c, "headerTimeoutSeconds", "0", "f:3", &err),
			 FBC_EINVAL);
	assert_string_equal(err.where, "f:3");
	assert_int_equal(fbc_http_config_set(&c, "maxConnections", "3", "t", &err), FBC_EINVAL);
	fbc_http_config_dispose(&c);
}

/* ---------------------------------------------------- head, limits, budget */

static void fbc_http_dispatch_head__refuses_before_the_handler(void **state)
{
	(void)state;
	fbc_http_server_opts o;
	fbc_http_req req;
	fbc_http_resp resp;
	fbc_arena *a = NULL;
	const struct {
		const char *method, *path, *auth;
		int status; /* 0: routed */
	} cases[] = {
		{"POST", "/nowhere", NULL, 404},	  {"PUT", "/things", NULL, 405},
		{"POST", "/things", NULL, 401},		  {"POST", "/things", "Bearer x", 401},
		{"POST", "/things", "Bearer r", 403},	  {"POST", "/things", "Bearer w", 0},
		{"DELETE", "/things/1", "Bearer w", 403},
	};

	opts_init(&o, false);
	o.max_body_anon = 100;
	o.max_extract = 1000000;
	o.max_extract_anon = 1000;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_int_equal(fbc_arena_create(&a, 0), 0);
		memset(&req, 0, sizeof(req));
		memset(&resp, 0, sizeof(resp));
		req.arena = a;
		req.method = cases[i].method;
		req.path = cases[i].path;
		req.authorization = cases[i].auth;
		const fbc_http_route *r = fbc_http_dispatch_head(&o, &req, &resp);
		if (cases[i].status) {
			assert_null(r);
			assert_int_equal(resp.status, cases[i].status);
		} else {
			assert_non_null(r);
			assert_int_equal(resp.status, 0);
			/* a writer gets the writers' limits */
			assert_int_equal(fbc_http_body_limit(&o, &req), 1000);
			assert_int_equal(req.max_extract, 1000000);
		}
		fbc_http_resp_dispose(&resp);
		fbc_arena_free(a);
	}
	/* an anonymous caller of an open route gets the lower ones */
	assert_int_equal(fbc_arena_create(&a, 0), 0);
	memset(&req, 0, sizeof(req));
	memset(&resp, 0, sizeof(resp));
	req.arena = a;
	req.method = "POST";
	req.path = "/len";
	assert_non_null(fbc_http_dispatch_head(&o, &req, &resp));
	assert_int_equal(fbc_http_body_limit(&o, &req), 100);
	assert_int_equal(req.max_extract, 1000);
	fbc_arena_free(a);
}

static void fbc_http_budget_take__bounded_and_given_back(void **state)
{
	(void)state;
	fbc_http_budget b;

	fbc_http_budget_init(&b, 100);
	assert_true(fbc_http_budget_take(&b, 60));
	assert_false(fbc_http_budget_take(&b, 41));
	assert_true(fbc_http_budget_take(&b, 40));
	assert_false(fbc_http_budget_take(&b, 1));
	fbc_http_budget_give(&b, 60);
	assert_true(fbc_http_budget_take(&b, 60));
	assert_false(fbc_http_budget_take(&b, UINT64_MAX));
	assert_true(fbc_http_budget_take(NULL, UINT64_MAX)); /* no budget: unbounded */
	fbc_http_budget_init(&b, 0);
	assert_true(fbc_http_budget_take(&b, UINT64_MAX / 2));
}

/* ----------------------------------------------------------------- untar */

struct mem {
	char *data;
	size_t len, cap;
};

static la_ssize_t mem_write(struct archive *a, void *ctx, const void *buf, size_t n)
{
	struct mem *m = ctx;
	(void)a;
	if (m->len + n > m->cap) {
		m->cap = (m->len + n) * 2;
		m->data = realloc(m->data, m->cap);
	}
	memcpy(m->data + m->len, buf, n);
	m->len += n;
	return (la_ssize_t)n;
}

/* entries: name, type ('f' file, 'd' dir, 'l' symlink), content */
/* file_len: the size of every file's content, SIZE_MAX for its strlen */
static struct mem make_tgz_sized(const char *const *entries, size_t n, size_t file_len)
{
	struct mem m = {0};
	struct archive *a = archive_write_new();
	archive_write_add_filter_gzip(a);
	archive_write_set_format_pax_restricted(a);
	archive_write_open(a, &m, NULL, mem_write, NULL);
	for (size_t i = 0; i < n; i += 3) {
		struct archive_entry *e = archive_entry_new();
		const char *content = entries[i + 2];
		archive_entry_set_pathname(e, entries[i]);
		archive_entry_set_perm(e, 0644);
		if (entries[i + 1][0] == 'd') {
			archive_entry_set_filetype(e, AE_IFDIR);
		} else if (entries[i + 1][0] == 'l') {
			archive_entry_set_filetype(e, AE_IFLNK);
			archive_entry_set_symlink(e, content);
		} else {
			archive_entry_set_filetype(e, AE_IFREG);
			archive_entry_set_size(
				e, (la_int64_t)(file_len == SIZE_MAX ? strlen(content) : file_len));
		}
		archive_write_header(a, e);
		if (entries[i + 1][0] == 'f')
			archive_write_data(a, content,
					   file_len == SIZE_MAX ? strlen(content) : file_len);
		archive_entry_free(e);
	}
	archive_write_close(a);
	archive_write_free(a);
	return m;
}

static struct mem make_tgz(const char *const *entries, size_t n)
{
	return make_tgz_sized(entries, n, SIZE_MAX);
}

static char *tmpdir(void)
{
	char *d = strdup("/tmp/fbcd-untar-XXXXXX");
	assert_non_null(mkdtemp(d));
	return d;
}

static void fbc_http_untar__extracts_tree(void **state)
{
	(void)state;
	const char *ents[] = {
		"./pkg",    "d", "",	  "./pkg/catalog.json", "f", "{\"schema\":\"x\"}",
		"top.yaml", "f", "a: 1\n"};
	struct mem m = make_tgz(ents, 9);
	char *d = tmpdir(), path[512], buf[64];
	fbc_error err;

	assert_int_equal(fbc_http_untar(d, m.data, m.len, NULL, &err), 0);
	snprintf(path, sizeof(path), "%s/pkg/catalog.json", d);
	FILE *f = fopen(path, "r");
	assert_non_null(f);
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	assert_string_equal(buf, "{\"schema\":\"x\"}");
	assert_int_equal(fbc_http_rmtree(d), 0);
	assert_int_not_equal(access(d, F_OK), 0);
	free(d);
	free(m.data);
}

static void fbc_http_untar__rejects_unsafe_entries(void **state)
{
	(void)state;
	const char *dotdot[] = {"a/../../evil", "f", "x"};
	const char *link[] = {"lnk", "l", "/etc/passwd"};
	const char *dup[] = {"a", "f", "x", "a", "f", "y"};
	fbc_error err;

	struct mem m = make_tgz(dotdot, 3);
	char *d = tmpdir();
	assert_int_equal(fbc_http_untar(d, m.data, m.len, NULL, &err), FBC_EINVAL);
	assert_string_equal(err.where, "a/../../evil");
	fbc_http_rmtree(d);
	free(d);
	free(m.data);

	m = make_tgz(link, 3);
	d = tmpdir();
	assert_int_equal(fbc_http_untar(d, m.data, m.len, NULL, &err), FBC_EINVAL);
	assert_non_null(strstr(err.message, "regular files"));
	fbc_http_rmtree(d);
	free(d);
	free(m.data);

	m = make_tgz(dup, 6);
	d = tmpdir();
	assert_int_equal(fbc_http_untar(d, m.data, m.len, NULL, &err), FBC_EINVAL);
	fbc_http_rmtree(d);
	free(d);
	free(m.data);

	d = tmpdir();
	assert_int_equal(fbc_http_untar(d, "not an archive", 14, NULL, &err), FBC_EINVAL);
	fbc_http_rmtree(d);
	free(d);

	/* layouts the file system refuses are the client's error (400), not ours:
	 * a file where a directory is needed, a name over NAME_MAX */
	char longname[400];
	memset(longname, 'x', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	const char *file_dir[] = {"a", "f", "x", "a/b.json", "f", "{}"};
	const char *too_long[] = {longname, "f", "{}"};
	const char *const *bad[] = {file_dir, too_long};
	size_t nbad[] = {6, 3};
	for (size_t i = 0; i < 2; i++) {
		m = make_tgz(bad[i], nbad[i]);
		d = tmpdir();
		assert_int_equal(fbc_http_untar(d, m.data, m.len, NULL, &err), FBC_EINVAL);
		fbc_http_rmtree(d);
		free(d);
		free(m.data);
	}
}

static void fbc_http_untar__enforces_limits(void **state)
{
	(void)state;
	const char *ents[] = {"a", "f", "0123456789", "b", "f", "0123456789", "c", "f", "x"};
	struct mem m = make_tgz(ents, 9);
	fbc_untar_limits lim;
	fbc_error err;
	char *d = tmpdir();

	fbc_untar_limits_default(&lim);
	lim.max_file_bytes = 5;
	assert_int_equal(fbc_http_untar(d, m.data, m.len, &lim, &err), FBC_ELIMIT);
	fbc_http_rmtree(d);
	free(d);

	d = tmpdir();
	fbc_untar_limits_default(&lim);
	lim.max_entries = 2;
	assert_int_equal(fbc_http_untar(d, m.data, m.len, &lim, &err), FBC_ELIMIT);
	fbc_http_rmtree(d);
	free(d);

	d = tmpdir();
	fbc_untar_limits_default(&lim);
	lim.max_total_bytes = 15;
	assert_int_equal(fbc_http_untar(d, m.data, m.len, &lim, &err), FBC_ELIMIT);
	fbc_http_rmtree(d);
	free(d);
	free(m.data);

	/* a gzip bomb: 16 files of 512 KiB of zeros compress to a few KB;
	 * 200:1 (with the 1 MiB floor of max_file_bytes) refuses it, no ratio
	 * bound accepts it */
	char *zeros = calloc(1, 512u << 10);
	assert_non_null(zeros);
	const char *bomb[48];
	static char names[16][4];
	for (size_t i = 0; i < 16; i++) {
		snprintf(names[i], sizeof(names[i]), "z%zu", i);
		bomb[3 * i] = names[i];
		bomb[3 * i + 1] = "f";
		bomb[3 * i + 2] = zeros;
	}
	m = make_tgz_sized(bomb, 48, 512u << 10);
	assert_true(m.len < 64 * 1024);
	d = tmpdir();
	fbc_untar_limits_default(&lim);
	lim.max_file_bytes = 1u << 20;
	lim.max_total_bytes = 16u << 20;
	assert_int_equal(fbc_http_untar(d, m.data, m.len, &lim, &err), FBC_ELIMIT);
	assert_non_null(strstr(err.message, "uncompressed"));
	fbc_http_rmtree(d);
	free(d);
	d = tmpdir();
	lim.max_file_bytes = 16u << 20;
	lim.max_ratio = 0;
	assert_int_equal(fbc_http_untar(d, m.data, m.len, &lim, &err), 0);
	fbc_http_rmtree(d);
	free(d);
	free(m.data);
	free(zeros);
}

static void fbc_http_content_kind__maps_media_types(void **state)
{
	(void)state;
	assert_int_equal(fbc_http_content_kind("application/gzip"), FBC_CONTENT_TAR);
	assert_int_equal(fbc_http_content_kind("application/x-tar"), FBC_CONTENT_TAR);
	assert_int_equal(fbc_http_content_kind("application/jsonl; charset=utf-8"),
			 FBC_CONTENT_JSON);
	assert_int_equal(fbc_http_content_kind("application/yaml"), FBC_CONTENT_YAML);
	assert_int_equal(fbc_http_content_kind("application/gzipped"), FBC_CONTENT_UNKNOWN);
	assert_int_equal(fbc_http_content_kind("text/plain"), FBC_CONTENT_UNKNOWN);
	assert_int_equal(fbc_http_content_kind(NULL), FBC_CONTENT_UNKNOWN);
}

/* ---------------------------------------------------------------- graphs */

/* a(1.0.0) <- b(1.1.0) replaces a; c(2.0.0) replaces b, skips a;
 * d(1.5.0) off-chain, skipRange covers a */
static json_t *sample_graph(void)
{
	json_error_t je;
	json_t *g = json_loads(
		"{\"package\":\"p\",\"channel\":\"stable\",\"head\":\"c\","
		"\"nodes\":[{\"name\":\"a\",\"version\":\"1.0.0\"},{\"name\":\"b\",\"version\":\"1."
		"1.0\"},"
		"{\"name\":\"c\",\"version\":\"2.0.0\"},{\"name\":\"d\",\"version\":\"1.5.0\"}],"
		"\"edges\":[{\"from\":\"a\",\"to\":\"b\",\"kind\":\"replaces\"},"
		"{\"from\":\"b\",\"to\":\"c\",\"kind\":\"replaces\"},"
		"{\"from\":\"a\",\"to\":\"c\",\"kind\":\"skips\"},"
		"{\"from\":\"a\",\"to\":\"d\",\"kind\":\"skipRange\"}]}",
		0, &je);
	assert_non_null(g);
	return g;
}

static const char *item_name(json_t *items, size_t i)
{
	return json_string_value(json_object_get(json_array_get(items, i), "name"));
}

static void fbc_http_graph_successors__classic_and_v1(void **state)
{
	(void)state;
	json_t *g = sample_graph(), *items = NULL;
	fbc_error err;

	assert_int_equal(fbc_http_graph_successors(&items, g, "a", "v1", &err), 0);
	assert_int_equal(json_array_size(items), 3);
	assert_string_equal(item_name(items, 0), "c"); /* highest version first */
	assert_string_equal(item_name(items, 1), "d");
	assert_string_equal(item_name(items, 2), "b");
	json_decref(items);

	/* classic: d is not on the replaces chain; c is closest to the head.
	 * a is skipped by c, so the chain stops at b: a is not on it, but a's
	 * successors may be. */
	assert_int_equal(fbc_http_graph_successors(&items, g, "1.0.0", "classic", &err), 0);
	assert_int_equal(json_array_size(items), 2);
	assert_string_equal(item_name(items, 0), "c");
	assert_string_equal(item_name(items, 1), "b");
	json_decref(items);

	assert_int_equal(fbc_http_graph_successors(&items, g, "zz", "v1", &err), FBC_ENOTFOUND);
	json_decref(g);
}

static void fbc_http_graph_upgrade_path__shortest_and_classic(void **state)
{
	(void)state;
	json_t *g = sample_graph(), *out = NULL;
	fbc_error err;

	assert_int_equal(fbc_http_graph_upgrade_path(&out, g, "a", NULL, "v1", &err), 0);
	json_t *steps = json_object_get(out, "steps");
	assert_int_equal(json_array_size(steps), 2); /* a -> c directly */
	assert_string_equal(item_name(steps, 1), "c");
	json_decref(out);

	assert_int_equal(fbc_http_graph_upgrade_path(&out, g, "a", "d", "v1", &err), 0);
	assert_string_equal(json_string_value(json_object_get(out, "to")), "d");
	json_decref(out);

	assert_int_equal(fbc_http_graph_upgrade_path(&out, g, "b", NULL, "classic", &err), 0);
	steps = json_object_get(out, "steps");
	assert_int_equal(json_array_size(steps), 2);
	assert_string_equal(item_name(steps, 0), "b");
	assert_string_equal(item_name(steps, 1), "c");
	json_decref(out);

	/* d is off the chain: unreachable in classic semantics */
	assert_int_equal(fbc_http_graph_upgrade_path(&out, g, "a", "d", "classic", &err),
			 FBC_ENOTFOUND);
	/* nothing goes back down */
	assert_int_equal(fbc_http_graph_upgrade_path(&out, g, "c", "a", "v1", &err), FBC_ENOTFOUND);
	json_decref(g);
}

static void fbc_http_graph_format__dot_and_mermaid(void **state)
{
	(void)state;
	json_t *g = sample_graph();
	fbc_buf b;
	fbc_error err;

	fbc_buf_init(&b, 0);
	assert_int_equal(fbc_http_graph_format(&b, g, "dot", &err), 0);
	assert_non_null(strstr(b.data, "digraph \"p/stable\" {"));
	assert_non_null(strstr(b.data, "\"a\" -> \"b\" [label=\"replaces\"]"));
	assert_non_null(strstr(b.data, "\"a\" -> \"c\" [label=\"skips\", style=dashed]"));
	assert_non_null(strstr(b.data, "\"c\" [label=\"c\\n2.0.0\", style=bold]"));
	fbc_buf_reset(&b);
	assert_int_equal(fbc_http_graph_format(&b, g, "mermaid", &err), 0);
	assert_true(strncmp(b.data, "graph LR\n", 9) == 0);
	assert_non_null(strstr(b.data, "n0 -->|replaces| n1"));
	assert_non_null(strstr(b.data, "n0 -.->|skipRange| n3"));
	fbc_buf_dispose(&b);
	json_decref(g);
}

/* ----------------------------------------------------------------- cache */

static void fbc_http_cache_put__evicts_lru_keeps_referenced(void **state)
{
	(void)state;
	fbc_http_cache *c = NULL;
	char big[2000];

	memset(big, 'x', sizeof(big));
	assert_int_equal(fbc_http_cache_create(&c, 1u << 20, 2), 0);
	assert_int_equal(fbc_http_cache_put(c, "a", "application/json", "{\"a\":1}", 7), 0);
	assert_int_equal(fbc_http_cache_put(c, "b", "text/plain", big, sizeof(big)), 0);
	const fbc_http_cached *a = fbc_http_cache_get(c, "a");
	assert_non_null(a);
	assert_string_equal(a->data, "{\"a\":1}");
	assert_null(a->gz); /* small: not compressed */
	const fbc_http_cached *b = fbc_http_cache_get(c, "b");
	assert_non_null(b->gz);
	assert_true(b->gz_len < b->len);
	/* "a" was used before "b": it is the one evicted, but our reference stays valid */
	assert_int_equal(fbc_http_cache_put(c, "c", "text/plain", "c", 1), 0);
	assert_int_equal(fbc_http_cache_count(c), 2);
	assert_null(fbc_http_cache_get(c, "a"));
	assert_string_equal(a->data, "{\"a\":1}");
	fbc_http_cache_release((void *)(uintptr_t)a);
	fbc_http_cache_release((void *)(uintptr_t)b);
	const fbc_http_cached *cc = fbc_http_cache_get(c, "c");
	assert_non_null(cc);
	fbc_http_cache_release((void *)(uintptr_t)cc);
	/* too large for the budget: silently not cached */
	fbc_http_cache_free(c);
	assert_int_equal(fbc_http_cache_create(&c, 1000, 10), 0);
	assert_int_equal(fbc_http_cache_put(c, "big", "text/plain", big, sizeof(big)), 0);
	assert_int_equal(fbc_http_cache_count(c), 0);
	fbc_http_cache_free(c);
}

/* Keys differ by any query argument, so clients can flood the table: eviction
 * must stay cheap (a scan of 50,000 entries per insertion took minutes here)
 * and keep the recently used entries. */
static void fbc_http_cache_put__flood_evicts_oldest_quickly(void **state)
{
	(void)state;
	fbc_http_cache *c = NULL;
	char key[32];

	assert_int_equal(fbc_http_cache_create(&c, 1u << 30, 50000), 0);
	for (int i = 0; i < 150000; i++) {
		snprintf(key, sizeof(key), "d /x?n=%d", i);
		assert_int_equal(fbc_http_cache_put(c, key, "text/plain", "v", 1), 0);
		if (i % 1000 == 999) { /* keep "n=0" recent */
			const fbc_http_cached *e = fbc_http_cache_get(c, "d /x?n=0");
			assert_non_null(e);
			fbc_http_cache_release((void *)(uintptr_t)e);
		}
	}
	assert_int_equal(fbc_http_cache_count(c), 50000);
	const fbc_http_cached *keep = fbc_http_cache_get(c, "d /x?n=0");
	assert_non_null(keep);
	fbc_http_cache_release((void *)(uintptr_t)keep);
	assert_null(fbc_http_cache_get(c, "d /x?n=1"));
	assert_null(fbc_http_cache_get(c, "d /x?n=99999"));
	const fbc_http_cached *last = fbc_http_cache_get(c, "d /x?n=149999");
	assert_non_null(last);
	fbc_http_cache_release((void *)(uintptr_t)last);
	fbc_http_cache_free(c);
}

/* ---------------------------------------------------------- real server */

struct sink {
	char data[200000];
	size_t len;
};

static size_t sink_write(char *p, size_t size, size_t n, void *ctx)
{
	struct sink *s = ctx;
	size_t k = size * n;
	if (s->len + k > sizeof(s->data))
		return 0;
	memcpy(s->data + s->len, p, k);
	s->len += k;
	return k;
}

static long fetch(unsigned port, const char *method, const char *path, const char *body,
		  size_t body_len, bool gzip, struct sink *out, struct sink *hdr)
{
	CURL *c = curl_easy_init();
	char url[256];
	long code = 0;

	snprintf(url, sizeof(url), "http://127.0.0.1:%u%s", port, path);
	out->len = 0;
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, sink_write);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, out);
	if (hdr) {
		hdr->len = 0;
		curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, sink_write);
		curl_easy_setopt(c, CURLOPT_HEADERDATA, hdr);
	}
	if (gzip)
		curl_easy_setopt(c, CURLOPT_ACCEPT_ENCODING, "gzip");
	if (body) {
		curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
		curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE, (long)body_len);
	}
	assert_int_equal(curl_easy_perform(c), CURLE_OK);
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
	curl_easy_cleanup(c);
	return code;
}

/* Send head, then (when body is set) `total` bytes of body in 1000-byte
 * chunks of chunked encoding, stopping at the first failed write; then read
 * the answer (NUL-terminated in got). Returns the bytes read, 0 or -1 when
 * the server closed the connection without an answer. */
static ssize_t raw_request(unsigned port, const char *head, size_t head_len, const char *body,
			   size_t total, char *got, size_t got_size)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
	struct timeval tv = {.tv_sec = 10};
	char line[16];
	ssize_t n;

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_true(fd >= 0);
	assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	assert_int_equal(send(fd, head, head_len, MSG_NOSIGNAL), (ssize_t)head_len);
	for (size_t sent = 0; body && sent < total; sent += 1000) {
		int ln = snprintf(line, sizeof(line), "%x\r\n", 1000);
		if (send(fd, line, (size_t)ln, MSG_NOSIGNAL) != ln ||
		    send(fd, body, 1000, MSG_NOSIGNAL) != 1000 ||
		    send(fd, "\r\n", 2, MSG_NOSIGNAL) != 2)
			break;
	}
	if (body)
		(void)send(fd, "0\r\n\r\n", 5, MSG_NOSIGNAL);
	n = recv(fd, got, got_size - 1, 0);
	got[n > 0 ? n : 0] = '\0';
	close(fd);
	return n;
}

static void fbc_http_server_start__serves_requests(void **state)
{
	(void)state;
	fbc_http_server_opts o;
	fbc_http_server *srv = NULL;
	fbc_error err;
	static struct sink body, hdr;
	unsigned port;

	opts_init(&o, false);
	assert_int_equal(fbc_http_server_start(&srv, &o, &err), 0);
	port = fbc_http_server_port(srv);
	assert_true(port > 0);

	assert_int_equal(fetch(port, "GET", "/things/abc", NULL, 0, false, &body, &hdr), 200);
	assert_int_equal(body.len, 6);
	assert_memory_equal(body.data, "id=abc", 6);
	hdr.data[hdr.len] = '\0';
	assert_non_null(strstr(hdr.data, "ETag: \"sha256:abc\""));

	/* gzip negotiated; curl decodes it, the header shows it was used */
	assert_int_equal(fetch(port, "GET", "/big", NULL, 0, true, &body, &hdr), 200);
	assert_int_equal(body.len, 100000);
	assert_int_equal(body.data[8], 'a' + 8 % 7);
	hdr.data[hdr.len] = '\0';
	assert_non_null(strstr(hdr.data, "Content-Encoding: gzip"));
	assert_int_equal(fetch(port, "GET", "/big", NULL, 0, false, &body, &hdr), 200);
	hdr.data[hdr.len] = '\0';
	assert_null(strstr(hdr.data, "Content-Encoding"));

	/* body limit (1000 bytes in opts_init) */
	char big[3000];
	memset(big, 'x', sizeof(big));
	assert_int_equal(fetch(port, "POST", "/len", big, 999, false, &body, NULL), 200);
	assert_memory_equal(body.data, "999", 3);
	assert_int_equal(fetch(port, "POST", "/len", big, sizeof(big), false, &body, NULL), 413);
	body.data[body.len] = '\0';
	assert_non_null(strstr(body.data, "\"code\":\"too_large\""));

	assert_int_equal(fetch(port, "POST", "/things", "{}", 2, false, &body, NULL), 401);

	/* a declared body over the limit is refused at once, before any of it
	 * is sent (the server used to wait for and discard all of it) */
	static const char head[] = "POST /len HTTP/1.1\r\nHost: x\r\n"
				   "Content-Length: 100000000000\r\n\r\n";
	char got[512];
	assert_true(raw_request(port, head, sizeof(head) - 1, NULL, 0, got, sizeof(got)) > 12);
	assert_non_null(strstr(got, " 413 "));
	/* chunked: no length up front; a little over the limit still gets its
	 * 413, an endless stream is cut off */
	static const char chunked[] = "POST /len HTTP/1.1\r\nHost: x\r\n"
				      "Transfer-Encoding: chunked\r\n\r\n";
	assert_true(raw_request(port, chunked, sizeof(chunked) - 1, big, 1500, got, sizeof(got)) >
		    12);
	assert_non_null(strstr(got, " 413 "));
	assert_true(raw_request(port, chunked, sizeof(chunked) - 1, big, 1u << 24, got,
				sizeof(got)) <= 0);

	/* percent-decoding: UTF-8 passes, %00 never cuts the path short */
	assert_int_equal(fetch(port, "GET", "/things/%C3%A9", NULL, 0, false, &body, NULL), 200);
	assert_memory_equal(body.data, "id=\xc3\xa9", 5);
	assert_int_equal(fetch(port, "GET", "/things/a%00b", NULL, 0, false, &body, NULL), 400);
	assert_int_equal(fetch(port, "GET", "/things/%ff", NULL, 0, false, &body, NULL), 400);
	assert_int_equal(fetch(port, "GET", "/things/7?x=%00", NULL, 0, false, &body, NULL), 400);
	fbc_http_server_stop(srv, 1000);
}

static void fbc_http_server_start__rejects_bad_listen(void **state)
{
	(void)state;
	fbc_http_server_opts o;
	fbc_http_server *srv = NULL;
	fbc_error err;
	const char *bad[] = {"nonsense", "1.2.3:80", "127.0.0.1:99999", "[::1:80"};

	opts_init(&o, false);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		o.listen = bad[i];
		fbc_error_init(&err);
		assert_int_not_equal(fbc_http_server_start(&srv, &o, &err), 0);
		assert_string_equal(err.where, "listen");
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(fbc_http_route_match__extracts_params),
		cmocka_unit_test(fbc_http_config_from_args__yaml_expansion),
		cmocka_unit_test(fbc_http_config_set__limits_and_timeouts),
		cmocka_unit_test(fbc_http_dispatch_head__refuses_before_the_handler),
		cmocka_unit_test(fbc_http_budget_take__bounded_and_given_back),
		cmocka_unit_test(fbc_http_route_match__distinguishes_404_and_405),
		cmocka_unit_test(fbc_http_etag_matches__lists_weak_and_star),
		cmocka_unit_test(fbc_http_accepts_gzip__honours_q),
		cmocka_unit_test(fbc_http_gzip__round_trips),
		cmocka_unit_test(fbc_http_page_args__bounds_limit),
		cmocka_unit_test(fbc_http_problem__has_rfc9457_members),
		cmocka_unit_test(fbc_http_problem_from_error__hides_server_side_detail),
		cmocka_unit_test(fbc_http_dispatch__enforces_scopes),
		cmocka_unit_test(fbc_http_dispatch__not_modified_and_errors),
		cmocka_unit_test(fbc_http_dispatch__rejects_invalid_utf8),
		cmocka_unit_test(fbc_http_read_json_object__bounds_size_and_depth),
		cmocka_unit_test(fbc_http_dispatch__single_byte_ranges),
		cmocka_unit_test(fbc_http_config_load_file__applies_settings),
		cmocka_unit_test(fbc_http_config_load_file__reports_file_and_line),
		cmocka_unit_test(fbc_http_config_from_args__flags_beat_env),
		cmocka_unit_test(fbc_http_untar__extracts_tree),
		cmocka_unit_test(fbc_http_untar__rejects_unsafe_entries),
		cmocka_unit_test(fbc_http_untar__enforces_limits),
		cmocka_unit_test(fbc_http_content_kind__maps_media_types),
		cmocka_unit_test(fbc_http_graph_successors__classic_and_v1),
		cmocka_unit_test(fbc_http_graph_upgrade_path__shortest_and_classic),
		cmocka_unit_test(fbc_http_graph_format__dot_and_mermaid),
		cmocka_unit_test(fbc_http_cache_put__evicts_lru_keeps_referenced),
		cmocka_unit_test(fbc_http_cache_put__flood_evicts_oldest_quickly),
		cmocka_unit_test(fbc_http_server_start__serves_requests),
		cmocka_unit_test(fbc_http_server_start__rejects_bad_listen),
	};
	curl_global_init(CURL_GLOBAL_DEFAULT);
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	curl_global_cleanup();
	return rc;
}
