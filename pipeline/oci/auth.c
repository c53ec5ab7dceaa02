/* References, WWW-Authenticate, credentials and bearer tokens; see client.h. */
#include "pipeline/oci/internal.h"

#include "service/base/base64.h"
#include "service/fbc/imageref.h"

#include <jansson.h>

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/wait.h>
#include <unistd.h>

time_t oci_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec;
}

/* ---- references ---- */

bool fbc_oci_tag_valid(const char *t)
{
	size_t n = strlen(t);

	if (n == 0 || n > 128 || !(isalnum((unsigned char)t[0]) || t[0] == '_'))
		return false;
	for (size_t i = 1; i < n; i++)
		if (!isalnum((unsigned char)t[i]) && t[i] != '_' && t[i] != '.' && t[i] != '-')
			return false;
	return true;
}

int fbc_oci_ref_parse(fbc_oci_ref *out, const char *s, fbc_error *err)
{
	fbc_imageref r;
	fbc_oci_ref o;
	int rc;

	memset(&o, 0, sizeof(o));
	if (strlen(s) > 1024)
		return fbc_error_set(err, FBC_ELIMIT, "reference", "longer than 1024 bytes");
	if ((rc = fbc_imageref_parse(&r, s, err))) {
		fbc_error_prefix(err, "image reference '%.200s'", s);
		return FBC_EINVAL;
	}
	if (r.digest[0] && !fbc_oci_digest_valid(r.digest))
		return fbc_error_set(err, FBC_EINVAL, "reference",
				     "image reference '%.200s': only sha256 digests are supported",
				     s);
	snprintf(o.registry, sizeof(o.registry), "%s",
		 strcmp(r.domain, "docker.io") == 0 ? "registry-1.docker.io" : r.domain);
	snprintf(o.repository, sizeof(o.repository), "%s", r.path);
	snprintf(o.tag, sizeof(o.tag), "%s", r.tag);
	snprintf(o.digest, sizeof(o.digest), "%s", r.digest);
	if (!o.tag[0] && !o.digest[0])
		snprintf(o.tag, sizeof(o.tag), "latest");
	if (out)
		*out = o;
	return 0;
}

/* ---- WWW-Authenticate ---- */

static const char *skip_ws(const char *p)
{
	while (*p == ' ' || *p == '\t')
		p++;
	return p;
}

static bool tchar(char c)
{
	return isalnum((unsigned char)c) || strchr("!#$%&'*+-.^_`|~", c);
}

/* One token or quoted string at *pp into dst (truncation is an error). */
static int read_value(char *dst, size_t size, const char **pp, fbc_error *err)
{
	const char *p = *pp;
	size_t n = 0;

	if (*p == '"') {
		p++;
		while (*p && *p != '"') {
			if (*p == '\\' && p[1])
				p++;
			if (n + 1 >= size)
				return fbc_error_set(err, FBC_ELIMIT, "WWW-Authenticate",
						     "a parameter is longer than %zu bytes",
						     size - 1);
			if (dst)
				dst[n] = *p;
			n++;
			p++;
		}
		if (*p != '"')
			return fbc_error_set(err, FBC_EPARSE, "WWW-Authenticate",
					     "unterminated quoted string");
		p++;
	} else {
		while (*p && (tchar(*p) || *p == '/' || *p == ':' || *p == '=')) {
			if (n + 1 >= size)
				return fbc_error_set(err, FBC_ELIMIT, "WWW-Authenticate",
						     "a parameter is longer than %zu bytes",
						     size - 1);
			if (dst)
				dst[n] = *p;
			n++;
			p++;
		}
	}
	if (dst)
		dst[n] = 0;
	*pp = p;
	return 0;
}

int fbc_oci_challenge_parse(fbc_oci_challenge *out, const char *h, fbc_error *err)
{
	fbc_oci_challenge ch;
	const char *p = skip_ws(h);
	bool have = false, done = false;
	int rc;

	memset(&ch, 0, sizeof(ch));
	if (strlen(h) > 8192)
		return fbc_error_set(err, FBC_ELIMIT, "WWW-Authenticate", "longer than 8192 bytes");
	while (*p && !done) {
		char scheme[32];
		size_t n = 0;
		bool mine;

		while (tchar(*p)) {
			if (n + 1 >= sizeof(scheme))
				return fbc_error_set(err, FBC_EPARSE, "WWW-Authenticate",
						     "unknown auth scheme");
			scheme[n++] = (char)tolower((unsigned char)*p++);
		}
		scheme[n] = 0;
		if (!n)
			return fbc_error_set(err, FBC_EPARSE, "WWW-Authenticate",
					     "expected an auth scheme at '%.40s'", p);
		mine = !have && (!strcmp(scheme, "bearer") || !strcmp(scheme, "basic"));
		if (mine)
			snprintf(ch.scheme, sizeof(ch.scheme), "%s", scheme);
		p = skip_ws(p);
		/* auth-params until the next scheme (a token not followed by '=') */
		for (;;) {
			const char *save = p;
			char name[32];
			char tmp[1024];
			char *dst = NULL;
			size_t dsize = sizeof(tmp);

			n = 0;
			while (tchar(*p) && n + 1 < sizeof(name))
				name[n++] = (char)tolower((unsigned char)*p++);
			name[n] = 0;
			p = skip_ws(p);
			if (!n || *p != '=') {
				p = save;
				break;
			}
			p = skip_ws(p + 1);
			if (mine) {
				if (!strcmp(name, "realm"))
					dst = ch.realm, dsize = sizeof(ch.realm);
				else if (!strcmp(name, "service"))
					dst = ch.service, dsize = sizeof(ch.service);
				else if (!strcmp(name, "scope"))
					dst = ch.scope, dsize = sizeof(ch.scope);
				else if (!strcmp(name, "error"))
					dst = ch.error, dsize = sizeof(ch.error);
			}
			if ((rc = read_value(dst ? dst : tmp, dsize, &p, err)))
				return rc;
			p = skip_ws(p);
			if (*p == ',') {
				p = skip_ws(p + 1);
				continue;
			}
			if (*p) {
				p = save == p ? p + 1 : p;
				break;
			}
			break;
		}
		if (mine)
			have = true;
		if (have)
			done = true;
		p = skip_ws(p);
		if (*p == ',')
			p = skip_ws(p + 1);
	}
	if (!have)
		return fbc_error_set(err, FBC_EPARSE, "WWW-Authenticate",
				     "no Basic or Bearer challenge in '%.100s'", h);
	if (!strcmp(ch.scheme, "bearer") && !ch.realm[0])
		return fbc_error_set(err, FBC_EPARSE, "WWW-Authenticate",
				     "a Bearer challenge without realm");
	if (out)
		*out = ch;
	return 0;
}

/* ---- URLs ---- */

int oci_url_escape(fbc_buf *b, const char *s)
{
	static const char hex[] = "0123456789ABCDEF";

	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~') {
			if (fbc_buf_putc(b, (char)c))
				return FBC_ENOMEM;
		} else if (fbc_buf_putc(b, '%') || fbc_buf_putc(b, hex[c >> 4]) ||
			   fbc_buf_putc(b, hex[c & 15])) {
			return FBC_ENOMEM;
		}
	}
	return 0;
}

/* ---- credentials ---- */

void oci_creds_dispose(oci_creds *c)
{
	if (!c)
		return;
	if (c->secret)
		memset(c->secret, 0, strlen(c->secret));
	if (c->identity_token)
		memset(c->identity_token, 0, strlen(c->identity_token));
	free(c->user);
	free(c->secret);
	free(c->identity_token);
	memset(c, 0, sizeof(*c));
}

static int read_small_file(char **out, const char *path, size_t max, fbc_error *err)
{
	fbc_buf b;
	char buf[4096];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return fbc_error_set(err, errno == ENOENT ? FBC_ENOTFOUND : FBC_EIO, path,
				     "cannot read: %s", strerror(errno));
	fbc_buf_init(&b, max);
	while ((n = read(fd, buf, sizeof(buf))) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 || fbc_buf_append(&b, buf, (size_t)n)) {
			close(fd);
			fbc_buf_dispose(&b);
			return fbc_error_set(err, n < 0 ? FBC_EIO : FBC_ELIMIT, path,
					     n < 0 ? "read failed" : "file too large");
		}
	}
	close(fd);
	*out = fbc_buf_detach(&b, NULL);
	return *out ? 0 : fbc_error_set(err, FBC_ENOMEM, path, "out of memory");
}

/* "user:secret" into the creds (a string without ':' is a bare token). */
static int split_userpass(oci_creds *c, const char *s, size_t n)
{
	const char *colon = memchr(s, ':', n);

	if (!colon) {
		c->user = strdup("<token>");
		c->secret = strndup(s, n);
	} else {
		c->user = strndup(s, (size_t)(colon - s));
		c->secret = strndup(colon + 1, n - (size_t)(colon - s) - 1);
	}
	return c->user && c->secret ? 0 : FBC_ENOMEM;
}

/* Does a config.json key name this registry? Keys may carry a scheme and a
 * path ("https://index.docker.io/v1/"). */
static bool key_matches(const char *key, const char *registry)
{
	const char *k = key;
	size_t n;

	if (strncmp(k, "https://", 8) == 0)
		k += 8;
	else if (strncmp(k, "http://", 7) == 0)
		k += 7;
	n = strcspn(k, "/");
	if (strlen(registry) == n && strncmp(k, registry, n) == 0)
		return true;
	if (!strcmp(registry, "registry-1.docker.io"))
		return (n == 15 && !strncmp(k, "index.docker.io", n)) ||
		       (n == 9 && !strncmp(k, "docker.io", n));
	return false;
}

static int run_helper(oci_creds *out, const char *helper, const char *registry, fbc_error *err)
{
	char prog[128];
	int in[2] = {-1, -1}, outp[2] = {-1, -1}, status = 0, rc = 0;
	pid_t pid;
	fbc_buf b;
	char buf[4096];
	ssize_t n;
	json_t *j = NULL;
	json_error_t je;

	for (const char *p = helper; *p; p++)
		if (!isalnum((unsigned char)*p) && *p != '-' && *p != '_' && *p != '.')
			return fbc_error_set(err, FBC_EINVAL, "config.json",
					     "invalid credential helper name '%.60s'", helper);
	snprintf(prog, sizeof(prog), "docker-credential-%s", helper);
	fbc_buf_init(&b, 65536);
	if (pipe2(in, O_CLOEXEC) || pipe2(outp, O_CLOEXEC)) {
		rc = fbc_error_set(err, FBC_EIO, prog, "pipe: %s", strerror(errno));
		goto done;
	}
	pid = fork();
	if (pid < 0) {
		rc = fbc_error_set(err, FBC_EIO, prog, "fork: %s", strerror(errno));
		goto done;
	}
	if (pid == 0) {
		dup2(in[0], 0);
		dup2(outp[1], 1);
		execlp(prog, prog, "get", (char *)NULL);
		_exit(127);
	}
	close(in[0]);
	close(outp[1]);
	in[0] = outp[1] = -1;
	{
		struct sigaction ign = {.sa_handler = SIG_IGN}, old;

		sigaction(SIGPIPE, &ign, &old);
		if (write(in[1], registry, strlen(registry)) < 0)
			(void)0; /* the helper's answer says what went wrong */
		sigaction(SIGPIPE, &old, NULL);
	}
	close(in[1]);
	in[1] = -1;
	while ((n = read(outp[0], buf, sizeof(buf))) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 || fbc_buf_append(&b, buf, (size_t)n))
			break;
	}
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		/* "credentials not found" is anonymous access, not an error */
		if (WIFEXITED(status) && WEXITSTATUS(status) == 127)
			rc = fbc_error_set(err, FBC_ENOTFOUND, prog,
					   "credential helper not found on PATH");
		goto done;
	}
	j = json_loadb(b.data ? b.data : "", b.len, 0, &je);
	if (!json_is_object(j)) {
		rc = fbc_error_set(err, FBC_EPARSE, prog, "the helper's answer is not JSON");
		goto done;
	}
	{
		json_t *u = json_object_get(j, "Username"), *s = json_object_get(j, "Secret");

		if (!json_is_string(u) || !json_is_string(s)) {
			rc = fbc_error_set(err, FBC_EPARSE, prog,
					   "the helper's answer has no Username and Secret");
			goto done;
		}
		if (!strcmp(json_string_value(u), "<token>")) {
			out->identity_token = strdup(json_string_value(s));
			rc = out->identity_token ? 0 : FBC_ENOMEM;
		} else {
			out->user = strdup(json_string_value(u));
			out->secret = strdup(json_string_value(s));
			rc = out->user && out->secret ? 0 : FBC_ENOMEM;
		}
		if (rc)
			fbc_error_set(err, rc, prog, "out of memory");
	}
done:
	for (int i = 0; i < 2; i++) {
		if (in[i] >= 0)
			close(in[i]);
		if (outp[i] >= 0)
			close(outp[i]);
	}
	if (b.data)
		memset(b.data, 0, b.len);
	fbc_buf_dispose(&b);
	json_decref(j);
	return rc;
}

static int from_docker_config(oci_creds *out, const char *path, const char *registry,
			      fbc_error *err)
{
	char *text = NULL;
	json_t *root = NULL, *auths, *helpers, *store, *k;
	json_error_t je;
	const char *key;
	int rc;

	if ((rc = read_small_file(&text, path, 1 << 20, err))) {
		if (rc == FBC_ENOTFOUND)
			rc = 0;
		goto done;
	}
	root = json_loads(text, 0, &je);
	if (!json_is_object(root)) {
		rc = fbc_error_set(err, FBC_EPARSE, path, "line %d: %s", je.line, je.text);
		goto done;
	}
	helpers = json_object_get(root, "credHelpers");
	if (json_is_object(helpers)) {
		json_object_foreach(helpers, key, k)
		{
			if (json_is_string(k) && key_matches(key, registry)) {
				rc = run_helper(out, json_string_value(k), registry, err);
				goto done;
			}
		}
	}
	auths = json_object_get(root, "auths");
	if (json_is_object(auths)) {
		json_object_foreach(auths, key, k)
		{
			json_t *a, *it;

			if (!json_is_object(k) || !key_matches(key, registry))
				continue;
			a = json_object_get(k, "auth");
			it = json_object_get(k, "identitytoken");
			if (json_is_string(it) && json_string_length(it)) {
				if (!(out->identity_token = strdup(json_string_value(it))))
					rc = fbc_error_set(err, FBC_ENOMEM, path, "out of memory");
				goto done;
			}
			if (json_is_string(a) && json_string_length(a)) {
				unsigned char *dec = NULL;
				size_t len = 0, bad = 0;

				if (fbc_base64_decode(&dec, &len, &bad, json_string_value(a),
						      json_string_length(a))) {
					rc = fbc_error_set(err, FBC_EPARSE, path,
							   "auths.%s.auth is not base64", key);
					goto done;
				}
				rc = split_userpass(out, (const char *)dec, len);
				memset(dec, 0, len);
				free(dec);
				if (rc)
					fbc_error_set(err, rc, path, "out of memory");
				goto done;
			}
		}
	}
	store = json_object_get(root, "credsStore");
	if (json_is_string(store) && json_string_length(store))
		rc = run_helper(out, json_string_value(store), registry, err);
done:
	if (text) {
		memset(text, 0, strlen(text));
		free(text);
	}
	json_decref(root);
	return rc;
}

int oci_creds_lookup(oci_creds *out, const fbc_oci_client_options *o, const char *registry,
		     fbc_error *err)
{
	char path[4096];
	const char *env;
	int rc = 0;

	memset(out, 0, sizeof(*out));
	if (o->creds_file) {
		char *text = NULL;
		size_t n;

		if ((rc = read_small_file(&text, o->creds_file, 65536, err)))
			return rc;
		n = strcspn(text, "\r\n");
		if (n == 0)
			rc = fbc_error_set(err, FBC_EINVAL, o->creds_file,
					   "empty credentials file");
		else if (split_userpass(out, text, n))
			rc = fbc_error_set(err, FBC_ENOMEM, o->creds_file, "out of memory");
		memset(text, 0, strlen(text));
		free(text);
		return rc;
	}
	if (o->docker_config) {
		snprintf(path, sizeof(path), "%s", o->docker_config);
	} else if ((env = getenv("DOCKER_CONFIG")) && *env) {
		snprintf(path, sizeof(path), "%s/config.json", env);
	} else if ((env = getenv("HOME")) && *env) {
		snprintf(path, sizeof(path), "%s/.docker/config.json", env);
	} else {
		return 0;
	}
	rc = from_docker_config(out, path, registry, err);
	if (rc)
		oci_creds_dispose(out);
	return rc;
}

int oci_basic_header(fbc_buf *b, const oci_creds *cr)
{
	static const char tbl[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	fbc_buf raw;
	int rc = FBC_ENOMEM;

	fbc_buf_init(&raw, 0);
	if (fbc_buf_puts(b, "Authorization: Basic ") || fbc_buf_puts(&raw, cr->user) ||
	    fbc_buf_putc(&raw, ':') || fbc_buf_puts(&raw, cr->secret))
		goto done;
	for (size_t i = 0; i < raw.len; i += 3) {
		unsigned v = (unsigned char)raw.data[i] << 16;
		size_t left = raw.len - i;

		if (left > 1)
			v |= (unsigned char)raw.data[i + 1] << 8;
		if (left > 2)
			v |= (unsigned char)raw.data[i + 2];
		if (fbc_buf_putc(b, tbl[(v >> 18) & 63]) || fbc_buf_putc(b, tbl[(v >> 12) & 63]) ||
		    fbc_buf_putc(b, left > 1 ? tbl[(v >> 6) & 63] : '=') ||
		    fbc_buf_putc(b, left > 2 ? tbl[v & 63] : '='))
			goto done;
	}
	rc = 0;
done:
	if (raw.data)
		memset(raw.data, 0, raw.len);
	fbc_buf_dispose(&raw);
	return rc;
}

/* ---- bearer tokens ---- */

static oci_token *token_find(fbc_oci_client *c, const char *key)
{
	time_t now = oci_now();

	for (size_t i = 0; i < OCI_TOKENS_MAX; i++)
		if (c->tokens[i].key && !strcmp(c->tokens[i].key, key) &&
		    c->tokens[i].expires > now)
			return &c->tokens[i];
	return NULL;
}

static void token_dispose(oci_token *t)
{
	if (t->token)
		memset(t->token, 0, strlen(t->token));
	free(t->token);
	free(t->key);
	memset(t, 0, sizeof(*t));
}

int oci_token_get(fbc_oci_client *c, const char **token, const char *scope, fbc_error *err)
{
	fbc_buf key, url, form, auth;
	fbc_net_response r;
	json_t *j = NULL, *tok, *exp;
	json_error_t je;
	oci_token *t;
	const char *hdrs[2];
	size_t nh = 0;
	int rc = 0;

	fbc_buf_init(&key, 0);
	fbc_buf_init(&url, 0);
	fbc_buf_init(&form, 0);
	fbc_buf_init(&auth, 0);
	fbc_net_response_init(&r);
	if (fbc_buf_printf(&key, "%s %s", c->registry, scope)) {
		rc = fbc_error_set(err, FBC_ENOMEM, NULL, "out of memory");
		goto done;
	}
	if ((t = token_find(c, key.data))) {
		*token = t->token;
		goto done;
	}
	if (fbc_buf_puts(&url, c->challenge.realm)) {
		rc = fbc_error_set(err, FBC_ENOMEM, NULL, "out of memory");
		goto done;
	}
	if (c->creds.identity_token) {
		/* OAuth2 refresh-token grant (docker `identitytoken`) */
		if (fbc_buf_puts(&form, "grant_type=refresh_token&client_id=fbcd&refresh_token=") ||
		    oci_url_escape(&form, c->creds.identity_token) ||
		    fbc_buf_puts(&form, "&service=") ||
		    oci_url_escape(&form, c->challenge.service)) {
			rc = fbc_error_set(err, FBC_ENOMEM, NULL, "out of memory");
			goto done;
		}
		for (const char *s = scope; *s;) {
			size_t n = strcspn(s, " ");
			char one[1024];

			snprintf(one, sizeof(one), "%.*s", (int)(n < 1023 ? n : 1023), s);
			if (fbc_buf_puts(&form, "&scope=") || oci_url_escape(&form, one)) {
				rc = fbc_error_set(err, FBC_ENOMEM, NULL, "out of memory");
				goto done;
			}
			s += n;
			while (*s == ' ')
				s++;
		}
		hdrs[nh++] = "Content-Type: application/x-www-form-urlencoded";
	} else {
		bool q = strchr(url.data, '?') != NULL;

		if (c->challenge.service[0] && (fbc_buf_puts(&url, q ? "&service=" : "?service=") ||
						oci_url_escape(&url, c->challenge.service)))
			rc = FBC_ENOMEM;
		q = strchr(url.data, '?') != NULL;
		for (const char *s = scope; *s && !rc;) {
			size_t n = strcspn(s, " ");
			char one[1024];

			snprintf(one, sizeof(one), "%.*s", (int)(n < 1023 ? n : 1023), s);
			if (fbc_buf_puts(&url, q ? "&scope=" : "?scope=") ||
			    oci_url_escape(&url, one))
				rc = FBC_ENOMEM;
			q = true;
			s += n;
			while (*s == ' ')
				s++;
		}
		if (!rc && c->creds.user && c->creds.secret && oci_basic_header(&auth, &c->creds))
			rc = FBC_ENOMEM;
		if (rc) {
			rc = fbc_error_set(err, FBC_ENOMEM, NULL, "out of memory");
			goto done;
		}
		if (auth.len)
			hdrs[nh++] = auth.data;
	}
	{
		fbc_net_request req = {.method = c->creds.identity_token ? "POST" : "GET",
				       .url = url.data,
				       .headers = hdrs,
				       .n_headers = nh,
				       .body = form.len ? form.data : NULL,
				       .body_len = form.len,
				       .max_response = 1 << 20,
				       .what = "auth.token"};

		if ((rc = fbc_net_request_do(c->net, &r, &req, err))) {
			fbc_error_prefix(err, "token server");
			goto done;
		}
	}
	if (r.status == 401 || r.status == 403) {
		rc = fbc_error_set(
			err, FBC_EAUTH, c->registry,
			"the token server refused the credentials (HTTP %ld)%s", r.status,
			c->creds.user || c->creds.identity_token ? "" : " (no credentials found)");
		goto done;
	}
	if (r.status != 200) {
		rc = fbc_error_set(err, FBC_EUNAVAIL, c->registry,
				   "the token server answered HTTP %ld", r.status);
		goto done;
	}
	j = json_loadb(r.body.data ? r.body.data : "", r.body.len, 0, &je);
	tok = json_object_get(j, "token");
	if (!json_is_string(tok) || !json_string_length(tok))
		tok = json_object_get(j, "access_token");
	if (!json_is_string(tok) || !json_string_length(tok) || json_string_length(tok) > 65536) {
		rc = fbc_error_set(err, FBC_EPARSE, c->registry,
				   "the token server's answer has no token");
		goto done;
	}
	/* reuse the oldest slot */
	t = &c->tokens[0];
	for (size_t i = 0; i < OCI_TOKENS_MAX; i++) {
		if (!c->tokens[i].key) {
			t = &c->tokens[i];
			break;
		}
		if (c->tokens[i].expires < t->expires)
			t = &c->tokens[i];
	}
	token_dispose(t);
	exp = json_object_get(j, "expires_in");
	t->key = fbc_buf_detach(&key, NULL);
	t->token = strdup(json_string_value(tok));
	{
		json_int_t secs = json_is_integer(exp) ? json_integer_value(exp) : 60;

		if (secs < 1)
			secs = 60;
		if (secs > 86400)
			secs = 86400;
		/* a margin so that a token does not expire in flight */
		t->expires = oci_now() + (time_t)(secs > 20 ? secs - 10 : secs);
	}
	if (!t->key || !t->token) {
		token_dispose(t);
		rc = fbc_error_set(err, FBC_ENOMEM, NULL, "out of memory");
		goto done;
	}
	*token = t->token;
done:
	if (auth.data)
		memset(auth.data, 0, auth.len);
	if (form.data)
		memset(form.data, 0, form.len);
	fbc_buf_dispose(&key);
	fbc_buf_dispose(&url);
	fbc_buf_dispose(&form);
	fbc_buf_dispose(&auth);
	fbc_net_response_dispose(&r);
	json_decref(j);
	return rc;
}

void oci_tokens_free(fbc_oci_client *c);
void oci_tokens_free(fbc_oci_client *c)
{
	for (size_t i = 0; i < OCI_TOKENS_MAX; i++)
		token_dispose(&c->tokens[i]);
}
