/*
 * Configuration of `fbcd serve`: defaults, then an optional YAML file, then
 * environment variables, then command-line flags (later wins).
 *
 *   flag               env                 YAML key
 *   --listen           FBCD_LISTEN         listen          ADDR:PORT (127.0.0.1:8080)
 *   --database-url     FBCD_DATABASE_URL   databaseURL     libpq URL; none = embedded PostgreSQL
 *   --data-dir         FBCD_DATA_DIR       dataDir         embedded cluster + temp files
 *   --config           FBCD_CONFIG         -               the YAML file
 *   --read-auth        FBCD_READ_AUTH      readAuth        open | token
 *   (none)             FBCD_ADMIN_TOKEN    adminToken      seeded as an admin token
 *   --threads          FBCD_THREADS        threads         0 = thread per connection, N = pool
 *   --max-body         FBCD_MAX_BODY       maxBodyBytes    request body limit (writers)
 *   --max-body-anonymous FBCD_MAX_BODY_ANONYMOUS maxBodyBytesAnonymous  (everyone else)
 *   --max-extract      FBCD_MAX_EXTRACT    maxExtractBytes archive bytes extracted (writers)
 *   --max-extract-anonymous FBCD_MAX_EXTRACT_ANONYMOUS maxExtractBytesAnonymous
 *   --upload-budget    FBCD_UPLOAD_BUDGET  uploadBudgetBytes  bodies + extraction in flight
 *   --max-connections  FBCD_MAX_CONNECTIONS maxConnections
 *   --max-connections-per-ip FBCD_MAX_CONNECTIONS_PER_IP maxConnectionsPerIP (0 = off)
 *   --header-timeout   FBCD_HEADER_TIMEOUT headerTimeoutSeconds  silence before the head
 *   --idle-timeout     FBCD_IDLE_TIMEOUT   idleTimeoutSeconds    silence after it
 *   --pool-size        FBCD_POOL_SIZE      poolSize        database connections
 *   --access-log       FBCD_ACCESS_LOG     accessLog       true | false
 *   --cache-bytes      FBCD_CACHE_BYTES    cacheBytes      response cache (0 = off)
 *   --workers          FBCD_WORKERS        workers         job worker threads (default: CPUs)
 *   --job-lease        FBCD_JOB_LEASE      jobLeaseSeconds lease of a running job (30)
 *   --job-poll-ms      FBCD_JOB_POLL_MS    jobPollMs       idle polling fallback (2000)
 *   --retry-base-ms    FBCD_RETRY_BASE_MS  retryBaseMs     first retry backoff (1000)
 *   --log-format       FBCD_LOG_FORMAT     logFormat       text | json | auto (auto)
 *   --metrics-auth     FBCD_METRICS_AUTH   metricsAuth     open | token (open)
 *   --metrics          FBCD_METRICS        metrics         on | off (on)
 *
 * The YAML file may also hold `repositories:`, a list of repository
 * documents (pipeline.md §2, the JSON of POST /v1/repositories written in
 * YAML); they are kept as JSON in `repositories` and stored by `serve` at
 * start-up (origin "config").
 * Errors name their origin: "FILE:LINE: key 'x': ..." for the YAML file,
 * "FBCD_X: ..." for the environment, "--flag: ..." for flags.
 * Ownership: every string is owned by the config (fbc_http_config_dispose).
 * Not thread-safe; built once at start-up.
 */
#ifndef FBC_API_HTTP_CONFIG_H
#define FBC_API_HTTP_CONFIG_H

#include "service/base/error.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

typedef struct fbc_http_config {
	char *listen;
	char *database_url; /* NULL: embedded PostgreSQL under data_dir */
	char *data_dir;
	char *public_url; /* links in forge reports; NULL: none */
	char *ca_file;	  /* PEM bundle trusted instead of the system CAs for
			   * git fetches, forge API calls and registries; NULL: system */
	char *config_file;
	char *admin_token;
	bool read_auth; /* reads need a token with the read scope */
	unsigned threads;
	size_t max_body;
	size_t max_body_anon;
	unsigned long long max_extract;
	unsigned long long max_extract_anon;
	unsigned long long upload_budget;
	unsigned max_connections;
	unsigned max_connections_per_ip;
	unsigned header_timeout_s;
	unsigned idle_timeout_s;
	unsigned head_deadline_s; /* 0 = none */
	/* YAML alias expansion bound of every load (0 = built-in default) */
	unsigned long long yaml_expand_ratio;
	unsigned long long yaml_expand_max;
	unsigned pool_size;
	bool access_log;
	size_t cache_bytes;
	json_t *repositories; /* array from the file's `repositories:`, or NULL */
	int workers;	      /* -1 = number of CPUs; 0 = none (serve only) */
	unsigned job_lease_s, job_poll_ms, retry_base_ms;
	int log_format;	    /* -1 auto (text on a terminal, json otherwise), else fbc_log_format */
	bool metrics_auth;  /* GET /metrics needs a token with the read scope */
	bool metrics_off;   /* --metrics off: nothing is recorded */
	bool print_routes;  /* --print-routes: list the route table and exit */
	bool print_openapi; /* --print-openapi: print the embedded document and exit */
} fbc_http_config;

void fbc_http_config_init(fbc_http_config *c);
void fbc_http_config_dispose(fbc_http_config *c);

/* Set one setting by its YAML key name from text; origin prefixes errors. */
int fbc_http_config_set(fbc_http_config *c, const char *key, const char *value, const char *origin,
			fbc_error *err);
/* Apply the YAML file at path (a mapping of scalar keys to scalar values). */
int fbc_http_config_load_file(fbc_http_config *c, const char *path, fbc_error *err);
/* Apply the FBCD_* variables from the environment. */
int fbc_http_config_load_env(fbc_http_config *c, fbc_error *err);

/* Full precedence chain for `fbcd serve ARGS`: defaults, --config/FBCD_CONFIG
 * file, environment, flags. Returns 1 when --help was printed, 0 to run. */
int fbc_http_config_from_args(fbc_http_config *c, int argc, char **argv, fbc_error *err);

#endif
