/* The registry client: authenticated requests, push and pull; see client.h. */
#include "pipeline/oci/internal.h"
#include "service/base/metrics.h"

#include <jansson.h>

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

void oci_tokens_free(fbc_oci_client *c);

#define ACCEPT_MANIFESTS                                                                 \
	"Accept: " FBC_OCI_MT_INDEX ", " FBC_OCI_MT_MANIFEST ", " FBC_OCI_MT_DOCKER_LIST \
	", " FBC_OCI_MT_DOCKER_MANIFEST

static char *dup_opt(const char *s, bool *fail)
{
	char *d;

	if (!s)
		return NULL;
	if (!(d = strdup(s)))
		*fail = true;
	return d;
}

int fbc_oci_client_create(fbc_oci_client **out, const fbc_oci_client_options *opts, fbc_error *err)
{
	fbc_oci_client *c = calloc(1, sizeof(*c));
	fbc_net_options no = {0};
	bool fail = false;
	int rc;

	if (!c)
		return fbc_error_set(err, FBC_ENOMEM, NULL, "out of memory");
	if (opts)
		c->opts = *opts;
	else
		c->opts.max_retries = -1;
	c->ca_file = dup_opt(c->opts.ca_file, &fail);
	c->creds_file = dup_opt(c->opts.creds_file, &fail);
	c->docker_config = dup_opt(c->opts.docker_config, &fail);
	c->log_path = dup_opt(c->opts.log_path, &fail);
	c->opts.ca_file = c->ca_file;
	c->opts.creds_file = c->creds_file;
	c->opts.docker_config = c->docker_config;
	c->opts.log_path = c->log_path;
	if (c->opts.n_mount_from) {
		if (!(c->mount_from = calloc(c->opts.n_mount_from, sizeof(char *))))
			fail = true;
		for (size_t i = 0; !fail && i < c->opts.n_mount_from; i++) {
			c->mount_from[i] = dup_opt(c->opts.mount_from[i], &fail);
			c->n_mount_from++;
		}
	}
	c->opts.mount_from = NULL;
	if (!c->opts.chunk_size)
		c->opts.chunk_size = (size_t)8 << 20;
	if (fail) {
		fbc_oci_client_free(c);
		return fbc_error_set(err, FBC_ENOMEM, NULL, "out of memory");
	}
	no.max_retries = c->opts.max_retries;
	no.ca_file = c->ca_file;
	no.log_path = c->log_path;
	no.max_response = FBC_OCI_MANIFEST_MAX + 1;
	if ((rc = fbc_net_create(&c->net, &no, err))) {
		fbc_oci_client_free(c);
		return rc;
	}
	*out = c;
	return 0;
}

void fbc_oci_client_free(fbc_oci_client *c)
{
	if (!c)
		return;
	fbc_net_free(c->net);
	oci_creds_dispose(&c->creds);
	oci_tokens_free(c);
	for (size_t i = 0; i < c->n_mount_from; i++)
		free(c->mount_from[i]);
	free(c->mount_from);
	free(c->ca_file);
	free(c->creds_file);
	free(c->docker_config);
	free(c->log_path);
	free(c);
}

fbc_net *fbc_oci_client_net(fbc_oci_client *c)
{
	return c->net;
}

/* ---- requests ---- */

static int use_registry(fbc_oci_client *c, const char *registry, fbc_error *err)
{
	int rc;

	if (c->creds_loaded && !strcmp(c->registry, registry))
		return 0;
	oci_creds_dispose(&c->creds);
	c->scheme = 0;
	c->pinged = false;
	snprintf(c->registry, sizeof(c->registry), "%s", registry);
	if ((rc = oci_creds_lookup(&c->creds, &c->opts, registry, err)))
		return rc;
	c->creds_loaded = true;
	return 0;
}

static int base_url(fbc_buf *b, fbc_oci_client *c, const fbc_oci_ref *r)
{
	return fbc_buf_printf(b, "%s://%s/v2/%s", c->opts.insecure ? "http" : "https", r->registry,
			      r->repository);
}

/* The registry's error text from a {"errors": [...]} body, or a description
 * of what came instead (HTML, nothing). */
static void describe_body(char *out, size_t size, const fbc_net_response *r)
{
	const char *ct = fbc_net_response_header(r, "Content-Type");
	json_t *j = NULL, *e;
	json_error_t je;

	out[0] = 0;
	if (r->body.len)
		j = json_loadb(r->body.data, r->body.len, 0, &je);
	e = json_array_get(json_object_get(j, "errors"), 0);
	if (json_is_object(e)) {
		json_t *code = json_object_get(e, "code"), *msg = json_object_get(e, "message");

		snprintf(out, size, "%s: %s", json_is_string(code) ? json_string_value(code) : "?",
			 json_is_string(msg) ? json_string_value(msg) : "");
	} else if (ct && strncasecmp(ct, "text/html", 9) == 0) {
		snprintf(out, size, "an HTML page, not the registry API (is this a registry?)");
	} else if (r->body.len) {
		snprintf(out, size, "a %s body, not the registry API", ct ? ct : "untyped");
	}
	json_decref(j);
}

static int http_error(fbc_error *err, const fbc_net_response *r, const char *what,
		      const char *target)
{
	char detail[512];

	describe_body(detail, sizeof(detail), r);
	return fbc_error_set(err,
			     r->status == 401 || r->status == 403 ? FBC_EAUTH
			     : r->status == 404			  ? FBC_ENOTFOUND
								  : FBC_EUNAVAIL,
			     target, "%s: HTTP %ld%s%s", what, r->status, detail[0] ? ": " : "",
			     detail);
}

/* Send req with the credentials the registry wants for scope; on a 401
 * learn the challenge, authenticate and send once more. */
static int do_req(fbc_oci_client *c, fbc_net_response *resp, fbc_net_request *req,
		  const char *scope, fbc_error *err)
{
	const char *hdrs[12];
	fbc_buf auth;
	int rc = 0;

	assert(req->n_headers < 10);
	fbc_buf_init(&auth, 0);
	for (int round = 0; round < 2; round++) {
		size_t nh = req->n_headers;

		if (nh)
			memcpy(hdrs, req->headers, nh * sizeof(*hdrs));
		fbc_buf_reset(&auth);
		if (c->scheme == 1 && c->creds.user && c->creds.secret) {
			if (oci_basic_header(&auth, &c->creds)) {
				rc = fbc_error_set(err, FBC_ENOMEM, NULL, "out of memory");
				goto done;
			}
			hdrs[nh++] = auth.data;
		} else if (c->scheme == 2) {
			const char *tok = NULL;

			if ((rc = oci_token_get(c, &tok, scope, err)))
				goto done;
			if (fbc_buf_printf(&auth, "Authorization: Bearer %s", tok)) {
				rc = fbc_error_set(err, FBC_ENOMEM, NULL, "out of memory");
				goto done;
			}
			hdrs[nh++] = auth.data;
		}
		{
			const char *const *save = req->headers;
			size_t save_n = req->n_headers;

			req->headers = hdrs;
			req->n_headers = nh;
			rc = fbc_net_request_do(c->net, resp, req, err);
			req->headers = save;
			req->n_headers = save_n;
		}
		if (rc)
			goto done;
		if (resp->status != 401 || round == 1)
			break;
		{
			const char *h = fbc_net_response_header(resp, "WWW-Authenticate");
			fbc_oci_challenge ch;

			if (!h || fbc_oci_challenge_parse(&ch, h, NULL))
				break; /* the caller reports the 401 */
			if (!strcmp(ch.scheme, "basic")) {
				if (!c->creds.user || !c->creds.secret) {
					rc = fbc_error_set(err, FBC_EAUTH, c->registry,
							   "the registry wants a user and "
							   "password (none found: --creds-file, "
							   "docker config.json)");
					goto done;
				}
				if (c->scheme == 1)
					break;
				c->scheme = 1;
			} else {
				bool same = c->scheme == 2 && !strcmp(ch.realm, c->challenge.realm);

				c->challenge = ch;
				c->scheme = 2;
				if (same && strstr(ch.error, "insufficient_scope") == NULL)
					break;
			}
		}
	}
done:
	if (auth.data)
		memset(auth.data, 0, auth.len);
	fbc_buf_dispose(&auth);
	return rc;
}

/* GET /v2/ once per registry: 200 or 401 from the distribution API, else
 * a clear error (an HTML portal, a proxy's error page). A 401 teaches the
 * challenge before the first real request. */
static int ping(fbc_oci_client *c, const fbc_oci_ref *ref, fbc_error *err)
{
	fbc_buf url;
	fbc_net_response r;
	const char *ct, *wa;
	int rc;

	if (c->pinged)
		return 0;
	fbc_buf_init(&url, 0);
	fbc_net_response_init(&r);
	if (fbc_buf_printf(&url, "%s://%s/v2/", c->opts.insecure ? "http" : "https",
			   ref->registry)) {
		rc = fbc_error_set(err, FBC_ENOMEM, NULL, "out of memory");
		goto done;
	}
	fbc_net_request req = {.url = url.data, .max_response = 1 << 20, .what = "ping"};
	if ((rc = fbc_net_request_do(c->net, &r, &req, err)))
		goto done;
	ct = fbc_net_response_header(&r, "Content-Type");
	if (ct && strncasecmp(ct, "text/html", 9) == 0) {
		rc = fbc_error_set(err, FBC_EPARSE, url.data,
				   "HTTP %ld with an HTML page: not a registry (distribution API)",
				   r.status);
		goto done;
	}
	if (r.status != 200 && r.status != 401) {
		rc = http_error(err, &r, "GET /v2/ (is this a registry?)", url.data);
		goto done;
	}
	wa = fbc_net_response_header(&r, "WWW-Authenticate");
	if (r.status == 401 && wa) {
		fbc_oci_challenge ch;

		if (fbc_oci_challenge_parse(&ch, wa, NULL) == 0) {
			if (!strcmp(ch.scheme, "bearer")) {
				c->challenge = ch;
				c->scheme = 2;
			} else if (c->creds.user && c->creds.secret) {
				c->scheme = 1;
			}
		}
	}
	c->pinged = true;
done:
	fbc_buf_dispose(&url);
	fbc_net_response_dispose(&r);
	return rc;
}

/* ---- manifests ---- */

int fbc_oci_get_manifest(fbc_oci_client *c, fbc_buf *body, fbc_oci_descriptor *desc,
			 const fbc_oci_ref *ref, const char *reference, fbc_error *err)
{
	fbc_buf url, scope;
	fbc_net_response r;
	const char *hdrs[] = {ACCEPT_MANIFESTS};
	const char *ct, *dcd;
	char got[FBC_OCI_DIGEST_MAX];
	fbc_oci_manifest m;
	int rc;

	memset(&m, 0, sizeof(m));
	fbc_buf_init(&url, 0);
	fbc_buf_init(&scope, 0);
	fbc_net_response_init(&r);
	if ((rc = use_registry(c, ref->registry, err)) || (rc = ping(c, ref, err)))
		goto done;
	if (base_url(&url, c, ref) || fbc_buf_printf(&url, "/manifests/%s", reference) ||
	    fbc_buf_printf(&scope, "repository:%s:pull", ref->repository)) {
		rc = fbc_error_set(err, FBC_ENOMEM, NULL, "out of memory");
		goto done;
	}
	fbc_net_request req = {.url = url.data,
			       .headers = hdrs,
			       .n_headers = 1,
			       .max_response = FBC_OCI_MANIFEST_MAX,
			       .what = "manifest.get"};
	if ((rc = do_req(c, &r, &req, scope.data, err))) {
		if (rc == FBC_ELIMIT)
			fbc_error_set(err, FBC_ELIMIT, reference,
				      "the manifest is larger than %zu bytes",
				      FBC_OCI_MANIFEST_MAX);
		goto done;
	}
	if (r.status != 200) {
		rc = http_error(err, &r, "GET manifest", reference);
		goto done;
	}
	ct = fbc_net_response_header(&r, "Content-Type");
	if (ct && strncasecmp(ct, "text/html", 9) == 0) {
		rc = fbc_error_set(err, FBC_EPARSE, reference,
				   "the registry answered an HTML page, not a manifest");
		goto done;
	}
	fbc_oci_sha256(got, r.body.data ? r.body.data : "", r.body.len);
	if (!strncmp(reference, "sha256:", 7) && strcmp(got, reference) != 0) {
		rc = fbc_error_set(err, FBC_EINVAL, reference,
				   "manifest digest mismatch: the content hashes to %s", got);
		goto done;
	}
	dcd = fbc_net_response_header(&r, "Docker-Content-Digest");
	if (dcd && strncmp(dcd, "sha256:", 7) == 0 && strncmp(dcd, got, strlen(got)) != 0) {
		rc = fbc_error_set(err, FBC_EINVAL, reference,
				   "manifest digest mismatch: the registry says %.80s, the content "
				   "hashes to %s",
				   dcd, got);
		goto done;
	}
	if ((rc = fbc_oci_manifest_parse(&m, r.body.data ? r.body.data : "", r.body.len, ct,
					 err))) {
		fbc_error_prefix(err, "%s", reference);
		goto done;
	}
	memset(desc, 0, sizeof(*desc));
	snprintf(desc->media_type, sizeof(desc->media_type), "%s", m.media_type);
	memcpy(desc->digest, got, sizeof(got));
	desc->size = (int64_t)r.body.len;
	fbc_buf_dispose(body);
	*body = r.body;
	fbc_buf_init(&r.body, 0);
done:
	fbc_oci_manifest_dispose(&m);
	fbc_buf_dispose(&url);
	fbc_buf_dispose(&scope);
	fbc_net_response_dispose(&r);
	return rc;
}

/* Does the repository already have this manifest under reference (a
 * digest, or a tag naming digest)? Errors count as "no": the PUT decides. */
static bool has_manifest(fbc_oci_client *c, const fbc_oci_ref *ref, const char *reference,
			 const char *media_type, const char *digest, const char *scope)
{
	fbc_buf url, accept;
	fbc_net_response r;
	const char *hdrs[1], *dcd;
	bool yes = false;

	fbc_buf_init(&url, 0);
	fbc_buf_init(&accept, 0);
	fbc_net_response_init(&r);
	if (base_url(&url, c, ref) || fbc_buf_printf(&url, "/manifests/%s", reference) ||
	    fbc_buf_printf(&accept, "Accept: %s", media_type))
		goto done;
	hdrs[0] = accept.data;
	fbc_net_request req = {.method = "HEAD",
			       .url = url.data,
			       .headers = hdrs,
			       .n_headers = 1,
			       .what = "manifest.head"};
	if (do_req(c, &r, &req, scope, NULL) || r.status != 200)
		goto done;
	dcd = fbc_net_response_header(&r, "Docker-Content-Digest");
	yes = dcd && strncmp(dcd, digest, strlen(digest)) == 0;
done:
	fbc_buf_dispose(&url);
	fbc_buf_dispose(&accept);
	fbc_net_response_dispose(&r);
	return yes;
}

static int put_manifest(fbc_oci_client *c, const fbc_oci_ref *ref, const char *reference,
			const fbc_buf *body, const char *media_type, const char *digest,
			const char *scope, fbc_error *err)
{
	fbc_buf url, ct;
	fbc_net_response r;
	const char *hdrs[1], *dcd;
	int rc;

	fbc_buf_init(&url, 0);
	fbc_buf_init(&ct, 0);
	fbc_net_response_init(&r);
	if (base_url(&url, c, ref) || fbc_buf_printf(&url, "/manifests/%s", reference) ||
	    fbc_buf_printf(&ct, "Content-Type: %s", media_type)) {
		rc = fbc_error_set(err, FBC_ENOMEM, NULL, "out of memory");
		goto done;
	}
	hdrs[0] = ct.data;
	fbc_net_request req = {.method = "PUT",
			       .url = url.data,
			       .headers = hdrs,
			       .n_headers = 1,
			       .body = body->data,
			       .body_len = body->len,
			       .max_response = 1 << 20,
			       .what = "manifest.put"};
	if ((rc = do_req(c, &r, &req, scope, err)))
		goto done;
	if (r.status != 201) {
		rc = http_error(err, &r, "PUT manifest", reference);
		goto done;
	}
	dcd = fbc_net_response_header(&r, "Docker-Content-Digest");
	if (dcd && strncmp(dcd, digest, strlen(digest)) != 0) {
		rc = fbc_error_set(err, FBC_EINVAL, reference,
				   "the registry stored the manifest as %.80s, not %s", dcd,
				   digest);
		goto done;
	}
done:
	fbc_buf_dispose(&url);
	fbc_buf_dispose(&ct);
	fbc_net_response_dispose(&r);
	return rc;
}

/* ---- blob push ---- */

static int append_digest(fbc_buf *url, const char *digest)
{
	if (fbc_buf_puts(url, strchr(url->data, '?') ? "&digest=" : "?digest="))
		return FBC_ENOMEM;
	return oci_url_escape(url, digest);
}

/* Location of a 201/202 answer resolved against the request URL. */
static int location(fbc_buf *out, const fbc_net_response *r, const char *req_url, fbc_error *err)
{
	const char *loc = fbc_net_response_header(r, "Location");
	char *abs;

	if (!loc || !*loc)
		return fbc_error_set(err, FBC_EPARSE, req_url, "HTTP %ld without a Location",
				     r->status);
	if (!(abs = fbc_net_resolve_location(req_url, loc)))
		return fbc_error_set(err, FBC_ENOMEM, NULL, "out of memory");
	fbc_buf_reset(out);
	if (fbc_buf_puts(out, abs)) {
		free(abs);
		return fbc_error_set(err, FBC_ENOMEM, NULL, "out of memory");
	}
	free(abs);
	return 0;
}

typedef struct blob_src {
	const fbc_oci_descriptor *d;
	int fd;
} blob_src;

static const fbc_metric_def m_push_bytes = {
	.name = "fbcd_image_push_bytes_total",
	.help = "Bytes of image blobs uploaded to registries (blobs the registry had already "
		"or mounted are not counted).",
	.type = FBC_METRIC_COUNTER};

/* One upload attempt from POST to the final PUT (loc: a session from a
 * mount fallback, may be empty). */
static int upload_once(fbc_oci_client *c, const fbc_oci_ref *ref, const blob_src *b, fbc_buf *loc,
		       const char *scope, fbc_error *err)
{
	fbc_buf url;
	fbc_net_response r;
	const char *octet = "Content-Type: application/octet-stream";
	uint64_t size = (uint64_t)b->d->size, chunk = c->opts.chunk_size;
	int rc = 0;

	fbc_buf_init(&url, 0);
	fbc_net_response_init(&r);
	if (!loc->len) {
		if (base_url(&url, c, ref) || fbc_buf_puts(&url, "/blobs/uploads/")) {
			rc = fbc_error_set(err, FBC_ENOMEM, NULL, "out of memory");
			goto done;
		}
		fbc_net_request post = {.method = "POST", .url = url.data, .what = "blob.start"};
		if ((rc = do_req(c, &r, &post, scope, err)))
			goto done;
		if (r.status != 202) {
			rc = http_error(err, &r, "POST blob upload", b->d->digest);
			goto done;
		}
		if ((rc = location(loc, &r, url.data, err)))
			goto done;
		{
			const char *min = fbc_net_response_header(&r, "OCI-Chunk-Min-Length");

			if (min) {
				char *end;
				unsigned long long v = strtoull(min, &end, 10);

				if (end != min && v > chunk && v <= ((uint64_t)1 << 32))
					chunk = v;
			}
		}
	}
	if (size > chunk) {
		for (uint64_t off = 0; off < size; off += chunk) {
			uint64_t n = size - off < chunk ? size - off : chunk;
			char range[64];
			const char *hdrs[2] = {octet, range};

			snprintf(range, sizeof(range), "Content-Range: %llu-%llu",
				 (unsigned long long)off, (unsigned long long)(off + n - 1));
			fbc_net_request patch = {.method = "PATCH",
						 .url = loc->data,
						 .headers = hdrs,
						 .n_headers = 2,
						 .has_file_body = true,
						 .body_file = {b->fd, off, n},
						 .no_retry = true,
						 .what = "blob.chunk"};
			if ((rc = do_req(c, &r, &patch, scope, err)))
				goto done;
			if (r.status != 202) {
				rc = http_error(err, &r, "PATCH blob chunk", b->d->digest);
				goto done;
			}
			fbc_buf_reset(&url);
			if (fbc_buf_puts(&url, loc->data) ||
			    (rc = location(loc, &r, url.data, err))) {
				if (!rc)
					rc = fbc_error_set(err, FBC_ENOMEM, NULL, "out of memory");
				goto done;
			}
		}
		fbc_buf_reset(&url);
		if (fbc_buf_puts(&url, loc->data) || append_digest(&url, b->d->digest)) {
			rc = fbc_error_set(err, FBC_ENOMEM, NULL, "out of memory");
			goto done;
		}
		fbc_net_request put = {.method = "PUT", .url = url.data, .what = "blob.finish"};
		if ((rc = do_req(c, &r, &put, scope, err)))
			goto done;
	} else {
		const char *hdrs[1] = {octet};

		fbc_buf_reset(&url);
		if (fbc_buf_puts(&url, loc->data) || append_digest(&url, b->d->digest)) {
			rc = fbc_error_set(err, FBC_ENOMEM, NULL, "out of memory");
			goto done;
		}
		fbc_net_request put = {.method = "PUT",
				       .url = url.data,
				       .headers = hdrs,
				       .n_headers = 1,
				       .has_file_body = true,
				       .body_file = {b->fd, 0, size},
				       .what = "blob.put"};
		if ((rc = do_req(c, &r, &put, scope, err)))
			goto done;
	}
	if (r.status != 201) {
		rc = http_error(err, &r, "PUT blob", b->d->digest);
		goto done;
	}
done:
	fbc_buf_dispose(&url);
	fbc_net_response_dispose(&r);
	return rc;
}

static int push_blob(fbc_oci_client *c, fbc_oci_push_stats *st, const fbc_oci_ref *ref,
		     const char *dir, const fbc_oci_descriptor *d, const char *scope,
		     fbc_error *err)
{
	fbc_buf url, loc, mscope;
	fbc_net_response r;
	char path[4200];
	struct stat sb;
	blob_src b = {d, -1};
	int rc;

	fbc_buf_init(&url, 0);
	fbc_buf_init(&loc, 0);
	fbc_buf_init(&mscope, 0);
	fbc_net_response_init(&r);
	if ((rc = fbc_oci_layout_blob_path(path, sizeof(path), dir, d->digest, err)))
		goto done;
	if ((b.fd = open(path, O_RDONLY | O_CLOEXEC)) < 0 || fstat(b.fd, &sb) != 0) {
		rc = fbc_error_set(err, FBC_ENOTFOUND, path, "blob missing from the layout: %s",
				   strerror(errno));
		goto done;
	}
	if ((int64_t)sb.st_size != d->size) {
		rc = fbc_error_set(err, FBC_EINVAL, path,
				   "blob is %lld bytes, its descriptor says %lld",
				   (long long)sb.st_size, (long long)d->size);
		goto done;
	}
	if (base_url(&url, c, ref) || fbc_buf_printf(&url, "/blobs/%s", d->digest)) {
		rc = fbc_error_set(err, FBC_ENOMEM, NULL, "out of memory");
		goto done;
	}
	fbc_net_request head = {.method = "HEAD", .url = url.data, .what = "blob.head"};
	if ((rc = do_req(c, &r, &head, scope, err)))
		goto done;
	if (r.status == 200) {
		const char *ct = fbc_net_response_header(&r, "Content-Type");

		if (ct && strncasecmp(ct, "text/html", 9) == 0) {
			rc = fbc_error_set(err, FBC_EPARSE, d->digest,
					   "HEAD blob: an HTML page, not the registry API");
			goto done;
		}
		st->blobs_existing++;
		goto done;
	}
	if (r.status != 404) {
		rc = http_error(err, &r, "HEAD blob", d->digest);
		goto done;
	}
	for (size_t i = 0; i < c->n_mount_from; i++) {
		fbc_buf_reset(&url);
		fbc_buf_reset(&mscope);
		if (base_url(&url, c, ref) || fbc_buf_puts(&url, "/blobs/uploads/?mount=") ||
		    oci_url_escape(&url, d->digest) || fbc_buf_puts(&url, "&from=") ||
		    oci_url_escape(&url, c->mount_from[i]) ||
		    fbc_buf_printf(&mscope, "%s repository:%s:pull", scope, c->mount_from[i])) {
			rc = fbc_error_set(err, FBC_ENOMEM, NULL, "out of memory");
			goto done;
		}
		fbc_net_request mount = {.method = "POST", .url = url.data, .what = "blob.mount"};
		if ((rc = do_req(c, &r, &mount, mscope.data, err)))
			goto done;
		if (r.status == 201) {
			st->blobs_mounted++;
			goto done;
		}
		if (r.status == 202) {
			/* the registry opened an ordinary upload session instead */
			if ((rc = location(&loc, &r, url.data, err)))
				goto done;
			break;
		}
	}
	for (int attempt = 1;; attempt++) {
		fbc_error e2;

		fbc_error_init(&e2);
		rc = upload_once(c, ref, &b, &loc, scope, &e2);
		if (!rc)
			break;
		fbc_buf_reset(&loc);
		if (attempt == 3 || rc == FBC_EAUTH || rc == FBC_ENOMEM || rc == FBC_EIO) {
			*err = e2;
			goto done;
		}
	}
	st->blobs_uploaded++;
	st->bytes_uploaded += (uint64_t)d->size;
	fbc_metric_add(&m_push_bytes, NULL, (double)d->size);
done:
	if (b.fd >= 0)
		close(b.fd);
	fbc_buf_dispose(&url);
	fbc_buf_dispose(&loc);
	fbc_buf_dispose(&mscope);
	fbc_net_response_dispose(&r);
	return rc;
}

/* ---- push ---- */

typedef struct doc {
	fbc_buf bytes;
	fbc_oci_descriptor d;
} doc;

int fbc_oci_push_layout(fbc_oci_client *c, fbc_oci_push_stats *stats, const char *dir,
			const char *ref_name, const fbc_oci_ref *dst, const char *const *tags,
			size_t n_tags, fbc_error *err)
{
	fbc_oci_push_stats st;
	fbc_oci_descriptor top;
	fbc_oci_manifest tm, *ms = NULL;
	doc *docs = NULL;
	size_t n_docs = 0;
	fbc_oci_descriptor *blobs = NULL;
	size_t n_blobs = 0, cap_blobs = 0;
	fbc_buf scope;
	int rc;

	memset(&st, 0, sizeof(st));
	memset(&tm, 0, sizeof(tm));
	fbc_buf_init(&scope, 0);
	if ((rc = use_registry(c, dst->registry, err)) || (rc = ping(c, dst, err)))
		goto done;
	if (fbc_buf_printf(&scope, "repository:%s:pull,push", dst->repository)) {
		rc = fbc_error_set(err, FBC_ENOMEM, NULL, "out of memory");
		goto done;
	}
	if ((rc = fbc_oci_layout_root(&top, dir, ref_name, err)))
		goto done;
	if (dst->digest[0] && strcmp(dst->digest, top.digest) != 0) {
		rc = fbc_error_set(err, FBC_EINVAL, dst->digest,
				   "the layout's image is %s, not the digest named", top.digest);
		goto done;
	}
	/* docs: the manifests, then the top (the index, or the one manifest) */
	{
		fbc_buf tb;

		if ((rc = fbc_oci_layout_read(&tb, dir, top.digest, FBC_OCI_MANIFEST_MAX, err)))
			goto done;
		rc = fbc_oci_manifest_parse(&tm, tb.data ? tb.data : "", tb.len,
					    top.media_type[0] ? top.media_type : NULL, err);
		if (rc) {
			fbc_buf_dispose(&tb);
			goto done;
		}
		size_t nd = tm.kind == FBC_OCI_KIND_INDEX ? tm.n_items + 1 : 1;

		if (!(docs = calloc(nd, sizeof(*docs))) || !(ms = calloc(nd, sizeof(*ms)))) {
			fbc_buf_dispose(&tb);
			rc = fbc_error_set(err, FBC_ENOMEM, NULL, "out of memory");
			goto done;
		}
		if (tm.kind == FBC_OCI_KIND_INDEX) {
			for (size_t i = 0; i < tm.n_items; i++) {
				docs[i].d = tm.items[i];
				if ((rc = fbc_oci_layout_read(&docs[i].bytes, dir,
							      tm.items[i].digest,
							      FBC_OCI_MANIFEST_MAX, err)))
					break;
				n_docs++;
				if ((rc = fbc_oci_manifest_parse(
					     &ms[i], docs[i].bytes.data, docs[i].bytes.len,
					     tm.items[i].media_type[0] ? tm.items[i].media_type
								       : NULL,
					     err)))
					break;
				if (ms[i].kind != FBC_OCI_KIND_MANIFEST) {
					rc = fbc_error_set(err, FBC_EINVAL, tm.items[i].digest,
							   "nested indexes are not supported");
					break;
				}
			}
			if (rc) {
				fbc_buf_dispose(&tb);
				goto done;
			}
		} else {
			ms[0] = tm;
			memset(&tm, 0, sizeof(tm));
			ms[0].kind = FBC_OCI_KIND_MANIFEST;
		}
		docs[n_docs].d = top;
		snprintf(docs[n_docs].d.media_type, sizeof(docs[n_docs].d.media_type), "%s",
			 tm.kind == FBC_OCI_KIND_INDEX ? tm.media_type : ms[0].media_type);
		docs[n_docs].bytes = tb;
		n_docs++;
	}
	/* every blob once: configs and layers */
	for (size_t i = 0; i < n_docs; i++) {
		fbc_oci_manifest *m = &ms[i];

		if (m->kind != FBC_OCI_KIND_MANIFEST)
			continue;
		for (size_t k = 0; k <= m->n_items; k++) {
			const fbc_oci_descriptor *d = k == 0 ? &m->config : &m->items[k - 1];
			bool seen = false;

			for (size_t j = 0; j < n_blobs && !seen; j++)
				seen = !strcmp(blobs[j].digest, d->digest);
			if (seen)
				continue;
			if (n_blobs == cap_blobs) {
				size_t cap = cap_blobs ? cap_blobs * 2 : 16;
				fbc_oci_descriptor *nb = realloc(blobs, cap * sizeof(*nb));

				if (!nb) {
					rc = fbc_error_set(err, FBC_ENOMEM, NULL, "out of memory");
					goto done;
				}
				blobs = nb;
				cap_blobs = cap;
			}
			blobs[n_blobs++] = *d;
		}
	}
	for (size_t i = 0; i < n_blobs; i++)
		if ((rc = push_blob(c, &st, dst, dir, &blobs[i], scope.data, err)))
			goto done;
	for (size_t i = 0; i < n_docs; i++) {
		if (has_manifest(c, dst, docs[i].d.digest, docs[i].d.media_type, docs[i].d.digest,
				 scope.data))
			continue;
		if ((rc = put_manifest(c, dst, docs[i].d.digest, &docs[i].bytes,
				       docs[i].d.media_type, docs[i].d.digest, scope.data, err)))
			goto done;
		st.manifests++;
	}
	/* tags only now that everything they name is in */
	for (size_t i = 0; i <= n_tags; i++) {
		const char *t = i < n_tags ? tags[i] : dst->tag;

		if (!t[0])
			continue;
		if (has_manifest(c, dst, t, docs[n_docs - 1].d.media_type, top.digest,
				 scope.data)) {
			st.tags++;
			continue;
		}
		if ((rc = put_manifest(c, dst, t, &docs[n_docs - 1].bytes,
				       docs[n_docs - 1].d.media_type, top.digest, scope.data, err)))
			goto done;
		st.tags++;
	}
	memcpy(st.digest, top.digest, sizeof(st.digest));
	*stats = st;
done:
	for (size_t i = 0; i < n_docs; i++) {
		fbc_buf_dispose(&docs[i].bytes);
		fbc_oci_manifest_dispose(&ms[i]);
	}
	if (ms && !n_docs)
		fbc_oci_manifest_dispose(&ms[0]);
	free(docs);
	free(ms);
	free(blobs);
	fbc_oci_manifest_dispose(&tm);
	fbc_buf_dispose(&scope);
	return rc;
}

/* ---- pull ---- */

static int pull_blob(fbc_oci_client *c, const fbc_oci_ref *ref, const char *dir,
		     const fbc_oci_descriptor *d, fbc_error *err)
{
	fbc_buf url, scope;
	fbc_net_response r;
	char tmp[4300], path[4200], got[FBC_OCI_DIGEST_MAX], buf[65536];
	FILE *f = NULL;
	fbc_oci_hasher h = {0};
	int rc;
	size_t n;

	fbc_buf_init(&url, 0);
	fbc_buf_init(&scope, 0);
	fbc_net_response_init(&r);
	tmp[0] = 0;
	if (fbc_oci_layout_has(dir, d->digest))
		return 0;
	if ((rc = fbc_oci_layout_blob_path(path, sizeof(path), dir, d->digest, err)))
		goto done;
	snprintf(tmp, sizeof(tmp), "%s.part.%ld", path, (long)getpid());
	if (!(f = fopen(tmp, "w+e"))) {
		rc = fbc_error_set(err, FBC_EIO, tmp, "open: %s", strerror(errno));
		tmp[0] = 0;
		goto done;
	}
	if (base_url(&url, c, ref) || fbc_buf_printf(&url, "/blobs/%s", d->digest) ||
	    fbc_buf_printf(&scope, "repository:%s:pull", ref->repository)) {
		rc = fbc_error_set(err, FBC_ENOMEM, NULL, "out of memory");
		goto done;
	}
	fbc_net_request get = {.url = url.data,
			       .sink = f,
			       .max_response = (size_t)d->size,
			       .follow_redirects = true,
			       .what = "blob.get"};
	if ((rc = do_req(c, &r, &get, scope.data, err))) {
		if (rc == FBC_ELIMIT)
			fbc_error_set(err, FBC_EINVAL, d->digest,
				      "the registry sent more than the %lld bytes of the blob",
				      (long long)d->size);
		goto done;
	}
	if (r.status != 200) {
		rc = http_error(err, &r, "GET blob", d->digest);
		goto done;
	}
	if ((int64_t)r.body_size != d->size) {
		rc = fbc_error_set(err, FBC_EINVAL, d->digest, "got %llu bytes, expected %lld",
				   (unsigned long long)r.body_size, (long long)d->size);
		goto done;
	}
	if (fflush(f) || fseeko(f, 0, SEEK_SET) || (rc = fbc_oci_hasher_init(&h, err))) {
		if (!rc)
			rc = fbc_error_set(err, FBC_EIO, tmp, "rewind: %s", strerror(errno));
		goto done;
	}
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
		fbc_oci_hasher_update(&h, buf, n);
	fbc_oci_hasher_final(&h, got);
	if (strcmp(got, d->digest) != 0) {
		rc = fbc_error_set(err, FBC_EINVAL, d->digest,
				   "blob digest mismatch: the content hashes to %s", got);
		goto done;
	}
	if (fclose(f) != 0) {
		f = NULL;
		rc = fbc_error_set(err, FBC_EIO, tmp, "close: %s", strerror(errno));
		goto done;
	}
	f = NULL;
	if (rename(tmp, path) != 0) {
		rc = fbc_error_set(err, FBC_EIO, path, "rename: %s", strerror(errno));
		goto done;
	}
	tmp[0] = 0;
done:
	fbc_oci_hasher_dispose(&h);
	if (f)
		fclose(f);
	if (tmp[0])
		unlink(tmp);
	fbc_buf_dispose(&url);
	fbc_buf_dispose(&scope);
	fbc_net_response_dispose(&r);
	return rc;
}

/* Pull one image manifest (bytes already fetched and verified) and its blobs. */
static int pull_image(fbc_oci_client *c, const fbc_oci_ref *ref, const char *dir,
		      const fbc_buf *bytes, const fbc_oci_descriptor *d, fbc_oci_manifest *m,
		      fbc_error *err)
{
	int rc;

	if ((rc = pull_blob(c, ref, dir, &m->config, err)))
		return rc;
	for (size_t i = 0; i < m->n_items; i++)
		if ((rc = pull_blob(c, ref, dir, &m->items[i], err)))
			return rc;
	return fbc_oci_layout_put(dir, NULL, bytes->data, bytes->len, err);
	(void)d;
}

static bool wanted(const fbc_oci_platform *p, const fbc_oci_platform *plats, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (fbc_oci_platform_equal(p, &plats[i]))
			return true;
	return false;
}

int fbc_oci_pull(fbc_oci_client *c, fbc_oci_descriptor *top, const fbc_oci_ref *src,
		 const fbc_oci_platform *plats, size_t np, const char *dir, const char *ref_name,
		 fbc_error *err)
{
	fbc_buf body, child;
	fbc_oci_descriptor d, cd;
	fbc_oci_manifest m, cm;
	json_t *idx = NULL, *kept = NULL;
	int rc;

	fbc_buf_init(&body, 0);
	fbc_buf_init(&child, 0);
	memset(&m, 0, sizeof(m));
	memset(&cm, 0, sizeof(cm));
	if ((rc = fbc_oci_layout_init(dir, err)))
		goto done;
	if ((rc = fbc_oci_get_manifest(c, &body, &d, src, src->digest[0] ? src->digest : src->tag,
				       err)))
		goto done;
	if ((rc = fbc_oci_manifest_parse(&m, body.data, body.len, d.media_type, err)))
		goto done;
	if (m.kind == FBC_OCI_KIND_MANIFEST) {
		if (np) {
			json_t *cfg = NULL;
			fbc_buf cb;
			fbc_oci_platform p;
			json_error_t je;

			memset(&p, 0, sizeof(p));
			if ((rc = pull_blob(c, src, dir, &m.config, err)) ||
			    (rc = fbc_oci_layout_read(&cb, dir, m.config.digest, FBC_OCI_CONFIG_MAX,
						      err)))
				goto done;
			cfg = json_loadb(cb.data ? cb.data : "", cb.len, 0, &je);
			fbc_buf_dispose(&cb);
			snprintf(p.os, sizeof(p.os), "%s",
				 json_string_value(json_object_get(cfg, "os")) ?: "");
			snprintf(p.architecture, sizeof(p.architecture), "%s",
				 json_string_value(json_object_get(cfg, "architecture")) ?: "");
			snprintf(p.variant, sizeof(p.variant), "%s",
				 json_string_value(json_object_get(cfg, "variant")) ?: "");
			json_decref(cfg);
			if (!wanted(&p, plats, np)) {
				char s[100];

				fbc_oci_platform_format(&p, s, sizeof(s));
				rc = fbc_error_set(err, FBC_EINVAL, "--platform",
						   "the image is %s only", s);
				goto done;
			}
		}
		if ((rc = pull_image(c, src, dir, &body, &d, &m, err)))
			goto done;
		*top = d;
	} else {
		json_error_t je;
		size_t n_kept = 0;

		idx = json_loadb(body.data, body.len, 0, &je);
		if (!idx || !(kept = json_array())) {
			rc = fbc_error_set(err, FBC_ENOMEM, NULL, "out of memory");
			goto done;
		}
		for (size_t i = 0; i < m.n_items; i++) {
			fbc_oci_ref cr = *src;

			if (np &&
			    (!m.items[i].has_platform || !wanted(&m.items[i].platform, plats, np)))
				continue;
			snprintf(cr.digest, sizeof(cr.digest), "%s", m.items[i].digest);
			fbc_oci_manifest_dispose(&cm);
			if ((rc = fbc_oci_get_manifest(c, &child, &cd, &cr, m.items[i].digest,
						       err)) ||
			    (rc = fbc_oci_manifest_parse(&cm, child.data, child.len, cd.media_type,
							 err)))
				goto done;
			if (cm.kind != FBC_OCI_KIND_MANIFEST) {
				rc = fbc_error_set(err, FBC_EINVAL, m.items[i].digest,
						   "nested indexes are not supported");
				goto done;
			}
			if ((rc = pull_image(c, src, dir, &child, &cd, &cm, err)))
				goto done;
			json_array_append(kept,
					  json_array_get(json_object_get(idx, "manifests"), i));
			n_kept++;
		}
		if (np && n_kept < np) {
			rc = fbc_error_set(err, FBC_EINVAL, "--platform",
					   "the image index lacks %zu of the platforms asked for",
					   np - n_kept);
			goto done;
		}
		if (n_kept == m.n_items) {
			if ((rc = fbc_oci_layout_put(dir, NULL, body.data, body.len, err)))
				goto done;
			*top = d;
		} else {
			char *text;

			json_object_set(idx, "manifests", kept);
			if (!(text = json_dumps(idx, JSON_COMPACT | JSON_SORT_KEYS))) {
				rc = fbc_error_set(err, FBC_ENOMEM, NULL, "out of memory");
				goto done;
			}
			memset(top, 0, sizeof(*top));
			rc = fbc_oci_layout_put(dir, top->digest, text, strlen(text), err);
			top->size = (int64_t)strlen(text);
			snprintf(top->media_type, sizeof(top->media_type), "%s", d.media_type);
			free(text);
			if (rc)
				goto done;
		}
	}
	rc = fbc_oci_layout_write_index(dir, top, ref_name, err);
done:
	json_decref(idx);
	json_decref(kept);
	fbc_oci_manifest_dispose(&m);
	fbc_oci_manifest_dispose(&cm);
	fbc_buf_dispose(&body);
	fbc_buf_dispose(&child);
	return rc;
}
