/* The OCI image layout on disk; see oci.h. */
#include "pipeline/oci/oci.h"

#include <jansson.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int mkdir_p(const char *path, fbc_error *err)
{
	char buf[4096];
	size_t n = strlen(path);

	if (n >= sizeof(buf))
		return fbc_error_set(err, FBC_ELIMIT, path, "path too long");
	memcpy(buf, path, n + 1);
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = 0;
		if (mkdir(buf, 0755) != 0 && errno != EEXIST)
			return fbc_error_set(err, FBC_EIO, buf, "mkdir: %s", strerror(errno));
		*p = '/';
	}
	if (mkdir(buf, 0755) != 0 && errno != EEXIST)
		return fbc_error_set(err, FBC_EIO, buf, "mkdir: %s", strerror(errno));
	return 0;
}

static int write_file(const char *path, const void *data, size_t len, fbc_error *err)
{
	char tmp[4200];
	int fd, rc = 0;
	const char *p = data;
	size_t left = len;

	if ((size_t)snprintf(tmp, sizeof(tmp), "%s.tmp.%ld", path, (long)getpid()) >= sizeof(tmp))
		return fbc_error_set(err, FBC_ELIMIT, path, "path too long");
	if ((fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)) < 0)
		return fbc_error_set(err, FBC_EIO, tmp, "open: %s", strerror(errno));
	while (left) {
		ssize_t w = write(fd, p, left);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			rc = fbc_error_set(err, FBC_EIO, tmp, "write: %s", strerror(errno));
			break;
		}
		p += w;
		left -= (size_t)w;
	}
	if (close(fd) != 0 && !rc)
		rc = fbc_error_set(err, FBC_EIO, tmp, "close: %s", strerror(errno));
	if (!rc && rename(tmp, path) != 0)
		rc = fbc_error_set(err, FBC_EIO, path, "rename: %s", strerror(errno));
	if (rc)
		unlink(tmp);
	return rc;
}

int fbc_oci_layout_init(const char *dir, fbc_error *err)
{
	static const char layout[] = "{\"imageLayoutVersion\":\"1.0.0\"}";
	char path[4200];
	int rc;

	if ((size_t)snprintf(path, sizeof(path), "%s/blobs/sha256", dir) >= sizeof(path))
		return fbc_error_set(err, FBC_ELIMIT, dir, "path too long");
	if ((rc = mkdir_p(path, err)))
		return rc;
	snprintf(path, sizeof(path), "%s/oci-layout", dir);
	return write_file(path, layout, sizeof(layout) - 1, err);
}

int fbc_oci_layout_blob_path(char *buf, size_t size, const char *dir, const char *digest,
			     fbc_error *err)
{
	if (!fbc_oci_digest_valid(digest))
		return fbc_error_set(err, FBC_EINVAL, digest, "not a sha256 digest");
	if ((size_t)snprintf(buf, size, "%s/blobs/sha256/%s", dir, digest + 7) >= size)
		return fbc_error_set(err, FBC_ELIMIT, dir, "path too long");
	return 0;
}

bool fbc_oci_layout_has(const char *dir, const char *digest)
{
	char path[4200];
	struct stat st;

	if (fbc_oci_layout_blob_path(path, sizeof(path), dir, digest, NULL))
		return false;
	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

int fbc_oci_layout_put(const char *dir, char digest_out[FBC_OCI_DIGEST_MAX], const void *data,
		       size_t len, fbc_error *err)
{
	char digest[FBC_OCI_DIGEST_MAX], path[4200];
	int rc;

	fbc_oci_sha256(digest, data, len);
	if (digest_out)
		memcpy(digest_out, digest, sizeof(digest));
	if ((rc = fbc_oci_layout_blob_path(path, sizeof(path), dir, digest, err)))
		return rc;
	if (fbc_oci_layout_has(dir, digest))
		return 0;
	return write_file(path, data, len, err);
}

int fbc_oci_layout_put_file(const char *dir, const char *digest, const char *src_path,
			    fbc_error *err)
{
	char path[4200], tmp[4300], buf[65536];
	int in = -1, out = -1, rc = 0;
	ssize_t n;

	if ((rc = fbc_oci_layout_blob_path(path, sizeof(path), dir, digest, err)))
		return rc;
	if (fbc_oci_layout_has(dir, digest))
		return 0;
	if (link(src_path, path) == 0)
		return 0;
	snprintf(tmp, sizeof(tmp), "%s.tmp.%ld", path, (long)getpid());
	if ((in = open(src_path, O_RDONLY | O_CLOEXEC)) < 0) {
		rc = fbc_error_set(err, FBC_EIO, src_path, "open: %s", strerror(errno));
		goto done;
	}
	if ((out = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)) < 0) {
		rc = fbc_error_set(err, FBC_EIO, tmp, "open: %s", strerror(errno));
		goto done;
	}
	while ((n = read(in, buf, sizeof(buf))) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 || write(out, buf, (size_t)n) != n) {
			rc = fbc_error_set(err, FBC_EIO, tmp, "copy: %s", strerror(errno));
			goto done;
		}
	}
	if (close(out) != 0) {
		out = -1;
		rc = fbc_error_set(err, FBC_EIO, tmp, "close: %s", strerror(errno));
		goto done;
	}
	out = -1;
	if (rename(tmp, path) != 0)
		rc = fbc_error_set(err, FBC_EIO, path, "rename: %s", strerror(errno));
done:
	if (in >= 0)
		close(in);
	if (out >= 0)
		close(out);
	if (rc)
		unlink(tmp);
	return rc;
}

static int read_file(fbc_buf *out, const char *path, size_t max, fbc_error *err)
{
	char buf[65536];
	int fd, rc = 0;
	ssize_t n;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return fbc_error_set(err, errno == ENOENT ? FBC_ENOTFOUND : FBC_EIO, path,
				     "open: %s", strerror(errno));
	fbc_buf_init(out, max);
	while ((n = read(fd, buf, sizeof(buf))) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			rc = fbc_error_set(err, FBC_EIO, path, "read: %s", strerror(errno));
			break;
		}
		if (fbc_buf_append(out, buf, (size_t)n)) {
			rc = fbc_error_set(err, FBC_ELIMIT, path, "larger than %zu bytes", max);
			break;
		}
	}
	close(fd);
	if (rc)
		fbc_buf_dispose(out);
	return rc;
}

int fbc_oci_layout_read(fbc_buf *out, const char *dir, const char *digest, size_t max,
			fbc_error *err)
{
	char path[4200], got[FBC_OCI_DIGEST_MAX];
	int rc;

	if ((rc = fbc_oci_layout_blob_path(path, sizeof(path), dir, digest, err)) ||
	    (rc = read_file(out, path, max, err)))
		return rc;
	fbc_oci_sha256(got, out->data ? out->data : "", out->len);
	if (strcmp(got, digest) != 0) {
		fbc_buf_dispose(out);
		return fbc_error_set(err, FBC_EINVAL, path, "content hashes to %s, not to its name",
				     got);
	}
	return 0;
}

int fbc_oci_layout_write_index(const char *dir, const fbc_oci_descriptor *top, const char *ref_name,
			       fbc_error *err)
{
	json_t *root = NULL, *d;
	char path[4200], *text = NULL;
	int rc = 0;

	root = json_pack("{s:i, s:s, s:[{s:s, s:s, s:I}]}", "schemaVersion", 2, "mediaType",
			 FBC_OCI_MT_INDEX, "manifests", "mediaType", top->media_type, "digest",
			 top->digest, "size", (json_int_t)top->size);
	if (!root) {
		rc = fbc_error_set(err, FBC_ENOMEM, dir, "out of memory");
		goto done;
	}
	d = json_array_get(json_object_get(root, "manifests"), 0);
	if (top->has_platform) {
		json_t *p = json_pack("{s:s, s:s}", "os", top->platform.os, "architecture",
				      top->platform.architecture);

		if (p && top->platform.variant[0])
			json_object_set_new(p, "variant", json_string(top->platform.variant));
		if (!p || json_object_set_new(d, "platform", p)) {
			rc = fbc_error_set(err, FBC_ENOMEM, dir, "out of memory");
			goto done;
		}
	}
	if (ref_name && json_object_set_new(d, "annotations",
					    json_pack("{s:s}", "org.opencontainers.image.ref.name",
						      ref_name))) {
		rc = fbc_error_set(err, FBC_ENOMEM, dir, "out of memory");
		goto done;
	}
	if (!(text = json_dumps(root, JSON_COMPACT | JSON_SORT_KEYS))) {
		rc = fbc_error_set(err, FBC_ENOMEM, dir, "out of memory");
		goto done;
	}
	if ((size_t)snprintf(path, sizeof(path), "%s/index.json", dir) >= sizeof(path)) {
		rc = fbc_error_set(err, FBC_ELIMIT, dir, "path too long");
		goto done;
	}
	rc = write_file(path, text, strlen(text), err);
done:
	free(text);
	json_decref(root);
	return rc;
}

int fbc_oci_layout_root(fbc_oci_descriptor *out, const char *dir, const char *ref_name,
			fbc_error *err)
{
	fbc_buf b;
	fbc_oci_manifest idx;
	char path[4200];
	struct stat st;
	int rc, found = -1;

	memset(&idx, 0, sizeof(idx));
	snprintf(path, sizeof(path), "%s/oci-layout", dir);
	if (stat(path, &st) != 0)
		return fbc_error_set(err, FBC_ENOTFOUND, dir,
				     "not an OCI image layout (no oci-layout)");
	snprintf(path, sizeof(path), "%s/index.json", dir);
	if ((rc = read_file(&b, path, FBC_OCI_MANIFEST_MAX, err)))
		return rc;
	rc = fbc_oci_manifest_parse(&idx, b.data ? b.data : "", b.len, FBC_OCI_MT_INDEX, err);
	fbc_buf_dispose(&b);
	if (rc) {
		fbc_error_prefix(err, "%s", path);
		return rc;
	}
	if (idx.kind != FBC_OCI_KIND_INDEX) {
		rc = fbc_error_set(err, FBC_EINVAL, path, "index.json is not an image index");
		goto done;
	}
	for (size_t i = 0; i < idx.n_items; i++) {
		if (ref_name ? strcmp(idx.items[i].ref_name, ref_name) == 0 : true) {
			if (found >= 0 && !ref_name) {
				rc = fbc_error_set(err, FBC_EINVAL, path,
						   "the layout holds several images: name one "
						   "(oci:DIR:NAME)");
				goto done;
			}
			found = (int)i;
		}
	}
	if (found < 0) {
		rc = fbc_error_set(err, FBC_ENOTFOUND, path,
				   ref_name ? "no image named '%s' in the layout"
					    : "the layout holds no image%s",
				   ref_name ? ref_name : "");
		goto done;
	}
	*out = idx.items[found];
done:
	fbc_oci_manifest_dispose(&idx);
	return rc;
}
