/*
 * Benchmark: ingest time of the real catalog and of a generated
 * 50,000-bundle catalog, next to a raw COPY of the same rows (exported from
 * the ingested revision) into index-free copies of the tables, in the same
 * run on the same server. Target: ingest within 2x of the raw COPY.
 *
 *   bench_ingest GEN_CATALOG_EXE [PACKAGES BUNDLES]
 */
#include "db/db.h"
#include "pgtest.h"

#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char *const tables[] = {
	"blobs",
	"packages",
	"package_icons",
	"channels",
	"channel_entries",
	"upgrade_edges",
	"bundles",
	"bundle_properties",
	"provided_gvks",
	"required_gvks",
	"package_requirements",
	"related_images",
	"deprecations",
	"others",
	"revision_content",
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int exec(PGconn *pg, const char *sql)
{
	PGresult *r = PQexec(pg, sql);
	int ok = PQresultStatus(r) == PGRES_COMMAND_OK || PQresultStatus(r) == PGRES_TUPLES_OK;

	if (!ok)
		fprintf(stderr, "bench: %s: %s", sql, PQerrorMessage(pg));
	PQclear(r);
	return ok ? 0 : -1;
}

/* Export the revision's rows per table, then time COPYing them all into
 * fresh unindexed tables in one transaction. Benchmark-only SQL: the
 * identifiers are the constant table names above. */
static double raw_copy(const char *url, long long rev_id, size_t *bytes)
{
	PGconn *pg = PQconnectdb(url);
	char sql[512], *data[15] = {0};
	size_t len[15] = {0};
	double t0, t = -1;

	*bytes = 0;
	for (size_t i = 0; i < 15; i++) {
		PGresult *r;
		char *line;
		int n;
		size_t cap = 0;

		snprintf(sql, sizeof(sql),
			 "COPY (SELECT * FROM %s WHERE revision_id = %lld) TO STDOUT", tables[i],
			 rev_id);
		r = PQexec(pg, sql);
		PQclear(r);
		while ((n = PQgetCopyData(pg, &line, 0)) > 0) {
			if (len[i] + (size_t)n > cap) {
				cap = (len[i] + (size_t)n) * 2;
				data[i] = realloc(data[i], cap);
			}
			memcpy(data[i] + len[i], line, (size_t)n);
			len[i] += (size_t)n;
			PQfreemem(line);
		}
		PQclear(PQgetResult(pg));
		snprintf(sql, sizeof(sql), "CREATE TABLE raw_%s (LIKE %s)", tables[i], tables[i]);
		exec(pg, sql);
		*bytes += len[i];
	}
	t0 = now();
	if (exec(pg, "BEGIN"))
		goto done;
	for (size_t i = 0; i < 15; i++) {
		snprintf(sql, sizeof(sql), "COPY raw_%s FROM STDIN", tables[i]);
		PQclear(PQexec(pg, sql));
		for (size_t off = 0; off < len[i]; off += 1 << 20) {
			size_t n = len[i] - off < (1u << 20) ? len[i] - off : (1u << 20);

			PQputCopyData(pg, data[i] + off, (int)n);
		}
		PQputCopyEnd(pg, NULL);
		PGresult *r = PQgetResult(pg);

		if (PQresultStatus(r) != PGRES_COMMAND_OK)
			fprintf(stderr, "bench: raw COPY %s: %s", tables[i], PQerrorMessage(pg));
		PQclear(r);
		while ((r = PQgetResult(pg)))
			PQclear(r);
	}
	if (exec(pg, "COMMIT") == 0)
		t = now() - t0;
done:
	for (size_t i = 0; i < 15; i++)
		free(data[i]);
	PQfinish(pg);
	return t;
}

static int bench_one(fbc_db *db, const char *url, const char *label, const char *dir)
{
	fbc_catalog *cat = NULL;
	fbc_diags diags;
	fbc_error err;
	fbc_db_catalog_spec spec = {label, 0, NULL, NULL};
	fbc_db_rev rev;
	json_t *j = NULL;
	double t0, t_load, t_ingest, t_raw;
	size_t bytes;
	int rc = 1;

	fbc_error_init(&err);
	fbc_diags_init(&diags, 0);
	t0 = now();
	if (fbc_catalog_load_dir(&cat, dir, NULL, &diags, &err)) {
		fprintf(stderr, "bench: load %s: %s\n", dir, err.message);
		goto done;
	}
	t_load = now() - t0;
	if (fbc_db_catalog_create(&j, db, &spec, &err))
		goto fail;
	json_decref(j);
	t0 = now();
	if (fbc_db_ingest(&j, NULL, db, label, cat, &err))
		goto fail;
	t_ingest = now() - t0;
	if (fbc_db_revision_resolve(&rev, db, label, 0, &err))
		goto fail;
	t_raw = raw_copy(url, (long long)rev.id, &bytes);
	printf("%-10s bundles=%-6lld rows=%.1f MB  load %.3f s  ingest %.3f s  raw COPY %.3f s  "
	       "ratio %.2fx (target <= 2x)\n",
	       label,
	       (long long)json_integer_value(
		       json_object_get(json_object_get(j, "counts"), "bundles")),
	       (double)bytes / 1e6, t_load, t_ingest, t_raw, t_raw > 0 ? t_ingest / t_raw : 0.0);
	json_decref(j);
	rc = 0;
	goto done;
fail:
	fprintf(stderr, "bench: %s: %s\n", label, err.message);
done:
	fbc_catalog_free(cat);
	fbc_diags_dispose(&diags);
	return rc;
}

int main(int argc, char **argv)
{
	fbc_db_options opt = {.pool_size = 2, .migrate = true, .statement_timeout_ms = 600000};
	fbc_db *db = NULL;
	fbc_error err;
	char gen_dir[] = "/tmp/fbcd-bench-gen.XXXXXX", cmd[1024];
	int rc;

	if (argc < 2) {
		fprintf(stderr, "usage: bench_ingest GEN_CATALOG_EXE [PACKAGES BUNDLES]\n");
		return 2;
	}
	if ((rc = pgtest_start()))
		return rc;
	fbc_error_init(&err);
	opt.url = pgtest_new_db();
	if (!opt.url || fbc_db_open(&db, &opt, &err)) {
		fprintf(stderr, "bench: %s\n", err.message);
		rc = 1;
		goto done;
	}
	rc = bench_one(db, opt.url, "real", CATALOG_DIR);
	if (!mkdtemp(gen_dir)) {
		rc = 1;
		goto done;
	}
	/* 50,000 bundles: 2,000 packages x 25 bundles by default. */
	snprintf(cmd, sizeof(cmd),
		 "'%s' --packages %s --bundles %s --format json '%s/cat' >/dev/null", argv[1],
		 argc > 3 ? argv[2] : "2000", argc > 3 ? argv[3] : "25", gen_dir);
	if (system(cmd) != 0) {
		fprintf(stderr, "bench: generator failed: %s\n", cmd);
		rc = 1;
	} else {
		char dir[128];

		snprintf(dir, sizeof(dir), "%s/cat", gen_dir);
		rc |= bench_one(db, opt.url, "generated", dir);
	}
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", gen_dir);
	if (system(cmd) != 0)
		rc = 1;
done:
	fbc_db_close(db);
	pgtest_stop();
	return rc;
}
