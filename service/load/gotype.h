/*
 * Go types a JSON value is checked against, the way Go's encoding/json would
 * decode it into them (service/fbc's tables of opm's types, its tree check
 * and the loader's raw-text check, service/load/jsonfast.c, share them).
 */
#ifndef FBC_LOAD_GOTYPE_H
#define FBC_LOAD_GOTYPE_H

#include <jansson.h>
#include <stddef.h>

typedef enum fbc_gt_kind {
	FBC_GT_ANY,    /* interface{} or json.RawMessage: anything goes */
	FBC_GT_STRING, /* string */
	FBC_GT_BOOL,   /* bool */
	FBC_GT_INT,    /* int */
	FBC_GT_BYTES,  /* []byte: base64 string */
	FBC_GT_ARRAY,  /* []elem */
	FBC_GT_STRUCT, /* struct with fields */
	FBC_GT_MAP,    /* map[string]elem */
} fbc_gt_kind;

typedef struct fbc_gt_field fbc_gt_field;

typedef struct fbc_gt_type {
	fbc_gt_kind kind;
	const char *goname; /* "string", "[]string", "declcfg.ChannelEntry" */
	const struct fbc_gt_type *elem;
	const fbc_gt_field *fields; /* STRUCT: terminated by a NULL name */
} fbc_gt_type;

struct fbc_gt_field {
	const char *name; /* JSON name */
	size_t len;	  /* strlen(name) */
	const fbc_gt_type *type;
};

/* The field of struct type t a member named key (n bytes, no NUL) decodes
 * into: the one of that exact name, else the first equal ignoring ASCII
 * case; NULL when none (Go ignores the member). */
const fbc_gt_field *fbc_gt_find_field(const fbc_gt_type *t, const char *key, size_t n);

/* The kind of v as Go's encoding/json names it in its errors ("cannot
 * unmarshal KIND into ..."): object, array, string, number, bool, null. */
const char *fbc_gt_json_kind(const json_t *v);

#endif
