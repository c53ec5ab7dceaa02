/*
 * Unit tests for service/cel: operators, macros, error semantics, compile
 * errors with positions, bounds, semver_compare and the OLM rule shapes of
 * resolver.md §5.
 */
#include "service/cel/cel.h"

#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

/* ---- helpers ---- */

static const char *props_json =
	"[{\"type\": \"olm.package\", \"value\": {\"packageName\": \"etcd\", \"version\": "
	"\"0.9.4\"}},"
	" {\"type\": \"olm.gvk\", \"value\": {\"group\": \"etcd.database.coreos.com\", "
	"\"kind\": \"EtcdCluster\", \"version\": \"v1beta2\"}},"
	" {\"type\": \"certified\", \"value\": \"true\"},"
	" {\"type\": \"olm.maxOpenShiftVersion\", \"value\": 4.9},"
	" {\"type\": \"replicas\", \"value\": 3},"
	" {\"type\": \"flag\", \"value\": true},"
	" {\"type\": \"labels\", \"value\": [\"a\", \"b\"]}]";

/* Compile an OLM rule and evaluate it on props_json; returns the rc. */
static int olm_eval(const char *rule, bool *out, fbc_error *err)
{
	fbc_cel_program *p = NULL;
	json_t *props = json_loads(props_json, 0, NULL);
	int rc;

	assert_non_null(props);
	fbc_error_init(err);
	rc = fbc_cel_compile(&p, rule, strlen(rule), err);
	if (rc == 0)
		rc = fbc_cel_eval_bool(out, p, props, err);
	fbc_cel_program_free(p);
	json_decref(props);
	return rc;
}

static bool olm_true(const char *rule)
{
	fbc_error err;
	bool r = false;
	int rc = olm_eval(rule, &r, &err);

	if (rc)
		fail_msg("%s: %s", rule, err.message);
	return r;
}

/* Evaluate a variable-free expression; returns the result value JSON or
 * NULL (err filled) on a compile or evaluation error. */
static json_t *ev_flags(const char *expr, unsigned flags, fbc_error *err)
{
	fbc_cel_program *p = NULL;
	json_t *out = NULL;

	fbc_error_init(err);
	if (fbc_cel_compile_ex(&p, expr, strlen(expr), NULL, 0, flags, err) == 0)
		(void)fbc_cel_eval_value(&out, p, NULL, err);
	fbc_cel_program_free(p);
	return out;
}

static json_t *ev(const char *expr, fbc_error *err)
{
	return ev_flags(expr, 0, err);
}

static void expect_i64(const char *expr, const char *want)
{
	fbc_error err;
	json_t *v = ev(expr, &err);
	const char *got;

	if (!v)
		fail_msg("%s: %s", expr, err.message);
	got = json_string_value(json_object_get(v, "int64Value"));
	if (!got || strcmp(got, want) != 0) {
		char *s = json_dumps(v, JSON_COMPACT);

		json_decref(v);
		fail_msg("%s: expected int %s, got %s", expr, want, s);
	}
	json_decref(v);
}

static void expect_b(const char *expr, bool want)
{
	fbc_error err;
	json_t *v = ev(expr, &err);
	json_t *b;

	if (!v)
		fail_msg("%s: %s", expr, err.message);
	b = json_object_get(v, "boolValue");
	if (!b || json_is_true(b) != want) {
		char *s = json_dumps(v, JSON_COMPACT);

		json_decref(v);
		fail_msg("%s: expected %s, got %s", expr, want ? "true" : "false", s);
	}
	json_decref(v);
}

static void expect_str(const char *expr, const char *want)
{
	fbc_error err;
	json_t *v = ev(expr, &err);
	const char *got;

	if (!v)
		fail_msg("%s: %s", expr, err.message);
	got = json_string_value(json_object_get(v, "stringValue"));
	if (!got || strcmp(got, want) != 0) {
		char *s = json_dumps(v, JSON_COMPACT);

		json_decref(v);
		fail_msg("%s: expected '%s', got %s", expr, want, s);
	}
	json_decref(v);
}

/* Expect an error whose message contains `needle`; returns its code. */
static int expect_err(const char *expr, const char *needle)
{
	fbc_error err;
	json_t *v = ev(expr, &err);

	if (v) {
		char *s = json_dumps(v, JSON_COMPACT);

		json_decref(v);
		fail_msg("%s: expected an error, got %s", expr, s);
	}
	if (needle && !strstr(err.message, needle))
		fail_msg("%s: error '%s' does not mention '%s'", expr, err.message, needle);
	return err.code;
}

/* ---- OLM rules ---- */

static void fbc_cel_eval_bool__olm_certified_example(void **state)
{
	(void)state;
	assert_true(
		olm_true("properties.exists(p, p.type == \"certified\" && p.value == \"true\")"));
	assert_false(
		olm_true("properties.exists(p, p.type == \"certified\" && p.value == \"false\")"));
	assert_false(olm_true("properties.exists(p, p.type == \"olm.deprecated\")"));
}

static void fbc_cel_eval_bool__olm_gvk_map_equality(void **state)
{
	(void)state;
	assert_true(olm_true("properties.exists(p, p.type == 'olm.gvk' && p.value == {'group': "
			     "'etcd.database.coreos.com', 'version': 'v1beta2', 'kind': "
			     "'EtcdCluster'})"));
	assert_false(olm_true("properties.exists(p, p.type == 'olm.gvk' && p.value == {'group': "
			      "'etcd.database.coreos.com', 'version': 'v1', 'kind': "
			      "'EtcdCluster'})"));
	assert_true(olm_true("properties.exists(p, p.type == 'olm.gvk' && p.value.kind == "
			     "'EtcdCluster')"));
}

static void fbc_cel_eval_bool__semver_compare(void **state)
{
	fbc_error err;
	bool r;

	(void)state;
	assert_true(olm_true("properties.exists(p, p.type == 'olm.package' && "
			     "semver_compare(p.value.version, '0.9.0') >= 0)"));
	assert_false(olm_true("properties.exists(p, p.type == 'olm.package' && "
			      "semver_compare(p.value.version, '1.0.0') >= 0)"));
	assert_true(olm_true("semver_compare('1.2.3', '1.2.3') == 0"));
	assert_true(olm_true("semver_compare('1.2.3', '1.10.0') == -1"));
	assert_true(olm_true("semver_compare('2.0.0', '2.0.0-rc.1') == 1"));
	/* ParseTolerant: leading v and short forms */
	assert_true(olm_true("semver_compare('v1.2', '1.2.0') == 0"));
	/* doubles are stringified as Go's fmt does: 4.9 -> "4.9" -> 4.9.0 */
	assert_true(olm_true("properties.exists(p, p.type == 'olm.maxOpenShiftVersion' && "
			     "semver_compare(p.value, '4.10') < 0)"));
	/* invalid versions are evaluation errors */
	assert_int_equal(olm_eval("semver_compare('not-a-version', '1.0.0') == 0", &r, &err),
			 FBC_EINVAL);
	assert_non_null(strstr(err.message, "not-a-version"));
	/* ... which exists() absorbs when another element decides */
	assert_true(olm_true("[1, 2].exists(x, x == 2 || semver_compare('bad', '1.0.0') == 0)"));
}

static void fbc_cel_eval_bool__json_values(void **state)
{
	(void)state;
	/* JSON numbers are doubles; int literals compare with them */
	assert_true(olm_true("properties.exists(p, p.type == 'replicas' && p.value == 3)"));
	assert_true(olm_true("properties.exists(p, p.type == 'replicas' && p.value > 2.5)"));
	assert_true(olm_true("properties.exists(p, p.type == 'flag' && p.value == true)"));
	assert_true(olm_true("properties.exists(p, p.type == 'labels' && 'b' in p.value)"));
	assert_true(olm_true("properties.exists(p, p.type == 'labels' && size(p.value) == 2)"));
	assert_true(olm_true("properties.all(p, has(p.type) && has(p.value))"));
	assert_true(olm_true("properties.exists_one(p, p.type == 'olm.gvk')"));
	assert_true(olm_true("properties.filter(p, p.type.startsWith('olm.')).size() == 3"));
	assert_true(olm_true("'olm.gvk' in properties.map(p, p.type)"));
	assert_true(olm_true("properties[0].value.packageName == 'etcd'"));
}

static void fbc_cel_eval_bool__errors(void **state)
{
	fbc_error err;
	bool r;

	(void)state;
	/* no such key */
	assert_int_equal(olm_eval("properties[0].value.missing == 'x'", &r, &err), FBC_EINVAL);
	assert_non_null(strstr(err.message, "no such key: missing"));
	/* index out of range */
	assert_int_equal(olm_eval("properties[42].type == 'x'", &r, &err), FBC_EINVAL);
	assert_non_null(strstr(err.message, "index out of range"));
	/* an error in one element is absorbed by exists when another matches */
	assert_true(olm_true("properties.exists(p, p.value.version == '0.9.4')"));
	/* ...but not when nothing matches */
	assert_int_equal(olm_eval("properties.exists(p, p.value.version == '9')", &r, &err),
			 FBC_EINVAL);
	/* properties must be an array */
	{
		fbc_cel_program *p = NULL;
		json_t *obj = json_object();

		assert_int_equal(fbc_cel_compile(&p, "true", 4, &err), 0);
		assert_int_equal(fbc_cel_eval_bool(&r, p, obj, &err), FBC_EINVAL);
		json_decref(obj);
		fbc_cel_program_free(p);
	}
}

static void fbc_cel_eval_bool__non_bool_result(void **state)
{
	fbc_cel_program *p = NULL;
	json_t *props = json_array();
	fbc_error err;
	bool r = false;

	(void)state;
	/* unchecked programs may produce any type; eval_bool rejects it */
	fbc_error_init(&err);
	assert_int_equal(fbc_cel_compile_ex(&p, "1 + 1", 5, NULL, 0, FBC_CEL_NO_CHECK, &err), 0);
	assert_int_equal(fbc_cel_eval_bool(&r, p, props, &err), FBC_EINVAL);
	assert_non_null(strstr(err.message, "not a bool"));
	fbc_cel_program_free(p);
	json_decref(props);
}

/* ---- compile errors ---- */

static void fbc_cel_compile__syntax_error_has_position(void **state)
{
	fbc_cel_program *p = NULL;
	fbc_error err;

	(void)state;
	fbc_error_init(&err);
	assert_int_equal(fbc_cel_compile(&p, "true && ", 8, &err), FBC_EPARSE);
	assert_null(p);
	assert_non_null(strstr(err.message, "1:9"));
	assert_int_equal(fbc_cel_compile(&p, "properties.exists(p,\n  p.type = 'x')", 35, &err),
			 FBC_EPARSE);
	assert_non_null(strstr(err.message, "2:10"));
	assert_int_equal(fbc_cel_compile(&p, "'unterminated", 13, &err), FBC_EPARSE);
	assert_non_null(strstr(err.message, "1:1"));
	assert_int_equal(fbc_cel_compile(&p, "1 # 2", 5, &err), FBC_EPARSE);
	assert_non_null(strstr(err.message, "1:3"));
	assert_int_equal(fbc_cel_compile(&p, "[1, 2", 5, &err), FBC_EPARSE);
	assert_int_equal(fbc_cel_compile(&p, "'\\q'", 4, &err), FBC_EPARSE);
	assert_int_equal(fbc_cel_compile(&p, "99999999999999999999 == 1", 25, &err), FBC_EPARSE);
	assert_int_equal(fbc_cel_compile(&p, "if == 1", 7, &err), FBC_EPARSE);
	assert_int_equal(fbc_cel_compile(&p, "[1].exists(1, true)", 19, &err), FBC_EPARSE);
	assert_int_equal(fbc_cel_compile(&p, "has(properties)", 15, &err), FBC_EPARSE);
	assert_int_equal(fbc_cel_compile(&p, "", 0, &err), FBC_EPARSE);
	assert_null(p);
}

static void fbc_cel_compile__check_errors(void **state)
{
	fbc_cel_program *p = NULL;
	fbc_error err;

	(void)state;
	fbc_error_init(&err);
	/* unknown identifier, with its column */
	assert_int_equal(fbc_cel_compile(&p, "props.exists(p, true)", 21, &err), FBC_EINVAL);
	assert_non_null(strstr(err.message, "undeclared reference to 'props'"));
	assert_non_null(strstr(err.message, "1:1"));
	/* unknown function */
	assert_int_equal(fbc_cel_compile(&p, "semverCompare('1', '2') == 0", 28, &err), FBC_EINVAL);
	assert_non_null(strstr(err.message, "semverCompare"));
	/* wrong arity */
	assert_int_equal(fbc_cel_compile(&p, "semver_compare('1') == 0", 24, &err), FBC_EINVAL);
	assert_non_null(strstr(err.message, "no matching overload"));
	assert_int_equal(fbc_cel_compile(&p, "size(properties, 1) == 0", 24, &err), FBC_EINVAL);
	/* operand types no overload accepts */
	assert_int_equal(fbc_cel_compile(&p, "1 + 'a' == 2", 12, &err), FBC_EINVAL);
	assert_int_equal(fbc_cel_compile(&p, "1 == 'a'", 8, &err), FBC_EINVAL);
	assert_int_equal(fbc_cel_compile(&p, "!1", 2, &err), FBC_EINVAL);
	assert_int_equal(fbc_cel_compile(&p, "(1).exists(x, true)", 19, &err), FBC_EINVAL);
	/* the rule must be a bool */
	assert_int_equal(fbc_cel_compile(&p, "properties.size()", 17, &err), FBC_EINVAL);
	assert_non_null(strstr(err.message, "must have type Bool"));
	assert_int_equal(fbc_cel_compile(&p, "properties[0].value", 19, &err), FBC_EINVAL);
	assert_non_null(strstr(err.message, "must have type Bool"));
	assert_null(p);
	/* a correct rule compiles and reports its type */
	assert_int_equal(fbc_cel_compile(&p, "size(properties) > 0", 20, &err), 0);
	assert_string_equal(fbc_cel_program_type(p), "bool");
	fbc_cel_program_free(p);
}

static void fbc_cel_compile__bounds(void **state)
{
	fbc_cel_program *p = NULL;
	fbc_error err;
	size_t n = FBC_CEL_MAX_EXPR + 1, i;
	char *big = malloc(n + 1);
	char *deep = malloc(4001);

	(void)state;
	assert_non_null(big);
	assert_non_null(deep);
	memset(big, ' ', n);
	big[0] = '1';
	big[n] = '\0';
	fbc_error_init(&err);
	assert_int_equal(fbc_cel_compile_ex(&p, big, n, NULL, 0, 0, &err), FBC_ELIMIT);
	/* deep nesting fails cleanly */
	for (i = 0; i < 2000; i++)
		deep[i] = '(';
	deep[2000] = '1';
	for (i = 0; i < 2000; i++)
		deep[2001 + i] = ')';
	assert_int_equal(fbc_cel_compile_ex(&p, deep, 4001, NULL, 0, 0, &err), FBC_ELIMIT);
	for (i = 0; i < 2000; i++)
		deep[i] = '!';
	assert_int_equal(fbc_cel_compile_ex(&p, deep, 2001, NULL, 0, FBC_CEL_NO_CHECK, &err),
			 FBC_ELIMIT);
	/* a long left-associative chain is deep too */
	for (i = 0; i + 1 < n; i += 2) {
		big[i] = '1';
		big[i + 1] = '+';
	}
	big[n - 1] = '1';
	assert_int_equal(fbc_cel_compile_ex(&p, big, n - 2, NULL, 0, 0, &err), FBC_ELIMIT);
	assert_null(p);
	free(big);
	free(deep);
}

static void fbc_cel_eval_value__step_limit(void **state)
{
	fbc_error err;
	char expr[4096];
	size_t off = 0;
	int i;
	json_t *v;

	(void)state;
	/* 200^3 iterations: more than FBC_CEL_MAX_STEPS */
	off += (size_t)snprintf(expr + off, sizeof(expr) - off, "[");
	for (i = 0; i < 200; i++)
		off += (size_t)snprintf(expr + off, sizeof(expr) - off, "%s%d", i ? "," : "", i);
	off += (size_t)snprintf(expr + off, sizeof(expr) - off, "]");
	{
		char full[16384];

		snprintf(full, sizeof(full), "%s.all(x, %s.all(y, %s.all(z, true)))", expr, expr,
			 expr);
		v = ev(full, &err);
		assert_null(v);
		assert_int_equal(err.code, FBC_ELIMIT);
		/* the limit is not absorbed by || */
		snprintf(full, sizeof(full), "true || %s.all(x, %s.all(y, %s.all(z, true)))", expr,
			 expr, expr);
		v = ev(full, &err);
		assert_non_null(v);
		json_decref(v);
		snprintf(full, sizeof(full), "%s.all(x, %s.all(y, %s.all(z, true))) || true", expr,
			 expr, expr);
		v = ev(full, &err);
		assert_null(v);
		assert_int_equal(err.code, FBC_ELIMIT);
	}
}

/* Every prefix and every single-byte corruption of some rules must compile
 * or fail cleanly, and evaluate or fail cleanly (no crash, no hang). */
static void fbc_cel_compile__truncated_and_corrupted_inputs(void **state)
{
	static const char *const rules[] = {
		"properties.exists(p, p.type == 'olm.gvk' && p.value == {'group': 'g', 'kind': "
		"'K', 'version': 'v1'})",
		"properties.all(p, !has(p.value.x) || semver_compare(p.value.x, \"1.0.0\") >= 0) "
		"? [1u, 2.5, b'\\x00', r\"raw\"].size() > 0 : false",
		"properties.map(q, q.type).filter(t, t.startsWith('olm.')).exists_one(t, t in "
		"['olm.package']) && -(1 % 2) < int('3') // comment",
	};
	static const char junk[] = "()[]{}.,'\"\\?:!-+*/%<>=&|`0aZ_ \n";
	json_t *props = json_loads(props_json, 0, NULL);
	size_t r, i, j;

	(void)state;
	assert_non_null(props);
	for (r = 0; r < sizeof(rules) / sizeof(rules[0]); r++) {
		size_t n = strlen(rules[r]);
		char *buf = malloc(n + 1);

		assert_non_null(buf);
		for (i = 0; i <= n; i++) {
			for (j = 0; j < sizeof(junk); j++) {
				fbc_cel_program *p = NULL;
				fbc_error err;
				bool out;
				size_t len = i;

				memcpy(buf, rules[r], n + 1);
				if (j < sizeof(junk) - 1 && i < n) {
					buf[i] = junk[j]; /* corrupt one byte */
					len = n;
				} else if (j != sizeof(junk) - 1) {
					continue;
				}
				if (fbc_cel_compile(&p, buf, len, &err) == 0) {
					(void)fbc_cel_eval_bool(&out, p, props, &err);
					fbc_cel_program_free(p);
				} else {
					assert_true(err.code < 0);
					assert_true(err.message[0] != '\0');
				}
			}
		}
		free(buf);
	}
	json_decref(props);
}

/* ---- operators ---- */

static void fbc_cel_eval_value__arithmetic(void **state)
{
	(void)state;
	expect_i64("1 + 2 * 3", "7");
	expect_i64("(1 + 2) * 3", "9");
	expect_i64("7 / 2", "3");
	expect_i64("-7 / 2", "-3");
	expect_i64("7 % 3", "1");
	expect_i64("-7 % 3", "-1");
	expect_i64("10 - 20", "-10");
	expect_i64("-(3)", "-3");
	expect_i64("-9223372036854775808", "-9223372036854775808");
	expect_str("'a' + 'b'", "ab");
	expect_b("[1] + [2, 3] == [1, 2, 3]", true);
	expect_b("2u + 3u == 5u", true);
	expect_b("1.5 + 1.5 == 3.0", true);
	expect_b("7.0 / 2.0 == 3.5", true);
	assert_int_equal(expect_err("9223372036854775807 + 1", "overflow"), FBC_EINVAL);
	expect_err("-9223372036854775808 - 1", "overflow");
	expect_err("4611686018427387904 * 2", "overflow");
	expect_err("-(-9223372036854775808)", "overflow");
	expect_err("0u - 1u", "overflow");
	expect_err("1 / 0", "division by zero");
	expect_err("1 % 0", "modulus by zero");
	expect_err("-9223372036854775808 / -1", "overflow");
}

static void fbc_cel_eval_value__comparisons(void **state)
{
	(void)state;
	expect_b("1 == 1", true);
	expect_b("1 != 2", true);
	expect_b("1 < 2 && 2 <= 2 && 3 > 2 && 3 >= 3", true);
	expect_b("'abc' < 'abd'", true);
	expect_b("b'a' < b'b'", true);
	expect_b("false < true", true);
	expect_b("dyn(1) == 1.0", true);
	expect_b("dyn(1u) == 1", true);
	expect_b("dyn(2) > 1.5", true);
	expect_b("dyn(-1) < 0u", true);
	expect_b("dyn(1) == 'a'", false);
	expect_b("null == null", true);
	expect_b("[1, 'a'] == [1, 'a']", true);
	expect_b("{'a': 1, 'b': 2} == {'b': 2, 'a': 1}", true);
	expect_b("0.0 / 0.0 == 0.0 / 0.0", false);
	expect_b("2 in [1, 2, 3]", true);
	expect_b("4 in [1, 2, 3]", false);
	expect_b("'k' in {'k': 1}", true);
	expect_b("dyn(2.0) in [1, 2]", true);
	expect_err("dyn('a') < 1", "no such overload");
}

static void fbc_cel_eval_value__logic(void **state)
{
	(void)state;
	expect_b("true && false", false);
	expect_b("true || false", true);
	expect_b("!true", false);
	expect_b("!!true", true);
	/* CEL's commutative error absorption */
	expect_b("false && 1 / 0 == 1", false);
	expect_b("1 / 0 == 1 && false", false);
	expect_b("1 / 0 == 1 || true", true);
	expect_b("true || 1 / 0 == 1", true);
	expect_err("1 / 0 == 1 && true", "division by zero");
	expect_err("false || 1 / 0 == 1", "division by zero");
	expect_str("true ? 'y' : 'n'", "y");
	expect_str("1 > 2 ? 'y' : 'n'", "n");
	/* only the chosen branch is evaluated */
	expect_i64("true ? 1 : 1 / 0", "1");
}

static void fbc_cel_eval_value__macros(void **state)
{
	fbc_error err;

	(void)state;
	expect_b("[1, 2, 3].all(x, x > 0)", true);
	expect_b("[1, 2, 3].all(x, x > 1)", false);
	expect_b("[].all(x, x > 1)", true);
	expect_b("[1, 2, 3].exists(x, x == 2)", true);
	expect_b("[].exists(x, true)", false);
	expect_b("[1, 2, 3].exists_one(x, x > 2)", true);
	expect_b("[1, 2, 3].exists_one(x, x > 1)", false);
	expect_b("[1, 2, 3].map(x, x * 2) == [2, 4, 6]", true);
	expect_b("[1, 2, 3].map(x, x > 1, x * 10) == [20, 30]", true);
	expect_b("[1, 2, 3].filter(x, x % 2 == 1) == [1, 3]", true);
	expect_b("{'a': 1, 'b': 2}.all(k, k in ['a', 'b'])", true);
	expect_b("{'a': 1}.exists(k, k == 'a')", true);
	expect_b("[[1], [2, 3]].exists(l, l.exists(x, x == 3))", true);
	/* errors absorbed by all/exists when another element decides */
	expect_b("[0, 1].all(x, 1 / x > 5)", false);
	expect_b("[0, 1].exists(x, 1 / x == 1)", true);
	expect_err("[0, 1].exists_one(x, 1 / x == 1)", "division by zero");
	expect_err("[0, 1].all(x, 1 / x == 1)", "division by zero");
	/* comprehension variables are scoped */
	assert_null(ev("[1].all(x, true) && x == 1", &err));
	assert_non_null(strstr(err.message, "undeclared reference to 'x'"));
	expect_b("has({'a': 1}.a)", true);
	expect_b("has({'a': 1}.b)", false);
	expect_b("{'a': {'b': 1}}.a.b == 1", true);
	expect_err("{'a': 1}.b == 1", "no such key: b");
	expect_err("{'a': 1, 'a': 2}.size() == 1", "repeated key");
}

static void fbc_cel_eval_value__strings_and_size(void **state)
{
	(void)state;
	expect_i64("size('héllo')", "5");
	expect_i64("'héllo'.size()", "5");
	expect_i64("size(b'ab')", "2");
	expect_i64("size([1, 2, 3])", "3");
	expect_i64("{'a': 1}.size()", "1");
	expect_b("'operator'.contains('era')", true);
	expect_b("'operator'.startsWith('op')", true);
	expect_b("'operator'.endsWith('tor')", true);
	expect_b("'operator'.endsWith('op')", false);
	expect_b("'v1.2.3'.matches('^v[0-9]+')", true);
	expect_str("'a\\tb\\u00e9\\x41\\101'", "a\tb\xc3\xa9"
					       "AA");
	expect_str("r'a\\tb'", "a\\tb");
	expect_str("'''multi\nline'''", "multi\nline");
	expect_str("\"dq 'single'\"", "dq 'single'");
	expect_err("size(1)", "no matching overload");
}

static void fbc_cel_eval_value__conversions(void **state)
{
	(void)state;
	expect_i64("int('42')", "42");
	expect_i64("int(3.9)", "3");
	expect_i64("int(-3.9)", "-3");
	expect_i64("int(7u)", "7");
	expect_b("uint(7) == 7u", true);
	expect_b("double(2) == 2.0", true);
	expect_b("double('1.5') == 1.5", true);
	expect_str("string(42)", "42");
	expect_str("string(1.5)", "1.5");
	expect_str("string(1e6)", "1e+06");
	expect_str("string(true)", "true");
	expect_str("string(b'abc')", "abc");
	expect_b("bytes('abc') == b'abc'", true);
	expect_b("type(1) == int && type('a') == string", true);
	expect_b("dyn(1) == 1", true);
	expect_err("int('x')", "cannot convert");
	expect_err("int(1e100)", "range");
	expect_err("uint(-1)", "range");
}

static void fbc_cel_eval_value__bindings(void **state)
{
	static const fbc_cel_decl decls[] = {{"x", "int"}, {"m", "map(string, list(int))"}};
	fbc_cel_program *p = NULL;
	fbc_error err;
	json_t *b, *out = NULL;

	(void)state;
	fbc_error_init(&err);
	assert_int_equal(fbc_cel_compile_ex(&p, "x + size(m.k) + m['k'][1]", 25, decls, 2, 0, &err),
			 0);
	assert_string_equal(fbc_cel_program_type(p), "int");
	b = json_loads("{\"x\": {\"int64Value\": \"40\"}, \"m\": {\"mapValue\": {\"entries\": "
		       "[{\"key\": {\"stringValue\": \"k\"}, \"value\": {\"listValue\": "
		       "{\"values\": [{\"int64Value\": \"0\"}, {\"int64Value\": \"0\"}]}}}]}}}",
		       0, NULL);
	assert_non_null(b);
	assert_int_equal(fbc_cel_eval_value(&out, p, b, &err), 0);
	assert_string_equal(json_string_value(json_object_get(out, "int64Value")), "42");
	json_decref(out);
	json_decref(b);
	fbc_cel_program_free(p);
	p = NULL;
	/* a type error against the declared types */
	assert_int_equal(fbc_cel_compile_ex(&p, "x + 'a'", 7, decls, 2, 0, &err), FBC_EINVAL);
	assert_null(p);
}

/* ---- concurrency: one immutable program, many threads ---- */

struct thread_arg {
	const fbc_cel_program *p;
	json_t *props;
	int failures;
};

static void *worker(void *arg)
{
	struct thread_arg *a = arg;
	int i;

	for (i = 0; i < 2000; i++) {
		fbc_error err;
		bool r = false;

		if (fbc_cel_eval_bool(&r, a->p, a->props, &err) || !r)
			a->failures++;
	}
	return NULL;
}

static void fbc_cel_eval_bool__concurrent(void **state)
{
	const char *rule = "properties.exists(p, p.type == 'olm.package' && "
			   "semver_compare(p.value.version, '0.9.0') > 0)";
	fbc_cel_program *p = NULL;
	struct thread_arg args[4];
	pthread_t th[4];
	json_t *props = json_loads(props_json, 0, NULL);
	fbc_error err;
	int i;

	(void)state;
	assert_int_equal(fbc_cel_compile(&p, rule, strlen(rule), &err), 0);
	for (i = 0; i < 4; i++) {
		args[i].p = p;
		args[i].props = props;
		args[i].failures = 0;
		assert_int_equal(pthread_create(&th[i], NULL, worker, &args[i]), 0);
	}
	for (i = 0; i < 4; i++) {
		pthread_join(th[i], NULL);
		assert_int_equal(args[i].failures, 0);
	}
	fbc_cel_program_free(p);
	json_decref(props);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(fbc_cel_eval_bool__olm_certified_example),
		cmocka_unit_test(fbc_cel_eval_bool__olm_gvk_map_equality),
		cmocka_unit_test(fbc_cel_eval_bool__semver_compare),
		cmocka_unit_test(fbc_cel_eval_bool__json_values),
		cmocka_unit_test(fbc_cel_eval_bool__errors),
		cmocka_unit_test(fbc_cel_eval_bool__non_bool_result),
		cmocka_unit_test(fbc_cel_compile__syntax_error_has_position),
		cmocka_unit_test(fbc_cel_compile__check_errors),
		cmocka_unit_test(fbc_cel_compile__bounds),
		cmocka_unit_test(fbc_cel_compile__truncated_and_corrupted_inputs),
		cmocka_unit_test(fbc_cel_eval_value__step_limit),
		cmocka_unit_test(fbc_cel_eval_value__arithmetic),
		cmocka_unit_test(fbc_cel_eval_value__comparisons),
		cmocka_unit_test(fbc_cel_eval_value__logic),
		cmocka_unit_test(fbc_cel_eval_value__macros),
		cmocka_unit_test(fbc_cel_eval_value__strings_and_size),
		cmocka_unit_test(fbc_cel_eval_value__conversions),
		cmocka_unit_test(fbc_cel_eval_value__bindings),
		cmocka_unit_test(fbc_cel_eval_bool__concurrent),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
