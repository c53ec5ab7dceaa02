/* Tests of fbc_load_dir: walk order, file selection, symlinks, .indexignore,
 * tree limits, threads, and the real community catalog. */
#include "common.h"

#include "service/load/ignore.h"
#include "service/load/json_arena.h"

#ifndef FBC_TEST_DATA_DIR
#define FBC_TEST_DATA_DIR "/work/shared/data"
#endif

static int load_dir(const char *root, const fbc_load_limits *lim, seen *s, fbc_diags *d)
{
	fbc_error e;
	int rc;

	fbc_error_init(&e);
	memset(s, 0, sizeof(*s));
	assert_int_equal(fbc_diags_init(d, 0), 0);
	rc = fbc_load_dir(root, lim, collect, s, d, &e);
	if (rc != 0)
		print_message("load error: %s\n", e.message);
	return rc;
}

static void fbc_load_dir__walks_lexically_and_parses_every_name(void **state)
{
	char *root = make_tree();
	seen s;
	fbc_diags d;

	put_file(root, "b.json", "{\"schema\":\"s\",\"name\":\"b\"}");
	put_file(root, "a/x.yaml", "schema: s\nname: ax\n");
	put_file(root, "a.json", "{\"schema\":\"s\",\"name\":\"a.json\"}");
	put_file(root, "A/z", "schema: s\nname: Az\n");
	put_file(root, "catalog", "schema: s\nname: noext\n");
	put_file(root, "empty.yaml", "");
	put_file(root, "README.md", "# Title\nSome prose.\n");
	assert_int_equal(load_dir(root, NULL, &s, &d), 0);
	assert_int_equal(s.n, 5);
	assert_string_equal(s.rows[0], "A/z:1 s  Az");
	assert_string_equal(s.rows[1], "a/x.yaml:1 s  ax");
	assert_string_equal(s.rows[2], "a.json:1 s  a.json");
	assert_string_equal(s.rows[3], "b.json:1 s  b");
	assert_string_equal(s.rows[4], "catalog:1 s  noext");
	/* the README is parsed as FBC and fails */
	assert_int_equal(fbc_diags_count(&d), 1);
	assert_string_equal(fbc_diags_at(&d, 0)->code, "L6");
	assert_string_equal(fbc_diags_at(&d, 0)->file, "README.md");
	seen_dispose(&s);
	fbc_diags_dispose(&d);
	rm_tree(root);
}

/* The line of each blob of a JSON stream, whichever parser read the blobs
 * before it: the fast path (which counts the lines it passes) or jansson (a
 * real number, an escape in a key), pretty-printed or not. */
static void fbc_load_dir__json_stream_lines(void **state)
{
	char *root = make_tree();
	seen s;
	fbc_diags d;

	(void)state;
	put_file(root, "c.json",
		 "{\n  \"schema\": \"s\",\n  \"name\": \"one\"\n}\n"		   /* 1-4 */
		 "\n\n"								   /* 5-6 */
		 "{\"schema\":\"s\",\"name\":\"two\",\"x\":1.5}\n"		   /* 7: jansson */
		 "{\n\"schema\":\"s\",\n\"name\":\"three\",\n\"y\":[\n1,\n2\n]\n}" /* 8-15 */
		 "  {\"schema\":\"s\",\"name\":\"four\"}\r\n"			   /* 15 */
		 "{\"sch\\u0065ma\":\"s\",\n\"name\":\"five\"}\n" /* 16-17: jansson */
		 "\t{\"schema\":\"s\",\n\n\"name\":\"six\"}\n"	  /* 18-20 */
		 "{\"name\":\"seven\"}\n");			  /* 21: L9 */
	assert_int_equal(load_dir(root, NULL, &s, &d), 0);
	assert_int_equal(s.n, 6);
	assert_string_equal(s.rows[0], "c.json:1 s  one");
	assert_string_equal(s.rows[1], "c.json:7 s  two");
	assert_string_equal(s.rows[2], "c.json:8 s  three");
	assert_string_equal(s.rows[3], "c.json:15 s  four");
	assert_string_equal(s.rows[4], "c.json:16 s  five");
	assert_string_equal(s.rows[5], "c.json:18 s  six");
	assert_int_equal(fbc_diags_count(&d), 1);
	assert_string_equal(fbc_diags_at(&d, 0)->code, "L9");
	assert_int_equal(fbc_diags_at(&d, 0)->line, 21);
	seen_dispose(&s);
	fbc_diags_dispose(&d);
	rm_tree(root);
}

static void fbc_load_dir__root_must_be_a_directory(void **state)
{
	char *root = make_tree();
	char file[4200];
	fbc_error e;
	seen s;
	fbc_diags d;

	put_file(root, "f.json", "{}");
	snprintf(file, sizeof(file), "%s/f.json", root);
	fbc_error_init(&e);
	memset(&s, 0, sizeof(s));
	assert_int_equal(fbc_diags_init(&d, 0), 0);
	assert_int_equal(fbc_load_dir(file, NULL, collect, &s, &d, &e), FBC_EINVAL);
	assert_non_null(strstr(e.message, "is not a directory"));
	assert_int_equal(fbc_load_dir("/nonexistent/fbc", NULL, collect, &s, &d, &e),
			 FBC_ENOTFOUND);
	fbc_diags_dispose(&d);
	rm_tree(root);
}

static void fbc_load_dir__empty_tree_is_valid(void **state)
{
	char *root = make_tree();
	seen s;
	fbc_diags d;

	assert_int_equal(load_dir(root, NULL, &s, &d), 0);
	assert_int_equal(s.n, 0);
	assert_int_equal(fbc_diags_count(&d), 0);
	fbc_diags_dispose(&d);
	rm_tree(root);
}

static void fbc_load_dir__symlinks(void **state)
{
	char *root = make_tree();
	char *outside = make_tree();
	char link[4200], target[4200];
	seen s;
	fbc_diags d;
	int i;

	put_file(root, "real/f.yaml", "schema: s\nname: real\n");
	put_file(outside, "secret.yaml", "schema: s\nname: secret\n");
	snprintf(link, sizeof(link), "%s/inside.yaml", root);
	assert_int_equal(symlink("real/f.yaml", link), 0);
	snprintf(link, sizeof(link), "%s/escape.yaml", root);
	snprintf(target, sizeof(target), "%s/secret.yaml", outside);
	assert_int_equal(symlink(target, link), 0);
	snprintf(link, sizeof(link), "%s/dirlink", root);
	assert_int_equal(symlink("real", link), 0);
	assert_int_equal(load_dir(root, NULL, &s, &d), 0);
	/* dirlink (finding), escape (finding), inside, real/f.yaml */
	assert_int_equal(s.n, 2);
	assert_string_equal(s.rows[0], "inside.yaml:1 s  real");
	assert_string_equal(s.rows[1], "real/f.yaml:1 s  real");
	assert_int_equal(fbc_diags_count(&d), 2);
	i = find_diag(&d, "L1");
	assert_true(i >= 0);
	assert_string_equal(fbc_diags_at(&d, 0)->file, "dirlink");
	assert_non_null(strstr(fbc_diags_at(&d, 0)->message, "is a directory"));
	assert_string_equal(fbc_diags_at(&d, 1)->file, "escape.yaml");
	assert_non_null(strstr(fbc_diags_at(&d, 1)->message, "outside the catalog root"));
	seen_dispose(&s);
	fbc_diags_dispose(&d);
	rm_tree(root);
	rm_tree(outside);
}

static void fbc_load_dir__unreadable_file_is_l1(void **state)
{
	char *root = make_tree();
	char path[4200];
	seen s;
	fbc_diags d;

	put_file(root, "a.yaml", "schema: s\n");
	put_file(root, "b.yaml", "schema: s\n");
	snprintf(path, sizeof(path), "%s/0fifo", root);
	assert_int_equal(mkfifo(path, 0644), 0); /* must not hang the load */
	snprintf(path, sizeof(path), "%s/a.yaml", root);
	chmod(path, 0);
	assert_int_equal(load_dir(root, NULL, &s, &d), 0);
	assert_string_equal(fbc_diags_at(&d, 0)->code, "L1");
	assert_string_equal(fbc_diags_at(&d, 0)->file, "0fifo");
	if (geteuid() != 0) { /* root reads anything */
		assert_int_equal(s.n, 1);
		assert_string_equal(fbc_diags_at(&d, 1)->code, "L1");
		assert_non_null(strstr(fbc_diags_at(&d, 1)->message, "Permission denied"));
	}
	seen_dispose(&s);
	fbc_diags_dispose(&d);
	rm_tree(root);
}

static void fbc_load_dir__indexignore_examples(void **state)
{
	char *root = make_tree();
	seen s;
	fbc_diags d;
	const char *ok = "schema: s\n";

	put_file(root, ".indexignore",
		 "# comment\n\n  /draft.yaml  \n*.md\nscratch/\nsub/\nfoo/**/bar.json\n"
		 "sub2/x.json\n");
	put_file(root, "sub/.indexignore", "!keep.json\n");
	put_file(root, "draft.yaml", "bad: [");
	put_file(root, "x/draft.yaml", ok);
	put_file(root, "README.md", "prose");
	put_file(root, "a/b/README.md", "prose");
	put_file(root, "scratch/a.json", "{");
	put_file(root, "x/scratch/b.json", "{");
	put_file(root, "z/scratch", ok); /* not a directory: dir-only does not match */
	put_file(root, "sub/keep.json", "{\"schema\":\"s\"}");
	put_file(root, "sub/other.json", "{");
	put_file(root, "foo/bar.json", "{");
	put_file(root, "foo/a/b/bar.json", "{");
	put_file(root, "foo/bar.jsonx", ok);
	put_file(root, "sub2/x.json", "{");
	put_file(root, "y/sub2/x.json", ok);
	assert_int_equal(load_dir(root, NULL, &s, &d), 0);
	for (size_t i = 0; i < fbc_diags_count(&d); i++)
		print_message("finding %s %s\n", fbc_diags_at(&d, i)->file,
			      fbc_diags_at(&d, i)->message);
	assert_int_equal(fbc_diags_count(&d), 0);
	assert_int_equal(s.n, 5);
	assert_string_equal(s.rows[0], "foo/bar.jsonx:1 s  ");
	assert_string_equal(s.rows[1], "sub/keep.json:1 s  ");
	assert_string_equal(s.rows[2], "x/draft.yaml:1 s  ");
	assert_string_equal(s.rows[3], "y/sub2/x.json:1 s  ");
	assert_string_equal(s.rows[4], "z/scratch:1 s  ");
	seen_dispose(&s);
	fbc_diags_dispose(&d);
	rm_tree(root);
}

/* Files the walk meets before the .indexignore of a directory above them
 * (names that sort before ".indexignore", and what is under them) are matched
 * against its patterns too, and in pattern order (the later file's win),
 * while the worker threads already parse what the walk has decided on. */
static void fbc_load_dir__indexignore_read_after_files_it_ignores(void **state)
{
	char *root = make_tree();
	fbc_load_limits lim;
	seen s;
	fbc_diags d;
	const char *ok = "schema: s\n";

	(void)state;
	fbc_load_limits_default(&lim);
	lim.threads = 2;
	put_file(root, "+early.json", "{");
	put_file(root, "-dir/a.json", "{");
	put_file(root, "-dir/keep.json", ok);
	put_file(root, "-dir/-sub/b.json", "{");
	/* walked before the root's: its pattern comes first, the root's wins */
	put_file(root, "-dir/.indexignore", "!a.json\n");
	put_file(root, ".indexignore", "+early.json\na.json\nb.json\n");
	for (int i = 0; i < 40; i++) {
		char rel[64];

		snprintf(rel, sizeof(rel), "p%02d/c.yaml", i);
		put_file(root, rel, ok);
	}
	put_file(root, "p07/.indexignore", "c.yaml\n");
	assert_int_equal(load_dir(root, &lim, &s, &d), 0);
	for (size_t i = 0; i < fbc_diags_count(&d); i++)
		print_message("finding %s %s\n", fbc_diags_at(&d, i)->file,
			      fbc_diags_at(&d, i)->message);
	assert_int_equal(fbc_diags_count(&d), 0);
	assert_int_equal(s.n, 40);
	assert_string_equal(s.rows[0], "-dir/keep.json:1 s  ");
	assert_string_equal(s.rows[1], "p00/c.yaml:1 s  ");
	assert_string_equal(s.rows[7], "p06/c.yaml:1 s  ");
	assert_string_equal(s.rows[8], "p08/c.yaml:1 s  ");
	assert_string_equal(s.rows[39], "p39/c.yaml:1 s  ");
	seen_dispose(&s);
	fbc_diags_dispose(&d);
	rm_tree(root);
}

static void fbc_ignore_match__domains_and_anchoring(void **state)
{
	fbc_ignore *ig = NULL;
	fbc_error e;

	fbc_error_init(&e);
	assert_int_equal(fbc_ignore_create(&ig, &e), 0);
	assert_true(fbc_ignore_match(ig, ".indexignore"));
	assert_true(fbc_ignore_match(ig, "a/b/.indexignore"));
	assert_int_equal(fbc_ignore_add_pattern(ig, "", "/x", &e), 0);
	assert_int_equal(fbc_ignore_add_pattern(ig, "d", "y", &e), 0);
	assert_int_equal(fbc_ignore_add_pattern(ig, "d", "z/w", &e), 0);
	assert_true(fbc_ignore_match(ig, "x"));
	assert_false(fbc_ignore_match(ig, "sub/x"));
	assert_true(fbc_ignore_match(ig, "x/anything")); /* a matched directory */
	assert_true(fbc_ignore_match(ig, "d/y"));
	assert_true(fbc_ignore_match(ig, "d/q/y"));
	assert_false(fbc_ignore_match(ig, "y")); /* outside the domain */
	assert_false(fbc_ignore_match(ig, "d"));
	assert_true(fbc_ignore_match(ig, "d/z/w"));
	assert_false(fbc_ignore_match(ig, "d/q/z/w"));
	/* later patterns win */
	assert_int_equal(fbc_ignore_add_pattern(ig, "", "!/x", &e), 0);
	assert_false(fbc_ignore_match(ig, "x"));
	assert_int_equal(fbc_ignore_add_pattern(ig, "", "**/gen", &e), 0);
	assert_true(fbc_ignore_match(ig, "gen"));
	assert_true(fbc_ignore_match(ig, "a/b/gen"));
	assert_true(fbc_ignore_match(ig, "a/gen/f"));
	assert_int_equal(fbc_ignore_add_pattern(ig, "", "keep/**", &e), 0);
	assert_true(fbc_ignore_match(ig, "keep/a/b"));
	assert_false(fbc_ignore_match(ig, "other/keep"));
	fbc_ignore_free(ig);
}

static void fbc_ignore_glob__segments(void **state)
{
	assert_true(fbc_ignore_glob("*.md", "README.md"));
	assert_false(fbc_ignore_glob("*.md", "README.mdx"));
	assert_true(fbc_ignore_glob("a?c", "abc"));
	assert_true(fbc_ignore_glob("a?c", "a\xc3\xa9"
					   "c"));
	assert_true(fbc_ignore_glob("[a-c]x", "bx"));
	assert_false(fbc_ignore_glob("[^a-c]x", "bx"));
	assert_true(fbc_ignore_glob("[^a-c]x", "dx"));
	assert_true(fbc_ignore_glob("\\*", "*"));
	assert_false(fbc_ignore_glob("\\*", "a"));
	assert_false(fbc_ignore_glob("[", "["));  /* malformed: never matches */
	assert_false(fbc_ignore_glob("[]", "]")); /* empty class is malformed */
	assert_true(fbc_ignore_glob("*a*b*", "xxaybzz"));
	assert_false(fbc_ignore_glob("*a*b*", "xxbyazz"));
	assert_false(fbc_ignore_glob("README.MD", "README.md")); /* case-sensitive */
}

static void fbc_load_dir__file_limits(void **state)
{
	char *root = make_tree();
	fbc_load_limits lim;
	seen s;
	fbc_diags d;

	put_file(root, "a.yaml", "schema: s\n");
	put_file(root, "b.yaml", "schema: s\n");
	put_file(root, "c.yaml", "schema: s\n");
	fbc_load_limits_default(&lim);
	lim.max_files = 2;
	assert_int_equal(load_dir(root, &lim, &s, &d), 0);
	assert_int_equal(s.n, 2);
	assert_int_equal(fbc_diags_count(&d), 1);
	assert_string_equal(fbc_diags_at(&d, 0)->code, "LIMIT");
	assert_string_equal(fbc_diags_at(&d, 0)->file, "c.yaml");
	assert_non_null(strstr(fbc_diags_at(&d, 0)->message, "max_files"));
	seen_dispose(&s);
	fbc_diags_dispose(&d);
	fbc_load_limits_default(&lim);
	lim.max_total_bytes = 15;
	assert_int_equal(load_dir(root, &lim, &s, &d), 0);
	assert_int_equal(s.n, 1);
	assert_non_null(strstr(fbc_diags_at(&d, 0)->message, "max_total_bytes"));
	seen_dispose(&s);
	fbc_diags_dispose(&d);
	fbc_load_limits_default(&lim);
	lim.max_file_bytes = 5;
	assert_int_equal(load_dir(root, &lim, &s, &d), 0);
	assert_int_equal(s.n, 0);
	assert_int_equal(fbc_diags_count(&d), 3);
	assert_string_equal(fbc_diags_at(&d, 2)->code, "LIMIT");
	assert_non_null(strstr(fbc_diags_at(&d, 2)->message, "max_file_bytes"));
	seen_dispose(&s);
	fbc_diags_dispose(&d);
	rm_tree(root);
}

static void fbc_load_dir__order_is_deterministic_with_threads(void **state)
{
	char *root = make_tree();
	fbc_load_limits lim;
	seen one, many;
	fbc_diags d1, d2;
	char name[64], body[256];

	for (int i = 0; i < 60; i++) {
		snprintf(name, sizeof(name), "d%d/f%02d.yaml", i % 7, i);
		/* uneven sizes so that workers finish out of order */
		snprintf(body, sizeof(body), "schema: s\nname: n%d\n---\nschema: t\nname: m%d\n%s",
			 i, i, i % 5 == 0 ? "---\nbad: [\n" : "");
		put_file(root, name, body);
	}
	fbc_load_limits_default(&lim);
	lim.threads = 1;
	assert_int_equal(load_dir(root, &lim, &one, &d1), 0);
	lim.threads = 4;
	assert_int_equal(load_dir(root, &lim, &many, &d2), 0);
	assert_int_equal(one.n, 120);
	assert_int_equal(many.n, one.n);
	for (size_t i = 0; i < one.n; i++)
		assert_string_equal(one.rows[i], many.rows[i]);
	assert_int_equal(fbc_diags_count(&d1), 12);
	assert_int_equal(fbc_diags_count(&d2), 12);
	for (size_t i = 0; i < fbc_diags_count(&d1); i++) {
		assert_string_equal(fbc_diags_at(&d1, i)->file, fbc_diags_at(&d2, i)->file);
		assert_int_equal(fbc_diags_at(&d1, i)->line, 7);
	}
	seen_dispose(&one);
	seen_dispose(&many);
	fbc_diags_dispose(&d1);
	fbc_diags_dispose(&d2);
	rm_tree(root);
}

/* A parser thread reads its files into one buffer reused from file to file:
 * a smaller file after a larger one sees its own bytes only (the larger
 * file's tail would add a "ghost" document), an empty file none, and a
 * larger file grows the buffer; the same with one thread and with two. */
static void fbc_load_dir__reused_buffer_holds_only_each_file(void **state)
{
	char *root = make_tree();
	size_t big = 300000;
	char *body = malloc(big + 64), *bigger = malloc(2 * big + 64);
	fbc_load_limits lim;

	assert_non_null(body);
	assert_non_null(bigger);
	const size_t k = strlen("schema: s\nname: ");

	memcpy(body, "schema: s\nname: ", k);
	memset(body + k, 'a', big);
	strcpy(body + k + big, "\n---\nschema: s\nname: ghost\n");
	put_file(root, "a1.yaml", body);
	put_file(root, "a2.yaml", "schema: s\nname: b\n");
	put_file(root, "a3.yaml", "");
	put_file(root, "a4.json", "{\"schema\":\"s\",\"name\":\"c\"}");
	memcpy(bigger, "schema: s\nname: ", k);
	memset(bigger + k, 'z', 2 * big);
	strcpy(bigger + k + 2 * big, "\n");
	put_file(root, "a5.yaml", bigger);
	put_file(root, "a6.yaml", "schema: s\nname: d\n");
	fbc_load_limits_default(&lim);
	for (unsigned threads = 1; threads <= 2; threads++) {
		seen s;
		fbc_diags d;

		lim.threads = threads;
		assert_int_equal(load_dir(root, &lim, &s, &d), 0);
		assert_int_equal(fbc_diags_count(&d), 0);
		assert_int_equal(s.n, 6);
		assert_string_equal(s.rows[1], "a1.yaml:4 s  ghost");
		assert_string_equal(s.rows[2], "a2.yaml:1 s  b");
		assert_string_equal(s.rows[3], "a4.json:1 s  c");
		assert_string_equal(s.rows[5], "a6.yaml:1 s  d");
		seen_dispose(&s);
		fbc_diags_dispose(&d);
	}
	free(body);
	free(bigger);
	rm_tree(root);
}

static void fbc_load_dir__callback_error_stops_threads(void **state)
{
	char *root = make_tree();
	fbc_load_limits lim;
	fbc_error e;
	seen s;
	fbc_diags d;
	char name[64];

	for (int i = 0; i < 40; i++) {
		snprintf(name, sizeof(name), "f%02d.yaml", i);
		put_file(root, name, "schema: s\n");
	}
	fbc_load_limits_default(&lim);
	lim.threads = 3;
	memset(&s, 0, sizeof(s));
	s.stop_after = 5;
	fbc_error_init(&e);
	assert_int_equal(fbc_diags_init(&d, 0), 0);
	assert_int_equal(fbc_load_dir(root, &lim, collect, &s, &d, &e), FBC_ECONFLICT);
	assert_int_equal(s.n, 5);
	seen_dispose(&s);
	fbc_diags_dispose(&d);
	rm_tree(root);
}

/* A load that ends while the walk is still going on (an error from the
 * callback, the max_blobs limit: delivery happens between directories)
 * delivers exactly what a load that walks first would, and stops the walk
 * and the workers (ASan: nothing left behind). */
static void fbc_load_dir__stops_while_walking(void **state)
{
	char *root = make_tree();
	fbc_load_limits lim;
	fbc_error e;
	seen s;
	fbc_diags d;
	char name[64];

	(void)state;
	for (int i = 0; i < 300; i++) {
		snprintf(name, sizeof(name), "d%03d/f.yaml", i);
		put_file(root, name, "schema: s\n---\nschema: t\n");
	}
	fbc_load_limits_default(&lim);
	lim.threads = 2;
	for (int round = 0; round < 2; round++) {
		memset(&s, 0, sizeof(s));
		s.stop_after = round == 0 ? 7 : 0;
		lim.max_blobs = round == 0 ? lim.max_blobs : 9;
		fbc_error_init(&e);
		assert_int_equal(fbc_diags_init(&d, 0), 0);
		assert_int_equal(fbc_load_dir(root, &lim, collect, &s, &d, &e),
				 round == 0 ? FBC_ECONFLICT : 0);
		assert_int_equal(s.n, round == 0 ? 7 : 9);
		assert_string_equal(s.rows[0], "d000/f.yaml:1 s  ");
		assert_string_equal(s.rows[s.n - 1],
				    round == 0 ? "d003/f.yaml:1 s  " : "d004/f.yaml:1 s  ");
		assert_int_equal(fbc_diags_count(&d), round == 0 ? 0 : 1);
		if (round == 1)
			assert_string_equal(fbc_diags_at(&d, 0)->file, "d004/f.yaml");
		seen_dispose(&s);
		fbc_diags_dispose(&d);
	}
	rm_tree(root);
}

/* Staged loads: prepare runs on the workers with the blob, fn gets only its
 * result, in the same order as a plain load; undelivered results are
 * discarded (ASan would report a leak otherwise). */
typedef struct stage_ctx {
	size_t prepared[FBC_LOAD_MAX_WORKERS]; /* per worker: no lock needed */
	size_t discarded;		       /* main thread only */
	size_t in_arena[FBC_LOAD_MAX_WORKERS]; /* blobs prepare saw in its thread's arena */
	bool blob_in_fn;
	seen s;
} stage_ctx;

static void *stage_prepare(void *ctx, unsigned worker, const fbc_meta *m)
{
	stage_ctx *c = ctx;
	char *row = NULL;

	if (worker >= FBC_LOAD_MAX_WORKERS || m->blob == NULL)
		return NULL;
	c->prepared[worker]++;
	/* main() installed the arenas: every tree of a staged parse is in one */
	if (fbc_json_arena_active() && fbc_json_arena_used() > 0)
		c->in_arena[worker]++;
	if (asprintf(&row, "%s:%d %s %s %s", m->loc.file ? m->loc.file : "-", m->loc.line,
		     m->schema, m->package, m->name) < 0)
		return NULL;
	return row;
}

static void stage_discard(void *ctx, void *prepared)
{
	stage_ctx *c = ctx;

	c->discarded++;
	free(prepared);
}

static int stage_fn(void *ctx, const fbc_meta *m, fbc_error *err)
{
	stage_ctx *c = ctx;

	if (m->blob != NULL || m->schema != NULL)
		c->blob_in_fn = true;
	if (m->prepared == NULL)
		return fbc_error_set(err, FBC_ENOMEM, NULL, "prepare failed");
	if (c->s.n < MAX_SEEN)
		c->s.rows[c->s.n] = m->prepared;
	else
		free(m->prepared);
	c->s.n++;
	if (c->s.stop_after > 0 && c->s.n >= (size_t)c->s.stop_after)
		return fbc_error_set(err, FBC_ECONFLICT, NULL, "stop requested");
	return 0;
}

static void fbc_load_dir_staged__prepares_on_workers_in_load_order(void **state)
{
	char *root = make_tree();
	fbc_load_limits lim;
	fbc_load_stage st = {.prepare = stage_prepare, .discard = stage_discard};
	stage_ctx c;
	seen plain;
	fbc_diags d1, d2;
	fbc_error e;
	char name[64], body[256];
	size_t total = 0;

	for (int i = 0; i < 60; i++) {
		snprintf(name, sizeof(name), "d%d/f%02d.yaml", i % 7, i);
		snprintf(body, sizeof(body), "schema: s\nname: n%d\n---\nschema: t\nname: m%d\n%s",
			 i, i, i % 5 == 0 ? "---\nbad: [\n" : "");
		put_file(root, name, body);
	}
	put_file(root, "z.json", "{\"schema\":\"j\",\"package\":\"p\",\"name\":\"x\"}\n{}");
	fbc_load_limits_default(&lim);
	lim.threads = 3;
	assert_int_equal(load_dir(root, &lim, &plain, &d1), 0);
	memset(&c, 0, sizeof(c));
	st.ctx = &c;
	fbc_error_init(&e);
	assert_int_equal(fbc_diags_init(&d2, 0), 0);
	assert_int_equal(fbc_load_dir_staged(root, &lim, &st, stage_fn, &c, &d2, &e), 0);
	assert_false(c.blob_in_fn);
	assert_int_equal(c.s.n, 121);
	assert_int_equal(c.s.n, plain.n);
	for (size_t i = 0; i < plain.n; i++)
		assert_string_equal(c.s.rows[i], plain.rows[i]);
	for (size_t w = 0; w < FBC_LOAD_MAX_WORKERS; w++) {
		total += c.prepared[w];
		assert_int_equal(c.in_arena[w], c.prepared[w]);
	}
	assert_int_equal(total, 121);
	assert_int_equal(c.discarded, 0);
	assert_false(fbc_json_arena_active()); /* never on the calling thread's own allocations */
	/* the same findings, in the same order */
	assert_int_equal(fbc_diags_count(&d2), fbc_diags_count(&d1));
	for (size_t i = 0; i < fbc_diags_count(&d1); i++) {
		assert_string_equal(fbc_diags_at(&d2, i)->code, fbc_diags_at(&d1, i)->code);
		assert_string_equal(fbc_diags_at(&d2, i)->file, fbc_diags_at(&d1, i)->file);
		assert_int_equal(fbc_diags_at(&d2, i)->line, fbc_diags_at(&d1, i)->line);
	}
	seen_dispose(&c.s);
	fbc_diags_dispose(&d2);

	/* one thread: the calling thread parses, in an arena of its own */
	lim.threads = 1;
	memset(&c, 0, sizeof(c));
	assert_int_equal(fbc_diags_init(&d2, 0), 0);
	assert_int_equal(fbc_load_dir_staged(root, &lim, &st, stage_fn, &c, &d2, &e), 0);
	assert_int_equal(c.s.n, plain.n);
	for (size_t i = 0; i < plain.n; i++)
		assert_string_equal(c.s.rows[i], plain.rows[i]);
	assert_int_equal(c.prepared[0], 121);
	assert_int_equal(c.in_arena[0], 121);
	assert_int_equal(fbc_diags_count(&d2), fbc_diags_count(&d1));
	assert_false(fbc_json_arena_active());
	seen_dispose(&c.s);
	fbc_diags_dispose(&d2);
	lim.threads = 3;

	/* stopped early: every result is either delivered or discarded */
	memset(&c, 0, sizeof(c));
	c.s.stop_after = 7;
	assert_int_equal(fbc_diags_init(&d2, 0), 0);
	assert_int_equal(fbc_load_dir_staged(root, &lim, &st, stage_fn, &c, &d2, &e),
			 FBC_ECONFLICT);
	assert_int_equal(c.s.n, 7);
	total = 0;
	for (size_t w = 0; w < FBC_LOAD_MAX_WORKERS; w++)
		total += c.prepared[w];
	assert_int_equal(total, c.s.n + c.discarded);
	seen_dispose(&c.s);
	seen_dispose(&plain);
	fbc_diags_dispose(&d1);
	fbc_diags_dispose(&d2);
	rm_tree(root);
}

static void fbc_load_dir__real_catalog(void **state)
{
	char root[4096];
	seen s;
	fbc_diags d;
	struct stat st;

	snprintf(root, sizeof(root), "%s/community-operators/catalog-v4.20", FBC_TEST_DATA_DIR);
	if (stat(root, &st) != 0)
		skip();
	assert_int_equal(load_dir(root, NULL, &s, &d), 0);
	assert_int_equal(fbc_diags_count(&d), 0);
	assert_int_equal(s.packages, 37);
	assert_true(s.n > 37);
	seen_dispose(&s);
	fbc_diags_dispose(&d);
}

int main(void)
{
	fbc_json_arena_install(); /* as fbcd does: staged parses use the arenas */
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(fbc_load_dir__walks_lexically_and_parses_every_name),
		cmocka_unit_test(fbc_load_dir__json_stream_lines),
		cmocka_unit_test(fbc_load_dir__root_must_be_a_directory),
		cmocka_unit_test(fbc_load_dir__empty_tree_is_valid),
		cmocka_unit_test(fbc_load_dir__symlinks),
		cmocka_unit_test(fbc_load_dir__unreadable_file_is_l1),
		cmocka_unit_test(fbc_load_dir__indexignore_examples),
		cmocka_unit_test(fbc_load_dir__indexignore_read_after_files_it_ignores),
		cmocka_unit_test(fbc_ignore_match__domains_and_anchoring),
		cmocka_unit_test(fbc_ignore_glob__segments),
		cmocka_unit_test(fbc_load_dir__file_limits),
		cmocka_unit_test(fbc_load_dir__order_is_deterministic_with_threads),
		cmocka_unit_test(fbc_load_dir__reused_buffer_holds_only_each_file),
		cmocka_unit_test(fbc_load_dir__callback_error_stops_threads),
		cmocka_unit_test(fbc_load_dir__stops_while_walking),
		cmocka_unit_test(fbc_load_dir_staged__prepares_on_workers_in_load_order),
		cmocka_unit_test(fbc_load_dir__real_catalog),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
