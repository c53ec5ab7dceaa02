/*
 * Private to service/bundle: the read bundle's layout shared by read.c
 * (tree -> entries), render.c (blob), csvmeta.c (olm.csv.metadata),
 * validate.c (findings) and the small helpers (decode.c, lines.c, span.c).
 * Not a contract for other modules.
 */
#ifndef FBC_BUNDLE_INTERNAL_H
#define FBC_BUNDLE_INTERNAL_H

#include "service/base/vec.h"
#include "service/bundle/bundle.h"
#include "service/load/gotype.h"

#include <stdint.h>

/* One file of manifests/ or metadata/ and what its first document decoded to. */
typedef struct bentry {
	char *file; /* "manifests/NAME", relative to the bundle root */
	char *text; /* the bytes read (NULL for a directory or unreadable entry) */
	size_t len;
	json_t *doc;  /* first document / JSON value; NULL when it did not decode */
	bool is_json; /* decoded on the JSON path */
	int line;     /* line where the document's content starts (1 when unknown) */
	char *why;    /* why it did not decode (or why it is not an object with a kind) */
	int why_line; /* line of that problem, 0 when unknown */
	bool hidden;  /* name starts with '.' */
	bool is_dir;  /* a sub-directory (or a link to one) */
	bool unreadable;
	const char
		*kind; /* manifests: non-empty kind (borrowed from doc), NULL when not an object */
} bentry;

/* A dependency or property as opm keeps it: type and raw JSON value bytes. */
typedef struct rawprop {
	char *type;
	char *value; /* raw JSON text, NUL-terminated; "null" for a missing value */
	size_t len;
} rawprop;

struct fbc_bundle_dir {
	fbc_vec manifests; /* bentry, every entry of manifests/ in name order */
	fbc_vec metadata;  /* bentry, every entry of metadata/ in name order */
	bool has_manifests, has_metadata;

	/* render's view (bundles.md §2.1): indexes into manifests of the
	 * collected objects (not hidden, not a directory, decoded, with a kind),
	 * later CSVs excluded; */
	size_t *objects;
	size_t nobjects;
	size_t csv;	   /* index into manifests, SIZE_MAX when there is no CSV */
	size_t *extra_csv; /* later CSVs (W3 / FB1) */
	size_t nextra_csv;

	/* metadata/ targets (§2.8): index of the first file satisfying each,
	 * SIZE_MAX when none */
	size_t ann_file, dep_file, prop_file;
	char *package, *channels_raw, *default_channel;
	char **channels; /* channels_raw split on ',' */
	size_t nchannels;
	json_t *annotations; /* the `annotations` object of ann_file, borrowed from its doc */
	rawprop *deps;
	size_t ndeps;
	rawprop *props;
	size_t nprops;

	/* CSV values used by accessors (borrowed from the CSV object or "") */
	const char *name, *version, *replaces, *skip_range;
	const char **skips;
	size_t nskips;
};

/* ---- decode.c ---- */
/* Decode the first document of a file as opm's decodeFileFS does (§2.2):
 * 30-byte sniff, JSON first value with YAML fallback, apimachinery's
 * document splitter. On failure *why is a malloc'd message and *why_line
 * the line (0 if unknown). */
int fbc_bundle_decode_first(json_t **out, bool *is_json, int *line, char **why, int *why_line,
			    const char *text, size_t len, fbc_error *err);

/* ---- span.c: raw JSON text ---- */
/* End (exclusive) of the JSON value starting at s[i] (after white space),
 * or SIZE_MAX when it is not valid JSON. *start receives the first byte. */
size_t fbc_bundle_json_skip(const char *s, size_t n, size_t i, size_t *start);
/* Decode a {type, value} list as Go's json.Unmarshal into
 * []struct{Type string; Value json.RawMessage} from JSON text, keeping the
 * raw value bytes. Member names match case-insensitively, last wins; a type
 * that is not a string leaves "" (Go records the error and goes on). If
 * `member` is non-NULL the text is an object and the list is its member of
 * that name (case-insensitive). Returns 0, FBC_EPARSE (syntax error or a
 * shape that Go refuses: *type_error set when it is a type error only),
 * FBC_ENOMEM. */
int fbc_bundle_raw_list(rawprop **out, size_t *n, bool *type_error, const char *s, size_t len,
			const char *member);
void fbc_bundle_rawprops_free(rawprop *p, size_t n);

/* ---- lines.c ---- */
/* 1-based line of the node at path (keys; an index as "#N") in the YAML or
 * JSON text, or of the deepest existing prefix of it; 1 when nothing
 * matches. Keys compare exactly. */
int fbc_bundle_line_of(const char *text, size_t len, const char *const *path, size_t depth);

/* ---- helpers over json_t with Go's case-insensitive field matching ---- */
/* The member of obj whose key equals name ignoring ASCII case, the last one
 * in document order as Go's decoder ends up with; NULL when none. */
json_t *fbc_bundle_fold_get(const json_t *obj, const char *name);
bool fbc_bundle_fold_eq(const char *a, size_t an, const char *b);

/* Go's name of a JSON value's type in decode errors: fbc_gt_json_kind
 * (service/load/gotype.h). */

/* Go JSON (HTML-escaped, keys sorted) of a value into a malloc'd string. */
char *fbc_bundle_gojson(const json_t *v, bool html, size_t *len);

/* ---- csvmeta.c ---- */
/* The olm.csv.metadata value (bundles.md §4.2) of the CSV into out; fails
 * (FBC_EINVAL, B19) where the typed decode of §4.4 would. */
int fbc_bundle_csv_metadata(fbc_buf *out, const json_t *csv, fbc_error *err);

/* ---- render.c: the assembled pieces, also used by validate.c ---- */
typedef struct bprop {
	char *type;
	char *value; /* stored bytes (sorting); written compacted */
	size_t len;
	bool compact; /* no white space at all: written as is */
} bprop;

/* First B error in opm's order (FBC_EINVAL, *rule = "B2".."B17") or 0;
 * with props non-NULL the sorted property list (P1-P9) and with related
 * non-NULL the sorted related images are built too; skip_objects leaves the
 * olm.bundle.object properties out. */
int fbc_bundle_assemble(const fbc_bundle_dir *b, const char *image, fbc_vec *props,
			fbc_vec *related, bool skip_objects, const char **rule, fbc_error *err);
/* B5 for one collected object (0 when it is not a CRD opm decodes). */
int fbc_bundle_check_crd(const bentry *e, fbc_error *err);

typedef struct brelated {
	char *name;
	char *image;
} brelated;
void fbc_bundle_props_dispose(fbc_vec *props);
void fbc_bundle_related_dispose(fbc_vec *related);

#endif
