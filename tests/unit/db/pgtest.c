/* See pgtest.h. */
#include "pgtest.h"

#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static char base_url[512];
static char dir[256];
static char db_url[600];
static int counter;

int pgtest_start(void)
{
	char cmd[1024];
	FILE *p;
	int st;

	if (getenv("FBCD_TEST_DATABASE_URL")) {
		snprintf(base_url, sizeof(base_url), "%s", getenv("FBCD_TEST_DATABASE_URL"));
		return 0;
	}
	snprintf(dir, sizeof(dir), "/tmp/fbcd-test-pg.XXXXXX");
	if (!mkdtemp(dir))
		return 1;
	snprintf(cmd, sizeof(cmd), "'%s' '%s'", PG_START, dir);
	if (!(p = popen(cmd, "r")))
		return 1;
	if (!fgets(base_url, sizeof(base_url), p))
		base_url[0] = '\0';
	st = pclose(p);
	if (WIFEXITED(st) && WEXITSTATUS(st) == 77) {
		rmdir(dir);
		dir[0] = '\0';
		return 77;
	}
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0 || !base_url[0])
		return 1;
	base_url[strcspn(base_url, "\n")] = '\0';
	return 0;
}

void pgtest_stop(void)
{
	char cmd[1024];

	if (!dir[0])
		return;
	snprintf(cmd, sizeof(cmd), "'%s' '%s'", PG_STOP, dir);
	if (system(cmd) != 0)
		fprintf(stderr, "pgtest: could not stop the cluster in %s\n", dir);
	dir[0] = '\0';
}

int pgtest_restart(void)
{
	char cmd[1024];

	if (!dir[0])
		return -1;
	snprintf(cmd, sizeof(cmd), "'%s' '%s'", PG_RESTART, dir);
	return system(cmd) == 0 ? 0 : -1;
}

const char *pgtest_new_db(void)
{
	char name[64], sql[128];
	PGconn *pg = PQconnectdb(base_url);
	PGresult *r;
	const char *slash;

	if (PQstatus(pg) != CONNECTION_OK) {
		fprintf(stderr, "pgtest: %s", PQerrorMessage(pg));
		PQfinish(pg);
		return NULL;
	}
	/* Test-only SQL with a generated identifier, never input. */
	snprintf(name, sizeof(name), "fbcd_test_%d_%d", (int)getpid(), ++counter);
	snprintf(sql, sizeof(sql), "CREATE DATABASE %s", name);
	r = PQexec(pg, sql);
	if (PQresultStatus(r) != PGRES_COMMAND_OK) {
		fprintf(stderr, "pgtest: %s", PQerrorMessage(pg));
		PQclear(r);
		PQfinish(pg);
		return NULL;
	}
	PQclear(r);
	PQfinish(pg);
	slash = strrchr(base_url, '/');
	snprintf(db_url, sizeof(db_url), "%.*s/%s", (int)(slash - base_url), base_url, name);
	return db_url;
}
