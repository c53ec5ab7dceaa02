/*
 * Private to service/load: the pieces shared by load.c (walk, threads,
 * ordered delivery), stream.c (one file's bytes -> items) and yaml.c (one
 * YAML document -> json_t). Not a contract for other modules.
 *
 * Items are produced on worker threads without touching the caller's
 * fbc_diags (which is not thread-safe); the calling thread turns them into
 * findings and callbacks in order. Every function here is reentrant.
 */
#ifndef FBC_LOAD_INTERNAL_H
#define FBC_LOAD_INTERNAL_H

#include "service/base/vec.h"
#include "service/load/load.h"

/* One result of parsing a file, in file order: a meta (blob != NULL) or a
 * finding (code != NULL). Owned by the fbc_vec it sits in. */
typedef struct fbc_load_item {
	json_t *blob;	     /* owned; schema/package/name borrow from it */
	const char *schema;  /* non-empty */
	const char *package; /* "" when absent */
	const char *name;    /* "" when absent */
	const char *code;    /* static string: "L1", "L4", "L5", "L6".."L9", "LIMIT" */
	char *message;	     /* malloc'd finding text */
	int line;	     /* 1-based line in the file, 0 if unknown */
	void *prepared;	     /* staged loads: the prepare result (blob already released) */
	bool is_meta;	     /* a meta (blob or prepared), not a finding */
} fbc_load_item;

/* The prepare stage of a staged load as seen by one parser call. */
typedef struct fbc_load_stagecall {
	const fbc_load_stage *stage;
	unsigned worker;
	const char *file; /* relative path, for meta->loc */
} fbc_load_stagecall;

/* Parse one file's bytes (JSON stream or multi-document YAML) into items
 * (a vec of fbc_load_item). Returns 0, or FBC_ENOMEM when even a finding
 * could not be recorded. */
int fbc_load_parse_data(fbc_vec *items, const char *data, size_t len, const fbc_load_limits *lim);
/* The same with a prepare stage (sc may be NULL: plain items). */
int fbc_load_parse_data_staged(fbc_vec *items, const char *data, size_t len,
			       const fbc_load_limits *lim, const fbc_load_stagecall *sc);

/* meta.c: apply L6-L9 to one decoded value v (reference stolen) found at line and append
 * the meta (prepared at once when sc is given) or the findings to items. skimmed (may be
 * NULL): the values fbc_json_fast_parse skimmed in v, built back unless the blob is of
 * the schema of sc's skim. 0 or FBC_ENOMEM. */
int fbc_load_check_meta(fbc_vec *items, json_t *v, int line, const fbc_load_stagecall *sc,
			fbc_vec *skimmed);

/* jsonfast.c: the top-level JSON object at data (data[0] == '{') as jansson's json_loadb
 * (JSON_DECODE_ANY | JSON_DISABLE_EOF_CHECK) would read it, with *consumed the bytes it
 * used; NULL when the value has anything the fast path leaves to jansson (escapes, reals,
 * duplicate keys, errors...). */
json_t *fbc_json_fast_object(const char *data, size_t len, size_t *consumed);
/* A property value fbc_json_fast_parse checked and did not build (fbc_load_skim): its
 * text, and the object whose "value" holds the placeholder meanwhile. */
typedef struct fbc_json_skimmed {
	json_t *obj;
	const char *key;  /* obj's member skimmed: "value" or "relatedImages" */
	const char *text; /* into the parsed data */
	size_t len;
} fbc_json_skimmed;

/* What fbc_json_fast_parse found besides the value. */
typedef struct fbc_json_fast_info {
	/* in (zero: none): the values to skim, and where to list those skimmed (a vec of
	 * fbc_json_skimmed, appended to; needs lim) */
	const fbc_load_skim *skim;
	fbc_vec *skimmed;
	/* out */
	size_t consumed; /* the bytes the value used */
	/* whether the value keeps to lim's max_depth and max_string_bytes
	 * (fbc_json_within's verdict, found while parsing); false without lim */
	bool within;
	int lines; /* newlines in the consumed bytes (all of them white space) */
} fbc_json_fast_info;
/* The same as fbc_json_fast_object, with *info. lim (may be NULL) is resolved (no zero
 * fields). */
json_t *fbc_json_fast_parse(const char *data, size_t len, const fbc_load_limits *lim,
			    fbc_json_fast_info *info);
/* Build the skimmed values (the data they point into still there) and put each in its
 * object in place of the placeholder; the list is emptied. 0 or FBC_ENOMEM. */
int fbc_json_fast_unskim(fbc_vec *skimmed);

/* Whether a decoded value keeps to lim's max_depth and max_string_bytes; when not, *which
 * names the first limit broken (in a depth-first walk). depth: the value's own (0 for a
 * top-level value). */
bool fbc_json_within(const json_t *v, size_t depth, const fbc_load_limits *lim, const char **which);

/* Record a finding item (message formatted). Returns 0 or FBC_ENOMEM. */
int fbc_load_item_finding(fbc_vec *items, const char *code, int line, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* Release every item's blob and message and empty the vec (memory kept);
 * undelivered prepared results go to stage->discard when stage is set. */
void fbc_load_items_clear(fbc_vec *items);
void fbc_load_items_clear_staged(fbc_vec *items, const fbc_load_stage *stage);

/* Convert the first YAML document in data[0..len) to JSON (go-yaml v2
 * typing). line0 is the file line of data[0]; messages use file lines.
 * *content_line receives the line where the root node starts (line0 for an
 * empty document, which yields json null). Returns 0, FBC_EPARSE (L5),
 * FBC_ELIMIT or FBC_ENOMEM with err filled. */
int fbc_yaml_doc_parse(json_t **out, int *content_line, const char *data, size_t len, int line0,
		       const fbc_load_limits *lim, fbc_error *err);

/* The same, always through libyaml (fbc_yaml_doc_parse tries yamlfast.c first). */
int fbc_yaml_doc_parse_libyaml(json_t **out, int *content_line, const char *data, size_t len,
			       int line0, const fbc_load_limits *lim, fbc_error *err);

/* yamlfast.c: the document as fbc_yaml_doc_parse_libyaml would read it, when it is
 * in the block style the fast path handles: 0 (*out, *content_line set), 1 when it
 * leaves the document to libyaml (anything else, every error), or FBC_ENOMEM. lim is
 * resolved (no zero fields). */
int fbc_yaml_fast_doc(json_t **out, int *content_line, const char *data, size_t len, int line0,
		      const fbc_load_limits *lim);

/* yaml.c: an untagged plain scalar as the libyaml path types it (go-yaml v2): 0 and
 * *out, 1 when that path reports an error for it (a float JSON cannot hold), or
 * FBC_ENOMEM; and whether it stays a string (what a mapping key must be here). */
int fbc_yaml_plain_json(json_t **out, const char *s, size_t n);
bool fbc_yaml_plain_is_string(const char *s, size_t n);

/* The effective limits: lim, or the defaults when lim is NULL; zero fields
 * of a caller's struct are replaced by defaults too. */
void fbc_load_limits_resolve(fbc_load_limits *out, const fbc_load_limits *lim);

#endif
