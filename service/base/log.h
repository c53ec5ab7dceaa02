/*
 * fbc_log: the process-wide structured logger. One line per event on
 * stderr (or the configured stream), in one of two formats:
 *
 *   text: 2026-11-23T21:58:41.123Z INFO request served request_id=ab12 status=200
 *   json: {"time":"2026-11-23T21:58:41.123Z","level":"info","msg":"request served",
 *          "request_id":"ab12","status":200}
 *
 * Context fields are values (FBC_LOG_STR, FBC_LOG_NUM); the logger escapes
 * them (control bytes, quotes, non-UTF-8 bytes), so a forged path or header
 * can never forge a line. Callers never pass secrets: tokens, passwords and
 * webhook secrets are not log fields.
 *
 * Repeats: an error or warning whose message and fields equal the previous
 * one of the same level within FBC_LOG_REPEAT_WINDOW_MS is not written
 * (fields that differ per request, request_id, path, duration_ms and bytes,
 * are not compared: an outage fails every request alike; the last 8
 * distinct lines are remembered, so interleaved sources fold too); the
 * next different line (or the window's end) is preceded by one line saying
 * how many were suppressed (`"repeated": N`), so an outage cannot flood the
 * log with identical lines.
 * Thread-safety: every function may be called from any thread; lines are
 * written whole.
 */
#ifndef FBC_BASE_LOG_H
#define FBC_BASE_LOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#define FBC_LOG_REPEAT_WINDOW_MS 10000

typedef enum fbc_log_level {
	FBC_LOG_DEBUG = 0,
	FBC_LOG_INFO = 1,
	FBC_LOG_WARN = 2,
	FBC_LOG_ERROR = 3,
} fbc_log_level;

typedef enum fbc_log_format {
	FBC_LOG_TEXT = 0,
	FBC_LOG_JSON = 1,
} fbc_log_format;

typedef struct fbc_log_field {
	const char *key;
	const char *str; /* NULL: a number */
	double num;
} fbc_log_field;

static inline fbc_log_field fbc_log_str(const char *key, const char *value)
{
	return (fbc_log_field){key, value ? value : "", 0};
}

#define FBC_LOG_STR(k, v) fbc_log_str((k), (v))
#define FBC_LOG_NUM(k, v) ((fbc_log_field){(k), NULL, (double)(v)})

/* Format and minimum level; stream NULL = stderr. Default: text, info. */
void fbc_log_configure(fbc_log_format format, fbc_log_level min, FILE *stream);
/* "text", "json" or "auto" (text on a terminal, json otherwise). 0 or FBC_EINVAL. */
int fbc_log_format_parse(fbc_log_format *out, const char *s, FILE *stream);
fbc_log_format fbc_log_get_format(void);

/* One event: level, fields (n of them, may be 0) and a printf-style message. */
void fbc_log(fbc_log_level level, const fbc_log_field *fields, size_t n, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* Write any pending "repeated N times" line (at exit, in tests). */
void fbc_log_flush(void);

#endif
