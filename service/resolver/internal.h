/*
 * Resolver internals shared by the files of service/resolver/ (not a public
 * contract). One r_ctx per fbc_resolve call; everything it allocates lives
 * in the result's arena or is freed by ctx_dispose. Not thread-safe (one
 * resolution per context), which is all fbc_resolve needs.
 */
#ifndef FBC_RESOLVER_INTERNAL_H
#define FBC_RESOLVER_INTERNAL_H

#include "service/base/arena.h"
#include "service/base/buf.h"
#include "service/base/strmap.h"
#include "service/base/vec.h"
#include "service/resolver/resolver.h"
#include "service/semver/semver.h"

#include <cryptominisat5/cryptominisat_c.h>
#include <stdbool.h>
#include <stddef.h>

/* Pointer-keyed hash map (channel -> chain). */
typedef struct r_ptrmap {
	const void **keys;
	void **vals;
	size_t cap, count;
} r_ptrmap;

/* One candidate: a (catalog, channel, bundle) entry or an installed bundle. */
typedef struct r_entry {
	int cat;	       /* index in req->catalogs; -1 for an installed bundle */
	const fbc_channel *ch; /* NULL for installed */
	const fbc_bundle *b;   /* properties source; NULL for installed without a catalog copy */
	const fbc_channel_entry *ce; /* the channel entry; NULL for installed */
	const char *name, *package, *channel, *version;
	fbc_semver ver; /* tolerant parse of version */
	bool has_ver;
	size_t pos; /* position from the channel head; SIZE_MAX when off the chain */
	bool is_default;
	int inst; /* index in req->installed, or -1 */
	int var;  /* solver variable, -1 until created */
	const char *id;
} r_entry;

typedef struct r_chain {
	int *ents; /* entry indices, head first */
	size_t n;
	const char *error; /* chain problem (no head, several heads, cycle), or NULL */
} r_chain;

enum { P_GVK, P_PACKAGE, P_LABEL, P_ALL, P_ANY, P_NOT, P_CEL };

typedef struct r_pred {
	int kind;
	const char *group, *version, *kind_name; /* P_GVK */
	const char *package, *range_text;	 /* P_PACKAGE */
	fbc_semver_range *range;
	const char *label; /* P_LABEL */
	struct r_pred **kids;
	size_t n_kids;
	void *cel; /* compiled program (P_CEL) */
	const char *rule;
	const char *failure; /* failureMessage, or NULL */
	const char *text;    /* "providing an API with ..." */
} r_pred;

enum { C_MANDATORY, C_PROHIBITED, C_DEPENDENCY, C_CONFLICT, C_ATMOST };

typedef struct r_con {
	int kind;
	int owner; /* variable, -1 for AtMost */
	int *lits; /* variables */
	size_t n;
	const char *msg;
	unsigned sel;	 /* solver selector variable */
	int next;	 /* next constraint of the same owner */
	const char *why; /* reason text for a step chosen through this Dependency */
} r_con;

enum { V_REQ, V_ENTRY };

typedef struct r_var {
	int kind;
	int idx;	 /* request or entry index */
	int first, last; /* constraint list */
	int reason;	 /* Dependency through which it was selected, -1 */
	bool selected;
	bool expanded;
} r_var;

typedef struct r_ctx {
	const fbc_resolve_request *req;
	fbc_resolve_limits lim;
	fbc_arena *arena; /* the result's arena */
	fbc_resolve_result *res;
	fbc_error *err;
	const char *input_error; /* set: the request fails (kind fail_kind, default "error") */
	const char *fail_kind;
	int *cat_rank;	 /* per catalog: rank by priority desc, name asc */
	fbc_vec entries; /* r_entry */
	r_ptrmap chains;
	r_ptrmap cel_props;    /* fbc_bundle -> json_t properties array for CEL */
	int *inst_entry;       /* per installed bundle: its entry */
	int *inst_req;	       /* per installed bundle: the request referencing it, or -1 */
	fbc_vec vars;	       /* r_var */
	fbc_vec cons;	       /* r_con */
	fbc_vec queue;	       /* int: variables to expand */
	fbc_strmap cand_cache; /* "own\x1ftext" -> r_cands */
	fbc_vec anchors;       /* int */
	const char **req_label;
	int *req_current; /* per request: installed index or -1 */
	SATSolver *sat;
	unsigned n_sat_vars;
	bool *model;
	size_t sat_calls;
	bool sat_gave_up; /* a call returned undecided (time limit) */
} r_ctx;

#define R_SAT_MAX_SECONDS 10.0

typedef struct r_cands {
	int *ents;
	size_t n;
} r_cands;

/* index.c */
typedef struct r_bundle_list {
	const fbc_bundle **items;
	size_t n, cap;
} r_bundle_list;
char *r_gvk_key(fbc_arena *a, const char *group, const char *version, const char *kind);
const r_bundle_list *r_index_gvk(const fbc_resolve_index *ix, const char *key);
const fbc_catalog *r_index_catalog(const fbc_resolve_index *ix);

/* resolve.c */
void *r_ptrmap_get(const r_ptrmap *m, const void *k);
int r_ptrmap_put(r_ptrmap *m, const void *k, void *v);
void r_ptrmap_dispose(r_ptrmap *m);
int r_input_error(r_ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int r_chain_get(r_ctx *c, int cat, const fbc_channel *ch, const r_chain **out);
int r_entry_offchain(r_ctx *c, int cat, const fbc_channel *ch, const fbc_bundle *b, int *out);
int r_var_for_entry(r_ctx *c, int ent, int *out);
int r_var_new(r_ctx *c, int kind, int idx, int *out);
int r_con_add(r_ctx *c, int kind, int owner, const int *lits, size_t n, const char *msg,
	      const char *why, int *out);
int r_classic_finish(r_ctx *c);
const char *r_entry_id(r_ctx *c, const r_entry *e);
bool r_bundle_has_property(const fbc_bundle *b, const char *type);
int r_parse_installed_version(r_ctx *c, int inst, fbc_semver *ver, const char **release,
			      bool strict);
const char *r_join_ids(r_ctx *c, const int *vars, size_t n, const char *last_sep);

void r_sort_entries(r_ctx *c, int *ents, size_t n, int own);

/* classic.c */
int r_prepare_requests(r_ctx *c);
int r_add_installed_vars(r_ctx *c);
int r_add_anchors(r_ctx *c, const int *req_vars);
int r_request_var(r_ctx *c, size_t i, const int *ents, size_t n, bool allow_stay,
		  const char *empty_msg, int *out);

/* predicate.c */
int r_pred_from_property(r_ctx *c, const fbc_property *p, const char *bundle_id, r_pred **out);
int r_pred_test(r_ctx *c, const r_pred *p, const r_entry *e, bool *out);
bool r_property_is_dependency(const char *type);

/* classic.c */
int r_classic_requests(r_ctx *c);

/* v1.c */
int r_v1_resolve(r_ctx *c, bool with_deps);

/* helpers */
#define R_ENT(c, i) FBC_VEC_AT(&(c)->entries, r_entry, (i))
#define R_VAR(c, i) FBC_VEC_AT(&(c)->vars, r_var, (i))
#define R_CON(c, i) FBC_VEC_AT(&(c)->cons, r_con, (i))

#endif
