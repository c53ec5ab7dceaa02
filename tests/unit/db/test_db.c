/* db/: migrations, pool, catalogs CRUD and tokens against a real server. */
#include "db/db.h"
#include "db/embedded.h"
#include "db/internal.h"
#include "pgtest.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static fbc_db *open_db(const char *url)
{
	fbc_db_options opt = {.url = url, .pool_size = 4, .migrate = true};
	fbc_db *db = NULL;
	fbc_error err;

	fbc_error_init(&err);
	if (fbc_db_open(&db, &opt, &err))
		fail_msg("open: %s", err.message);
	return db;
}

static void fbc_db_migrate__applies_once_and_is_idempotent(void **state)
{
	const char *url = pgtest_new_db();
	fbc_db *db = NULL;
	fbc_error err;
	int applied = -1;

	assert_non_null(url);
	fbc_error_init(&err);
	assert_int_equal(fbc_db_migrate_url(url, &applied, &err), 0);
	assert_int_equal(applied, (int)fbc_db_n_migrations);
	assert_int_equal(fbc_db_migrate_url(url, &applied, &err), 0);
	assert_int_equal(applied, 0);
	db = open_db(url);
	assert_int_equal(fbc_db_ready(db, &err), 0);
	fbc_db_close(db);
}

static void fbc_db_migrate__rejects_modified_migration(void **state)
{
	const char *url = pgtest_new_db();
	fbc_db_migration list[2] = {
		{1, "0001_a", "CREATE TABLE a (x int);", 23},
		{2, "0002_b", "CREATE TABLE b (x int);", 23},
	};
	fbc_error err;
	int applied = -1;

	fbc_error_init(&err);
	assert_int_equal(fbc_db_migrate_list(url, list, 1, &applied, &err), 0);
	assert_int_equal(applied, 1);
	list[0].sql = "CREATE TABLE a (y int);";
	assert_int_equal(fbc_db_migrate_list(url, list, 2, &applied, &err), FBC_ECONFLICT);
	assert_non_null(strstr(err.message, "0001_a"));
	/* Nothing new was applied: 0002 still runs once the original is back. */
	list[0].sql = "CREATE TABLE a (x int);";
	assert_int_equal(fbc_db_migrate_list(url, list, 2, &applied, &err), 0);
	assert_int_equal(applied, 1);
	/* A version the binary does not know is an error too. */
	assert_int_equal(fbc_db_migrate_list(url, list, 1, &applied, &err), FBC_ECONFLICT);
}

static void fbc_db_migrate__rolls_back_a_failing_migration(void **state)
{
	const char *url = pgtest_new_db();
	fbc_db_migration list[1] = {
		{1, "0001_bad", "CREATE TABLE c (x int); SELECT no_such_function();", 51},
	};
	fbc_error err;

	fbc_error_init(&err);
	assert_int_not_equal(fbc_db_migrate_list(url, list, 1, NULL, &err), 0);
	list[0].sql = "CREATE TABLE c (x int);";
	list[0].sql_len = 23;
	/* Table c was rolled back with the failed migration, so this succeeds. */
	assert_int_equal(fbc_db_migrate_list(url, list, 1, NULL, &err), 0);
}

static void fbc_db_migrate__concurrent_migrators_are_safe(void **state)
{
	const char *u = pgtest_new_db();
	char url[600];
	pid_t pids[4];
	int total = 0;

	snprintf(url, sizeof(url), "%s", u);
	for (int i = 0; i < 4; i++) {
		pids[i] = fork();
		assert_true(pids[i] >= 0);
		if (pids[i] == 0) {
			fbc_error err;
			int applied = -1;

			fbc_error_init(&err);
			if (fbc_db_migrate_url(url, &applied, &err)) {
				fprintf(stderr, "migrator: %s\n", err.message);
				_exit(100);
			}
			_exit(applied);
		}
	}
	for (int i = 0; i < 4; i++) {
		int st;

		assert_int_equal(waitpid(pids[i], &st, 0), pids[i]);
		assert_true(WIFEXITED(st));
		assert_true(WEXITSTATUS(st) != 100);
		total += WEXITSTATUS(st);
	}
	/* Each migration was applied by exactly one process. */
	assert_int_equal(total, (int)fbc_db_n_migrations);
}

static void fbc_db_catalog__create_list_get_delete(void **state)
{
	fbc_db *db = open_db(pgtest_new_db());
	fbc_db_catalog_spec spec = {"community", 5, "Community", "quay.io/x/y:v4.20"};
	fbc_db_page page = {1, NULL};
	json_t *j = NULL, *j2 = NULL;
	fbc_error err;
	char *next;

	fbc_error_init(&err);
	assert_int_equal(fbc_db_catalog_create(&j, db, &spec, &err), 0);
	assert_string_equal(json_string_value(json_object_get(j, "name")), "community");
	assert_int_equal(json_integer_value(json_object_get(j, "priority")), 5);
	assert_true(json_is_null(json_object_get(j, "currentRevision")));
	json_decref(j);
	assert_int_equal(fbc_db_catalog_create(&j, db, &spec, &err), FBC_ECONFLICT);
	spec.name = "Bad_Name";
	assert_int_equal(fbc_db_catalog_create(&j, db, &spec, &err), FBC_EINVAL);
	spec.name = "another";
	spec.display_name = NULL;
	assert_int_equal(fbc_db_catalog_create(&j, db, &spec, &err), 0);
	json_decref(j);

	/* Keyset pages of one: "another", then "community", then the end. */
	assert_int_equal(fbc_db_catalog_list(&j, db, &page, &err), 0);
	assert_int_equal(json_array_size(json_object_get(j, "items")), 1);
	assert_string_equal(json_string_value(json_object_get(
				    json_array_get(json_object_get(j, "items"), 0), "name")),
			    "another");
	next = strdup(json_string_value(json_object_get(j, "next")));
	json_decref(j);
	page.cursor = next;
	page.limit = 5;
	assert_int_equal(fbc_db_catalog_list(&j2, db, &page, &err), 0);
	assert_int_equal(json_array_size(json_object_get(j2, "items")), 1);
	assert_true(json_is_null(json_object_get(j2, "next")));
	json_decref(j2);
	free(next);
	page.cursor = "!!not-a-cursor";
	assert_int_equal(fbc_db_catalog_list(&j, db, &page, &err), FBC_EINVAL);
	/* well-formed base64url of bytes that are not UTF-8 (ff fe), of a NUL,
	 * of an overlong "/": refused before PostgreSQL sees them */
	static const char *const not_text[] = {"__4", "AA", "wK8"};
	for (size_t i = 0; i < sizeof(not_text) / sizeof(not_text[0]); i++) {
		page.cursor = not_text[i];
		assert_int_equal(fbc_db_catalog_list(&j, db, &page, &err), FBC_EINVAL);
		assert_string_equal(err.where, "cursor");
	}
	page.cursor = "w6k"; /* "é": a valid key, past every name */
	assert_int_equal(fbc_db_catalog_list(&j, db, &page, &err), 0);
	assert_int_equal(json_array_size(json_object_get(j, "items")), 0);
	json_decref(j);
	/* any other text that is not UTF-8 reaching PostgreSQL is the caller's input */
	{
		fbc_db_rev rev;
		assert_int_equal(fbc_db_revision_resolve(&rev, db, "\xff\xfe", 0, &err),
				 FBC_EINVAL);
		assert_non_null(strstr(err.message, "22021"));
	}
	page.cursor = NULL;
	page.limit = 5000;
	assert_int_equal(fbc_db_catalog_list(&j, db, &page, &err), FBC_EINVAL);

	assert_int_equal(fbc_db_catalog_get(&j, db, "community", &err), 0);
	json_decref(j);
	assert_int_equal(fbc_db_catalog_delete(db, "community", &err), 0);
	assert_int_equal(fbc_db_catalog_get(&j, db, "community", &err), FBC_ENOTFOUND);
	assert_int_equal(fbc_db_catalog_delete(db, "community", &err), FBC_ENOTFOUND);
	{
		fbc_db_rev rev;

		assert_int_equal(fbc_db_revision_resolve(&rev, db, "another", 0, &err),
				 FBC_ENOTFOUND);
		assert_non_null(strstr(err.message, "no content"));
	}
	fbc_db_close(db);
}

static void fbc_db_token__create_lookup_seed_revoke(void **state)
{
	fbc_db *db = open_db(pgtest_new_db());
	fbc_db_scope scope = FBC_DB_SCOPE_NONE;
	char *tok = NULL;
	json_t *info = NULL;
	fbc_error err;

	fbc_error_init(&err);
	assert_int_equal(fbc_db_token_create(&tok, &info, db, FBC_DB_SCOPE_WRITE, "ci", &err), 0);
	assert_int_equal(strncmp(tok, "fbcd_", 5), 0);
	assert_int_equal(fbc_db_token_lookup(&scope, db, tok, &err), 0);
	assert_int_equal(scope, FBC_DB_SCOPE_WRITE);
	tok[strlen(tok) - 1] ^= 1;
	assert_int_equal(fbc_db_token_lookup(&scope, db, tok, &err), FBC_EAUTH);
	assert_int_equal(fbc_db_token_lookup(&scope, db, "", &err), FBC_EAUTH);

	assert_int_equal(fbc_db_token_seed(db, "seeded-admin-token-123", FBC_DB_SCOPE_ADMIN, &err),
			 0);
	assert_int_equal(fbc_db_token_seed(db, "seeded-admin-token-123", FBC_DB_SCOPE_ADMIN, &err),
			 0);
	assert_int_equal(fbc_db_token_lookup(&scope, db, "seeded-admin-token-123", &err), 0);
	assert_int_equal(scope, FBC_DB_SCOPE_ADMIN);
	assert_int_equal(fbc_db_token_seed(db, "short", FBC_DB_SCOPE_ADMIN, &err), FBC_EINVAL);

	tok[strlen(tok) - 1] ^= 1;
	assert_int_equal(
		fbc_db_token_revoke(db, json_integer_value(json_object_get(info, "id")), &err), 0);
	assert_int_equal(fbc_db_token_lookup(&scope, db, tok, &err), FBC_EAUTH);
	assert_int_equal(fbc_db_scope_parse(&scope, "admin", &err), 0);
	assert_int_equal(fbc_db_scope_parse(&scope, "root", &err), FBC_EINVAL);
	free(tok);
	json_decref(info);
	fbc_db_close(db);
}

static void fbc_db_pool__reconnects_after_server_restart(void **state)
{
	fbc_db *db;
	fbc_db_stats st;
	json_t *j = NULL;
	fbc_error err;

	if (getenv("FBCD_TEST_DATABASE_URL"))
		skip();
	db = open_db(pgtest_new_db());
	fbc_error_init(&err);
	assert_int_equal(fbc_db_catalog_list(&j, db, NULL, &err), 0);
	json_decref(j);
	fbc_db_stats_get(db, &st);
	assert_true(st.idle >= 1);
	assert_int_equal(pgtest_restart(), 0);
	/* The idle connection is dead; the query must still succeed. */
	assert_int_equal(fbc_db_catalog_list(&j, db, NULL, &err), 0);
	json_decref(j);
	assert_int_equal(fbc_db_ready(db, &err), 0);
	fbc_db_stats_get(db, &st);
	assert_true(st.resets >= 1);
	fbc_db_close(db);
}

static const char *conninfo_value(PGconn *pg, const char *key, char *buf, size_t size)
{
	PQconninfoOption *opts = PQconninfo(pg);

	buf[0] = '\0';
	for (PQconninfoOption *o = opts; o && o->keyword; o++)
		if (!strcmp(o->keyword, key) && o->val)
			snprintf(buf, size, "%s", o->val);
	PQconninfoFree(opts);
	return buf;
}

/* A server gone without closing the socket must not hold a handler forever:
 * keepalives and TCP_USER_TIMEOUT are on by default, and the URL wins. */
static void db_connect__sets_keepalives_url_overrides(void **state)
{
	(void)state;
	const char *url = pgtest_new_db();
	char with[1024], buf[64];
	PGconn *pg = NULL;
	fbc_error err;

	fbc_error_init(&err);
	assert_int_equal(db_connect(&pg, url, 5, 0, &err), 0);
	assert_string_equal(conninfo_value(pg, "keepalives", buf, sizeof(buf)), "1");
	assert_string_equal(conninfo_value(pg, "tcp_user_timeout", buf, sizeof(buf)), "60000");
	assert_string_equal(conninfo_value(pg, "keepalives_idle", buf, sizeof(buf)), "30");
	PQfinish(pg);
	snprintf(with, sizeof(with), "%s%stcp_user_timeout=5000", url,
		 strchr(url, '?') ? "&" : "?");
	assert_int_equal(db_connect(&pg, with, 5, 0, &err), 0);
	assert_string_equal(conninfo_value(pg, "tcp_user_timeout", buf, sizeof(buf)), "5000");
	PQfinish(pg);
}

static void fbc_db_open__reports_unreachable_server(void **state)
{
	fbc_db_options opt = {.url = "postgresql://postgres@127.0.0.1:1/none",
			      .connect_timeout_s = 2};
	fbc_db *db = NULL;
	fbc_error err;

	fbc_error_init(&err);
	assert_int_equal(fbc_db_open(&db, &opt, &err), FBC_EUNAVAIL);
	assert_null(db);
	opt.url = "";
	assert_int_equal(fbc_db_open(&db, &opt, &err), FBC_EINVAL);
}

static void fbc_db_pool__reuses_its_connections(void **state)
{
	/* Internal behaviour seen through the API: a pool of one connection
	 * serves sequential callers; concurrency is covered by the HTTP tests. */
	fbc_db_options opt = {.url = pgtest_new_db(), .pool_size = 1, .migrate = true};
	fbc_db *db = NULL;
	json_t *j = NULL;
	fbc_error err;

	fbc_error_init(&err);
	assert_int_equal(fbc_db_open(&db, &opt, &err), 0);
	for (int i = 0; i < 20; i++) {
		assert_int_equal(fbc_db_catalog_list(&j, db, NULL, &err), 0);
		json_decref(j);
	}
	fbc_db_stats st;
	fbc_db_stats_get(db, &st);
	assert_int_equal(st.open, 1);
	fbc_db_close(db);
}

static void fbc_db_embedded_start__runs_a_private_cluster(void **state)
{
	char tmp[] = "/tmp/fbcd-embedded.XXXXXX", data[64], cmd[128];
	fbc_db_embedded *e = NULL;
	fbc_db *db = NULL;
	fbc_error err;

	if (access("/usr/lib/postgresql/15/bin/initdb", X_OK) != 0 && !getenv("FBCD_PG_BINDIR"))
		skip();
	assert_non_null(mkdtemp(tmp));
	assert_int_equal(chmod(tmp, 0755), 0);
	snprintf(data, sizeof(data), "%s/data", tmp);
	fbc_error_init(&err);
	if (fbc_db_embedded_start(&e, data, &err))
		fail_msg("embedded: %s", err.message);
	db = open_db(fbc_db_embedded_url(e));
	assert_int_equal(fbc_db_ready(db, &err), 0);
	fbc_db_close(db);
	fbc_db_embedded_stop(e);
	/* A second start reuses the initialised cluster and its data. */
	assert_int_equal(fbc_db_embedded_start(&e, data, &err), 0);
	db = open_db(fbc_db_embedded_url(e));
	fbc_db_close(db);
	fbc_db_embedded_stop(e);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
	assert_int_equal(system(cmd), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(fbc_db_migrate__applies_once_and_is_idempotent),
		cmocka_unit_test(fbc_db_migrate__rejects_modified_migration),
		cmocka_unit_test(fbc_db_migrate__rolls_back_a_failing_migration),
		cmocka_unit_test(fbc_db_migrate__concurrent_migrators_are_safe),
		cmocka_unit_test(fbc_db_catalog__create_list_get_delete),
		cmocka_unit_test(fbc_db_token__create_lookup_seed_revoke),
		cmocka_unit_test(db_connect__sets_keepalives_url_overrides),
		cmocka_unit_test(fbc_db_open__reports_unreachable_server),
		cmocka_unit_test(fbc_db_pool__reuses_its_connections),
		cmocka_unit_test(fbc_db_pool__reconnects_after_server_restart),
		cmocka_unit_test(fbc_db_embedded_start__runs_a_private_cluster),
	};
	int rc = pgtest_start();

	if (rc)
		return rc;
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	pgtest_stop();
	return rc;
}
