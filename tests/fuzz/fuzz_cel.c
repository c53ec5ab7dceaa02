/*
 * libFuzzer target for service/cel: compile (lex, parse, macros, check) and
 * evaluate. The input is "EXPR\0PROPERTIES": PROPERTIES (JSON) is bound to
 * `properties` for the OLM entry point, and also, when it is an object, as
 * proto3-JSON bindings of the general entry point with a few declarations.
 */
#include "tests/fuzz/fuzz.h"

#include "service/cel/cel.h"

#include <stdlib.h>
#include <string.h>

static const fbc_cel_decl decls[] = {
	{"x", "int"},	    {"s", "string"},
	{"l", "list(int)"}, {"m", "map(string, dyn)"},
	{"d", "dyn"},	    {"properties", "list(map(string, dyn))"},
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *head, *rest;
	size_t hn, rn;
	fbc_cel_program *p = NULL;
	fbc_error err;
	json_t *props = NULL, *out = NULL;
	json_error_t jerr;
	bool result;
	char *expr;

	rest = fuzz_split(data, size, '\0', &head, &hn, &rn);
	/* exact size, not NUL-terminated: the compiler is given a length */
	expr = malloc(hn ? hn : 1);
	if (!expr)
		return 0;
	memcpy(expr, head, hn);
	if (rest)
		props = json_loadb((const char *)rest, rn, JSON_DECODE_ANY, &jerr);
	if (!props)
		props = json_pack("[{s:s,s:{s:s,s:s}}]", "type", "olm.package", "value",
				  "packageName", "etcd", "version", "1.2.3");

	fbc_error_init(&err);
	if (fbc_cel_compile(&p, expr, hn, &err) == 0) {
		if (!p || strcmp(fbc_cel_program_type(p), "bool") != 0)
			abort();
		fbc_error_init(&err);
		(void)fbc_cel_eval_bool(&result, p, props, &err);
		fbc_cel_program_free(p);
		p = NULL;
	} else if (p || err.code == 0) {
		abort();
	}

	for (unsigned flags = 0; flags <= FBC_CEL_NO_CHECK; flags += FBC_CEL_NO_CHECK) {
		fbc_error_init(&err);
		if (fbc_cel_compile_ex(&p, expr, hn, decls, sizeof(decls) / sizeof(decls[0]), flags,
				       &err) != 0)
			continue;
		if (json_is_object(props)) {
			fbc_error_init(&err);
			if (fbc_cel_eval_value(&out, p, props, &err) == 0 && !out)
				abort();
			json_decref(out);
			out = NULL;
		}
		fbc_cel_program_free(p);
		p = NULL;
	}
	json_decref(props);
	free(expr);
	return 0;
}
