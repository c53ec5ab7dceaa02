/* fbcd serve: configuration, database (external or embedded), HTTP server,
 * and a clean stop on SIGTERM/SIGINT. */
#include "api/cli/cli.h"
#include "api/cli/util.h"

#include "api/http/http.h"
#include "api/http/app.h"
#include "api/http/config.h"
#include "api/http/content.h"
#include "api/http/handlers.h"
#include "db/db.h"
#include "db/embedded.h"
#include "db/gitops.h"
#include "pipeline/queue/queue.h"
#include "service/base/log.h"
#include "service/base/metrics.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#define GRACE_MS 30000
/* how long a resolved current revision is reused (see http_api.h) */
#define REV_TTL_MS 1000

static void print_routes(void)
{
	size_t n;
	const fbc_http_route *r = fbc_http_api_routes(&n);

	for (size_t i = 0; i < n; i++)
		printf("%s %s %s\n", r[i].method, r[i].pattern, r[i].operation_id);
}

static int make_dir(const char *path, fbc_error *err)
{
	if (mkdir(path, 0700) != 0 && errno != EEXIST)
		return fbc_error_set(err, FBC_EIO, path, "cannot create directory: %s",
				     strerror(errno));
	return 0;
}

/* The configuration file's `repositories:` are upserted (origin "config")
 * at start-up; an invalid one stops the server with its index and field. */
static int store_repositories(fbc_db *db, const fbc_http_config *cfg, fbc_error *err)
{
	size_t i;
	json_t *spec;

	if (!json_is_array(cfg->repositories))
		return fbc_error_set(err, FBC_EINVAL, cfg->config_file, "repositories: a list");
	json_array_foreach(cfg->repositories, i, spec)
	{
		json_t *copy = json_deep_copy(spec), *out = NULL;
		int rc;

		if (!copy)
			return fbc_error_set(err, FBC_ENOMEM, "repositories", "out of memory");
		rc = fbc_http_repo_publish_check(copy, err);
		if (rc == 0)
			rc = fbc_db_repo_put(&out, db, copy, "config", true, err);
		json_decref(copy);
		json_decref(out);
		if (rc != 0) {
			fbc_error_prefix(err, "%s: repositories[%zu]: %s",
					 cfg->config_file ? cfg->config_file : "config", i,
					 err->where);
			return rc;
		}
	}
	fprintf(stderr, "fbcd serve: %zu repositories from the configuration\n",
		json_array_size(cfg->repositories));
	return 0;
}

/* One fbcd serve per data dir: an exclusive lock on DIR/fbcd.lock, held
 * (and released by the kernel however the process ends) for its lifetime.
 * Holding it means that anything left in the data dir, a running embedded
 * PostgreSQL included, was left by an fbcd that is gone. */
static int lock_data_dir(int *fd_out, const char *data_dir, fbc_error *err)
{
	char path[4200];
	int fd;

	if ((size_t)snprintf(path, sizeof(path), "%s/fbcd.lock", data_dir) >= sizeof(path))
		return fbc_error_set(err, FBC_EINVAL, data_dir, "data dir path too long");
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0)
		return fbc_error_set(err, FBC_EIO, path, "cannot open: %s", strerror(errno));
	if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
		int e = errno;
		close(fd);
		if (e == EWOULDBLOCK)
			return fbc_error_set(err, FBC_ECONFLICT, data_dir,
					     "another fbcd serve is using this data dir");
		return fbc_error_set(err, FBC_EIO, path, "cannot lock: %s", strerror(e));
	}
	*fd_out = fd;
	return 0;
}

/* Uploads being extracted when a previous fbcd died are never cleaned by it. */
static void clear_tmp(const char *tmp_dir)
{
	DIR *d = opendir(tmp_dir);
	struct dirent *de;
	char path[4400];
	unsigned n = 0;

	if (!d)
		return;
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if ((size_t)snprintf(path, sizeof(path), "%s/%s", tmp_dir, de->d_name) >=
		    sizeof(path))
			continue;
		if (fbc_http_rmtree(path) == 0)
			n++;
	}
	closedir(d);
	if (n)
		fprintf(stderr, "fbcd serve: removed %u stale temporary entr%s from %s\n", n,
			n == 1 ? "y" : "ies", tmp_dir);
}

int fbc_cmd_serve(int argc, char **argv)
{
	fbc_http_config cfg;
	fbc_error err;
	fbc_db_embedded *emb = NULL;
	fbc_db *db = NULL;
	fbc_http_server *srv = NULL;
	fbc_queue *queue = NULL;
	fbc_http_app app;
	fbc_http_budget budget;
	bool app_ok = false;
	char tmp_dir[4096];
	sigset_t sigs;
	int status = 2, rc, sig = 0, lock_fd = -1;

	fbc_http_config_init(&cfg);
	fbc_error_init(&err);
	rc = fbc_http_config_from_args(&cfg, argc, argv, &err);
	if (rc == 1) {
		status = 0;
		goto done;
	}
	if (rc != 0) {
		fbc_cli_report("serve", &err, NULL);
		goto done;
	}
	if (cfg.print_routes || cfg.print_openapi) {
		if (cfg.print_routes)
			print_routes();
		if (cfg.print_openapi)
			printf("%.*s\n", (int)fbc_http_openapi_json_len, fbc_http_openapi_json);
		status = 0;
		goto done;
	}

	{
		fbc_log_format lf =
			cfg.log_format < 0 ? FBC_LOG_TEXT : (fbc_log_format)cfg.log_format;

		if (cfg.log_format < 0)
			fbc_log_format_parse(&lf, "auto", NULL);
		fbc_log_configure(lf, FBC_LOG_INFO, NULL);
	}

	/* Signals are taken synchronously by the main thread only: block them
	 * before any thread (pool, HTTP workers) exists so they inherit the mask. */
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGINT);
	pthread_sigmask(SIG_BLOCK, &sigs, NULL);
	signal(SIGPIPE, SIG_IGN);

	if ((rc = make_dir(cfg.data_dir, &err)) != 0) {
		fbc_cli_report("serve", &err, NULL);
		goto done;
	}
	if (lock_data_dir(&lock_fd, cfg.data_dir, &err) != 0) {
		fbc_cli_report("serve", &err, NULL);
		goto done;
	}
	if ((size_t)snprintf(tmp_dir, sizeof(tmp_dir), "%s/tmp", cfg.data_dir) >= sizeof(tmp_dir) ||
	    make_dir(tmp_dir, &err) != 0) {
		fbc_cli_report("serve", &err, NULL);
		goto done;
	}
	clear_tmp(tmp_dir);
	if (!cfg.database_url) {
		fbc_log(FBC_LOG_INFO, (fbc_log_field[]){FBC_LOG_STR("data_dir", cfg.data_dir)}, 1,
			"no database URL: starting the embedded PostgreSQL");
		if (fbc_db_embedded_start(&emb, cfg.data_dir, &err) != 0) {
			fbc_cli_report("serve", &err, NULL);
			goto done;
		}
	}
	fbc_db_options dopt;
	memset(&dopt, 0, sizeof(dopt));
	dopt.url = cfg.database_url ? cfg.database_url : fbc_db_embedded_url(emb);
	dopt.pool_size = cfg.pool_size;
	dopt.migrate = true;
	if (fbc_db_open(&db, &dopt, &err) != 0) {
		fbc_cli_report("serve", &err, NULL);
		goto done;
	}
	if (cfg.admin_token && cfg.admin_token[0] &&
	    fbc_db_token_seed(db, cfg.admin_token, FBC_DB_SCOPE_ADMIN, &err) != 0) {
		fbc_cli_report("serve", &err, NULL);
		goto done;
	}
	if (cfg.repositories && store_repositories(db, &cfg, &err) != 0) {
		fbc_cli_report("serve", &err, NULL);
		goto done;
	}
	if (fbc_http_app_init(&app, db, tmp_dir, cfg.cache_bytes, REV_TTL_MS) != 0) {
		fprintf(stderr, "fbcd serve: cannot initialise\n");
		goto done;
	}
	app_ok = true;
	app.metrics_auth = cfg.metrics_auth;
	fbc_metrics_set_enabled(!cfg.metrics_off);
	if (fbc_metrics_add_collector(fbc_metrics_collect_process, NULL) != 0 ||
	    fbc_http_app_metrics_start(&app) != 0) {
		fprintf(stderr, "fbcd serve: cannot register the metrics collectors\n");
		goto done;
	}

	size_t n_routes;
	fbc_http_server_opts sopt;
	fbc_http_budget_init(&budget, cfg.upload_budget);
	memset(&sopt, 0, sizeof(sopt));
	sopt.listen = cfg.listen;
	sopt.threads = cfg.threads;
	sopt.max_body = cfg.max_body;
	sopt.max_body_anon = cfg.max_body_anon;
	sopt.max_extract = cfg.max_extract;
	sopt.max_extract_anon = cfg.max_extract_anon;
	sopt.budget = &budget;
	sopt.max_connections = cfg.max_connections;
	sopt.max_connections_per_ip = cfg.max_connections_per_ip;
	sopt.header_timeout_s = cfg.header_timeout_s;
	sopt.idle_timeout_s = cfg.idle_timeout_s;
	sopt.head_deadline_s = cfg.head_deadline_s;
	sopt.read_auth = cfg.read_auth;
	sopt.auth = fbc_http_api_auth;
	sopt.app = &app;
	sopt.routes = fbc_http_api_routes(&n_routes);
	sopt.n_routes = n_routes;
	sopt.access_log = cfg.access_log;
	if (fbc_http_server_start(&srv, &sopt, &err) != 0) {
		fbc_cli_report("serve", &err, NULL);
		goto done;
	}
	if (cfg.workers != 0 && fbc_cli_queue_start(&queue, db, &cfg, &app, &err) != 0) {
		fbc_cli_report("serve", &err, NULL);
		goto done;
	}
	fbc_log(FBC_LOG_INFO,
		(fbc_log_field[]){FBC_LOG_STR("listen", cfg.listen),
				  FBC_LOG_NUM("port", fbc_http_server_port(srv)),
				  FBC_LOG_STR("reads", cfg.read_auth ? "token" : "open"),
				  FBC_LOG_STR("metrics", cfg.metrics_auth ? "token" : "open")},
		4, "listening");
	fbc_cli_notify("READY=1\nSTATUS=serving");

	while (sigwait(&sigs, &sig) != 0 || (sig != SIGTERM && sig != SIGINT))
		;
	fbc_log(FBC_LOG_INFO,
		(fbc_log_field[]){FBC_LOG_STR("signal", sig == SIGTERM ? "SIGTERM" : "SIGINT")}, 1,
		"stopping: finishing in-flight requests");
	fbc_cli_notify("STOPPING=1\nSTATUS=finishing in-flight requests");
	status = 0;
done:
	fbc_http_server_stop(srv, GRACE_MS);
	fbc_queue_stop(queue);
	if (app_ok)
		fbc_http_app_dispose(&app);
	fbc_db_close(db);
	fbc_db_embedded_stop(emb);
	fbc_metrics_remove_collector(fbc_metrics_collect_process, NULL);
	if (status == 0 && sig)
		fbc_log(FBC_LOG_INFO, NULL, 0, "stopped");
	fbc_log_flush();
	fbc_http_config_dispose(&cfg);
	if (lock_fd >= 0)
		close(lock_fd);
	return status;
}
