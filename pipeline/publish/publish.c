/* catalog.publish: a stored revision built as an OCI image and pushed
 * (publish.h). */
#include "pipeline/publish/publish.h"

#include "db/gitops.h"
#include "pipeline/image/image.h"
#include "pipeline/ingest/ingest.h"
#include "pipeline/oci/client.h"
#include "service/base/log.h"
#include "service/load/load.h"

#include <errno.h>
#include <fnmatch.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_TAGS 32

static const char *jstr(json_t *o, const char *k)
{
	json_t *v = json_object_get(o, k);
	return json_is_string(v) ? json_string_value(v) : NULL;
}

int fbc_publish_target_check(json_t *t, bool catalog_required, fbc_error *err)
{
	const char *k;
	json_t *v;
	fbc_oci_ref ref;
	size_t i;

	if (!json_is_object(t))
		return fbc_error_set(err, FBC_EINVAL, "publish", "a target is an object");
	json_object_foreach(t, k, v)
	{
		if (strcmp(k, "catalog") && strcmp(k, "image") && strcmp(k, "tags") &&
		    strcmp(k, "platforms") && strcmp(k, "insecure") && strcmp(k, "authfile") &&
		    strcmp(k, "base"))
			return fbc_error_set(err, FBC_EINVAL, "publish",
					     "unknown field '%.64s' (catalog, image, tags, "
					     "platforms, insecure, authfile, base)",
					     k);
	}
	if (catalog_required && !jstr(t, "catalog"))
		return fbc_error_set(err, FBC_EINVAL, "publish.catalog",
				     "the catalog (a name or a glob) is required");
	if (!jstr(t, "image"))
		return fbc_error_set(err, FBC_EINVAL, "publish.image",
				     "required: registry/repository[:tag]");
	if (fbc_oci_ref_parse(&ref, jstr(t, "image"), err) != 0)
		return FBC_EINVAL;
	if (ref.digest[0])
		return fbc_error_set(err, FBC_EINVAL, "publish.image",
				     "a tag, not a digest: the digest is what the push makes");
	v = json_object_get(t, "tags");
	if (v && (!json_is_array(v) || json_array_size(v) > MAX_TAGS))
		return fbc_error_set(err, FBC_EINVAL, "publish.tags", "a list of at most %d tags",
				     MAX_TAGS);
	json_t *x;
	json_array_foreach(v, i, x)
	{
		if (!json_is_string(x) || !json_string_length(x) || json_string_length(x) > 120)
			return fbc_error_set(err, FBC_EINVAL, "publish.tags",
					     "tag %zu: a string of 1 to 120 characters", i);
	}
	v = json_object_get(t, "platforms");
	if (v && (!json_is_array(v) || json_array_size(v) > FBC_IMAGE_PLATFORMS_MAX))
		return fbc_error_set(err, FBC_EINVAL, "publish.platforms",
				     "a list of at most %d platforms", FBC_IMAGE_PLATFORMS_MAX);
	json_array_foreach(v, i, x)
	{
		fbc_oci_platform p;
		if (!json_is_string(x) || fbc_oci_platform_parse(&p, json_string_value(x), err))
			return fbc_error_set(err, FBC_EINVAL, "publish.platforms",
					     "platform %zu: %s", i,
					     json_is_string(x) ? err->message : "not a string");
	}
	v = json_object_get(t, "insecure");
	if (v && !json_is_boolean(v))
		return fbc_error_set(err, FBC_EINVAL, "publish.insecure", "true or false");
	v = json_object_get(t, "authfile");
	if (v && !json_is_string(v))
		return fbc_error_set(err, FBC_EINVAL, "publish.authfile", "a file path");
	v = json_object_get(t, "base");
	if (v && (!json_is_string(v) || fbc_oci_ref_parse(&ref, json_string_value(v), err)))
		return fbc_error_set(err, FBC_EINVAL, "publish.base",
				     "a registry reference of a base image (e.g. an opm image)");
	return 0;
}

int fbc_publish_enqueue(int64_t *job, fbc_db *db, const char *repository, const char *catalog,
			int64_t revision, json_t *target, fbc_error *err)
{
	char key[FBC_DB_JOB_KEY_MAX + 1], *text;
	json_t *pl;
	int rc;

	if ((rc = fbc_publish_target_check(target, false, err)))
		return rc;
	pl = json_pack("{s:s,s:I,s:O}", "catalog", catalog, "revision", (json_int_t)revision,
		       "target", target);
	text = pl ? json_dumps(pl, JSON_COMPACT) : NULL;
	json_decref(pl);
	if (!text)
		return fbc_error_set(err, FBC_ENOMEM, "publish", "out of memory");
	snprintf(key, sizeof(key), "publish:%s:%lld:%.400s", catalog, (long long)revision,
		 jstr(target, "image"));
	fbc_db_job_spec spec = {.kind = FBC_PUBLISH_KIND,
				.key = key,
				.repository = repository,
				.payload = text,
				.ordered = repository != NULL,
				.max_attempts = 5};
	rc = fbc_db_job_enqueue(job, NULL, db, &spec, err);
	free(text);
	return rc;
}

int fbc_publish_for_revision(size_t *n, fbc_db *db, const char *repository, json_t *targets,
			     const char *catalog, int64_t revision, fbc_error *err)
{
	json_t *t;
	size_t i;
	int rc = 0;

	*n = 0;
	json_array_foreach(targets, i, t)
	{
		const char *pat = jstr(t, "catalog");
		int64_t job;
		if (!pat || fnmatch(pat, catalog, 0) != 0)
			continue;
		json_t *copy = json_deep_copy(t);
		if (!copy)
			return fbc_error_set(err, FBC_ENOMEM, "publish", "out of memory");
		json_object_del(copy, "catalog");
		rc = fbc_publish_enqueue(&job, db, repository, catalog, revision, copy, err);
		json_decref(copy);
		if (rc)
			break;
		(*n)++;
	}
	return rc;
}

struct rev_ctx {
	fbc_catalog *cat;
	fbc_diags *diags;
};

static int rev_add_meta(void *ctx, const fbc_meta *meta, fbc_error *err)
{
	struct rev_ctx *r = ctx;
	return fbc_catalog_add_meta(r->cat, meta, r->diags, err);
}

int fbc_publish_load_revision(fbc_catalog **out, fbc_db *db, const fbc_db_rev *rev,
			      fbc_diags *diags, fbc_error *err)
{
	fbc_load_limits lim;
	fbc_catalog *cat = NULL;
	struct rev_ctx ctx;
	char *data = NULL;
	size_t len = 0;
	int rc;

	if ((rc = fbc_db_all_get(&data, &len, db, rev, err)))
		return rc;
	fbc_load_limits_default(&lim);
	if (len > lim.max_file_bytes)
		lim.max_file_bytes = len;
	if (len > lim.max_total_bytes)
		lim.max_total_bytes = len;
	if ((rc = fbc_catalog_create(&cat, &lim, err)))
		goto done;
	ctx.cat = cat;
	ctx.diags = diags;
	if ((rc = fbc_load_buffer("catalog.json", data ? data : "", len, &lim, rev_add_meta, &ctx,
				  diags, err)) ||
	    (rc = fbc_catalog_link(cat, err)))
		goto done;
	*out = cat;
	cat = NULL;
done:
	fbc_catalog_free(cat);
	free(data);
	return rc;
}

/* A tag template with {catalog}, {revision}, {commit}; 1 when it names a
 * commit the revision does not have (skipped). */
static int expand(char *out, size_t size, const char *tpl, const char *catalog, int64_t rev,
		  const char *commit)
{
	size_t n = 0;

	for (const char *p = tpl; *p && n + 1 < size;) {
		if (!strncmp(p, "{catalog}", 9)) {
			n += (size_t)snprintf(out + n, size - n, "%s", catalog);
			p += 9;
		} else if (!strncmp(p, "{revision}", 10)) {
			n += (size_t)snprintf(out + n, size - n, "%lld", (long long)rev);
			p += 10;
		} else if (!strncmp(p, "{commit}", 8)) {
			if (!commit)
				return 1;
			n += (size_t)snprintf(out + n, size - n, "%.12s", commit);
			p += 8;
		} else {
			out[n++] = *p++;
		}
		if (n >= size)
			n = size - 1;
	}
	out[n] = '\0';
	return 0;
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st, (void)flag, (void)ftw;
	return remove(path);
}

int fbc_publish_run(fbc_queue_ctx *ctx, json_t *payload, char **result, fbc_error *err)
{
	const fbc_pipeline_env *env = ctx->app;
	const char *catalog = jstr(payload, "catalog");
	int64_t number = json_integer_value(json_object_get(payload, "revision"));
	json_t *target = json_object_get(payload, "target"), *facts = NULL, *res = NULL;
	fbc_oci_platform plats[FBC_IMAGE_PLATFORMS_MAX];
	char dir[4096] = "", tagbuf[MAX_TAGS][130], plat_list[FBC_IMAGE_PLATFORMS_MAX * 40 + 3];
	char tag_list[MAX_TAGS * 132 + 3], fbcd_rev[300];
	const char *tags[MAX_TAGS];
	size_t n_plats = 0, n_tags = 0;
	fbc_catalog *cat = NULL;
	fbc_oci_client *client = NULL;
	fbc_image_result img;
	fbc_oci_push_stats st;
	fbc_oci_ref ref;
	fbc_diags diags;
	fbc_db_rev rev;
	int rc;

	if (!catalog || number < 1)
		return fbc_error_set(err, FBC_EINVAL, "payload", "catalog and revision required");
	if ((rc = fbc_publish_target_check(target, false, err)) ||
	    (rc = fbc_oci_ref_parse(&ref, jstr(target, "image"), err)))
		return rc == FBC_ENOMEM ? rc : FBC_EINVAL;
	if (fbc_diags_init(&diags, 20) != 0)
		return fbc_error_set(err, FBC_ENOMEM, "publish", "out of memory");
	if ((rc = fbc_db_revision_facts(&facts, ctx->db, catalog, number, err)) ||
	    (rc = fbc_db_revision_resolve(&rev, ctx->db, catalog, number, err)) ||
	    (rc = fbc_publish_load_revision(&cat, ctx->db, &rev, &diags, err)))
		goto done;

	/* platforms and tags */
	json_t *v;
	size_t i;
	json_array_foreach(json_object_get(target, "platforms"), i, v)
	{
		if ((rc = fbc_oci_platform_parse(&plats[n_plats], json_string_value(v), err)))
			goto done;
		n_plats++;
	}
	if (!n_plats && (rc = fbc_oci_platform_parse(&plats[n_plats++], "linux/amd64", err)))
		goto done;
	const char *commit = jstr(facts, "commit");
	json_array_foreach(json_object_get(target, "tags"), i, v)
	{
		if (expand(tagbuf[n_tags], sizeof(tagbuf[0]), json_string_value(v), catalog, number,
			   commit))
			continue;
		if (!fbc_oci_tag_valid(tagbuf[n_tags])) {
			rc = fbc_error_set(err, FBC_EINVAL, "publish.tags",
					   "'%s' is not a valid tag", tagbuf[n_tags]);
			goto done;
		}
		tags[n_tags] = tagbuf[n_tags];
		n_tags++;
	}

	/* build into a private directory of the data directory */
	snprintf(dir, sizeof(dir), "%s/tmp", env && env->data_dir ? env->data_dir : "/tmp");
	if (mkdir(dir, 0700) != 0 && errno != EEXIST) {
		rc = fbc_error_set(err, FBC_EIO, dir, "cannot create: %s", strerror(errno));
		dir[0] = '\0';
		goto done;
	}
	snprintf(dir + strlen(dir), sizeof(dir) - strlen(dir), "/publish-XXXXXX");
	if (!mkdtemp(dir)) {
		rc = fbc_error_set(err, FBC_EIO, dir, "cannot create: %s", strerror(errno));
		dir[0] = '\0';
		goto done;
	}
	/* a runnable image: the base pulled (for these platforms) into the
	 * build directory, its layers under ours */
	char base_dir[4200] = "";
	fbc_oci_client_options co = {.insecure = json_is_true(json_object_get(target, "insecure")),
				     .docker_config = jstr(target, "authfile"),
				     .ca_file = env ? env->ca_file : NULL,
				     .max_retries = -1};
	if ((rc = fbc_oci_client_create(&client, &co, err)))
		goto done;
	if (jstr(target, "base")) {
		fbc_oci_ref bref;
		fbc_oci_descriptor btop;
		snprintf(base_dir, sizeof(base_dir), "%s/base", dir);
		if (mkdir(base_dir, 0700) != 0) {
			rc = fbc_error_set(err, FBC_EIO, base_dir, "cannot create: %s",
					   strerror(errno));
			goto done;
		}
		if ((rc = fbc_oci_ref_parse(&bref, jstr(target, "base"), err)) ||
		    (rc = fbc_oci_pull(client, &btop, &bref, plats, n_plats, base_dir, NULL, err)))
			goto done;
	}
	snprintf(dir + strlen(dir), sizeof(dir) - strlen(dir), "/image");
	snprintf(fbcd_rev, sizeof(fbcd_rev), "%s@%lld", catalog, (long long)number);
	fbc_image_build_options bo = {
		.platforms = plats,
		.n_platforms = n_plats,
		.created = json_integer_value(json_object_get(facts, "created")),
		.source = jstr(facts, "source"),
		.revision = commit,
		.fbcd_revision = fbcd_rev,
		.base_layout = base_dir[0] ? base_dir : NULL,
	};
	if ((rc = fbc_image_build(&img, cat, dir, NULL, &bo, err)))
		goto done;
	/* blobs, manifests by digest, then the tags (the target's, then these) */
	if ((rc = fbc_oci_push_layout(client, &st, dir, NULL, &ref, tags, n_tags, err)))
		goto done;

	/* record it: every tag now naming the digest */
	size_t n = 1;
	plat_list[0] = '{';
	for (i = 0; i < n_plats; i++)
		n += (size_t)snprintf(plat_list + n, sizeof(plat_list) - n, "%s\"%s/%s%s%s\"",
				      i ? "," : "", plats[i].os, plats[i].architecture,
				      plats[i].variant[0] ? "/" : "", plats[i].variant);
	snprintf(plat_list + n, sizeof(plat_list) - n, "}");
	n = 1;
	tag_list[0] = '{';
	if (ref.tag[0])
		n += (size_t)snprintf(tag_list + n, sizeof(tag_list) - n, "\"%s\"", ref.tag);
	for (i = 0; i < n_tags; i++)
		n += (size_t)snprintf(tag_list + n, sizeof(tag_list) - n, "%s\"%s\"",
				      n > 1 ? "," : "", tags[i]);
	snprintf(tag_list + n, sizeof(tag_list) - n, "}");
	char repo_name[520];
	snprintf(repo_name, sizeof(repo_name), "%s/%s", ref.registry, ref.repository);
	fbc_db_image im = {catalog,   number,	 st.digest, img.top.media_type,
			   plat_list, repo_name, tag_list,  ctx->job->id};
	if ((rc = fbc_db_image_record(ctx->db, &im, err)))
		goto done;
	res = json_pack("{s:s,s:s,s:s,s:I,s:I,s:I}", "digest", st.digest, "repository", repo_name,
			"mediaType", img.top.media_type, "blobsUploaded",
			(json_int_t)st.blobs_uploaded, "bytesUploaded",
			(json_int_t)st.bytes_uploaded, "blobsExisting",
			(json_int_t)st.blobs_existing);
	if (!res || !(*result = json_dumps(res, JSON_COMPACT)))
		rc = fbc_error_set(err, FBC_ENOMEM, "publish", "out of memory");
	else
		fbc_log(FBC_LOG_INFO,
			(fbc_log_field[]){
				FBC_LOG_STR("catalog", catalog), FBC_LOG_NUM("revision", number),
				FBC_LOG_STR("image", repo_name), FBC_LOG_STR("digest", st.digest)},
			4, "catalog image published");
done:
	if (dir[0]) {
		char *slash = strstr(dir, "/image");
		if (slash && !slash[6])
			*slash = '\0'; /* the build directory holds image/ and base/ */
		nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	}
	fbc_oci_client_free(client);
	fbc_catalog_free(cat);
	fbc_diags_dispose(&diags);
	json_decref(facts);
	json_decref(res);
	return rc;
}
