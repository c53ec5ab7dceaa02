/*
 * The HTTP layer's core types: a request as handlers see it, the response
 * they fill, the route table, and the libmicrohttpd server that runs them.
 *
 * Handlers never see libmicrohttpd: a request is a plain struct (method,
 * decoded path, path parameters, query arguments, the few headers the API
 * uses, the accumulated body) so that handlers can be unit-tested without a
 * socket. Everything a handler allocates for one request comes from
 * req->arena (json_t and buffers can be tied to it with fbc_arena_defer) and
 * is freed when the response has been sent.
 *
 * Ownership: a response body is either copied (fbc_http_resp_*_copy), owned
 * by the arena, or borrowed from a refcounted object released through
 * resp->release when the response is done (used for cached catalog bytes).
 * Thread-safety: the server runs handlers on a thread pool; a request and
 * its arena belong to one thread. Route tables are read-only after start.
 */
#ifndef FBC_API_HTTP_H
#define FBC_API_HTTP_H

#include "service/base/arena.h"
#include "service/base/buf.h"
#include "service/base/error.h"

#include <jansson.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define FBC_HTTP_MAX_PARAMS	8
#define FBC_HTTP_MAX_QUERY	32
#define FBC_HTTP_MAX_HEADERS	8
#define FBC_HTTP_MAX_SEGMENT	512 /* one path segment, decoded */
#define FBC_HTTP_REQUEST_ID_MAX 64

/* Scopes a bearer token may carry; a route requires at most one. */
enum {
	FBC_SCOPE_NONE = 0, /* no credentials needed (health, the API document) */
	FBC_SCOPE_READ = 1,
	FBC_SCOPE_WRITE = 2,
	FBC_SCOPE_ADMIN = 4,
};

typedef struct fbc_http_kv {
	const char *key;
	const char *value;
} fbc_http_kv;

typedef struct fbc_http_req {
	fbc_arena *arena;
	const char *method;			 /* "GET", "HEAD", ... */
	const char *path;			 /* without the query string */
	fbc_http_kv params[FBC_HTTP_MAX_PARAMS]; /* from {name} in the route pattern */
	size_t n_params;
	fbc_http_kv query[FBC_HTTP_MAX_QUERY];
	size_t n_query;
	bool query_overflow; /* more arguments than FBC_HTTP_MAX_QUERY were sent */
	/* The headers the API looks at; NULL when absent. */
	const char *content_type;
	const char *if_none_match;
	const char *accept_encoding;
	const char *authorization;
	const char *range;    /* "bytes=..." (single ranges are honoured) */
	const char *if_range; /* an entity tag */
	const char *body;     /* NUL-terminated; NULL when there was none */
	size_t body_len;
	/* Any other header by name (webhook signatures, event names); NULL
	 * when absent or when the request did not come from the server. */
	const char *(*header_fn)(void *header_ctx, const char *name);
	void *header_ctx;
	unsigned scopes; /* granted by the credentials presented (FBC_SCOPE_* bits) */
	/* X-Request-Id: the client's when well-formed, else generated; echoed in
	 * the response, problem bodies and log lines. NULL outside the server. */
	const char *request_id;
	const char *route; /* the matched route's pattern (static); NULL when none */
	/* Uploads: the shared budget (NULL = none) and how many bytes this
	 * request may extract from an archive (writers get more than anyone
	 * else); set by fbc_http_dispatch_head. */
	struct fbc_http_budget *budget;
	uint64_t max_extract;
	void *app; /* the application context given to the server */
	void *ctx; /* handler-private (arena-owned), NULL at first */
} fbc_http_req;

typedef struct fbc_http_resp {
	int status;
	const char *content_type; /* static or arena string */
	const char *etag;	  /* quoted entity tag, or NULL */
	fbc_http_kv headers[FBC_HTTP_MAX_HEADERS];
	size_t n_headers;
	const char *body;
	size_t body_len;
	/* An already gzip-compressed variant of body (borrowed like body), or NULL. */
	const char *body_gz;
	size_t body_gz_len;
	void (*release)(void *); /* called once the body is no longer needed */
	void *release_ctx;
	bool no_compress;
	/* Optional: body_file (body_gz_file) is a descriptor whose bytes from
	 * offset 0 are exactly body (body_gz), borrowed like them; the server
	 * sends such a whole body with sendfile(2). Only read when the pointer
	 * beside it equals body (body_gz): a Range answer moves body on. */
	const char *file_body;
	int body_file;
	const char *file_body_gz;
	int body_gz_file;
} fbc_http_resp;

/* Returns 0 when resp was filled (including problem responses); a negative
 * code only for an internal failure that the server maps to a 500. */
typedef int (*fbc_http_handler)(fbc_http_req *req, fbc_http_resp *resp);

typedef struct fbc_http_route {
	const char *method;  /* "GET" also answers HEAD */
	const char *pattern; /* "/v1/catalogs/{catalog}/packages/{package}" */
	fbc_http_handler fn;
	unsigned scope;		  /* FBC_SCOPE_*: what a caller needs */
	const char *operation_id; /* as in openapi.yaml */
} fbc_http_route;

/* ---- routing (http_router.c) ---- */

/* Find the route for method and path; fills req->params. Returns the route,
 * or NULL with *path_matched set when the path exists under another method
 * (405) or unset for no route at all (404). Percent-decoding is already done
 * by the server; a parameter never spans a '/'. */
const fbc_http_route *fbc_http_route_match(const fbc_http_route *routes, size_t n,
					   const char *method, const char *path, fbc_http_req *req,
					   bool *path_matched);

/* The methods served on path, for an Allow header ("GET, HEAD, DELETE"). */
char *fbc_http_route_allow(const fbc_http_route *routes, size_t n, const char *path,
			   fbc_arena *arena);

const char *fbc_http_param(const fbc_http_req *req, const char *name);
const char *fbc_http_query(const fbc_http_req *req, const char *name);
/* A request header by name (case-insensitive), NULL when absent. */
const char *fbc_http_header(const fbc_http_req *req, const char *name);

/* ---- responses (http_json.c) ---- */

/* application/problem+json {type,title,status,detail,code}; detail printf-style. */
int fbc_http_problem(fbc_http_resp *resp, fbc_http_req *req, int status, const char *code,
		     const char *fmt, ...) __attribute__((format(printf, 5, 6)));
/* Same, with extra members merged into the problem object (stolen reference). */
int fbc_http_problem_ext(fbc_http_resp *resp, fbc_http_req *req, int status, const char *code,
			 json_t *extra, const char *detail);
/* Map an fbc_error to a problem (404 for ENOTFOUND, 409 ECONFLICT, ...). */
int fbc_http_problem_from_error(fbc_http_resp *resp, fbc_http_req *req, const fbc_error *err);

/* Serialise json (stolen) as the body, compact, with status. */
int fbc_http_json(fbc_http_resp *resp, fbc_http_req *req, int status, json_t *json);
/* A body the arena owns (or static bytes). */
void fbc_http_body(fbc_http_resp *resp, int status, const char *content_type, const char *data,
		   size_t len);
void fbc_http_resp_header(fbc_http_resp *resp, const char *name, const char *value);

/* Parse the body as a JSON object (at most 32 MiB, whatever the server's
 * body limit: 413; nesting bounded by jansson); a 400 problem is set on
 * failure. */
int fbc_http_read_json_object(json_t **out, fbc_http_req *req, fbc_http_resp *resp);

/* ?limit= (default def, 1..max) and ?cursor= (opaque, NULL when absent).
 * On a bad value fills a 400 problem and returns FBC_EINVAL. */
int fbc_http_page_args(size_t *limit, const char **cursor, fbc_http_req *req, fbc_http_resp *resp,
		       size_t def, size_t max);
/* {"items": items, "next": next or null}; items stolen. */
int fbc_http_list(fbc_http_resp *resp, fbc_http_req *req, json_t *items, const char *next);

/* True when the request's If-None-Match names etag (or is "*"). */
bool fbc_http_etag_matches(const char *if_none_match, const char *etag);

/* Does Accept-Encoding allow gzip (q > 0)? */
bool fbc_http_accepts_gzip(const char *accept_encoding);

/* gzip-compress data into out (bounded by out->max). */
int fbc_http_gzip(fbc_buf *out, const char *data, size_t len, fbc_error *err);

/* ---- the upload budget (server.c) ---- */

/* Bytes of request bodies and extracted archives in flight across all
 * requests (memory and temporary disk). Any thread may take and give. */
typedef struct fbc_http_budget {
	_Atomic uint64_t used;
	uint64_t total; /* 0 = unbounded */
} fbc_http_budget;

void fbc_http_budget_init(fbc_http_budget *b, uint64_t total);
/* Take n bytes; false (and nothing taken) when that would pass the total. */
bool fbc_http_budget_take(fbc_http_budget *b, uint64_t n);
void fbc_http_budget_give(fbc_http_budget *b, uint64_t n);

/* ---- the server (http_server.c) ---- */

typedef struct fbc_http_server fbc_http_server;

/* Decides which scopes the Authorization header grants (0 when none or
 * invalid; a negative code when the credential store is unavailable). */
typedef int (*fbc_http_auth_fn)(void *app, const char *authorization, unsigned *scopes,
				fbc_error *err);

typedef struct fbc_http_server_opts {
	const char *listen; /* "ADDR:PORT", "[v6]:PORT" or ":PORT" */
	/* 0: one thread per connection, so a handler waiting on the database
	 * delays only its own connection; N: a pool of N event-loop threads
	 * shared by all connections (max 64) */
	unsigned threads;
	size_t max_body;      /* request body limit for writers (write/admin scope) */
	size_t max_body_anon; /* for everyone else (0 = max_body) */
	uint64_t max_extract; /* archive bytes a writer's upload may extract (0 = default) */
	uint64_t max_extract_anon;
	fbc_http_budget *budget;	 /* shared upload budget, or NULL */
	unsigned max_connections;	 /* 0 = 1024 */
	unsigned max_connections_per_ip; /* 0 = no per-address limit */
	unsigned header_timeout_s;	 /* silence allowed before a request head is complete */
	unsigned idle_timeout_s;	 /* silence allowed once it is (mid-body, ...) */
	/* a request head must be complete this long after the connection
	 * started waiting for it, however it trickles (0 = no deadline) */
	unsigned head_deadline_s;
	bool read_auth; /* reads need a token with the read scope */
	fbc_http_auth_fn auth;
	void *app;
	const fbc_http_route *routes;
	size_t n_routes;
	bool access_log; /* one line per request on stderr */
} fbc_http_server_opts;

int fbc_http_server_start(fbc_http_server **out, const fbc_http_server_opts *opts, fbc_error *err);
/* The port actually bound (useful with port 0). */
unsigned fbc_http_server_port(const fbc_http_server *srv);
/* Stop accepting, wait up to grace_ms for in-flight requests, then close. Accepts NULL. */
void fbc_http_server_stop(fbc_http_server *srv, unsigned grace_ms);

/* Run one request through routing, auth and the handler without a socket
 * (the server does the same); used by unit tests. The caller fills req
 * (arena, method, path, headers, body) and disposes resp with
 * fbc_http_resp_dispose. */
int fbc_http_dispatch(const fbc_http_server_opts *opts, fbc_http_req *req, fbc_http_resp *resp);
/* The same in two steps, as the server runs it: everything decided from the
 * request head (route, path and query checks, authentication, scope, the
 * request's limits) before any body byte is read; NULL with resp filled
 * (404, 405, 401, 403, ...) when the request is refused. Then the handler. */
const fbc_http_route *fbc_http_dispatch_head(const fbc_http_server_opts *opts, fbc_http_req *req,
					     fbc_http_resp *resp);
int fbc_http_dispatch_run(const fbc_http_route *r, fbc_http_req *req, fbc_http_resp *resp);
/* The body limit for a request whose head passed fbc_http_dispatch_head. */
size_t fbc_http_body_limit(const fbc_http_server_opts *opts, const fbc_http_req *req);
void fbc_http_resp_dispose(fbc_http_resp *resp);

#endif
