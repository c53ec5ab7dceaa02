/* Migration runner; see db.h. Runs on its own connection (not the pool) so
 * that the session advisory lock is released with it, even on a crash. */
#include "db/internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* pg_advisory_lock key: "fbcd" in ASCII, shared by every replica. */
#define MIGRATE_LOCK_KEY "1717724004"

static int exec_params(PGconn *pg, const char *sql, int n, const char *const *vals, PGresult **out,
		       const char *what, fbc_error *err)
{
	PGresult *res = PQexecParams(pg, sql, n, NULL, vals, NULL, NULL, 0);
	ExecStatusType st = PQresultStatus(res);

	if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) {
		int rc = db_pg_error(err, pg, res, what);

		PQclear(res);
		return rc;
	}
	if (out)
		*out = res;
	else
		PQclear(res);
	return 0;
}

static int run(PGconn *pg, const fbc_db_migration *list, size_t n, int *applied, fbc_error *err)
{
	static const char *lock_vals[] = {MIGRATE_LOCK_KEY};
	PGresult *res = NULL;
	bool *done_v = NULL;
	int rc = 0, count = 0;

	for (size_t i = 1; i < n; i++)
		if (list[i].version <= list[i - 1].version)
			return fbc_error_set(err, FBC_EINVAL, list[i].name,
					     "migrations out of order");
	if ((rc = exec_params(pg, "SELECT pg_advisory_lock($1::bigint)", 1, lock_vals, NULL,
			      "advisory lock", err)))
		return rc;
	if ((rc = exec_params(pg,
			      "CREATE TABLE IF NOT EXISTS schema_migrations ("
			      " version integer PRIMARY KEY, name text NOT NULL,"
			      " checksum text NOT NULL,"
			      " applied_at timestamptz NOT NULL DEFAULT now())",
			      0, NULL, NULL, "schema_migrations", err)))
		goto done;
	if ((rc = exec_params(pg, "SELECT version, name, checksum FROM schema_migrations", 0, NULL,
			      &res, "schema_migrations", err)))
		goto done;
	if (n && !(done_v = calloc(n, sizeof(*done_v)))) {
		rc = fbc_error_set(err, FBC_ENOMEM, "migrations", "out of memory");
		goto done;
	}
	for (int r = 0; r < PQntuples(res); r++) {
		const char *v = PQgetvalue(res, r, 0), *sum = PQgetvalue(res, r, 2);
		long ver = strtol(v, NULL, 10);
		size_t i;

		for (i = 0; i < n && list[i].version != ver; i++)
			;
		if (i == n) {
			rc = fbc_error_set(err, FBC_ECONFLICT, PQgetvalue(res, r, 1),
					   "database has migration %s (%s) that this fbcd does "
					   "not know: it is older than the schema",
					   v, PQgetvalue(res, r, 1));
			goto done;
		}
		char hex[65];

		db_sha256_hex(hex, list[i].sql, list[i].sql_len);
		if (strcmp(hex, sum) != 0) {
			rc = fbc_error_set(err, FBC_ECONFLICT, list[i].name,
					   "applied migration %s was changed (checksum %.12s..., "
					   "recorded %.12s...); migrations are forward-only: add "
					   "a new one instead",
					   list[i].name, hex, sum);
			goto done;
		}
		done_v[i] = true;
	}
	for (size_t i = 0; i < n; i++) {
		char hex[65], ver[16];
		const char *vals[3];

		if (done_v[i])
			continue;
		db_sha256_hex(hex, list[i].sql, list[i].sql_len);
		snprintf(ver, sizeof(ver), "%d", list[i].version);
		vals[0] = ver;
		vals[1] = list[i].name;
		vals[2] = hex;
		if ((rc = exec_params(pg, "BEGIN", 0, NULL, NULL, list[i].name, err)))
			goto done;
		/* The embedded SQL runs through the simple protocol: it holds
		 * several statements and is part of the binary, never input. */
		PGresult *r = PQexec(pg, list[i].sql);

		if (PQresultStatus(r) != PGRES_COMMAND_OK && PQresultStatus(r) != PGRES_TUPLES_OK) {
			rc = db_pg_error(err, pg, r, list[i].name);
			fbc_error_prefix(err, "migration %s", list[i].name);
			PQclear(r);
			PQclear(PQexec(pg, "ROLLBACK"));
			goto done;
		}
		PQclear(r);
		if ((rc = exec_params(pg,
				      "INSERT INTO schema_migrations (version, name, checksum) "
				      "VALUES ($1::integer, $2, $3)",
				      3, vals, NULL, list[i].name, err)) ||
		    (rc = exec_params(pg, "COMMIT", 0, NULL, NULL, list[i].name, err))) {
			PQclear(PQexec(pg, "ROLLBACK"));
			goto done;
		}
		count++;
	}
	if (applied)
		*applied = count;
done:
	PQclear(res);
	free(done_v);
	if (PQstatus(pg) == CONNECTION_OK)
		PQclear(PQexecParams(pg, "SELECT pg_advisory_unlock($1::bigint)", 1, NULL,
				     lock_vals, NULL, NULL, 0));
	return rc;
}

int fbc_db_migrate_list(const char *url, const fbc_db_migration *list, size_t n, int *applied,
			fbc_error *err)
{
	PGconn *pg = NULL;
	int rc;

	if (!url || !*url)
		return fbc_error_set(err, FBC_EINVAL, "database-url", "no database URL given");
	/* Migrations may take long: no statement timeout (0 = default 30 s,
	 * so pass a large one). */
	if ((rc = db_connect(&pg, url, 0, 3600000, err)))
		return rc;
	rc = run(pg, list, n, applied, err);
	PQfinish(pg);
	return rc;
}

int fbc_db_migrate_url(const char *url, int *applied, fbc_error *err)
{
	return fbc_db_migrate_list(url, fbc_db_migrations, fbc_db_n_migrations, applied, err);
}

int fbc_db_migrate(fbc_db *db, int *applied, fbc_error *err)
{
	return fbc_db_migrate_list(db->url, fbc_db_migrations, fbc_db_n_migrations, applied, err);
}

int fbc_db_ready(fbc_db *db, fbc_error *err)
{
	static const db_stmt st = {
		"ready", "SELECT count(*) FROM schema_migrations WHERE version = ANY($1::int[])",
		1};
	char list[4096];
	size_t o = 0;
	PGresult *res = NULL;
	const char *vals[1] = {list};
	int rc;

	list[o++] = '{';
	for (size_t i = 0; i < fbc_db_n_migrations && o + 16 < sizeof(list); i++)
		o += (size_t)snprintf(list + o, sizeof(list) - o, "%s%d", i ? "," : "",
				      fbc_db_migrations[i].version);
	list[o++] = '}';
	list[o] = '\0';
	if ((rc = db_query(&res, db, &st, vals, err)))
		return rc;
	if (strtol(PQgetvalue(res, 0, 0), NULL, 10) != (long)fbc_db_n_migrations)
		rc = fbc_error_set(err, FBC_ECONFLICT, "migrations",
				   "database schema is not migrated (run fbcd migrate)");
	PQclear(res);
	return rc;
}
