/* `fbcd serve` configuration: YAML file, environment, flags. */
#include "api/http/config.h"

#include "service/base/log.h"
#include "service/load/load.h"

#include <errno.h>
#include <getopt.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <yaml.h>

#define MAX_CONFIG_BYTES (1u << 20)
#define MAX_VALUE_BYTES	 4096

void fbc_http_config_init(fbc_http_config *c)
{
	memset(c, 0, sizeof(*c));
	c->threads = 0;
	c->max_body = 512u * 1024 * 1024;
	/* webhook deliveries (no token, signed) are up to 25 MiB */
	c->max_body_anon = 32u * 1024 * 1024;
	c->max_extract = 2ull << 30;
	c->max_extract_anon = 256ull << 20;
	c->upload_budget = 1ull << 30;
	c->max_connections = 1024;
	c->max_connections_per_ip = 128;
	c->header_timeout_s = 10;
	c->idle_timeout_s = 60;
	c->head_deadline_s = 30;
	c->pool_size = 16;
	c->cache_bytes = 256u * 1024 * 1024;
	c->workers = -1;
	c->job_lease_s = 30;
	c->job_poll_ms = 2000;
	c->retry_base_ms = 1000;
	c->log_format = -1;
}

void fbc_http_config_dispose(fbc_http_config *c)
{
	if (!c)
		return;
	free(c->listen);
	free(c->database_url);
	free(c->data_dir);
	free(c->public_url);
	free(c->ca_file);
	free(c->config_file);
	free(c->admin_token);
	json_decref(c->repositories);
	memset(c, 0, sizeof(*c));
}

static int set_str(char **slot, const char *value, const char *origin, const char *key,
		   fbc_error *err)
{
	char *s;

	if (strlen(value) > MAX_VALUE_BYTES)
		return fbc_error_set(err, FBC_ELIMIT, origin, "%s: value longer than %u bytes", key,
				     MAX_VALUE_BYTES);
	s = strdup(value);
	if (!s)
		return fbc_error_set(err, FBC_ENOMEM, origin, "out of memory");
	free(*slot);
	*slot = s;
	return 0;
}

static int parse_uint(unsigned long long *out, const char *value, unsigned long long min,
		      unsigned long long max, const char *origin, const char *key, fbc_error *err)
{
	char *end = NULL;
	unsigned long long v;

	errno = 0;
	if (value[0] < '0' || value[0] > '9')
		goto bad;
	v = strtoull(value, &end, 10);
	if (errno || *end || v < min || v > max)
		goto bad;
	*out = v;
	return 0;
bad:
	return fbc_error_set(err, FBC_EINVAL, origin,
			     "%s: '%s' is not an integer from %llu to %llu", key, value, min, max);
}

static int parse_bool(bool *out, const char *value, const char *origin, const char *key,
		      fbc_error *err)
{
	if (!strcmp(value, "true") || !strcmp(value, "1") || !strcmp(value, "yes")) {
		*out = true;
		return 0;
	}
	if (!strcmp(value, "false") || !strcmp(value, "0") || !strcmp(value, "no")) {
		*out = false;
		return 0;
	}
	return fbc_error_set(err, FBC_EINVAL, origin, "%s: '%s' is not true or false", key, value);
}

int fbc_http_config_set(fbc_http_config *c, const char *key, const char *value, const char *origin,
			fbc_error *err)
{
	unsigned long long v = 0;
	int rc;

	if (!strcmp(key, "listen"))
		return set_str(&c->listen, value, origin, key, err);
	if (!strcmp(key, "databaseURL")) {
		if (value[0] == '\0') {
			free(c->database_url);
			c->database_url = NULL;
			return 0;
		}
		return set_str(&c->database_url, value, origin, key, err);
	}
	if (!strcmp(key, "dataDir"))
		return set_str(&c->data_dir, value, origin, key, err);
	if (!strcmp(key, "publicURL")) {
		if (strncmp(value, "https://", 8) && strncmp(value, "http://", 7))
			return fbc_error_set(err, FBC_EINVAL, origin,
					     "%s: '%s' is not an http(s):// URL", key, value);
		return set_str(&c->public_url, value, origin, key, err);
	}
	if (!strcmp(key, "caFile")) {
		if (value[0] == '\0') {
			free(c->ca_file);
			c->ca_file = NULL;
			return 0;
		}
		return set_str(&c->ca_file, value, origin, key, err);
	}
	if (!strcmp(key, "adminToken"))
		return set_str(&c->admin_token, value, origin, key, err);
	if (!strcmp(key, "readAuth")) {
		if (!strcmp(value, "open")) {
			c->read_auth = false;
			return 0;
		}
		if (!strcmp(value, "token")) {
			c->read_auth = true;
			return 0;
		}
		return fbc_error_set(err, FBC_EINVAL, origin,
				     "%s: '%s' is neither 'open' nor 'token'", key, value);
	}
	if (!strcmp(key, "threads")) {
		rc = parse_uint(&v, value, 0, 64, origin, key, err);
		if (rc == 0)
			c->threads = (unsigned)v;
		return rc;
	}
	if (!strcmp(key, "maxBodyBytes")) {
		rc = parse_uint(&v, value, 1024, 16ull << 30, origin, key, err);
		if (rc == 0)
			c->max_body = (size_t)v;
		return rc;
	}
	static const struct {
		const char *key;
		unsigned long long min, max;
		size_t off, size;
	} nums[] = {
		{"maxBodyBytesAnonymous", 1024, 16ull << 30,
		 offsetof(fbc_http_config, max_body_anon), sizeof(size_t)},
		{"maxExtractBytes", 1 << 20, 1ull << 40, offsetof(fbc_http_config, max_extract),
		 sizeof(unsigned long long)},
		{"maxExtractBytesAnonymous", 1 << 20, 1ull << 40,
		 offsetof(fbc_http_config, max_extract_anon), sizeof(unsigned long long)},
		{"uploadBudgetBytes", 0, 1ull << 40, offsetof(fbc_http_config, upload_budget),
		 sizeof(unsigned long long)},
		{"maxConnections", 16, 1000000, offsetof(fbc_http_config, max_connections),
		 sizeof(unsigned)},
		{"maxConnectionsPerIP", 0, 1000000,
		 offsetof(fbc_http_config, max_connections_per_ip), sizeof(unsigned)},
		{"headerTimeoutSeconds", 1, 3600, offsetof(fbc_http_config, header_timeout_s),
		 sizeof(unsigned)},
		{"idleTimeoutSeconds", 1, 3600, offsetof(fbc_http_config, idle_timeout_s),
		 sizeof(unsigned)},
		{"headDeadlineSeconds", 0, 3600, offsetof(fbc_http_config, head_deadline_s),
		 sizeof(unsigned)},
		{"yamlExpandRatio", 1, 1000000, offsetof(fbc_http_config, yaml_expand_ratio),
		 sizeof(unsigned long long)},
		{"yamlExpandMaxBytes", 1 << 16, 1ull << 40,
		 offsetof(fbc_http_config, yaml_expand_max), sizeof(unsigned long long)},
	};
	for (size_t i = 0; i < sizeof(nums) / sizeof(nums[0]); i++) {
		if (strcmp(key, nums[i].key) != 0)
			continue;
		rc = parse_uint(&v, value, nums[i].min, nums[i].max, origin, key, err);
		if (rc != 0)
			return rc;
		char *slot = (char *)c + nums[i].off;
		if (nums[i].size == sizeof(unsigned)) {
			unsigned u = (unsigned)v;
			memcpy(slot, &u, sizeof(u));
		} else if (nums[i].size == sizeof(size_t)) {
			size_t z = (size_t)v;
			memcpy(slot, &z, sizeof(z));
		} else {
			memcpy(slot, &v, sizeof(v));
		}
		return 0;
	}
	if (!strcmp(key, "poolSize")) {
		rc = parse_uint(&v, value, 1, 256, origin, key, err);
		if (rc == 0)
			c->pool_size = (unsigned)v;
		return rc;
	}
	if (!strcmp(key, "cacheBytes")) {
		rc = parse_uint(&v, value, 0, 64ull << 30, origin, key, err);
		if (rc == 0)
			c->cache_bytes = (size_t)v;
		return rc;
	}
	if (!strcmp(key, "workers")) {
		rc = parse_uint(&v, value, 0, 64, origin, key, err);
		if (rc == 0)
			c->workers = (int)v;
		return rc;
	}
	if (!strcmp(key, "jobLeaseSeconds")) {
		rc = parse_uint(&v, value, 1, 3600, origin, key, err);
		if (rc == 0)
			c->job_lease_s = (unsigned)v;
		return rc;
	}
	if (!strcmp(key, "jobPollMs")) {
		rc = parse_uint(&v, value, 10, 600000, origin, key, err);
		if (rc == 0)
			c->job_poll_ms = (unsigned)v;
		return rc;
	}
	if (!strcmp(key, "retryBaseMs")) {
		rc = parse_uint(&v, value, 1, 600000, origin, key, err);
		if (rc == 0)
			c->retry_base_ms = (unsigned)v;
		return rc;
	}
	if (!strcmp(key, "repositories")) {
		if (value[0] == '\0')
			return 0; /* `repositories:` with nothing under it */
		return fbc_error_set(err, FBC_EINVAL, origin,
				     "%s: a list of repositories (only in the file)", key);
	}
	if (!strcmp(key, "accessLog"))
		return parse_bool(&c->access_log, value, origin, key, err);
	if (!strcmp(key, "logFormat")) {
		if (!strcmp(value, "auto"))
			c->log_format = -1;
		else if (!strcmp(value, "text"))
			c->log_format = FBC_LOG_TEXT;
		else if (!strcmp(value, "json"))
			c->log_format = FBC_LOG_JSON;
		else
			return fbc_error_set(err, FBC_EINVAL, origin,
					     "%s: '%s' is not text, json or auto", key, value);
		return 0;
	}
	if (!strcmp(key, "metrics")) {
		if (!strcmp(value, "on") || !strcmp(value, "off")) {
			c->metrics_off = !strcmp(value, "off");
			return 0;
		}
		return fbc_error_set(err, FBC_EINVAL, origin, "%s: '%s' is neither 'on' nor 'off'",
				     key, value);
	}
	if (!strcmp(key, "metricsAuth")) {
		if (!strcmp(value, "open") || !strcmp(value, "token")) {
			c->metrics_auth = !strcmp(value, "token");
			return 0;
		}
		return fbc_error_set(err, FBC_EINVAL, origin,
				     "%s: '%s' is neither 'open' nor 'token'", key, value);
	}
	return fbc_error_set(err, FBC_EINVAL, origin, "unknown setting '%s'", key);
}

static int read_file(char **out, size_t *len, const char *path, fbc_error *err)
{
	FILE *f = fopen(path, "rb");
	char *data = NULL;
	size_t n = 0;
	int rc;

	if (!f)
		return fbc_error_set(err, FBC_EIO, path, "cannot open: %s", strerror(errno));
	data = malloc(MAX_CONFIG_BYTES + 1);
	if (!data) {
		rc = fbc_error_set(err, FBC_ENOMEM, path, "out of memory");
		goto done;
	}
	n = fread(data, 1, MAX_CONFIG_BYTES + 1, f);
	if (ferror(f)) {
		rc = fbc_error_set(err, FBC_EIO, path, "cannot read: %s", strerror(errno));
		goto done;
	}
	if (n > MAX_CONFIG_BYTES) {
		rc = fbc_error_set(err, FBC_ELIMIT, path, "larger than %u bytes", MAX_CONFIG_BYTES);
		goto done;
	}
	data[n] = '\0';
	*out = data;
	*len = n;
	data = NULL;
	rc = 0;
done:
	free(data);
	fclose(f);
	return rc;
}

#define NODE_DEPTH_MAX 32
#define NODE_COUNT_MAX 100000

/* A plain YAML scalar as JSON: integers, booleans and null by their YAML
 * spelling; quoted scalars stay strings. */
static json_t *scalar_json(const yaml_event_t *ev)
{
	const char *s = (const char *)ev->data.scalar.value;
	size_t n = ev->data.scalar.length;

	if (ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE) {
		if (n == 0 || !strcmp(s, "null") || !strcmp(s, "~"))
			return json_null();
		if (!strcmp(s, "true"))
			return json_true();
		if (!strcmp(s, "false"))
			return json_false();
		if (n < 19 && strspn(s + (s[0] == '-'), "0123456789") == n - (s[0] == '-') &&
		    n > (size_t)(s[0] == '-')) {
			char *end = NULL;
			long long v = strtoll(s, &end, 10);
			if (end && !*end)
				return json_integer(v);
		}
	}
	return json_stringn(s, n);
}

/* Build the JSON of the node whose start event is *start (already taken
 * from the parser); consumes the events up to its end. */
static int node_json(json_t **out, yaml_parser_t *parser, yaml_event_t *start, int depth,
		     size_t *count, const char *path, fbc_error *err)
{
	char origin[FBC_ERROR_WHERE_MAX];
	json_t *node = NULL, *child = NULL;
	char *key = NULL;
	int rc = 0;

	snprintf(origin, sizeof(origin), "%s:%zu", path, start->start_mark.line + 1);
	if (++*count > NODE_COUNT_MAX || depth > NODE_DEPTH_MAX)
		return fbc_error_set(err, FBC_ELIMIT, origin,
				     "repositories: too large or too deep");
	switch (start->type) {
	case YAML_SCALAR_EVENT:
		if (!(*out = scalar_json(start)))
			return fbc_error_set(err, FBC_EINVAL, origin, "not valid UTF-8 text");
		return 0;
	case YAML_ALIAS_EVENT:
		return fbc_error_set(err, FBC_EINVAL, origin,
				     "repositories: aliases are not allowed");
	case YAML_SEQUENCE_START_EVENT:
		node = json_array();
		break;
	case YAML_MAPPING_START_EVENT:
		node = json_object();
		break;
	default:
		return fbc_error_set(err, FBC_EINVAL, origin, "unexpected YAML event");
	}
	if (!node)
		return fbc_error_set(err, FBC_ENOMEM, origin, "out of memory");
	for (;;) {
		yaml_event_t ev;
		if (!yaml_parser_parse(parser, &ev)) {
			snprintf(origin, sizeof(origin), "%s:%zu", path,
				 parser->problem_mark.line + 1);
			rc = fbc_error_set(err, FBC_EPARSE, origin, "%s",
					   parser->problem ? parser->problem : "YAML syntax error");
			goto done;
		}
		snprintf(origin, sizeof(origin), "%s:%zu", path, ev.start_mark.line + 1);
		if (ev.type == YAML_SEQUENCE_END_EVENT || ev.type == YAML_MAPPING_END_EVENT) {
			yaml_event_delete(&ev);
			break;
		}
		if (json_is_object(node) && !key) {
			if (ev.type != YAML_SCALAR_EVENT) {
				yaml_event_delete(&ev);
				rc = fbc_error_set(err, FBC_EINVAL, origin,
						   "a key must be a scalar");
				goto done;
			}
			key = strndup((const char *)ev.data.scalar.value, ev.data.scalar.length);
			yaml_event_delete(&ev);
			if (!key) {
				rc = fbc_error_set(err, FBC_ENOMEM, origin, "out of memory");
				goto done;
			}
			if (json_object_get(node, key)) {
				rc = fbc_error_set(err, FBC_EINVAL, origin, "duplicate key '%.64s'",
						   key);
				goto done;
			}
			continue;
		}
		rc = node_json(&child, parser, &ev, depth + 1, count, path, err);
		yaml_event_delete(&ev);
		if (rc)
			goto done;
		if (json_is_object(node) ? json_object_set_new(node, key, child)
					 : json_array_append_new(node, child)) {
			child = NULL;
			rc = fbc_error_set(err, FBC_ENOMEM, origin, "out of memory");
			goto done;
		}
		child = NULL;
		free(key);
		key = NULL;
	}
	*out = node;
	node = NULL;
done:
	free(key);
	json_decref(node);
	return rc;
}

int fbc_http_config_load_file(fbc_http_config *c, const char *path, fbc_error *err)
{
	yaml_parser_t parser;
	yaml_event_t ev;
	bool have_parser = false, have_event = false;
	char *data = NULL, *key = NULL;
	size_t len = 0;
	int rc, state = 0; /* 0 before mapping, 1 expect key, 2 expect value, 3 done */
	char origin[FBC_ERROR_WHERE_MAX];

	rc = read_file(&data, &len, path, err);
	if (rc != 0)
		goto done;
	if (!yaml_parser_initialize(&parser)) {
		rc = fbc_error_set(err, FBC_ENOMEM, path, "cannot initialise the YAML parser");
		goto done;
	}
	have_parser = true;
	yaml_parser_set_input_string(&parser, (const unsigned char *)data, len);
	for (;;) {
		if (!yaml_parser_parse(&parser, &ev)) {
			snprintf(origin, sizeof(origin), "%s:%zu", path,
				 parser.problem_mark.line + 1);
			rc = fbc_error_set(err, FBC_EPARSE, origin, "%s",
					   parser.problem ? parser.problem : "YAML syntax error");
			goto done;
		}
		have_event = true;
		snprintf(origin, sizeof(origin), "%s:%zu", path, ev.start_mark.line + 1);
		switch (ev.type) {
		case YAML_STREAM_START_EVENT:
		case YAML_DOCUMENT_START_EVENT:
		case YAML_DOCUMENT_END_EVENT:
			break;
		case YAML_STREAM_END_EVENT:
			rc = 0;
			goto done;
		case YAML_MAPPING_START_EVENT:
			if (state != 0) {
				rc = fbc_error_set(
					err, FBC_EINVAL, origin, "%s%s%s: expected a scalar value",
					key ? "key '" : "", key ? key : "", key ? "'" : "");
				goto done;
			}
			state = 1;
			break;
		case YAML_MAPPING_END_EVENT:
			state = 3;
			break;
		case YAML_SCALAR_EVENT: {
			const char *s = (const char *)ev.data.scalar.value;
			if (state == 1) {
				free(key);
				key = strdup(s);
				if (!key) {
					rc = fbc_error_set(err, FBC_ENOMEM, origin,
							   "out of memory");
					goto done;
				}
				state = 2;
			} else if (state == 2) {
				rc = fbc_http_config_set(c, key, s, origin, err);
				if (rc != 0)
					goto done;
				state = 1;
			} else if (state == 0 && s[0] == '\0') {
				state = 3; /* an empty document */
			} else {
				rc = fbc_error_set(err, FBC_EINVAL, origin,
						   "the configuration must be a mapping");
				goto done;
			}
			break;
		}
		case YAML_SEQUENCE_START_EVENT:
			if (state == 2 && !strcmp(key, "repositories")) {
				json_t *list = NULL;
				size_t count = 0;
				rc = node_json(&list, &parser, &ev, 0, &count, path, err);
				if (rc != 0)
					goto done;
				json_decref(c->repositories);
				c->repositories = list;
				state = 1;
				break;
			}
			__attribute__((fallthrough)); /* not a list of repositories */
		case YAML_ALIAS_EVENT:
		default:
			rc = fbc_error_set(err, FBC_EINVAL, origin,
					   "%s%s%s: expected a scalar value", key ? "key '" : "",
					   key ? key : "", key ? "'" : "");
			goto done;
		}
		yaml_event_delete(&ev);
		have_event = false;
	}
done:
	if (have_event)
		yaml_event_delete(&ev);
	if (have_parser)
		yaml_parser_delete(&parser);
	free(key);
	free(data);
	return rc;
}

static const struct {
	const char *env, *key;
} env_map[] = {
	{"FBCD_LISTEN", "listen"},
	{"FBCD_DATABASE_URL", "databaseURL"},
	{"FBCD_DATA_DIR", "dataDir"},
	{"FBCD_PUBLIC_URL", "publicURL"},
	{"FBCD_CA_FILE", "caFile"},
	{"FBCD_READ_AUTH", "readAuth"},
	{"FBCD_ADMIN_TOKEN", "adminToken"},
	{"FBCD_THREADS", "threads"},
	{"FBCD_MAX_BODY", "maxBodyBytes"},
	{"FBCD_POOL_SIZE", "poolSize"},
	{"FBCD_ACCESS_LOG", "accessLog"},
	{"FBCD_CACHE_BYTES", "cacheBytes"},
	{"FBCD_WORKERS", "workers"},
	{"FBCD_JOB_LEASE", "jobLeaseSeconds"},
	{"FBCD_JOB_POLL_MS", "jobPollMs"},
	{"FBCD_RETRY_BASE_MS", "retryBaseMs"},
	{"FBCD_LOG_FORMAT", "logFormat"},
	{"FBCD_METRICS_AUTH", "metricsAuth"},
	{"FBCD_METRICS", "metrics"},
	{"FBCD_MAX_BODY_ANONYMOUS", "maxBodyBytesAnonymous"},
	{"FBCD_MAX_EXTRACT", "maxExtractBytes"},
	{"FBCD_MAX_EXTRACT_ANONYMOUS", "maxExtractBytesAnonymous"},
	{"FBCD_UPLOAD_BUDGET", "uploadBudgetBytes"},
	{"FBCD_MAX_CONNECTIONS", "maxConnections"},
	{"FBCD_MAX_CONNECTIONS_PER_IP", "maxConnectionsPerIP"},
	{"FBCD_HEADER_TIMEOUT", "headerTimeoutSeconds"},
	{"FBCD_IDLE_TIMEOUT", "idleTimeoutSeconds"},
	{"FBCD_HEAD_DEADLINE", "headDeadlineSeconds"},
	{"FBCD_YAML_EXPAND_RATIO", "yamlExpandRatio"},
	{"FBCD_YAML_EXPAND_MAX", "yamlExpandMaxBytes"},
};

int fbc_http_config_load_env(fbc_http_config *c, fbc_error *err)
{
	for (size_t i = 0; i < sizeof(env_map) / sizeof(env_map[0]); i++) {
		const char *v = getenv(env_map[i].env);
		if (!v)
			continue;
		int rc = fbc_http_config_set(c, env_map[i].key, v, env_map[i].env, err);
		if (rc != 0)
			return rc;
	}
	return 0;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: fbcd serve [OPTIONS]\n\n"
		"Run the catalog service: REST API over HTTP, catalogs stored in PostgreSQL.\n\n"
		"  --listen ADDR:PORT     address to listen on (FBCD_LISTEN; 127.0.0.1:8080)\n"
		"  --database-url URL     PostgreSQL URL (FBCD_DATABASE_URL); without one an\n"
		"                         embedded cluster is started under the data dir\n"
		"  --data-dir DIR         data directory (FBCD_DATA_DIR; ./fbcd-data)\n"
		"  --public-url URL       this service's address as forges' users reach it, for\n"
		"                         the links of pull-request reports (FBCD_PUBLIC_URL)\n"
		"  --ca-file FILE         PEM certificates trusted instead of the system CAs for\n"
		"                         git fetches over HTTPS, forge API calls and registry\n"
		"                         pushes (FBCD_CA_FILE)\n"
		"  --config FILE          YAML configuration file (FBCD_CONFIG)\n"
		"  --read-auth open|token reads are open or need a 'read' token (FBCD_READ_AUTH)\n"
		"  --threads N            0: a thread per connection (FBCD_THREADS; default);\n"
		"                         N: a pool of N event-loop threads for all connections\n"
		"  --max-body BYTES       request body limit for writers (FBCD_MAX_BODY; 512 MiB)\n"
		"  --max-body-anonymous BYTES  for requests without a write token\n"
		"                         (FBCD_MAX_BODY_ANONYMOUS; 32 MiB)\n"
		"  --max-extract BYTES    bytes an uploaded archive may extract to, writers\n"
		"                         (FBCD_MAX_EXTRACT; 2 GiB)\n"
		"  --max-extract-anonymous BYTES  the same without a write token\n"
		"                         (FBCD_MAX_EXTRACT_ANONYMOUS; 256 MiB)\n"
		"  --upload-budget BYTES  bodies and extracted archives in flight, all requests\n"
		"                         together; past it 503 + Retry-After "
		"(FBCD_UPLOAD_BUDGET;\n"
		"                         1 GiB, 0 = unbounded)\n"
		"  --max-connections N    open client connections (FBCD_MAX_CONNECTIONS; 1024)\n"
		"  --max-connections-per-ip N  from one address (FBCD_MAX_CONNECTIONS_PER_IP;\n"
		"                         128, 0 = no limit, e.g. behind a proxy)\n"
		"  --header-timeout S     silence allowed before a request head is complete and\n"
		"                         between requests (FBCD_HEADER_TIMEOUT; 10)\n"
		"  --idle-timeout S       silence allowed once it is (FBCD_IDLE_TIMEOUT; 60)\n"
		"  --head-deadline S      a request head must be complete S seconds after the\n"
		"                         connection starts waiting for it, however slowly it\n"
		"                         trickles (FBCD_HEAD_DEADLINE; 30, 0 = none)\n"
		"  --yaml-expand-ratio N  a YAML document may expand through aliases to N x its\n"
		"                         size (at least 64 KiB) (FBCD_YAML_EXPAND_RATIO; 10)\n"
		"  --yaml-expand-max BYTES  and never past BYTES (FBCD_YAML_EXPAND_MAX; 256 MiB)\n"
		"  --pool-size N          database connections (FBCD_POOL_SIZE; 16)\n"
		"  --access-log           log one line per request (FBCD_ACCESS_LOG)\n"
		"  --cache-bytes BYTES    response cache size (FBCD_CACHE_BYTES; 256 MiB, 0 = "
		"off)\n"
		"  --workers N            job worker threads (FBCD_WORKERS; default: CPUs, 0 = "
		"none)\n"
		"  --job-lease SECONDS    lease of a running job (FBCD_JOB_LEASE; 30)\n"
		"  --job-poll-ms MS       idle workers poll this often (FBCD_JOB_POLL_MS; 2000)\n"
		"  --retry-base-ms MS     first retry backoff, doubling (FBCD_RETRY_BASE_MS; "
		"1000)\n"
		"  --log-format FMT       text, json or auto: text on a terminal, json\n"
		"                         otherwise (FBCD_LOG_FORMAT; auto)\n"
		"  --metrics-auth open|token  GET /metrics open or behind a 'read' token\n"
		"                         (FBCD_METRICS_AUTH; open)\n"
		"  --metrics on|off       record metrics (FBCD_METRICS; on)\n"
		"  --print-routes         print the route table (METHOD PATH) and exit\n"
		"  --print-openapi        print the OpenAPI document (JSON) and exit\n\n"
		"FBCD_ADMIN_TOKEN seeds an admin token at start-up.\n"
		"Signals: SIGTERM/SIGINT stop accepting, finish in-flight requests, exit.\n");
}

int fbc_http_config_from_args(fbc_http_config *c, int argc, char **argv, fbc_error *err)
{
	static const struct option opts[] = {
		{"listen", required_argument, NULL, 'l'},
		{"database-url", required_argument, NULL, 'd'},
		{"data-dir", required_argument, NULL, 'D'},
		{"config", required_argument, NULL, 'c'},
		{"read-auth", required_argument, NULL, 'r'},
		{"threads", required_argument, NULL, 't'},
		{"max-body", required_argument, NULL, 'm'},
		{"pool-size", required_argument, NULL, 'p'},
		{"access-log", no_argument, NULL, 'a'},
		{"cache-bytes", required_argument, NULL, 'C'},
		{"log-format", required_argument, NULL, 'G'},
		{"metrics-auth", required_argument, NULL, 'M'},
		{"metrics", required_argument, NULL, 'X'},
		{"max-body-anonymous", required_argument, NULL, 1001},
		{"max-extract", required_argument, NULL, 1002},
		{"max-extract-anonymous", required_argument, NULL, 1003},
		{"upload-budget", required_argument, NULL, 1004},
		{"max-connections", required_argument, NULL, 1005},
		{"max-connections-per-ip", required_argument, NULL, 1006},
		{"header-timeout", required_argument, NULL, 1007},
		{"idle-timeout", required_argument, NULL, 1008},
		{"public-url", required_argument, NULL, 1009},
		{"ca-file", required_argument, NULL, 1013},
		{"yaml-expand-ratio", required_argument, NULL, 1010},
		{"head-deadline", required_argument, NULL, 1012},
		{"yaml-expand-max", required_argument, NULL, 1011},
		{"print-routes", no_argument, NULL, 'R'},
		{"workers", required_argument, NULL, 'W'},
		{"job-lease", required_argument, NULL, 'L'},
		{"job-poll-ms", required_argument, NULL, 'P'},
		{"retry-base-ms", required_argument, NULL, 'B'},
		{"print-openapi", no_argument, NULL, 'O'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	const char *config_file = getenv("FBCD_CONFIG");
	int ch, rc;

	/* first pass: only --config and --help, so the file is applied before the env */
	optind = 1;
	opterr = 0;
	while ((ch = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		if (ch == 'c')
			config_file = optarg;
		else if (ch == 'h') {
			usage(stdout);
			return 1;
		}
	}
	if (config_file && config_file[0]) {
		rc = set_str(&c->config_file, config_file, "--config", "config", err);
		if (rc != 0)
			return rc;
		rc = fbc_http_config_load_file(c, config_file, err);
		if (rc != 0)
			return rc;
	}
	rc = fbc_http_config_load_env(c, err);
	if (rc != 0)
		return rc;

	optind = 1;
	opterr = 0;
	while ((ch = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		const char *key = NULL, *flag = NULL;
		switch (ch) {
		case 'l':
			key = "listen", flag = "--listen";
			break;
		case 'd':
			key = "databaseURL", flag = "--database-url";
			break;
		case 'D':
			key = "dataDir", flag = "--data-dir";
			break;
		case 'r':
			key = "readAuth", flag = "--read-auth";
			break;
		case 't':
			key = "threads", flag = "--threads";
			break;
		case 'm':
			key = "maxBodyBytes", flag = "--max-body";
			break;
		case 'p':
			key = "poolSize", flag = "--pool-size";
			break;
		case 'a':
			c->access_log = true;
			break;
		case 'C':
			key = "cacheBytes", flag = "--cache-bytes";
			break;
		case 'W':
			key = "workers", flag = "--workers";
			break;
		case 'L':
			key = "jobLeaseSeconds", flag = "--job-lease";
			break;
		case 'P':
			key = "jobPollMs", flag = "--job-poll-ms";
			break;
		case 'B':
			key = "retryBaseMs", flag = "--retry-base-ms";
			break;
		case 'G':
			key = "logFormat", flag = "--log-format";
			break;
		case 'M':
			key = "metricsAuth", flag = "--metrics-auth";
			break;
		case 'X':
			key = "metrics", flag = "--metrics";
			break;
		case 1001:
			key = "maxBodyBytesAnonymous", flag = "--max-body-anonymous";
			break;
		case 1002:
			key = "maxExtractBytes", flag = "--max-extract";
			break;
		case 1003:
			key = "maxExtractBytesAnonymous", flag = "--max-extract-anonymous";
			break;
		case 1004:
			key = "uploadBudgetBytes", flag = "--upload-budget";
			break;
		case 1005:
			key = "maxConnections", flag = "--max-connections";
			break;
		case 1006:
			key = "maxConnectionsPerIP", flag = "--max-connections-per-ip";
			break;
		case 1007:
			key = "headerTimeoutSeconds", flag = "--header-timeout";
			break;
		case 1008:
			key = "idleTimeoutSeconds", flag = "--idle-timeout";
			break;
		case 1009:
			key = "publicURL", flag = "--public-url";
			break;
		case 1012:
			key = "headDeadlineSeconds", flag = "--head-deadline";
			break;
		case 1013:
			key = "caFile", flag = "--ca-file";
			break;
		case 1010:
			key = "yamlExpandRatio", flag = "--yaml-expand-ratio";
			break;
		case 1011:
			key = "yamlExpandMaxBytes", flag = "--yaml-expand-max";
			break;
		case 'R':
			c->print_routes = true;
			break;
		case 'O':
			c->print_openapi = true;
			break;
		case 'c':
			break;
		case ':':
			return fbc_error_set(err, FBC_EINVAL, argv[optind - 1],
					     "option needs an argument");
		default:
			return fbc_error_set(err, FBC_EINVAL, argv[optind - 1],
					     "unknown option (see fbcd serve --help)");
		}
		if (key) {
			rc = fbc_http_config_set(c, key, optarg, flag, err);
			if (rc != 0)
				return rc;
		}
	}
	if (optind < argc)
		return fbc_error_set(err, FBC_EINVAL, argv[optind], "unexpected argument");
	if (!c->listen && (rc = set_str(&c->listen, "127.0.0.1:8080", "default", "listen", err)))
		return rc;
	if (!c->data_dir && (rc = set_str(&c->data_dir, "fbcd-data", "default", "dataDir", err)))
		return rc;
	/* every catalog this process loads (uploads, ingests, checks) */
	fbc_load_limits_set_expansion((size_t)c->yaml_expand_ratio, (size_t)c->yaml_expand_max);
	return 0;
}
