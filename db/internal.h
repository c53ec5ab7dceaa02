/*
 * Internals shared by the files of db/: the pool's connection type, the
 * prepared-statement helper, COPY escaping and small encoders. Not part of
 * the API; nothing outside db/ includes it.
 * Thread-safety: an fbc_db_conn belongs to one thread between checkout and
 * release; the helpers are otherwise stateless.
 */
#ifndef FBC_DB_INTERNAL_H
#define FBC_DB_INTERNAL_H

#include "db/db.h"
#include "service/base/buf.h"
#include "service/base/strmap.h"

#include <libpq-fe.h>
#include <pthread.h>

/* A named statement; defined `static const` next to the code using it. */
typedef struct db_stmt {
	const char *name; /* unique across db/ */
	const char *sql;  /* $n parameters only */
	int nparams;
} db_stmt;

typedef struct fbc_db_conn {
	PGconn *pg;
	fbc_strmap prepared; /* stmt name -> (void *)1, names are static */
	struct fbc_db_conn *next;
} fbc_db_conn;

struct fbc_db {
	char *url;
	unsigned size, checkout_timeout_ms, connect_timeout_s, statement_timeout_ms;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	fbc_db_conn *idle;
	unsigned open;
	unsigned long resets;
};

/* Open a new libpq connection with the pool's settings (or the defaults
 * when db is NULL). */
int db_connect(PGconn **out, const char *url, unsigned connect_timeout_s,
	       unsigned statement_timeout_ms, fbc_error *err);

int db_checkout(fbc_db_conn **out, fbc_db *db, fbc_error *err);
void db_release(fbc_db *db, fbc_db_conn *c);
/* Reset a connection whose server went away (prepared statements forgotten). */
int db_conn_reset(fbc_db *db, fbc_db_conn *c, fbc_error *err);

/* Run a named statement (prepared on first use on this connection). vals
 * may contain NULLs (SQL NULL). lens/fmts may be NULL (text parameters).
 * On success *out is a PGRES_TUPLES_OK or PGRES_COMMAND_OK result. A failure
 * is FBC_EUNAVAIL when the connection is broken, else FBC_EINTERNAL, or
 * FBC_ECONFLICT on unique violations, with SQLSTATE in the message. */
int db_exec(PGresult **out, fbc_db_conn *c, const db_stmt *st, const char *const *vals,
	    const int *lens, const int *fmts, int result_binary, fbc_error *err);
/* Plain SQL without parameters (BEGIN, COMMIT, constant text only). */
int db_exec_simple(fbc_db_conn *c, const char *sql, fbc_error *err);

/* Checkout + db_exec with one transparent retry on a fresh connection when
 * the first attempt found the connection dead (autocommit statements only). */
int db_query(PGresult **out, fbc_db *db, const db_stmt *st, const char *const *vals,
	     fbc_error *err);
int db_query_ex(PGresult **out, fbc_db *db, const db_stmt *st, const char *const *vals,
		int result_binary, fbc_error *err);
/* db_query for statements returning one row with one JSON text column;
 * zero rows or a NULL value is FBC_ENOTFOUND with `what` in the message. */
int db_query_json(json_t **out, fbc_db *db, const db_stmt *st, const char *const *vals,
		  const char *what, fbc_error *err);
/* A keyset page: the statement returns rows (key text, item json) ordered by
 * key and takes the row limit as its LAST parameter (filled here with
 * limit + 1). Produces {"items": [...], "next": cursor|null}. */
int db_query_page(json_t **out, fbc_db *db, const db_stmt *st, const char **vals, int nvals,
		  unsigned limit, fbc_error *err);
/* Validate page limit and decode the cursor into a key (malloc'd, NULL for
 * the first page). */
int db_page_args(unsigned *limit, char **key, const fbc_db_page *page, fbc_error *err);

/* A timestamptz column as RFC 3339 UTC text with milliseconds (NULL stays NULL). */
#define DB_TS(col) "to_char(" col " AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"')"

/* Run fn inside BEGIN/COMMIT on one pooled connection; when the connection
 * turns out dead before COMMIT, the whole transaction is retried once on a
 * fresh one (fn must be safe to re-run: it is, since nothing committed). */
typedef int (*db_tx_fn)(fbc_db_conn *c, void *ctx, fbc_error *err);
int db_tx(fbc_db *db, db_tx_fn fn, void *ctx, fbc_error *err);

/* jobs.c, for handlers whose effect commits with the job's completion. */
struct fbc_db_job_spec;
int db_job_enqueue_conn(int64_t *id, bool *created, fbc_db_conn *c, const struct fbc_db_job_spec *s,
			fbc_error *err);
int db_job_complete_conn(fbc_db_conn *c, int64_t id, const char *worker, const char *result,
			 bool effect, fbc_error *err);

/* A libpq error message in one line, for fbc_error. */
int db_pg_error(fbc_error *err, PGconn *pg, const PGresult *res, const char *what);

/* COPY text format: append s escaped (NULL -> \N). */
int db_copy_text(fbc_buf *b, const char *s, size_t n);
int db_copy_str(fbc_buf *b, const char *s); /* NULL-safe, NULL -> \N */

/* Encoders. */
void db_sha256_hex(char out[65], const void *data, size_t len);
int db_base64url_encode(char **out, const void *data, size_t len);
int db_base64url_decode(char **out, size_t *len, const char *s);
/* Decode standard base64, ignoring whitespace; -1 on invalid input. */
int db_base64_decode(unsigned char **out, size_t *len, const char *s);

#endif
