/*
 * fbc_net: the one libcurl wrapper for every outbound HTTP request of fbcd
 * (container registries, GitHub, GitLab). Nothing else in fbcd calls libcurl.
 *
 * What it gives every caller:
 *  - easy handles reused per scheme://host:port, so connections (and TLS
 *    sessions) are kept between requests to the same host;
 *  - a connect timeout and a whole-request timeout;
 *  - retries of connection failures, 429 and 5xx (500, 502, 503, 504),
 *    waiting `Retry-After` (seconds or HTTP date) when the server says so,
 *    exponential backoff with jitter otherwise, both bounded;
 *  - a hard limit on the size of every response body (FBC_ELIMIT);
 *  - request headers in, response headers out (case-insensitive lookup);
 *  - TLS with the system CAs, or a CA file;
 *  - a request log: one record per attempt (method, URL without credentials,
 *    status, bytes, time, retry reason), readable by tests in memory and, with
 *    fbc_net_options.log_path or the FBCD_NET_LOG environment variable, as JSON
 *    lines appended to a file.
 * Credentials are never logged: headers are not logged at all, user:password
 * is stripped from URLs and the values of query parameters that look like
 * secrets (token, password, secret, signature, sig, X-Amz-*) are replaced
 * by "REDACTED".
 *
 * A request that gets an HTTP answer returns 0 whatever the status (the
 * caller decides what a 404 means); transport failures that outlive the
 * retries return FBC_EUNAVAIL with curl's reason. Requests are not retried
 * when fbc_net_request.no_retry is set (a non-idempotent call the caller
 * restarts itself).
 *
 * Ownership: fbc_net is opaque (fbc_net_create / fbc_net_free); a response
 * is caller-allocated (fbc_net_response_init / _dispose).
 * Thread-safety: one fbc_net per thread (each worker creates its own);
 * creating and freeing them is safe from any thread.
 */
#ifndef FBC_NET_NET_H
#define FBC_NET_NET_H

#include "service/base/buf.h"
#include "service/base/error.h"
#include "service/base/vec.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef struct fbc_net fbc_net;

typedef struct fbc_net_options {
	long connect_timeout_ms; /* 0: 10 s */
	long timeout_ms;	 /* whole request (transfer included); 0: 300 s */
	int max_retries;	 /* retries after the first attempt; -1: 4 */
	long backoff_base_ms;	 /* first backoff; 0: 200 ms */
	long backoff_max_ms;	 /* cap of one backoff and of Retry-After; 0: 30 s */
	size_t max_response;	 /* default body limit per request; 0: 64 MiB */
	const char *ca_file;	 /* PEM bundle to trust instead of the system CAs; copied */
	const char *user_agent;	 /* NULL: "fbcd/<version>"; copied */
	const char *log_path;	 /* JSON-lines request log; NULL: $FBCD_NET_LOG if set; copied */
	bool no_jitter;		 /* tests: deterministic backoff */
	size_t log_keep;	 /* in-memory log records kept (oldest dropped); 0: 4096 */
} fbc_net_options;

/* A request body read from a file descriptor (pread, so retries re-read). */
typedef struct fbc_net_file_body {
	int fd;
	uint64_t offset;
	uint64_t len;
} fbc_net_file_body;

typedef struct fbc_net_request {
	const char *method; /* "GET", "HEAD", "PUT", ...; NULL: GET */
	const char *url;
	/* Extra request headers, each "Name: value". */
	const char *const *headers;
	size_t n_headers;
	/* Body: either memory (body, body_len) or file (body_file.fd >= 0 when
	 * has_file_body). Neither: no body (Content-Length: 0 for PUT/POST/PATCH). */
	const void *body;
	size_t body_len;
	bool has_file_body;
	fbc_net_file_body body_file;
	/* Response body: into resp->body (at most max_response bytes, 0: the
	 * client's default), or, when sink is set, written to this file (which is
	 * truncated and rewound on each retry; same limit). */
	size_t max_response;
	FILE *sink;
	bool follow_redirects; /* GET of blobs: registries redirect to storage */
	bool no_retry;
	/* Name of the operation in the log ("blob.head"); may be NULL. */
	const char *what;
} fbc_net_request;

typedef struct fbc_net_response {
	long status;	     /* HTTP status of the last attempt */
	fbc_buf body;	     /* empty when a sink was given */
	uint64_t body_size;  /* bytes of body received (also with a sink) */
	fbc_vec headers;     /* of char* "Name: value" (of the final response) */
	char *effective_url; /* after redirects; malloc'd */
	int attempts;
} fbc_net_response;

void fbc_net_response_init(fbc_net_response *r);
void fbc_net_response_dispose(fbc_net_response *r);
/* Value of the first header called name (case-insensitive), leading and
 * trailing blanks removed, borrowed from r; NULL when absent. */
const char *fbc_net_response_header(const fbc_net_response *r, const char *name);

/* One attempt, as logged. */
typedef struct fbc_net_log_entry {
	char *what; /* may be NULL */
	char *method;
	char *url;   /* redacted */
	long status; /* 0: no HTTP answer */
	int attempt; /* 1 for the first */
	uint64_t sent;
	uint64_t received;
	long ms;
	char *error; /* transport failure or retry reason; NULL when none */
} fbc_net_log_entry;

int fbc_net_create(fbc_net **out, const fbc_net_options *opts, fbc_error *err);
void fbc_net_free(fbc_net *n);

/* Send req; fill resp (initialised by the caller, reset here). See above for
 * what counts as failure. */
int fbc_net_request_do(fbc_net *n, fbc_net_response *resp, const fbc_net_request *req,
		       fbc_error *err);

/* The in-memory log, oldest first; borrowed, valid until the next request. */
const fbc_net_log_entry *fbc_net_log(const fbc_net *n, size_t *count);

/* URL with credentials removed (see above); malloc'd, NULL on OOM. Exposed
 * for the tests and for callers that print URLs in their own messages. */
char *fbc_net_redact_url(const char *url);

/* Delay before retry number `attempt` (1-based) in ms: Retry-After when
 * given (seconds or an HTTP date relative to now_s), else exponential
 * backoff; both capped by backoff_max_ms. jitter_seed 0: no jitter. */
long fbc_net_retry_delay_ms(const fbc_net_options *opts, int attempt, const char *retry_after,
			    int64_t now_s, uint64_t jitter_seed);

/* Resolve a Location header against the URL it answered (absolute URLs
 * are kept exactly; "/path?q" takes the scheme and authority of base).
 * malloc'd; NULL on OOM or an unusable base. */
char *fbc_net_resolve_location(const char *base, const char *location);

#endif
