/*
 * fbc_db_embedded: the private PostgreSQL cluster fbcd runs when no
 * database URL is configured (`fbcd serve` without --database-url).
 *
 * fbc_db_embedded_start initialises <data_dir>/pg with Debian's initdb
 * (once), starts it with pg_ctl listening only on a unix socket inside
 * <data_dir>/pg (no TCP port, so several instances never collide) and
 * returns; fbc_db_embedded_url gives the libpq URL to connect with.
 * When the process runs as root, the cluster is created and run as the
 * unprivileged `postgres` user (the data dir is chown'ed to it), because
 * PostgreSQL refuses to run as root.
 *
 * Binaries come from $FBCD_PG_BINDIR, else /usr/lib/postgresql/15/bin.
 * Ownership: the handle owns the running server; fbc_db_embedded_stop stops
 * it (pg_ctl stop -m fast) and frees the handle. Not thread-safe: start and
 * stop from the main thread.
 */
#ifndef FBC_DB_EMBEDDED_H
#define FBC_DB_EMBEDDED_H

#include "service/base/error.h"

typedef struct fbc_db_embedded fbc_db_embedded;

/* FBC_EUNAVAIL when the PostgreSQL binaries are missing, FBC_EIO when the
 * data dir cannot be created or the server does not start (message carries
 * the tail of the server log). */
int fbc_db_embedded_start(fbc_db_embedded **out, const char *data_dir, fbc_error *err);
/* Borrowed; valid until stop. */
const char *fbc_db_embedded_url(const fbc_db_embedded *e);
/* Accepts NULL. */
void fbc_db_embedded_stop(fbc_db_embedded *e);

#endif
