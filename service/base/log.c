/* The structured logger: text or JSON lines, escaped fields, repeat folding. */
#include "service/base/log.h"

#include "service/base/buf.h"
#include "service/base/error.h"
#include "service/base/utf8.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#define LINE_MAX_BYTES 65536

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static fbc_log_format format = FBC_LOG_TEXT;
static fbc_log_level min_level = FBC_LOG_INFO;
static FILE *out_stream; /* NULL = stderr */

/* the last warnings/errors written, for repeat folding: several, because
 * two sources failing at once (requests and the job workers during a
 * database outage) interleave their lines */
#define REPEAT_SLOTS 8
static struct repeat {
	fbc_log_level level;
	char *key;   /* message and fields as written, without the time */
	char *ident; /* the same without the per-request fields */
	int64_t first_ms;
	unsigned long suppressed;
} slots[REPEAT_SLOTS];
static size_t next_slot;
static atomic_ulong n_suppressed; /* lines folded and not yet summarised */

/* Output: whole lines are appended to `pending`; whoever finds no write in
 * progress becomes the writer and writes what is pending (its own line and
 * those others added meanwhile) with write(2) until nothing is left. A line
 * is never delayed by a timer, and under load many lines share one write
 * (the access log at tens of thousands of requests a second). */
static pthread_mutex_t out_lock = PTHREAD_MUTEX_INITIALIZER;
/* bounded: a stuck output drops lines past 16 MiB instead of growing */
static fbc_buf pending = {.max = 16u << 20}, spare = {.max = 16u << 20};
static bool writing;

static const char *level_name(fbc_log_level l)
{
	static const char *const names[] = {"debug", "info", "warn", "error"};

	return l <= FBC_LOG_ERROR ? names[l] : "error";
}

void fbc_log_configure(fbc_log_format f, fbc_log_level min, FILE *stream)
{
	pthread_mutex_lock(&lock);
	format = f;
	min_level = min;
	out_stream = stream;
	pthread_mutex_unlock(&lock);
}

fbc_log_format fbc_log_get_format(void)
{
	return format;
}

int fbc_log_format_parse(fbc_log_format *out, const char *s, FILE *stream)
{
	if (strcmp(s, "text") == 0)
		*out = FBC_LOG_TEXT;
	else if (strcmp(s, "json") == 0)
		*out = FBC_LOG_JSON;
	else if (strcmp(s, "auto") == 0)
		*out = isatty(fileno(stream ? stream : stderr)) ? FBC_LOG_TEXT : FBC_LOG_JSON;
	else
		return FBC_EINVAL;
	return 0;
}

static int64_t now_ms(struct timespec *ts)
{
	clock_gettime(CLOCK_REALTIME, ts);
	return (int64_t)ts->tv_sec * 1000 + ts->tv_nsec / 1000000;
}

/* A string value: JSON string escapes in json; in text, bare when it has
 * only safe bytes, else a quoted string with the same escapes. Invalid UTF-8
 * becomes U+FFFD. */
static void put_str(fbc_buf *b, const char *s, bool always_quote)
{
	bool plain = !always_quote && *s;

	for (const char *p = s; plain && *p; p++)
		if (*p <= ' ' || *p == '"' || *p == '=' || *p == '\\' || (unsigned char)*p >= 0x7f)
			plain = false;
	if (plain) {
		fbc_buf_puts(b, s);
		return;
	}
	fbc_buf_put_json_string(b, s, strlen(s));
}

/* an integer without printf (the access log writes several a line) */
static void put_int(fbc_buf *b, long long v)
{
	char d[24];
	size_t n = 0;
	unsigned long long u = v < 0 ? 0ULL - (unsigned long long)v : (unsigned long long)v;

	do {
		d[sizeof(d) - 1 - n++] = (char)('0' + u % 10);
		u /= 10;
	} while (u);
	if (v < 0)
		d[sizeof(d) - 1 - n++] = '-';
	fbc_buf_append(b, d + sizeof(d) - n, n);
}

static void put_num(fbc_buf *b, double v)
{
	if (!isfinite(v)) {
		fbc_buf_puts(b, "null");
	} else if (v == floor(v) && fabs(v) < 1e15) {
		put_int(b, (long long)v);
	} else if (fabs(v) < 1e12) { /* three decimals, as "%.3f" rounds them */
		long long m = llround(fabs(v) * 1000);
		char frac[4] = {(char)('0' + m / 100 % 10), (char)('0' + m / 10 % 10),
				(char)('0' + m % 10), 0};
		if (v < 0 && m)
			fbc_buf_putc(b, '-');
		put_int(b, m / 1000);
		fbc_buf_putc(b, '.');
		fbc_buf_puts(b, frac);
	} else {
		fbc_buf_printf(b, "%.3f", v);
	}
}

/* message and fields in the current format (no time, no level) */
static void put_body(fbc_buf *b, const char *msg, const fbc_log_field *fields, size_t n)
{
	if (format == FBC_LOG_JSON) {
		fbc_buf_puts(b, "\"msg\":");
		put_str(b, msg, true);
		for (size_t i = 0; i < n; i++) {
			fbc_buf_putc(b, ',');
			put_str(b, fields[i].key, true);
			fbc_buf_putc(b, ':');
			if (fields[i].str)
				put_str(b, fields[i].str, true);
			else
				put_num(b, fields[i].num);
		}
		return;
	}
	fbc_buf_puts(b, msg);
	for (size_t i = 0; i < n; i++) {
		fbc_buf_putc(b, ' ');
		fbc_buf_puts(b, fields[i].key);
		fbc_buf_putc(b, '=');
		if (fields[i].str)
			put_str(b, fields[i].str, false);
		else
			put_num(b, fields[i].num);
	}
}

static void write_all(int fd, const char *p, size_t n)
{
	while (n > 0) {
		ssize_t w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return; /* a log that cannot be written is dropped, never retried forever */
		p += w;
		n -= (size_t)w;
	}
}

static void put_line(const char *line, size_t len)
{
	FILE *f = out_stream ? out_stream : stderr;
	int fd = fileno(f);

	pthread_mutex_lock(&out_lock);
	if (fbc_buf_append(&pending, line, len) != 0) {
		pthread_mutex_unlock(&out_lock);
		return; /* out of memory: the line is lost, the process goes on */
	}
	if (writing) { /* the writer takes ours with its next write */
		pthread_mutex_unlock(&out_lock);
		return;
	}
	writing = true;
	while (pending.len > 0) {
		fbc_buf mine = pending;
		pending = spare;
		fbc_buf_reset(&pending);
		pthread_mutex_unlock(&out_lock);
		fflush(f); /* anything written through stdio goes first */
		write_all(fd, mine.data, mine.len);
		pthread_mutex_lock(&out_lock);
		spare = mine;
	}
	writing = false;
	pthread_mutex_unlock(&out_lock);
}

/* One line: time, level, body. */
static void emit(fbc_log_level level, const struct timespec *ts, const char *body)
{
	/* the date of the last second this thread wrote, formatted once */
	static __thread time_t when_sec = -1;
	static __thread char when[40];
	long ms = ts->tv_nsec / 1000000;
	char msd[6] = {
		'.', (char)('0' + ms / 100), (char)('0' + ms / 10 % 10), (char)('0' + ms % 10), 'Z',
		0};
	fbc_buf line;

	if (when_sec != ts->tv_sec) {
		struct tm tm;
		gmtime_r(&ts->tv_sec, &tm);
		strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%S", &tm);
		when_sec = ts->tv_sec;
	}
	fbc_buf_init(&line, LINE_MAX_BYTES + 128);
	if (format == FBC_LOG_JSON) {
		fbc_buf_puts(&line, "{\"time\":\"");
		fbc_buf_puts(&line, when);
		fbc_buf_puts(&line, msd);
		fbc_buf_puts(&line, "\",\"level\":\"");
		fbc_buf_puts(&line, level_name(level));
		fbc_buf_puts(&line, "\",");
		fbc_buf_puts(&line, body);
		fbc_buf_puts(&line, "}\n");
	} else {
		fbc_buf_puts(&line, when);
		fbc_buf_puts(&line, msd);
		fbc_buf_putc(&line, ' ');
		fbc_buf_puts(&line, level_name(level));
		fbc_buf_putc(&line, ' ');
		fbc_buf_puts(&line, body);
		fbc_buf_putc(&line, '\n');
	}
	if (line.data)
		put_line(line.data, line.len);
	fbc_buf_dispose(&line);
}

/* Called with lock held. */
static void flush_slot(struct repeat *r, const struct timespec *ts)
{
	fbc_buf b;

	if (!r->suppressed || !r->key)
		return;
	fbc_buf_init(&b, LINE_MAX_BYTES);
	if (format == FBC_LOG_JSON) {
		fbc_buf_printf(&b, "%s,\"repeated\":%lu", r->key, r->suppressed);
	} else {
		fbc_buf_printf(&b, "%s repeated=%lu", r->key, r->suppressed);
	}
	if (b.data)
		emit(r->level, ts, b.data);
	fbc_buf_dispose(&b);
	atomic_fetch_sub(&n_suppressed, r->suppressed);
	r->suppressed = 0;
}

/* Called with lock held. */
static void flush_repeats(const struct timespec *ts)
{
	for (size_t i = 0; i < REPEAT_SLOTS; i++)
		flush_slot(&slots[i], ts);
}

void fbc_log_flush(void)
{
	struct timespec ts;

	pthread_mutex_lock(&lock);
	now_ms(&ts);
	flush_repeats(&ts);
	pthread_mutex_unlock(&lock);
}

/* Fields that differ between requests failing the same way: a database
 * outage fails every request alike, each with its own id and path. */
static bool per_request(const char *key)
{
	return !strcmp(key, "request_id") || !strcmp(key, "path") || !strcmp(key, "duration_ms") ||
	       !strcmp(key, "bytes");
}

void fbc_log(fbc_log_level level, const fbc_log_field *fields, size_t n, const char *fmt, ...)
{
	char msg[4096];
	struct timespec ts;
	int64_t t;
	fbc_buf body, ident;
	va_list ap;

	if (level < min_level)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fbc_buf_init(&body, LINE_MAX_BYTES);
	fbc_buf_init(&ident, LINE_MAX_BYTES);
	put_body(&body, msg, fields, n);
	t = now_ms(&ts);
	if (!body.data) {
		fbc_buf_dispose(&body);
		fbc_buf_dispose(&ident);
		return;
	}
	/* below warn nothing is folded: no lock but the output's, unless
	 * folded lines wait for their summary (it goes first) */
	if (level < FBC_LOG_WARN && atomic_load(&n_suppressed) == 0) {
		emit(level, &ts, body.data);
		fbc_buf_dispose(&body);
		fbc_buf_dispose(&ident);
		return;
	}
	pthread_mutex_lock(&lock);
	if (level >= FBC_LOG_WARN) {
		fbc_log_field kept[32];
		size_t k = 0;
		for (size_t i = 0; i < n && k < 32; i++)
			if (!per_request(fields[i].key))
				kept[k++] = fields[i];
		put_body(&ident, msg, kept, k);
	}
	if (level >= FBC_LOG_WARN && ident.data) {
		for (size_t i = 0; i < REPEAT_SLOTS; i++) {
			struct repeat *r = &slots[i];
			if (r->ident && r->level == level && strcmp(r->ident, ident.data) == 0 &&
			    t - r->first_ms < FBC_LOG_REPEAT_WINDOW_MS) {
				r->suppressed++;
				atomic_fetch_add(&n_suppressed, 1);
				goto done;
			}
		}
	}
	flush_repeats(&ts);
	emit(level, &ts, body.data);
	if (level >= FBC_LOG_WARN && ident.data) {
		struct repeat *r = NULL;
		for (size_t i = 0; i < REPEAT_SLOTS && !r; i++)
			if (slots[i].ident && slots[i].level == level &&
			    strcmp(slots[i].ident, ident.data) == 0)
				r = &slots[i]; /* its window ended: it starts again */
		if (!r)
			r = &slots[next_slot++ % REPEAT_SLOTS];
		free(r->key);
		free(r->ident);
		r->ident = strdup(ident.data);
		r->key = strdup(body.data);
		r->level = level;
		r->first_ms = t;
		r->suppressed = 0;
	}
done:
	pthread_mutex_unlock(&lock);
	fbc_buf_dispose(&body);
	fbc_buf_dispose(&ident);
}
