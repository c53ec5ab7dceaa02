/* repo.ingest: mirror, build, validate, store with provenance (ingest.h). */
#include "pipeline/ingest/ingest.h"

#include "db/gitops.h"
#include "pipeline/catalogs/catalogs.h"
#include "pipeline/forge/secret.h"
#include "pipeline/git/git.h"
#include "pipeline/checks/settings.h"
#include "pipeline/git/mirror.h"
#include "pipeline/publish/publish.h"
#include "service/base/metrics.h"
#include "service/load/load.h"
#include "service/fbc/validate.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>

static const char *jstr(json_t *o, const char *a, const char *b)
{
	json_t *v = json_object_get(o, a);
	if (b)
		v = json_object_get(v, b);
	return json_is_string(v) ? json_string_value(v) : NULL;
}

static const double fetch_buckets[] = {0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120};
static const fbc_metric_def m_fetch = {
	.name = "fbcd_git_fetch_duration_seconds",
	.help = "Time a fetch of a repository's mirror took (clone included), by repository.",
	.type = FBC_METRIC_HISTOGRAM,
	.labels = {"repository"},
	.buckets = fetch_buckets,
	.n_buckets = sizeof(fetch_buckets) / sizeof(fetch_buckets[0])};

int fbc_ingest_mirror(char **path, fbc_db *db, const fbc_pipeline_env *env, json_t *repo,
		      fbc_error *err)
{
	const char *name = jstr(repo, "name", NULL), *kind = jstr(repo, "forge", "kind");
	char dir[4096], lockkey[300];
	fbc_git_mirror_opts mo;
	fbc_db_lock *lk = NULL;
	char *token = NULL;
	int rc;

	if ((size_t)snprintf(dir, sizeof(dir), "%s/mirrors", env->data_dir) >= sizeof(dir))
		return fbc_error_set(err, FBC_EINVAL, env->data_dir,
				     "data directory path too long");
	/* `fbcd worker` may be the first to use its data directory */
	if (mkdir(env->data_dir, 0700) != 0 && errno != EEXIST)
		return fbc_error_set(err, FBC_EIO, env->data_dir, "cannot create: %s",
				     strerror(errno));
	if (mkdir(dir, 0700) != 0 && errno != EEXIST)
		return fbc_error_set(err, FBC_EIO, dir, "cannot create: %s", strerror(errno));
	snprintf(dir, sizeof(dir), "%s/mirrors/%s.git", env->data_dir, name);
	memset(&mo, 0, sizeof(mo));
	mo.url = jstr(repo, "url", NULL);
	mo.review_refs = kind && !strcmp(kind, "github")   ? "+refs/pull/*/head:refs/pull/*/head"
			 : kind && !strcmp(kind, "gitlab") ? "+refs/merge-requests/*/head:refs/"
							     "merge-requests/*/head"
							   : NULL;
	mo.token_user = kind && !strcmp(kind, "gitlab") ? "oauth2" : "x-access-token";
	mo.ssh_key_file = jstr(repo, "credentials", "sshKeyFile");
	const char *tf = jstr(repo, "credentials", "tokenFile"),
		   *te = jstr(repo, "credentials", "tokenEnv");
	if ((tf || te) && (rc = fbc_secret_read(&token, tf, te, err)) != 0)
		return rc == FBC_ENOTFOUND ? FBC_EUNAVAIL : rc;
	mo.token = token;
	snprintf(lockkey, sizeof(lockkey), "mirror:%s", name);
	if ((rc = fbc_db_lock_acquire(&lk, db, lockkey, err)) == 0) {
		struct timespec t0, t1;
		clock_gettime(CLOCK_MONOTONIC, &t0);
		rc = fbc_git_mirror_fetch(dir, &mo, err);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		fbc_db_lock_release(lk);
		fbc_metric_observe(&m_fetch, (const char *[]){name},
				   (double)(t1.tv_sec - t0.tv_sec) +
					   (t1.tv_nsec - t0.tv_nsec) / 1e9);
	}
	fbc_secret_free(token);
	if (rc)
		return rc;
	if (!(*path = strdup(dir)))
		return fbc_error_set(err, FBC_ENOMEM, dir, "out of memory");
	return 0;
}

/* The decoded files of the catalogs this process ingested, by blob id (service/fbc
 * fbc_catalog_cache, 128 MiB of file content at most): the next commit of a repository re-reads
 * only the files it changed. Catalogs built in memory (the operator layout's) have no ids and
 * are read whole. */
static fbc_catalog_cache *files_cache(void)
{
	static fbc_catalog_cache *cache;
	static bool tried;
	static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
	fbc_error e;

	pthread_mutex_lock(&mu);
	if (!tried) {
		tried = true;
		if (fbc_catalog_cache_create(&cache, (size_t)128 << 20, &e) != 0)
			cache = NULL; /* loads then read every file */
	}
	pthread_mutex_unlock(&mu);
	return cache;
}

/* Load, validate and store one catalog; appends its outcome to out. */
static int store_catalog(json_t *out, const fbc_pipeline_env *env, fbc_db *db, const char *catalog,
			 fbc_tree *tree, const char *url, const fbc_db_provenance *prov,
			 fbc_error *err)
{
	fbc_catalog *cat = NULL;
	fbc_diags diags;
	json_t *rev = NULL, *item = NULL;
	bool created = false;
	int rc;

	if (fbc_diags_init(&diags, 100) != 0)
		return fbc_error_set(err, FBC_ENOMEM, catalog, "out of memory");
	if ((rc = fbc_catalog_load_tree_cached(&cat, tree, NULL, files_cache(), &diags, err)) ||
	    (rc = fbc_validate(cat, NULL, &diags, err)))
		goto done;
	if (fbc_diags_count(&diags) > 0 || diags.dropped) {
		json_t *f = json_array();
		for (size_t i = 0; f && i < fbc_diags_count(&diags) && i < 20; i++) {
			const fbc_diag *d = fbc_diags_at(&diags, i);
			json_array_append_new(f, json_pack("{s:s,s:s?,s:i,s:s}", "code", d->code,
							   "file", d->file, "line", d->line,
							   "message", d->message));
		}
		item = json_pack("{s:s,s:b,s:o}", "catalog", catalog, "valid", 0, "findings",
				 f ? f : json_array());
		goto done;
	}
	fbc_db_catalog_spec spec = {catalog, 0, NULL, url};
	json_t *made = NULL;
	fbc_error e2;
	fbc_error_init(&e2);
	if ((rc = fbc_db_catalog_create(&made, db, &spec, &e2)) != 0 && rc != FBC_ECONFLICT) {
		*err = e2;
		goto done;
	}
	json_decref(made);
	if ((rc = fbc_db_ingest(&rev, &created, db, catalog, cat, err)))
		goto done;
	int64_t number = json_integer_value(json_object_get(rev, "revision"));
	if ((rc = fbc_db_revision_provenance(db, catalog, number, prov, err)))
		goto done;
	if (created && env->revision_created)
		env->revision_created(env->revision_created_ctx, catalog);
	item = json_pack("{s:s,s:b,s:I,s:O,s:b}", "catalog", catalog, "valid", 1, "revision",
			 (json_int_t)number, "digest", json_object_get(rev, "digest"), "created",
			 created);
done:
	if (rc == 0 && item)
		json_array_append_new(out, item);
	else
		json_decref(item);
	json_decref(rev);
	fbc_catalog_free(cat);
	fbc_diags_dispose(&diags);
	return rc;
}

struct fbcd_ctx {
	json_t *out;
	const fbc_pipeline_env *env;
	fbc_db *db;
	fbc_tree *tree;
	const char *url;
	const fbc_db_provenance *prov;
};

static int fbcd_store(const char *dir, const char *name, void *ctx, fbc_error *err)
{
	struct fbcd_ctx *f = ctx;
	fbc_tree *sub = NULL;
	int rc;

	if ((rc = fbc_tree_sub(&sub, f->tree, dir, err)) == 0)
		rc = store_catalog(f->out, f->env, f->db, name, sub, f->url, f->prov, err);
	fbc_tree_free(sub);
	return rc;
}

/* The .fbcd.yaml layout (pipeline.md §3.1): each directory its `catalogs`
 * name is one catalog. *found is false (and nothing done) without the file. */
static int fbcd_catalogs(bool *found, json_t *out, const fbc_pipeline_env *env, fbc_db *db,
			 fbc_tree *tree, const char *url, const fbc_db_provenance *prov,
			 fbc_error *err)
{
	fbc_tree_blob blob = {0};
	fbc_settings settings;
	fbc_arena *arena = NULL;
	int rc;

	*found = false;
	rc = fbc_tree_read(tree, &blob, ".fbcd.yaml", FBC_SETTINGS_MAX_BYTES, err);
	if (rc == FBC_ENOTFOUND) {
		fbc_error_init(err);
		return 0;
	}
	if (rc)
		return rc;
	*found = true;
	memset(&settings, 0, sizeof(settings));
	if (fbc_arena_create(&arena, 0) != 0)
		rc = fbc_error_set(err, FBC_ENOMEM, ".fbcd.yaml", "out of memory");
	else
		rc = fbc_settings_parse_fbcd(&settings, arena, ".fbcd.yaml", blob.data, blob.len,
					     err);
	if (rc == 0 && settings.n_catalogs == 0)
		rc = fbc_error_set(err, FBC_EINVAL, ".fbcd.yaml",
				   "declares no catalogs (catalogs: [{path: ...}])");
	if (rc == 0) {
		struct fbcd_ctx f = {out, env, db, tree, url, prov};
		rc = fbc_settings_catalog_dirs(&settings, tree, fbcd_store, &f, err);
	}
	fbc_tree_blob_release(tree, &blob);
	fbc_arena_free(arena);
	return rc;
}

/* The `publish` list of the commit's .fbcd.yaml (pipeline.md §3.1), each
 * entry checked; *out NULL without the file or the list. */
static int fbcd_publish_targets(json_t **out, fbc_tree *tree, fbc_error *err)
{
	fbc_tree_blob blob = {0};
	json_t *doc = NULL, *list, *t;
	size_t i;
	int rc;

	*out = NULL;
	rc = fbc_tree_read(tree, &blob, ".fbcd.yaml", FBC_SETTINGS_MAX_BYTES, err);
	if (rc == FBC_ENOTFOUND) {
		fbc_error_init(err);
		return 0;
	}
	if (rc)
		return rc;
	rc = fbc_yaml_to_json(&doc, blob.data ? blob.data : "", blob.len, NULL, err);
	fbc_tree_blob_release(tree, &blob);
	if (rc)
		return fbc_error_set(err, FBC_EINVAL, ".fbcd.yaml", "%s", err->message);
	list = json_object_get(doc, "publish");
	if (list && !json_is_array(list)) {
		json_decref(doc);
		return fbc_error_set(err, FBC_EINVAL, ".fbcd.yaml", "publish: a list of targets");
	}
	json_array_foreach(list, i, t)
	{
		if ((rc = fbc_publish_target_check(t, true, err))) {
			json_decref(doc);
			fbc_error_prefix(err, ".fbcd.yaml: publish[%zu]: %s", i, err->where);
			return FBC_EINVAL;
		}
	}
	*out = json_incref(list);
	json_decref(doc);
	return 0;
}

int fbc_ingest_run(fbc_queue_ctx *ctx, json_t *payload, char **result, fbc_error *err)
{
	const fbc_pipeline_env *env = ctx->app;
	const char *name = jstr(payload, "repository", NULL),
		   *commit = jstr(payload, "commit", NULL);
	json_t *repo = NULL, *cats = NULL, *res = NULL;
	char *path = NULL, *author = NULL, id[FBC_GIT_ID_MAX];
	fbc_git *g = NULL;
	fbc_tree *tree = NULL;
	fbc_repo_history *hist = NULL;
	fbc_repo_catalogs *rc_cats = NULL;
	long long when = 0;
	long pull = 0;
	int rc;

	if (!env || !env->data_dir)
		return fbc_error_set(err, FBC_EINVAL, "ingest", "no data directory configured");
	if (!name || !commit)
		return fbc_error_set(err, FBC_EINVAL, "payload", "repository and commit required");
	if ((rc = fbc_db_repo_get(&repo, ctx->db, name, err)))
		return rc == FBC_ENOTFOUND ? FBC_EINVAL : rc; /* deleted meanwhile: give up */
	if ((rc = fbc_ingest_mirror(&path, ctx->db, env, repo, err)))
		goto done;
	if ((rc = fbc_git_open(&g, path, err)))
		goto done;
	if ((rc = fbc_git_resolve(id, g, commit, err))) {
		/* the push's commit is not on the remote (force-pushed away) */
		rc = fbc_error_set(err, FBC_EINVAL, commit, "commit not found after fetching %s",
				   jstr(repo, "url", NULL));
		goto done;
	}
	if ((rc = fbc_db_repo_fetched(ctx->db, name, id, err)) ||
	    (rc = fbc_git_commit_info(&author, &when, path, id, err)) ||
	    (rc = fbc_db_pull_of_commit(&pull, ctx->db, name, id, err)))
		goto done;
	fbc_db_provenance prov = {name, id, author, pull, when};
	if ((rc = fbc_git_tree_open(&tree, g, id, err)))
		goto done;
	if (!(cats = json_array())) {
		rc = fbc_error_set(err, FBC_ENOMEM, "ingest", "out of memory");
		goto done;
	}
	bool fbcd_layout = false;
	if ((rc = fbcd_catalogs(&fbcd_layout, cats, env, ctx->db, tree, jstr(repo, "url", NULL),
				&prov, err)) ||
	    fbcd_layout)
		goto stored;
	rc = fbc_repo_history_from_git(&hist, g, id, err);
	if (rc == 0)
		rc = fbc_repo_catalogs_build(&rc_cats, tree, hist, NULL, err);
	if (rc == 0) {
		/* operator layout: one catalog per catalogs/<name>/ */
		for (size_t i = 0; i < fbc_repo_catalogs_count(rc_cats) && rc == 0; i++) {
			fbc_tree *ct = NULL;
			if ((rc = fbc_repo_catalogs_tree(&ct, rc_cats, i, err)) == 0)
				rc = store_catalog(cats, env, ctx->db,
						   fbc_repo_catalogs_name(rc_cats, i), ct,
						   jstr(repo, "url", NULL), &prov, err);
			fbc_tree_free(ct);
		}
	} else if (rc == FBC_ENOTFOUND) {
		/* plain layout: the root is the catalog named after the repository */
		fbc_error_init(err);
		rc = store_catalog(cats, env, ctx->db, name, tree, jstr(repo, "url", NULL), &prov,
				   err);
	}
stored:
	if (rc)
		goto done;
	/* §8: each new revision goes to the publish targets: the repository's
	 * own list when it has one (an override), else its .fbcd.yaml's */
	json_t *item, *targets = json_object_get(repo, "publish"), *file_targets = NULL;
	size_t k;
	if (!json_is_array(targets) && (rc = fbcd_publish_targets(&file_targets, tree, err)))
		goto done;
	if (!json_is_array(targets))
		targets = file_targets;
	json_array_foreach(cats, k, item)
	{
		size_t n = 0;
		if (!json_is_true(json_object_get(item, "created")))
			continue;
		if ((rc = fbc_publish_for_revision(
			     &n, ctx->db, name, targets,
			     json_string_value(json_object_get(item, "catalog")),
			     json_integer_value(json_object_get(item, "revision")), err))) {
			json_decref(file_targets);
			goto done;
		}
		if (n)
			json_object_set_new(item, "publishJobs", json_integer((json_int_t)n));
	}
	json_decref(file_targets);
	if ((rc = fbc_db_commit_seen(ctx->db, &prov, err)))
		goto done;
	res = json_pack("{s:s,s:O,s:o}", "commit", id, "catalogs", cats, "pullRequest",
			pull ? json_integer(pull) : json_null());
	if (!res || !(*result = json_dumps(res, JSON_COMPACT)))
		rc = fbc_error_set(err, FBC_ENOMEM, "ingest", "out of memory");
done:
	json_decref(res);
	json_decref(cats);
	json_decref(repo);
	fbc_repo_catalogs_free(rc_cats);
	fbc_repo_history_free(hist);
	fbc_tree_free(tree);
	fbc_git_free(g);
	free(author);
	free(path);
	return rc;
}
