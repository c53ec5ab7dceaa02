/* Tests of fbc_yaml_to_json and of fbc_load_buffer (format, splitting, L4-L9). */
#include "common.h"
#include "service/base/buf.h"

#include <math.h>
#include <time.h>

static json_t *yaml(const char *text)
{
	json_t *j = NULL;
	fbc_error e;

	fbc_error_init(&e);
	if (fbc_yaml_to_json(&j, text, strlen(text), NULL, &e) != 0) {
		print_error("unexpected error: %s\n", e.message);
		fail();
	}
	return j;
}

static int yaml_err(const char *text, const fbc_load_limits *lim, fbc_error *e)
{
	json_t *j = NULL;
	int rc;

	fbc_error_init(e);
	rc = fbc_yaml_to_json(&j, text, strlen(text), lim, e);
	if (rc == 0)
		json_decref(j);
	return rc;
}

/* Load a buffer; returns the number of metas, fills s and d. */
static size_t load(const char *text, seen *s, fbc_diags *d)
{
	fbc_error e;

	fbc_error_init(&e);
	assert_int_equal(fbc_diags_init(d, 0), 0);
	memset(s, 0, sizeof(*s));
	assert_int_equal(fbc_load_buffer("f.yaml", text, strlen(text), NULL, collect, s, d, &e), 0);
	return s->n;
}

static void fbc_yaml_to_json__yaml11_booleans(void **state)
{
	json_t *j = yaml("a: yes\nb: no\nc: on\nd: off\ne: y\nf: N\ng: True\nh: FALSE\n"
			 "i: \"yes\"\nj: 'on'\nk: Yes\nl: yEs\n");

	assert_true(json_is_true(json_object_get(j, "a")));
	assert_true(json_is_false(json_object_get(j, "b")));
	assert_true(json_is_true(json_object_get(j, "c")));
	assert_true(json_is_false(json_object_get(j, "d")));
	assert_true(json_is_true(json_object_get(j, "e")));
	assert_true(json_is_false(json_object_get(j, "f")));
	assert_true(json_is_true(json_object_get(j, "g")));
	assert_true(json_is_false(json_object_get(j, "h")));
	assert_string_equal(json_string_value(json_object_get(j, "i")), "yes");
	assert_string_equal(json_string_value(json_object_get(j, "j")), "on");
	assert_true(json_is_true(json_object_get(j, "k")));
	assert_string_equal(json_string_value(json_object_get(j, "l")), "yEs");
	json_decref(j);
}

static void fbc_yaml_to_json__numbers_and_nulls(void **state)
{
	json_t *j = yaml("f: 1.0\nhex: 0x1F\noct: 0o17\nold: 017\nus: 1_000\nexp: 1e3\n"
			 "neg: -0x10\nnine: 09\nbin: 0b101\ndot: .5\nver: 1.0.0\nt: 12:30\n"
			 "n1: ~\nn2: null\nn3:\nq: \"12\"\nbig: 18446744073709551615\n"
			 "plus: +12\nstr: !!str 12\nint: !!int \"7\"\nflt: !!float 3\n");

	assert_true(json_is_real(json_object_get(j, "f")));
	assert_true(json_real_value(json_object_get(j, "f")) == 1.0);
	assert_int_equal(json_integer_value(json_object_get(j, "hex")), 31);
	assert_int_equal(json_integer_value(json_object_get(j, "oct")), 15);
	assert_int_equal(json_integer_value(json_object_get(j, "old")), 15);
	assert_int_equal(json_integer_value(json_object_get(j, "us")), 1000);
	assert_true(json_real_value(json_object_get(j, "exp")) == 1000.0);
	assert_int_equal(json_integer_value(json_object_get(j, "neg")), -16);
	assert_true(json_is_real(json_object_get(j, "nine")));
	assert_int_equal(json_integer_value(json_object_get(j, "bin")), 5);
	assert_true(json_real_value(json_object_get(j, "dot")) == 0.5);
	assert_string_equal(json_string_value(json_object_get(j, "ver")), "1.0.0");
	assert_string_equal(json_string_value(json_object_get(j, "t")), "12:30");
	assert_true(json_is_null(json_object_get(j, "n1")));
	assert_true(json_is_null(json_object_get(j, "n2")));
	assert_true(json_is_null(json_object_get(j, "n3")));
	assert_string_equal(json_string_value(json_object_get(j, "q")), "12");
	assert_true(json_is_real(json_object_get(j, "big")));
	assert_int_equal(json_integer_value(json_object_get(j, "plus")), 12);
	assert_string_equal(json_string_value(json_object_get(j, "str")), "12");
	assert_int_equal(json_integer_value(json_object_get(j, "int")), 7);
	assert_true(json_is_real(json_object_get(j, "flt")));
	json_decref(j);
}

static void fbc_yaml_to_json__inf_and_bad_tags_fail(void **state)
{
	fbc_error e;

	assert_int_equal(yaml_err("a: .inf\n", NULL, &e), FBC_EPARSE);
	assert_non_null(strstr(e.message, "+Inf"));
	assert_int_equal(yaml_err("a: !!int abc\n", NULL, &e), FBC_EPARSE);
	assert_non_null(strstr(e.message, "cannot decode"));
	assert_int_equal(yaml_err("a: b: c\n", NULL, &e), FBC_EPARSE);
	assert_non_null(strstr(e.message, "yaml: line 1:"));
	assert_int_equal(yaml_err("a: *nope\n", NULL, &e), FBC_EPARSE);
	assert_non_null(strstr(e.message, "unknown anchor"));
}

static void fbc_yaml_to_json__non_string_keys(void **state)
{
	json_t *j = yaml("1: a\ntrue: b\n1.5: c\n0x10: d\n");

	assert_string_equal(json_string_value(json_object_get(j, "1")), "a");
	assert_string_equal(json_string_value(json_object_get(j, "true")), "b");
	assert_string_equal(json_string_value(json_object_get(j, "1.5")), "c");
	assert_string_equal(json_string_value(json_object_get(j, "16")), "d");
	json_decref(j);
}

static void fbc_yaml_to_json__anchors_aliases_merge(void **state)
{
	json_t *j = yaml("base: &b {x: 1, z: 2}\n"
			 "list: &l [1, 2]\n"
			 "copy: *l\n"
			 "m:\n  <<: *b\n  z: 3\n"
			 "early:\n  z: 9\n  <<: *b\n"
			 "multi:\n  <<: [{k: first}, {k: second, w: 1}]\n"
			 "s: &s hello\nt: *s\n"
			 "y: a bool key\n");
	json_t *m = json_object_get(j, "m");

	assert_int_equal(json_integer_value(json_object_get(m, "x")), 1);
	assert_int_equal(json_integer_value(json_object_get(m, "z")), 3);
	assert_null(json_object_get(m, "<<"));
	/* go-yaml v2 merges at the position of "<<": later wins */
	assert_int_equal(json_integer_value(json_object_get(json_object_get(j, "early"), "z")), 2);
	assert_string_equal(json_string_value(json_object_get(json_object_get(j, "multi"), "k")),
			    "first");
	assert_int_equal(json_integer_value(json_object_get(json_object_get(j, "multi"), "w")), 1);
	assert_int_equal(json_array_size(json_object_get(j, "copy")), 2);
	assert_string_equal(json_string_value(json_object_get(j, "t")), "hello");
	/* YAML 1.1: an unquoted key y is the boolean true */
	assert_string_equal(json_string_value(json_object_get(j, "true")), "a bool key");
	json_decref(j);
}

static void fbc_yaml_to_json__billion_laughs_hits_limit_fast(void **state)
{
	const char *bomb =
		"a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n"
		"b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\n"
		"c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\n"
		"d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\n"
		"e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]\n"
		"f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]\n"
		"g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]\n"
		"h: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g]\n"
		"i: &i [*h,*h,*h,*h,*h,*h,*h,*h,*h]\n";
	struct timespec t0, t1;
	fbc_error e;
	double ms;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	assert_int_equal(yaml_err(bomb, NULL, &e), FBC_ELIMIT);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
	assert_true(ms < 1000.0);
	assert_non_null(strstr(e.message, "max_alias_nodes"));
}

static void fbc_yaml_to_json__deep_nesting_hits_limit(void **state)
{
	char deep[700];
	fbc_error e;
	fbc_load_limits lim;

	memset(deep, '[', 300);
	deep[300] = '1';
	memset(deep + 301, ']', 300);
	deep[601] = 0;
	assert_int_equal(yaml_err(deep, NULL, &e), FBC_ELIMIT);
	assert_non_null(strstr(e.message, "max_depth"));
	fbc_load_limits_default(&lim);
	lim.max_depth = 2;
	assert_int_equal(yaml_err("a: {b: {c: 1}}\n", &lim, &e), FBC_ELIMIT);
	assert_int_equal(yaml_err("a: {b: 1}\n", &lim, &e), 0);
	lim.max_string_bytes = 3;
	assert_int_equal(yaml_err("a: abcd\n", &lim, &e), FBC_ELIMIT);
	assert_non_null(strstr(e.message, "max_string_bytes"));
}

static void fbc_yaml_to_json__json_input(void **state)
{
	json_t *j = yaml("  {\"a\": [1, 2], \"b\": null}");
	fbc_error e;

	assert_int_equal(json_array_size(json_object_get(j, "a")), 2);
	json_decref(j);
	assert_int_equal(yaml_err("{\"a\": }", NULL, &e), FBC_EPARSE);
}

static void fbc_load_buffer__yaml_documents_and_lines(void **state)
{
	seen s;
	fbc_diags d;

	assert_int_equal(load("# header comment\n"
			      "schema: olm.package\nname: foo\n"
			      "---\n"
			      "schema: olm.channel\npackage: foo\nname: stable\n"
			      "--- # a comment on the separator\n"
			      "\n"
			      "schema: olm.bundle\npackage: foo\nname: foo.v1\n",
			      &s, &d),
			 3);
	assert_int_equal(fbc_diags_count(&d), 0);
	assert_string_equal(s.rows[0], "f.yaml:2 olm.package  foo");
	assert_string_equal(s.rows[1], "f.yaml:5 olm.channel foo stable");
	assert_string_equal(s.rows[2], "f.yaml:10 olm.bundle foo foo.v1");
	assert_int_equal(s.packages, 1);
	seen_dispose(&s);
	fbc_diags_dispose(&d);
}

static void fbc_load_buffer__comment_only_document_is_l9(void **state)
{
	seen s;
	fbc_diags d;

	assert_int_equal(load("# just a comment\n---\nschema: x\n", &s, &d), 1);
	assert_int_equal(fbc_diags_count(&d), 1);
	assert_string_equal(fbc_diags_at(&d, 0)->code, "L9");
	assert_string_equal(fbc_diags_at(&d, 0)->message,
			    "object 'null' is missing root schema field");
	assert_int_equal(fbc_diags_at(&d, 0)->line, 1);
	seen_dispose(&s);
	fbc_diags_dispose(&d);
}

static void fbc_load_buffer__doubled_separator_start_vs_between(void **state)
{
	seen s;
	fbc_diags d;

	/* doubled at the start: the first --- becomes a document of its own */
	assert_int_equal(load("---\n---\nschema: a\n", &s, &d), 1);
	assert_int_equal(fbc_diags_count(&d), 1);
	assert_string_equal(fbc_diags_at(&d, 0)->code, "L9");
	seen_dispose(&s);
	fbc_diags_dispose(&d);
	/* doubled between two documents: harmless */
	assert_int_equal(load("schema: a\n---\n---\nschema: b\n", &s, &d), 2);
	assert_int_equal(fbc_diags_count(&d), 0);
	assert_string_equal(s.rows[1], "f.yaml:4 b  ");
	seen_dispose(&s);
	fbc_diags_dispose(&d);
	/* a single leading --- is a start marker */
	assert_int_equal(load("---\nschema: a\n---\nschema: b\n", &s, &d), 2);
	assert_int_equal(fbc_diags_count(&d), 0);
	seen_dispose(&s);
	fbc_diags_dispose(&d);
	/* a comment after a trailing --- is a null document */
	assert_int_equal(load("schema: a\n---\n# trailing\n", &s, &d), 1);
	assert_int_equal(find_diag(&d, "L9"), 0);
	seen_dispose(&s);
	fbc_diags_dispose(&d);
}

static void fbc_load_buffer__bad_separator_is_l5(void **state)
{
	seen s;
	fbc_diags d;

	assert_int_equal(load("schema: a\n--- schema: x\nschema: b\n", &s, &d), 2);
	assert_int_equal(fbc_diags_count(&d), 1);
	assert_string_equal(fbc_diags_at(&d, 0)->code, "L5");
	assert_string_equal(fbc_diags_at(&d, 0)->message,
			    "invalid Yaml document separator: schema: x");
	assert_int_equal(fbc_diags_at(&d, 0)->line, 2);
	seen_dispose(&s);
	fbc_diags_dispose(&d);
	assert_int_equal(load("----\n", &s, &d), 0);
	assert_int_equal(find_diag(&d, "L5"), 0);
	seen_dispose(&s);
	fbc_diags_dispose(&d);
}

static void fbc_load_buffer__document_end_marker_is_not_a_separator(void **state)
{
	seen s;
	fbc_diags d;

	/* only the first YAML document of a split document is read */
	assert_int_equal(load("schema: a\n...\nschema: b\n", &s, &d), 1);
	assert_int_equal(fbc_diags_count(&d), 0);
	assert_string_equal(s.rows[0], "f.yaml:1 a  ");
	seen_dispose(&s);
	fbc_diags_dispose(&d);
}

static void fbc_load_buffer__yaml_error_reports_line_and_continues(void **state)
{
	seen s;
	fbc_diags d;

	assert_int_equal(
		load("schema: a\n---\nschema: b\nname: [unclosed\n---\nschema: c\n", &s, &d), 2);
	assert_int_equal(fbc_diags_count(&d), 1);
	assert_string_equal(fbc_diags_at(&d, 0)->code, "L5");
	assert_int_equal(fbc_diags_at(&d, 0)->line, 3);
	assert_non_null(strstr(fbc_diags_at(&d, 0)->message, "error converting YAML to JSON"));
	assert_string_equal(s.rows[1], "f.yaml:6 c  ");
	seen_dispose(&s);
	fbc_diags_dispose(&d);
}

static void fbc_load_buffer__json_stream(void **state)
{
	seen s;
	fbc_diags d;

	assert_int_equal(load("{\"schema\":\"a\"}{\"schema\":\"b\"}\n\n  {\"schema\":\"c\",\n"
			      "\"name\":\"n\"}",
			      &s, &d),
			 3);
	assert_int_equal(fbc_diags_count(&d), 0);
	assert_string_equal(s.rows[0], "f.yaml:1 a  ");
	assert_string_equal(s.rows[1], "f.yaml:1 b  ");
	assert_string_equal(s.rows[2], "f.yaml:3 c  n");
	seen_dispose(&s);
	fbc_diags_dispose(&d);
}

static void fbc_load_buffer__json_syntax_error_is_l4(void **state)
{
	seen s;
	fbc_diags d;

	assert_int_equal(load("{\"schema\":\"a\"}\n{\"schema\": }\n{\"schema\":\"c\"}", &s, &d), 1);
	assert_int_equal(fbc_diags_count(&d), 1);
	assert_string_equal(fbc_diags_at(&d, 0)->code, "L4");
	assert_int_equal(fbc_diags_at(&d, 0)->line, 2);
	seen_dispose(&s);
	fbc_diags_dispose(&d);
}

static void fbc_load_buffer__non_objects_are_l6(void **state)
{
	seen s;
	fbc_diags d;

	assert_int_equal(load("{\"schema\":\"a\"}\n[1, 2]\n\"str\"\n", &s, &d), 1);
	assert_int_equal(fbc_diags_count(&d), 2);
	assert_string_equal(fbc_diags_at(&d, 0)->code, "L6");
	assert_string_equal(fbc_diags_at(&d, 0)->message,
			    "json: cannot unmarshal array into Go value of type "
			    "map[string]interface {}");
	assert_int_equal(fbc_diags_at(&d, 0)->line, 2);
	seen_dispose(&s);
	fbc_diags_dispose(&d);
	/* a YAML top-level sequence, and prose */
	assert_int_equal(load("- a\n- b\n", &s, &d), 0);
	assert_int_equal(find_diag(&d, "L6"), 0);
	seen_dispose(&s);
	fbc_diags_dispose(&d);
	assert_int_equal(load("# Title\nSome prose here.\n", &s, &d), 0);
	assert_string_equal(fbc_diags_at(&d, 0)->code, "L6");
	seen_dispose(&s);
	fbc_diags_dispose(&d);
}

static void fbc_load_buffer__json_null_is_l9(void **state)
{
	seen s;
	fbc_diags d;

	assert_int_equal(load("{\"schema\":\"a\"} null", &s, &d), 1);
	assert_int_equal(fbc_diags_count(&d), 1);
	assert_string_equal(fbc_diags_at(&d, 0)->code, "L9");
	seen_dispose(&s);
	fbc_diags_dispose(&d);
}

static void fbc_load_buffer__empty_file_yields_nothing(void **state)
{
	seen s;
	fbc_diags d;

	assert_int_equal(load("", &s, &d), 0);
	assert_int_equal(fbc_diags_count(&d), 0);
	fbc_diags_dispose(&d);
	/* blank lines only are a null document (opm: L9) */
	assert_int_equal(load("\n\n", &s, &d), 0);
	assert_int_equal(find_diag(&d, "L9"), 0);
	fbc_diags_dispose(&d);
}

static void fbc_load_buffer__duplicate_folded_keys_l7(void **state)
{
	seen s;
	fbc_diags d;

	assert_int_equal(load("{\"schema\":\"x\",\"name\":\"a\",\"Name\":\"b\"}", &s, &d), 0);
	assert_int_equal(fbc_diags_count(&d), 1);
	assert_string_equal(fbc_diags_at(&d, 0)->code, "L7");
	assert_string_equal(fbc_diags_at(&d, 0)->message,
			    "duplicate keys for key \"name\": [Name name]");
	fbc_diags_dispose(&d);
	/* exact duplicates: last wins, no finding */
	assert_int_equal(load("{\"schema\":\"x\",\"name\":\"a\",\"name\":\"b\"}", &s, &d), 1);
	assert_int_equal(fbc_diags_count(&d), 0);
	assert_string_equal(s.rows[0], "f.yaml:1 x  b");
	seen_dispose(&s);
	fbc_diags_dispose(&d);
	/* nested keys are not checked */
	assert_int_equal(load("schema: x\nvalue: {a: 1, A: 2}\n", &s, &d), 1);
	assert_int_equal(fbc_diags_count(&d), 0);
	seen_dispose(&s);
	fbc_diags_dispose(&d);
}

static void fbc_load_buffer__meta_keys_must_be_strings_l8(void **state)
{
	seen s;
	fbc_diags d;

	assert_int_equal(load("schema: x\nname: 1.0\n", &s, &d), 0);
	assert_int_equal(fbc_diags_count(&d), 1);
	assert_string_equal(fbc_diags_at(&d, 0)->code, "L8");
	assert_non_null(strstr(fbc_diags_at(&d, 0)->message,
			       "expected value for key \"name\" to be a string, got"));
	fbc_diags_dispose(&d);
	assert_int_equal(load("{\"schema\":\"x\",\"PACKAGE\":null}", &s, &d), 0);
	assert_string_equal(fbc_diags_at(&d, 0)->code, "L8");
	assert_non_null(strstr(fbc_diags_at(&d, 0)->message, "\"PACKAGE\""));
	fbc_diags_dispose(&d);
	/* case-insensitive lookup also fills the meta */
	assert_int_equal(load("Schema: olm.package\nNAME: foo\n", &s, &d), 1);
	assert_string_equal(s.rows[0], "f.yaml:1 olm.package  foo");
	seen_dispose(&s);
	fbc_diags_dispose(&d);
}

static void fbc_load_buffer__missing_schema_l9(void **state)
{
	seen s;
	fbc_diags d;

	assert_int_equal(load("{\"foo\":1,\"bar\":\"x\"}\n{\"schema\":\"\"}", &s, &d), 0);
	assert_int_equal(fbc_diags_count(&d), 2);
	assert_string_equal(fbc_diags_at(&d, 0)->code, "L9");
	assert_string_equal(fbc_diags_at(&d, 0)->message,
			    "object '{\"bar\":\"x\",\"foo\":1}' is missing root schema field");
	assert_string_equal(fbc_diags_at(&d, 1)->code, "L9");
	fbc_diags_dispose(&d);
}

static void fbc_load_buffer__limits_in_json(void **state)
{
	fbc_load_limits lim;
	fbc_diags d;
	fbc_error e;
	seen s;
	const char *deep = "{\"schema\":\"x\",\"a\":{\"b\":{\"c\":{}}}}";

	memset(&s, 0, sizeof(s));
	fbc_error_init(&e);
	fbc_load_limits_default(&lim);
	lim.max_depth = 3;
	assert_int_equal(fbc_diags_init(&d, 0), 0);
	assert_int_equal(fbc_load_buffer("f.json", deep, strlen(deep), &lim, collect, &s, &d, &e),
			 0);
	assert_int_equal(s.n, 0);
	assert_string_equal(fbc_diags_at(&d, 0)->code, "LIMIT");
	assert_non_null(strstr(fbc_diags_at(&d, 0)->message, "max_depth"));
	fbc_diags_dispose(&d);
	fbc_load_limits_default(&lim);
	lim.max_file_bytes = 10;
	assert_int_equal(fbc_diags_init(&d, 0), 0);
	assert_int_equal(fbc_load_buffer("f.json", deep, strlen(deep), &lim, collect, &s, &d, &e),
			 0);
	assert_string_equal(fbc_diags_at(&d, 0)->code, "LIMIT");
	assert_non_null(strstr(fbc_diags_at(&d, 0)->message, "max_file_bytes"));
	fbc_diags_dispose(&d);
	fbc_load_limits_default(&lim);
	lim.max_blobs = 1;
	assert_int_equal(fbc_diags_init(&d, 0), 0);
	assert_int_equal(fbc_load_buffer("f.json", "{\"schema\":\"a\"}{\"schema\":\"b\"}", 28, &lim,
					 collect, &s, &d, &e),
			 0);
	assert_int_equal(s.n, 1);
	assert_string_equal(fbc_diags_at(&d, 0)->code, "LIMIT");
	assert_non_null(strstr(fbc_diags_at(&d, 0)->message, "max_blobs"));
	seen_dispose(&s);
	fbc_diags_dispose(&d);
}

static void fbc_load_buffer__callback_error_stops(void **state)
{
	fbc_diags d;
	fbc_error e;
	seen s;
	const char *text = "{\"schema\":\"a\"}{\"schema\":\"b\"}{\"schema\":\"c\"}";

	memset(&s, 0, sizeof(s));
	s.stop_after = 2;
	fbc_error_init(&e);
	assert_int_equal(fbc_diags_init(&d, 0), 0);
	assert_int_equal(fbc_load_buffer("f.json", text, strlen(text), NULL, collect, &s, &d, &e),
			 FBC_ECONFLICT);
	assert_int_equal(s.n, 2);
	assert_string_equal(e.message, "stop requested");
	seen_dispose(&s);
	fbc_diags_dispose(&d);
}

/* What Go's encoding/json accepts and jansson alone does not: invalid UTF-8
 * and lone surrogates become U+FFFD, an escaped NUL stays visible as the
 * text \u0000 instead of cutting the string short; lines do not move. */
static void fbc_load_buffer__json_strings_read_as_go_does(void **state)
{
	seen s;
	fbc_diags d;

	assert_int_equal(load("{\"schema\":\"a\",\"name\":\"caf\xe9\"}\n"
			      "{\"schema\":\"b\",\"name\":\"x\\ud800y\\udc00\"}\n"
			      "{\"schema\":\"c\",\"name\":\"\\ud83d\\ude00 \\u00e9\"}\n"
			      "{\"schema\":\"d\\u0000e\",\"name\":\"n\\u0000\"}\n",
			      &s, &d),
			 4);
	assert_int_equal(fbc_diags_count(&d), 0);
	assert_string_equal(s.rows[0], "f.yaml:1 a  caf\xef\xbf\xbd");
	assert_string_equal(s.rows[1], "f.yaml:2 b  x\xef\xbf\xbdy\xef\xbf\xbd");
	assert_string_equal(s.rows[2], "f.yaml:3 c  \xf0\x9f\x98\x80 \xc3\xa9");
	assert_string_equal(s.rows[3], "f.yaml:4 d\\u0000e  n\\u0000");
	seen_dispose(&s);
	fbc_diags_dispose(&d);
	/* a real syntax error after the rewrite is still L4 on its own line */
	assert_int_equal(load("{\"schema\":\"a\",\"name\":\"\\u0000\"}\n{\"schema\": }\n", &s, &d),
			 1);
	assert_int_equal(fbc_diags_count(&d), 1);
	assert_string_equal(fbc_diags_at(&d, 0)->code, "L4");
	assert_int_equal(fbc_diags_at(&d, 0)->line, 2);
	seen_dispose(&s);
	fbc_diags_dispose(&d);
}

/* YAML double-quoted escapes can make NULs too: they stay visible. */
static void fbc_yaml_to_json__nul_escapes_stay_visible(void **state)
{
	json_t *j = yaml("\"k\\0\": \"v\\x00w\"\nplain: \"no nul\"\n");
	seen s;
	fbc_diags d;

	assert_string_equal(json_string_value(json_object_get(j, "k\\u0000")), "v\\u0000w");
	assert_string_equal(json_string_value(json_object_get(j, "plain")), "no nul");
	json_decref(j);
	assert_int_equal(load("schema: a\nname: \"x\\0y\"\n", &s, &d), 1);
	assert_string_equal(s.rows[0], "f.yaml:1 a  x\\u0000y");
	seen_dispose(&s);
	fbc_diags_dispose(&d);
}

/* Aliases refer to the latest definition of an anchor, and looking them up
 * stays cheap with many anchors (a linear scan took minutes on 20 MB). */
static void fbc_yaml_to_json__many_anchors_fast_and_latest_wins(void **state)
{
	const size_t n_anchors = 200000, n_aliases = 9000;
	fbc_buf b;
	json_t *j;
	struct timespec t0, t1;
	double ms;

	(void)state;
	j = yaml("a: &x 1\nb: &x 2\nc: *x\n");
	assert_int_equal(json_integer_value(json_object_get(j, "c")), 2);
	json_decref(j);
	fbc_buf_init(&b, 0);
	assert_int_equal(fbc_buf_puts(&b, "l:\n"), 0);
	for (size_t i = 0; i < n_anchors; i++)
		assert_int_equal(fbc_buf_printf(&b, "- &a%zu %zu\n", i, i), 0);
	for (size_t i = 0; i < n_aliases; i++)
		assert_int_equal(fbc_buf_puts(&b, "- *a0\n"), 0);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	j = yaml(b.data);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
	assert_int_equal(json_array_size(json_object_get(j, "l")), n_anchors + n_aliases);
	assert_true(ms < 3000.0);
	json_decref(j);
	fbc_buf_dispose(&b);
}

/* ---- expansion bounded by bytes (issue 13 item 2) ---- */

static char *repeat(char ch, size_t n)
{
	char *s = malloc(n + 1);
	assert_non_null(s);
	memset(s, ch, n);
	s[n] = 0;
	return s;
}

static int yaml_len(const fbc_buf *b, const fbc_load_limits *lim, fbc_error *e)
{
	json_t *j = NULL;
	int rc;

	fbc_error_init(e);
	rc = fbc_yaml_to_json(&j, b->data, b->len, lim, e);
	json_decref(j);
	return rc;
}

/* "a: &a XXX...\nb: [*a, ...]\n": k aliases of an s-byte string, padded
 * with a comment line so that the document is `total` bytes. Each alias adds
 * s + 3 bytes (the string, its quotes and a separator). */
static void aliases_doc(fbc_buf *b, size_t s, size_t k, size_t total)
{
	char *x = repeat('x', s);

	fbc_buf_init(b, 0);
	assert_int_equal(fbc_buf_printf(b, "a: &a %s\nb: [", x), 0);
	for (size_t i = 0; i < k; i++)
		assert_int_equal(fbc_buf_printf(b, i ? ",*a" : "*a"), 0);
	assert_int_equal(fbc_buf_printf(b, "]\n"), 0);
	if (total > b->len) {
		size_t pad = total - b->len;
		assert_true(pad >= 2);
		char *p = repeat('p', pad - 2);
		assert_int_equal(fbc_buf_printf(b, "#%s\n", p), 0);
		free(p);
	}
	free(x);
}

static void fbc_yaml_to_json__expansion_cap_exact(void **state)
{
	fbc_load_limits lim;
	fbc_buf b;
	fbc_error e;

	fbc_load_limits_default(&lim);
	lim.max_expand_ratio = 1000;
	aliases_doc(&b, 100, 5, 0);
	/* exactly at the cap: the text plus 5 x (100 + 3) */
	lim.max_expanded_bytes = b.len + 5 * 103;
	assert_int_equal(yaml_len(&b, &lim, &e), 0);
	/* one byte less: refused, saying why */
	lim.max_expanded_bytes = b.len + 5 * 103 - 1;
	assert_int_equal(yaml_len(&b, &lim, &e), FBC_ELIMIT);
	assert_non_null(strstr(e.message, "max_expanded_bytes"));
	fbc_buf_dispose(&b);
}

static void fbc_yaml_to_json__expansion_ratio_exact(void **state)
{
	fbc_load_limits lim;
	fbc_buf b;
	fbc_error e;

	fbc_load_limits_default(&lim);
	lim.max_expand_ratio = 10;
	lim.max_expanded_bytes = 1u << 30;
	/* 10 aliases of 9000 bytes add 90,030: allowed when 9 x size >= 90,030 */
	aliases_doc(&b, 9000, 10, 10004);
	assert_int_equal(b.len, 10004);
	assert_true(b.len * 10 > FBC_LOAD_EXPAND_FLOOR);
	assert_int_equal(yaml_len(&b, &lim, &e), 0);
	fbc_buf_dispose(&b);
	aliases_doc(&b, 9000, 10, 10003);
	assert_int_equal(b.len, 10003);
	assert_int_equal(yaml_len(&b, &lim, &e), FBC_ELIMIT);
	assert_non_null(strstr(e.message, "max_expand_ratio 10"));
	fbc_buf_dispose(&b);
	/* a small document may always reach the floor */
	aliases_doc(&b, 1000, 50, 0);
	assert_true(b.len * 10 < 50 * 1003);
	assert_int_equal(yaml_len(&b, &lim, &e), 0);
	fbc_buf_dispose(&b);
}

/* The probe's request: one 1 MiB string repeated 1,000 times (1 GiB once
 * serialised) is refused quickly with the defaults, long before the node
 * limit. */
static void fbc_yaml_to_json__mib_string_thousand_aliases(void **state)
{
	fbc_buf b;
	fbc_error e;
	struct timespec t0, t1;

	aliases_doc(&b, (size_t)1 << 20, 1000, 0);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	assert_int_equal(yaml_len(&b, NULL, &e), FBC_ELIMIT);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	assert_non_null(strstr(e.message, "max_expand_ratio"));
	assert_true(t1.tv_sec - t0.tv_sec < 5);
	/* line 2: where the alias that crossed the bound is */
	assert_non_null(strstr(e.message, "(line 2)"));
	fbc_buf_dispose(&b);
}

static void fbc_yaml_to_json__nested_aliases_counted(void **state)
{
	fbc_load_limits lim;
	fbc_error e;
	char *x = repeat('x', 1000);
	fbc_buf b;

	/* c holds 4 x 4 copies of the 1000-byte string through b: 16 strings */
	fbc_buf_init(&b, 0);
	assert_int_equal(fbc_buf_printf(&b,
					"a: &a [%s]\n"
					"b: &b [*a,*a,*a,*a]\n"
					"c: [*b,*b,*b,*b]\n",
					x),
			 0);
	fbc_load_limits_default(&lim);
	lim.max_expand_ratio = 1000;
	/* b: 4 x (2 + 1003); c: 4 x (2 + 4 x (2 + 1003)) */
	size_t added = 4 * (2 + 1003) + 4 * (2 + 4 * (2 + 1003));
	lim.max_expanded_bytes = b.len + added;
	assert_int_equal(yaml_len(&b, &lim, &e), 0);
	lim.max_expanded_bytes = b.len + added - 1;
	assert_int_equal(yaml_len(&b, &lim, &e), FBC_ELIMIT);
	assert_non_null(strstr(e.message, "max_expanded_bytes"));
	fbc_buf_dispose(&b);
	free(x);
}

static void fbc_yaml_to_json__merge_keys_counted(void **state)
{
	fbc_load_limits lim;
	fbc_error e;
	char *x = repeat('x', 1000);
	fbc_buf b;

	fbc_buf_init(&b, 0);
	assert_int_equal(fbc_buf_printf(&b,
					"base: &b {k: %s}\n"
					"m1: {<<: *b, z: 1}\n"
					"m2: {<<: *b}\n",
					x),
			 0);
	fbc_load_limits_default(&lim);
	lim.max_expand_ratio = 1000;
	/* each merge copies the map: 2 + ("k": 1 + 3) + (1000 + 3) */
	size_t added = 2 * (2 + 4 + 1003);
	lim.max_expanded_bytes = b.len + added;
	assert_int_equal(yaml_len(&b, &lim, &e), 0);
	lim.max_expanded_bytes = b.len + added - 1;
	assert_int_equal(yaml_len(&b, &lim, &e), FBC_ELIMIT);
	assert_non_null(strstr(e.message, "max_expanded_bytes"));
	fbc_buf_dispose(&b);
	free(x);
}

/* In a catalog file: a LIMIT finding naming the file and the alias's line. */
static void fbc_load_buffer__expansion_limit_finding(void **state)
{
	fbc_load_limits lim;
	fbc_diags d;
	fbc_error e;
	seen s;
	char *x = repeat('x', 200);
	fbc_buf b;

	fbc_buf_init(&b, 0);
	assert_int_equal(fbc_buf_printf(&b,
					"schema: olm.package\nname: ok\n---\n"
					"schema: olm.package\n"
					"name: &n %s\n"
					"description: [*n, *n,\n  *n, *n]\n",
					x),
			 0);
	fbc_load_limits_default(&lim);
	lim.max_expanded_bytes = b.len + 3 * 203; /* the 4th alias, on line 7, crosses it */
	memset(&s, 0, sizeof(s));
	fbc_error_init(&e);
	assert_int_equal(fbc_diags_init(&d, 0), 0);
	assert_int_equal(
		fbc_load_buffer("pkg/catalog.yaml", b.data, b.len, &lim, collect, &s, &d, &e), 0);
	assert_int_equal(s.n, 1);
	assert_int_equal(fbc_diags_count(&d), 1);
	assert_string_equal(fbc_diags_at(&d, 0)->code, "LIMIT");
	assert_string_equal(fbc_diags_at(&d, 0)->file, "pkg/catalog.yaml");
	/* the document's line, and the alias's line in the message */
	assert_int_equal(fbc_diags_at(&d, 0)->line, 4);
	assert_non_null(strstr(fbc_diags_at(&d, 0)->message, "max_expanded_bytes"));
	assert_non_null(strstr(fbc_diags_at(&d, 0)->message, "(line 7)"));
	seen_dispose(&s);
	fbc_diags_dispose(&d);
	fbc_buf_dispose(&b);
	free(x);
}

static void fbc_load_limits__expansion_defaults_settable(void **state)
{
	fbc_load_limits lim;

	fbc_load_limits_default(&lim);
	assert_int_equal(lim.max_expand_ratio, 10);
	assert_int_equal(lim.max_expanded_bytes, 256u << 20);
	fbc_load_limits_set_expansion(3, 12345);
	fbc_load_limits_default(&lim);
	assert_int_equal(lim.max_expand_ratio, 3);
	assert_int_equal(lim.max_expanded_bytes, 12345);
	fbc_load_limits_set_expansion(0, 0);
	fbc_load_limits_default(&lim);
	assert_int_equal(lim.max_expand_ratio, 10);
	assert_int_equal(lim.max_expanded_bytes, 256u << 20);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(fbc_yaml_to_json__yaml11_booleans),
		cmocka_unit_test(fbc_yaml_to_json__numbers_and_nulls),
		cmocka_unit_test(fbc_yaml_to_json__inf_and_bad_tags_fail),
		cmocka_unit_test(fbc_yaml_to_json__non_string_keys),
		cmocka_unit_test(fbc_yaml_to_json__anchors_aliases_merge),
		cmocka_unit_test(fbc_yaml_to_json__billion_laughs_hits_limit_fast),
		cmocka_unit_test(fbc_yaml_to_json__deep_nesting_hits_limit),
		cmocka_unit_test(fbc_yaml_to_json__json_input),
		cmocka_unit_test(fbc_load_buffer__yaml_documents_and_lines),
		cmocka_unit_test(fbc_load_buffer__comment_only_document_is_l9),
		cmocka_unit_test(fbc_load_buffer__doubled_separator_start_vs_between),
		cmocka_unit_test(fbc_load_buffer__bad_separator_is_l5),
		cmocka_unit_test(fbc_load_buffer__document_end_marker_is_not_a_separator),
		cmocka_unit_test(fbc_load_buffer__yaml_error_reports_line_and_continues),
		cmocka_unit_test(fbc_load_buffer__json_stream),
		cmocka_unit_test(fbc_load_buffer__json_syntax_error_is_l4),
		cmocka_unit_test(fbc_load_buffer__non_objects_are_l6),
		cmocka_unit_test(fbc_load_buffer__json_null_is_l9),
		cmocka_unit_test(fbc_load_buffer__empty_file_yields_nothing),
		cmocka_unit_test(fbc_load_buffer__duplicate_folded_keys_l7),
		cmocka_unit_test(fbc_load_buffer__meta_keys_must_be_strings_l8),
		cmocka_unit_test(fbc_load_buffer__missing_schema_l9),
		cmocka_unit_test(fbc_load_buffer__limits_in_json),
		cmocka_unit_test(fbc_load_buffer__callback_error_stops),
		cmocka_unit_test(fbc_load_buffer__json_strings_read_as_go_does),
		cmocka_unit_test(fbc_yaml_to_json__nul_escapes_stay_visible),
		cmocka_unit_test(fbc_yaml_to_json__many_anchors_fast_and_latest_wins),
		cmocka_unit_test(fbc_yaml_to_json__expansion_cap_exact),
		cmocka_unit_test(fbc_yaml_to_json__expansion_ratio_exact),
		cmocka_unit_test(fbc_yaml_to_json__mib_string_thousand_aliases),
		cmocka_unit_test(fbc_yaml_to_json__nested_aliases_counted),
		cmocka_unit_test(fbc_yaml_to_json__merge_keys_counted),
		cmocka_unit_test(fbc_load_buffer__expansion_limit_finding),
		cmocka_unit_test(fbc_load_limits__expansion_defaults_settable),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
