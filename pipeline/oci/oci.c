/* Digests, platforms and manifest parsing; see oci.h. */
#include "pipeline/oci/oci.h"

#include <jansson.h>
#include <openssl/evp.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- digests ---- */

static void hex_digest(char out[FBC_OCI_DIGEST_MAX], const unsigned char *md, unsigned n)
{
	static const char hex[] = "0123456789abcdef";
	char *p = out;

	memcpy(p, "sha256:", 7);
	p += 7;
	for (unsigned i = 0; i < n; i++) {
		*p++ = hex[md[i] >> 4];
		*p++ = hex[md[i] & 15];
	}
	*p = 0;
}

void fbc_oci_sha256(char out[FBC_OCI_DIGEST_MAX], const void *data, size_t len)
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned n = 0;

	EVP_Digest(data, len, md, &n, EVP_sha256(), NULL);
	hex_digest(out, md, n);
}

int fbc_oci_hasher_init(fbc_oci_hasher *h, fbc_error *err)
{
	EVP_MD_CTX *c = EVP_MD_CTX_new();

	if (!c || EVP_DigestInit_ex(c, EVP_sha256(), NULL) != 1) {
		EVP_MD_CTX_free(c);
		h->ctx = NULL;
		return fbc_error_set(err, FBC_ENOMEM, NULL, "sha256: out of memory");
	}
	h->ctx = c;
	return 0;
}

void fbc_oci_hasher_update(fbc_oci_hasher *h, const void *data, size_t len)
{
	EVP_DigestUpdate(h->ctx, data, len);
}

void fbc_oci_hasher_final(fbc_oci_hasher *h, char out[FBC_OCI_DIGEST_MAX])
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned n = 0;

	EVP_DigestFinal_ex(h->ctx, md, &n);
	hex_digest(out, md, n);
	fbc_oci_hasher_dispose(h);
}

void fbc_oci_hasher_dispose(fbc_oci_hasher *h)
{
	if (h && h->ctx) {
		EVP_MD_CTX_free(h->ctx);
		h->ctx = NULL;
	}
}

bool fbc_oci_digest_valid(const char *d)
{
	if (!d || strncmp(d, "sha256:", 7) != 0)
		return false;
	d += 7;
	for (int i = 0; i < 64; i++)
		if (!((d[i] >= '0' && d[i] <= '9') || (d[i] >= 'a' && d[i] <= 'f')))
			return false;
	return d[64] == 0;
}

/* ---- platforms ---- */

static const char *const known_os[] = {"linux",	  "windows", "darwin",	"freebsd", "netbsd",
				       "openbsd", "solaris", "illumos", "aix",	   "plan9"};
static const char *const known_arch[] = {"386",	   "amd64",    "arm",	  "arm64", "ppc64le",
					 "ppc64",  "s390x",    "riscv64", "mips",  "mipsle",
					 "mips64", "mips64le", "loong64", "wasm"};

static bool in(const char *s, size_t n, const char *const *list, size_t count)
{
	for (size_t i = 0; i < count; i++)
		if (strlen(list[i]) == n && strncmp(list[i], s, n) == 0)
			return true;
	return false;
}

int fbc_oci_platform_parse(fbc_oci_platform *out, const char *s, fbc_error *err)
{
	fbc_oci_platform p;
	const char *a = strchr(s, '/'), *v;
	size_t osl, al, vl = 0;

	memset(&p, 0, sizeof(p));
	if (!a)
		return fbc_error_set(err, FBC_EINVAL, s,
				     "a platform is OS/ARCH[/VARIANT], e.g. linux/amd64");
	osl = (size_t)(a - s);
	a++;
	v = strchr(a, '/');
	al = v ? (size_t)(v - a) : strlen(a);
	if (v) {
		v++;
		vl = strlen(v);
		if (!vl || vl >= sizeof(p.variant) || strchr(v, '/'))
			return fbc_error_set(err, FBC_EINVAL, s, "malformed platform variant");
		for (size_t i = 0; i < vl; i++)
			if (!((v[i] >= 'a' && v[i] <= 'z') || (v[i] >= '0' && v[i] <= '9')))
				return fbc_error_set(err, FBC_EINVAL, s,
						     "malformed platform variant");
	}
	if (!in(s, osl, known_os, sizeof(known_os) / sizeof(known_os[0])))
		return fbc_error_set(err, FBC_EINVAL, s, "unknown platform OS '%.*s'",
				     (int)(osl > 64 ? 64 : osl), s);
	if (!in(a, al, known_arch, sizeof(known_arch) / sizeof(known_arch[0])))
		return fbc_error_set(err, FBC_EINVAL, s, "unknown platform architecture '%.*s'",
				     (int)(al > 64 ? 64 : al), a);
	memcpy(p.os, s, osl);
	memcpy(p.architecture, a, al);
	if (v)
		memcpy(p.variant, v, vl);
	if (out)
		*out = p;
	return 0;
}

void fbc_oci_platform_format(const fbc_oci_platform *p, char *buf, size_t size)
{
	snprintf(buf, size, "%s/%s%s%s", p->os, p->architecture, p->variant[0] ? "/" : "",
		 p->variant);
}

bool fbc_oci_platform_equal(const fbc_oci_platform *a, const fbc_oci_platform *b)
{
	const char *va = a->variant, *vb = b->variant;

	if (strcmp(a->os, b->os) || strcmp(a->architecture, b->architecture))
		return false;
	if (!strcmp(a->architecture, "arm64")) {
		if (!strcmp(va, "v8"))
			va = "";
		if (!strcmp(vb, "v8"))
			vb = "";
	}
	return strcmp(va, vb) == 0;
}

void fbc_oci_format_time(char out[32], int64_t t)
{
	time_t tt = (time_t)t;
	struct tm tm;

	if (!gmtime_r(&tt, &tm) || strftime(out, 32, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
		snprintf(out, 32, "1970-01-01T00:00:00Z");
}

/* ---- manifests ---- */

static int copy_str(char *dst, size_t size, json_t *v, const char *field, bool required,
		    fbc_error *err)
{
	const char *s;

	if (!v) {
		if (required)
			return fbc_error_set(err, FBC_EINVAL, field, "missing");
		dst[0] = 0;
		return 0;
	}
	if (!json_is_string(v))
		return fbc_error_set(err, FBC_EINVAL, field, "not a string");
	s = json_string_value(v);
	if (strlen(s) >= size)
		return fbc_error_set(err, FBC_ELIMIT, field, "longer than %zu bytes", size - 1);
	memcpy(dst, s, strlen(s) + 1);
	return 0;
}

static int parse_descriptor(fbc_oci_descriptor *d, json_t *o, const char *field, fbc_error *err)
{
	json_t *size, *plat, *ann;
	char where[96];
	int rc;

	memset(d, 0, sizeof(*d));
	if (!json_is_object(o))
		return fbc_error_set(err, FBC_EINVAL, field, "a descriptor must be an object");
	snprintf(where, sizeof(where), "%s.mediaType", field);
	if ((rc = copy_str(d->media_type, sizeof(d->media_type), json_object_get(o, "mediaType"),
			   where, false, err)))
		return rc;
	snprintf(where, sizeof(where), "%s.digest", field);
	if ((rc = copy_str(d->digest, sizeof(d->digest), json_object_get(o, "digest"), where, true,
			   err)))
		return rc;
	if (!fbc_oci_digest_valid(d->digest))
		return fbc_error_set(err, FBC_EINVAL, where, "not a sha256 digest: '%.80s'",
				     d->digest);
	size = json_object_get(o, "size");
	if (!json_is_integer(size) || json_integer_value(size) < 0)
		return fbc_error_set(err, FBC_EINVAL, field, "size must be an integer >= 0");
	d->size = json_integer_value(size);
	plat = json_object_get(o, "platform");
	if (plat) {
		if (!json_is_object(plat))
			return fbc_error_set(err, FBC_EINVAL, field, "platform must be an object");
		snprintf(where, sizeof(where), "%s.platform", field);
		if ((rc = copy_str(d->platform.os, sizeof(d->platform.os),
				   json_object_get(plat, "os"), where, true, err)) ||
		    (rc = copy_str(d->platform.architecture, sizeof(d->platform.architecture),
				   json_object_get(plat, "architecture"), where, true, err)) ||
		    (rc = copy_str(d->platform.variant, sizeof(d->platform.variant),
				   json_object_get(plat, "variant"), where, false, err)))
			return rc;
		d->has_platform = true;
	}
	ann = json_object_get(o, "annotations");
	if (json_is_object(ann)) {
		json_t *ref = json_object_get(ann, "org.opencontainers.image.ref.name");

		if (json_is_string(ref) && strlen(json_string_value(ref)) < sizeof(d->ref_name))
			memcpy(d->ref_name, json_string_value(ref),
			       strlen(json_string_value(ref)) + 1);
	}
	return 0;
}

static int kind_of(const char *mt)
{
	if (!strcmp(mt, FBC_OCI_MT_INDEX) || !strcmp(mt, FBC_OCI_MT_DOCKER_LIST))
		return FBC_OCI_KIND_INDEX;
	if (!strcmp(mt, FBC_OCI_MT_MANIFEST) || !strcmp(mt, FBC_OCI_MT_DOCKER_MANIFEST))
		return FBC_OCI_KIND_MANIFEST;
	return 0;
}

int fbc_oci_manifest_parse(fbc_oci_manifest *out, const char *data, size_t len,
			   const char *content_type, fbc_error *err)
{
	fbc_oci_manifest m;
	json_t *root = NULL, *v, *list;
	json_error_t je;
	char ct[FBC_OCI_MT_MAX] = "";
	int rc = 0;

	memset(&m, 0, sizeof(m));
	if (len > FBC_OCI_MANIFEST_MAX)
		return fbc_error_set(err, FBC_ELIMIT, "manifest", "larger than %zu bytes",
				     FBC_OCI_MANIFEST_MAX);
	if (content_type) {
		size_t n = strcspn(content_type, "; \t");

		if (n >= sizeof(ct))
			n = sizeof(ct) - 1;
		memcpy(ct, content_type, n);
		ct[n] = 0;
	}
	root = json_loadb(data, len, JSON_REJECT_DUPLICATES, &je);
	if (!root) {
		rc = fbc_error_set(err, FBC_EPARSE, "manifest", "not JSON (line %d: %s)", je.line,
				   je.text);
		goto done;
	}
	if (!json_is_object(root)) {
		rc = fbc_error_set(err, FBC_EINVAL, "manifest", "not a JSON object");
		goto done;
	}
	v = json_object_get(root, "schemaVersion");
	if (!json_is_integer(v) || json_integer_value(v) != 2) {
		rc = fbc_error_set(err, FBC_EINVAL, "manifest.schemaVersion", "must be 2");
		goto done;
	}
	if ((rc = copy_str(m.media_type, sizeof(m.media_type), json_object_get(root, "mediaType"),
			   "manifest.mediaType", false, err)))
		goto done;
	if (m.media_type[0] && ct[0] && kind_of(ct) && strcmp(ct, m.media_type) != 0) {
		rc = fbc_error_set(err, FBC_EINVAL, "manifest.mediaType",
				   "'%s' disagrees with the Content-Type '%s'", m.media_type, ct);
		goto done;
	}
	if (!m.media_type[0]) {
		if (ct[0] && kind_of(ct))
			memcpy(m.media_type, ct, strlen(ct) + 1);
		else if (json_object_get(root, "manifests"))
			memcpy(m.media_type, FBC_OCI_MT_INDEX, sizeof(FBC_OCI_MT_INDEX));
		else
			memcpy(m.media_type, FBC_OCI_MT_MANIFEST, sizeof(FBC_OCI_MT_MANIFEST));
	}
	m.kind = kind_of(m.media_type);
	if (!m.kind) {
		rc = fbc_error_set(err, FBC_EINVAL, "manifest.mediaType",
				   "not an image manifest or index: '%s'", m.media_type);
		goto done;
	}
	if (m.kind == FBC_OCI_KIND_MANIFEST) {
		if ((rc = parse_descriptor(&m.config, json_object_get(root, "config"),
					   "manifest.config", err)))
			goto done;
		list = json_object_get(root, "layers");
	} else {
		list = json_object_get(root, "manifests");
	}
	if (!json_is_array(list)) {
		rc = fbc_error_set(err, FBC_EINVAL,
				   m.kind == FBC_OCI_KIND_MANIFEST ? "manifest.layers"
								   : "manifest.manifests",
				   "must be an array");
		goto done;
	}
	if (json_array_size(list) > FBC_OCI_ITEMS_MAX) {
		rc = fbc_error_set(err, FBC_ELIMIT, "manifest", "more than %d descriptors",
				   FBC_OCI_ITEMS_MAX);
		goto done;
	}
	if (json_array_size(list) && !(m.items = calloc(json_array_size(list), sizeof(*m.items)))) {
		rc = fbc_error_set(err, FBC_ENOMEM, "manifest", "out of memory");
		goto done;
	}
	for (size_t i = 0; i < json_array_size(list); i++) {
		char where[64];

		snprintf(where, sizeof(where), "manifest.%s[%zu]",
			 m.kind == FBC_OCI_KIND_MANIFEST ? "layers" : "manifests", i);
		if ((rc = parse_descriptor(&m.items[i], json_array_get(list, i), where, err)))
			goto done;
		m.n_items++;
	}
	*out = m;
	memset(&m, 0, sizeof(m));
done:
	free(m.items);
	json_decref(root);
	return rc;
}

void fbc_oci_manifest_dispose(fbc_oci_manifest *m)
{
	if (!m)
		return;
	free(m->items);
	m->items = NULL;
	m->n_items = 0;
}
