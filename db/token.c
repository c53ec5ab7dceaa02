/* API tokens: only the sha256 of a token is stored; see db.h. */
#include "db/internal.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const scope_names[] = {"none", "read", "write", "admin"};

int fbc_db_scope_parse(fbc_db_scope *out, const char *s, fbc_error *err)
{
	for (int i = FBC_DB_SCOPE_READ; i <= FBC_DB_SCOPE_ADMIN; i++)
		if (s && strcmp(s, scope_names[i]) == 0) {
			*out = (fbc_db_scope)i;
			return 0;
		}
	return fbc_error_set(err, FBC_EINVAL, "scope", "scope must be read, write or admin");
}

const char *fbc_db_scope_name(fbc_db_scope s)
{
	return (unsigned)s <= FBC_DB_SCOPE_ADMIN ? scope_names[s] : "none";
}

/* The hash as a bytea parameter in hex text form: "\x<64 hex>". */
static void hash_param(char out[67], unsigned char md[32], const char *token)
{
	static const char hex[] = "0123456789abcdef";
	unsigned int n = 0;

	EVP_Digest(token, strlen(token), md, &n, EVP_sha256(), NULL);
	out[0] = '\\';
	out[1] = 'x';
	for (int i = 0; i < 32; i++) {
		out[2 + 2 * i] = hex[md[i] >> 4];
		out[3 + 2 * i] = hex[md[i] & 15];
	}
	out[66] = '\0';
}

static int check_token(const char *token, fbc_error *err)
{
	size_t n = token ? strlen(token) : 0;

	if (n < 16 || n > FBC_DB_TOKEN_MAX)
		return fbc_error_set(err, FBC_EINVAL, "token",
				     "a token has between 16 and %d bytes", FBC_DB_TOKEN_MAX);
	return 0;
}

#define TOKEN_JSON                                                                 \
	"json_build_object('id', id, 'scope', scope, 'description', description, " \
	"'createdAt', to_char(created_at AT TIME ZONE 'UTC', "                     \
	"'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"'))"

int fbc_db_token_create(char **token, json_t **info, fbc_db *db, fbc_db_scope scope,
			const char *description, fbc_error *err)
{
	static const db_stmt st = {"token_create",
				   "INSERT INTO api_tokens (hash, scope, description) VALUES ($1, "
				   "$2, $3) RETURNING " TOKEN_JSON,
				   3};
	unsigned char rnd[32], md[32];
	char hash[67], *enc = NULL, *tok = NULL;
	json_t *j = NULL;
	int rc;

	if (scope < FBC_DB_SCOPE_READ || scope > FBC_DB_SCOPE_ADMIN)
		return fbc_error_set(err, FBC_EINVAL, "scope", "invalid scope");
	if (description && strlen(description) > 1024)
		return fbc_error_set(err, FBC_EINVAL, "description", "description over 1024 bytes");
	if (RAND_bytes(rnd, sizeof(rnd)) != 1)
		return fbc_error_set(err, FBC_EINTERNAL, "token", "no random bytes available");
	if (db_base64url_encode(&enc, rnd, sizeof(rnd)) || !(tok = malloc(strlen(enc) + 6))) {
		rc = fbc_error_set(err, FBC_ENOMEM, "token", "out of memory");
		goto done;
	}
	memcpy(tok, "fbcd_", 5);
	memcpy(tok + 5, enc, strlen(enc) + 1);
	hash_param(hash, md, tok);
	if ((rc = db_query_json(&j, db, &st,
				(const char *[]){hash, fbc_db_scope_name(scope), description},
				"token", err)))
		goto done;
	*token = tok;
	tok = NULL;
	if (info)
		*info = j;
	else
		json_decref(j);
done:
	OPENSSL_cleanse(rnd, sizeof(rnd));
	free(enc);
	free(tok);
	return rc;
}

int fbc_db_token_lookup(fbc_db_scope *scope, fbc_db *db, const char *token, fbc_error *err)
{
	static const db_stmt st = {"token_lookup",
				   "SELECT hash, scope FROM api_tokens WHERE hash = $1 AND "
				   "revoked_at IS NULL",
				   1};
	PGresult *res = NULL;
	unsigned char md[32];
	char hash[67];
	int rc;

	if (!token || !*token || strlen(token) > FBC_DB_TOKEN_MAX)
		return fbc_error_set(err, FBC_EAUTH, "token", "invalid token");
	hash_param(hash, md, token);
	if ((rc = db_query_ex(&res, db, &st, (const char *[]){hash}, 1, err)))
		return rc;
	/* The index lookup finds the row by hash; the constant-time compare of
	 * the stored hash guards against any collation or encoding surprise. */
	if (PQntuples(res) != 1 || PQgetlength(res, 0, 0) != 32 ||
	    CRYPTO_memcmp(PQgetvalue(res, 0, 0), md, 32) != 0) {
		rc = fbc_error_set(err, FBC_EAUTH, "token", "invalid token");
		goto done;
	}
	rc = fbc_db_scope_parse(scope, PQgetvalue(res, 0, 1), err);
done:
	PQclear(res);
	return rc;
}

int fbc_db_token_seed(fbc_db *db, const char *token, fbc_db_scope scope, fbc_error *err)
{
	/* The seeded token replaces the one seeded before it: changing
	 * FBCD_ADMIN_TOKEN (after a leak, say) must revoke the old value. One
	 * statement, so the old token is never revoked without the new one. */
	static const db_stmt st = {"token_seed",
				   "WITH old AS (UPDATE api_tokens SET revoked_at = now() WHERE "
				   "description = 'seeded from FBCD_ADMIN_TOKEN' AND hash <> $1 "
				   "AND revoked_at IS NULL) "
				   "INSERT INTO api_tokens (hash, scope, description) VALUES ($1, "
				   "$2, 'seeded from FBCD_ADMIN_TOKEN') ON CONFLICT (hash) DO "
				   "NOTHING",
				   2};
	PGresult *res = NULL;
	unsigned char md[32];
	char hash[67];
	int rc;

	if ((rc = check_token(token, err)))
		return rc;
	if (scope < FBC_DB_SCOPE_READ || scope > FBC_DB_SCOPE_ADMIN)
		return fbc_error_set(err, FBC_EINVAL, "scope", "invalid scope");
	hash_param(hash, md, token);
	if ((rc = db_query(&res, db, &st, (const char *[]){hash, fbc_db_scope_name(scope)}, err)))
		return rc;
	PQclear(res);
	return 0;
}

int fbc_db_token_revoke(fbc_db *db, int64_t id, fbc_error *err)
{
	static const db_stmt st = {"token_revoke",
				   "UPDATE api_tokens SET revoked_at = now() WHERE id = $1 AND "
				   "revoked_at IS NULL",
				   1};
	PGresult *res = NULL;
	char num[24];
	int rc;

	snprintf(num, sizeof(num), "%lld", (long long)id);
	if ((rc = db_query(&res, db, &st, (const char *[]){num}, err)))
		return rc;
	if (strcmp(PQcmdTuples(res), "1") != 0)
		rc = fbc_error_set(err, FBC_ENOTFOUND, "token", "no active token %lld",
				   (long long)id);
	PQclear(res);
	return rc;
}
