/* pipeline/net: URL redaction, Location resolution, retry timing, and real
 * requests against a scripted HTTP server on a loopback socket (retries after
 * 503 with Retry-After, a dropped connection, the body limit, the log). */
#include "pipeline/net/net.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static void redact_url__strips_userinfo_and_secret_params(void **state)
{
	char *u = fbc_net_redact_url("https://user:pw@reg.example:5000/v2/"
				     "x?digest=sha256:ab&token=abc&X-Amz-Signature=s#f");

	assert_non_null(u);
	assert_string_equal(u, "https://reg.example:5000/v2/x?digest=sha256:ab&token=REDACTED&"
			       "X-Amz-Signature=REDACTED#f");
	free(u);
	u = fbc_net_redact_url("http://h/v2/");
	assert_string_equal(u, "http://h/v2/");
	free(u);
}

static void resolve_location__keeps_absolute_and_query(void **state)
{
	char *u = fbc_net_resolve_location("http://h:1/v2/a/blobs/uploads/",
					   "/v2/a/blobs/uploads/u1?_state=x%3D&a=b");

	assert_string_equal(u, "http://h:1/v2/a/blobs/uploads/u1?_state=x%3D&a=b");
	free(u);
	u = fbc_net_resolve_location("http://h:1/v2/a/", "https://other/x?y=1");
	assert_string_equal(u, "https://other/x?y=1");
	free(u);
	u = fbc_net_resolve_location("http://h:1/v2/a/b?q", "c?d");
	assert_string_equal(u, "http://h:1/v2/a/c?d");
	free(u);
	assert_null(fbc_net_resolve_location("relative", "/x"));
}

static void retry_delay__retry_after_and_backoff_capped(void **state)
{
	fbc_net_options o = {.backoff_base_ms = 100, .backoff_max_ms = 5000};

	assert_int_equal(fbc_net_retry_delay_ms(&o, 1, "2", 0, 0), 2000);
	assert_int_equal(fbc_net_retry_delay_ms(&o, 1, "3600", 0, 0), 5000);
	assert_int_equal(fbc_net_retry_delay_ms(&o, 1, NULL, 0, 0), 100);
	assert_int_equal(fbc_net_retry_delay_ms(&o, 3, NULL, 0, 0), 400);
	assert_int_equal(fbc_net_retry_delay_ms(&o, 30, NULL, 0, 0), 5000);
	/* HTTP date 3 s after now */
	assert_int_equal(fbc_net_retry_delay_ms(&o, 1, "Thu, 01 Jan 1970 00:00:13 GMT", 10, 0),
			 3000);
	/* jitter stays within [d/2, d] */
	for (uint64_t s = 1; s < 200; s++) {
		long d = fbc_net_retry_delay_ms(&o, 2, NULL, 0, s * 7919);

		assert_true(d >= 100 && d <= 200);
	}
	/* garbage is not a delay: backoff */
	assert_int_equal(fbc_net_retry_delay_ms(&o, 1, "soon", 0, 0), 100);
}

/* ---- a scripted server: each accepted connection gets the next answer ---- */

typedef struct server {
	int fd;
	int port;
	const char *const *answers; /* raw HTTP responses; "DROP" closes without answering */
	size_t n;
	pthread_t thread;
} server;

static void *serve(void *arg)
{
	server *s = arg;

	for (size_t i = 0; i < s->n; i++) {
		int c = accept(s->fd, NULL, NULL);
		char buf[8192];
		ssize_t got;

		if (c < 0)
			break;
		got = recv(c, buf, sizeof(buf), 0); /* the request head (and small body) */
		(void)got;
		if (strcmp(s->answers[i], "DROP") != 0) {
			size_t len = strlen(s->answers[i]);

			if (send(c, s->answers[i], len, MSG_NOSIGNAL) < 0)
				break;
		}
		close(c);
	}
	return NULL;
}

static void server_start(server *s, const char *const *answers, size_t n)
{
	struct sockaddr_in a = {.sin_family = AF_INET};
	socklen_t al = sizeof(a);

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	s->fd = socket(AF_INET, SOCK_STREAM, 0);
	assert_true(s->fd >= 0);
	assert_int_equal(bind(s->fd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(listen(s->fd, 8), 0);
	assert_int_equal(getsockname(s->fd, (struct sockaddr *)&a, &al), 0);
	s->port = ntohs(a.sin_port);
	s->answers = answers;
	s->n = n;
	assert_int_equal(pthread_create(&s->thread, NULL, serve, s), 0);
}

static void server_stop(server *s)
{
	pthread_join(s->thread, NULL);
	close(s->fd);
}

static void request__retries_503_and_dropped_connection(void **state)
{
	static const char *const answers[] = {
		"HTTP/1.1 503 Busy\r\nRetry-After: 0\r\nContent-Length: 0\r\nConnection: "
		"close\r\n\r\n",
		"DROP",
		"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nX-Thing:  v1 \r\nConnection: "
		"close\r\n\r\nhello",
	};
	fbc_net_options o = {.max_retries = 3, .backoff_base_ms = 1, .no_jitter = true};
	fbc_net *n = NULL;
	fbc_net_response r;
	fbc_error err;
	server s;
	char url[128];
	const fbc_net_log_entry *log;
	size_t nlog;
	const char *h[] = {"Authorization: Bearer secret"};

	server_start(&s, answers, 3);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/v2/?token=abc", s.port);
	fbc_error_init(&err);
	assert_int_equal(fbc_net_create(&n, &o, &err), 0);
	fbc_net_response_init(&r);
	fbc_net_request req = {.url = url, .headers = h, .n_headers = 1, .what = "probe"};
	assert_int_equal(fbc_net_request_do(n, &r, &req, &err), 0);
	assert_int_equal(r.status, 200);
	assert_int_equal(r.attempts, 3);
	assert_int_equal(r.body.len, 5);
	assert_memory_equal(r.body.data, "hello", 5);
	assert_string_equal(fbc_net_response_header(&r, "x-thing"), "v1 ");
	log = fbc_net_log(n, &nlog);
	assert_int_equal(nlog, 3);
	assert_int_equal(log[0].status, 503);
	assert_int_equal(log[1].status, 0);
	assert_non_null(log[1].error);
	assert_int_equal(log[2].status, 200);
	for (size_t i = 0; i < nlog; i++) {
		assert_null(strstr(log[i].url, "abc"));
		assert_string_equal(log[i].what, "probe");
	}
	fbc_net_response_dispose(&r);
	fbc_net_free(n);
	server_stop(&s);
}

static void request__body_limit_and_exhausted_retries(void **state)
{
	static const char *const answers[] = {
		"HTTP/1.1 200 OK\r\nContent-Length: 10\r\nConnection: close\r\n\r\n0123456789",
		"HTTP/1.1 500 Oops\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
		"HTTP/1.1 500 Oops\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
	};
	fbc_net_options o = {.max_retries = 1, .backoff_base_ms = 1, .max_response = 4};
	fbc_net *n = NULL;
	fbc_net_response r;
	fbc_error err;
	server s;
	char url[128];

	server_start(&s, answers, 3);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/big", s.port);
	fbc_error_init(&err);
	assert_int_equal(fbc_net_create(&n, &o, &err), 0);
	fbc_net_response_init(&r);
	fbc_net_request req = {.url = url};
	assert_int_equal(fbc_net_request_do(n, &r, &req, &err), FBC_ELIMIT);
	assert_non_null(strstr(err.message, "larger than 4 bytes"));
	/* 500 twice: the answer after the last retry is returned as is */
	assert_int_equal(fbc_net_request_do(n, &r, &req, &err), 0);
	assert_int_equal(r.status, 500);
	assert_int_equal(r.attempts, 2);
	fbc_net_response_dispose(&r);
	fbc_net_free(n);
	server_stop(&s);
}

static void request__refused_connection_is_unavailable(void **state)
{
	fbc_net_options o = {.max_retries = 0};
	fbc_net *n = NULL;
	fbc_net_response r;
	fbc_error err;
	server s;
	char url[128];

	/* a port that was just free */
	server_start(&s, NULL, 0);
	server_stop(&s);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/", s.port);
	fbc_error_init(&err);
	assert_int_equal(fbc_net_create(&n, &o, &err), 0);
	fbc_net_response_init(&r);
	fbc_net_request req = {.url = url};
	assert_int_equal(fbc_net_request_do(n, &r, &req, &err), FBC_EUNAVAIL);
	assert_true(err.message[0] != 0);
	fbc_net_request bad = {.url = "not a url"};
	assert_int_equal(fbc_net_request_do(n, &r, &bad, &err), FBC_EINVAL);
	fbc_net_response_dispose(&r);
	fbc_net_free(n);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(redact_url__strips_userinfo_and_secret_params),
		cmocka_unit_test(resolve_location__keeps_absolute_and_query),
		cmocka_unit_test(retry_delay__retry_after_and_backoff_capped),
		cmocka_unit_test(request__retries_503_and_dropped_connection),
		cmocka_unit_test(request__body_limit_and_exhausted_retries),
		cmocka_unit_test(request__refused_connection_is_unavailable),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
