/*
 * Internals shared by the files of service/cel (not part of the contract).
 *
 * The AST and every checked type live in the program's arena and are
 * immutable after fbc_cel_compile*. Evaluation values live in a per-call
 * arena; strings may borrow from the AST or from the caller's JSON.
 */
#ifndef FBC_CEL_INT_H
#define FBC_CEL_INT_H

#include "service/base/arena.h"
#include "service/base/buf.h"
#include "service/base/vec.h"
#include "service/base/error.h"
#include "service/cel/cel.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- values ---- */

typedef enum cel_kind {
	CEL_NULL,
	CEL_BOOL,
	CEL_INT,
	CEL_UINT,
	CEL_DOUBLE,
	CEL_STRING,
	CEL_BYTES,
	CEL_LIST,
	CEL_MAP,
	CEL_TYPE,
	CEL_ERROR,
} cel_kind;

struct cel_list;
struct cel_map;

typedef struct cel_val {
	cel_kind k;
	union {
		bool b;
		int64_t i;
		uint64_t u;
		double d;
		struct {
			const char *p;
			size_t n;
		} s; /* string (UTF-8) or bytes */
		const struct cel_list *l;
		const struct cel_map *m;
		const char *type; /* type name: "int", "list", ... */
		const char *err;  /* error message */
	} v;
} cel_val;

struct cel_list {
	size_t n;
	const cel_val *items;
};

struct cel_map {
	size_t n;
	const cel_val *keys;
	const cel_val *vals;
};

/* ---- types (checker) ---- */

typedef enum cel_tkind {
	T_DYN,
	T_BOOL,
	T_INT,
	T_UINT,
	T_DOUBLE,
	T_STRING,
	T_BYTES,
	T_NULL,
	T_LIST,
	T_MAP,
	T_TYPE,
} cel_tkind;

typedef struct cel_type {
	cel_tkind k;
	const struct cel_type *p1; /* list elem / map key */
	const struct cel_type *p2; /* map value */
} cel_type;

/* ---- AST ---- */

typedef enum cel_nkind {
	N_LIT,
	N_IDENT,
	N_SELECT, /* target.name */
	N_HAS,	  /* has(target.name) */
	N_INDEX,  /* args[0][args[1]] */
	N_CALL,	  /* name(args...), or target.name(args...) when target != NULL */
	N_LIST,
	N_MAP, /* args = k0, v0, k1, v1, ... */
	N_COND,
	N_AND,
	N_OR,
	N_NOT,
	N_NEG,
	N_BINOP,
	N_COMPR, /* target = range; args[0] = predicate or transform; see cel_compr */
} cel_nkind;

typedef enum cel_op {
	OP_ADD,
	OP_SUB,
	OP_MUL,
	OP_DIV,
	OP_MOD,
	OP_EQ,
	OP_NE,
	OP_LT,
	OP_LE,
	OP_GT,
	OP_GE,
	OP_IN,
} cel_op;

typedef enum cel_compr {
	C_ALL,
	C_EXISTS,
	C_EXISTS_ONE,
	C_MAP,	  /* args[0] transform */
	C_MAP3,	  /* args[0] filter, args[1] transform */
	C_FILTER, /* args[0] filter */
} cel_compr;

typedef enum cel_ref {
	REF_NONE,  /* unresolved: run-time lookup (unchecked programs) */
	REF_LOCAL, /* comprehension variable, by name */
	REF_VAR,   /* declared variable, index in program decls */
	REF_TYPE,  /* a type name such as int */
} cel_ref;

typedef struct cel_node {
	cel_nkind kind;
	int op;	    /* cel_op for N_BINOP, cel_compr for N_COMPR, cel_ref for N_IDENT */
	size_t pos; /* byte offset in the expression */
	cel_val lit;
	const char *name; /* ident, select/has field, function, comprehension var */
	size_t var_index; /* REF_VAR */
	struct cel_node *target;
	struct cel_node **args;
	size_t nargs;
	const cel_type *type; /* set by the checker */
} cel_node;

struct fbc_cel_program {
	fbc_arena *arena;
	cel_node *root;
	const char *expr; /* owned copy (for error positions) */
	size_t expr_len;
	size_t nvars;
	const char **var_names;
	const cel_type **var_types;
	const char *type_text;
	unsigned flags;
};

/* cel_parse.c */
int cel_parse(cel_node **out, fbc_arena *a, const char *expr, size_t len, fbc_error *err);
/* Format "line:col: " for a byte offset. */
void cel_position(const char *expr, size_t len, size_t pos, size_t *line, size_t *col);

/* cel_check.c */
extern const cel_type cel_t_dyn, cel_t_bool, cel_t_int, cel_t_uint, cel_t_double, cel_t_string,
	cel_t_bytes, cel_t_null, cel_t_type;
int cel_check(fbc_cel_program *p, fbc_error *err);
/* Parse type text ("list(map(string, dyn))"); NULL on a syntax error. */
const cel_type *cel_type_parse(fbc_arena *a, const char *s);
char *cel_type_text(fbc_arena *a, const cel_type *t);

/* cel_eval.c */
typedef struct cel_ctx {
	fbc_arena *a;
	const fbc_cel_program *prog;
	const cel_val *vars; /* one per program decl; CEL_ERROR "unbound" if absent */
	uint64_t steps;
	bool oom;
	bool limit;
} cel_ctx;
cel_val cel_eval(cel_ctx *c, const cel_node *n);

/* cel_value.c */
cel_val cel_error(cel_ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* JSON (plain, as in bundle properties) to a value; strings are borrowed. */
cel_val cel_from_json(cel_ctx *c, const json_t *j, int depth);
/* cel.expr.Value proto-JSON to a value and back. */
cel_val cel_from_proto_json(cel_ctx *c, const json_t *j, int depth);
json_t *cel_to_proto_json(const cel_val *v);
const char *cel_kind_name(cel_kind k);
/* Heterogeneous equality: 1 true, 0 false; errors never reach here. */
bool cel_equal(const cel_val *a, const cel_val *b);
/* Ordering for numbers/strings/bytes/bool: sets *cmp and returns true when
 * the pair is comparable; NaN compares as unordered (returns true, *cmp = 2). */
bool cel_compare(const cel_val *a, const cel_val *b, int *cmp);
/* Go's %g (shortest round-trip) formatting of a double. */
size_t cel_format_double(double d, char *buf, size_t size);
bool cel_utf8_valid(const char *s, size_t n);
size_t cel_utf8_count(const char *s, size_t n);

#endif
