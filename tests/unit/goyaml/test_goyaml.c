/* Unit tests for service/goyaml: every case of templates.md §6 and a round
 * trip of the committed community catalogs (parse, emit, same bytes). */
#include "service/goyaml/goyaml.h"
#include "service/load/load.h"

#include <dirent.h>
#include <stdarg.h>
#include <setjmp.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>

static const char *data_dir(void)
{
	const char *d = getenv("FBC_DATA_DIR");
	return d != NULL ? d : "/work/shared/data";
}

/* Emit the JSON text j as a document and compare with want. */
static void check_emit(const char *j, const char *want)
{
	json_error_t jerr;
	json_t *v = json_loads(j, JSON_DECODE_ANY, &jerr);
	assert_non_null(v);
	fbc_buf b;
	fbc_buf_init(&b, 0);
	fbc_error err;
	fbc_error_init(&err);
	assert_int_equal(fbc_goyaml_emit(&b, v, &err), 0);
	if (strcmp(b.data, want) != 0)
		fprintf(stderr, "input %s\n--- got\n%s--- want\n%s---\n", j, b.data, want);
	assert_string_equal(b.data, want);
	fbc_buf_dispose(&b);
	json_decref(v);
}

static void fbc_goyaml_emit__spec_basic_example(void **state)
{
	(void)state;
	check_emit("{\"schema\":\"olm.package\",\"name\":\"demo\",\"defaultChannel\":\"stable\","
		   "\"icon\":{\"base64data\":\"iVBORw0K\",\"mediatype\":\"image/png\"}}",
		   "defaultChannel: stable\nicon:\n  base64data: iVBORw0K\n  mediatype: image/png\n"
		   "name: demo\nschema: olm.package\n");
	check_emit(
		"{\"schema\":\"olm.channel\",\"name\":\"stable\",\"package\":\"demo\",\"entries\":["
		"{\"name\":\"demo.v1.1.0\",\"replaces\":\"demo.v1.0.0\",\"skipRange\":\">=0.9.0 "
		"<1.1.0\"},{\"name\":\"demo.v1.0.0\"}]}",
		"entries:\n- name: demo.v1.1.0\n  replaces: demo.v1.0.0\n  skipRange: '>=0.9.0 "
		"<1.1.0'\n- name: demo.v1.0.0\nname: stable\npackage: demo\nschema: olm.channel\n");
	check_emit("{\"entries\":[],\"name\":\"alpha\",\"p\":{}}",
		   "entries: []\nname: alpha\np: {}\n");
	check_emit("{\"relatedImages\":[{\"image\":\"quay.io/x/demo:1.0.0\",\"name\":\"\"}]}",
		   "relatedImages:\n- image: quay.io/x/demo:1.0.0\n  name: \"\"\n");
}

static void fbc_goyaml_emit__scalar_typing(void **state)
{
	(void)state;
	/* strings that would resolve to something else are double-quoted */
	check_emit(
		"{\"a\":\"2024-11-05\",\"b\":\"1.31\",\"c\":\"true\",\"d\":\"null\",\"e\":\"0x1F\","
		"\"f\":\"1_000\",\"g\":\"~\",\"h\":\"yes\",\"i\":\"1:20\",\"j\":\".5\",\"k\":\"-."
		"inf\"}",
		"a: \"2024-11-05\"\nb: \"1.31\"\nc: \"true\"\nd: \"null\"\ne: \"0x1F\"\nf: "
		"\"1_000\"\n"
		"g: \"~\"\nh: \"yes\"\ni: \"1:20\"\nj: \".5\"\nk: \"-.inf\"\n");
	/* and those that stay strings are plain */
	check_emit(
		"{\"a\":\"1.2.3\",\"b\":\"2024-13-05\",\"c\":\"2023-02-29\",\"d\":\"truex\","
		"\"e\":\"08\",\"f\":\"1e400\",\"g\":\"v1\"}",
		"a: 1.2.3\nb: 2024-13-05\nc: 2023-02-29\nd: truex\ne: \"08\"\nf: 1e400\ng: v1\n");
	/* timestamps with time, fraction and zone */
	check_emit("{\"a\":\"2021-03-10T15:00:00Z\",\"b\":\"2022-08-09T15:18:12.000Z\","
		   "\"c\":\"2023-04-14 10:00:00\",\"d\":\"2023-04-14T10:00:00+02:00\","
		   "\"e\":\"2023-04-14T25:00:00Z\"}",
		   "a: \"2021-03-10T15:00:00Z\"\nb: \"2022-08-09T15:18:12.000Z\"\n"
		   "c: \"2023-04-14 10:00:00\"\nd: \"2023-04-14T10:00:00+02:00\"\n"
		   "e: 2023-04-14T25:00:00Z\n");
	check_emit("{\"i\":3,\"r\":1.5,\"n\":null,\"t\":true,\"f\":false,\"x\":3.0,\"big\":1e21,"
		   "\"s\":1e-05,\"neg\":-0.0}",
		   "big: 1e+21\nf: false\ni: 3\n\"n\": null\nneg: 0\nr: 1.5\ns: 1e-05\nt: true\nx: "
		   "3\n");
}

static void fbc_goyaml_emit__quoting(void **state)
{
	(void)state;
	check_emit("{\"a\":\">=1.12.2\",\"b\":\"\",\"c\":\"- x\",\"d\":\"-x\",\"e\":\"a: b\","
		   "\"f\":\"a:b\",\"g\":\"a #b\",\"h\":\"a#b\",\"i\":\" lead\",\"j\":\"trail \","
		   "\"k\":\"it's\",\"l\":\"---x\",\"m\":\"*x\",\"n\":\"[x]\",\"o\":\"x,y\",\"p\":"
		   "\"?x\","
		   "\"q\":\"? x\",\"r\":\"@x\"}",
		   "a: '>=1.12.2'\nb: \"\"\nc: '- x'\nd: -x\ne: 'a: b'\nf: a:b\ng: 'a #b'\nh: a#b\n"
		   "i: ' lead'\nj: 'trail '\nk: it's\nl: '---x'\nm: '*x'\n\"n\": '[x]'\no: x,y\np: "
		   "?x\n"
		   "q: '? x'\nr: '@x'\n");
}

static void fbc_goyaml_emit__double_quoted_escapes(void **state)
{
	(void)state;
	/* tab, CR, emoji, NEL, BOM inside are not printable */
	check_emit(
		"{\"a\":\"x\\ty\",\"b\":\"cat \\ud83d\\udc31\",\"c\":\"a\\rb\",\"d\":\"\\u0085\","
		"\"e\":\"q\\\"\\\\\\u0001\\u001b\\u0007\",\"f\":\"a\\ufeffb\"}",
		"a: \"x\\ty\"\nb: \"cat \\U0001F431\"\nc: \"a\\rb\"\nd: \"\\N\"\n"
		"e: \"q\\\"\\\\\\x01\\e\\a\"\nf: \"a\\uFEFFb\"\n");
	/* a leading BOM escapes every character (go-yaml's is_bom quirk) */
	check_emit("{\"a\":\"\\ufeffab c\"}", "a: \"\\uFEFF\\x61\\x62\\x20\\x63\"\n");
	/* U+2028 is printable but a break: plain refused, single quotes allowed */
	check_emit("{\"a\":\"x\\u2028y\"}", "a: 'x\xe2\x80\xa8  y'\n");
}

static void fbc_goyaml_emit__literal_blocks(void **state)
{
	(void)state;
	check_emit("{\"a\":\"l1\\nl2\"}", "a: |-\n  l1\n  l2\n");
	check_emit("{\"a\":\"l1\\nl2\\n\",\"b\":1}", "a: |\n  l1\n  l2\nb: 1\n");
	check_emit("{\"a\":\"l1\\n\\n\",\"b\":1}", "a: |+\n  l1\n\nb: 1\n");
	check_emit("{\"a\":\"\\n\",\"b\":1}", "a: |2+\n\nb: 1\n");
	check_emit("{\"a\":\" x\\ny\"}", "a: |2-\n   x\n  y\n");
	check_emit("{\"a\":\"x\\n\\ny\"}", "a: |-\n  x\n\n  y\n");
	check_emit("{\"s\":[\"a\\nb\"]}", "s:\n- |-\n  a\n  b\n");
	check_emit("{\"m\":{\"k\":\"a\\nb\\n\"}}", "m:\n  k: |\n    a\n    b\n");
	/* trailing space or a space before a break: double-quoted with \n */
	check_emit("{\"a\":\"x \\ny\"}", "a: \"x \\ny\"\n");
	check_emit("{\"a\":\"x\\ny \"}", "a: \"x\\ny \"\n");
	/* a tab makes it special: double-quoted */
	check_emit("{\"a\":\"x\\n\\ty\"}", "a: \"x\\n\\ty\"\n");
}

static void fbc_goyaml_emit__folding(void **state)
{
	(void)state;
	/* plain: break at the first single space once the column passed 80 */
	char in[512], want[512];
	const char *words = "aaaa bbbb cccc dddd eeee ffff gggg hhhh iiii jjjj kkkk llll mmmm nnnn "
			    "oooo pppp qqqq rrrr ssss tttt";
	snprintf(in, sizeof(in), "{\"description\":\"%s\"}", words);
	/* "description: " is 13 columns; each word+space 5: column passes 80 after
	 * 14 words (13 + 14*5 - 1 = 82 at the 14th space... computed by hand) */
	snprintf(want, sizeof(want),
		 "description: aaaa bbbb cccc dddd eeee ffff gggg hhhh iiii jjjj kkkk llll mmmm "
		 "nnnn\n  oooo pppp qqqq rrrr ssss tttt\n");
	check_emit(in, want);
	/* single-quoted folds the same way ("d: '" is 4 columns), never at the
	 * first or last char */
	snprintf(in, sizeof(in), "{\"d\":\">%s\"}", words);
	check_emit(in, "d: '>aaaa bbbb cccc dddd eeee ffff gggg hhhh iiii jjjj kkkk llll mmmm nnnn "
		       "oooo pppp\n  qqqq rrrr ssss tttt'\n");
	/* double-quoted: a run of spaces folds at its first space with "\ " */
	snprintf(in, sizeof(in), "{\"d\":\"\\t%s  x\"}",
		 "aaaa bbbb cccc dddd eeee ffff gggg hhhh iiii jjjj kkkk llll mmmm nnnnnnnnnn");
	check_emit(in, "d: \"\\taaaa bbbb cccc dddd eeee ffff gggg hhhh iiii jjjj kkkk llll mmmm "
		       "nnnnnnnnnn\n  \\ x\"\n");
	/* no spaces: never folded; keys never folded */
	char longk[300];
	memset(longk, 'k', 100);
	longk[100] = '\0';
	snprintf(in, sizeof(in), "{\"%s\":1}", longk);
	snprintf(want, sizeof(want), "%s: 1\n", longk);
	check_emit(in, want);
	/* inside a sequence of mappings the continuation is indented by 4 */
	snprintf(in, sizeof(in), "{\"s\":[{\"d\":\"%s\"}]}", words);
	check_emit(in, "s:\n- d: aaaa bbbb cccc dddd eeee ffff gggg hhhh iiii jjjj kkkk llll mmmm "
		       "nnnn oooo pppp\n    qqqq rrrr ssss tttt\n");
}

static void fbc_goyaml_emit__layout(void **state)
{
	(void)state;
	check_emit("[[\"x\",[\"y\"]],{\"a\":[1,2]},[],{}]",
		   "- - x\n  - - \"y\"\n- a:\n  - 1\n  - 2\n- []\n- {}\n");
	check_emit("{\"a\":{\"b\":{\"c\":[{\"d\":1,\"e\":[{}]}]}}}",
		   "a:\n  b:\n    c:\n    - d: 1\n      e:\n      - {}\n");
	/* keys longer than 128 bytes become complex keys */
	char k[200], in[400], want[400];
	memset(k, 'k', 129);
	k[129] = '\0';
	snprintf(in, sizeof(in), "{\"%s\":{\"x\":1}}", k);
	snprintf(want, sizeof(want), "? %s\n: x: 1\n", k);
	check_emit(in, want);
	/* a key with a line break is a complex key with a literal */
	check_emit("{\"a\\nb\":[1]}", "? |-\n  a\n  b\n: - 1\n");
	/* a key that would not resolve to a string is quoted */
	check_emit("{\"1\":\"x\",\"true\":\"y\",\"\":\"z\"}",
		   "\"\": z\n\"1\": x\n\"true\": \"y\"\n");
}

static void fbc_goyaml_key_cmp__natural_order(void **state)
{
	(void)state;
	assert_true(fbc_goyaml_key_cmp("a_b", "aB") < 0);
	assert_true(fbc_goyaml_key_cmp("a2", "a10") < 0);
	assert_true(fbc_goyaml_key_cmp("Z", "a") < 0);
	assert_true(fbc_goyaml_key_cmp("a", "ab") < 0);
	assert_true(fbc_goyaml_key_cmp("a.b", "ab") < 0);
	assert_true(fbc_goyaml_key_cmp("a01", "a1") > 0); /* equal numbers: longer run later */
	assert_int_equal(fbc_goyaml_key_cmp("same", "same"), 0);
	check_emit("{\"aB\":1,\"a_b\":2,\"a10\":3,\"a2\":4,\"Z\":5}",
		   "Z: 5\na_b: 2\na2: 4\na10: 3\naB: 1\n");
}

static void fbc_goyaml_format_float__go_g(void **state)
{
	(void)state;
	char b[64];
	const struct {
		double d;
		const char *s;
	} cases[] = {
		{1.5, "1.5"},	   {100000, "100000"},	  {1e6, "1e+06"}, {1234567, "1.234567e+06"},
		{1e-5, "1e-05"},   {0.0001, "0.0001"},	  {0.1, "0.1"},	  {-2.5e-7, "-2.5e-07"},
		{1e100, "1e+100"}, {123456.5, "123456.5"}};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		fbc_goyaml_format_float(b, sizeof(b), cases[i].d);
		assert_string_equal(b, cases[i].s);
	}
}

static void fbc_goyaml_emit__refuses_scalar_root_and_depth(void **state)
{
	(void)state;
	fbc_buf b;
	fbc_buf_init(&b, 0);
	fbc_error err;
	fbc_error_init(&err);
	json_t *s = json_string("x");
	assert_int_equal(fbc_goyaml_emit(&b, s, &err), FBC_EINVAL);
	json_decref(s);
	json_t *deep = json_array();
	json_t *cur = deep;
	for (int i = 0; i < FBC_GOYAML_MAX_DEPTH + 5; i++) {
		json_t *n = json_array();
		json_array_append_new(cur, n);
		json_array_append_new(n, json_integer(1));
		cur = n;
	}
	fbc_buf_reset(&b);
	assert_int_equal(fbc_goyaml_emit(&b, deep, &err), FBC_ELIMIT);
	json_decref(deep);
	/* output bounded by the buffer's maximum */
	fbc_buf small;
	fbc_buf_init(&small, 8);
	json_t *o = json_pack("{s:s}", "key", "a long value");
	assert_int_equal(fbc_goyaml_emit(&small, o, &err), FBC_ELIMIT);
	json_decref(o);
	fbc_buf_dispose(&small);
	fbc_buf_dispose(&b);
}

/* --- real data: parse each committed catalog, emit, same bytes --- */

typedef struct rt {
	fbc_buf out;
	int rc;
} rt;

static int rt_meta(void *ctx, const fbc_meta *meta, fbc_error *err)
{
	rt *r = ctx;
	return fbc_goyaml_emit_document(&r->out, meta->blob, err);
}

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (f == NULL)
		return NULL;
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *d = malloc((size_t)n + 1);
	if (d != NULL && fread(d, 1, (size_t)n, f) != (size_t)n) {
		free(d);
		d = NULL;
	}
	fclose(f);
	if (d != NULL) {
		d[n] = '\0';
		*len = (size_t)n;
	}
	return d;
}

static void fbc_goyaml_emit__committed_catalogs_round_trip(void **state)
{
	(void)state;
	char dir[1024];
	snprintf(dir, sizeof(dir), "%s/community-operators/catalog-v4.20", data_dir());
	DIR *d = opendir(dir);
	if (d == NULL)
		skip();
	struct dirent *de;
	size_t files = 0, same = 0;
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		char path[2048];
		snprintf(path, sizeof(path), "%s/%s/catalog.yaml", dir, de->d_name);
		size_t len = 0;
		char *data = slurp(path, &len);
		if (data == NULL)
			continue;
		files++;
		rt r;
		fbc_buf_init(&r.out, 0);
		fbc_diags diags;
		fbc_diags_init(&diags, 100);
		fbc_error err;
		fbc_error_init(&err);
		int rc =
			fbc_load_buffer("catalog.yaml", data, len, NULL, rt_meta, &r, &diags, &err);
		assert_int_equal(rc, 0);
		if (r.out.len == len && memcmp(r.out.data, data, len) == 0) {
			same++;
		} else {
			size_t i = 0;
			while (i < len && i < r.out.len && data[i] == r.out.data[i])
				i++;
			size_t line = 1;
			for (size_t k = 0; k < i; k++)
				line += data[k] == '\n';
			fprintf(stderr, "%s: first difference at line %zu\n", path, line);
		}
		fbc_diags_dispose(&diags);
		fbc_buf_dispose(&r.out);
		free(data);
	}
	closedir(d);
	fprintf(stderr, "goyaml round trip: %zu of %zu committed catalogs identical\n", same,
		files);
	assert_true(files >= 30);
	assert_int_equal(same, files);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(fbc_goyaml_emit__spec_basic_example),
		cmocka_unit_test(fbc_goyaml_emit__scalar_typing),
		cmocka_unit_test(fbc_goyaml_emit__quoting),
		cmocka_unit_test(fbc_goyaml_emit__double_quoted_escapes),
		cmocka_unit_test(fbc_goyaml_emit__literal_blocks),
		cmocka_unit_test(fbc_goyaml_emit__folding),
		cmocka_unit_test(fbc_goyaml_emit__layout),
		cmocka_unit_test(fbc_goyaml_key_cmp__natural_order),
		cmocka_unit_test(fbc_goyaml_format_float__go_g),
		cmocka_unit_test(fbc_goyaml_emit__refuses_scalar_root_and_depth),
		cmocka_unit_test(fbc_goyaml_emit__committed_catalogs_round_trip),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
