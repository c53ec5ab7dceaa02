/* fbc_metrics and fbc_log: the exposition text and the log lines. */
#include "service/base/log.h"
#include "service/base/metrics.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const double buckets[] = {0.1, 1};
static const fbc_metric_def hist = {.name = "t_duration_seconds",
				    .help = "How long.",
				    .type = FBC_METRIC_HISTOGRAM,
				    .labels = {"route"},
				    .buckets = buckets,
				    .n_buckets = 2};
static const fbc_metric_def ctr = {.name = "t_requests_total",
				   .help = "Requests.\nSecond line \\.",
				   .type = FBC_METRIC_COUNTER,
				   .labels = {"code", "method"}};
static const fbc_metric_def gauge = {
	.name = "t_in_flight", .help = "In flight.", .type = FBC_METRIC_GAUGE};

static char *scrape(void)
{
	fbc_buf b;

	fbc_buf_init(&b, 0);
	assert_int_equal(fbc_metrics_write(&b), 0);
	return fbc_buf_detach(&b, NULL);
}

static void fbc_metrics_write__counters_gauges_histograms(void **state)
{
	char *text;

	fbc_metrics_reset();
	fbc_metric_register(&gauge);
	fbc_metric_add(&ctr, (const char *[]){"200", "GET"}, 1);
	fbc_metric_add(&ctr, (const char *[]){"200", "GET"}, 2);
	fbc_metric_add(&ctr, (const char *[]){"404", "GET"}, 1);
	fbc_metric_observe(&hist, (const char *[]){"/v1/x/{y}"}, 0.05);
	fbc_metric_observe(&hist, (const char *[]){"/v1/x/{y}"}, 0.5);
	fbc_metric_observe(&hist, (const char *[]){"/v1/x/{y}"}, 5);
	text = scrape();
	assert_non_null(strstr(text, "# HELP t_requests_total Requests.\\nSecond line \\\\.\n"
				     "# TYPE t_requests_total counter\n"
				     "t_requests_total{code=\"200\",method=\"GET\"} 3\n"
				     "t_requests_total{code=\"404\",method=\"GET\"} 1\n"));
	assert_non_null(strstr(text, "# TYPE t_in_flight gauge\n"));
	assert_non_null(strstr(text,
			       "t_duration_seconds_bucket{route=\"/v1/x/{y}\",le=\"0.1\"} 1\n"
			       "t_duration_seconds_bucket{route=\"/v1/x/{y}\",le=\"1\"} 2\n"
			       "t_duration_seconds_bucket{route=\"/v1/x/{y}\",le=\"+Inf\"} 3\n"
			       "t_duration_seconds_sum{route=\"/v1/x/{y}\"} 5.55\n"
			       "t_duration_seconds_count{route=\"/v1/x/{y}\"} 3\n"));
	/* families sorted by name */
	assert_true(strstr(text, "t_duration_seconds") < strstr(text, "t_in_flight"));
	assert_true(strstr(text, "t_in_flight") < strstr(text, "t_requests_total"));
	free(text);
}

static void fbc_metrics_write__escapes_label_values(void **state)
{
	char *text;

	fbc_metrics_reset();
	fbc_metric_add(&ctr, (const char *[]){"a\"b\\c\nd", "GET"}, 1);
	text = scrape();
	assert_non_null(
		strstr(text, "t_requests_total{code=\"a\\\"b\\\\c\\nd\",method=\"GET\"} 1\n"));
	free(text);
}

static void fbc_metric_add__series_are_bounded(void **state)
{
	char label[32], *text;

	fbc_metrics_reset();
	for (int i = 0; i < FBC_METRICS_MAX_SERIES + 10; i++) {
		snprintf(label, sizeof(label), "%d", i);
		fbc_metric_add(&ctr, (const char *[]){label, "GET"}, 1);
	}
	text = scrape();
	assert_non_null(strstr(text, "fbcd_metrics_dropped_total 10\n"));
	assert_null(strstr(text, "code=\"4100\""));
	free(text);
}

static void *hammer(void *arg)
{
	for (int i = 0; i < 10000; i++)
		fbc_metric_add(&ctr, (const char *[]){"200", (const char *)arg}, 1);
	return NULL;
}

static void fbc_metric_add__concurrent_adds_are_counted(void **state)
{
	pthread_t t[4];
	char *text;

	fbc_metrics_reset();
	for (int i = 0; i < 4; i++)
		pthread_create(&t[i], NULL, hammer, (void *)(uintptr_t)(i % 2 ? "GET" : "PUT"));
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	text = scrape();
	assert_non_null(strstr(text, "t_requests_total{code=\"200\",method=\"GET\"} 20000\n"));
	assert_non_null(strstr(text, "t_requests_total{code=\"200\",method=\"PUT\"} 20000\n"));
	free(text);
}

static int collect_fail(void *ctx, fbc_buf *out)
{
	fbc_buf_puts(out, "partial");
	return -1;
}

static void fbc_metrics_collect_process__standard_names(void **state)
{
	char *text;

	fbc_metrics_reset();
	assert_int_equal(fbc_metrics_add_collector(fbc_metrics_collect_process, NULL), 0);
	assert_int_equal(fbc_metrics_add_collector(collect_fail, NULL), 0);
	text = scrape();
	assert_non_null(strstr(text, "# TYPE process_cpu_seconds_total counter\n"));
	assert_non_null(strstr(text, "process_resident_memory_bytes "));
	assert_non_null(strstr(text, "process_open_fds "));
	assert_non_null(strstr(text, "process_start_time_seconds "));
	assert_null(strstr(text, "partial"));
	free(text);
	fbc_metrics_reset();
}

static char *read_all(FILE *f)
{
	long n;
	char *s;

	fflush(f);
	n = ftell(f);
	rewind(f);
	s = calloc(1, (size_t)n + 1);
	assert_int_equal(fread(s, 1, (size_t)n, f), (size_t)n);
	return s;
}

static void fbc_log__json_lines_escape_and_fold_repeats(void **state)
{
	FILE *f = tmpfile();
	char *s;

	fbc_log_configure(FBC_LOG_JSON, FBC_LOG_INFO, f);
	fbc_log(FBC_LOG_INFO,
		(fbc_log_field[]){FBC_LOG_STR("path", "/a\n\"b\xff"), FBC_LOG_NUM("status", 200),
				  FBC_LOG_NUM("duration_ms", 1.25)},
		3, "request %s", "served");
	fbc_log(FBC_LOG_DEBUG, NULL, 0, "not shown");
	for (int i = 0; i < 5; i++)
		fbc_log(FBC_LOG_ERROR, (fbc_log_field[]){FBC_LOG_STR("db", "down")}, 1, "database");
	fbc_log(FBC_LOG_ERROR, NULL, 0, "other");
	s = read_all(f);
	assert_non_null(
		strstr(s, "\"level\":\"info\",\"msg\":\"request served\",\"path\":\"/a\\n\\\"b"));
	assert_non_null(strstr(s, "\"status\":200,\"duration_ms\":1.250}\n"));
	assert_null(strstr(s, "not shown"));
	/* one database line, then one line with the 4 repeats, then the next */
	assert_non_null(strstr(s, "\"msg\":\"database\",\"db\":\"down\"}\n"));
	assert_non_null(strstr(s, "\"msg\":\"database\",\"db\":\"down\",\"repeated\":4}\n"));
	assert_true(strstr(s, "\"repeated\":4") < strstr(s, "\"msg\":\"other\""));
	free(s);
	fclose(f);
	fbc_log_configure(FBC_LOG_TEXT, FBC_LOG_INFO, NULL);
}

static void fbc_log__text_lines_quote_unsafe_values(void **state)
{
	FILE *f = tmpfile();
	char *s;

	fbc_log_configure(FBC_LOG_TEXT, FBC_LOG_INFO, f);
	fbc_log(FBC_LOG_WARN, (fbc_log_field[]){FBC_LOG_STR("a", "plain"), FBC_LOG_STR("b", "x y")},
		2, "hello");
	s = read_all(f);
	assert_non_null(strstr(s, "Z warn hello a=plain b=\"x y\"\n"));
	free(s);
	fclose(f);
	fbc_log_configure(FBC_LOG_TEXT, FBC_LOG_INFO, NULL);
}

static void fbc_log__numbers_and_time_without_printf(void **state)
{
	FILE *f = tmpfile();
	char *s;

	fbc_log_configure(FBC_LOG_JSON, FBC_LOG_INFO, f);
	fbc_log(FBC_LOG_INFO,
		(fbc_log_field[]){FBC_LOG_NUM("a", -42), FBC_LOG_NUM("b", 0),
				  FBC_LOG_NUM("c", 2.9996), FBC_LOG_NUM("d", 0.0004),
				  FBC_LOG_NUM("e", -1.5), FBC_LOG_NUM("f", 1e20),
				  FBC_LOG_NUM("g", 123456789012.0)},
		7, "n");
	s = read_all(f);
	assert_non_null(strstr(s, "\"a\":-42,\"b\":0,\"c\":3.000,\"d\":0.000,\"e\":-1.500,"
				  "\"f\":100000000000000000000.000,\"g\":123456789012}\n"));
	/* {"time":"YYYY-MM-DDTHH:MM:SS.mmmZ","level":... */
	assert_int_equal(strncmp(s, "{\"time\":\"", 9), 0);
	assert_int_equal(s[13], '-');
	assert_int_equal(s[19], 'T');
	assert_int_equal(s[28], '.');
	assert_int_equal(s[32], 'Z');
	assert_int_equal(strncmp(s + 33, "\",\"level\":\"info\"", 16), 0);
	free(s);
	fclose(f);
	fbc_log_configure(FBC_LOG_TEXT, FBC_LOG_INFO, NULL);
}

static void *log_many(void *arg)
{
	for (int i = 0; i < 2000; i++)
		fbc_log(FBC_LOG_INFO,
			(fbc_log_field[]){FBC_LOG_NUM("thread", (double)(intptr_t)arg),
					  FBC_LOG_NUM("i", i)},
			2, "line");
	return NULL;
}

/* lines written by whichever thread finds the output free: none lost,
 * none torn, each thread's in order */
static void fbc_log__concurrent_lines_whole_and_ordered(void **state)
{
	FILE *f = tmpfile();
	pthread_t th[8];
	int next[8] = {0}, lines = 0;
	char *s, *p, *save = NULL;

	fbc_log_configure(FBC_LOG_JSON, FBC_LOG_INFO, f);
	for (intptr_t k = 0; k < 8; k++)
		assert_int_equal(pthread_create(&th[k], NULL, log_many, (void *)k), 0);
	for (int k = 0; k < 8; k++)
		pthread_join(th[k], NULL);
	s = read_all(f);
	for (p = strtok_r(s, "\n", &save); p; p = strtok_r(NULL, "\n", &save)) {
		int t = -1, i = -1;
		const char *q = strstr(p, "\"msg\":\"line\",\"thread\":");
		assert_non_null(q);
		assert_int_equal(sscanf(q, "\"msg\":\"line\",\"thread\":%d,\"i\":%d}", &t, &i), 2);
		assert_true(t >= 0 && t < 8);
		assert_int_equal(i, next[t]);
		next[t]++;
		lines++;
	}
	assert_int_equal(lines, 16000);
	free(s);
	fclose(f);
	fbc_log_configure(FBC_LOG_TEXT, FBC_LOG_INFO, NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(fbc_metrics_write__counters_gauges_histograms),
		cmocka_unit_test(fbc_metrics_write__escapes_label_values),
		cmocka_unit_test(fbc_metric_add__series_are_bounded),
		cmocka_unit_test(fbc_metric_add__concurrent_adds_are_counted),
		cmocka_unit_test(fbc_metrics_collect_process__standard_names),
		cmocka_unit_test(fbc_log__json_lines_escape_and_fold_repeats),
		cmocka_unit_test(fbc_log__text_lines_quote_unsafe_values),
		cmocka_unit_test(fbc_log__numbers_and_time_without_printf),
		cmocka_unit_test(fbc_log__concurrent_lines_whole_and_ordered),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
