/* The metrics registry and its Prometheus text exposition. */
#include "service/base/metrics.h"

#include "service/base/error.h"

#include <dirent.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

const double fbc_metrics_default_buckets[FBC_METRICS_DEFAULT_BUCKETS_N] = {
	0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10};

#define KEY_MAX	     1024 /* joined label values of one series */
#define FAMILY_SLOTS 256  /* open addressing by def address, > 2 x MAX_FAMILIES */

typedef struct series {
	char *key;	 /* label values joined by \x1f */
	char **values;	 /* one per label */
	double value;	 /* counters and gauges */
	uint64_t *count; /* histograms: per bucket (non-cumulative), last is +Inf */
	double sum;
	uint64_t n;
} series;

typedef struct family {
	const fbc_metric_def *def;
	size_t n_labels;
	pthread_mutex_t lock;
	series *items;
	size_t len, cap;
	size_t *index; /* open addressing over items, cap * 2 slots, SIZE_MAX empty */
	size_t index_cap;
} family;

static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic(family *) slots[FAMILY_SLOTS];
static family *all[FBC_METRICS_MAX_FAMILIES];
static size_t n_all;
static atomic_ulong dropped;
static atomic_bool enabled = true;

static struct {
	fbc_metrics_collect_fn fn;
	void *ctx;
} collectors[16];
static size_t n_collectors;

static size_t hash_ptr(const void *p)
{
	uintptr_t v = (uintptr_t)p;

	v ^= v >> 17;
	v *= 0x9E3779B97F4A7C15ull;
	return (size_t)(v >> 32);
}

static size_t hash_str(const char *s)
{
	size_t h = 1469598103934665603ull;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

static family *family_find(const fbc_metric_def *def)
{
	size_t i = hash_ptr(def) % FAMILY_SLOTS;

	for (size_t probe = 0; probe < FAMILY_SLOTS; probe++, i = (i + 1) % FAMILY_SLOTS) {
		family *f = atomic_load_explicit(&slots[i], memory_order_acquire);

		if (!f)
			return NULL;
		if (f->def == def)
			return f;
	}
	return NULL;
}

static family *family_get(const fbc_metric_def *def)
{
	family *f = family_find(def);
	size_t i;

	if (f)
		return f;
	pthread_mutex_lock(&reg_lock);
	f = family_find(def);
	if (f || n_all >= FBC_METRICS_MAX_FAMILIES)
		goto done;
	f = calloc(1, sizeof(*f));
	if (!f)
		goto done;
	f->def = def;
	while (f->n_labels < FBC_METRICS_MAX_LABELS && def->labels[f->n_labels])
		f->n_labels++;
	pthread_mutex_init(&f->lock, NULL);
	all[n_all++] = f;
	i = hash_ptr(def) % FAMILY_SLOTS;
	while (atomic_load_explicit(&slots[i], memory_order_relaxed))
		i = (i + 1) % FAMILY_SLOTS;
	atomic_store_explicit(&slots[i], f, memory_order_release);
done:
	pthread_mutex_unlock(&reg_lock);
	return f;
}

void fbc_metric_register(const fbc_metric_def *def)
{
	(void)family_get(def);
}

static int join_key(char *key, const family *f, const char *const *values)
{
	size_t o = 0;

	key[0] = '\0';
	for (size_t i = 0; i < f->n_labels; i++) {
		const char *v = values && values[i] ? values[i] : "";
		size_t n = strlen(v);

		if (o + n + 2 > KEY_MAX)
			return -1;
		if (i)
			key[o++] = '\x1f';
		memcpy(key + o, v, n);
		o += n;
	}
	key[o] = '\0';
	return 0;
}

static int index_grow(family *f)
{
	size_t cap = f->index_cap ? f->index_cap * 2 : 16;
	size_t *idx = malloc(cap * sizeof(size_t));

	if (!idx)
		return -1;
	for (size_t i = 0; i < cap; i++)
		idx[i] = SIZE_MAX;
	for (size_t s = 0; s < f->len; s++) {
		size_t i = hash_str(f->items[s].key) % cap;

		while (idx[i] != SIZE_MAX)
			i = (i + 1) % cap;
		idx[i] = s;
	}
	free(f->index);
	f->index = idx;
	f->index_cap = cap;
	return 0;
}

/* The series for key, created when absent; NULL when the bound is reached
 * or memory runs out. Called with f->lock held. */
static series *series_get(family *f, const char *key, const char *const *values)
{
	size_t i;
	series *s;

	if (f->index_cap) {
		for (i = hash_str(key) % f->index_cap; f->index[i] != SIZE_MAX;
		     i = (i + 1) % f->index_cap)
			if (strcmp(f->items[f->index[i]].key, key) == 0)
				return &f->items[f->index[i]];
	}
	if (f->len >= FBC_METRICS_MAX_SERIES)
		return NULL;
	if ((f->len + 1) * 2 > f->index_cap && index_grow(f) != 0)
		return NULL;
	if (f->len == f->cap) {
		size_t cap = f->cap ? f->cap * 2 : 8;
		series *items = realloc(f->items, cap * sizeof(series));

		if (!items)
			return NULL;
		f->items = items;
		f->cap = cap;
	}
	s = &f->items[f->len];
	memset(s, 0, sizeof(*s));
	if (!(s->key = strdup(key)) || !(s->values = calloc(f->n_labels + 1, sizeof(char *))))
		goto oom;
	for (size_t l = 0; l < f->n_labels; l++)
		if (!(s->values[l] = strdup(values && values[l] ? values[l] : "")))
			goto oom;
	if (f->def->type == FBC_METRIC_HISTOGRAM &&
	    !(s->count = calloc(f->def->n_buckets + 1, sizeof(uint64_t))))
		goto oom;
	for (i = hash_str(key) % f->index_cap; f->index[i] != SIZE_MAX; i = (i + 1) % f->index_cap)
		;
	f->index[i] = f->len++;
	return s;
oom:
	if (s->values)
		for (size_t l = 0; l < f->n_labels; l++)
			free(s->values[l]);
	free(s->values);
	free(s->key);
	return NULL;
}

typedef enum { OP_ADD, OP_SET, OP_OBSERVE } op_kind;

static void record(const fbc_metric_def *def, const char *const *values, double v, op_kind op)
{
	char key[KEY_MAX];
	family *f;
	series *s;

	if (!atomic_load_explicit(&enabled, memory_order_relaxed))
		return;
	f = family_get(def);
	if (!f || join_key(key, f, values) != 0) {
		atomic_fetch_add(&dropped, 1);
		return;
	}
	pthread_mutex_lock(&f->lock);
	s = series_get(f, key, values);
	if (!s) {
		atomic_fetch_add(&dropped, 1);
	} else if (op == OP_ADD) {
		s->value += v;
	} else if (op == OP_SET) {
		s->value = v;
	} else {
		size_t b = 0;

		while (b < def->n_buckets && v > def->buckets[b])
			b++;
		s->count[b]++;
		s->sum += v;
		s->n++;
	}
	pthread_mutex_unlock(&f->lock);
}

void fbc_metric_add(const fbc_metric_def *def, const char *const *values, double v)
{
	record(def, values, v, OP_ADD);
}

void fbc_metric_set(const fbc_metric_def *def, const char *const *values, double v)
{
	record(def, values, v, OP_SET);
}

void fbc_metric_observe(const fbc_metric_def *def, const char *const *values, double v)
{
	record(def, values, v, OP_OBSERVE);
}

int fbc_metrics_add_collector(fbc_metrics_collect_fn fn, void *ctx)
{
	int rc = 0;

	pthread_mutex_lock(&reg_lock);
	if (n_collectors >= sizeof(collectors) / sizeof(collectors[0])) {
		rc = FBC_ELIMIT;
	} else {
		collectors[n_collectors].fn = fn;
		collectors[n_collectors].ctx = ctx;
		n_collectors++;
	}
	pthread_mutex_unlock(&reg_lock);
	return rc;
}

void fbc_metrics_remove_collector(fbc_metrics_collect_fn fn, void *ctx)
{
	pthread_mutex_lock(&reg_lock);
	for (size_t i = 0; i < n_collectors; i++) {
		if (collectors[i].fn == fn && collectors[i].ctx == ctx) {
			memmove(&collectors[i], &collectors[i + 1],
				(n_collectors - i - 1) * sizeof(collectors[0]));
			n_collectors--;
			break;
		}
	}
	pthread_mutex_unlock(&reg_lock);
}

/* ------------------------------------------------------------- exposition */

/* The shortest %g text that reads back as v (as Go's strconv writes floats:
 * le="0.1", not "0.10000000000000001"). */
static const char *shortest(double v, char *buf, size_t size)
{
	for (int prec = 1; prec <= 17; prec++) {
		snprintf(buf, size, "%.*g", prec, v);
		if (strtod(buf, NULL) == v)
			break;
	}
	return buf;
}

static int put_number(fbc_buf *out, double v)
{
	if (isnan(v))
		return fbc_buf_puts(out, "NaN");
	if (isinf(v))
		return fbc_buf_puts(out, v > 0 ? "+Inf" : "-Inf");
	if (v == floor(v) && fabs(v) < 1e15)
		return fbc_buf_printf(out, "%.0f", v);
	return fbc_buf_printf(out, "%s", shortest(v, (char[32]){0}, 32));
}

/* Label values escape backslash, double quote and newline; HELP text
 * backslash and newline (exposition format 0.0.4). */
static int put_escaped(fbc_buf *out, const char *s, bool quote)
{
	int rc = 0;

	for (; *s && !rc; s++) {
		if (*s == '\\')
			rc = fbc_buf_puts(out, "\\\\");
		else if (*s == '\n')
			rc = fbc_buf_puts(out, "\\n");
		else if (*s == '"' && quote)
			rc = fbc_buf_puts(out, "\\\"");
		else
			rc = fbc_buf_putc(out, *s);
	}
	return rc;
}

int fbc_metrics_put_header(fbc_buf *out, const char *name, const char *help, fbc_metric_type type)
{
	int rc = fbc_buf_printf(out, "# HELP %s ", name);

	if (!rc)
		rc = put_escaped(out, help, false);
	if (!rc)
		rc = fbc_buf_printf(out, "\n# TYPE %s %s\n", name,
				    type == FBC_METRIC_COUNTER ? "counter"
				    : type == FBC_METRIC_GAUGE ? "gauge"
							       : "histogram");
	return rc;
}

/* name{l1="v1",...,extra="x"} value */
static int put_line(fbc_buf *out, const char *name, const char *suffix, const char *const *names,
		    const char *const *values, size_t n, const char *extra_name,
		    const char *extra_value, double v)
{
	int rc = fbc_buf_printf(out, "%s%s", name, suffix);
	bool any = n > 0 || extra_name;

	if (!rc && any)
		rc = fbc_buf_putc(out, '{');
	for (size_t i = 0; !rc && i < n; i++) {
		rc = fbc_buf_printf(out, "%s%s=\"", i ? "," : "", names[i]);
		if (!rc)
			rc = put_escaped(out, values[i], true);
		if (!rc)
			rc = fbc_buf_putc(out, '"');
	}
	if (!rc && extra_name)
		rc = fbc_buf_printf(out, "%s%s=\"%s\"", n ? "," : "", extra_name, extra_value);
	if (!rc && any)
		rc = fbc_buf_putc(out, '}');
	if (!rc)
		rc = fbc_buf_putc(out, ' ');
	if (!rc)
		rc = put_number(out, v);
	if (!rc)
		rc = fbc_buf_putc(out, '\n');
	return rc;
}

int fbc_metrics_put_sample(fbc_buf *out, const char *name, const char *const *label_pairs, double v)
{
	const char *names[FBC_METRICS_MAX_LABELS * 2], *values[FBC_METRICS_MAX_LABELS * 2];
	size_t n = 0;

	while (label_pairs && label_pairs[2 * n] && n < FBC_METRICS_MAX_LABELS * 2) {
		names[n] = label_pairs[2 * n];
		values[n] = label_pairs[2 * n + 1];
		n++;
	}
	return put_line(out, name, "", names, (const char *const *)values, n, NULL, NULL, v);
}

static int cmp_family(const void *a, const void *b)
{
	return strcmp((*(const family *const *)a)->def->name,
		      (*(const family *const *)b)->def->name);
}

static int cmp_series(const void *a, const void *b)
{
	return strcmp((*(const series *const *)a)->key, (*(const series *const *)b)->key);
}

static int write_family(fbc_buf *out, family *f)
{
	const fbc_metric_def *d = f->def;
	const series **order = NULL;
	int rc;

	pthread_mutex_lock(&f->lock);
	rc = fbc_metrics_put_header(out, d->name, d->help, d->type);
	if (!rc && f->len && !(order = malloc(f->len * sizeof(*order))))
		rc = FBC_ENOMEM;
	for (size_t i = 0; !rc && i < f->len; i++)
		order[i] = &f->items[i];
	if (!rc && f->len > 1)
		qsort(order, f->len, sizeof(*order), cmp_series);
	for (size_t i = 0; !rc && i < f->len; i++) {
		const series *s = order[i];
		const char *const *vals = (const char *const *)s->values;

		if (d->type != FBC_METRIC_HISTOGRAM) {
			rc = put_line(out, d->name, "", d->labels, vals, f->n_labels, NULL, NULL,
				      s->value);
			continue;
		}
		uint64_t cum = 0;
		for (size_t b = 0; !rc && b <= d->n_buckets; b++) {
			char le[64];

			cum += s->count[b];
			if (b == d->n_buckets)
				snprintf(le, sizeof(le), "+Inf");
			else
				shortest(d->buckets[b], le, sizeof(le));
			rc = put_line(out, d->name, "_bucket", d->labels, vals, f->n_labels, "le",
				      le, (double)cum);
		}
		if (!rc)
			rc = put_line(out, d->name, "_sum", d->labels, vals, f->n_labels, NULL,
				      NULL, s->sum);
		if (!rc)
			rc = put_line(out, d->name, "_count", d->labels, vals, f->n_labels, NULL,
				      NULL, (double)s->n);
	}
	pthread_mutex_unlock(&f->lock);
	free(order);
	return rc;
}

int fbc_metrics_write(fbc_buf *out)
{
	static const fbc_metric_def dropped_def = {
		.name = "fbcd_metrics_dropped_total",
		.help = "Metric values dropped because a family reached its series bound.",
		.type = FBC_METRIC_COUNTER};
	struct {
		fbc_metrics_collect_fn fn;
		void *ctx;
	} cs[16];
	size_t n, nc;
	int rc = 0;

	family *fams[FBC_METRICS_MAX_FAMILIES];

	fbc_metric_set(&dropped_def, NULL, (double)atomic_load(&dropped));
	pthread_mutex_lock(&reg_lock);
	n = n_all;
	memcpy(fams, all, n * sizeof(all[0]));
	nc = n_collectors;
	memcpy(cs, collectors, nc * sizeof(cs[0]));
	pthread_mutex_unlock(&reg_lock);
	qsort(fams, n, sizeof(fams[0]), cmp_family);
	for (size_t i = 0; !rc && i < n; i++)
		rc = write_family(out, fams[i]);
	for (size_t i = 0; !rc && i < nc; i++) {
		size_t mark = out->len;

		if (cs[i].fn(cs[i].ctx, out) != 0) { /* drop that collector's partial text */
			out->len = mark;
			if (out->data)
				out->data[mark] = '\0';
		}
	}
	return rc;
}

/* ------------------------------------------------------- process metrics */

static long clock_ticks(void)
{
	long t = sysconf(_SC_CLK_TCK);

	return t > 0 ? t : 100;
}

int fbc_metrics_collect_process(void *ctx, fbc_buf *out)
{
	char buf[4096];
	FILE *f;
	size_t n;
	double utime = 0, stime = 0, start = 0, vsize = 0, rss = 0, boot = 0;
	long page = sysconf(_SC_PAGESIZE);
	size_t fds = 0;
	struct rlimit rl;
	DIR *d;
	int rc = 0;

	(void)ctx;
	f = fopen("/proc/self/stat", "r");
	if (!f)
		return FBC_EIO;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	/* fields after the command name, which may hold spaces and ')' */
	char *p = strrchr(buf, ')');
	if (!p)
		return FBC_EIO;
	p += 2;
	for (int field = 3; *p && field <= 24; field++) {
		char *end;
		double v = strtod(p, &end);

		if (field == 14)
			utime = v;
		else if (field == 15)
			stime = v;
		else if (field == 22)
			start = v;
		else if (field == 23)
			vsize = v;
		else if (field == 24)
			rss = v;
		p = end;
		while (*p == ' ')
			p++;
	}
	f = fopen("/proc/stat", "r");
	while (f && fgets(buf, sizeof(buf), f)) {
		if (strncmp(buf, "btime ", 6) == 0) {
			boot = strtod(buf + 6, NULL);
			break;
		}
	}
	if (f)
		fclose(f);
	if ((d = opendir("/proc/self/fd")) != NULL) {
		struct dirent *de;

		while ((de = readdir(d)) != NULL)
			if (de->d_name[0] != '.')
				fds++;
		closedir(d);
		fds = fds ? fds - 1 : 0; /* the directory stream itself */
	}
	if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
		rl.rlim_cur = 0;
#define PUT(name, help, type, value)                                         \
	do {                                                                 \
		if (!rc)                                                     \
			rc = fbc_metrics_put_header(out, name, help, type);  \
		if (!rc)                                                     \
			rc = fbc_metrics_put_sample(out, name, NULL, value); \
	} while (0)
	PUT("process_cpu_seconds_total", "Total user and system CPU time spent in seconds.",
	    FBC_METRIC_COUNTER, (utime + stime) / (double)clock_ticks());
	PUT("process_resident_memory_bytes", "Resident memory size in bytes.", FBC_METRIC_GAUGE,
	    rss * (double)page);
	PUT("process_virtual_memory_bytes", "Virtual memory size in bytes.", FBC_METRIC_GAUGE,
	    vsize);
	PUT("process_open_fds", "Number of open file descriptors.", FBC_METRIC_GAUGE, (double)fds);
	PUT("process_max_fds", "Maximum number of open file descriptors.", FBC_METRIC_GAUGE,
	    (double)rl.rlim_cur);
	PUT("process_start_time_seconds", "Start time of the process since unix epoch in seconds.",
	    FBC_METRIC_GAUGE, boot + start / (double)clock_ticks());
#undef PUT
	return rc;
}

void fbc_metrics_set_enabled(bool on)
{
	atomic_store(&enabled, on);
}

void fbc_metrics_reset(void)
{
	pthread_mutex_lock(&reg_lock);
	for (size_t i = 0; i < n_all; i++) {
		family *f = all[i];

		for (size_t s = 0; s < f->len; s++) {
			for (size_t l = 0; l < f->n_labels; l++)
				free(f->items[s].values[l]);
			free(f->items[s].values);
			free(f->items[s].key);
			free(f->items[s].count);
		}
		free(f->items);
		free(f->index);
		pthread_mutex_destroy(&f->lock);
		free(f);
		all[i] = NULL;
	}
	for (size_t i = 0; i < FAMILY_SLOTS; i++)
		atomic_store(&slots[i], NULL);
	n_all = 0;
	n_collectors = 0;
	atomic_store(&dropped, 0);
	pthread_mutex_unlock(&reg_lock);
}
