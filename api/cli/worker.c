/* fbcd worker: job workers only (no HTTP server), for scaling the pipeline
 * out over more processes or machines sharing one PostgreSQL. Takes the
 * options of `fbcd serve` (--database-url is required: an embedded cluster
 * belongs to one serve process). */
#include "api/cli/cli.h"
#include "api/cli/util.h"
#include "service/base/log.h"

#include "api/http/config.h"
#include "api/http/handlers.h"
#include "db/db.h"
#include "pipeline/git/mirror.h"
#include "pipeline/ingest/ingest.h"
#include "pipeline/queue/queue.h"

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

/* A job of this process made a revision: the server's "latest" answers
 * must not wait for their cache to expire. */
static void revision_created(void *app, const char *catalog)
{
	(void)catalog;
	fbc_http_app_forget_revisions(app);
}

int fbc_cli_queue_start(fbc_queue **out, fbc_db *db, const fbc_http_config *cfg, void *app,
			fbc_error *err)
{
	static fbc_pipeline_env env; /* one queue per process */
	fbc_queue_options qo;

	env.data_dir = cfg->data_dir;
	env.public_url = cfg->public_url;
	env.ca_file = cfg->ca_file;
	int rc = fbc_git_tls_init(cfg->ca_file, err);
	if (rc)
		return rc;
	if (app) {
		env.revision_created = revision_created;
		env.revision_created_ctx = app;
	}
	memset(&qo, 0, sizeof(qo));
	qo.workers = cfg->workers < 0 ? 0 : (unsigned)cfg->workers;
	qo.lease_ms = cfg->job_lease_s * 1000;
	qo.poll_ms = cfg->job_poll_ms;
	qo.retry_base_ms = cfg->retry_base_ms;
	qo.kinds = fbc_queue_builtin_kinds(&qo.n_kinds);
	qo.app = &env;
	qo.log = true;
	qo.tick = fbc_poll_schedule;
	return fbc_queue_start(out, db, &qo, err);
}

int fbc_cmd_worker(int argc, char **argv)
{
	fbc_http_config cfg;
	fbc_error err;
	fbc_db *db = NULL;
	fbc_queue *queue = NULL;
	fbc_db_options dopt;
	sigset_t sigs;
	int status = 2, rc, sig = 0;

	fbc_http_config_init(&cfg);
	fbc_error_init(&err);
	rc = fbc_http_config_from_args(&cfg, argc, argv, &err);
	if (rc == 1) {
		status = 0;
		goto done;
	}
	if (rc != 0) {
		fbc_cli_report("worker", &err, NULL);
		goto done;
	}
	if (!cfg.database_url) {
		fprintf(stderr, "fbcd worker: --database-url (or FBCD_DATABASE_URL) is required\n");
		goto done;
	}
	fbc_cli_log_setup(cfg.log_format);
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGINT);
	pthread_sigmask(SIG_BLOCK, &sigs, NULL);
	signal(SIGPIPE, SIG_IGN);

	memset(&dopt, 0, sizeof(dopt));
	dopt.url = cfg.database_url;
	dopt.pool_size = cfg.pool_size;
	dopt.migrate = true;
	if (fbc_db_open(&db, &dopt, &err) != 0) {
		fbc_cli_report("worker", &err, NULL);
		goto done;
	}
	if (cfg.workers == 0)
		cfg.workers = -1;
	if (fbc_cli_queue_start(&queue, db, &cfg, NULL, &err) != 0) {
		fbc_cli_report("worker", &err, NULL);
		goto done;
	}
	fbc_cli_notify("READY=1\nSTATUS=running jobs");
	while (sigwait(&sigs, &sig) != 0 || (sig != SIGTERM && sig != SIGINT))
		;
	fbc_cli_notify("STOPPING=1\nSTATUS=finishing running jobs");
	fbc_log(FBC_LOG_INFO,
		(fbc_log_field[]){FBC_LOG_STR("signal", sig == SIGTERM ? "SIGTERM" : "SIGINT")}, 1,
		"stopping: finishing running jobs");
	status = 0;
done:
	fbc_queue_stop(queue);
	fbc_log_flush();
	fbc_db_close(db);
	fbc_http_config_dispose(&cfg);
	return status;
}
