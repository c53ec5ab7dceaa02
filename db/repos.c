/* Watched repositories, webhook deliveries and pull requests (gitops.h). */
#include "db/gitops.h"
#include "db/internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SPEC_MAX_BYTES (64u * 1024)

/* clang-format off */
#define REPO_JSON                                                                             \
	"jsonb_build_object('name', r.name, 'url', r.url, 'branch', r.branch, "               \
	"'forge', jsonb_strip_nulls(jsonb_build_object('kind', r.forge_kind, "                \
	"'api', r.forge_api, 'project', r.forge_project, 'report', r.forge_report)), "        \
	"'credentials', jsonb_strip_nulls(jsonb_build_object('tokenFile', r.token_file, "     \
	"'tokenEnv', r.token_env, 'sshKeyFile', r.ssh_key_file, "                             \
	"'webhookSecretFile', r.webhook_secret_file, "                                       \
	"'webhookSecretEnv', r.webhook_secret_env)), "                                        \
	"'pollSeconds', r.poll_seconds, 'merge', r.merge, "                                   \
	"'catalogs', r.catalogs, 'publish', r.publish, "                                      \
	"'origin', r.origin, 'headCommit', r.head_commit, "                                   \
	"'fetchedAt', " DB_TS("r.fetched_at") ", "                                            \
	"'createdAt', " DB_TS("r.created_at") ", 'updatedAt', " DB_TS("r.updated_at") ")"
/* clang-format on */

static bool dns_label(const char *s)
{
	size_t n = strlen(s);
	if (n < 1 || n > 63 || s[0] == '-' || s[n - 1] == '-')
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '-'))
			return false;
	return true;
}

static bool env_name(const char *s)
{
	size_t n = strlen(s);
	if (n < 1 || n > 128 || (s[0] >= '0' && s[0] <= '9'))
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= 'a' && s[i] <= 'z') ||
		      (s[i] >= '0' && s[i] <= '9') || s[i] == '_'))
			return false;
	return true;
}

static bool printable(const char *s, size_t max)
{
	size_t n = strlen(s);
	if (n < 1 || n > max)
		return false;
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
			return false;
	return true;
}

static int str_field(json_t *o, const char *key, const char *where, bool required, fbc_error *err)
{
	json_t *v = json_object_get(o, key);
	if (!v || json_is_null(v)) {
		if (required)
			return fbc_error_set(err, FBC_EINVAL, where, "required");
		json_object_del(o, key);
		return 0;
	}
	if (!json_is_string(v) || !printable(json_string_value(v), 2048))
		return fbc_error_set(err, FBC_EINVAL, where,
				     "must be a string of 1 to 2048 printable bytes");
	return 0;
}

static int check_forge(json_t *spec, fbc_error *err)
{
	json_t *f = json_object_get(spec, "forge"), *v;
	const char *k;

	if (!f || json_is_null(f)) {
		json_object_set_new(spec, "forge",
				    json_pack("{s:s,s:s}", "kind", "none", "report", "checks"));
		return 0;
	}
	if (!json_is_object(f))
		return fbc_error_set(err, FBC_EINVAL, "forge", "must be an object");
	json_object_foreach(f, k, v)
	{
		if (strcmp(k, "kind") && strcmp(k, "api") && strcmp(k, "project") &&
		    strcmp(k, "report"))
			return fbc_error_set(err, FBC_EINVAL, "forge", "unknown field '%.64s'", k);
	}
	if (!json_object_get(f, "kind") || json_is_null(json_object_get(f, "kind")))
		json_object_set_new(f, "kind", json_string("none"));
	if (!json_object_get(f, "report") || json_is_null(json_object_get(f, "report")))
		json_object_set_new(f, "report", json_string("checks"));
	const char *kind = json_string_value(json_object_get(f, "kind"));
	const char *report = json_string_value(json_object_get(f, "report"));
	if (!kind || (strcmp(kind, "github") && strcmp(kind, "gitlab") && strcmp(kind, "none")))
		return fbc_error_set(err, FBC_EINVAL, "forge.kind", "github, gitlab or none");
	if (!report || (strcmp(report, "checks") && strcmp(report, "statuses")))
		return fbc_error_set(err, FBC_EINVAL, "forge.report", "checks or statuses");
	int rc;
	if ((rc = str_field(f, "api", "forge.api", false, err)) ||
	    (rc = str_field(f, "project", "forge.project", strcmp(kind, "none") != 0, err)))
		return rc;
	const char *api = json_string_value(json_object_get(f, "api"));
	if (api && strncmp(api, "https://", 8) && strncmp(api, "http://", 7))
		return fbc_error_set(err, FBC_EINVAL, "forge.api", "an http(s):// base URL");
	if (!api && strcmp(kind, "none"))
		json_object_set_new(f, "api",
				    json_string(!strcmp(kind, "github")
							? "https://api.github.com"
							: "https://gitlab.com/api/v4"));
	return 0;
}

static int check_credentials(json_t *spec, fbc_error *err)
{
	json_t *c = json_object_get(spec, "credentials"), *v;
	const char *k;

	if (!c || json_is_null(c)) {
		json_object_set_new(spec, "credentials", json_object());
		return 0;
	}
	if (!json_is_object(c))
		return fbc_error_set(err, FBC_EINVAL, "credentials", "must be an object");
	json_object_foreach(c, k, v)
	{
		bool file = !strcmp(k, "tokenFile") || !strcmp(k, "sshKeyFile") ||
			    !strcmp(k, "webhookSecretFile");
		bool env = !strcmp(k, "tokenEnv") || !strcmp(k, "webhookSecretEnv");

		/* never echo the value: it may be a secret pasted by mistake */
		if (!file && !env)
			return fbc_error_set(err, FBC_EINVAL, "credentials",
					     "unknown field '%.64s': credentials are references "
					     "only (tokenFile, tokenEnv, sshKeyFile, "
					     "webhookSecretFile, webhookSecretEnv)",
					     k);
		if (!json_is_string(v))
			return fbc_error_set(err, FBC_EINVAL, "credentials", "%s must be a string",
					     k);
		const char *s = json_string_value(v);
		if (file && (s[0] != '/' || !printable(s, 1024)))
			return fbc_error_set(err, FBC_EINVAL, "credentials",
					     "%s must be an absolute file path", k);
		if (env && !env_name(s))
			return fbc_error_set(err, FBC_EINVAL, "credentials",
					     "%s must be an environment variable name", k);
	}
	return 0;
}

int fbc_db_repo_check(json_t *spec, fbc_error *err)
{
	json_t *v;
	const char *k;
	int rc;

	if (!json_is_object(spec))
		return fbc_error_set(err, FBC_EINVAL, "repository", "must be an object");
	json_object_foreach(spec, k, v)
	{
		if (strcmp(k, "name") && strcmp(k, "url") && strcmp(k, "branch") &&
		    strcmp(k, "forge") && strcmp(k, "credentials") && strcmp(k, "pollSeconds") &&
		    strcmp(k, "merge") && strcmp(k, "catalogs") && strcmp(k, "publish") &&
		    strcmp(k, "origin") && strcmp(k, "headCommit") && strcmp(k, "fetchedAt") &&
		    strcmp(k, "createdAt") && strcmp(k, "updatedAt"))
			return fbc_error_set(err, FBC_EINVAL, "repository", "unknown field '%.64s'",
					     k);
	}
	v = json_object_get(spec, "name");
	if (!json_is_string(v) || !dns_label(json_string_value(v)))
		return fbc_error_set(err, FBC_EINVAL, "name",
				     "a DNS-1123 label: lowercase letters, digits and '-', at most "
				     "63");
	if ((rc = str_field(spec, "url", "url", true, err)))
		return rc;
	const char *url = json_string_value(json_object_get(spec, "url"));
	if (strncmp(url, "https://", 8) && strncmp(url, "http://", 7) &&
	    strncmp(url, "ssh://", 6) && strncmp(url, "file://", 7) && strncmp(url, "git@", 4))
		return fbc_error_set(err, FBC_EINVAL, "url",
				     "https://, http://, ssh://, git@host:path or file://");
	v = json_object_get(spec, "branch");
	if (!v || json_is_null(v))
		json_object_set_new(spec, "branch", json_string("main"));
	else if (!json_is_string(v) || !printable(json_string_value(v), 255) ||
		 strchr(json_string_value(v), ' ') || strstr(json_string_value(v), ".."))
		return fbc_error_set(err, FBC_EINVAL, "branch", "a branch name");
	v = json_object_get(spec, "pollSeconds");
	if (!v || json_is_null(v))
		json_object_set_new(spec, "pollSeconds", json_integer(300));
	else if (!json_is_integer(v) || json_integer_value(v) < 0 || json_integer_value(v) > 86400)
		return fbc_error_set(err, FBC_EINVAL, "pollSeconds", "an integer from 0 to 86400");
	v = json_object_get(spec, "merge");
	if (!v || json_is_null(v))
		json_object_set_new(spec, "merge", json_string("off"));
	else if (!json_is_string(v) ||
		 (strcmp(json_string_value(v), "off") && strcmp(json_string_value(v), "auto")))
		return fbc_error_set(err, FBC_EINVAL, "merge", "off or auto");
	if ((rc = check_forge(spec, err)) || (rc = check_credentials(spec, err)))
		return rc;
	const char *lists[] = {"catalogs", "publish"};
	for (int i = 0; i < 2; i++) {
		v = json_object_get(spec, lists[i]);
		if (v && !json_is_null(v) && !json_is_array(v))
			return fbc_error_set(err, FBC_EINVAL, lists[i], "must be a list");
	}
	char *text = json_dumps(spec, JSON_COMPACT);
	size_t n = text ? strlen(text) : 0;
	free(text);
	if (n > SPEC_MAX_BYTES)
		return fbc_error_set(err, FBC_ELIMIT, "repository", "larger than %u bytes",
				     SPEC_MAX_BYTES);
	return 0;
}

static const char *sget(json_t *o, const char *a, const char *b)
{
	json_t *v = json_object_get(o, a);
	if (b)
		v = json_object_get(v, b);
	return json_is_string(v) ? json_string_value(v) : NULL;
}

static char *jdump(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);
	return v && !json_is_null(v) ? json_dumps(v, JSON_COMPACT) : NULL;
}

int fbc_db_repo_put(json_t **out, fbc_db *db, json_t *spec, const char *origin, bool upsert,
		    fbc_error *err)
{
	static const db_stmt ins = {
		"repo_insert",
		"WITH r AS (INSERT INTO repositories (name, url, branch, forge_kind, forge_api, "
		"forge_project, forge_report, token_file, token_env, ssh_key_file, "
		"webhook_secret_file, webhook_secret_env, poll_seconds, catalogs, publish, origin, "
		"merge) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13::integer, "
		"$14::jsonb, $15::jsonb, $16, $18) ON CONFLICT (name) DO UPDATE SET url = "
		"EXCLUDED.url, branch = EXCLUDED.branch, forge_kind = EXCLUDED.forge_kind, "
		"forge_api "
		"= EXCLUDED.forge_api, forge_project = EXCLUDED.forge_project, forge_report = "
		"EXCLUDED.forge_report, token_file = EXCLUDED.token_file, token_env = "
		"EXCLUDED.token_env, ssh_key_file = EXCLUDED.ssh_key_file, webhook_secret_file = "
		"EXCLUDED.webhook_secret_file, webhook_secret_env = EXCLUDED.webhook_secret_env, "
		"poll_seconds = EXCLUDED.poll_seconds, catalogs = EXCLUDED.catalogs, publish = "
		"EXCLUDED.publish, origin = EXCLUDED.origin, merge = EXCLUDED.merge, updated_at = "
		"now() WHERE $17 RETURNING *) SELECT " REPO_JSON " FROM r",
		18};
	char *cats = NULL, *pubs = NULL, poll[16];
	int rc;

	if ((rc = fbc_db_repo_check(spec, err)))
		return rc;
	snprintf(poll, sizeof(poll), "%lld",
		 (long long)json_integer_value(json_object_get(spec, "pollSeconds")));
	cats = jdump(spec, "catalogs");
	pubs = jdump(spec, "publish");
	const char *vals[18] = {sget(spec, "name", NULL),
				sget(spec, "url", NULL),
				sget(spec, "branch", NULL),
				sget(spec, "forge", "kind"),
				sget(spec, "forge", "api"),
				sget(spec, "forge", "project"),
				sget(spec, "forge", "report"),
				sget(spec, "credentials", "tokenFile"),
				sget(spec, "credentials", "tokenEnv"),
				sget(spec, "credentials", "sshKeyFile"),
				sget(spec, "credentials", "webhookSecretFile"),
				sget(spec, "credentials", "webhookSecretEnv"),
				poll,
				cats,
				pubs,
				origin,
				upsert ? "t" : "f",
				sget(spec, "merge", NULL)};
	rc = db_query_json(out, db, &ins, vals, "repository", err);
	if (rc == FBC_ENOTFOUND) /* the conflict branch did not apply */
		rc = fbc_error_set(err, FBC_ECONFLICT, "name", "repository '%s' exists", vals[0]);
	free(cats);
	free(pubs);
	return rc;
}

int fbc_db_repo_get(json_t **out, fbc_db *db, const char *name, fbc_error *err)
{
	static const db_stmt st = {"repo_get",
				   "SELECT " REPO_JSON " FROM repositories r WHERE r.name = $1", 1};
	return db_query_json(out, db, &st, (const char *[]){name}, "repository", err);
}

int fbc_db_repo_list(json_t **out, fbc_db *db, const fbc_db_page *page, fbc_error *err)
{
	static const db_stmt st = {"repo_list",
				   "SELECT r.name, " REPO_JSON " FROM repositories r WHERE "
				   "($1::text IS NULL OR r.name > $1) ORDER BY r.name LIMIT $2",
				   2};
	const char *vals[2];
	char *key = NULL;
	unsigned limit;
	int rc;

	if ((rc = db_page_args(&limit, &key, page, err)))
		return rc;
	vals[0] = key;
	rc = db_query_page(out, db, &st, vals, 2, limit, err);
	free(key);
	return rc;
}

int fbc_db_repo_delete(fbc_db *db, const char *name, fbc_error *err)
{
	static const db_stmt st = {"repo_delete", "DELETE FROM repositories WHERE name = $1", 1};
	PGresult *res = NULL;
	int rc;

	if ((rc = db_query(&res, db, &st, (const char *[]){name}, err)))
		return rc;
	if (strcmp(PQcmdTuples(res), "1") != 0)
		rc = fbc_error_set(err, FBC_ENOTFOUND, "repository", "no repository '%s'", name);
	PQclear(res);
	return rc;
}

/* RFC 7386: null deletes, objects merge recursively, anything else replaces. */
static int merge_patch(json_t *target, const json_t *patch)
{
	const char *k;
	json_t *v;

	json_object_foreach((json_t *)patch, k, v)
	{
		json_t *t = json_object_get(target, k);
		if (json_is_null(v)) {
			json_object_del(target, k);
		} else if (json_is_object(v) && json_is_object(t)) {
			if (merge_patch(t, v))
				return -1;
		} else if (json_object_set(target, k, v)) {
			return -1;
		}
	}
	return 0;
}

int fbc_db_repo_patch(json_t **out, fbc_db *db, const char *name, const json_t *patch,
		      fbc_error *err)
{
	json_t *cur = NULL, *n;
	int rc;

	if (!json_is_object(patch))
		return fbc_error_set(err, FBC_EINVAL, "body", "a JSON merge patch object");
	n = json_object_get(patch, "name");
	if (n && !(json_is_string(n) && !strcmp(json_string_value(n), name)))
		return fbc_error_set(err, FBC_EINVAL, "name", "a repository cannot be renamed");
	if ((rc = fbc_db_repo_get(&cur, db, name, err)))
		return rc;
	const char *ro[] = {"origin", "headCommit", "fetchedAt", "createdAt", "updatedAt"};
	for (size_t i = 0; i < sizeof(ro) / sizeof(ro[0]); i++)
		json_object_del(cur, ro[i]);
	if (merge_patch(cur, patch)) {
		rc = fbc_error_set(err, FBC_ENOMEM, "body", "out of memory");
		goto done;
	}
	/* the repository exists: an upsert replaces it (origin becomes api) */
	rc = fbc_db_repo_put(out, db, cur, "api", true, err);
done:
	json_decref(cur);
	return rc;
}

int fbc_db_repo_find_by_project(json_t **out, fbc_db *db, const char *kind, const char *project,
				const char *project_id, fbc_error *err)
{
	static const db_stmt st = {
		"repo_find_project",
		"SELECT " REPO_JSON " FROM repositories r WHERE r.forge_kind = "
		"$1 AND (lower(r.forge_project) = lower($2) OR r.forge_project = "
		"$3) ORDER BY r.name LIMIT 1",
		3};
	return db_query_json(out, db, &st, (const char *[]){kind, project, project_id},
			     "repository", err);
}

/* ---------------------------------------------------------- deliveries */

struct delivery_ctx {
	const fbc_db_delivery *d;
	const fbc_db_pull_update *pull;
	const struct fbc_db_job_spec *const *jobs;
	bool dup;
	int64_t job_id;
};

static int delivery_tx(fbc_db_conn *c, void *ctx, fbc_error *err)
{
	static const db_stmt ins = {
		"delivery_insert",
		"INSERT INTO webhook_deliveries (forge, delivery_id, event, action, repository, "
		"pull_request, head_sha) VALUES ($1, $2, $3, $4, $5, $6::integer, $7) ON CONFLICT "
		"(forge, delivery_id) DO NOTHING RETURNING id",
		7};
	static const db_stmt pull = {
		"pull_upsert",
		"INSERT INTO pulls (repository, number, state, head_sha, base_ref, author, title, "
		"approvals, merge_sha) VALUES ($1, $2::integer, coalesce($3, 'open'), $4, $5, $6, "
		"$7, CASE WHEN $8::text IS NULL THEN '[]'::jsonb ELSE jsonb_build_array($8::text) "
		"END, $9) ON CONFLICT "
		"(repository, number) DO UPDATE SET state = coalesce($3, pulls.state), head_sha = "
		"coalesce($4, pulls.head_sha), base_ref = coalesce($5, pulls.base_ref), author = "
		"coalesce($6, pulls.author), title = coalesce($7, pulls.title), approvals = CASE "
		"WHEN $8::text IS NULL OR pulls.approvals ? $8::text THEN pulls.approvals ELSE "
		"pulls.approvals || jsonb_build_array($8::text) END, merge_sha = coalesce($9, "
		"pulls.merge_sha), updated_at = now()",
		9};
	static const db_stmt setjob = {
		"delivery_set_job", "UPDATE webhook_deliveries SET job_id = $2 WHERE id = $1", 2};
	struct delivery_ctx *x = ctx;
	PGresult *res = NULL;
	char pr[24], num[24], jid[24];
	int rc;

	snprintf(pr, sizeof(pr), "%ld", x->d->pull_request);
	if ((rc = db_exec(&res, c, &ins,
			  (const char *[]){x->d->forge, x->d->delivery_id, x->d->event,
					   x->d->action, x->d->repository,
					   x->d->pull_request ? pr : NULL, x->d->head_sha},
			  NULL, NULL, 0, err)))
		return rc;
	if (PQntuples(res) < 1) {
		x->dup = true;
		PQclear(res);
		return 0;
	}
	snprintf(num, sizeof(num), "%s", PQgetvalue(res, 0, 0));
	PQclear(res);
	res = NULL;
	if (x->pull) {
		snprintf(pr, sizeof(pr), "%ld", x->pull->number);
		if ((rc = db_exec(&res, c, &pull,
				  (const char *[]){x->d->repository, pr, x->pull->state,
						   x->pull->head_sha, x->pull->base_ref,
						   x->pull->author, x->pull->title,
						   x->pull->approver, x->pull->merge_sha},
				  NULL, NULL, 0, err)))
			return rc;
		PQclear(res);
		res = NULL;
	}
	for (size_t i = 0; x->jobs && x->jobs[i]; i++) {
		int64_t id = 0;
		if ((rc = db_job_enqueue_conn(&id, NULL, c, x->jobs[i], err)))
			return rc;
		if (i == 0)
			x->job_id = id;
	}
	if (x->job_id) {
		snprintf(jid, sizeof(jid), "%lld", (long long)x->job_id);
		if ((rc = db_exec(&res, c, &setjob, (const char *[]){num, jid}, NULL, NULL, 0,
				  err)))
			return rc;
		PQclear(res);
	}
	return 0;
}

int fbc_db_delivery_store(bool *dup, int64_t *job_id, fbc_db *db, const fbc_db_delivery *d,
			  const fbc_db_pull_update *pull, const struct fbc_db_job_spec *const *jobs,
			  fbc_error *err)
{
	struct delivery_ctx x = {d, pull, jobs, false, 0};
	int rc;

	if (!d->delivery_id || !*d->delivery_id || strlen(d->delivery_id) > 200)
		return fbc_error_set(err, FBC_EINVAL, "delivery",
				     "missing or over-long delivery id");
	if ((rc = db_tx(db, delivery_tx, &x, err)))
		return rc;
	*dup = x.dup;
	if (job_id)
		*job_id = x.job_id;
	return 0;
}

int fbc_db_pull_get(json_t **out, fbc_db *db, const char *repository, long number, fbc_error *err)
{
	static const db_stmt st = {
		"pull_get",
		"SELECT jsonb_build_object('repository', p.repository, 'number', p.number, "
		"'state', "
		"p.state, 'headSha', p.head_sha, 'baseRef', p.base_ref, 'author', p.author, "
		"'title', p.title, 'approvals', p.approvals, 'commentId', p.comment_id, "
		"'checkRuns', p.check_runs, 'mergeSha', p.merge_sha, 'mergeError', p.merge_error, "
		"'updatedAt', " DB_TS(
			"p.updated_at") ", 'checks', (SELECT "
					"coalesce(jsonb_agg(jsonb_build_object('headSha', "
					"c.head_sha, "
					"'baseSha', c.base_sha, 'conclusion', c.conclusion, "
					"'result', c.result, 'job', "
					"c.job_id, 'createdAt', " DB_TS(
						"c.created_at") ") ORDER BY c.id DESC), '[]') FROM "
								"pull_checks c WHERE c.repository "
								"= p.repository AND c.number = "
								"p.number), 'jobs', "
								"(SELECT "
								"coalesce(jsonb_agg(jsonb_build_"
								"object('id', j.id, 'state', "
								"j.state, "
								"'headSha', j.payload->>'head', "
								"'error', j.error) ORDER BY j.id "
								"DESC), '[]') FROM "
								"jobs j WHERE j.kind = 'pr.check' "
								"AND j.key = 'pr:' || p.repository "
								"|| ':' || "
								"p.number)) FROM pulls p WHERE "
								"p.repository = $1 AND p.number = "
								"$2::integer",
		2};
	char num[24];

	snprintf(num, sizeof(num), "%ld", number);
	return db_query_json(out, db, &st, (const char *[]){repository, num}, "pull request", err);
}

/* ---------------------------------------------------------- provenance */

int fbc_db_revision_provenance(fbc_db *db, const char *catalog, int64_t number,
			       const fbc_db_provenance *p, fbc_error *err)
{
	static const db_stmt st = {
		"revision_provenance",
		"UPDATE revisions r SET repository = $3, commit = $4, pull_request = $5::integer, "
		"author = $6, committed_at = to_timestamp($7::double precision) FROM catalogs c "
		"WHERE c.id = r.catalog_id AND c.name = $1 AND r.number = $2::bigint AND "
		"r.repository IS NULL",
		7};
	PGresult *res = NULL;
	char num[24], pr[24], at[24];
	int rc;

	snprintf(num, sizeof(num), "%lld", (long long)number);
	snprintf(pr, sizeof(pr), "%ld", p->pull_request);
	snprintf(at, sizeof(at), "%lld", (long long)p->committed_at);
	if ((rc = db_query(&res, db, &st,
			   (const char *[]){catalog, num, p->repository, p->commit,
					    p->pull_request ? pr : NULL, p->author, at},
			   err)))
		return rc;
	PQclear(res);
	return 0;
}

int fbc_db_repo_fetched(fbc_db *db, const char *repository, const char *head, fbc_error *err)
{
	static const db_stmt st = {
		"repo_fetched",
		"UPDATE repositories SET head_commit = coalesce($2, head_commit), "
		"fetched_at = now() WHERE name = $1",
		2};
	PGresult *res = NULL;
	int rc;

	if ((rc = db_query(&res, db, &st, (const char *[]){repository, head}, err)))
		return rc;
	PQclear(res);
	return 0;
}

int fbc_db_commit_seen(fbc_db *db, const fbc_db_provenance *p, fbc_error *err)
{
	static const db_stmt st = {
		"commit_seen",
		"INSERT INTO repo_commits (repository, sha, pull_request, author, committed_at) "
		"VALUES ($1, $2, $3::integer, $4, to_timestamp($5::double precision)) ON CONFLICT "
		"(repository, sha) DO UPDATE SET pull_request = "
		"coalesce(repo_commits.pull_request, "
		"EXCLUDED.pull_request)",
		5};
	PGresult *res = NULL;
	char pr[24], at[24];
	int rc;

	snprintf(pr, sizeof(pr), "%ld", p->pull_request);
	snprintf(at, sizeof(at), "%lld", (long long)p->committed_at);
	if ((rc = db_query(&res, db, &st,
			   (const char *[]){p->repository, p->commit, p->pull_request ? pr : NULL,
					    p->author, at},
			   err)))
		return rc;
	PQclear(res);
	return 0;
}

int fbc_db_pull_of_commit(long *number, fbc_db *db, const char *repository, const char *sha,
			  fbc_error *err)
{
	static const db_stmt st = {"pull_of_commit",
				   "SELECT number FROM pulls WHERE repository = $1 AND (head_sha = "
				   "$2 OR merge_sha = $2) ORDER BY (state = 'merged') DESC, "
				   "updated_at DESC LIMIT 1",
				   2};
	PGresult *res = NULL;
	int rc;

	if ((rc = db_query(&res, db, &st, (const char *[]){repository, sha}, err)))
		return rc;
	*number = PQntuples(res) > 0 ? strtol(PQgetvalue(res, 0, 0), NULL, 10) : 0;
	PQclear(res);
	return 0;
}

struct fbc_db_lock {
	fbc_db *db;
	fbc_db_conn *c;
	char key[256];
};

int fbc_db_lock_acquire(fbc_db_lock **out, fbc_db *db, const char *key, fbc_error *err)
{
	static const db_stmt st = {"advisory_lock", "SELECT pg_advisory_lock(hashtext($1))", 1};
	fbc_db_lock *lk;
	PGresult *res = NULL;
	int rc;

	if (!(lk = calloc(1, sizeof(*lk))))
		return fbc_error_set(err, FBC_ENOMEM, "lock", "out of memory");
	lk->db = db;
	snprintf(lk->key, sizeof(lk->key), "%s", key);
	if ((rc = db_checkout(&lk->c, db, err)))
		goto fail;
	if ((rc = db_exec(&res, lk->c, &st, (const char *[]){lk->key}, NULL, NULL, 0, err)))
		goto fail;
	PQclear(res);
	*out = lk;
	return 0;
fail:
	db_release(db, lk->c);
	free(lk);
	return rc;
}

void fbc_db_lock_release(fbc_db_lock *lk)
{
	static const db_stmt st = {"advisory_unlock", "SELECT pg_advisory_unlock(hashtext($1))", 1};
	PGresult *res = NULL;
	fbc_error err;

	if (!lk)
		return;
	fbc_error_init(&err);
	/* a dead connection released its locks with it */
	if (db_exec(&res, lk->c, &st, (const char *[]){lk->key}, NULL, NULL, 0, &err) == 0)
		PQclear(res);
	db_release(lk->db, lk->c);
	free(lk);
}

/* ---------------------------------------------------------- traceability */

int fbc_db_commit_get(json_t **out, fbc_db *db, const char *repository, const char *sha,
		      fbc_error *err)
{
	static const db_stmt st = {
		"commit_get",
		"WITH s AS (SELECT coalesce((SELECT sha FROM repo_commits WHERE repository = $1 "
		"AND "
		"sha LIKE $2 || '%' ORDER BY sha LIMIT 1), (SELECT payload->>'commit' FROM jobs "
		"WHERE "
		"kind = 'repo.ingest' AND repository = $1 AND payload->>'commit' LIKE $2 || '%' "
		"ORDER BY id DESC LIMIT 1)) AS sha) SELECT jsonb_build_object('repository', "
		"$1::text, "
		"'commit', s.sha, 'pullRequest', coalesce(rc.pull_request, (SELECT number FROM "
		"pulls "
		"p WHERE p.repository = $1 AND p.head_sha = s.sha ORDER BY updated_at DESC LIMIT "
		"1)), "
		"'author', rc.author, 'committedAt', " DB_TS(
			"rc.committed_at") ", 'checks', (SELECT "
					   "coalesce(jsonb_agg(jsonb_build_object('pullRequest', "
					   "c.number, 'conclusion', "
					   "c.conclusion, 'result', c.result, 'job', c.job_id, "
					   "'createdAt', " DB_TS(
						   "c.created_at") ") ORDER BY c.id DESC), '[]') "
								   "FROM pull_checks c WHERE "
								   "c.repository = $1 AND "
								   "c.head_sha = s.sha), "
								   "'revisions', (SELECT "
								   "coalesce(jsonb_agg(jsonb_build_"
								   "object('catalog', cat.name, "
								   "'revision', "
								   "r.number, 'digest', r.digest) "
								   "ORDER BY cat.name), '[]') FROM "
								   "revisions r "
								   "JOIN catalogs cat ON cat.id = "
								   "r.catalog_id WHERE "
								   "r.repository = $1 AND "
								   "r.commit = s.sha), 'images', "
								   "(SELECT coalesce(jsonb_agg("
								   "jsonb_build_object('catalog', "
								   "cat.name, 'revision', "
								   "i.revision, "
								   "'digest', i.digest, "
								   "'repository', "
								   "i.repository, 'tags', "
								   "to_jsonb(i.tags)) ORDER BY "
								   "i.id), "
								   "'[]') FROM images i JOIN "
								   "catalogs "
								   "cat ON cat.id = i.catalog_id "
								   "JOIN "
								   "revisions r ON r.catalog_id = "
								   "i.catalog_id AND r.number = "
								   "i.revision WHERE r.repository "
								   "= "
								   "$1 AND r.commit = s.sha), "
								   "'ingest', "
								   "(SELECT "
								   "jsonb_build_object('job', "
								   "j.id, "
								   "'state', j.state, 'error', "
								   "j.error) FROM jobs j WHERE "
								   "j.kind = "
								   "'repo.ingest' AND j.key = "
								   "'ingest:' || $1 || ':' || "
								   "s.sha ORDER BY j.id "
								   "DESC LIMIT 1)) FROM s LEFT "
								   "JOIN repo_commits rc ON "
								   "rc.repository = $1 AND "
								   "rc.sha = s.sha WHERE s.sha IS "
								   "NOT NULL",
		2};
	size_t n = sha ? strlen(sha) : 0;

	if (n < 7 || n > 64 || strspn(sha, "0123456789abcdef") != n)
		return fbc_error_set(err, FBC_EINVAL, "sha", "7 to 64 lowercase hex digits");
	return db_query_json(out, db, &st, (const char *[]){repository, sha}, "commit", err);
}

int fbc_db_bundle_history(json_t **out, fbc_db *db, const char *catalog, const char *package,
			  const char *bundle, fbc_error *err)
{
	static const db_stmt st = {
		"bundle_history",
		"WITH h AS (SELECT r.number, r.digest, r.created_at, r.repository, r.commit, "
		"r.pull_request, r.author, r.committed_at FROM revisions r JOIN catalogs c ON c.id "
		"= "
		"r.catalog_id JOIN bundles b ON b.revision_id = r.id WHERE c.name = $1 AND "
		"b.package "
		"= $2 AND b.name = $3), f AS (SELECT * FROM h ORDER BY number LIMIT 1) SELECT "
		"jsonb_build_object('catalog', $1::text, 'package', $2::text, 'bundle', $3::text, "
		"'firstRevision', jsonb_build_object('revision', f.number, 'digest', f.digest, "
		"'createdAt', " DB_TS(
			"f.created_at") ", 'provenance', CASE WHEN f.repository IS "
					"NULL THEN NULL ELSE jsonb_build_object('repository', "
					"f.repository, 'commit', "
					"f.commit, 'pullRequest', f.pull_request, 'author', "
					"f.author, 'committedAt', " DB_TS(
						"f.committed_at") ") END), 'revisions', (SELECT "
								  "jsonb_agg(number ORDER BY "
								  "number) FROM h), 'images', "
								  "(SELECT coalesce(jsonb_agg("
								  "jsonb_build_object('revision', "
								  "i.revision, 'digest', i.digest, "
								  "'repository', i.repository, "
								  "'tags', to_jsonb(i.tags), "
								  "'pushedAt', " DB_TS(
									  "i.pushed_at") ") "
											 "ORDER BY "
											 "i.id), "
											 "'[]') "
											 "FROM "
											 "images "
											 "i JOIN "
											 "catalogs "
											 "ic ON "
											 "ic.id = "
											 "i."
											 "catalog_"
											 "id WHERE "
											 "ic.name "
											 "= $1 "
											 "AND "
											 "i."
											 "revision "
											 "IN "
											 "(SELECT "
											 "number "
											 "FROM "
											 "h))) "
											 "FROM f",
		3};
	return db_query_json(out, db, &st, (const char *[]){catalog, package, bundle}, "bundle",
			     err);
}

int fbc_db_repo_poll_due(json_t **out, fbc_db *db, fbc_error *err)
{
	/* delay: what remains of pollSeconds since the last fetch (0 when the
	 * mirror was never fetched or is overdue) */
	static const db_stmt st = {
		"repo_poll_due",
		"SELECT r.name, CASE WHEN r.fetched_at IS NULL THEN 0 ELSE greatest(0, "
		"(extract(epoch FROM r.fetched_at - now()) + r.poll_seconds) * 1000)::bigint END "
		"FROM repositories r WHERE r.poll_seconds > 0 AND NOT EXISTS (SELECT 1 FROM jobs j "
		"WHERE j.kind = 'repo.poll' AND j.key = 'poll:' || r.name AND j.state IN "
		"('queued', 'running')) ORDER BY r.name",
		0};
	PGresult *res = NULL;
	json_t *arr;
	int rc;

	if ((rc = db_query(&res, db, &st, NULL, err)))
		return rc;
	if (!(arr = json_array())) {
		PQclear(res);
		return fbc_error_set(err, FBC_ENOMEM, "repositories", "out of memory");
	}
	for (int i = 0; i < PQntuples(res); i++)
		if (json_array_append_new(
			    arr, json_pack("{s:s,s:I}", "name", PQgetvalue(res, i, 0), "delayMs",
					   (json_int_t)strtoll(PQgetvalue(res, i, 1), NULL, 10))) !=
		    0) {
			json_decref(arr);
			PQclear(res);
			return fbc_error_set(err, FBC_ENOMEM, "repositories", "out of memory");
		}
	PQclear(res);
	*out = arr;
	return 0;
}
