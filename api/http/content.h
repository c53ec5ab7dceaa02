/*
 * Uploaded catalog content (PUT /v1/catalogs/{c}/content, POST /v1/validate)
 * turned into a linked fbc_catalog plus the findings of loading and
 * validation.
 *
 * Accepted bodies: a tar archive, gzip-compressed or not (application/gzip,
 * application/x-gzip, application/x-tar), extracted into a fresh temporary
 * directory with every entry checked (relative path, no "..", regular files
 * and directories only, bounded entry count, depth, per-file and total
 * size) and removed afterwards; or one JSON/JSON-lines stream
 * (application/jsonl, application/x-ndjson, application/json) or YAML
 * (application/yaml) loaded from memory.
 *
 * Ownership: *out is a new catalog the caller frees. Thread-safety: calls
 * are independent; each extraction uses its own directory.
 */
#ifndef FBC_API_HTTP_CONTENT_H
#define FBC_API_HTTP_CONTENT_H

#include "service/base/diag.h"
#include "service/base/error.h"
#include "service/fbc/model.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct fbc_untar_limits {
	size_t max_entries;	  /* default 100,000 */
	size_t max_depth;	  /* path components, default 32 */
	uint64_t max_file_bytes;  /* default 64 MiB */
	uint64_t max_total_bytes; /* default 2 GiB */
	/* Uncompressed bytes per byte of archive (default 200; real catalogs
	 * compress about 11:1): a gzip bomb of 1 MB may not write 2 GiB. The
	 * total allowed is never below max_file_bytes. 0 = no ratio bound. */
	uint64_t max_ratio;
	/* The shared budget of bytes in flight (NULL = none): extracted bytes
	 * are taken from it as they are written, and added to *budget_taken;
	 * the caller gives them back once the files are removed. Running out
	 * is FBC_EUNAVAIL (the client may retry later). */
	struct fbc_http_budget *budget;
	uint64_t *budget_taken;
} fbc_untar_limits;

void fbc_untar_limits_default(fbc_untar_limits *lim);

/* Extract a (gzip-compressed) tar archive held in memory into the existing
 * empty directory dir. FBC_EINVAL names the offending entry; FBC_ELIMIT the
 * bound exceeded. Partial output is left for the caller to remove. */
int fbc_http_untar(const char *dir, const void *data, size_t len, const fbc_untar_limits *lim,
		   fbc_error *err);

/* Remove a directory tree (never following symlinks). */
int fbc_http_rmtree(const char *dir);

/* Is this media type (parameters ignored) one we accept as catalog content? */
int fbc_http_content_kind(const char *content_type);
enum { FBC_CONTENT_UNKNOWN = 0, FBC_CONTENT_TAR, FBC_CONTENT_JSON, FBC_CONTENT_YAML };

/* Load the body into a linked catalog and run validation; findings go to
 * diags (the catalog is valid when none were recorded). tmp_root is where
 * the extraction directory is created; lim bounds it (NULL = defaults),
 * and what it took from lim->budget is given back before returning.
 * validate_only: the catalog is only validated, never stored or served
 * (fbc_load_limits.validate_only and validate_lean: less memory per
 * request; nothing but validation may read the catalog). */
int fbc_http_content_load(fbc_catalog **out, fbc_diags *diags, const char *content_type,
			  const char *body, size_t len, const char *tmp_root,
			  const fbc_untar_limits *lim, bool validate_only, fbc_error *err);

#endif
