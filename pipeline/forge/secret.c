/* Secrets read from their reference when used (see secret.h). */
#include "pipeline/forge/secret.h"

#include <errno.h>
#include <openssl/crypto.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void fbc_secret_free(char *secret)
{
	if (!secret)
		return;
	OPENSSL_cleanse(secret, strlen(secret));
	free(secret);
}

int fbc_secret_read(char **out, const char *file, const char *env, fbc_error *err)
{
	char *buf = NULL;
	size_t n = 0;
	FILE *f;
	int rc = 0;

	if (file && *file) {
		if (!(f = fopen(file, "rb")))
			return fbc_error_set(err, FBC_EIO, file, "cannot open the secret file: %s",
					     strerror(errno));
		if (!(buf = malloc(FBC_SECRET_MAX + 1))) {
			fclose(f);
			return fbc_error_set(err, FBC_ENOMEM, file, "out of memory");
		}
		n = fread(buf, 1, FBC_SECRET_MAX + 1, f);
		if (ferror(f))
			rc = fbc_error_set(err, FBC_EIO, file, "cannot read the secret file");
		else if (n > FBC_SECRET_MAX)
			rc = fbc_error_set(err, FBC_ELIMIT, file, "secret file over %d bytes",
					   FBC_SECRET_MAX);
		fclose(f);
		if (rc)
			goto fail;
		while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\r'))
			n--;
		buf[n] = '\0';
		if (n == 0 || strlen(buf) != n) {
			rc = fbc_error_set(err, FBC_EINVAL, file,
					   "the secret file is empty or holds a NUL byte");
			goto fail;
		}
		*out = buf;
		return 0;
	}
	if (env && *env) {
		const char *v = getenv(env);
		if (!v || !*v)
			return fbc_error_set(err, FBC_ENOTFOUND, env,
					     "the environment variable is not set");
		if (strlen(v) > FBC_SECRET_MAX)
			return fbc_error_set(err, FBC_ELIMIT, env, "secret over %d bytes",
					     FBC_SECRET_MAX);
		if (!(*out = strdup(v)))
			return fbc_error_set(err, FBC_ENOMEM, env, "out of memory");
		return 0;
	}
	return fbc_error_set(err, FBC_ENOTFOUND, "credentials", "no secret is configured");
fail:
	if (buf)
		OPENSSL_cleanse(buf, FBC_SECRET_MAX + 1);
	free(buf);
	return rc;
}
