/* Uploaded catalog content: safe tar extraction, in-memory streams, load,
 * link and validate. */
#include "api/http/content.h"

#include "api/http/http.h"

#include "service/load/load.h"

#include "service/fbc/validate.h"

#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_PATH_BYTES 4096

void fbc_untar_limits_default(fbc_untar_limits *lim)
{
	memset(lim, 0, sizeof(*lim));
	lim->max_entries = 100000;
	lim->max_depth = 32;
	lim->max_file_bytes = 64ull << 20;
	lim->max_total_bytes = 2ull << 30;
	lim->max_ratio = 200;
}

/* Normalise an archive path into rel (no leading "./" or "/", no empty or
 * "." components); reject ".." and over-deep paths. Returns the depth, 0 for
 * the root itself, -1 when rejected. */
static int clean_path(char *rel, size_t size, const char *name, size_t max_depth)
{
	size_t o = 0;
	int depth = 0;
	const char *p = name;

	while (*p) {
		while (*p == '/')
			p++;
		if (!*p)
			break;
		const char *e = strchr(p, '/');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		if (n == 1 && p[0] == '.') {
			p += n;
			continue;
		}
		if (n == 2 && p[0] == '.' && p[1] == '.')
			return -1;
		if (o + n + 2 > size || (size_t)++depth > max_depth)
			return -1;
		if (o)
			rel[o++] = '/';
		memcpy(rel + o, p, n);
		o += n;
		p += n;
	}
	rel[o] = '\0';
	return depth;
}

static int mkdirs(const char *dir, const char *rel, bool last_too)
{
	char path[MAX_PATH_BYTES * 2];
	size_t dl = strlen(dir), rl = strlen(rel);

	if (dl + rl + 2 > sizeof(path))
		return -1;
	memcpy(path, dir, dl);
	path[dl] = '/';
	memcpy(path + dl + 1, rel, rl + 1);
	for (char *s = path + dl + 1; *s; s++) {
		if (*s != '/')
			continue;
		*s = '\0';
		if (mkdir(path, 0700) != 0 && errno != EEXIST)
			return -1;
		*s = '/';
	}
	if (last_too && mkdir(path, 0700) != 0 && errno != EEXIST)
		return -1;
	return 0;
}

/* Failures the archive's own layout causes (a file where a directory is
 * needed, a name longer than the file system allows, a duplicate) are the
 * client's error, a 400; anything else (disk full, permissions) is ours. */
static int entry_errno_code(int e)
{
	return e == ENOTDIR || e == EISDIR || e == EEXIST || e == ENAMETOOLONG || e == ELOOP
		       ? FBC_EINVAL
		       : FBC_EIO;
}

int fbc_http_untar(const char *dir, const void *data, size_t len, const fbc_untar_limits *lim_in,
		   fbc_error *err)
{
	fbc_untar_limits lim;
	struct archive *a = NULL;
	struct archive_entry *ent;
	size_t entries = 0;
	uint64_t total = 0;
	char rel[MAX_PATH_BYTES], path[MAX_PATH_BYTES * 2];
	char *chunk = NULL;
	int fd = -1, rc, r;

	if (lim_in)
		lim = *lim_in;
	else
		fbc_untar_limits_default(&lim);
	if (lim.max_ratio && len <= UINT64_MAX / lim.max_ratio) {
		uint64_t by_ratio = (uint64_t)len * lim.max_ratio;
		if (by_ratio < lim.max_file_bytes)
			by_ratio = lim.max_file_bytes;
		if (by_ratio < lim.max_total_bytes)
			lim.max_total_bytes = by_ratio;
	}
	chunk = malloc(65536);
	a = archive_read_new();
	if (!a || !chunk) {
		rc = fbc_error_set(err, FBC_ENOMEM, "archive", "out of memory");
		goto done;
	}
	archive_read_support_filter_gzip(a);
	archive_read_support_format_tar(a);
	if (archive_read_open_memory(a, data, len) != ARCHIVE_OK) {
		rc = fbc_error_set(err, FBC_EINVAL, "archive", "not a tar or tar.gz archive: %s",
				   archive_error_string(a) ? archive_error_string(a) : "?");
		goto done;
	}
	while ((r = archive_read_next_header(a, &ent)) == ARCHIVE_OK) {
		const char *name = archive_entry_pathname(ent);
		mode_t type = archive_entry_filetype(ent);
		int depth;

		if (++entries > lim.max_entries) {
			rc = fbc_error_set(err, FBC_ELIMIT, "archive", "more than %zu entries",
					   lim.max_entries);
			goto done;
		}
		if (!name || (depth = clean_path(rel, sizeof(rel), name, lim.max_depth)) < 0) {
			rc = fbc_error_set(err, FBC_EINVAL, name ? name : "archive",
					   "unsafe or too deep path in archive (absolute paths "
					   "are made relative, '..' is refused, depth at most %zu)",
					   lim.max_depth);
			goto done;
		}
		if (type == AE_IFDIR) {
			if (depth > 0 && mkdirs(dir, rel, true) != 0) {
				rc = fbc_error_set(err, entry_errno_code(errno), name,
						   "cannot create directory: %s", strerror(errno));
				goto done;
			}
			continue;
		}
		if (type != AE_IFREG || depth == 0) {
			rc = fbc_error_set(err, FBC_EINVAL, name,
					   "only regular files and directories are accepted "
					   "(no links, devices or FIFOs)");
			goto done;
		}
		if (archive_entry_size_is_set(ent) &&
		    (uint64_t)archive_entry_size(ent) > lim.max_file_bytes) {
			rc = fbc_error_set(err, FBC_ELIMIT, name, "file larger than %llu bytes",
					   (unsigned long long)lim.max_file_bytes);
			goto done;
		}
		if (mkdirs(dir, rel, false) != 0) {
			rc = fbc_error_set(err, entry_errno_code(errno), name,
					   "cannot create directory: %s", strerror(errno));
			goto done;
		}
		snprintf(path, sizeof(path), "%s/%s", dir, rel);
		fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd < 0) {
			rc = fbc_error_set(err, entry_errno_code(errno), name,
					   "cannot create file: %s",
					   errno == EEXIST ? "duplicate entry" : strerror(errno));
			goto done;
		}
		uint64_t file_bytes = 0;
		for (;;) {
			la_ssize_t n = archive_read_data(a, chunk, 65536);
			if (n < 0) {
				rc = fbc_error_set(err, FBC_EINVAL, name, "corrupt archive: %s",
						   archive_error_string(a));
				goto done;
			}
			if (n == 0)
				break;
			file_bytes += (uint64_t)n;
			total += (uint64_t)n;
			if (file_bytes > lim.max_file_bytes) {
				rc = fbc_error_set(err, FBC_ELIMIT, name,
						   "file larger than %llu bytes",
						   (unsigned long long)lim.max_file_bytes);
				goto done;
			}
			if (total > lim.max_total_bytes) {
				rc = fbc_error_set(err, FBC_ELIMIT, "archive",
						   "more than %llu bytes uncompressed from a "
						   "%zu-byte archive",
						   (unsigned long long)lim.max_total_bytes, len);
				goto done;
			}
			if (lim.budget && lim.budget_taken && total > *lim.budget_taken) {
				/* in steps of 1 MiB: one atomic operation per MiB written */
				uint64_t want = (total - *lim.budget_taken + (1u << 20) - 1) &
						~(uint64_t)((1u << 20) - 1);
				if (!fbc_http_budget_take(lim.budget, want)) {
					rc = fbc_error_set(err, FBC_EUNAVAIL, "archive",
							   "the server's budget for uploads in "
							   "flight is used up; retry later");
					goto done;
				}
				*lim.budget_taken += want;
			}
			for (la_ssize_t off = 0; off < n;) {
				ssize_t w = write(fd, chunk + off, (size_t)(n - off));
				if (w < 0) {
					if (errno == EINTR)
						continue;
					rc = fbc_error_set(err, FBC_EIO, name, "cannot write: %s",
							   strerror(errno));
					goto done;
				}
				off += w;
			}
		}
		if (close(fd) != 0) {
			fd = -1;
			rc = fbc_error_set(err, FBC_EIO, name, "cannot write: %s", strerror(errno));
			goto done;
		}
		fd = -1;
	}
	if (r != ARCHIVE_EOF) {
		rc = fbc_error_set(err, FBC_EINVAL, "archive", "corrupt archive: %s",
				   archive_error_string(a) ? archive_error_string(a) : "?");
		goto done;
	}
	rc = 0;
done:
	if (fd >= 0)
		close(fd);
	if (a)
		archive_read_free(a);
	free(chunk);
	return rc;
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	if (flag == FTW_DP)
		return rmdir(path) == 0 ? 0 : -1;
	return unlink(path) == 0 ? 0 : -1;
}

int fbc_http_rmtree(const char *dir)
{
	return nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS) == 0 ? 0 : FBC_EIO;
}

static bool media_is(const char *ct, const char *want)
{
	size_t n = strlen(want);
	while (*ct == ' ')
		ct++;
	return strncasecmp(ct, want, n) == 0 && (ct[n] == '\0' || ct[n] == ';' || ct[n] == ' ');
}

int fbc_http_content_kind(const char *ct)
{
	if (!ct)
		return FBC_CONTENT_UNKNOWN;
	if (media_is(ct, "application/gzip") || media_is(ct, "application/x-gzip") ||
	    media_is(ct, "application/x-tar") || media_is(ct, "application/tar+gzip") ||
	    media_is(ct, "application/x-compressed-tar"))
		return FBC_CONTENT_TAR;
	if (media_is(ct, "application/jsonl") || media_is(ct, "application/x-ndjson") ||
	    media_is(ct, "application/json") || media_is(ct, "application/json-seq") ||
	    media_is(ct, "application/x-jsonlines"))
		return FBC_CONTENT_JSON;
	if (media_is(ct, "application/yaml") || media_is(ct, "application/x-yaml") ||
	    media_is(ct, "text/yaml"))
		return FBC_CONTENT_YAML;
	return FBC_CONTENT_UNKNOWN;
}

struct add_ctx {
	fbc_catalog *cat;
	fbc_diags *diags;
};

static int add_meta(void *ctx, const fbc_meta *meta, fbc_error *err)
{
	struct add_ctx *c = ctx;
	return fbc_catalog_add_meta(c->cat, meta, c->diags, err);
}

int fbc_http_content_load(fbc_catalog **out, fbc_diags *diags, const char *content_type,
			  const char *body, size_t len, const char *tmp_root,
			  const fbc_untar_limits *lim_in, bool validate_only, fbc_error *err)
{
	uint64_t taken = 0;
	fbc_catalog *cat = NULL;
	char dir[MAX_PATH_BYTES];
	bool made_dir = false;
	int kind = fbc_http_content_kind(content_type);
	fbc_load_limits load_lim;
	int rc;

	fbc_load_limits_default(&load_lim);
	load_lim.validate_only = validate_only;
	load_lim.validate_lean = validate_only; /* only validated: nothing else reads it */
	if (kind == FBC_CONTENT_UNKNOWN) {
		rc = fbc_error_set(err, FBC_EINVAL, "Content-Type",
				   "'%s' is not application/gzip (tar.gz), application/x-tar, "
				   "application/jsonl or application/yaml",
				   content_type ? content_type : "(none)");
		goto done;
	}
	if (kind == FBC_CONTENT_TAR) {
		fbc_untar_limits lim;
		if (lim_in)
			lim = *lim_in;
		else
			fbc_untar_limits_default(&lim);
		lim.budget_taken = &taken;
		if ((size_t)snprintf(dir, sizeof(dir), "%s/fbcd-upload-XXXXXX",
				     tmp_root ? tmp_root : "/tmp") >= sizeof(dir)) {
			rc = fbc_error_set(err, FBC_EINVAL, "tmp", "temporary path too long");
			goto done;
		}
		if (!mkdtemp(dir)) {
			rc = fbc_error_set(err, FBC_EIO, dir,
					   "cannot create a temporary directory: %s",
					   strerror(errno));
			goto done;
		}
		made_dir = true;
		rc = fbc_http_untar(dir, body, len, &lim, err);
		if (rc != 0)
			goto done;
		rc = fbc_catalog_load_dir(&cat, dir, &load_lim, diags, err);
		if (rc != 0)
			goto done;
	} else {
		struct add_ctx ctx;
		rc = fbc_catalog_create(&cat, &load_lim, err);
		if (rc != 0)
			goto done;
		ctx.cat = cat;
		ctx.diags = diags;
		rc = fbc_load_buffer(kind == FBC_CONTENT_JSON ? "catalog.json" : "catalog.yaml",
				     body ? body : "", len, NULL, add_meta, &ctx, diags, err);
		if (rc != 0)
			goto done;
		rc = fbc_catalog_link(cat, err);
		if (rc != 0)
			goto done;
	}
	rc = fbc_validate(cat, NULL, diags, err);
	if (rc != 0)
		goto done;
	fbc_diags_sort(diags);
	*out = cat;
	cat = NULL;
	rc = 0;
done:
	if (made_dir)
		fbc_http_rmtree(dir);
	if (lim_in)
		fbc_http_budget_give(lim_in->budget, taken);
	fbc_catalog_free(cat);
	return rc;
}
