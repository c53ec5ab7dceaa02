/*
 * Test support: a throwaway PostgreSQL cluster (tests/lib/pg-start.sh) per
 * test process and a fresh database per test. Not thread-safe; call from
 * the test's main thread.
 */
#ifndef FBC_TESTS_PGTEST_H
#define FBC_TESTS_PGTEST_H

/* Start the cluster (or use $FBCD_TEST_DATABASE_URL's server). Returns 0,
 * 77 when PostgreSQL is not installed (meson "skip"), 1 on failure. */
int pgtest_start(void);
void pgtest_stop(void);
/* Restart the server (connections die). Only for a cluster we started. */
int pgtest_restart(void);
/* Create a new empty database and return its URL (static storage, valid
 * until the next call). */
const char *pgtest_new_db(void);

#endif
