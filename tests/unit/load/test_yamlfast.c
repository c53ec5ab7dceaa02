/* The loader's YAML fast path (yamlfast.c) against the libyaml path: on
 * hand-made edge cases it either gives up or reads what libyaml reads (same
 * value, key order, root line), and on every document of the real catalog
 * and of every operator's ci.yaml it does the same, reading most catalog
 * documents itself. */
#include "common.h"

#include "service/load/internal.h"

int fbc_json_same_tree(const json_t *a, const json_t *b);

/* 1: the fast path read it (and equals libyaml), 0: left to libyaml */
static int check(const char *data, size_t len, int line0)
{
	fbc_load_limits lim;
	json_t *fast = NULL, *slow = NULL;
	int lf = -1, ls = -1, rc;
	fbc_error e;

	fbc_load_limits_resolve(&lim, NULL);
	rc = fbc_yaml_fast_doc(&fast, &lf, data, len, line0, &lim);
	if (rc == 1)
		return 0;
	assert_int_equal(rc, 0);
	fbc_error_init(&e);
	if (fbc_yaml_doc_parse_libyaml(&slow, &ls, data, len, line0, &lim, &e) != 0)
		fail_msg("libyaml fails where the fast path read: %s\n---\n%.*s", e.message,
			 (int)len, data);
	if (!fbc_json_same_tree(fast, slow)) {
		char *a = json_dumps(fast, JSON_ENCODE_ANY), *b = json_dumps(slow, JSON_ENCODE_ANY);

		fail_msg("differ:\n%.*s\nfast: %s\nlibyaml: %s", (int)len, data, a, b);
	}
	assert_int_equal(lf, ls);
	json_decref(fast);
	json_decref(slow);
	return 1;
}

static void yamlfast__edge_cases(void **state)
{
	static const struct {
		const char *text;
		int fast;
	} cases[] = {
		{"a: 1\nb: true\nc: ~\nd: 0x1F\ne: 1.5\nf: -2\ng: yes\nh: 1_000\ni: +12\n", 1},
		{"---\nschema: olm.package\nname: x\n", 1},
		{"--- \n\n\nschema: x\n\n", 1},
		{"k: plain text  with  spaces   \n", 1},
		{"k: folded\n  over\n   three lines\nnext: 1\n", 1},
		{"k: with\n\n  a blank line\n\n\n  and two\n", 1},
		{"k: a:b http://x y:z\n", 1},
		{"k: 'single ''quoted'' text'\n", 1},
		{"k: 'single\n  folded\n\n  twice'\n", 1},
		{"k: \"esc \\\" \\\\ \\/ \\n \\t \\x41 \\u00e9 \\U0001F600 \\N \\_ \\L \\P \\e \\a "
		 "\\b \\v \\f \\r \\ \"\n",
		 1},
		{"k: \"escaped \\\n   line break\"\n", 1},
		{"k: \"fold  \n   me  \n\n  twice\"\n", 1},
		{"k: \"quote on\n\"\n", 1},
		{"k: \"a \\\n\"\n", 1},
		{"k: |\n  line 1\n\n  line 3\n    indented\nnext: x\n", 1},
		{"k: |-\n  strip\n\n\nnext: x\n", 1},
		{"k: |\n\n\n  leading empties\n", 1},
		{"k: |\n  content   \n    \n  spaces past the indentation\n", 1},
		{"k: |\n  no newline at the end", 1},
		{"k: |-\nnext: empty block\n", 1},
		{"k: |\n", 1},
		{"l:\n- a\n- b: 1\n  c: 2\n- - nested\n", 0},
		{"l:\n- a\n- b: 1\n  c: [ ]\n", 0},
		{"l:\n- a\n- b: 1\n  c: []\n  d: {}\n- |\n  lit\n- 'q'\n- \"dq\"\nm: x\n", 1},
		{"l:\n  - indented\n  - seq\n  -   d: far\n      e: 2\nm:\n  p:\n    q: r\n", 1},
		{"m:\n  n: boolean key\n", 0},
		{"l:\n- plain\n  continued\n- x\n", 1},
		{"e:\nf:\n", 1},
		{"dup: 1\ndup: 2\n", 1},
		{"k: value # comment\n", 0},
		{"# comment\nk: v\n", 0},
		{"k: &a v\nj: *a\n", 0},
		{"k: !!str 1\n", 0},
		{"k: .inf\n", 0},
		{"k: .nan\n", 0},
		{"true: x\n", 0},
		{"1: x\n", 0},
		{"<<: {}\n", 0},
		{"\"quoted key\": x\n", 0},
		{"k: >\n  folded\n", 0},
		{"k: |+\n  keep\n\n", 0},
		{"k: |2\n  x\n", 0},
		{"k: {a: 1}\n", 0},
		{"k:\tv\n", 0},
		{"k: v\r\n", 0},
		{"k: \"\\0\"\n", 0},
		{"k: \"\\x00\"\n", 0},
		{"k: \"\\ud800\"\n", 0},
		{"k: \"\\q\"\n", 0},
		{"k: \"unterminated\n", 0},
		{"k: v\n...\n", 0},
		{"... nP#:\n", 0}, /* a document end, then text */
		{"...: x\n", 1},
		{"k: x: y\n", 0},
		{"k:\n  scalar below\n", 0},
		{"k: v\n  - not a list\n", 1}, /* a plain continuation: "v - not a list" */
		{"k: v\n x: 1\n", 0},
		{"- root seq\n", 0},
		{"plain root\n", 0},
		{"", 0},
		{"k: \xc2\x85\n", 0},	  /* NEL */
		{"k: \xe2\x80\xa8\n", 0}, /* LS */
		{"k: \xef\xbb\xbf\n", 0}, /* BOM */
		{"k: caf\xc3\xa9 \xf0\x9f\x98\x80\n", 1},
		{"k: \xc3\x28\n", 0},
		{"k: v\nk2 : v\n", 0},
		{"k: -\n", 0},
		{"k: - x\n", 0},
		{"k: -1\nj: -x\n", 1},
		{"k: [\n", 0},
		{"k: 'a' b\n", 0},
		{"k:\n- a\n  # c\n- b\n", 0},
		{"a:\n  b:\n    c:\n      d: 1\n  e: 2\nf: 3\n", 1},
		{"a:\n    b: 1\n   c: 2\n", 0},
		{"k: |\n   three\n  two\n", 0},
		{"k: |\n  \n  x\n", 0}, /* spaces before the first line: libyaml's guess */
	};
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int got = check(cases[i].text, strlen(cases[i].text), 1 + (int)i);

		if (got != cases[i].fast)
			fail_msg("case %zu: fast path %s:\n%s", i, got ? "read it" : "gave up",
				 cases[i].text);
	}
}

/* Every document of a file, split as the loader splits YAML streams. */
static void check_file(const char *data, size_t len, size_t *docs, size_t *fast)
{
	const char *p = data, *end = data + len, *doc = NULL;
	int line = 1, doc_line = 0;

	while (p <= end) {
		const char *nl = p < end ? memchr(p, '\n', (size_t)(end - p)) : NULL;
		const char *next = nl ? nl + 1 : end;
		bool sep = next - p >= 3 && !memcmp(p, "---", 3);

		if (p == end || (sep && doc)) {
			if (doc) {
				*fast += (size_t)check(doc, (size_t)(p - doc), doc_line);
				(*docs)++;
			}
			doc = NULL;
			if (p == end)
				break;
		}
		if (!doc) {
			doc = p;
			doc_line = line;
		}
		p = next;
		line++;
	}
}

static size_t g_docs, g_fast, g_files;

static int visit(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	size_t n = strlen(path);
	FILE *f;
	char *buf;

	(void)ftw;
	if (flag != FTW_F || !((n > 5 && !strcmp(path + n - 5, ".yaml")) ||
			       (n > 4 && !strcmp(path + n - 4, ".yml"))))
		return 0;
	buf = malloc((size_t)st->st_size + 1);
	assert_non_null(buf);
	f = fopen(path, "rb");
	assert_non_null(f);
	assert_int_equal(fread(buf, 1, (size_t)st->st_size, f), (size_t)st->st_size);
	fclose(f);
	check_file(buf, (size_t)st->st_size, &g_docs, &g_fast);
	g_files++;
	free(buf);
	return 0;
}

static void walk(const char *sub, size_t *files, size_t *docs, size_t *fast)
{
	const char *base = getenv("FBC_DATA_DIR");
	char root[1024];
	struct stat st;

	snprintf(root, sizeof(root), "%s/%s", base ? base : "../shared/data", sub);
	if (stat(root, &st) != 0)
		skip();
	g_docs = g_fast = g_files = 0;
	assert_int_equal(nftw(root, visit, 16, FTW_PHYS), 0);
	*files = g_files;
	*docs = g_docs;
	*fast = g_fast;
	print_message("%s: %zu files, %zu documents, %zu read by the fast path\n", sub, *files,
		      *docs, *fast);
}

static void yamlfast__real_catalog(void **state)
{
	size_t files, docs, fast;

	(void)state;
	walk("community-operators/catalog-v4.20", &files, &docs, &fast);
	assert_int_equal(files, 37);
	assert_true(docs > 900);
	assert_true(fast * 10 >= docs * 9); /* not vacuous: nearly all take the fast path */
}

static void yamlfast__every_ci_yaml(void **state)
{
	size_t files, docs, fast;

	(void)state;
	walk("community-operators/ci", &files, &docs, &fast);
	assert_true(files > 100);
	assert_true(fast > 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(yamlfast__edge_cases),
		cmocka_unit_test(yamlfast__real_catalog),
		cmocka_unit_test(yamlfast__every_ci_yaml),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
