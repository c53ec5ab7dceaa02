/* The libmicrohttpd server: request lifecycle (arena, bounded body),
 * routing, authentication, conditional requests, gzip, graceful stop. */
#include "api/http/http.h"
#include "api/http/headwatch.h"
#include "service/base/log.h"
#include "service/base/metrics.h"
#include "service/base/utf8.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define GZIP_MIN_BYTES 1400
/* bodies from this size on are sent from their file when they have one, by
 * at most FILE_SENDS_MAX responses at once (each holds a descriptor until
 * it is sent; the others are sent from memory) */
#define FILE_MIN_BYTES (256 * 1024)
#define FILE_SENDS_MAX 256
#define MAX_THREADS    64

struct fbc_http_server {
	struct MHD_Daemon *daemon;
	fbc_http_server_opts opts;
	atomic_long in_flight;
	atomic_uint file_sends; /* responses holding a descriptor (FILE_SENDS_MAX) */
	unsigned port;
	fbc_head_watch *watch; /* head deadline, NULL when off */
};

struct req_state {
	fbc_arena *arena;
	fbc_http_req req; /* filled from the head at the first call */
	const fbc_http_route *matched;
	fbc_buf body;
	size_t limit;	   /* body limit of this request */
	uint64_t reserved; /* taken from the upload budget */
	bool too_large;
	bool over_budget; /* a chunked body ran out of budget */
	size_t discarded; /* body bytes read past the limit (chunked uploads) */
	bool answered;	  /* a response was queued before the body arrived */
	bool file_send;	  /* counted in file_sends */
	fbc_http_resp resp;
	struct timespec start;
	char request_id[FBC_HTTP_REQUEST_ID_MAX + 1];
	const char *method; /* libmicrohttpd's, valid until completion */
	const char *path;   /* the decoded path (arena copy), for the access log */
	const char *route;  /* the matched pattern, NULL when none */
};

/* Request metrics (GET /metrics). The route label is the route's pattern,
 * never the raw path, so the number of series stays bounded. */
static const double http_buckets[] = {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1,
				      0.25,  0.5,    1,	    2.5,  5,	 10};
static const fbc_metric_def m_duration = {
	.name = "fbcd_http_request_duration_seconds",
	.help = "Time from the request head to the end of the response, by route template.",
	.type = FBC_METRIC_HISTOGRAM,
	.labels = {"route", "method", "code"},
	.buckets = http_buckets,
	.n_buckets = sizeof(http_buckets) / sizeof(http_buckets[0])};
static const fbc_metric_def m_in_flight = {.name = "fbcd_http_requests_in_flight",
					   .help = "Requests being served.",
					   .type = FBC_METRIC_GAUGE};
/* catalogd's own histogram and buckets, for its dashboards (Apdex up to 1 s). */
static const double catalogd_buckets[] = {0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1,
					  1.2, 1.6, 2,	 2.4, 2.8, 3.2, 3.6, 4,	  10};
static const fbc_metric_def m_catalogd = {
	.name = "catalogd_http_request_duration_seconds",
	.help = "Histogram of request duration in seconds (catalogd-compatible endpoints).",
	.type = FBC_METRIC_HISTOGRAM,
	.labels = {"code"},
	.buckets = catalogd_buckets,
	.n_buckets = sizeof(catalogd_buckets) / sizeof(catalogd_buckets[0])};

/* A client's X-Request-Id is kept when it is 1..64 characters of
 * [A-Za-z0-9._:-]; anything else is replaced by a generated one. */
static bool request_id_ok(const char *s)
{
	size_t n = 0;

	for (; s[n]; n++) {
		char c = s[n];
		if (n >= FBC_HTTP_REQUEST_ID_MAX ||
		    !(isalnum((unsigned char)c) || c == '.' || c == '_' || c == ':' || c == '-'))
			return false;
	}
	return n > 0;
}

static void request_id_make(char *out, struct MHD_Connection *conn)
{
	static atomic_ulong counter;
	unsigned char r[8];
	const char *given = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "X-Request-Id");

	if (given && request_id_ok(given)) {
		snprintf(out, FBC_HTTP_REQUEST_ID_MAX + 1, "%s", given);
		return;
	}
	if (getrandom(r, sizeof(r), GRND_NONBLOCK) != (ssize_t)sizeof(r)) {
		unsigned long c = atomic_fetch_add(&counter, 1) + (unsigned long)time(NULL);
		memcpy(r, &c, sizeof(r) < sizeof(c) ? sizeof(r) : sizeof(c));
	}
	for (size_t i = 0; i < sizeof(r); i++)
		snprintf(out + 2 * i, 3, "%02x", r[i]);
}

void fbc_http_resp_dispose(fbc_http_resp *resp)
{
	if (resp && resp->release) {
		resp->release(resp->release_ctx);
		resp->release = NULL;
	}
}

static bool scope_satisfies(unsigned granted, unsigned need)
{
	if (need == FBC_SCOPE_NONE)
		return true;
	if (granted & FBC_SCOPE_ADMIN)
		return true;
	if (need == FBC_SCOPE_READ)
		return (granted & (FBC_SCOPE_READ | FBC_SCOPE_WRITE)) != 0;
	return (granted & need) == need;
}

static const char *scope_name(unsigned s)
{
	switch (s) {
	case FBC_SCOPE_READ:
		return "read";
	case FBC_SCOPE_WRITE:
		return "write";
	case FBC_SCOPE_ADMIN:
		return "admin";
	default:
		return "none";
	}
}

/* A single "bytes=A-B", "bytes=A-" or "bytes=-N" range (RFC 9110 §14):
 * 206 with the slice, or 416 when it starts past the end. Anything else
 * (several ranges, bad syntax) is ignored and the whole body is sent. */
static void apply_range(fbc_http_req *req, fbc_http_resp *resp)
{
	const char *r = req->range;
	size_t len = resp->body_len, first, last;
	char *end = NULL;

	if (strncmp(r, "bytes=", 6) != 0 || strchr(r, ','))
		return;
	r += 6;
	if (*r == '-') {
		if (r[1] < '0' || r[1] > '9')
			return;
		unsigned long long n = strtoull(r + 1, &end, 10);
		if (*end || n == 0)
			return;
		first = n >= len ? 0 : len - (size_t)n;
		last = len ? len - 1 : 0;
	} else {
		if (*r < '0' || *r > '9')
			return;
		unsigned long long a = strtoull(r, &end, 10), b;
		if (*end != '-')
			return;
		if (end[1] == '\0') {
			b = len ? len - 1 : 0;
		} else {
			const char *bs = end + 1;
			if (*bs < '0' || *bs > '9')
				return;
			b = strtoull(bs, &end, 10);
			if (*end || b < a)
				return;
		}
		if (a >= len) {
			resp->status = 416;
			resp->body = NULL;
			resp->body_len = 0;
			resp->body_gz = NULL;
			resp->body_gz_len = 0;
			fbc_http_resp_header(resp, "Content-Range",
					     fbc_arena_printf(req->arena, "bytes */%zu", len));
			return;
		}
		first = (size_t)a;
		last = b >= len ? len - 1 : (size_t)b;
	}
	if (len == 0)
		return;
	fbc_http_resp_header(resp, "Content-Range",
			     fbc_arena_printf(req->arena, "bytes %zu-%zu/%zu", first, last, len));
	resp->status = 206;
	resp->body += first;
	resp->body_len = last - first + 1;
	resp->body_gz = NULL;
	resp->body_gz_len = 0;
	resp->no_compress = true;
}

/* Paths and arguments reach PostgreSQL as text parameters, which refuses
 * anything but UTF-8 with an error that would otherwise be a 500. */
static bool utf8_valid(const char *s)
{
	return fbc_utf8_valid(s, strlen(s));
}

void fbc_http_budget_init(fbc_http_budget *b, uint64_t total)
{
	atomic_init(&b->used, 0);
	b->total = total;
}

bool fbc_http_budget_take(fbc_http_budget *b, uint64_t n)
{
	uint64_t cur;

	if (!b || n == 0)
		return true;
	cur = atomic_load(&b->used);
	do {
		if (b->total && (n > b->total || cur > b->total - n))
			return false;
	} while (!atomic_compare_exchange_weak(&b->used, &cur, cur + n));
	return true;
}

void fbc_http_budget_give(fbc_http_budget *b, uint64_t n)
{
	if (b && n)
		atomic_fetch_sub(&b->used, n);
}

static bool is_writer(const fbc_http_req *req)
{
	return (req->scopes & (FBC_SCOPE_WRITE | FBC_SCOPE_ADMIN)) != 0;
}

size_t fbc_http_body_limit(const fbc_http_server_opts *opts, const fbc_http_req *req)
{
	if (is_writer(req) || !opts->max_body_anon || opts->max_body_anon > opts->max_body)
		return opts->max_body;
	return opts->max_body_anon;
}

const fbc_http_route *fbc_http_dispatch_head(const fbc_http_server_opts *opts, fbc_http_req *req,
					     fbc_http_resp *resp)
{
	bool path_matched = false;
	const fbc_http_route *r;
	int rc;

	req->app = opts->app;
	req->budget = opts->budget;
	if (!utf8_valid(req->path)) {
		fbc_http_problem(resp, req, 400, "bad_request",
				 "the path is not valid UTF-8 (or holds %%00)");
		return NULL;
	}
	for (size_t i = 0; i < req->n_query; i++) {
		if (!utf8_valid(req->query[i].key) ||
		    (req->query[i].value && !utf8_valid(req->query[i].value))) {
			fbc_http_problem(resp, req, 400, "bad_request",
					 "query argument %zu is not valid UTF-8 (or holds %%00)",
					 i + 1);
			return NULL;
		}
	}
	r = fbc_http_route_match(opts->routes, opts->n_routes, req->method, req->path, req,
				 &path_matched);
	if (!r) {
		if (path_matched) {
			char *allow = fbc_http_route_allow(opts->routes, opts->n_routes, req->path,
							   req->arena);
			fbc_http_resp_header(resp, "Allow", allow ? allow : "");
			fbc_http_problem(resp, req, 405, "method_not_allowed",
					 "%s is not allowed on %s", req->method, req->path);
			return NULL;
		}
		fbc_http_problem(resp, req, 404, "not_found", "no route for %s", req->path);
		return NULL;
	}
	req->route = r->pattern;
	if (req->query_overflow) {
		fbc_http_problem(resp, req, 400, "bad_request",
				 "too many query arguments (at most %d)", FBC_HTTP_MAX_QUERY);
		return NULL;
	}

	unsigned need = r->scope;
	if (need == FBC_SCOPE_READ && !opts->read_auth)
		need = FBC_SCOPE_NONE;
	if (need != FBC_SCOPE_NONE || req->authorization) {
		fbc_error err;
		unsigned granted = 0;

		fbc_error_init(&err);
		if (req->authorization && opts->auth) {
			rc = opts->auth(opts->app, req->authorization, &granted, &err);
			if (rc != 0) {
				fbc_http_problem_from_error(resp, req, &err);
				return NULL;
			}
		}
		req->scopes = granted;
		if (need != FBC_SCOPE_NONE && !scope_satisfies(granted, need)) {
			if (!req->authorization || granted == 0) {
				fbc_http_resp_header(resp, "WWW-Authenticate",
						     "Bearer realm=\"fbcd\"");
				fbc_http_problem(resp, req, 401, "unauthorized", "%s",
						 req->authorization
							 ? "the bearer token is not valid"
							 : "a bearer token is required");
				return NULL;
			}
			fbc_http_problem(resp, req, 403, "forbidden",
					 "this operation needs a token with the '%s' scope",
					 scope_name(need));
			return NULL;
		}
	}
	req->max_extract = is_writer(req) ? opts->max_extract : opts->max_extract_anon;
	if (!req->max_extract || (opts->max_extract && req->max_extract > opts->max_extract))
		req->max_extract = opts->max_extract;
	return r;
}

int fbc_http_dispatch_run(const fbc_http_route *r, fbc_http_req *req, fbc_http_resp *resp)
{
	int rc = r->fn(req, resp);

	if (rc != 0 || resp->status == 0) {
		fbc_http_resp_dispose(resp);
		memset(resp, 0, sizeof(*resp));
		return fbc_http_problem(resp, req, 500, "internal",
					"internal error (%s) while serving %s",
					fbc_error_code_name(rc), req->path);
	}
	if (resp->status == 200 && resp->etag &&
	    fbc_http_etag_matches(req->if_none_match, resp->etag)) {
		resp->status = 304;
		resp->body = NULL;
		resp->body_len = 0;
		resp->body_gz = NULL;
		resp->body_gz_len = 0;
	} else if (resp->status == 200 && req->range && resp->body &&
		   (!req->if_range || (resp->etag && !strcmp(req->if_range, resp->etag)))) {
		apply_range(req, resp);
	}
	return 0;
}

int fbc_http_dispatch(const fbc_http_server_opts *opts, fbc_http_req *req, fbc_http_resp *resp)
{
	const fbc_http_route *r = fbc_http_dispatch_head(opts, req, resp);

	if (!r) /* status 0: not even a problem could be made (out of memory, ...) */
		return resp->status ? 0 : FBC_EINTERNAL;
	return fbc_http_dispatch_run(r, req, resp);
}

static unsigned hexval(char c)
{
	return c <= '9' ? (unsigned)(c - '0') : (unsigned)((c | 0x20) - 'a' + 10);
}

/* Percent-decoding of the path and the query arguments, as libmicrohttpd's
 * own, except that %00 becomes C0 80 (an invalid UTF-8 sequence) instead of
 * a NUL that would silently cut the string short: "/v1/catalogs/a%00/x"
 * was served as "/v1/catalogs/a". fbc_http_dispatch refuses it with a 400. */
static size_t unescape(void *cls, struct MHD_Connection *conn, char *s)
{
	char *w = s;

	(void)cls;
	(void)conn;
	for (const char *r = s; *r;) {
		if (r[0] == '%' && isxdigit((unsigned char)r[1]) && isxdigit((unsigned char)r[2])) {
			unsigned v = hexval(r[1]) << 4 | hexval(r[2]);
			if (v == 0) {
				*w++ = (char)0xC0;
				*w++ = (char)0x80;
			} else {
				*w++ = (char)v;
			}
			r += 3;
		} else {
			*w++ = *r++;
		}
	}
	*w = '\0';
	return (size_t)(w - s);
}

static enum MHD_Result collect_arg(void *cls, enum MHD_ValueKind kind, const char *key,
				   const char *value)
{
	fbc_http_req *req = cls;

	(void)kind;
	if (req->n_query >= FBC_HTTP_MAX_QUERY) {
		req->query_overflow = true;
		return MHD_NO;
	}
	req->query[req->n_query].key = key;
	req->query[req->n_query].value = value ? value : "";
	req->n_query++;
	return MHD_YES;
}

static enum MHD_Result queue(struct fbc_http_server *srv, struct MHD_Connection *conn,
			     fbc_http_req *req, struct req_state *st)
{
	fbc_http_resp *resp = &st->resp;
	const char *body = resp->body;
	size_t len = resp->body_len;
	bool gz = false, from_file;
	struct MHD_Response *mr;
	enum MHD_Result ret;

	if (resp->status != 304 && !resp->no_compress &&
	    fbc_http_accepts_gzip(req->accept_encoding)) {
		if (resp->body_gz) {
			body = resp->body_gz;
			len = resp->body_gz_len;
			gz = true;
		} else if (len >= GZIP_MIN_BYTES) {
			fbc_buf *zb = fbc_arena_alloc(st->arena, sizeof(*zb));
			fbc_error err;

			if (zb) {
				fbc_buf_init(zb, len + 1024);
				if (fbc_http_gzip(zb, body, len, &err) == 0 &&
				    fbc_arena_defer(st->arena, (void (*)(void *))fbc_buf_dispose,
						    zb) == 0) {
					body = zb->data;
					len = zb->len;
					gz = true;
				} else {
					fbc_buf_dispose(zb);
				}
			}
		}
	}
	mr = NULL;
	/* A large body kept in a file goes out with sendfile: on loopback its
	 * pages travel by reference, and many connections reading 13 MB at
	 * once are then served evenly (as nginx serves a static file); copied
	 * from memory, a few got most of the bandwidth while others waited
	 * seconds (wrk timeouts). libmicrohttpd closes its own descriptor. */
	from_file = len >= FILE_MIN_BYTES && body &&
		    (body == resp->file_body || (gz && body == resp->file_body_gz));
	if (from_file && atomic_fetch_add(&srv->file_sends, 1) >= FILE_SENDS_MAX) {
		atomic_fetch_sub(&srv->file_sends, 1);
		from_file = false;
	}
	if (from_file) {
		int fd = dup(body == resp->file_body ? resp->body_file : resp->body_gz_file);

		if (fd >= 0) {
			mr = MHD_create_response_from_fd_at_offset64(len, fd, 0);
			if (!mr)
				close(fd);
		}
		st->file_send = mr != NULL;
		if (!mr)
			atomic_fetch_sub(&srv->file_sends, 1);
	}
	if (!mr)
		mr = MHD_create_response_from_buffer(len, (void *)(uintptr_t)(body ? body : ""),
						     MHD_RESPMEM_PERSISTENT);
	if (!mr)
		return MHD_NO;
	if (resp->content_type)
		MHD_add_response_header(mr, MHD_HTTP_HEADER_CONTENT_TYPE, resp->content_type);
	if (resp->etag)
		MHD_add_response_header(mr, MHD_HTTP_HEADER_ETAG, resp->etag);
	if (gz)
		MHD_add_response_header(mr, MHD_HTTP_HEADER_CONTENT_ENCODING, "gzip");
	if (!resp->no_compress)
		MHD_add_response_header(mr, MHD_HTTP_HEADER_VARY, "Accept-Encoding");
	MHD_add_response_header(mr, "X-Content-Type-Options", "nosniff");
	if (req->request_id)
		MHD_add_response_header(mr, "X-Request-Id", req->request_id);
	/* icons come from catalog data (SVG may carry scripts): never active content */
	if (resp->content_type && strncmp(resp->content_type, "image/", 6) == 0)
		MHD_add_response_header(mr, "Content-Security-Policy", "default-src 'none'");
	for (size_t i = 0; i < resp->n_headers; i++)
		MHD_add_response_header(mr, resp->headers[i].key, resp->headers[i].value);
	ret = MHD_queue_response(conn, (unsigned)resp->status, mr);
	MHD_destroy_response(mr);
	(void)srv;
	return ret;
}

static const char *lookup_header(void *ctx, const char *name)
{
	return MHD_lookup_connection_value(ctx, MHD_HEADER_KIND, name);
}

static void fill_headers(fbc_http_req *req, struct MHD_Connection *conn)
{
	req->header_fn = lookup_header;
	req->header_ctx = conn;
	req->content_type =
		MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_TYPE);
	req->if_none_match =
		MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_IF_NONE_MATCH);
	req->accept_encoding =
		MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_ACCEPT_ENCODING);
	req->authorization =
		MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION);
	req->range = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_RANGE);
	req->if_range =
		MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_IF_RANGE);
}

static void budget_refused(struct req_state *st)
{
	fbc_http_resp_header(&st->resp, "Retry-After", "5");
	fbc_http_problem(&st->resp, &st->req, 503, "busy",
			 "the server's budget for uploads in flight is used up; retry later");
}

/* The first call, with the complete head and no body yet: decide what can
 * be decided without the body. Returns true when the request is refused
 * and the answer is in st->resp (libmicrohttpd then sends it and closes the
 * connection instead of reading the body). */
static bool on_head(struct fbc_http_server *srv, struct MHD_Connection *conn, struct req_state *st)
{
	fbc_http_req *req = &st->req;
	const char *cl, *te;

	fill_headers(req, conn);
	MHD_get_connection_values(conn, MHD_GET_ARGUMENT_KIND, collect_arg, req);
	st->matched = fbc_http_dispatch_head(&srv->opts, req, &st->resp);
	st->route = req->route;
	if (!st->matched)
		return true; /* (status 0: the caller closes the connection) */
	st->limit = fbc_http_body_limit(&srv->opts, req);
	cl = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
	te = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_TRANSFER_ENCODING);
	if (cl) {
		char *end = NULL;
		unsigned long long n = strtoull(cl, &end, 10);

		if (end && *end == '\0' && n > st->limit) {
			st->too_large = true;
			fbc_http_problem(&st->resp, req, 413, "too_large",
					 "the request body exceeds the limit of %zu bytes",
					 st->limit);
			return true;
		}
		if (end && *end == '\0' && n > 0 && !te) {
			if (!fbc_http_budget_take(srv->opts.budget, n)) {
				budget_refused(st);
				return true;
			}
			st->reserved = n;
		}
	}
	fbc_buf_init(&st->body, st->limit);
	return false;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
				  const char *method, const char *version, const char *upload_data,
				  size_t *upload_data_size, void **con_cls)
{
	struct fbc_http_server *srv = cls;
	struct req_state *st = *con_cls;

	(void)version;
	if (!st) {
		st = calloc(1, sizeof(*st));
		if (!st)
			return MHD_NO;
		if (fbc_arena_create(&st->arena, 16 * 1024) != 0) {
			free(st);
			return MHD_NO;
		}
		fbc_buf_init(&st->body, 0);
		clock_gettime(CLOCK_MONOTONIC, &st->start);
		atomic_fetch_add(&srv->in_flight, 1);
		fbc_metric_add(&m_in_flight, NULL, 1);
		request_id_make(st->request_id, conn);
		st->method = method;
		st->path = fbc_arena_strdup(st->arena, url);
		*con_cls = st;
		st->req.arena = st->arena;
		st->req.method = method;
		st->req.path = url;
		st->req.request_id = st->request_id;
		if (srv->watch) {
			const union MHD_ConnectionInfo *ci =
				MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
			if (ci)
				fbc_head_watch_done(srv->watch, ci->socket_context);
		}
		/* the head is complete: the connection may now stay silent for
		 * the longer idle timeout (a client preparing its body) */
		if (srv->opts.idle_timeout_s)
			MHD_set_connection_option(conn, MHD_CONNECTION_OPTION_TIMEOUT,
						  srv->opts.idle_timeout_s);
		if (!on_head(srv, conn, st))
			return MHD_YES;
		if (st->resp.status == 0)
			return MHD_NO;
		/* Answer at once: waiting for a body that is refused anyway would
		 * let a client stream gigabytes at us. */
		st->answered = true;
		return queue(srv, conn, &st->req, st);
	}
	if (*upload_data_size) {
		size_t n = *upload_data_size;

		if (!st->too_large && !st->over_budget && st->reserved < st->body.len + n) {
			/* a chunked body (or one longer than announced): take as it comes */
			uint64_t more = st->body.len + n - st->reserved;

			if (fbc_http_budget_take(srv->opts.budget, more))
				st->reserved += more;
			else
				st->over_budget = true;
		}
		if (!st->too_large && !st->over_budget &&
		    fbc_buf_append(&st->body, upload_data, n) != 0)
			st->too_large = true;
		if (st->too_large || st->over_budget) {
			fbc_buf_dispose(&st->body);
			/* A chunked body has no length to refuse up front, and no
			 * response may be queued mid-upload: read on (to answer)
			 * only a little, then drop the connection rather than read
			 * an endless stream. */
			st->discarded += n;
			if (st->discarded > 64 * 1024)
				return MHD_NO;
		}
		*upload_data_size = 0;
		return MHD_YES;
	}
	if (st->answered)
		return MHD_YES;
	st->answered = true;

	if (st->too_large) {
		fbc_http_problem(&st->resp, &st->req, 413, "too_large",
				 "the request body exceeds the limit of %zu bytes", st->limit);
	} else if (st->over_budget) {
		budget_refused(st);
	} else {
		st->req.body = st->body.data;
		st->req.body_len = st->body.len;
		if (fbc_http_dispatch_run(st->matched, &st->req, &st->resp) != 0 &&
		    st->resp.status == 0)
			return MHD_NO;
	}
	return queue(srv, conn, &st->req, st);
}

/* The request is over (answered, or the connection dropped): its metrics
 * and access-log line. */
static void finish(struct fbc_http_server *srv, struct req_state *st,
		   enum MHD_RequestTerminationCode toe)
{
	struct timespec now;
	char code[16];
	const char *route = st->route ? st->route : "unmatched";
	const char *method = st->method ? st->method : "";
	double secs;

	clock_gettime(CLOCK_MONOTONIC, &now);
	secs = (double)(now.tv_sec - st->start.tv_sec) +
	       (double)(now.tv_nsec - st->start.tv_nsec) / 1e9;
	if (st->resp.status)
		snprintf(code, sizeof(code), "%d", st->resp.status);
	else
		snprintf(code, sizeof(code), "aborted");
	/* methods are bounded too: anything unusual is counted as "other" */
	if (strcmp(method, "GET") && strcmp(method, "HEAD") && strcmp(method, "POST") &&
	    strcmp(method, "PUT") && strcmp(method, "PATCH") && strcmp(method, "DELETE"))
		method = "other";
	fbc_metric_observe(&m_duration, (const char *[]){route, method, code}, secs);
	if (st->route && strncmp(st->route, "/catalogs/", 10) == 0)
		fbc_metric_observe(&m_catalogd, (const char *[]){code}, secs);
	if (!srv->opts.access_log)
		return;
	fbc_log(st->resp.status >= 500 ? FBC_LOG_WARN : FBC_LOG_INFO,
		(fbc_log_field[]){FBC_LOG_STR("request_id", st->request_id),
				  FBC_LOG_STR("method", method), FBC_LOG_STR("route", route),
				  FBC_LOG_STR("path", st->path ? st->path : ""),
				  FBC_LOG_NUM("status", st->resp.status),
				  FBC_LOG_NUM("bytes", st->resp.body_len),
				  FBC_LOG_NUM("duration_ms", secs * 1e3)},
		7, "%s",
		toe == MHD_REQUEST_TERMINATED_COMPLETED_OK ? "request" : "request aborted");
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
			 enum MHD_RequestTerminationCode toe)
{
	struct fbc_http_server *srv = cls;
	struct req_state *st = *con_cls;

	if (srv->watch) {
		const union MHD_ConnectionInfo *ci =
			MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
		if (ci)
			fbc_head_watch_again(srv->watch, ci->socket_context);
	}
	if (!st)
		return;
	/* a kept-alive connection waits for its next head: short timeout again */
	if (srv->opts.header_timeout_s)
		MHD_set_connection_option(conn, MHD_CONNECTION_OPTION_TIMEOUT,
					  srv->opts.header_timeout_s);
	finish(srv, st, toe);
	fbc_http_resp_dispose(&st->resp);
	fbc_buf_dispose(&st->body);
	fbc_http_budget_give(srv->opts.budget, st->reserved);
	if (st->file_send)
		atomic_fetch_sub(&srv->file_sends, 1);
	fbc_arena_free(st->arena);
	free(st);
	*con_cls = NULL;
	atomic_fetch_sub(&srv->in_flight, 1);
	fbc_metric_add(&m_in_flight, NULL, -1);
}

/* Connections enter the head deadline watch when accepted and leave it when
 * closed (before libmicrohttpd closes their socket). */
static void on_connection(void *cls, struct MHD_Connection *conn, void **socket_context,
			  enum MHD_ConnectionNotificationCode code)
{
	struct fbc_http_server *srv = cls;

	if (!srv->watch)
		return;
	if (code == MHD_CONNECTION_NOTIFY_STARTED) {
		const union MHD_ConnectionInfo *ci =
			MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
		*socket_context = ci ? fbc_head_watch_add(srv->watch, ci->connect_fd) : NULL;
	} else if (code == MHD_CONNECTION_NOTIFY_CLOSED) {
		fbc_head_watch_remove(srv->watch, *socket_context);
		*socket_context = NULL;
	}
}

/* "ADDR:PORT", "[V6]:PORT", ":PORT" or "PORT". */
static int parse_listen(struct sockaddr_storage *ss, bool *v6, const char *listen, fbc_error *err)
{
	char host[256];
	const char *colon = strrchr(listen, ':');
	const char *port_s = colon ? colon + 1 : listen;
	size_t hlen = colon ? (size_t)(colon - listen) : 0;
	char *end = NULL;
	unsigned long port;

	memset(ss, 0, sizeof(*ss));
	if (!*port_s || hlen >= sizeof(host))
		goto bad;
	port = strtoul(port_s, &end, 10);
	if (*end || port > 65535)
		goto bad;
	memcpy(host, listen, hlen);
	host[hlen] = '\0';
	if (hlen >= 2 && host[0] == '[' && host[hlen - 1] == ']') {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;
		host[hlen - 1] = '\0';
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons((uint16_t)port);
		if (inet_pton(AF_INET6, host + 1, &s6->sin6_addr) != 1)
			goto bad;
		*v6 = true;
		return 0;
	}
	struct sockaddr_in *s4 = (struct sockaddr_in *)ss;
	s4->sin_family = AF_INET;
	s4->sin_port = htons((uint16_t)port);
	*v6 = false;
	if (hlen == 0 || strcmp(host, "0.0.0.0") == 0 || strcmp(host, "*") == 0) {
		s4->sin_addr.s_addr = htonl(INADDR_ANY);
		return 0;
	}
	if (strcmp(host, "localhost") == 0) {
		s4->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		return 0;
	}
	if (inet_pton(AF_INET, host, &s4->sin_addr) != 1)
		goto bad;
	return 0;
bad:
	return fbc_error_set(err, FBC_EINVAL, "listen",
			     "'%s' is not ADDR:PORT (IPv4, [IPv6] or empty address)", listen);
}

/* File descriptors the process keeps beside client connections (database
 * connections, uploads being extracted, log files, responses being sent
 * from their file): the connection limit leaves this many free below
 * RLIMIT_NOFILE, so that a full house of clients never makes the server
 * fail to open a file or a database connection. */
#define FD_RESERVE (256 + FILE_SENDS_MAX)

static unsigned fit_connection_limit(unsigned want)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
		return want;
	if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < (rlim_t)want + FD_RESERVE) {
		rlim_t need = (rlim_t)want + FD_RESERVE;

		rl.rlim_cur =
			rl.rlim_max == RLIM_INFINITY || rl.rlim_max > need ? need : rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
		getrlimit(RLIMIT_NOFILE, &rl);
	}
	if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < (rlim_t)want + FD_RESERVE) {
		unsigned fit = rl.rlim_cur > 2 * FD_RESERVE ? (unsigned)rl.rlim_cur - FD_RESERVE
							    : (unsigned)rl.rlim_cur / 2;
		fprintf(stderr,
			"fbcd serve: at most %u connections (open-file limit %llu, %d kept for "
			"the database and files)\n",
			fit, (unsigned long long)rl.rlim_cur, FD_RESERVE);
		return fit;
	}
	return want;
}

int fbc_http_server_start(fbc_http_server **out, const fbc_http_server_opts *opts, fbc_error *err)
{
	struct fbc_http_server *srv = NULL;
	struct sockaddr_storage ss;
	bool v6 = false;
	unsigned threads = opts->threads;
	unsigned max_conn = opts->max_connections ? opts->max_connections : 1024;
	unsigned header_timeout = opts->header_timeout_s ? opts->header_timeout_s : 10;
	int rc;

	rc = parse_listen(&ss, &v6, opts->listen ? opts->listen : "127.0.0.1:8080", err);
	if (rc != 0)
		goto done;
	if (threads > MAX_THREADS)
		threads = MAX_THREADS;
	max_conn = fit_connection_limit(max_conn);
	srv = calloc(1, sizeof(*srv));
	if (!srv) {
		rc = fbc_error_set(err, FBC_ENOMEM, "server", "out of memory");
		goto done;
	}
	srv->opts = *opts;
	srv->opts.header_timeout_s = header_timeout;
	atomic_init(&srv->in_flight, 0);
	atomic_init(&srv->file_sends, 0);
	if (opts->head_deadline_s &&
	    fbc_head_watch_start(&srv->watch, opts->head_deadline_s) != 0) {
		rc = fbc_error_set(err, FBC_ENOMEM, "server",
				   "cannot start the head deadline watch");
		goto done;
	}
	/* Thread per connection (the default): handlers block on PostgreSQL,
	 * and in a shared event-loop thread one waiting request (a slow
	 * connection attempt, a frozen server) stalls every other connection
	 * that thread serves, cached reads and /healthz included. Connections
	 * are bounded (max_connections, per address), so threads are too. */
	unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ITC | MHD_USE_ERROR_LOG |
			 MHD_USE_TURBO | (v6 ? MHD_USE_IPv6 : 0) |
			 (threads ? MHD_USE_EPOLL : MHD_USE_THREAD_PER_CONNECTION | MHD_USE_POLL);
	/* the pool size only in pool mode: libmicrohttpd warns about a 0 */
	struct MHD_OptionItem pool[] = {
		{threads ? MHD_OPTION_THREAD_POOL_SIZE : MHD_OPTION_END, threads, NULL},
		{MHD_OPTION_END, 0, NULL},
	};
	srv->daemon = MHD_start_daemon(
		flags, 0, NULL, NULL, on_request, srv, MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&ss,
		MHD_OPTION_ARRAY, pool, MHD_OPTION_NOTIFY_COMPLETED, on_completed, srv,
		MHD_OPTION_NOTIFY_CONNECTION, on_connection, srv, MHD_OPTION_CONNECTION_TIMEOUT,
		header_timeout, MHD_OPTION_CONNECTION_LIMIT, max_conn,
		MHD_OPTION_PER_IP_CONNECTION_LIMIT, opts->max_connections_per_ip,
		MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)(128 * 1024),
		MHD_OPTION_LISTEN_BACKLOG_SIZE, (unsigned)1024, MHD_OPTION_UNESCAPE_CALLBACK,
		unescape, NULL, MHD_OPTION_END);
	if (!srv->daemon) {
		rc = fbc_error_set(err, FBC_EIO, "listen", "cannot listen on %s",
				   opts->listen ? opts->listen : "127.0.0.1:8080");
		goto done;
	}
	const union MHD_DaemonInfo *info =
		MHD_get_daemon_info(srv->daemon, MHD_DAEMON_INFO_BIND_PORT);
	srv->port = info ? info->port : 0;
	*out = srv;
	srv = NULL;
	rc = 0;
done:
	if (srv)
		fbc_head_watch_stop(srv->watch);
	free(srv);
	return rc;
}

unsigned fbc_http_server_port(const fbc_http_server *srv)
{
	return srv->port;
}

void fbc_http_server_stop(fbc_http_server *srv, unsigned grace_ms)
{
	if (!srv)
		return;
	MHD_socket fd = MHD_quiesce_daemon(srv->daemon);
	if (fd != MHD_INVALID_SOCKET)
		close(fd);
	for (unsigned waited = 0; waited < grace_ms && atomic_load(&srv->in_flight) > 0;
	     waited += 10) {
		struct timespec ts = {0, 10 * 1000 * 1000};
		nanosleep(&ts, NULL);
	}
	MHD_stop_daemon(srv->daemon);
	fbc_head_watch_stop(srv->watch);
	free(srv);
}
