/* Private to pipeline/oci: credentials, tokens and the client's state. */
#ifndef FBC_OCI_INTERNAL_H
#define FBC_OCI_INTERNAL_H

#include "pipeline/oci/client.h"

#include <time.h>

typedef struct oci_creds {
	char *user;	      /* NULL: anonymous */
	char *secret;	      /* password or token */
	char *identity_token; /* OAuth2 refresh token (docker `identitytoken`) */
} oci_creds;

void oci_creds_dispose(oci_creds *c);

/* Credentials for registry host[:port] from the options (creds file, docker
 * config: auths, credHelpers, credsStore). Nothing found is not an error
 * (anonymous). */
int oci_creds_lookup(oci_creds *out, const fbc_oci_client_options *o, const char *registry,
		     fbc_error *err);

#define OCI_TOKENS_MAX 32
typedef struct oci_token {
	char *key; /* registry + " " + scope */
	char *token;
	time_t expires; /* CLOCK_MONOTONIC seconds */
} oci_token;

struct fbc_oci_client {
	fbc_oci_client_options opts;
	fbc_net *net;
	char registry[256]; /* the registry creds/scheme belong to */
	oci_creds creds;
	bool creds_loaded;
	bool pinged;
	int scheme;		     /* 0 unknown/anonymous, 1 basic, 2 bearer */
	fbc_oci_challenge challenge; /* last bearer challenge */
	oci_token tokens[OCI_TOKENS_MAX];
	char **mount_from;
	size_t n_mount_from;
	char *ca_file, *creds_file, *docker_config, *log_path;
};

/* Percent-encode s (RFC 3986 unreserved kept) onto b. */
int oci_url_escape(fbc_buf *b, const char *s);

/* A bearer token for scope (space-separated scopes), from the cache or the
 * realm of the last challenge. */
int oci_token_get(fbc_oci_client *c, const char **token, const char *scope, fbc_error *err);

/* "Authorization: Basic ..." for the client's credentials into b. */
int oci_basic_header(fbc_buf *b, const oci_creds *cr);

time_t oci_now(void);

#endif
