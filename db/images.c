/* Catalog images (gitops.h): what catalog.publish pushed, and the revision
 * facts an image build needs. */
#include "db/gitops.h"
#include "db/internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define IMAGE_JSON                                                                           \
	"jsonb_build_object('catalog', c.name, 'revision', i.revision, 'digest', i.digest, " \
	"'mediaType', i.media_type, 'platforms', to_jsonb(i.platforms), 'repository', "      \
	"i.repository, 'tags', to_jsonb(i.tags), 'job', i.job_id, 'pushedAt', " DB_TS(       \
		"i.pushed_at") ")"

int fbc_db_image_record(fbc_db *db, const fbc_db_image *im, fbc_error *err)
{
	static const db_stmt st = {
		"image_record",
		"INSERT INTO images (catalog_id, revision, digest, media_type, platforms, "
		"repository, tags, job_id) SELECT c.id, $2::bigint, $3, $4, $5::text[], $6, "
		"$7::text[], $8::bigint FROM catalogs c WHERE c.name = $1 ON CONFLICT (catalog_id, "
		"revision, repository, digest) DO UPDATE SET tags = (SELECT array_agg(DISTINCT t "
		"ORDER BY t) FROM unnest(images.tags || EXCLUDED.tags) t), job_id = "
		"EXCLUDED.job_id, pushed_at = now() RETURNING id",
		8};
	PGresult *res = NULL;
	char rev[24], job[24];
	int rc;

	snprintf(rev, sizeof(rev), "%lld", (long long)im->revision);
	snprintf(job, sizeof(job), "%lld", (long long)im->job_id);
	if ((rc = db_query(&res, db, &st,
			   (const char *[]){im->catalog, rev, im->digest, im->media_type,
					    im->platforms, im->repository, im->tags,
					    im->job_id ? job : NULL},
			   err)))
		return rc;
	if (PQntuples(res) < 1)
		rc = fbc_error_set(err, FBC_ENOTFOUND, im->catalog, "no such catalog");
	PQclear(res);
	return rc;
}

int fbc_db_image_list(json_t **out, fbc_db *db, const char *catalog, fbc_error *err)
{
	static const db_stmt st = {
		"image_list",
		"SELECT jsonb_build_object('items', coalesce((SELECT jsonb_agg(" IMAGE_JSON
		" ORDER BY i.id DESC) FROM images i WHERE i.catalog_id = c.id), '[]')) FROM "
		"catalogs c WHERE c.name = $1",
		1};
	return db_query_json(out, db, &st, (const char *[]){catalog}, "catalog", err);
}

int fbc_db_image_get(json_t **out, fbc_db *db, const char *digest, fbc_error *err)
{
	static const db_stmt st = {
		"image_get",
		"SELECT jsonb_build_object('digest', $1::text, 'images', jsonb_agg(" IMAGE_JSON
		" ORDER BY i.id DESC)) FROM images i JOIN catalogs c ON c.id = i.catalog_id "
		"WHERE i.digest = $1 HAVING count(*) > 0",
		1};
	return db_query_json(out, db, &st, (const char *[]){digest}, "image", err);
}

int fbc_db_revision_facts(json_t **out, fbc_db *db, const char *catalog, int64_t number,
			  fbc_error *err)
{
	static const db_stmt st = {
		"revision_facts",
		"SELECT jsonb_build_object('catalog', c.name, 'revision', r.number, 'digest', "
		"r.digest, 'created', extract(epoch FROM coalesce(r.committed_at, "
		"r.created_at))::bigint, 'commit', r.commit, 'repository', r.repository, "
		"'source', rep.url) FROM catalogs c JOIN revisions r ON r.catalog_id = c.id LEFT "
		"JOIN repositories rep ON rep.name = r.repository WHERE c.name = $1 AND r.number = "
		"CASE WHEN $2::bigint = 0 THEN (SELECT number FROM revisions WHERE id = "
		"c.current_revision_id) ELSE $2::bigint END",
		2};
	char num[24];

	snprintf(num, sizeof(num), "%lld", (long long)number);
	return db_query_json(out, db, &st, (const char *[]){catalog, num}, "revision", err);
}
