/*
 * Read queries and catalog CRUD (see db.h). Each statement builds its JSON
 * in PostgreSQL (json_build_object) so that one round trip returns the
 * response body; the C side only parses it.
 */
#include "db/internal.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TS(col) "to_char(" col " AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"')"

#define CATALOG_JSON                                                                  \
	"json_build_object('name', c.name, 'priority', c.priority, 'displayName', "   \
	"c.display_name, 'source', c.source, 'currentRevision', r.number, 'digest', " \
	"r.digest, 'createdAt', " TS("c.created_at") ", 'updatedAt', " TS("c.updated_at") ")"

#define REVISION_JSON                                                                            \
	"json_build_object('catalog', c.name, 'revision', r.number, 'digest', r.digest, "        \
	"'createdAt', " TS("r.created_at") ", 'current', c.current_revision_id IS NOT DISTINCT " \
					   "FROM r.id, 'counts', json_build_object('packages', " \
					   "r.n_packages, 'channels', "                          \
					   "r.n_channels, 'bundles', r.n_bundles, 'entries', "   \
					   "r.n_entries, 'edges', r.n_edges, "                   \
					   "'deprecations', r.n_deprecations, 'others', "        \
					   "r.n_others, 'blobs', r.n_blobs, "                    \
					   "'bytes', r.n_bytes), 'provenance', CASE WHEN "       \
					   "r.repository IS NULL THEN NULL ELSE "                \
					   "json_build_object('repository', r.repository, "      \
					   "'commit', r.commit, 'pullRequest', r.pull_request, " \
					   "'author', r.author, 'committedAt', " TS(             \
						   "r.committed_at") ") END)"

#define DEPRECATION(msg) \
	"CASE WHEN " msg " IS NULL THEN NULL ELSE json_build_object('message', " msg ") END"

#define SOURCE(t) "json_build_object('file', " t ".file, 'line', " t ".line)"

static char *rev_text(char buf[24], const fbc_db_rev *rev)
{
	snprintf(buf, 24, "%lld", (long long)rev->id);
	return buf;
}

static int valid_name(const char *s)
{
	size_t n = s ? strlen(s) : 0;

	if (n == 0 || n > 253)
		return 0;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if (!(islower(c) || isdigit(c) || c == '-' || c == '.'))
			return 0;
	}
	return isalnum((unsigned char)s[0]) && isalnum((unsigned char)s[n - 1]);
}

/* Bounded text inputs: anything longer cannot match and is refused. */
static int check_arg(const char *s, const char *what, fbc_error *err)
{
	if (s && strlen(s) > 4096)
		return fbc_error_set(err, FBC_EINVAL, what, "%s longer than 4096 bytes", what);
	return 0;
}

/* ---------------------------------------------------------- catalogs */

int fbc_db_catalog_create(json_t **out, fbc_db *db, const fbc_db_catalog_spec *spec, fbc_error *err)
{
	static const db_stmt st = {
		"catalog_create",
		"WITH c AS (INSERT INTO catalogs (name, priority, display_name, source) "
		"VALUES ($1, $2, $3, $4) RETURNING *), r AS (SELECT NULL::bigint AS number, "
		"NULL::text AS digest) SELECT " CATALOG_JSON " FROM c, r",
		4};
	char prio[16];
	int rc;

	if (!valid_name(spec->name))
		return fbc_error_set(err, FBC_EINVAL, "name",
				     "catalog name must be a DNS-1123 subdomain (lowercase "
				     "letters, digits, '-' and '.', at most 253 bytes)");
	if ((rc = check_arg(spec->display_name, "displayName", err)) ||
	    (rc = check_arg(spec->source, "source", err)))
		return rc;
	snprintf(prio, sizeof(prio), "%d", spec->priority);
	rc = db_query_json(out, db, &st,
			   (const char *[]){spec->name, prio, spec->display_name, spec->source},
			   "catalog", err);
	if (rc == FBC_ECONFLICT)
		fbc_error_set(err, rc, spec->name, "catalog '%s' already exists", spec->name);
	return rc;
}

int fbc_db_catalog_list(json_t **out, fbc_db *db, const fbc_db_page *page, fbc_error *err)
{
	static const db_stmt st = {"catalog_list",
				   "SELECT c.name, " CATALOG_JSON " FROM catalogs c LEFT JOIN "
				   "revisions r ON r.id = c.current_revision_id WHERE ($1::text IS "
				   "NULL OR c.name > $1) ORDER BY c.name LIMIT $2",
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

int fbc_db_catalog_gauges(json_t **out, fbc_db *db, fbc_error *err)
{
	static const db_stmt st = {
		"catalog_gauges",
		"SELECT coalesce(json_agg(json_build_object('name', c.name, 'revision', r.number, "
		"'packages', r.n_packages, 'bundles', r.n_bundles) ORDER BY c.name), '[]') FROM "
		"catalogs c JOIN revisions r ON r.id = c.current_revision_id",
		0};

	return db_query_json(out, db, &st, NULL, "catalogs", err);
}

int fbc_db_catalog_get(json_t **out, fbc_db *db, const char *name, fbc_error *err)
{
	static const db_stmt st = {"catalog_get",
				   "SELECT " CATALOG_JSON
				   " FROM catalogs c LEFT JOIN revisions r ON "
				   "r.id = c.current_revision_id WHERE c.name = $1",
				   1};
	int rc = check_arg(name, "catalog", err);

	return rc ? rc : db_query_json(out, db, &st, (const char *[]){name}, "catalog", err);
}

int fbc_db_catalog_delete(fbc_db *db, const char *name, fbc_error *err)
{
	/* Row tables have no foreign keys (see 0001_init.sql): one statement
	 * removes them with the catalog, atomically. */
#define DEL(t) ", d_" t " AS (DELETE FROM " t " WHERE revision_id IN (SELECT id FROM revs))"
	static const db_stmt st = {
		"catalog_delete",
		"WITH cat AS (SELECT id FROM catalogs WHERE name = $1 FOR UPDATE), revs AS (SELECT "
		"id FROM revisions WHERE catalog_id IN (SELECT id FROM cat))" DEL("blobs") DEL(
			"packages") DEL("package_icons") DEL("channels") DEL("channel_entries")
			DEL("upgrade_edges") DEL("bundles") DEL("bundle_properties") DEL(
				"provided_gvks") DEL("required_gvks") DEL("package_requirements")
				DEL("related_images") DEL("deprecations")
					DEL("others") ", dc AS (DELETE FROM catalogs WHERE id IN "
						      "(SELECT id FROM cat) RETURNING 1) "
						      "SELECT count(*) FROM dc",
		1};
#undef DEL
	PGresult *res = NULL;
	int rc;

	if ((rc = check_arg(name, "catalog", err)) ||
	    (rc = db_query(&res, db, &st, (const char *[]){name}, err)))
		return rc;
	if (strcmp(PQgetvalue(res, 0, 0), "0") == 0)
		rc = fbc_error_set(err, FBC_ENOTFOUND, name, "catalog '%s' not found", name);
	PQclear(res);
	return rc;
}

/* ---------------------------------------------------------- revisions */

int fbc_db_revision_resolve(fbc_db_rev *out, fbc_db *db, const char *catalog, int64_t number,
			    fbc_error *err)
{
	static const db_stmt st = {
		"revision_resolve",
		"SELECT r.id, r.number, r.digest FROM catalogs c LEFT JOIN revisions r ON "
		"r.catalog_id = c.id AND CASE WHEN $2::bigint = 0 THEN r.id = "
		"c.current_revision_id ELSE r.number = $2::bigint END WHERE c.name = $1",
		2};
	PGresult *res = NULL;
	char num[24];
	int rc;

	if ((rc = check_arg(catalog, "catalog", err)))
		return rc;
	if (number < 0)
		return fbc_error_set(err, FBC_EINVAL, "revision", "revision must be positive");
	snprintf(num, sizeof(num), "%lld", (long long)number);
	if ((rc = db_query(&res, db, &st, (const char *[]){catalog, num}, err)))
		return rc;
	if (PQntuples(res) == 0)
		rc = fbc_error_set(err, FBC_ENOTFOUND, catalog, "catalog '%s' not found", catalog);
	else if (PQgetisnull(res, 0, 0))
		rc = number ? fbc_error_set(err, FBC_ENOTFOUND, "revision",
					    "catalog '%s' has no revision %lld", catalog,
					    (long long)number)
			    : fbc_error_set(err, FBC_ENOTFOUND, "revision",
					    "catalog '%s' has no content yet", catalog);
	else {
		out->id = strtoll(PQgetvalue(res, 0, 0), NULL, 10);
		out->number = strtoll(PQgetvalue(res, 0, 1), NULL, 10);
		snprintf(out->digest, sizeof(out->digest), "%s", PQgetvalue(res, 0, 2));
	}
	PQclear(res);
	return rc;
}

static int catalog_exists(fbc_db *db, const char *catalog, fbc_error *err)
{
	json_t *j = NULL;
	int rc = fbc_db_catalog_get(&j, db, catalog, err);

	json_decref(j);
	return rc;
}

int fbc_db_revision_list(json_t **out, fbc_db *db, const char *catalog, const fbc_db_page *page,
			 fbc_error *err)
{
	static const db_stmt st = {
		"revision_list",
		"SELECT lpad(r.number::text, 20, '0'), " REVISION_JSON
		" FROM catalogs c JOIN revisions r ON r.catalog_id = c.id WHERE c.name = $1 AND "
		"($2::text IS NULL OR lpad(r.number::text, 20, '0') < $2) ORDER BY r.number DESC "
		"LIMIT $3",
		3};
	const char *vals[3];
	char *key = NULL;
	unsigned limit;
	int rc;

	if ((rc = catalog_exists(db, catalog, err)) || (rc = db_page_args(&limit, &key, page, err)))
		return rc;
	vals[0] = catalog;
	vals[1] = key;
	rc = db_query_page(out, db, &st, vals, 3, limit, err);
	free(key);
	return rc;
}

int fbc_db_revision_get(json_t **out, fbc_db *db, const char *catalog, int64_t number,
			fbc_error *err)
{
	static const db_stmt st = {"revision_get",
				   "SELECT " REVISION_JSON " FROM catalogs c JOIN revisions r ON "
				   "r.catalog_id = c.id WHERE r.id = $1",
				   1};
	fbc_db_rev rev;
	char id[24];
	int rc;

	if ((rc = fbc_db_revision_resolve(&rev, db, catalog, number, err)))
		return rc;
	return db_query_json(out, db, &st, (const char *[]){rev_text(id, &rev)}, "revision", err);
}

/* ----------------------------------------------------------- packages */

#define PKG_SUMMARY                                                                       \
	"json_build_object('name', p.name, 'defaultChannel', p.default_channel, "         \
	"'description', p.description, 'hasIcon', EXISTS (SELECT 1 FROM package_icons i " \
	"WHERE i.revision_id = p.revision_id AND i.package = p.name), 'deprecated', "     \
	"p.deprecation IS NOT NULL, 'channels', (SELECT count(*) FROM channels ch WHERE " \
	"ch.revision_id = p.revision_id AND ch.package = p.name), 'bundles', (SELECT "    \
	"count(*) FROM bundles b WHERE b.revision_id = p.revision_id AND b.package = "    \
	"p.name), 'latestVersion', (SELECT b.version FROM channels ch JOIN bundles b ON " \
	"b.revision_id = ch.revision_id AND b.package = ch.package AND b.name = ch.head " \
	"WHERE ch.revision_id = p.revision_id AND ch.package = p.name AND ch.name = "     \
	"p.default_channel))"

#define GVK_MATCH(t, k, g, v)                                                                  \
	"(" k "::text IS NULL OR EXISTS (SELECT 1 FROM " t " x WHERE x.revision_id = "         \
	"p.revision_id AND x.package = p.name AND x.kind = " k " AND (" g "::text IS NULL OR " \
	"x.grp = " g ") AND (" v "::text IS NULL OR x.version = " v ")))"

static int gvk_args(const fbc_db_gvk_filter *f, const char *what, fbc_error *err)
{
	if (!f->kind && (f->group || f->version))
		return fbc_error_set(err, FBC_EINVAL, what, "a GVK filter needs a kind");
	if (check_arg(f->group, what, err) || check_arg(f->version, what, err) ||
	    check_arg(f->kind, what, err))
		return FBC_EINVAL;
	return 0;
}

int fbc_db_package_list(json_t **out, fbc_db *db, const fbc_db_rev *rev,
			const fbc_db_package_filter *filter, const fbc_db_page *page,
			fbc_error *err)
{
	static const db_stmt st = {
		"package_list",
		"SELECT p.name, " PKG_SUMMARY " FROM packages p WHERE p.revision_id = $1 AND "
		"($2::text IS NULL OR p.name > $2) AND ($3::text IS NULL OR starts_with(p.name, "
		"$3)) AND " GVK_MATCH("provided_gvks", "$4", "$5", "$6") " AND " GVK_MATCH(
			"required_gvks", "$7", "$8",
			"$9") " AND ($10::int < 0 OR (p.deprecation IS NOT NULL) = ($10::int = 1)) "
			      "ORDER BY p.name LIMIT $11",
		11};
	const fbc_db_package_filter none = {NULL, {NULL, NULL, NULL}, {NULL, NULL, NULL}, -1};
	const char *vals[11];
	char id[24], dep[8], *key = NULL;
	unsigned limit;
	int rc;

	if (!filter)
		filter = &none;
	if ((rc = check_arg(filter->name_prefix, "prefix", err)) ||
	    (rc = gvk_args(&filter->provides, "provides", err)) ||
	    (rc = gvk_args(&filter->requires, "requires", err)) ||
	    (rc = db_page_args(&limit, &key, page, err)))
		return rc;
	snprintf(dep, sizeof(dep), "%d", filter->deprecated < 0 ? -1 : filter->deprecated ? 1 : 0);
	vals[0] = rev_text(id, rev);
	vals[1] = key;
	vals[2] = filter->name_prefix;
	vals[3] = filter->provides.kind;
	vals[4] = filter->provides.group;
	vals[5] = filter->provides.version;
	vals[6] = filter->requires.kind;
	vals[7] = filter->requires.group;
	vals[8] = filter->requires.version;
	vals[9] = dep;
	rc = db_query_page(out, db, &st, vals, 11, limit, err);
	free(key);
	return rc;
}

int fbc_db_package_get(json_t **out, fbc_db *db, const fbc_db_rev *rev, const char *package,
		       fbc_error *err)
{
	static const db_stmt st = {
		"package_get",
		"SELECT (" PKG_SUMMARY "::jsonb || jsonb_build_object('properties', p.properties, "
		"'deprecation', " DEPRECATION("p.deprecation") ", 'source', " SOURCE(
			"p") ", 'channels', coalesce((SELECT jsonb_agg(jsonb_build_object('name', "
			     "ch.name, 'head', ch.head, 'deprecation', " DEPRECATION(
				     "ch.deprecation") ") ORDER BY ch.name) FROM channels ch WHERE "
						       "ch.revision_id = p.revision_id AND "
						       "ch.package = p.name), '[]')))::text FROM "
						       "packages p WHERE p.revision_id = $1 AND "
						       "p.name = $2",
		2};
	char id[24];
	int rc = check_arg(package, "package", err);

	return rc ? rc
		  : db_query_json(out, db, &st, (const char *[]){rev_text(id, rev), package},
				  "package", err);
}

int fbc_db_icon_get(void **data, size_t *len, char **mediatype, fbc_db *db, const fbc_db_rev *rev,
		    const char *package, fbc_error *err)
{
	static const db_stmt st = {"icon_get",
				   "SELECT media_type, data FROM package_icons WHERE revision_id = "
				   "$1 AND package = $2",
				   2};
	PGresult *res = NULL;
	char id[24], *mt = NULL;
	void *d = NULL;
	size_t n;
	int rc;

	if ((rc = check_arg(package, "package", err)) ||
	    (rc = db_query_ex(&res, db, &st, (const char *[]){rev_text(id, rev), package}, 1, err)))
		return rc;
	if (PQntuples(res) == 0) {
		rc = fbc_error_set(err, FBC_ENOTFOUND, package, "package '%s' has no icon",
				   package);
		goto done;
	}
	n = (size_t)PQgetlength(res, 0, 1);
	if (!(mt = strndup(PQgetvalue(res, 0, 0), (size_t)PQgetlength(res, 0, 0))) ||
	    !(d = malloc(n ? n : 1))) {
		rc = fbc_error_set(err, FBC_ENOMEM, package, "out of memory");
		goto done;
	}
	memcpy(d, PQgetvalue(res, 0, 1), n);
	*data = d;
	*len = n;
	*mediatype = mt;
	d = NULL;
	mt = NULL;
done:
	free(d);
	free(mt);
	PQclear(res);
	return rc;
}

/* ----------------------------------------------------------- channels */

#define CHANNEL_JSON                                                                  \
	"json_build_object('name', ch.name, 'package', ch.package, 'head', ch.head, " \
	"'entries', ch.n_entries, 'deprecation', " DEPRECATION(                       \
		"ch.deprecation") ", "                                                \
				  "'source', " SOURCE("ch") ")"

int fbc_db_channel_list(json_t **out, fbc_db *db, const fbc_db_rev *rev, const char *package,
			fbc_error *err)
{
	static const db_stmt st = {
		"channel_list",
		"SELECT json_build_object('items', coalesce((SELECT json_agg(" CHANNEL_JSON
		" ORDER BY ch.name) FROM channels ch WHERE ch.revision_id = p.revision_id AND "
		"ch.package = p.name), '[]'), 'next', NULL) FROM packages p WHERE p.revision_id "
		"= $1 AND p.name = $2",
		2};
	char id[24];
	int rc = check_arg(package, "package", err);

	return rc ? rc
		  : db_query_json(out, db, &st, (const char *[]){rev_text(id, rev), package},
				  "package", err);
}

int fbc_db_channel_get(json_t **out, fbc_db *db, const fbc_db_rev *rev, const char *package,
		       const char *channel, fbc_error *err)
{
	static const db_stmt st = {
		"channel_get",
		"SELECT (" CHANNEL_JSON "::jsonb || jsonb_build_object('entries', coalesce((SELECT "
		"jsonb_agg(jsonb_build_object('name', e.bundle, 'replaces', e.replaces, 'skips', "
		"e.skips, 'skipRange', e.skip_range, 'version', b.version) ORDER BY e.position) "
		"FROM channel_entries e LEFT JOIN bundles b ON b.revision_id = e.revision_id AND "
		"b.package = e.package AND b.name = e.bundle WHERE e.revision_id = ch.revision_id "
		"AND e.package = ch.package AND e.channel = ch.name), '[]')))::text FROM channels "
		"ch WHERE ch.revision_id = $1 AND ch.package = $2 AND ch.name = $3",
		3};
	char id[24];
	int rc;

	if ((rc = check_arg(package, "package", err)) || (rc = check_arg(channel, "channel", err)))
		return rc;
	return db_query_json(out, db, &st, (const char *[]){rev_text(id, rev), package, channel},
			     "channel", err);
}

int fbc_db_channel_graph(json_t **out, fbc_db *db, const fbc_db_rev *rev, const char *package,
			 const char *channel, fbc_error *err)
{
	static const db_stmt st = {
		"channel_graph",
		"SELECT json_build_object('package', ch.package, 'channel', ch.name, 'head', "
		"ch.head, 'nodes', coalesce((SELECT json_agg(json_build_object('name', e.bundle, "
		"'version', b.version, 'deprecated', b.deprecation IS NOT NULL) ORDER BY "
		"e.position) FROM channel_entries e LEFT JOIN bundles b ON b.revision_id = "
		"e.revision_id AND b.package = e.package AND b.name = e.bundle WHERE "
		"e.revision_id = ch.revision_id AND e.package = ch.package AND e.channel = "
		"ch.name), '[]'), 'edges', coalesce((SELECT json_agg(json_build_object('from', "
		"x.from_bundle, 'to', x.to_bundle, 'kind', x.kind) ORDER BY x.to_bundle, "
		"x.from_bundle, x.kind) FROM upgrade_edges x WHERE x.revision_id = "
		"ch.revision_id AND x.package = ch.package AND x.channel = ch.name), '[]')) FROM "
		"channels ch WHERE ch.revision_id = $1 AND ch.package = $2 AND ch.name = $3",
		3};
	char id[24];
	int rc;

	if ((rc = check_arg(package, "package", err)) || (rc = check_arg(channel, "channel", err)))
		return rc;
	return db_query_json(out, db, &st, (const char *[]){rev_text(id, rev), package, channel},
			     "channel", err);
}

/* ------------------------------------------------------------ bundles */

#define BUNDLE_SUMMARY                                                                    \
	"json_build_object('name', b.name, 'package', b.package, 'version', b.version, "  \
	"'image', b.image, 'deprecated', b.deprecation IS NOT NULL, 'channels', "         \
	"coalesce((SELECT json_agg(e.channel ORDER BY e.channel) FROM channel_entries e " \
	"WHERE e.revision_id = b.revision_id AND e.package = b.package AND e.bundle = "   \
	"b.name), '[]'))"

#define GVK_LIST(t)                                                                         \
	"coalesce((SELECT jsonb_agg(jsonb_build_object('group', g.grp, 'version', "         \
	"g.version, 'kind', g.kind) ORDER BY g.grp, g.version, g.kind) FROM " t " g WHERE " \
	"g.revision_id = b.revision_id AND g.package = b.package AND g.bundle = b.name), "  \
	"'[]')"

int fbc_db_bundle_list(json_t **out, fbc_db *db, const fbc_db_rev *rev, const char *package,
		       const fbc_db_page *page, fbc_error *err)
{
	static const db_stmt st = {"bundle_list",
				   "SELECT b.name, " BUNDLE_SUMMARY " FROM bundles b WHERE "
				   "b.revision_id = $1 AND b.package = $2 AND ($3::text IS NULL OR "
				   "b.name > $3) ORDER BY b.name LIMIT $4",
				   4};
	static const db_stmt st_pkg = {
		"package_exists",
		"SELECT 'true' FROM packages WHERE revision_id = $1 AND name = $2", 2};
	const char *vals[4];
	char id[24], *key = NULL;
	json_t *exists = NULL;
	unsigned limit;
	int rc;

	if ((rc = check_arg(package, "package", err)) ||
	    (rc = db_query_json(&exists, db, &st_pkg, (const char *[]){rev_text(id, rev), package},
				"package", err)))
		return rc;
	json_decref(exists);
	if ((rc = db_page_args(&limit, &key, page, err)))
		return rc;
	vals[0] = id;
	vals[1] = package;
	vals[2] = key;
	rc = db_query_page(out, db, &st, vals, 4, limit, err);
	free(key);
	return rc;
}

int fbc_db_bundle_get(json_t **out, fbc_db *db, const fbc_db_rev *rev, const char *package,
		      const char *bundle, fbc_error *err)
{
	static const db_stmt st = {
		"bundle_get",
		"SELECT (" BUNDLE_SUMMARY "::jsonb || jsonb_build_object('release', b.release, "
		"'properties', coalesce((SELECT jsonb_agg(jsonb_build_object('type', "
		"bp.type, "
		"'value', bp.value) ORDER BY bp.position) FROM bundle_properties bp WHERE "
		"bp.revision_id = b.revision_id AND bp.package = b.package AND bp.bundle = "
		"b.name), '[]'), 'relatedImages', coalesce((SELECT "
		"jsonb_agg(jsonb_build_object('name', ri.name, 'image', ri.image) ORDER BY "
		"ri.position) FROM related_images ri WHERE ri.revision_id = b.revision_id "
		"AND "
		"ri.package = b.package AND ri.bundle = b.name), '[]'), "
		"'provides', " GVK_LIST("provided_gvks") ", 'requires', " GVK_LIST(
			"required_gvks") ", "
					 "'packageRequirements', "
					 "coalesce((SELECT "
					 "jsonb_agg(jsonb_build_"
					 "object('package', "
					 "pr.required_package, "
					 "'versionRange', "
					 "pr.version_range)) FROM "
					 "package_requirements pr "
					 "WHERE pr.revision_id = "
					 "b.revision_id AND "
					 "pr.package = b.package "
					 "AND pr.bundle = b.name), "
					 "'[]'), 'deprecation', " DEPRECATION(
						 "b.deprecation") ", "
								  "'sou"
								  "rce'"
								  ", " SOURCE("b") "))::text "
										   "FROM bundles "
										   "b WHERE "
										   "b.revision_"
										   "id = $1 AND "
										   "b.package = "
										   "$2 AND "
										   "b.name = $3",
		3};
	char id[24];
	int rc;

	if ((rc = check_arg(package, "package", err)) || (rc = check_arg(bundle, "bundle", err)))
		return rc;
	return db_query_json(out, db, &st, (const char *[]){rev_text(id, rev), package, bundle},
			     "bundle", err);
}

/* ---------------------------------------------------- catalogd content */

int fbc_db_all_get(char **data, size_t *len, fbc_db *db, const fbc_db_rev *rev, fbc_error *err)
{
	static const db_stmt st = {
		"all_get", "SELECT content FROM revision_content WHERE revision_id = $1", 1};
	PGresult *res = NULL;
	char id[24], *d;
	size_t n;
	int rc;

	if ((rc = db_query_ex(&res, db, &st, (const char *[]){rev_text(id, rev)}, 1, err)))
		return rc;
	if (PQntuples(res) == 0) {
		rc = fbc_error_set(err, FBC_ENOTFOUND, "revision", "revision has no content");
		goto done;
	}
	n = (size_t)PQgetlength(res, 0, 0);
	if (!(d = malloc(n + 1))) {
		rc = fbc_error_set(err, FBC_ENOMEM, "revision", "out of memory");
		goto done;
	}
	memcpy(d, PQgetvalue(res, 0, 0), n);
	d[n] = '\0';
	*data = d;
	*len = n;
done:
	PQclear(res);
	return rc;
}

int fbc_db_metas_get(char **data, size_t *len, fbc_db *db, const fbc_db_rev *rev,
		     const char *schema, const char *package, const char *name, fbc_error *err)
{
	static const db_stmt st = {
		"metas_get",
		"SELECT convert_to(coalesce(string_agg(blob || E'\\n', '' ORDER BY seq), ''), "
		"'UTF8') FROM blobs WHERE revision_id = $1 AND ($2::text IS NULL OR schema = $2) "
		"AND ($3::text IS NULL OR package = $3) AND ($4::text IS NULL OR name = $4)",
		4};
	PGresult *res = NULL;
	char id[24], *d;
	size_t n;
	int rc;

	if ((rc = check_arg(schema, "schema", err)) || (rc = check_arg(package, "package", err)) ||
	    (rc = check_arg(name, "name", err)) ||
	    (rc = db_query_ex(&res, db, &st,
			      (const char *[]){rev_text(id, rev), schema, package, name}, 1, err)))
		return rc;
	n = (size_t)PQgetlength(res, 0, 0);
	if (!(d = malloc(n + 1))) {
		rc = fbc_error_set(err, FBC_ENOMEM, "metas", "out of memory");
		goto done;
	}
	memcpy(d, PQgetvalue(res, 0, 0), n);
	d[n] = '\0';
	*data = d;
	*len = n;
done:
	PQclear(res);
	return rc;
}
