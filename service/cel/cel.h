/*
 * fbc_cel: a Common Expression Language (CEL) subset for OLM `olm.constraint`
 * `cel` rules (spec resolver.md §5).
 *
 * A rule is compiled once (lexed, parsed into an AST, macros expanded and
 * type-checked) into an immutable fbc_cel_program, then evaluated against
 * many candidate bundles. The supported subset: int/uint/double/string/
 * bytes/bool/null literals, lists, maps, member access, indexing, the macros
 * has/all/exists/exists_one/map/filter, arithmetic, comparisons (with
 * cel-go's heterogeneous numeric equality and ordering), `in`, the
 * commutative && and ||, ?:, size, contains/startsWith/endsWith/matches,
 * the conversions int/uint/double/string/bytes/bool/dyn/type, and OLM's
 * `semver_compare(a, b)` (blang ParseTolerant on both stringified
 * arguments, -1/0/1). Not supported: protobuf messages, timestamps and
 * durations, optionals, extension libraries.
 *
 * Bounds: expression length (FBC_CEL_MAX_EXPR), AST nesting depth, the
 * number of evaluation steps (comprehension iterations count) and the memory
 * an evaluation may allocate, so hostile rules fail with an error.
 *
 * Ownership and thread-safety: a program owns all its memory and is never
 * modified after compilation, so one program may be evaluated from many
 * threads at once. Each evaluation allocates its own scratch memory. Values
 * passed in (JSON) are borrowed for the duration of the call.
 */
#ifndef FBC_CEL_H
#define FBC_CEL_H

#include "service/base/error.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#define FBC_CEL_MAX_EXPR  65536	  /* bytes of expression text */
#define FBC_CEL_MAX_DEPTH 200	  /* AST nesting */
#define FBC_CEL_MAX_STEPS 1000000 /* evaluation steps per evaluation */
#define FBC_CEL_MAX_MEM	  (64u << 20)

typedef struct fbc_cel_program fbc_cel_program;

/* Compile an OLM constraint rule: one variable `properties` of type
 * list(map(string, dyn)); the rule must type-check to bool ("cel expressions
 * must have type Bool"). Errors (FBC_EPARSE for syntax, FBC_EINVAL for check
 * errors, FBC_ELIMIT for bounds) carry "line:column: message". */
int fbc_cel_compile(fbc_cel_program **out, const char *expr, size_t len, fbc_error *err);
void fbc_cel_program_free(fbc_cel_program *p);

/* Evaluate with `properties` bound to the JSON array given (borrowed; JSON
 * numbers become doubles as in CEL's JSON mapping). *result is set to the
 * bool result; a non-bool result or an evaluation error returns FBC_EINVAL
 * with err describing it (FBC_ELIMIT when a bound was hit). */
int fbc_cel_eval_bool(bool *result, const fbc_cel_program *p, const json_t *properties,
		      fbc_error *err);

/* General entry points (used by the conformance runner). */

/* A declared variable: name and CEL type text, e.g. "int", "dyn",
 * "list(map(string, dyn))", "map(string, int)". */
typedef struct fbc_cel_decl {
	const char *name;
	const char *type;
} fbc_cel_decl;

enum {
	FBC_CEL_NO_CHECK = 1 << 0,     /* skip type checking; unknown names fail at run time */
	FBC_CEL_REQUIRE_BOOL = 1 << 1, /* the result type must be bool */
};

int fbc_cel_compile_ex(fbc_cel_program **out, const char *expr, size_t len,
		       const fbc_cel_decl *decls, size_t ndecls, unsigned flags, fbc_error *err);

/* The checked result type as CEL type text ("bool", "dyn", "list(int)"...);
 * "dyn" when checking was disabled. Borrowed from the program. */
const char *fbc_cel_program_type(const fbc_cel_program *p);

/*
 * Evaluate with variables given as a JSON object mapping each name to a
 * value in the cel.expr.Value proto3-JSON form ({"int64Value": "1"},
 * {"uint64Value": "2"}, {"doubleValue": 1.5}, {"stringValue": "s"},
 * {"bytesValue": "<base64>"}, {"boolValue": true}, {"nullValue": null},
 * {"listValue": {"values": [...]}}, {"mapValue": {"entries": [{"key": ...,
 * "value": ...}]}}, {"typeValue": "int"}). The result is returned in the same
 * form (*out is a new reference). Evaluation errors return FBC_EINVAL.
 */
int fbc_cel_eval_value(json_t **out, const fbc_cel_program *p, const json_t *bindings,
		       fbc_error *err);

#endif
