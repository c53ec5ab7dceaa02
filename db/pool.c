/* Connection pool, statement execution and small helpers; see db.h. */
#include "db/internal.h"
#include "service/base/utf8.h"

#include <errno.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define POOL_MAX 256

int db_pg_error(fbc_error *err, PGconn *pg, const PGresult *res, const char *what)
{
	const char *msg = res ? PQresultErrorMessage(res) : NULL;
	const char *state = res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;
	char line[FBC_ERROR_MESSAGE_MAX];
	size_t n = 0;
	int code = FBC_EINTERNAL;

	if (!msg || !*msg)
		msg = pg ? PQerrorMessage(pg) : "no connection";
	for (const char *p = msg; *p && n + 1 < sizeof(line); p++)
		line[n++] = (*p == '\n' || *p == '\r') ? ' ' : *p;
	while (n && line[n - 1] == ' ')
		n--;
	line[n] = '\0';
	if (!pg || PQstatus(pg) == CONNECTION_BAD)
		code = FBC_EUNAVAIL;
	else if (state && strcmp(state, "23505") == 0)
		code = FBC_ECONFLICT;
	else if (state && strcmp(state, "22021") == 0)
		code = FBC_EINVAL; /* a text parameter that is not UTF-8: the caller's input */
	else if (state && (strncmp(state, "08", 2) == 0 || strcmp(state, "57P01") == 0 ||
			   strcmp(state, "57P03") == 0))
		code = FBC_EUNAVAIL;
	return fbc_error_set(err, code, what, "database: %s%s%s%s", line,
			     state ? " (SQLSTATE " : "", state ? state : "", state ? ")" : "");
}

static void quiet_notices(void *arg, const char *message)
{
	(void)arg;
	(void)message; /* NOTICEs (IF NOT EXISTS ...) are not errors */
}

int db_connect(PGconn **out, const char *url, unsigned connect_timeout_s,
	       unsigned statement_timeout_ms, fbc_error *err)
{
	char timeout[16], stmt_timeout[24];
	/* A server that vanishes without closing the socket (host down, network
	 * partition) would otherwise hold a handler thread in libpq for the
	 * kernel's retransmission timeout (~15 min), and with all threads stuck
	 * nothing answers, not even 503. Keepalives and TCP_USER_TIMEOUT make
	 * such a connection fail in about a minute. They come before dbname so
	 * that the URL can override them. */
	const char *keys[] = {"keepalives",	  "keepalives_idle",  "keepalives_interval",
			      "keepalives_count", "tcp_user_timeout", "dbname",
			      "connect_timeout",  "application_name", NULL};
	const char *vals[] = {"1", "30", "10", "3", "60000", url, timeout, "fbcd", NULL};
	const char *pvals[1];
	PGconn *pg = NULL;
	PGresult *res = NULL;
	int rc = 0;

	/* libpq's message for a malformed URL quotes it, password and all,
	 * and it would reach the log: say only that it is malformed. */
	if (strchr(url, '=') || !strncmp(url, "postgres://", 11) ||
	    !strncmp(url, "postgresql://", 13)) { /* else a database name */
		char *perr = NULL;
		PQconninfoOption *parsed = PQconninfoParse(url, &perr);

		PQfreemem(perr);
		if (!parsed)
			return fbc_error_set(
				err, FBC_EINVAL, "database-url",
				"the database URL is malformed (not shown: it may hold a "
				"password)");
		PQconninfoFree(parsed);
	}
	snprintf(timeout, sizeof(timeout), "%u", connect_timeout_s ? connect_timeout_s : 5);
	snprintf(stmt_timeout, sizeof(stmt_timeout), "%u",
		 statement_timeout_ms ? statement_timeout_ms : 30000);
	pg = PQconnectdbParams(keys, vals, 1);
	if (!pg) {
		rc = fbc_error_set(err, FBC_ENOMEM, "database", "out of memory");
		goto done;
	}
	if (PQstatus(pg) != CONNECTION_OK) {
		rc = db_pg_error(err, pg, NULL, "database"); /* FBC_EUNAVAIL */
		goto done;
	}
	PQsetNoticeProcessor(pg, quiet_notices, NULL);
	pvals[0] = stmt_timeout;
	res = PQexecParams(pg, "SELECT set_config('statement_timeout', $1, false)", 1, NULL, pvals,
			   NULL, NULL, 0);
	if (PQresultStatus(res) != PGRES_TUPLES_OK) {
		rc = db_pg_error(err, pg, res, "database");
		goto done;
	}
	*out = pg;
	pg = NULL;
done:
	PQclear(res);
	PQfinish(pg);
	return rc;
}

int fbc_db_open(fbc_db **out, const fbc_db_options *opt, fbc_error *err)
{
	fbc_db *db = NULL;
	fbc_db_conn *c = NULL;
	int rc = 0;

	if (!opt || !opt->url || !*opt->url)
		return fbc_error_set(err, FBC_EINVAL, "database-url", "no database URL given");
	if (opt->pool_size > POOL_MAX)
		return fbc_error_set(err, FBC_EINVAL, "pool-size", "pool size %u exceeds %d",
				     opt->pool_size, POOL_MAX);
	if (!(db = calloc(1, sizeof(*db))) || !(db->url = strdup(opt->url))) {
		free(db);
		return fbc_error_set(err, FBC_ENOMEM, "database", "out of memory");
	}
	db->size = opt->pool_size ? opt->pool_size : 8;
	db->checkout_timeout_ms = opt->checkout_timeout_ms ? opt->checkout_timeout_ms : 5000;
	db->connect_timeout_s = opt->connect_timeout_s;
	db->statement_timeout_ms = opt->statement_timeout_ms;
	pthread_mutex_init(&db->mu, NULL);
	{
		pthread_condattr_t ca;

		pthread_condattr_init(&ca);
		pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
		pthread_cond_init(&db->cv, &ca);
		pthread_condattr_destroy(&ca);
	}
	if (opt->migrate && (rc = fbc_db_migrate(db, NULL, err)))
		goto done;
	/* One eager connection: a wrong URL is reported at start-up. */
	if ((rc = db_checkout(&c, db, err)))
		goto done;
	db_release(db, c);
	*out = db;
	db = NULL;
done:
	fbc_db_close(db);
	return rc;
}

static void conn_free(fbc_db_conn *c)
{
	if (!c)
		return;
	PQfinish(c->pg);
	fbc_strmap_dispose(&c->prepared);
	free(c);
}

void fbc_db_close(fbc_db *db)
{
	if (!db)
		return;
	for (fbc_db_conn *c = db->idle, *next; c; c = next) {
		next = c->next;
		conn_free(c);
	}
	pthread_cond_destroy(&db->cv);
	pthread_mutex_destroy(&db->mu);
	free(db->url);
	free(db);
}

void fbc_db_stats_get(fbc_db *db, fbc_db_stats *out)
{
	unsigned idle = 0;

	pthread_mutex_lock(&db->mu);
	for (fbc_db_conn *c = db->idle; c; c = c->next)
		idle++;
	out->open = db->open;
	out->idle = idle;
	out->resets = db->resets;
	pthread_mutex_unlock(&db->mu);
}

int db_checkout(fbc_db_conn **out, fbc_db *db, fbc_error *err)
{
	struct timespec deadline;
	fbc_db_conn *c = NULL;
	int rc = 0;

	clock_gettime(CLOCK_MONOTONIC, &deadline);
	deadline.tv_sec += db->checkout_timeout_ms / 1000;
	deadline.tv_nsec += (long)(db->checkout_timeout_ms % 1000) * 1000000L;
	if (deadline.tv_nsec >= 1000000000L) {
		deadline.tv_sec++;
		deadline.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&db->mu);
	while (!db->idle && db->open >= db->size) {
		if (pthread_cond_timedwait(&db->cv, &db->mu, &deadline) == ETIMEDOUT && !db->idle &&
		    db->open >= db->size) {
			pthread_mutex_unlock(&db->mu);
			return fbc_error_set(
				err, FBC_EUNAVAIL, "database",
				"no free database connection within %u ms (pool of %u)",
				db->checkout_timeout_ms, db->size);
		}
	}
	if (db->idle) {
		c = db->idle;
		db->idle = c->next;
		c->next = NULL;
		pthread_mutex_unlock(&db->mu);
		/* A connection known to be broken is repaired before use; one that
		 * died silently is caught by db_query's retry. A server restart
		 * leaves its goodbye (a FATAL message, then EOF) in the socket of
		 * every idle connection: reading it here, without blocking, finds
		 * such a connection dead before any statement is sent on it, so
		 * that even a write is safely sent again on a fresh one. */
		if (PQstatus(c->pg) == CONNECTION_OK && PQtransactionStatus(c->pg) == PQTRANS_IDLE)
			(void)PQconsumeInput(c->pg);
		if (PQstatus(c->pg) == CONNECTION_BAD && (rc = db_conn_reset(db, c, err))) {
			db_release(db, c);
			return rc;
		}
		*out = c;
		return 0;
	}
	db->open++; /* reserve the slot before connecting outside the lock */
	pthread_mutex_unlock(&db->mu);
	if (!(c = calloc(1, sizeof(*c)))) {
		rc = fbc_error_set(err, FBC_ENOMEM, "database", "out of memory");
		goto fail;
	}
	fbc_strmap_init(&c->prepared);
	if ((rc = db_connect(&c->pg, db->url, db->connect_timeout_s, db->statement_timeout_ms,
			     err)))
		goto fail;
	*out = c;
	return 0;
fail:
	conn_free(c);
	pthread_mutex_lock(&db->mu);
	db->open--;
	pthread_cond_signal(&db->cv);
	pthread_mutex_unlock(&db->mu);
	return rc;
}

void db_release(fbc_db *db, fbc_db_conn *c)
{
	if (!c)
		return;
	if (PQstatus(c->pg) == CONNECTION_OK && PQtransactionStatus(c->pg) != PQTRANS_IDLE) {
		/* A caller bailed out mid-transaction: never hand that state on. */
		PGresult *r = PQexec(c->pg, "ROLLBACK");

		PQclear(r);
	}
	if (PQstatus(c->pg) != CONNECTION_OK || PQtransactionStatus(c->pg) != PQTRANS_IDLE) {
		conn_free(c);
		pthread_mutex_lock(&db->mu);
		db->open--;
		pthread_cond_signal(&db->cv);
		pthread_mutex_unlock(&db->mu);
		return;
	}
	pthread_mutex_lock(&db->mu);
	c->next = db->idle;
	db->idle = c;
	pthread_cond_signal(&db->cv);
	pthread_mutex_unlock(&db->mu);
}

int db_conn_reset(fbc_db *db, fbc_db_conn *c, fbc_error *err)
{
	PGconn *pg = NULL;
	int rc;

	if ((rc = db_connect(&pg, db->url, db->connect_timeout_s, db->statement_timeout_ms, err)))
		return rc;
	PQfinish(c->pg);
	c->pg = pg;
	fbc_strmap_dispose(&c->prepared);
	fbc_strmap_init(&c->prepared);
	pthread_mutex_lock(&db->mu);
	db->resets++;
	pthread_mutex_unlock(&db->mu);
	return 0;
}

int db_exec(PGresult **out, fbc_db_conn *c, const db_stmt *st, const char *const *vals,
	    const int *lens, const int *fmts, int result_binary, fbc_error *err)
{
	PGresult *res = NULL;
	int rc = 0;

	if (!fbc_strmap_has(&c->prepared, st->name)) {
		res = PQprepare(c->pg, st->name, st->sql, st->nparams, NULL);
		if (PQresultStatus(res) != PGRES_COMMAND_OK) {
			rc = db_pg_error(err, c->pg, res, st->name);
			goto done;
		}
		PQclear(res);
		res = NULL;
		if (fbc_strmap_put(&c->prepared, st->name, (void *)1, NULL) < 0) {
			rc = fbc_error_set(err, FBC_ENOMEM, st->name, "out of memory");
			goto done;
		}
	}
	res = PQexecPrepared(c->pg, st->name, st->nparams, vals, lens, fmts, result_binary);
	switch (PQresultStatus(res)) {
	case PGRES_TUPLES_OK:
	case PGRES_COMMAND_OK:
		*out = res;
		res = NULL;
		break;
	default:
		rc = db_pg_error(err, c->pg, res, st->name);
	}
done:
	PQclear(res);
	return rc;
}

int db_exec_simple(fbc_db_conn *c, const char *sql, fbc_error *err)
{
	PGresult *res = PQexec(c->pg, sql);
	int rc = 0;

	if (PQresultStatus(res) != PGRES_COMMAND_OK && PQresultStatus(res) != PGRES_TUPLES_OK)
		rc = db_pg_error(err, c->pg, res, "database");
	PQclear(res);
	return rc;
}

int db_query(PGresult **out, fbc_db *db, const db_stmt *st, const char *const *vals, fbc_error *err)
{
	return db_query_ex(out, db, st, vals, 0, err);
}

int db_query_ex(PGresult **out, fbc_db *db, const db_stmt *st, const char *const *vals,
		int result_binary, fbc_error *err)
{
	fbc_db_conn *c = NULL;
	int rc;

	if ((rc = db_checkout(&c, db, err)))
		return rc;
	rc = db_exec(out, c, st, vals, NULL, NULL, result_binary, err);
	if (rc == FBC_EUNAVAIL && PQstatus(c->pg) == CONNECTION_BAD) {
		/* The server restarted under an idle connection: one retry. */
		if ((rc = db_conn_reset(db, c, err)) == 0)
			rc = db_exec(out, c, st, vals, NULL, NULL, result_binary, err);
	}
	db_release(db, c);
	return rc;
}

int db_query_json(json_t **out, fbc_db *db, const db_stmt *st, const char *const *vals,
		  const char *what, fbc_error *err)
{
	PGresult *res = NULL;
	json_error_t jerr;
	json_t *j;
	int rc;

	if ((rc = db_query(&res, db, st, vals, err)))
		return rc;
	if (PQntuples(res) < 1 || PQgetisnull(res, 0, 0)) {
		rc = fbc_error_set(err, FBC_ENOTFOUND, what, "%s not found", what);
		goto done;
	}
	j = json_loadb(PQgetvalue(res, 0, 0), (size_t)PQgetlength(res, 0, 0),
		       JSON_DECODE_ANY | JSON_ALLOW_NUL, &jerr);
	if (!j) {
		rc = fbc_error_set(err, FBC_EINTERNAL, st->name, "bad JSON from database: %s",
				   jerr.text);
		goto done;
	}
	*out = j;
done:
	PQclear(res);
	return rc;
}

/* Strict UTF-8 of n bytes (no NUL, overlong forms, surrogates). */
static bool utf8_valid(const unsigned char *p, size_t n)
{
	return !memchr(p, 0, n) && fbc_utf8_valid((const char *)p, n);
}

int db_page_args(unsigned *limit, char **key, const fbc_db_page *page, fbc_error *err)
{
	unsigned l = page ? page->limit : 0;
	size_t n;

	if (l == 0)
		l = FBC_DB_PAGE_DEFAULT;
	if (l > FBC_DB_PAGE_MAX)
		return fbc_error_set(err, FBC_EINVAL, "limit", "limit %u exceeds %d", l,
				     FBC_DB_PAGE_MAX);
	*key = NULL;
	if (page && page->cursor && *page->cursor) {
		/* keys are text: a cursor that decodes to anything else was not ours
		 * (PostgreSQL would refuse it with an error, a 500) */
		if (strlen(page->cursor) > 2048 || db_base64url_decode(key, &n, page->cursor) ||
		    !utf8_valid((const unsigned char *)*key, n)) {
			free(*key);
			*key = NULL;
			return fbc_error_set(err, FBC_EINVAL, "cursor", "malformed cursor");
		}
	}
	*limit = l;
	return 0;
}

int db_query_page(json_t **out, fbc_db *db, const db_stmt *st, const char **vals, int nvals,
		  unsigned limit, fbc_error *err)
{
	PGresult *res = NULL;
	json_t *page = NULL, *items;
	char lim[16], *cursor = NULL;
	int rc, n;

	snprintf(lim, sizeof(lim), "%u", limit + 1);
	vals[nvals - 1] = lim;
	if ((rc = db_query(&res, db, st, vals, err)))
		return rc;
	n = PQntuples(res);
	if (!(page = json_pack("{s:[],s:n}", "items", "next"))) {
		rc = fbc_error_set(err, FBC_ENOMEM, st->name, "out of memory");
		goto done;
	}
	items = json_object_get(page, "items");
	for (int i = 0; i < n && (unsigned)i < limit; i++) {
		json_error_t jerr;
		json_t *j =
			json_loadb(PQgetvalue(res, i, 1), (size_t)PQgetlength(res, i, 1), 0, &jerr);

		if (!j || json_array_append_new(items, j)) {
			rc = fbc_error_set(err, FBC_EINTERNAL, st->name, "bad JSON from database");
			goto done;
		}
	}
	if ((unsigned)n > limit) {
		if (db_base64url_encode(&cursor, PQgetvalue(res, (int)limit - 1, 0),
					(size_t)PQgetlength(res, (int)limit - 1, 0)) ||
		    json_object_set_new(page, "next", json_string(cursor))) {
			rc = fbc_error_set(err, FBC_ENOMEM, st->name, "out of memory");
			goto done;
		}
	}
	*out = page;
	page = NULL;
done:
	free(cursor);
	json_decref(page);
	PQclear(res);
	return rc;
}

int db_copy_text(fbc_buf *b, const char *s, size_t n)
{
	size_t start = 0;
	int rc;

	if (!s)
		return fbc_buf_append(b, "\\N", 2);
	if ((rc = fbc_buf_reserve(b, n + 8)))
		return rc;
	for (size_t i = 0; i < n; i++) {
		const char *esc;

		switch (s[i]) {
		case '\\':
			esc = "\\\\";
			break;
		case '\n':
			esc = "\\n";
			break;
		case '\r':
			esc = "\\r";
			break;
		case '\t':
			esc = "\\t";
			break;
		default:
			continue;
		}
		if ((rc = fbc_buf_append(b, s + start, i - start)) || (rc = fbc_buf_puts(b, esc)))
			return rc;
		start = i + 1;
	}
	return fbc_buf_append(b, s + start, n - start);
}

int db_copy_str(fbc_buf *b, const char *s)
{
	return db_copy_text(b, s, s ? strlen(s) : 0);
}

void db_sha256_hex(char out[65], const void *data, size_t len)
{
	static const char hex[] = "0123456789abcdef";
	unsigned char md[32];
	unsigned int mdlen = 0;

	EVP_Digest(data, len, md, &mdlen, EVP_sha256(), NULL);
	for (int i = 0; i < 32; i++) {
		out[2 * i] = hex[md[i] >> 4];
		out[2 * i + 1] = hex[md[i] & 15];
	}
	out[64] = '\0';
}

static const char b64url[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

int db_base64url_encode(char **out, const void *data, size_t len)
{
	const unsigned char *p = data;
	char *s = malloc(len / 3 * 4 + 5);
	size_t o = 0, i = 0;

	if (!s)
		return FBC_ENOMEM;
	for (; i + 2 < len; i += 3) {
		unsigned v = (unsigned)p[i] << 16 | (unsigned)p[i + 1] << 8 | p[i + 2];

		s[o++] = b64url[v >> 18];
		s[o++] = b64url[(v >> 12) & 63];
		s[o++] = b64url[(v >> 6) & 63];
		s[o++] = b64url[v & 63];
	}
	if (len - i == 1) {
		unsigned v = (unsigned)p[i] << 16;

		s[o++] = b64url[v >> 18];
		s[o++] = b64url[(v >> 12) & 63];
	} else if (len - i == 2) {
		unsigned v = (unsigned)p[i] << 16 | (unsigned)p[i + 1] << 8;

		s[o++] = b64url[v >> 18];
		s[o++] = b64url[(v >> 12) & 63];
		s[o++] = b64url[(v >> 6) & 63];
	}
	s[o] = '\0';
	*out = s;
	return 0;
}

static int b64val(unsigned char c, int url)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == (url ? '-' : '+'))
		return 62;
	if (c == (url ? '_' : '/'))
		return 63;
	return -1;
}

static int b64_decode(unsigned char **out, size_t *len, const char *s, int url)
{
	size_t n = strlen(s), o = 0;
	unsigned acc = 0;
	int bits = 0, pad = 0;
	unsigned char *d = malloc(n / 4 * 3 + 4);

	if (!d)
		return FBC_ENOMEM;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		int v;

		if (!url && (c == ' ' || c == '\n' || c == '\r' || c == '\t'))
			continue;
		if (!url && c == '=') {
			pad++;
			continue;
		}
		if (pad || (v = b64val(c, url)) < 0)
			goto bad;
		acc = acc << 6 | (unsigned)v;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			d[o++] = (unsigned char)(acc >> bits);
			acc &= (1u << bits) - 1;
		}
	}
	if (bits >= 6 || pad > 2)
		goto bad;
	d[o] = 0;
	*out = d;
	*len = o;
	return 0;
bad:
	free(d);
	return FBC_EINVAL;
}

int db_base64url_decode(char **out, size_t *len, const char *s)
{
	return b64_decode((unsigned char **)out, len, s, 1);
}

int db_base64_decode(unsigned char **out, size_t *len, const char *s)
{
	return b64_decode(out, len, s, 0);
}
