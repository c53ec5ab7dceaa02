/*
 * Runs the official CEL conformance cases (from the npm package
 * @bufbuild/cel-spec, converted to JSON by fetch.sh) against service/cel.
 *
 * usage: cel_conformance CONFORMANCE_JSON SELECTION_FILE [-v]
 *
 * SELECTION_FILE lists, one per line, the `suite/section` pairs to run, and
 * `skip suite/section/test  reason` lines for single cases left out. Cases
 * that need features outside the subset (protobuf messages, enums, a
 * container, checked-type assertions, function declarations) are skipped
 * automatically and counted. Exit status: 0 when every selected, supported
 * case passes, 1 otherwise, 2 on a usage or input error.
 */
#include "service/cel/cel.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_LINES 512

struct selection {
	char *sections[MAX_LINES];
	size_t nsections;
	char *skips[MAX_LINES];
	size_t nskips;
	int used_sections[MAX_LINES];
};

static int verbose;

static void trim(char *s)
{
	size_t n = strlen(s);

	while (n && (s[n - 1] == '\n' || s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r'))
		s[--n] = '\0';
}

static int load_selection(struct selection *sel, const char *path)
{
	FILE *f = fopen(path, "r");
	char line[1024];

	if (!f) {
		fprintf(stderr, "cannot open %s\n", path);
		return -1;
	}
	while (fgets(line, sizeof(line), f)) {
		char *p = line, *end;

		trim(line);
		while (*p == ' ')
			p++;
		if (!*p || *p == '#')
			continue;
		if (strncmp(p, "skip ", 5) == 0) {
			p += 5;
			while (*p == ' ')
				p++;
			end = strpbrk(p, " \t");
			if (end)
				*end = '\0';
			if (sel->nskips < MAX_LINES)
				sel->skips[sel->nskips++] = strdup(p);
		} else {
			end = strpbrk(p, " \t");
			if (end)
				*end = '\0';
			if (sel->nsections < MAX_LINES)
				sel->sections[sel->nsections++] = strdup(p);
		}
	}
	fclose(f);
	return 0;
}

/* ---- type environment ---- */

static int type_text(char *buf, size_t size, const json_t *t)
{
	const json_t *x;

	if ((x = json_object_get(t, "primitive"))) {
		static const char *const map[][2] = {
			{"INT64", "int"}, {"UINT64", "uint"},	{"DOUBLE", "double"},
			{"BOOL", "bool"}, {"STRING", "string"}, {"BYTES", "bytes"},
		};
		size_t i;

		for (i = 0; i < sizeof(map) / sizeof(map[0]); i++)
			if (json_is_string(x) && strcmp(json_string_value(x), map[i][0]) == 0)
				return snprintf(buf, size, "%s", map[i][1]) >= (int)size ? -1 : 0;
		return -1;
	}
	if (json_object_get(t, "dyn"))
		return snprintf(buf, size, "dyn") >= (int)size ? -1 : 0;
	if (json_object_get(t, "null"))
		return snprintf(buf, size, "null_type") >= (int)size ? -1 : 0;
	if ((x = json_object_get(t, "listType"))) {
		char e[256];

		if (type_text(e, sizeof(e), json_object_get(x, "elemType")))
			return -1;
		return snprintf(buf, size, "list(%s)", e) >= (int)size ? -1 : 0;
	}
	if ((x = json_object_get(t, "mapType"))) {
		char k[256], v[256];

		if (type_text(k, sizeof(k), json_object_get(x, "keyType")) ||
		    type_text(v, sizeof(v), json_object_get(x, "valueType")))
			return -1;
		return snprintf(buf, size, "map(%s, %s)", k, v) >= (int)size ? -1 : 0;
	}
	return -1;
}

/* Does a cel.expr.Value JSON use only kinds the subset supports? */
static int value_supported(const json_t *v)
{
	const json_t *x;
	size_t i;

	if (!json_is_object(v))
		return 0;
	if (json_object_get(v, "objectValue") || json_object_get(v, "enumValue"))
		return 0;
	if ((x = json_object_get(v, "typeValue")))
		return json_is_string(x) && !strchr(json_string_value(x), '.');
	if ((x = json_object_get(v, "listValue"))) {
		const json_t *vals = json_object_get(x, "values");

		for (i = 0; i < json_array_size(vals); i++)
			if (!value_supported(json_array_get(vals, i)))
				return 0;
	}
	if ((x = json_object_get(v, "mapValue"))) {
		const json_t *ents = json_object_get(x, "entries");

		for (i = 0; i < json_array_size(ents); i++) {
			const json_t *e = json_array_get(ents, i);

			if (!value_supported(json_object_get(e, "key")) ||
			    !value_supported(json_object_get(e, "value")))
				return 0;
		}
	}
	return 1;
}

/* ---- value comparison ---- */

static double num_of(const json_t *x)
{
	if (json_is_number(x))
		return json_number_value(x);
	if (json_is_string(x)) {
		const char *s = json_string_value(x);

		if (strcmp(s, "NaN") == 0)
			return NAN;
		if (strcmp(s, "Infinity") == 0)
			return INFINITY;
		if (strcmp(s, "-Infinity") == 0)
			return -INFINITY;
		return strtod(s, NULL);
	}
	return NAN;
}

static const char *int_text(const json_t *x, char *buf, size_t size)
{
	if (json_is_string(x))
		return json_string_value(x);
	if (json_is_integer(x)) {
		snprintf(buf, size, "%lld", (long long)json_integer_value(x));
		return buf;
	}
	return "?";
}

static int value_equal(const json_t *a, const json_t *b)
{
	const char *ka, *kb;
	json_t *va, *vb, *x;
	char b1[32], b2[32];
	size_t i, j;
	void *it;

	if (!json_is_object(a) || !json_is_object(b) || json_object_size(b) != 1)
		return 0;
	if (json_object_size(a) != 1)
		return 0;
	it = json_object_iter((json_t *)a);
	ka = json_object_iter_key(it);
	va = json_object_iter_value(it);
	it = json_object_iter((json_t *)b);
	kb = json_object_iter_key(it);
	vb = json_object_iter_value(it);
	if (strcmp(ka, kb) != 0)
		return 0;
	if (strcmp(ka, "nullValue") == 0)
		return 1;
	if (strcmp(ka, "boolValue") == 0)
		return json_is_true(va) == json_is_true(vb);
	if (strcmp(ka, "int64Value") == 0 || strcmp(ka, "uint64Value") == 0)
		return strcmp(int_text(va, b1, sizeof(b1)), int_text(vb, b2, sizeof(b2))) == 0;
	if (strcmp(ka, "doubleValue") == 0) {
		double da = num_of(va), db = num_of(vb);

		return (isnan(da) && isnan(db)) || da == db;
	}
	if (strcmp(ka, "stringValue") == 0 || strcmp(ka, "typeValue") == 0)
		return json_equal(va, vb);
	if (strcmp(ka, "bytesValue") == 0) {
		const char *sa = json_string_value(va), *sb = json_string_value(vb);
		size_t na, nb;

		if (!sa || !sb)
			return 0;
		na = strcspn(sa, "=");
		nb = strcspn(sb, "=");
		return na == nb && memcmp(sa, sb, na) == 0;
	}
	if (strcmp(ka, "listValue") == 0) {
		const json_t *la = json_object_get(va, "values"),
			     *lb = json_object_get(vb, "values");

		if (json_array_size(la) != json_array_size(lb))
			return 0;
		for (i = 0; i < json_array_size(la); i++)
			if (!value_equal(json_array_get(la, i), json_array_get(lb, i)))
				return 0;
		return 1;
	}
	if (strcmp(ka, "mapValue") == 0) {
		const json_t *ea = json_object_get(va, "entries"),
			     *eb = json_object_get(vb, "entries");

		if (json_array_size(ea) != json_array_size(eb))
			return 0;
		for (i = 0; i < json_array_size(ea); i++) {
			x = json_array_get(ea, i);
			for (j = 0; j < json_array_size(eb); j++) {
				const json_t *y = json_array_get(eb, j);

				if (value_equal(json_object_get(x, "key"),
						json_object_get(y, "key")))
					break;
			}
			if (j == json_array_size(eb) ||
			    !value_equal(json_object_get(x, "value"),
					 json_object_get(json_array_get(eb, j), "value")))
				return 0;
		}
		return 1;
	}
	return 0;
}

/* ---- running ---- */

struct counts {
	int pass, fail, skip_unsupported, skip_listed;
};

static int is_listed(const struct selection *sel, const char *id)
{
	size_t i;

	for (i = 0; i < sel->nskips; i++)
		if (strcmp(sel->skips[i], id) == 0)
			return 1;
	return 0;
}

/* 1 pass, 0 fail, -1 unsupported */
static int run_case(const json_t *o, char *why, size_t whysize)
{
	const json_t *env = json_object_get(o, "typeEnv");
	const json_t *bindings = json_object_get(o, "bindings");
	const json_t *expect = json_object_get(o, "value");
	const json_t *eval_error = json_object_get(o, "evalError");
	const char *expr = json_string_value(json_object_get(o, "expr"));
	const char *container = json_string_value(json_object_get(o, "container"));
	fbc_cel_decl decls[32];
	char types[32][512];
	json_t *vals = NULL, *got = NULL;
	fbc_cel_program *prog = NULL;
	size_t nd = 0, i;
	unsigned flags = 0;
	fbc_error err;
	const char *key;
	json_t *bv;
	int rc, result = 0;

	why[0] = '\0';
	if (!expr || (container && *container) || json_object_get(o, "checkOnly") ||
	    json_object_get(o, "typedResult") || json_object_get(o, "unknown") ||
	    json_object_get(o, "anyEvalErrors") || json_object_get(o, "anyUnknowns"))
		return -1;
	if (!expect && !eval_error)
		expect = NULL; /* a case without a result expects true */
	if (expect && !value_supported(expect))
		return -1;
	for (i = 0; i < json_array_size(env); i++) {
		const json_t *d = json_array_get(env, i);
		const json_t *ident = json_object_get(d, "ident");

		if (!ident || nd >= 32)
			return -1;
		if (type_text(types[nd], sizeof(types[nd]), json_object_get(ident, "type")))
			return -1;
		decls[nd].name = json_string_value(json_object_get(d, "name"));
		decls[nd].type = types[nd];
		nd++;
	}
	vals = json_object();
	json_object_foreach((json_t *)bindings, key, bv)
	{
		const json_t *v = json_object_get(bv, "value");

		if (!v || !value_supported(v)) {
			json_decref(vals);
			return -1;
		}
		json_object_set(vals, key, (json_t *)v);
		for (i = 0; i < nd; i++)
			if (strcmp(decls[i].name, key) == 0)
				break;
		if (i == nd) {
			if (nd >= 32) {
				json_decref(vals);
				return -1;
			}
			decls[nd].name = key;
			decls[nd].type = "dyn";
			nd++;
		}
	}
	if (json_is_true(json_object_get(o, "disableCheck")))
		flags |= FBC_CEL_NO_CHECK;
	fbc_error_init(&err);
	rc = fbc_cel_compile_ex(&prog, expr, json_string_length(json_object_get(o, "expr")), decls,
				nd, flags, &err);
	if (rc == 0)
		rc = fbc_cel_eval_value(&got, prog, vals, &err);
	if (eval_error) {
		if (rc)
			result = 1;
		else {
			char *s = json_dumps(got, JSON_COMPACT);

			snprintf(why, whysize, "expected an error, got %s", s ? s : "?");
			free(s);
		}
	} else if (rc) {
		snprintf(why, whysize, "unexpected error: %s", err.message);
	} else {
		json_t *want =
			expect ? json_incref((json_t *)expect) : json_pack("{s:b}", "boolValue", 1);

		if (value_equal(got, want)) {
			result = 1;
		} else {
			char *g = json_dumps(got, JSON_COMPACT),
			     *w = json_dumps(want, JSON_COMPACT);

			snprintf(why, whysize, "expected %s, got %s", w ? w : "?", g ? g : "?");
			free(g);
			free(w);
		}
		json_decref(want);
	}
	json_decref(got);
	json_decref(vals);
	fbc_cel_program_free(prog);
	return result;
}

static void run_section(const json_t *sec, const char *suite, const struct selection *sel,
			struct counts *total)
{
	const char *sname = json_string_value(json_object_get(sec, "name"));
	const json_t *tests = json_object_get(sec, "tests");
	struct counts c = {0, 0, 0, 0};
	size_t i;

	for (i = 0; i < json_array_size(tests); i++) {
		const json_t *o = json_object_get(json_array_get(tests, i), "original");
		const char *name = json_string_value(json_object_get(o, "name"));
		char id[512], why[1024];
		int r;

		snprintf(id, sizeof(id), "%s/%s/%s", suite, sname, name ? name : "?");
		if (is_listed(sel, id)) {
			c.skip_listed++;
			continue;
		}
		r = run_case(o, why, sizeof(why));
		if (r < 0) {
			c.skip_unsupported++;
			if (verbose)
				printf("  SKIP %s (unsupported feature)\n", id);
		} else if (r) {
			c.pass++;
		} else {
			c.fail++;
			printf("  FAIL %s: %s\n       %s\n", id,
			       json_string_value(json_object_get(o, "expr")), why);
		}
	}
	printf("%-40s pass %3d  fail %3d  skipped: unsupported %3d, listed %3d\n",
	       sname ? sname : "?", c.pass, c.fail, c.skip_unsupported, c.skip_listed);
	total->pass += c.pass;
	total->fail += c.fail;
	total->skip_unsupported += c.skip_unsupported;
	total->skip_listed += c.skip_listed;
}

int main(int argc, char **argv)
{
	struct selection sel;
	struct counts total = {0, 0, 0, 0};
	json_error_t jerr;
	json_t *root;
	const json_t *suites;
	size_t i, j, k;
	int status = 0;

	memset(&sel, 0, sizeof(sel));
	if (argc < 3) {
		fprintf(stderr, "usage: %s CONFORMANCE_JSON SELECTION_FILE [-v]\n", argv[0]);
		return 2;
	}
	verbose = argc > 3 && strcmp(argv[3], "-v") == 0;
	if (load_selection(&sel, argv[2]))
		return 2;
	root = json_load_file(argv[1], JSON_ALLOW_NUL | JSON_DECODE_INT_AS_REAL, &jerr);
	if (!root) {
		fprintf(stderr, "%s:%d: %s\n", argv[1], jerr.line, jerr.text);
		return 2;
	}
	suites = json_object_get(root, "suites");
	for (k = 0; k < sel.nsections; k++) {
		char suite[256], *slash;
		int found = 0;

		snprintf(suite, sizeof(suite), "%s", sel.sections[k]);
		slash = strchr(suite, '/');
		if (!slash) {
			fprintf(stderr, "selection line '%s' is not suite/section\n", suite);
			status = 2;
			continue;
		}
		*slash = '\0';
		for (i = 0; i < json_array_size(suites); i++) {
			const json_t *s = json_array_get(suites, i);
			const json_t *secs = json_object_get(s, "suites");

			if (strcmp(json_string_value(json_object_get(s, "name")), suite) != 0)
				continue;
			for (j = 0; j < json_array_size(secs); j++) {
				const json_t *sec = json_array_get(secs, j);

				if (strcmp(json_string_value(json_object_get(sec, "name")),
					   slash + 1))
					continue;
				printf("%s/", suite);
				run_section(sec, suite, &sel, &total);
				found = 1;
			}
		}
		if (!found) {
			fprintf(stderr, "selected section %s not found in the test data\n",
				sel.sections[k]);
			status = 2;
		}
	}
	printf("TOTAL pass %d  fail %d  skipped: unsupported %d, listed %d\n", total.pass,
	       total.fail, total.skip_unsupported, total.skip_listed);
	json_decref(root);
	for (i = 0; i < sel.nsections; i++)
		free(sel.sections[i]);
	for (i = 0; i < sel.nskips; i++)
		free(sel.skips[i]);
	if (status)
		return status;
	return total.fail ? 1 : 0;
}
