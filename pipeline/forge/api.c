/* GitHub and GitLab REST calls over pipeline/net (api.h). */
#include "pipeline/forge/api.h"

#include "pipeline/net/net.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_ANSWER (8u << 20)

struct fbc_forge_api {
	fbc_net *net;
	bool gitlab;
	char *base;
	char *auth; /* the whole auth header line */
	char remaining[32], retry_after[32];
};

int fbc_forge_api_open(fbc_forge_api **out, const char *kind, const char *api, const char *token,
		       const char *ca_file, fbc_error *err)
{
	fbc_forge_api *f;
	fbc_net_options no = {
		.timeout_ms = 30000, .max_retries = 2, .backoff_max_ms = 10000, .ca_file = ca_file};
	size_t n;
	int rc;

	if (!kind || (strcmp(kind, "github") && strcmp(kind, "gitlab")))
		return fbc_error_set(err, FBC_EINVAL, "forge.kind", "github or gitlab, not %s",
				     kind ? kind : "none");
	if (!(f = calloc(1, sizeof(*f))))
		return fbc_error_set(err, FBC_ENOMEM, "forge", "out of memory");
	f->gitlab = !strcmp(kind, "gitlab");
	if (!api)
		api = f->gitlab ? "https://gitlab.com/api/v4" : "https://api.github.com";
	f->base = strdup(api);
	if (f->base && (n = strlen(f->base)) > 0 && f->base[n - 1] == '/')
		f->base[n - 1] = '\0';
	if (token) {
		n = strlen(token) + 32;
		if ((f->auth = malloc(n)))
			snprintf(f->auth, n,
				 f->gitlab ? "PRIVATE-TOKEN: %s" : "Authorization: Bearer %s",
				 token);
	}
	if (!f->base || (token && !f->auth)) {
		fbc_forge_api_free(f);
		return fbc_error_set(err, FBC_ENOMEM, "forge", "out of memory");
	}
	if ((rc = fbc_net_create(&f->net, &no, err))) {
		fbc_forge_api_free(f);
		return rc;
	}
	*out = f;
	return 0;
}

void fbc_forge_api_free(fbc_forge_api *f)
{
	if (!f)
		return;
	if (f->auth) {
		memset(f->auth, 0, strlen(f->auth));
		free(f->auth);
	}
	free(f->base);
	fbc_net_free(f->net);
	free(f);
}

bool fbc_forge_api_gitlab(const fbc_forge_api *f)
{
	return f->gitlab;
}

static void keep(char *dst, size_t size, const char *v)
{
	snprintf(dst, size, "%s", v ? v : "");
}

int fbc_forge_api_call(fbc_forge_api *f, const char *method, const char *path, json_t *body,
		       json_t **out, long *status, fbc_error *err)
{
	fbc_net_response resp;
	char *url, *text = NULL;
	const char *hdr[4];
	size_t nh = 0, n = strlen(f->base) + strlen(path) + 1;
	int rc;

	if (out)
		*out = NULL;
	if (!(url = malloc(n)))
		return fbc_error_set(err, FBC_ENOMEM, "forge", "out of memory");
	snprintf(url, n, "%s%s", f->base, path);
	if (body && !(text = json_dumps(body, JSON_COMPACT))) {
		free(url);
		return fbc_error_set(err, FBC_ENOMEM, "forge", "out of memory");
	}
	if (f->auth)
		hdr[nh++] = f->auth;
	hdr[nh++] = f->gitlab ? "Accept: application/json" : "Accept: application/vnd.github+json";
	if (!f->gitlab)
		hdr[nh++] = "X-GitHub-Api-Version: 2022-11-28";
	if (text)
		hdr[nh++] = "Content-Type: application/json";
	fbc_net_request req = {.method = method,
			       .url = url,
			       .headers = hdr,
			       .n_headers = nh,
			       .body = text,
			       .body_len = text ? strlen(text) : 0,
			       .max_response = MAX_ANSWER,
			       .what = "forge"};
	fbc_net_response_init(&resp);
	rc = fbc_net_request_do(f->net, &resp, &req, err);
	free(text);
	free(url);
	if (rc == 0) {
		*status = resp.status;
		keep(f->remaining, sizeof(f->remaining),
		     fbc_net_response_header(&resp, "X-RateLimit-Remaining"));
		keep(f->retry_after, sizeof(f->retry_after),
		     fbc_net_response_header(&resp, "Retry-After"));
		if (out && resp.body.len) {
			json_error_t jerr;
			*out = json_loadb(resp.body.data, resp.body.len, 0, &jerr);
		}
	}
	fbc_net_response_dispose(&resp);
	return rc;
}

int fbc_forge_api_error(const fbc_forge_api *f, const char *what, long status, json_t *answer,
			fbc_error *err)
{
	json_t *m = json_object_get(answer, "message");
	const char *msg = json_is_string(m) ? json_string_value(m) : "";
	bool limited = status == 403 && (f->retry_after[0] || !strcmp(f->remaining, "0"));

	if (!msg[0] && json_is_string(json_object_get(answer, "error")))
		msg = json_string_value(json_object_get(answer, "error"));
	if (status == 429 || status >= 500 || limited)
		return fbc_error_set(err, FBC_EUNAVAIL, what,
				     "%s answered %ld%s%s%s (retried later)",
				     f->gitlab ? "GitLab" : "GitHub", status, msg[0] ? ": " : "",
				     msg, limited ? " — rate limit exhausted" : "");
	return fbc_error_set(err, FBC_EINVAL, what, "%s answered %ld%s%.300s",
			     f->gitlab ? "GitLab" : "GitHub", status, msg[0] ? ": " : "", msg);
}

char *fbc_forge_api_project(const fbc_forge_api *f, const char *project)
{
	size_t n = strlen(project);
	char *out;

	if (!f->gitlab || strspn(project, "0123456789") == n)
		return strdup(project);
	if (!(out = malloc(3 * n + 1)))
		return NULL;
	char *p = out;
	for (const unsigned char *s = (const unsigned char *)project; *s; s++) {
		if ((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		    (*s >= '0' && *s <= '9') || strchr("-._~", *s))
			*p++ = (char)*s;
		else
			p += sprintf(p, "%%%02X", *s);
	}
	*p = '\0';
	return out;
}
