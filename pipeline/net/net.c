/* The libcurl wrapper; see net.h. */
#include "pipeline/net/net.h"

#include <curl/curl.h>

#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#define HOSTS_MAX 16

typedef struct host_handle {
	char *key; /* scheme://authority */
	CURL *curl;
	uint64_t used; /* LRU tick */
} host_handle;

struct fbc_net {
	fbc_net_options opts;
	char *ca_file;
	char *user_agent;
	FILE *log_file;
	host_handle hosts[HOSTS_MAX];
	uint64_t tick;
	uint64_t rng;
	fbc_vec log; /* of fbc_net_log_entry */
	size_t log_keep;
};

static pthread_once_t global_once = PTHREAD_ONCE_INIT;
static CURLcode global_rc;

static void global_init(void)
{
	global_rc = curl_global_init(CURL_GLOBAL_DEFAULT);
}

void fbc_net_response_init(fbc_net_response *r)
{
	memset(r, 0, sizeof(*r));
	fbc_buf_init(&r->body, 0);
	fbc_vec_init(&r->headers, sizeof(char *));
}

static void headers_clear(fbc_vec *h)
{
	for (size_t i = 0; i < h->len; i++)
		free(*FBC_VEC_AT(h, char *, i));
	h->len = 0;
}

void fbc_net_response_dispose(fbc_net_response *r)
{
	if (!r)
		return;
	fbc_buf_dispose(&r->body);
	headers_clear(&r->headers);
	fbc_vec_dispose(&r->headers);
	free(r->effective_url);
	r->effective_url = NULL;
}

const char *fbc_net_response_header(const fbc_net_response *r, const char *name)
{
	size_t nl = strlen(name);

	for (size_t i = 0; i < r->headers.len; i++) {
		const char *h = *FBC_VEC_AT(&r->headers, char *, i);

		if (strncasecmp(h, name, nl) == 0 && h[nl] == ':') {
			h += nl + 1;
			while (*h == ' ' || *h == '\t')
				h++;
			return h;
		}
	}
	return NULL;
}

static void log_entry_dispose(fbc_net_log_entry *e)
{
	free(e->what);
	free(e->method);
	free(e->url);
	free(e->error);
}

int fbc_net_create(fbc_net **out, const fbc_net_options *opts, fbc_error *err)
{
	fbc_net *n = NULL;
	const char *log_path;
	int rc = 0;

	pthread_once(&global_once, global_init);
	if (global_rc != CURLE_OK)
		return fbc_error_set(err, FBC_EINTERNAL, "libcurl", "curl_global_init: %s",
				     curl_easy_strerror(global_rc));
	if (!(n = calloc(1, sizeof(*n))))
		return fbc_error_set(err, FBC_ENOMEM, NULL, "out of memory");
	if (opts)
		n->opts = *opts;
	else
		n->opts.max_retries = -1;
	if (n->opts.connect_timeout_ms <= 0)
		n->opts.connect_timeout_ms = 10000;
	if (n->opts.timeout_ms <= 0)
		n->opts.timeout_ms = 300000;
	if (n->opts.max_retries < 0)
		n->opts.max_retries = 4;
	if (n->opts.max_retries > 20)
		n->opts.max_retries = 20;
	if (n->opts.backoff_base_ms <= 0)
		n->opts.backoff_base_ms = 200;
	if (n->opts.backoff_max_ms <= 0)
		n->opts.backoff_max_ms = 30000;
	if (n->opts.max_response == 0)
		n->opts.max_response = (size_t)64 << 20;
	n->log_keep = n->opts.log_keep ? n->opts.log_keep : 4096;
	n->opts.ca_file = NULL;
	n->opts.user_agent = NULL;
	n->opts.log_path = NULL;
	if (opts && opts->ca_file && !(n->ca_file = strdup(opts->ca_file)))
		goto oom;
	if (!(n->user_agent = strdup(opts && opts->user_agent ? opts->user_agent
							      : "fbcd/" FBC_NET_VERSION)))
		goto oom;
	log_path = opts && opts->log_path ? opts->log_path : getenv("FBCD_NET_LOG");
	if (log_path && log_path[0] && !(n->log_file = fopen(log_path, "ae"))) {
		rc = fbc_error_set(err, FBC_EIO, log_path, "cannot open the request log: %s",
				   strerror(errno));
		goto fail;
	}
	fbc_vec_init(&n->log, sizeof(fbc_net_log_entry));
	n->rng = ((uint64_t)time(NULL) << 20) ^ (uint64_t)getpid() ^ (uint64_t)(uintptr_t)n;
	if (!n->rng)
		n->rng = 1;
	*out = n;
	return 0;
oom:
	rc = fbc_error_set(err, FBC_ENOMEM, NULL, "out of memory");
fail:
	fbc_net_free(n);
	return rc;
}

void fbc_net_free(fbc_net *n)
{
	if (!n)
		return;
	for (size_t i = 0; i < HOSTS_MAX; i++) {
		if (n->hosts[i].curl)
			curl_easy_cleanup(n->hosts[i].curl);
		free(n->hosts[i].key);
	}
	for (size_t i = 0; i < n->log.len; i++)
		log_entry_dispose(FBC_VEC_AT(&n->log, fbc_net_log_entry, i));
	fbc_vec_dispose(&n->log);
	if (n->log_file)
		fclose(n->log_file);
	free(n->ca_file);
	free(n->user_agent);
	free(n);
}

const fbc_net_log_entry *fbc_net_log(const fbc_net *n, size_t *count)
{
	*count = n->log.len;
	return n->log.items;
}

/* ---- URLs ---- */

/* Length of "scheme://authority" at the start of url, 0 when not absolute. */
static size_t origin_len(const char *url)
{
	const char *p = strstr(url, "://");
	size_t i;

	if (!p || p == url)
		return 0;
	for (const char *q = url; q < p; q++)
		if (!isalnum((unsigned char)*q) && *q != '+' && *q != '-' && *q != '.')
			return 0;
	i = (size_t)(p - url) + 3;
	while (url[i] && url[i] != '/' && url[i] != '?' && url[i] != '#')
		i++;
	return i;
}

static bool secret_param(const char *k, size_t kl)
{
	static const char *const names[] = {"token",	 "access_token", "password",	 "secret",
					    "signature", "sig",		 "client_secret"};

	if (kl >= 6 && strncasecmp(k, "x-amz-", 6) == 0)
		return true;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strlen(names[i]) == kl && strncasecmp(k, names[i], kl) == 0)
			return true;
	return false;
}

char *fbc_net_redact_url(const char *url)
{
	fbc_buf b;
	size_t ol = origin_len(url), start = 0;
	const char *q;

	fbc_buf_init(&b, 0);
	if (ol) {
		const char *auth = strstr(url, "://") + 3;
		const char *at = memchr(auth, '@', (size_t)(url + ol - auth));

		if (fbc_buf_append(&b, url, (size_t)(auth - url)))
			goto oom;
		start = at ? (size_t)(at + 1 - url) : (size_t)(auth - url);
	}
	q = strchr(url + start, '?');
	if (!q) {
		if (fbc_buf_puts(&b, url + start))
			goto oom;
		goto out;
	}
	if (fbc_buf_append(&b, url + start, (size_t)(q + 1 - (url + start))))
		goto oom;
	for (const char *p = q + 1; *p;) {
		size_t len = strcspn(p, "&#");
		const char *eq = memchr(p, '=', len);
		size_t kl = eq ? (size_t)(eq - p) : len;

		if (eq && secret_param(p, kl)) {
			if (fbc_buf_append(&b, p, kl + 1) || fbc_buf_puts(&b, "REDACTED"))
				goto oom;
		} else if (fbc_buf_append(&b, p, len)) {
			goto oom;
		}
		p += len;
		if (*p == '#') {
			if (fbc_buf_puts(&b, p))
				goto oom;
			break;
		}
		if (*p == '&') {
			if (fbc_buf_putc(&b, '&'))
				goto oom;
			p++;
		}
	}
out:
	return fbc_buf_detach(&b, NULL);
oom:
	fbc_buf_dispose(&b);
	return NULL;
}

char *fbc_net_resolve_location(const char *base, const char *location)
{
	fbc_buf b;
	size_t ol;

	if (origin_len(location))
		return strdup(location);
	if (!(ol = origin_len(base)))
		return NULL;
	fbc_buf_init(&b, 0);
	if (location[0] == '/' && location[1] == '/') {
		/* network-path reference: scheme of base */
		const char *colon = strchr(base, ':');

		if (fbc_buf_append(&b, base, (size_t)(colon + 1 - base)) ||
		    fbc_buf_puts(&b, location))
			goto oom;
	} else if (location[0] == '/') {
		if (fbc_buf_append(&b, base, ol) || fbc_buf_puts(&b, location))
			goto oom;
	} else {
		/* relative to the directory of base's path */
		const char *path_end = base + ol + strcspn(base + ol, "?#");
		const char *slash = path_end;

		while (slash > base + ol && slash[-1] != '/')
			slash--;
		if (slash == base + ol) {
			if (fbc_buf_append(&b, base, ol) || fbc_buf_putc(&b, '/'))
				goto oom;
		} else if (fbc_buf_append(&b, base, (size_t)(slash - base))) {
			goto oom;
		}
		if (fbc_buf_puts(&b, location))
			goto oom;
	}
	return fbc_buf_detach(&b, NULL);
oom:
	fbc_buf_dispose(&b);
	return NULL;
}

/* ---- retry timing ---- */

static const char *const months[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
				     "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};

/* "Sun, 06 Nov 1994 08:49:37 GMT" (IMF-fixdate) to seconds; -1 if not one. */
static int64_t parse_http_date(const char *s)
{
	struct tm tm;
	const char *p = strchr(s, ',');
	char *end;
	long v;
	int mon = -1;

	if (!p)
		return -1;
	p++;
	while (*p == ' ')
		p++;
	memset(&tm, 0, sizeof(tm));
	v = strtol(p, &end, 10);
	if (end == p || v < 1 || v > 31 || *end != ' ')
		return -1;
	tm.tm_mday = (int)v;
	p = end + 1;
	for (int i = 0; i < 12; i++)
		if (strncmp(p, months[i], 3) == 0)
			mon = i;
	if (mon < 0 || p[3] != ' ')
		return -1;
	tm.tm_mon = mon;
	p += 4;
	v = strtol(p, &end, 10);
	if (end == p || v < 1970 || v > 9999 || *end != ' ')
		return -1;
	tm.tm_year = (int)v - 1900;
	p = end + 1;
	v = strtol(p, &end, 10);
	if (end == p || v < 0 || v > 23 || *end != ':')
		return -1;
	tm.tm_hour = (int)v;
	p = end + 1;
	v = strtol(p, &end, 10);
	if (end == p || v < 0 || v > 59 || *end != ':')
		return -1;
	tm.tm_min = (int)v;
	p = end + 1;
	v = strtol(p, &end, 10);
	if (end == p || v < 0 || v > 60)
		return -1;
	tm.tm_sec = (int)v;
	return (int64_t)timegm(&tm);
}

long fbc_net_retry_delay_ms(const fbc_net_options *opts, int attempt, const char *retry_after,
			    int64_t now_s, uint64_t jitter_seed)
{
	long max = opts->backoff_max_ms > 0 ? opts->backoff_max_ms : 30000;
	long base = opts->backoff_base_ms > 0 ? opts->backoff_base_ms : 200;
	long d;

	if (retry_after && *retry_after) {
		char *end;
		long long secs;

		errno = 0;
		secs = strtoll(retry_after, &end, 10);
		if (end != retry_after && errno == 0 && secs >= 0) {
			while (*end == ' ')
				end++;
			if (!*end)
				return secs > max / 1000 ? max : (long)secs * 1000;
		}
		int64_t when = parse_http_date(retry_after);

		if (when >= 0) {
			int64_t diff = when - now_s;

			if (diff <= 0)
				return 0;
			return diff > max / 1000 ? max : (long)diff * 1000;
		}
	}
	d = base;
	for (int i = 1; i < attempt && d < max; i++)
		d *= 2;
	if (d > max)
		d = max;
	if (jitter_seed)
		d = d / 2 + (long)(jitter_seed % (uint64_t)(d / 2 + 1));
	return d;
}

static uint64_t next_rand(fbc_net *n)
{
	uint64_t x = n->rng;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	n->rng = x;
	return x ? x : 1;
}

static void sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

	while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
		;
}

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long)(ts.tv_sec * 1000 + ts.tv_nsec / 1000000);
}

/* ---- one transfer ---- */

typedef struct xfer {
	fbc_net_response *resp;
	const fbc_net_request *req;
	size_t max;
	bool over;	 /* body limit hit */
	bool sink_fail;	 /* sink write failed */
	uint64_t up_off; /* for file bodies */
	const char *mem;
	uint64_t mem_len;
} xfer;

static size_t on_body(char *p, size_t size, size_t nmemb, void *ud)
{
	xfer *x = ud;
	size_t n = size * nmemb;

	if (x->resp->body_size + n > x->max) {
		x->over = true;
		return 0;
	}
	x->resp->body_size += n;
	if (x->req->sink) {
		if (fwrite(p, 1, n, x->req->sink) != n) {
			x->sink_fail = true;
			return 0;
		}
		return n;
	}
	if (fbc_buf_append(&x->resp->body, p, n)) {
		x->over = true;
		return 0;
	}
	return n;
}

static size_t on_header(char *p, size_t size, size_t nmemb, void *ud)
{
	xfer *x = ud;
	size_t n = size * nmemb, len = n;
	char *h, **slot;

	if (n >= 5 && strncmp(p, "HTTP/", 5) == 0) {
		/* a new response (after 100 Continue or a redirect) */
		headers_clear(&x->resp->headers);
		return n;
	}
	while (len && (p[len - 1] == '\r' || p[len - 1] == '\n'))
		len--;
	if (!len || !memchr(p, ':', len))
		return n;
	if (x->resp->headers.len >= 256 || len > 16384)
		return n; /* bounded: extra or huge headers are ignored */
	if (!(h = strndup(p, len)) || !(slot = fbc_vec_push(&x->resp->headers))) {
		free(h);
		return 0;
	}
	*slot = h;
	return n;
}

static size_t on_read(char *buf, size_t size, size_t nmemb, void *ud)
{
	xfer *x = ud;
	size_t want = size * nmemb;
	uint64_t left;

	if (x->req->has_file_body) {
		ssize_t got;

		left = x->req->body_file.len - x->up_off;
		if (want > left)
			want = (size_t)left;
		if (!want)
			return 0;
		do
			got = pread(x->req->body_file.fd, buf, want,
				    (off_t)(x->req->body_file.offset + x->up_off));
		while (got < 0 && errno == EINTR);
		if (got <= 0)
			return CURL_READFUNC_ABORT;
		x->up_off += (uint64_t)got;
		return (size_t)got;
	}
	left = x->mem_len - x->up_off;
	if (want > left)
		want = (size_t)left;
	if (!want)
		return 0;
	memcpy(buf, x->mem + x->up_off, want);
	x->up_off += want;
	return want;
}

static int seek_body(void *ud, curl_off_t offset, int origin)
{
	xfer *x = ud;

	if (origin != SEEK_SET || offset < 0)
		return CURL_SEEKFUNC_CANTSEEK;
	x->up_off = (uint64_t)offset;
	return CURL_SEEKFUNC_OK;
}

static CURL *handle_for(fbc_net *n, const char *url)
{
	size_t ol = origin_len(url);
	host_handle *victim = &n->hosts[0];

	n->tick++;
	for (size_t i = 0; i < HOSTS_MAX; i++) {
		host_handle *h = &n->hosts[i];

		if (h->key && strlen(h->key) == ol && strncmp(h->key, url, ol) == 0) {
			h->used = n->tick;
			curl_easy_reset(h->curl);
			return h->curl;
		}
		if (!h->key || h->used < victim->used)
			victim = h;
	}
	if (victim->curl)
		curl_easy_cleanup(victim->curl);
	free(victim->key);
	victim->curl = NULL;
	if (!(victim->key = strndup(url, ol)) || !(victim->curl = curl_easy_init())) {
		free(victim->key);
		victim->key = NULL;
		return NULL;
	}
	victim->used = n->tick;
	return victim->curl;
}

static void log_attempt(fbc_net *n, const fbc_net_request *req, long status, int attempt,
			uint64_t sent, uint64_t received, long ms, const char *error)
{
	fbc_net_log_entry *e;
	char *url = fbc_net_redact_url(req->url);
	const char *method = req->method ? req->method : "GET";

	if (n->log_file && url) {
		fbc_buf line;

		fbc_buf_init(&line, 0);
		if (fbc_buf_puts(&line, "{\"what\":") == 0 &&
		    fbc_buf_put_json_string(&line, req->what ? req->what : "",
					    req->what ? strlen(req->what) : 0) == 0 &&
		    fbc_buf_puts(&line, ",\"method\":") == 0 &&
		    fbc_buf_put_json_string(&line, method, strlen(method)) == 0 &&
		    fbc_buf_puts(&line, ",\"url\":") == 0 &&
		    fbc_buf_put_json_string(&line, url, strlen(url)) == 0 &&
		    fbc_buf_printf(&line,
				   ",\"status\":%ld,\"attempt\":%d,\"sent\":%llu,\"received\":%llu,"
				   "\"ms\":%ld",
				   status, attempt, (unsigned long long)sent,
				   (unsigned long long)received, ms) == 0 &&
		    (!error || (fbc_buf_puts(&line, ",\"error\":") == 0 &&
				fbc_buf_put_json_string(&line, error, strlen(error)) == 0)) &&
		    fbc_buf_puts(&line, "}\n") == 0) {
			fwrite(line.data, 1, line.len, n->log_file);
			fflush(n->log_file);
		}
		fbc_buf_dispose(&line);
	}
	if (n->log.len >= n->log_keep) {
		log_entry_dispose(FBC_VEC_AT(&n->log, fbc_net_log_entry, 0));
		memmove(n->log.items, FBC_VEC_AT(&n->log, fbc_net_log_entry, 1),
			(n->log.len - 1) * sizeof(fbc_net_log_entry));
		n->log.len--;
	}
	if (!url || !(e = fbc_vec_push(&n->log))) {
		free(url);
		return;
	}
	e->what = req->what ? strdup(req->what) : NULL;
	e->method = strdup(method);
	e->url = url;
	e->status = status;
	e->attempt = attempt;
	e->sent = sent;
	e->received = received;
	e->ms = ms;
	e->error = error ? strdup(error) : NULL;
}

static bool retryable_status(long s)
{
	return s == 429 || s == 500 || s == 502 || s == 503 || s == 504;
}

static bool retryable_curl(CURLcode c)
{
	switch (c) {
	case CURLE_COULDNT_CONNECT:
	case CURLE_COULDNT_RESOLVE_HOST:
	case CURLE_SEND_ERROR:
	case CURLE_RECV_ERROR:
	case CURLE_GOT_NOTHING:
	case CURLE_PARTIAL_FILE:
	case CURLE_OPERATION_TIMEDOUT:
	case CURLE_HTTP2:
	case CURLE_HTTP2_STREAM:
	case CURLE_SSL_CONNECT_ERROR:
		return true;
	default:
		return false;
	}
}

static int reset_sink(FILE *f)
{
	if (fflush(f) != 0 || fseeko(f, 0, SEEK_SET) != 0 || ftruncate(fileno(f), 0) != 0)
		return -1;
	return 0;
}

int fbc_net_request_do(fbc_net *n, fbc_net_response *resp, const fbc_net_request *req,
		       fbc_error *err)
{
	const char *method = req->method ? req->method : "GET";
	struct curl_slist *hdrs = NULL, *tmp;
	char errbuf[CURL_ERROR_SIZE];
	char *redacted = NULL;
	int rc = 0;
	bool has_body = req->has_file_body || req->body || !strcmp(method, "PUT") ||
			!strcmp(method, "POST") || !strcmp(method, "PATCH");
	uint64_t body_len = req->has_file_body ? req->body_file.len : req->body_len;

	if (!origin_len(req->url))
		return fbc_error_set(err, FBC_EINVAL, req->url, "not an absolute URL");
	for (size_t i = 0; i < req->n_headers; i++) {
		if (!(tmp = curl_slist_append(hdrs, req->headers[i]))) {
			rc = fbc_error_set(err, FBC_ENOMEM, NULL, "out of memory");
			goto done;
		}
		hdrs = tmp;
	}
	/* Never let curl add "Expect: 100-continue": some registries and proxies
	 * answer it badly, and bodies are small enough to send at once. */
	if (!(tmp = curl_slist_append(hdrs, "Expect:"))) {
		rc = fbc_error_set(err, FBC_ENOMEM, NULL, "out of memory");
		goto done;
	}
	hdrs = tmp;

	for (int attempt = 1;; attempt++) {
		xfer x = {.resp = resp,
			  .req = req,
			  .max = req->max_response ? req->max_response : n->opts.max_response,
			  .mem = req->body,
			  .mem_len = req->body_len};
		CURL *c = handle_for(n, req->url);
		CURLcode cc;
		long t0 = now_ms(), status = 0;
		curl_off_t up = 0;
		char reason[CURL_ERROR_SIZE + 64];
		const char *retry_after = NULL;
		bool retry;

		fbc_net_response_dispose(resp);
		fbc_net_response_init(resp);
		resp->attempts = attempt;
		if (req->sink && reset_sink(req->sink)) {
			rc = fbc_error_set(err, FBC_EIO, NULL,
					   "cannot rewind the download file: %s", strerror(errno));
			goto done;
		}
		if (!c) {
			rc = fbc_error_set(err, FBC_ENOMEM, NULL, "out of memory (curl handle)");
			goto done;
		}
		errbuf[0] = 0;
		curl_easy_setopt(c, CURLOPT_URL, req->url);
		curl_easy_setopt(c, CURLOPT_ERRORBUFFER, errbuf);
		curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
		curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, n->opts.connect_timeout_ms);
		curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, n->opts.timeout_ms);
		curl_easy_setopt(c, CURLOPT_USERAGENT, n->user_agent);
		curl_easy_setopt(c, CURLOPT_HTTPHEADER, hdrs);
		curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
		curl_easy_setopt(c, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
		curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, req->follow_redirects ? 1L : 0L);
		curl_easy_setopt(c, CURLOPT_MAXREDIRS, 5L);
		curl_easy_setopt(c, CURLOPT_ACCEPT_ENCODING, NULL);
		if (n->ca_file)
			curl_easy_setopt(c, CURLOPT_CAINFO, n->ca_file);
		curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
		curl_easy_setopt(c, CURLOPT_WRITEDATA, &x);
		curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
		curl_easy_setopt(c, CURLOPT_HEADERDATA, &x);
		if (!strcmp(method, "HEAD")) {
			curl_easy_setopt(c, CURLOPT_NOBODY, 1L);
		} else if (has_body) {
			curl_easy_setopt(c, CURLOPT_UPLOAD, 1L);
			curl_easy_setopt(c, CURLOPT_INFILESIZE_LARGE, (curl_off_t)body_len);
			curl_easy_setopt(c, CURLOPT_READFUNCTION, on_read);
			curl_easy_setopt(c, CURLOPT_READDATA, &x);
			curl_easy_setopt(c, CURLOPT_SEEKFUNCTION, seek_body);
			curl_easy_setopt(c, CURLOPT_SEEKDATA, &x);
			curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
		} else if (strcmp(method, "GET") != 0) {
			curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
		}

		cc = curl_easy_perform(c);
		curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
		curl_easy_getinfo(c, CURLINFO_SIZE_UPLOAD_T, &up);
		{
			char *eff = NULL;

			curl_easy_getinfo(c, CURLINFO_EFFECTIVE_URL, &eff);
			if (eff)
				resp->effective_url = strdup(eff);
		}
		resp->status = cc == CURLE_OK ? status : 0;
		reason[0] = 0;
		if (x.over) {
			log_attempt(n, req, status, attempt, (uint64_t)up, resp->body_size,
				    now_ms() - t0, "response too large");
			free(redacted);
			redacted = fbc_net_redact_url(req->url);
			rc = fbc_error_set(err, FBC_ELIMIT, redacted ? redacted : "",
					   "%s: the response is larger than %zu bytes", method,
					   x.max);
			goto done;
		}
		if (x.sink_fail) {
			rc = fbc_error_set(err, FBC_EIO, NULL, "writing the download: %s",
					   strerror(errno));
			goto done;
		}
		if (cc != CURLE_OK) {
			snprintf(reason, sizeof(reason), "%s",
				 errbuf[0] ? errbuf : curl_easy_strerror(cc));
			retry = retryable_curl(cc);
		} else if (retryable_status(status)) {
			snprintf(reason, sizeof(reason), "HTTP %ld", status);
			retry_after = fbc_net_response_header(resp, "Retry-After");
			retry = true;
		} else {
			retry = false;
		}
		log_attempt(n, req, resp->status, attempt, (uint64_t)up, resp->body_size,
			    now_ms() - t0, reason[0] ? reason : NULL);
		if (retry && !req->no_retry && attempt <= n->opts.max_retries) {
			long d = fbc_net_retry_delay_ms(&n->opts, attempt, retry_after,
							(int64_t)time(NULL),
							n->opts.no_jitter ? 0 : next_rand(n));
			sleep_ms(d);
			continue;
		}
		if (cc != CURLE_OK) {
			free(redacted);
			redacted = fbc_net_redact_url(req->url);
			if (cc == CURLE_SSL_CACERT || cc == CURLE_PEER_FAILED_VERIFICATION ||
			    cc == CURLE_SSL_CERTPROBLEM || cc == CURLE_SSL_CACERT_BADFILE)
				rc = fbc_error_set(err, FBC_EUNAVAIL, redacted ? redacted : "",
						   "%s: TLS verification failed: %s", method,
						   reason);
			else
				rc = fbc_error_set(err, FBC_EUNAVAIL, redacted ? redacted : "",
						   "%s: %s (after %d attempt%s)", method, reason,
						   attempt, attempt == 1 ? "" : "s");
			goto done;
		}
		break;
	}
done:
	curl_slist_free_all(hdrs);
	free(redacted);
	return rc;
}
