/* The loader's JSON fast path (jsonfast.c) against jansson: on hand-made
 * edge cases it either gives up or reads what jansson reads, and on the real
 * catalog written as a JSON stream (every blob, as json_dumps writes it) it
 * reads most blobs itself, each the same value with the same key order and
 * the same bytes consumed as jansson. */
#include "common.h"

#include "service/load/internal.h"

int fbc_json_same_tree(const json_t *a, const json_t *b);

/* fast path result against jansson on data: 1 accepted (and equal), 0 left to jansson */
static int check(const char *data, size_t len)
{
	size_t used = 0;
	fbc_json_fast_info info = {0}; /* no skimming */
	json_t *fast = fbc_json_fast_parse(data, len, NULL, &info), *slow;
	json_error_t jerr;
	int lines = 0;

	if (!fast)
		return 0;
	used = info.consumed;
	for (size_t i = 0; i < used; i++)
		lines += data[i] == '\n';
	assert_int_equal(info.lines, lines); /* the newlines it used, not those after */
	slow = json_loadb(data, len, JSON_DISABLE_EOF_CHECK | JSON_DECODE_ANY, &jerr);
	assert_non_null(slow);
	assert_true(fbc_json_same_tree(fast, slow));
	assert_int_equal((size_t)jerr.position, used);
	json_decref(fast);
	json_decref(slow);
	return 1;
}

static void jsonfast__edge_cases(void **state)
{
	static const struct {
		const char *text;
		int fast; /* 1: the fast path reads it */
	} cases[] = {
		{"{}", 1},
		{"{\"a\":1,\"b\":[true,false,null,-0,123456789012345678],\"c\":{}}", 1},
		{"{\"z\":1,\"a\":2}\n{\"next\":3}", 1}, /* stops after the first object */
		{"{\n  \"a\": [\n    1,\n\r\n    {}\n  ],\n\t\"b\"\n:\n\"x\"\n}\n\n{}",
		 1},							     /* lines */
		{"{ \"a\" : [ ] , \"b\" : \"x\\u00e9\\n\\\"\\/\\\\\" }", 1}, /* escapes */
		{"{\"e\":\"\\ud83d\\ude00\"}", 1},			     /* a surrogate pair */
		{"{\"a\\nb\":1}", 1},					     /* an escaped key */
		{"{\"e\":\"\\u0000\"}", 0}, /* NUL: jansson's error */
		{"{\"e\\u0000\":1}", 0},
		{"{\"e\":\"\\udc00\"}", 0},  /* a lone low surrogate */
		{"{\"e\":\"\\ud800x\"}", 0}, /* a high one alone */
		{"{\"e\":\"\\x\"}", 0},	     /* no such escape */
		{"{\"e\":\"\\u12g4\"}", 0},
		{"{\"k\":\"caf\xc3\xa9\"}", 1},
		{"{\"a\":1,\"a\":2}", 0},	    /* duplicate key */
		{"{\"a\":1.5}", 0},		    /* real */
		{"{\"a\":1e3}", 0},		    /* real */
		{"{\"a\":1234567890123456789}", 0}, /* 19 digits */
		{"{\"a\":01}", 0},		    /* jansson's error */
		{"{\"a\":-}", 0},
		{"{\"a\":\"tab\there\"}", 0},	     /* a control character */
		{"{\"k\":\"\xed\xa0\x80\"}", 0},     /* a surrogate in UTF-8 */
		{"{\"k\":\"\xc0\xaf\"}", 0},	     /* overlong */
		{"{\"k\":\"\xf4\x90\x80\x80\"}", 0}, /* above U+10FFFF */
		{"{\"a\":truex}", 0},
		{"{\"a\":1,}", 0},
		{"{\"a\":1", 0},
		{"{\"a\" 1}", 0},
		{"[1]", 0}, /* only objects at the top */
		{"{\"a\":[1,2,]}", 0},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		if (check(cases[i].text, strlen(cases[i].text)) != cases[i].fast)
			fail_msg("case %zu: %s", i, cases[i].text);
}

typedef struct stream {
	char *buf;
	size_t len;
	FILE *f;
} stream;

static int to_json(void *ctx, const fbc_meta *m, fbc_error *err)
{
	stream *s = ctx;

	(void)err;
	assert_int_equal(json_dumpf(m->blob, s->f, JSON_COMPACT), 0);
	fputc('\n', s->f);
	return 0;
}

static void jsonfast__real_catalog_as_json(void **state)
{
	const char *base = getenv("FBC_DATA_DIR");
	char root[1024];
	struct stat st;
	stream s = {0};
	fbc_diags d;
	fbc_error e;
	size_t n = 0, fast = 0;

	(void)state;
	snprintf(root, sizeof(root), "%s/community-operators/catalog-v4.20",
		 base ? base : "/work/shared/data");
	if (stat(root, &st) != 0)
		skip();
	s.f = open_memstream(&s.buf, &s.len);
	assert_non_null(s.f);
	assert_int_equal(fbc_diags_init(&d, 0), 0);
	fbc_error_init(&e);
	assert_int_equal(fbc_load_dir(root, NULL, to_json, &s, &d, &e), 0);
	fclose(s.f);
	for (char *p = s.buf, *end = s.buf + s.len; p < end;) {
		char *nl = memchr(p, '\n', (size_t)(end - p));

		/* from here to the end of the stream, as the loader gives it */
		fast += (size_t)check(p, (size_t)(end - p));
		n++;
		p = nl ? nl + 1 : end;
	}
	print_message("%zu of %zu blobs read by the fast path\n", fast, n);
	assert_true(n > 800);
	assert_true(fast * 2 > n); /* not vacuous: most blobs take the fast path */
	free(s.buf);
	fbc_diags_dispose(&d);
}

/* The limits verdict found while parsing is fbc_json_within's, on both sides of each
 * bound: depth (the top-level object is 1) and the longest string or key, decoded. */
static void jsonfast__within_limits_as_the_tree_walk(void **state)
{
	static const struct {
		const char *text;
		size_t depth, longest; /* the value's own */
	} cases[] = {
		{"{}", 1, 0},
		{"{\"abcd\":1}", 1, 4},
		{"{\"a\":\"abcdef\"}", 1, 6},
		{"{\"a\":[[],{\"b\":[\"xy\"]}]}", 4, 2},
		{"{\"a\":\"\\u00e9\\n\"}", 1, 3}, /* escapes: the decoded length */
		{"{\"k\\u00e9y\":{\"x\":[[[1]]]}}", 5, 4},
		{"{\"a\":[\"\",\"12345678\"],\"bb\":{}}", 2, 8},
	};
	fbc_load_limits lim;

	fbc_load_limits_default(&lim);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		for (size_t d = cases[i].depth - 1; d <= cases[i].depth + 1; d++) {
			for (size_t l = cases[i].longest; l <= cases[i].longest + 1; l++) {
				bool want = d >= cases[i].depth && l >= cases[i].longest;
				fbc_json_fast_info info = {.within = !want}; /* must be written */
				const char *which = NULL;
				json_t *v;

				if (d == 0)
					continue;
				lim.max_depth = d;
				lim.max_string_bytes = l;
				v = fbc_json_fast_parse(cases[i].text, strlen(cases[i].text), &lim,
							&info);
				assert_non_null(v);
				assert_int_equal(info.within, want);
				assert_int_equal(info.within, fbc_json_within(v, 0, &lim, &which));
				json_decref(v);
			}
		}
		/* one below the longest string: outside */
		if (cases[i].longest > 0) {
			fbc_json_fast_info info = {.within = true};
			const char *which = NULL;
			json_t *v;

			lim.max_depth = cases[i].depth;
			lim.max_string_bytes = cases[i].longest - 1;
			v = fbc_json_fast_parse(cases[i].text, strlen(cases[i].text), &lim, &info);
			assert_non_null(v);
			assert_false(info.within);
			assert_false(fbc_json_within(v, 0, &lim, &which));
			assert_string_equal(which, "max_string_bytes");
			json_decref(v);
		}
	}
}

size_t fbc_json_fast_skim_check(const char *data, size_t size, const fbc_load_limits *lim);

/* Property values skimmed (fbc_load_skim, with the fuzz target's types: "a" a struct,
 * "b" the bundle-object shape): exactly those that would decode, in the top-level
 * "properties" array only, each the last member after "type"; built again, the tree is
 * jansson's (fbc_json_fast_skim_check aborts otherwise). */
static void jsonfast__skims_what_decodes(void **state)
{
	static const struct {
		const char *text;
		size_t skimmed;
	} cases[] = {
		{"{\"properties\":[{\"type\":\"a\",\"value\":{\"s\":\"x\",\"n\":-2147483648,"
		 "\"b\":\"e30=\",\"m\":{\"k\":\"v\"},\"l\":[{\"x\":\"y\",\"on\":true},null],"
		 "\"r\":[1,{\"a\":null},\"\\u00e9\"],\"INNER\":{\"X\":\"z\"},\"zz\":{\"q\":[]}}}],"
		 "\"schema\":\"s\"}",
		 1},
		{"{\"properties\":[{\"type\":\"a\",\"value\":{\"n\":2147483648}}]}", 0},
		{"{\"properties\":[{\"type\":\"a\",\"value\":{\"n\":\"5\"}}]}", 0},
		{"{\"properties\":[{\"type\":\"a\",\"value\":{\"n\":5.0}}]}", 0},
		{"{\"properties\":[{\"type\":\"a\",\"value\":{\"b\":\"e30\"}}]}", 0},
		{"{\"properties\":[{\"type\":\"a\",\"value\":{\"l\":[{\"on\":1}]}}]}", 0},
		{"{\"properties\":[{\"type\":\"a\",\"value\":{\"m\":{\"k\":[]}}}]}", 0},
		{"{\"properties\":[{\"type\":\"a\",\"value\":{\"S\":1}}]}", 0},
		{"{\"properties\":[{\"type\":\"a\",\"value\":{\"\\u0073\":\"x\"}}]}", 0},
		{"{\"properties\":[{\"type\":\"a\",\"value\":{\"s\":\"x\",\"s\":\"y\"}}]}", 1},
		{"{\"properties\":[{\"type\":\"a\",\"value\":null}]}", 1},
		{"{\"properties\":[{\"type\":\"a\",\"value\":[]}]}", 0},
		{"{\"properties\":[{\"type\":\"a\",\"value\":{}},{\"type\":\"c\",\"value\":{}},"
		 "{\"type\":\"b\",\"value\":{\"data\":\"e30=\"}},{\"type\":\"b\",\"value\":"
		 "{\"data\":\"ICAgCgl7fQ==\"}}]}",
		 3},
		{"{\"properties\":[{\"type\":\"a\",\"value\":{},\"z\":1}]}", 0},
		{"{\"properties\":[{\"value\":{},\"type\":\"a\"}]}", 0},
		{"{\"properties\":[{\"Type\":\"a\",\"value\":{}}]}", 0},
		{"{\"properties\":[{\"type\":\"a\",\"Value\":{}}]}", 0},
		{"{\"properties\":[[{\"type\":\"a\",\"value\":{}}]]}", 0},
		{"{\"Properties\":[{\"type\":\"a\",\"value\":{}}]}", 0},
		{"{\"x\":{\"properties\":[{\"type\":\"a\",\"value\":{}}]}}", 0},
		{"{\"x\":[{\"type\":\"a\",\"value\":{}}]}", 0},
		{"{\"properties\":[{\"type\":\"b\",\"value\":{\"data\":\"a2luZDogQ1NWCg==\"}}]}",
		 0},
		{"{\"properties\":[{\"type\":\"b\",\"value\":{\"data\":\"e30=\",\"x\":1}}]}", 0},
		{"{\"properties\":[{\"type\":\"b\",\"value\":{\"Data\":\"e30=\"}}]}", 0},
		{"{\"properties\":[{\"type\":\"b\",\"value\":{\"data\":\"e30\\u003d\"}}]}", 0},
		{"{\"properties\":[{\"type\":\"b\",\"value\":{\"data\":\"a===\"}}]}", 0},
		{"{\n \"properties\": [\n  {\n   \"type\": \"a\",\n   \"value\": {\n    \"s\": "
		 "\"x\"\n   }\n  }\n ]\n}\n",
		 1},
	};
	fbc_load_limits lim;

	(void)state;
	fbc_load_limits_default(&lim);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		size_t n = fbc_json_fast_skim_check(cases[i].text, strlen(cases[i].text), &lim);

		if (n != cases[i].skimmed)
			fail_msg("case %zu: %zu skimmed, want %zu: %s", i, n, cases[i].skimmed,
				 cases[i].text);
	}
	/* past a limit: built (the tree check reports the limit) */
	lim.max_string_bytes = 3;
	assert_int_equal(fbc_json_fast_skim_check(cases[0].text, strlen(cases[0].text), &lim), 0);
	fbc_load_limits_default(&lim);
	lim.max_depth = 5; /* the value's containers reach depth 6 */
	assert_int_equal(fbc_json_fast_skim_check(cases[0].text, strlen(cases[0].text), &lim), 0);
	lim.max_depth = 6;
	assert_int_equal(fbc_json_fast_skim_check(cases[0].text, strlen(cases[0].text), &lim), 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(jsonfast__edge_cases),
		cmocka_unit_test(jsonfast__real_catalog_as_json),
		cmocka_unit_test(jsonfast__within_limits_as_the_tree_walk),
		cmocka_unit_test(jsonfast__skims_what_decodes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
