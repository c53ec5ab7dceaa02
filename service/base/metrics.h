/*
 * fbc_metrics: the process-wide metrics registry, written out in the
 * Prometheus text exposition format 0.0.4 (GET /metrics).
 *
 * A metric family is a static fbc_metric_def (name, help, type, label names,
 * histogram buckets); the def's address is its identity. Code that records a
 * value names the def and the label values, in the order of the def's label
 * names:
 *
 *     static const fbc_metric_def jobs_done = {
 *         .name = "fbcd_jobs_done_total", .help = "Jobs finished.",
 *         .type = FBC_METRIC_COUNTER, .labels = {"kind", "outcome"}};
 *     fbc_metric_add(&jobs_done, (const char *[]){"pr.check", "success"}, 1);
 *
 * Families appear in the output from their first use, or from
 * fbc_metric_register (then with HELP and TYPE but no sample until one is
 * recorded). Collectors add text computed at scrape time (process figures,
 * database gauges).
 *
 * Bounds: at most FBC_METRICS_MAX_FAMILIES families and
 * FBC_METRICS_MAX_SERIES label combinations per family; values beyond are
 * dropped and counted in fbcd_metrics_dropped_total, so a label fed from
 * user input can never grow memory without bound (use route templates,
 * never raw paths).
 * Thread-safety: every function may be called from any thread.
 */
#ifndef FBC_BASE_METRICS_H
#define FBC_BASE_METRICS_H

#include "service/base/buf.h"

#include <stdbool.h>
#include <stddef.h>

#define FBC_METRICS_MAX_LABELS	 4
#define FBC_METRICS_MAX_FAMILIES 128
#define FBC_METRICS_MAX_SERIES	 4096
#define FBC_METRICS_MAX_BUCKETS	 24

typedef enum fbc_metric_type {
	FBC_METRIC_COUNTER = 1,
	FBC_METRIC_GAUGE = 2,
	FBC_METRIC_HISTOGRAM = 3,
} fbc_metric_type;

typedef struct fbc_metric_def {
	const char *name; /* [a-zA-Z_:][a-zA-Z0-9_:]* */
	const char *help;
	fbc_metric_type type;
	const char *labels[FBC_METRICS_MAX_LABELS + 1]; /* NULL-terminated */
	const double *buckets;				/* histograms: upper bounds, ascending */
	size_t n_buckets; /* without +Inf, at most FBC_METRICS_MAX_BUCKETS */
} fbc_metric_def;

/* Prometheus client libraries' default buckets (5 ms .. 10 s). */
#define FBC_METRICS_DEFAULT_BUCKETS_N 11
extern const double fbc_metrics_default_buckets[FBC_METRICS_DEFAULT_BUCKETS_N];

/* Make the family appear in the output before its first value. */
void fbc_metric_register(const fbc_metric_def *def);
/* Counters and gauges: add v (counters: v >= 0). */
void fbc_metric_add(const fbc_metric_def *def, const char *const *values, double v);
/* Gauges: set to v. */
void fbc_metric_set(const fbc_metric_def *def, const char *const *values, double v);
/* Histograms: one observation. */
void fbc_metric_observe(const fbc_metric_def *def, const char *const *values, double v);

/* Appended to the output at scrape time, after the registered families; it
 * writes complete families (# HELP, # TYPE, samples) to out. A non-zero
 * return is ignored (the scrape goes on without that text). */
typedef int (*fbc_metrics_collect_fn)(void *ctx, fbc_buf *out);
/* Register / remove a collector (at most 16). Returns 0 or FBC_ELIMIT. */
int fbc_metrics_add_collector(fbc_metrics_collect_fn fn, void *ctx);
void fbc_metrics_remove_collector(fbc_metrics_collect_fn fn, void *ctx);

/* The whole exposition: families sorted by name, series sorted by labels,
 * then every collector's text. Returns 0 or FBC_ELIMIT/FBC_ENOMEM. */
int fbc_metrics_write(fbc_buf *out);

/* Helpers for collectors: one sample line `name{labels} value` (labels
 * NULL-terminated name/value pairs, may be NULL) and a HELP/TYPE header. */
int fbc_metrics_put_header(fbc_buf *out, const char *name, const char *help, fbc_metric_type type);
int fbc_metrics_put_sample(fbc_buf *out, const char *name, const char *const *label_pairs,
			   double v);

/* process_* metrics of this process (CPU, RSS, virtual memory, open and
 * maximum file descriptors, start time), read from /proc: a collector. */
int fbc_metrics_collect_process(void *ctx, fbc_buf *out);

/* Turn recording on or off (default on): off, fbc_metric_add/set/observe
 * return at once (`fbcd serve --metrics off`, and the overhead benchmark). */
void fbc_metrics_set_enabled(bool on);

/* Forget every series and collector (tests). */
void fbc_metrics_reset(void);

#endif
