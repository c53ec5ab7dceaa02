/*
 * REST equivalents of the Operator Registry gRPC API (spec fbc-validation.md
 * §5.3), with the field names of registry.proto's JSON form. As in opm, a
 * channel entry is emitted once per replaces/skips edge (replaces "" when
 * the entry has neither), and csvJson/object/property values are JSON text.
 */
#include "db/internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* A Bundle message for bundle b in channel entry e. clear_edges: GetBundle
 * clears replaces and skips. */
#define REG_BUNDLE(replaces, skips)                                                           \
	"json_build_object('csvName', b.name, 'packageName', b.package, 'channelName', "      \
	"e.channel, 'csvJson', coalesce(b.csv_json, ''), 'object', coalesce((SELECT "         \
	"json_agg(convert_from(decode(bp.value->>'data', 'base64'), 'UTF8') ORDER BY "        \
	"bp.position) FROM bundle_properties bp WHERE bp.revision_id = b.revision_id AND "    \
	"bp.package = b.package AND bp.bundle = b.name AND bp.type = 'olm.bundle.object'), "  \
	"'[]'), 'bundlePath', coalesce(b.image, ''), 'providedApis', coalesce((SELECT "       \
	"json_agg(json_build_object('group', g.grp, 'version', g.version, 'kind', g.kind, "   \
	"'plural', '') ORDER BY g.grp, g.version, g.kind) FROM provided_gvks g WHERE "        \
	"g.revision_id = b.revision_id AND g.package = b.package AND g.bundle = b.name), "    \
	"'[]'), 'requiredApis', coalesce((SELECT json_agg(json_build_object('group', "        \
	"g.grp, 'version', g.version, 'kind', g.kind, 'plural', '') ORDER BY g.grp, "         \
	"g.version, g.kind) FROM required_gvks g WHERE g.revision_id = b.revision_id AND "    \
	"g.package = b.package AND g.bundle = b.name), '[]'), 'version', "                    \
	"coalesce(b.version, ''), 'skipRange', coalesce(e.skip_range, ''), 'dependencies', "  \
	"coalesce((SELECT json_agg(json_build_object('type', CASE bp.type WHEN "              \
	"'olm.gvk.required' THEN 'olm.gvk' ELSE 'olm.package' END, 'value', "                 \
	"bp.value::text) ORDER BY bp.position) FROM bundle_properties bp WHERE "              \
	"bp.revision_id = b.revision_id AND bp.package = b.package AND bp.bundle = b.name "   \
	"AND bp.type IN ('olm.gvk.required', 'olm.package.required')), '[]'), 'properties', " \
	"coalesce((SELECT json_agg(json_build_object('type', bp.type, 'value', "              \
	"bp.value::text) ORDER BY bp.position) FROM bundle_properties bp WHERE "              \
	"bp.revision_id = b.revision_id AND bp.package = b.package AND bp.bundle = "          \
	"b.name), '[]'), 'replaces', " replaces ", 'skips', " skips ", 'deprecation', "       \
	"CASE WHEN b.deprecation IS NULL THEN NULL ELSE json_build_object('message', "        \
	"b.deprecation) END)"

#define REG_BUNDLE_FULL	   REG_BUNDLE("coalesce(e.replaces, '')", "e.skips")
#define REG_BUNDLE_CLEARED REG_BUNDLE("''", "'[]'::json")

#define ENTRY_JOIN                                                                    \
	"FROM channel_entries e JOIN bundles b ON b.revision_id = e.revision_id AND " \
	"b.package = e.package AND b.name = e.bundle "

/* One ChannelEntry per replaces/skip of e (one with replaces "" if none). */
#define ENTRY_EDGES                                                                   \
	"CROSS JOIN LATERAL (SELECT e.replaces AS r WHERE e.replaces IS NOT NULL OR " \
	"jsonb_array_length(e.skips) = 0 UNION ALL SELECT s FROM "                    \
	"jsonb_array_elements_text(e.skips) s) x "
#define ENTRY_JSON                                                               \
	"json_build_object('packageName', e.package, 'channelName', e.channel, " \
	"'bundleName', e.bundle, 'replaces', coalesce(x.r, ''))"

#define GVK_WHERE                                                                         \
	"EXISTS (SELECT 1 FROM provided_gvks g WHERE g.revision_id = e.revision_id AND "  \
	"g.package = e.package AND g.bundle = e.bundle AND g.kind = $2 AND ($3::text IS " \
	"NULL OR g.grp = $3) AND ($4::text IS NULL OR g.version = $4))"

#define LIST(item, from)                                                              \
	"SELECT json_build_object('items', coalesce((SELECT json_agg(" item ") " from \
	"), '[]'), 'next', NULL)"

static char *rev_text(char buf[24], const fbc_db_rev *rev)
{
	snprintf(buf, 24, "%lld", (long long)rev->id);
	return buf;
}

static int args_ok(fbc_error *err, int n, ...)
{
	va_list ap;
	int rc = 0;

	va_start(ap, n);
	for (int i = 0; i < n; i++) {
		const char *s = va_arg(ap, const char *);

		if (s && strlen(s) > 4096)
			rc = fbc_error_set(err, FBC_EINVAL, "argument", "argument over 4096 bytes");
	}
	va_end(ap);
	return rc;
}

static int gvk_ok(const fbc_db_gvk_filter *g, fbc_error *err)
{
	if (!g || !g->kind || !*g->kind)
		return fbc_error_set(err, FBC_EINVAL, "kind", "a kind is required");
	return args_ok(err, 3, g->group, g->version, g->kind);
}

int fbc_db_registry_list_packages(json_t **out, fbc_db *db, const fbc_db_rev *rev, fbc_error *err)
{
	static const db_stmt st = {"reg_list_packages",
				   LIST("json_build_object('name', p.name) ORDER BY p.name",
					"FROM packages p WHERE p.revision_id = $1"),
				   1};
	char id[24];

	return db_query_json(out, db, &st, (const char *[]){rev_text(id, rev)}, "packages", err);
}

int fbc_db_registry_get_package(json_t **out, fbc_db *db, const fbc_db_rev *rev,
				const char *package, fbc_error *err)
{
	static const db_stmt st = {
		"reg_get_package",
		"SELECT json_strip_nulls(json_build_object('name', p.name, 'channels', "
		"coalesce((SELECT json_agg(json_build_object('name', ch.name, 'csvName', "
		"coalesce(ch.head, ''), 'deprecation', CASE WHEN ch.deprecation IS NULL THEN NULL "
		"ELSE json_build_object('message', ch.deprecation) END) ORDER BY ch.name) FROM "
		"channels ch WHERE ch.revision_id = p.revision_id AND ch.package = p.name), "
		"'[]'), 'defaultChannelName', p.default_channel, 'deprecation', CASE WHEN "
		"p.deprecation IS NULL THEN NULL ELSE json_build_object('message', p.deprecation) "
		"END)) FROM packages p WHERE p.revision_id = $1 AND p.name = $2",
		2};
	char id[24];
	int rc = args_ok(err, 1, package);

	return rc ? rc
		  : db_query_json(out, db, &st, (const char *[]){rev_text(id, rev), package},
				  "package", err);
}

int fbc_db_registry_get_bundle(json_t **out, fbc_db *db, const fbc_db_rev *rev, const char *package,
			       const char *channel, const char *csv_name, fbc_error *err)
{
	static const db_stmt st = {"reg_get_bundle",
				   "SELECT " REG_BUNDLE_CLEARED " " ENTRY_JOIN
				   "WHERE e.revision_id = $1 AND e.package = $2 AND e.channel = $3 "
				   "AND e.bundle = $4 LIMIT 1",
				   4};
	char id[24];
	int rc = args_ok(err, 3, package, channel, csv_name);

	return rc ? rc
		  : db_query_json(out, db, &st,
				  (const char *[]){rev_text(id, rev), package, channel, csv_name},
				  "bundle", err);
}

int fbc_db_registry_get_bundle_for_channel(json_t **out, fbc_db *db, const fbc_db_rev *rev,
					   const char *package, const char *channel, fbc_error *err)
{
	static const db_stmt st = {"reg_get_bundle_for_channel",
				   "SELECT " REG_BUNDLE_FULL " " ENTRY_JOIN
				   "JOIN channels ch ON ch.revision_id = e.revision_id AND "
				   "ch.package = e.package AND ch.name = e.channel AND ch.head = "
				   "e.bundle WHERE e.revision_id = $1 AND e.package = $2 AND "
				   "e.channel = $3 LIMIT 1",
				   3};
	char id[24];
	int rc = args_ok(err, 2, package, channel);

	return rc ? rc
		  : db_query_json(out, db, &st,
				  (const char *[]){rev_text(id, rev), package, channel}, "channel",
				  err);
}

int fbc_db_registry_entries_that_replace(json_t **out, fbc_db *db, const fbc_db_rev *rev,
					 const char *csv_name, fbc_error *err)
{
	static const db_stmt st = {"reg_entries_that_replace",
				   LIST(ENTRY_JSON " ORDER BY e.package, e.channel, e.bundle",
					"FROM channel_entries e " ENTRY_EDGES
					"WHERE e.revision_id = $1 AND x.r = $2"),
				   2};
	char id[24];
	int rc = args_ok(err, 1, csv_name);

	return rc ? rc
		  : db_query_json(out, db, &st, (const char *[]){rev_text(id, rev), csv_name},
				  "entries", err);
}

int fbc_db_registry_bundle_that_replaces(json_t **out, fbc_db *db, const fbc_db_rev *rev,
					 const char *csv_name, const char *package,
					 const char *channel, fbc_error *err)
{
	static const db_stmt st = {
		"reg_bundle_that_replaces",
		"SELECT " REG_BUNDLE_FULL " " ENTRY_JOIN
		"WHERE e.revision_id = $1 AND e.package = $3 AND e.channel = $4 AND (e.replaces = "
		"$2 OR e.skips ? $2) ORDER BY e.position LIMIT 1",
		4};
	char id[24];
	int rc = args_ok(err, 3, csv_name, package, channel);

	return rc ? rc
		  : db_query_json(out, db, &st,
				  (const char *[]){rev_text(id, rev), csv_name, package, channel},
				  "bundle", err);
}

int fbc_db_registry_entries_that_provide(json_t **out, fbc_db *db, const fbc_db_rev *rev,
					 const fbc_db_gvk_filter *gvk, fbc_error *err)
{
	static const db_stmt st = {"reg_entries_that_provide",
				   LIST(ENTRY_JSON " ORDER BY e.package, e.channel, e.bundle, x.r",
					"FROM channel_entries e " ENTRY_EDGES
					"WHERE e.revision_id = $1 AND " GVK_WHERE),
				   4};
	char id[24];
	int rc = gvk_ok(gvk, err);

	return rc ? rc
		  : db_query_json(out, db, &st,
				  (const char *[]){rev_text(id, rev), gvk->kind, gvk->group,
						   gvk->version},
				  "entries", err);
}

int fbc_db_registry_latest_entries_that_provide(json_t **out, fbc_db *db, const fbc_db_rev *rev,
						const fbc_db_gvk_filter *gvk, fbc_error *err)
{
	static const db_stmt st = {
		"reg_latest_entries_that_provide",
		LIST(ENTRY_JSON " ORDER BY e.package, e.channel, e.bundle, x.r",
		     "FROM channel_entries e JOIN channels ch ON ch.revision_id = e.revision_id "
		     "AND ch.package = e.package AND ch.name = e.channel AND ch.head = "
		     "e.bundle " ENTRY_EDGES "WHERE e.revision_id = $1 AND " GVK_WHERE),
		4};
	char id[24];
	int rc = gvk_ok(gvk, err);

	return rc ? rc
		  : db_query_json(out, db, &st,
				  (const char *[]){rev_text(id, rev), gvk->kind, gvk->group,
						   gvk->version},
				  "entries", err);
}

int fbc_db_registry_default_bundle_that_provides(json_t **out, fbc_db *db, const fbc_db_rev *rev,
						 const fbc_db_gvk_filter *gvk, fbc_error *err)
{
	static const db_stmt st = {
		"reg_default_bundle_that_provides",
		"SELECT " REG_BUNDLE_FULL " " ENTRY_JOIN
		"JOIN packages p ON p.revision_id = e.revision_id AND p.name = e.package AND "
		"p.default_channel = e.channel JOIN channels ch ON ch.revision_id = e.revision_id "
		"AND ch.package = e.package AND ch.name = e.channel AND ch.head = e.bundle WHERE "
		"e.revision_id = $1 AND " GVK_WHERE " ORDER BY e.package LIMIT 1",
		4};
	char id[24];
	int rc = gvk_ok(gvk, err);

	return rc ? rc
		  : db_query_json(out, db, &st,
				  (const char *[]){rev_text(id, rev), gvk->kind, gvk->group,
						   gvk->version},
				  "bundle", err);
}

int fbc_db_registry_list_bundles(json_t **out, fbc_db *db, const fbc_db_rev *rev, fbc_error *err)
{
	static const db_stmt st = {"reg_list_bundles",
				   LIST(REG_BUNDLE_FULL
					" ORDER BY e.package, e.channel, e.position",
					ENTRY_JOIN "WHERE e.revision_id = $1"),
				   1};
	char id[24];

	return db_query_json(out, db, &st, (const char *[]){rev_text(id, rev)}, "bundles", err);
}
