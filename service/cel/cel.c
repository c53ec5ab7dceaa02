/*
 * Public entry points of service/cel: compile (parse + check) and evaluate.
 */
#include "service/cel/cel_int.h"

#include <stdlib.h>
#include <string.h>

void fbc_cel_program_free(fbc_cel_program *p)
{
	if (!p)
		return;
	fbc_arena_free(p->arena);
	free(p);
}

int fbc_cel_compile_ex(fbc_cel_program **out, const char *expr, size_t len,
		       const fbc_cel_decl *decls, size_t ndecls, unsigned flags, fbc_error *err)
{
	fbc_cel_program *p = NULL;
	char *copy;
	size_t i;
	int rc;

	if (!expr && len)
		return fbc_error_set(err, FBC_EINVAL, "cel", "no expression");
	if (len > FBC_CEL_MAX_EXPR)
		return fbc_error_set(err, FBC_ELIMIT, "cel",
				     "expression is %zu bytes, more than the maximum of %d", len,
				     FBC_CEL_MAX_EXPR);
	p = calloc(1, sizeof(*p));
	if (!p || fbc_arena_create(&p->arena, 16 * 1024)) {
		rc = fbc_error_set(err, FBC_ENOMEM, "cel", "out of memory");
		goto done;
	}
	p->flags = flags;
	copy = fbc_arena_strndup(p->arena, len ? expr : "", len);
	p->var_names = ndecls ? fbc_arena_calloc(p->arena, ndecls, sizeof(*p->var_names)) : NULL;
	p->var_types = ndecls ? fbc_arena_calloc(p->arena, ndecls, sizeof(*p->var_types)) : NULL;
	if (!copy || (ndecls && (!p->var_names || !p->var_types))) {
		rc = fbc_error_set(err, FBC_ENOMEM, "cel", "out of memory");
		goto done;
	}
	p->expr = copy;
	p->expr_len = len;
	for (i = 0; i < ndecls; i++) {
		p->var_names[i] = fbc_arena_strdup(p->arena, decls[i].name);
		p->var_types[i] = cel_type_parse(p->arena, decls[i].type ? decls[i].type : "dyn");
		if (!p->var_names[i] || !p->var_types[i]) {
			rc = fbc_error_set(err, FBC_EINVAL, "cel", "variable '%s': bad type '%s'",
					   decls[i].name, decls[i].type ? decls[i].type : "");
			goto done;
		}
	}
	p->nvars = ndecls;
	rc = cel_parse(&p->root, p->arena, copy, len, err);
	if (rc)
		goto done;
	if (flags & FBC_CEL_NO_CHECK) {
		p->type_text = "dyn";
	} else {
		rc = cel_check(p, err);
		if (rc)
			goto done;
	}
	*out = p;
	p = NULL;
done:
	fbc_cel_program_free(p);
	return rc;
}

int fbc_cel_compile(fbc_cel_program **out, const char *expr, size_t len, fbc_error *err)
{
	static const fbc_cel_decl decl = {"properties", "list(map(string, dyn))"};

	return fbc_cel_compile_ex(out, expr, len, &decl, 1, FBC_CEL_REQUIRE_BOOL, err);
}

const char *fbc_cel_program_type(const fbc_cel_program *p)
{
	return p->type_text;
}

/* Map the outcome of an evaluation to a return code. */
static int finish(const cel_ctx *c, const cel_val *v, fbc_error *err)
{
	if (c->oom)
		return fbc_error_set(err, FBC_ENOMEM, "cel", "out of memory during evaluation");
	if (c->limit)
		return fbc_error_set(err, FBC_ELIMIT, "cel", "evaluation aborted: %s",
				     v->k == CEL_ERROR ? v->v.err : "a bound was exceeded");
	if (v->k == CEL_ERROR)
		return fbc_error_set(err, FBC_EINVAL, "cel", "evaluation error: %s", v->v.err);
	return 0;
}

int fbc_cel_eval_bool(bool *result, const fbc_cel_program *p, const json_t *properties,
		      fbc_error *err)
{
	cel_ctx c = {.prog = p};
	cel_val vars[1], r;
	size_t i;
	int rc;

	if (fbc_arena_create(&c.a, 16 * 1024))
		return fbc_error_set(err, FBC_ENOMEM, "cel", "out of memory");
	for (i = 0; i < p->nvars && i < 1; i++) {
		if (!json_is_array(properties)) {
			rc = fbc_error_set(err, FBC_EINVAL, "cel",
					   "properties must be a JSON array");
			goto done;
		}
		vars[i] = cel_from_json(&c, properties, 0);
	}
	c.vars = vars;
	if (p->nvars > 1) {
		rc = fbc_error_set(err, FBC_EINVAL, "cel", "program declares other variables");
		goto done;
	}
	if (p->nvars == 1 && vars[0].k == CEL_ERROR)
		r = vars[0];
	else
		r = cel_eval(&c, p->root);
	rc = finish(&c, &r, err);
	if (rc)
		goto done;
	if (r.k != CEL_BOOL) {
		rc = fbc_error_set(err, FBC_EINVAL, "cel",
				   "cel expression evaluated to a %s, not a bool",
				   cel_kind_name(r.k));
		goto done;
	}
	*result = r.v.b;
done:
	fbc_arena_free(c.a);
	return rc;
}

int fbc_cel_eval_value(json_t **out, const fbc_cel_program *p, const json_t *bindings,
		       fbc_error *err)
{
	cel_ctx c = {.prog = p};
	cel_val *vars = NULL, r;
	json_t *res;
	size_t i;
	int rc;

	if (fbc_arena_create(&c.a, 16 * 1024))
		return fbc_error_set(err, FBC_ENOMEM, "cel", "out of memory");
	if (p->nvars) {
		vars = fbc_arena_calloc(c.a, p->nvars, sizeof(*vars));
		if (!vars) {
			rc = fbc_error_set(err, FBC_ENOMEM, "cel", "out of memory");
			goto done;
		}
	}
	for (i = 0; i < p->nvars; i++) {
		const json_t *b = bindings ? json_object_get(bindings, p->var_names[i]) : NULL;

		if (!b) {
			vars[i] = cel_error(&c, "no value bound for '%s'", p->var_names[i]);
			continue;
		}
		vars[i] = cel_from_proto_json(&c, b, 0);
		if (vars[i].k == CEL_ERROR) {
			rc = fbc_error_set(err, FBC_EINVAL, p->var_names[i], "bad binding: %s",
					   vars[i].v.err);
			goto done;
		}
	}
	c.vars = vars;
	r = cel_eval(&c, p->root);
	rc = finish(&c, &r, err);
	if (rc)
		goto done;
	res = cel_to_proto_json(&r);
	if (!res) {
		rc = fbc_error_set(err, FBC_ENOMEM, "cel", "out of memory");
		goto done;
	}
	*out = res;
done:
	fbc_arena_free(c.a);
	return rc;
}
