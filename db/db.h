/*
 * fbc_db: the PostgreSQL layer of fbcd — connection pool, migrations,
 * ingest of a catalog as an immutable revision, and every query the HTTP
 * API and the CLI need. No other folder talks SQL.
 *
 * Pool: an fbc_db owns at most `pool_size` libpq connections shared by all
 * threads (mutex + condition variable). Every function below checks one
 * out for its duration (waiting up to `checkout_timeout_ms`, then
 * FBC_EUNAVAIL) and returns it. A connection found dead (the server
 * restarted) is reset transparently; a read query that fails because its
 * connection died is retried once on a fresh connection, so callers only
 * see FBC_EUNAVAIL when the server really is unreachable.
 *
 * SQL: only named prepared statements with $n parameters, prepared lazily
 * per connection. User input never becomes SQL text.
 *
 * Results: queries return jansson objects (`json_t **out`, a new reference
 * the caller json_decref's) shaped exactly like the REST responses, so the
 * HTTP layer can serialise them as they are. Lists are
 * {"items": [...], "next": cursor-or-null}. The JSON field names are
 * documented at each function. Byte results (icons, the JSON-lines stream)
 * are malloc'd buffers the caller free()s.
 *
 * Errors: 0 or a negative FBC_E* code with detail in err:
 *   FBC_ENOTFOUND  catalog / revision / package / ... does not exist
 *   FBC_ECONFLICT  duplicate name, migration checksum mismatch
 *   FBC_EINVAL     bad argument (bad cursor, limit out of range, bad name)
 *   FBC_EUNAVAIL   database unreachable or pool exhausted (timeout)
 *   FBC_EAUTH      unknown token (fbc_db_token_lookup)
 *   FBC_EINTERNAL  any other database error (message has the SQLSTATE)
 *
 * Thread-safety: an fbc_db may be used from any number of threads at once.
 * Out-parameters are written only on success.
 */
#ifndef FBC_DB_DB_H
#define FBC_DB_DB_H

#include "service/base/error.h"
#include "service/fbc/model.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct fbc_db fbc_db;

/* ---------------------------------------------------------------- pool */

typedef struct fbc_db_options {
	const char *url;	       /* libpq conninfo or postgresql:// URL; required */
	unsigned pool_size;	       /* max connections; 0 = 8, max 256 */
	unsigned checkout_timeout_ms;  /* wait for a free connection; 0 = 5000 */
	unsigned connect_timeout_s;    /* per connection attempt; 0 = 5 */
	unsigned statement_timeout_ms; /* server-side per statement; 0 = 30000 */
	bool migrate;		       /* run fbc_db_migrate in fbc_db_open */
} fbc_db_options;

/* Validate the URL and open one connection eagerly (so a bad URL or an
 * unreachable server is reported at start-up); applies the migrations first
 * when opt->migrate. */
int fbc_db_open(fbc_db **out, const fbc_db_options *opt, fbc_error *err);
/* Close every connection. The caller guarantees no thread still uses db.
 * Accepts NULL. */
void fbc_db_close(fbc_db *db);

/* /readyz: the server answers and every embedded migration is applied.
 * FBC_EUNAVAIL when unreachable, FBC_ECONFLICT when migrations are missing. */
int fbc_db_ready(fbc_db *db, fbc_error *err);

/* Pool counters for tests and metrics. */
typedef struct fbc_db_stats {
	unsigned open;	      /* connections currently open */
	unsigned idle;	      /* of which idle in the pool */
	unsigned long resets; /* reconnects after a dead connection */
} fbc_db_stats;
void fbc_db_stats_get(fbc_db *db, fbc_db_stats *out);

/* ---------------------------------------------------------- migrations */

/* One migration: migrations/NNNN_slug.sql embedded at build time. */
typedef struct fbc_db_migration {
	int version;	  /* NNNN */
	const char *name; /* "0001_init" */
	const char *sql;
	size_t sql_len;
} fbc_db_migration;

/* The embedded list, ascending by version (generated file). */
extern const fbc_db_migration fbc_db_migrations[];
extern const size_t fbc_db_n_migrations;

/* Apply the embedded migrations not yet applied, each in its own
 * transaction, all under a session advisory lock so concurrent replicas
 * serialise. Each applied migration is recorded in schema_migrations with
 * the sha256 of its SQL; an applied migration whose SQL changed, or an
 * applied version unknown to this binary, is FBC_ECONFLICT (nothing new is
 * applied). *applied (may be NULL) receives how many were applied now. */
int fbc_db_migrate(fbc_db *db, int *applied, fbc_error *err);
/* Same on a one-off connection (`fbcd migrate --database-url`). */
int fbc_db_migrate_url(const char *url, int *applied, fbc_error *err);
/* Same with an explicit list (tests: a modified migration is rejected). */
int fbc_db_migrate_list(const char *url, const fbc_db_migration *list, size_t n, int *applied,
			fbc_error *err);

/* ------------------------------------------------------------- paging */

/* Keyset pagination. limit 0 = 100; more than 1000 is FBC_EINVAL. cursor is
 * NULL for the first page, else the "next" string of the previous page
 * (opaque; a malformed cursor is FBC_EINVAL). */
typedef struct fbc_db_page {
	unsigned limit;
	const char *cursor;
} fbc_db_page;

#define FBC_DB_PAGE_DEFAULT 100
#define FBC_DB_PAGE_MAX	    1000

/* ------------------------------------------------------------ catalogs */

typedef struct fbc_db_catalog_spec {
	const char *name;	  /* DNS-1123 subdomain, <= 253 bytes; required */
	int priority;		  /* like ClusterCatalog spec.priority */
	const char *display_name; /* may be NULL */
	const char *source;	  /* free text (image ref, git URL); may be NULL */
} fbc_db_catalog_spec;

/* A catalog as JSON:
 *   {"name", "priority", "displayName" (string|null), "source" (string|null),
 *    "currentRevision" (int|null), "digest" (string|null, of the current
 *    revision), "createdAt", "updatedAt" (RFC 3339 UTC)}
 */

/* FBC_ECONFLICT if the name exists, FBC_EINVAL if it is not a valid name. */
int fbc_db_catalog_create(json_t **out, fbc_db *db, const fbc_db_catalog_spec *spec,
			  fbc_error *err);
/* Ordered by name. */
int fbc_db_catalog_list(json_t **out, fbc_db *db, const fbc_db_page *page, fbc_error *err);
/* Every catalog with a current revision, for metrics: a JSON array of
 * {"name", "revision", "packages", "bundles"} ordered by name. */
int fbc_db_catalog_gauges(json_t **out, fbc_db *db, fbc_error *err);
int fbc_db_catalog_get(json_t **out, fbc_db *db, const char *name, fbc_error *err);
/* Deletes the catalog with all its revisions. */
int fbc_db_catalog_delete(fbc_db *db, const char *name, fbc_error *err);

/* ----------------------------------------------------------- revisions */

/* A resolved revision: every read below takes one, so the HTTP layer
 * resolves `?revision=` once, compares the digest with If-None-Match, and
 * only then queries. */
typedef struct fbc_db_rev {
	int64_t id;	 /* internal key */
	int64_t number;	 /* per-catalog revision number, 1, 2, ... */
	char digest[80]; /* "sha256:<64 hex>" of the canonical render (the ETag) */
} fbc_db_rev;

/* number 0 = the catalog's current revision (FBC_ENOTFOUND when the catalog
 * has none yet). */
int fbc_db_revision_resolve(fbc_db_rev *out, fbc_db *db, const char *catalog, int64_t number,
			    fbc_error *err);

/* A revision as JSON:
 *   {"catalog", "revision" (number), "digest", "createdAt", "current" (bool),
 *    "counts": {"packages", "channels", "bundles", "entries", "edges",
 *               "deprecations", "others", "blobs", "bytes"}}
 */
/* Newest first. */
int fbc_db_revision_list(json_t **out, fbc_db *db, const char *catalog, const fbc_db_page *page,
			 fbc_error *err);
int fbc_db_revision_get(json_t **out, fbc_db *db, const char *catalog, int64_t number,
			fbc_error *err);

/* -------------------------------------------------------------- ingest */

/* Store a linked (and validated — the caller's job) catalog as a new
 * revision of `catalog` in ONE transaction (rows via COPY), then make it the
 * current revision in the same transaction, after a row lock on the catalog
 * so that concurrent ingests serialise. If a revision of this catalog with
 * the same content digest already exists, nothing is stored, that revision
 * becomes current again and *created is false. out receives the revision
 * (JSON as fbc_db_revision_get); created may be NULL.
 * FBC_ENOTFOUND when the catalog does not exist. */
int fbc_db_ingest(json_t **out, bool *created, fbc_db *db, const char *catalog,
		  const fbc_catalog *cat, fbc_error *err);

/* ------------------------------------------------------------ packages */

typedef struct fbc_db_gvk_filter {
	const char *group, *version, *kind; /* all NULL = no filter; kind required otherwise */
} fbc_db_gvk_filter;

typedef struct fbc_db_package_filter {
	const char *name_prefix;    /* NULL = any */
	fbc_db_gvk_filter provides; /* some bundle of the package provides it */
	fbc_db_gvk_filter requires; /* some bundle of the package requires it */
	int deprecated;		    /* -1 any, 0 not deprecated, 1 deprecated only */
} fbc_db_package_filter;

/* Package summary JSON:
 *   {"name", "defaultChannel", "description" (string|null), "hasIcon" (bool),
 *    "deprecated" (bool), "channels" (int), "bundles" (int),
 *    "latestVersion" (string|null; head of the default channel)}
 * Ordered by name. */
int fbc_db_package_list(json_t **out, fbc_db *db, const fbc_db_rev *rev,
			const fbc_db_package_filter *filter, const fbc_db_page *page,
			fbc_error *err);

/* Package detail JSON: the summary plus
 *   "properties": [{"type", "value"}], "deprecation": {"message"}|null,
 *   "channels": [{"name", "head", "deprecation": {"message"}|null}] (by name),
 *   "source": {"file", "line"} */
int fbc_db_package_get(json_t **out, fbc_db *db, const fbc_db_rev *rev, const char *package,
		       fbc_error *err);

/* The package icon, decoded from base64. FBC_ENOTFOUND when the package has
 * none. *data and *mediatype are malloc'd. */
int fbc_db_icon_get(void **data, size_t *len, char **mediatype, fbc_db *db, const fbc_db_rev *rev,
		    const char *package, fbc_error *err);

/* ------------------------------------------------------------ channels */

/* Channel JSON: {"name", "package", "head" (string|null), "entries" (int),
 *   "deprecation": {"message"}|null, "source": {"file", "line"}}
 * list: all channels of the package by name (no paging: bounded by the
 * package), as {"items": [...], "next": null}. */
int fbc_db_channel_list(json_t **out, fbc_db *db, const fbc_db_rev *rev, const char *package,
			fbc_error *err);
/* Detail: the channel JSON plus "entries": [{"name", "replaces"|null,
 *   "skips": [...], "skipRange"|null, "version"|null}] in file order. */
int fbc_db_channel_get(json_t **out, fbc_db *db, const fbc_db_rev *rev, const char *package,
		       const char *channel, fbc_error *err);

/* The upgrade graph of one channel, for ?format=json|dot|mermaid and for
 * successors / upgrade paths (computed by the caller from this):
 *   {"package", "channel", "head",
 *    "nodes": [{"name", "version"|null, "deprecated" (bool)}],
 *    "edges": [{"from", "to", "kind": "replaces"|"skips"|"skipRange"}]}
 * An edge from A to B means "B upgrades A" (B replaces/skips A, or A's
 * version is in B's skipRange). skipRange edges are materialised at ingest
 * from the bundles' versions. */
int fbc_db_channel_graph(json_t **out, fbc_db *db, const fbc_db_rev *rev, const char *package,
			 const char *channel, fbc_error *err);

/* ------------------------------------------------------------- bundles */

/* Bundle summary JSON: {"name", "package", "version"|null, "image"|null,
 *   "channels": [names], "deprecated" (bool)}. Ordered by name. */
int fbc_db_bundle_list(json_t **out, fbc_db *db, const fbc_db_rev *rev, const char *package,
		       const fbc_db_page *page, fbc_error *err);
/* Bundle detail JSON: the summary plus
 *   "release"|null, "properties": [{"type", "value" (any JSON)}],
 *   "relatedImages": [{"name", "image"}], "provides": [{"group","version","kind"}],
 *   "requires": [...], "packageRequirements": [{"package", "versionRange"}],
 *   "deprecation": {"message"}|null, "source": {"file", "line"} */
int fbc_db_bundle_get(json_t **out, fbc_db *db, const fbc_db_rev *rev, const char *package,
		      const char *bundle, fbc_error *err);

/* ---------------------------------- Operator Registry gRPC equivalents */
/*
 * Shapes follow registry.proto with its JSON (protojson) field names:
 *   PackageName  {"name"}
 *   Package      {"name", "channels": [{"name", "csvName", "deprecation"?}],
 *                 "defaultChannelName", "deprecation"?}
 *   Bundle       {"csvName", "packageName", "channelName", "csvJson",
 *                 "object": [...], "bundlePath", "providedApis":
 *                 [{"group","version","kind","plural"}], "requiredApis",
 *                 "version", "skipRange", "dependencies": [{"type","value"}],
 *                 "properties": [{"type","value"}], "replaces", "skips",
 *                 "deprecation"?}   (value/object/csvJson are JSON text, as in gRPC)
 *   ChannelEntry {"packageName", "channelName", "bundleName", "replaces"}
 * Streams are returned as {"items": [...], "next": null}.
 */
int fbc_db_registry_list_packages(json_t **out, fbc_db *db, const fbc_db_rev *rev, fbc_error *err);
int fbc_db_registry_get_package(json_t **out, fbc_db *db, const fbc_db_rev *rev,
				const char *package, fbc_error *err);
int fbc_db_registry_get_bundle(json_t **out, fbc_db *db, const fbc_db_rev *rev, const char *package,
			       const char *channel, const char *csv_name, fbc_error *err);
int fbc_db_registry_get_bundle_for_channel(json_t **out, fbc_db *db, const fbc_db_rev *rev,
					   const char *package, const char *channel,
					   fbc_error *err);
int fbc_db_registry_entries_that_replace(json_t **out, fbc_db *db, const fbc_db_rev *rev,
					 const char *csv_name, fbc_error *err);
int fbc_db_registry_bundle_that_replaces(json_t **out, fbc_db *db, const fbc_db_rev *rev,
					 const char *csv_name, const char *package,
					 const char *channel, fbc_error *err);
int fbc_db_registry_entries_that_provide(json_t **out, fbc_db *db, const fbc_db_rev *rev,
					 const fbc_db_gvk_filter *gvk, fbc_error *err);
int fbc_db_registry_latest_entries_that_provide(json_t **out, fbc_db *db, const fbc_db_rev *rev,
						const fbc_db_gvk_filter *gvk, fbc_error *err);
int fbc_db_registry_default_bundle_that_provides(json_t **out, fbc_db *db, const fbc_db_rev *rev,
						 const fbc_db_gvk_filter *gvk, fbc_error *err);
int fbc_db_registry_list_bundles(json_t **out, fbc_db *db, const fbc_db_rev *rev, fbc_error *err);

/* ----------------------------------------------------- catalogd content */

/* The revision's canonical JSON-lines stream (fbc_render_catalog output,
 * stored at ingest), byte for byte what `fbcd render` prints. malloc'd. */
int fbc_db_all_get(char **data, size_t *len, fbc_db *db, const fbc_db_rev *rev, fbc_error *err);

/* catalogd /api/v1/metas: the blobs matching every non-NULL filter, as JSON
 * lines in canonical order (the same order as fbc_db_all_get). malloc'd;
 * an empty result is len 0. */
int fbc_db_metas_get(char **data, size_t *len, fbc_db *db, const fbc_db_rev *rev,
		     const char *schema, const char *package, const char *name, fbc_error *err);

/* -------------------------------------------------------------- tokens */

typedef enum fbc_db_scope {
	FBC_DB_SCOPE_NONE = 0,
	FBC_DB_SCOPE_READ = 1,
	FBC_DB_SCOPE_WRITE = 2, /* implies read */
	FBC_DB_SCOPE_ADMIN = 3, /* implies write and read */
} fbc_db_scope;

/* "read" / "write" / "admin" <-> enum; parse returns FBC_EINVAL otherwise. */
int fbc_db_scope_parse(fbc_db_scope *out, const char *s, fbc_error *err);
const char *fbc_db_scope_name(fbc_db_scope s);

#define FBC_DB_TOKEN_MAX 256 /* longer presented tokens are rejected unhashed */

/* Create a random token ("fbcd_" + 43 base64url chars), store only its
 * sha256. *token is malloc'd and shown to the user once. *info (may be
 * NULL) receives {"id", "scope", "description"|null, "createdAt"}. */
int fbc_db_token_create(char **token, json_t **info, fbc_db *db, fbc_db_scope scope,
			const char *description, fbc_error *err);
/* Look a presented token up by its hash (constant-time comparison of the
 * hashes); *scope receives its scope. FBC_EAUTH when unknown or revoked. */
int fbc_db_token_lookup(fbc_db_scope *scope, fbc_db *db, const char *token, fbc_error *err);
/* Store a caller-chosen token (FBCD_ADMIN_TOKEN at start-up) if its hash is
 * not stored yet; idempotent. */
int fbc_db_token_seed(fbc_db *db, const char *token, fbc_db_scope scope, fbc_error *err);
/* Revoke by id; FBC_ENOTFOUND if no such token. */
int fbc_db_token_revoke(fbc_db *db, int64_t id, fbc_error *err);

#endif
