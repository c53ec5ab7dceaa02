/* The table of job kinds (kind -> handler) that `fbcd serve` and `fbcd
 * worker` run, and the diagnostic "noop" kind. */
#include "pipeline/queue/queue.h"
#include "pipeline/ingest/ingest.h"
#include "pipeline/publish/publish.h"
#include "pipeline/review/review.h"
#include "service/base/log.h"

#include <stdio.h>
#include <time.h>

#define NOOP_SLEEP_MAX 600000

static int noop_run(fbc_queue_ctx *ctx, json_t *payload, char **result, fbc_error *err)
{
	json_t *s = json_object_get(payload, "sleepMs"),
	       *f = json_object_get(payload, "failAttempts");
	long long ms = json_is_integer(s) ? json_integer_value(s) : 0;
	long long fails = json_is_integer(f) ? json_integer_value(f) : 0;
	struct timespec ts;

	(void)result;
	if (ms < 0 || ms > NOOP_SLEEP_MAX)
		return fbc_error_set(err, FBC_EINVAL, "sleepMs", "sleepMs is 0 to %d",
				     NOOP_SLEEP_MAX);
	fbc_log(FBC_LOG_INFO,
		(fbc_log_field[]){FBC_LOG_STR("job_key", ctx->job->key),
				  FBC_LOG_NUM("attempt", ctx->job->attempts)},
		2, "noop job");
	ts.tv_sec = ms / 1000;
	ts.tv_nsec = (long)(ms % 1000) * 1000000L;
	while (nanosleep(&ts, &ts) != 0)
		;
	if (ctx->job->attempts <= fails)
		return fbc_error_set(err, FBC_EUNAVAIL, "noop",
				     "failing attempt %d of %lld on purpose", ctx->job->attempts,
				     fails);
	return 0;
}

static const fbc_queue_kind kinds[] = {
	{"noop", noop_run, true},
	{"repo.ingest", fbc_ingest_run, false},
	{"repo.poll", fbc_poll_run, false},
	{"pr.check", fbc_review_check_run, false},
	{"forge.report", fbc_review_report_run, false},
	{"pr.merge", fbc_review_merge_run, false},
	{"catalog.publish", fbc_publish_run, false},
};

const fbc_queue_kind *fbc_queue_builtin_kinds(size_t *n)
{
	*n = sizeof(kinds) / sizeof(kinds[0]);
	return kinds;
}
