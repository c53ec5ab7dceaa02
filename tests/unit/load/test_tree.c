/* Tests of fbc_load_tree: the same catalog read from a directory, from a
 * memory tree and through a sub-view gives the same metas and findings in
 * the same order. */
#include "common.h"

#include <ftw.h>

#ifndef FBC_TEST_DATA_DIR
#define FBC_TEST_DATA_DIR "/work/shared/data"
#endif

/* One load's output as text: every meta row and every finding, in order. */
typedef struct result {
	seen s;
	fbc_diags d;
	int rc;
} result;

static void load_tree(result *r, fbc_tree *t, const fbc_load_limits *lim)
{
	fbc_error e;

	fbc_error_init(&e);
	memset(&r->s, 0, sizeof(r->s));
	assert_int_equal(fbc_diags_init(&r->d, 0), 0);
	r->rc = fbc_load_tree(t, lim, collect, &r->s, &r->d, &e);
	if (r->rc != 0)
		print_message("load error: %s\n", e.message);
}

static void result_dispose(result *r)
{
	seen_dispose(&r->s);
	fbc_diags_dispose(&r->d);
}

static void assert_same(const result *a, const result *b)
{
	assert_int_equal(a->rc, b->rc);
	assert_int_equal(a->s.n, b->s.n);
	for (size_t i = 0; i < a->s.n && i < MAX_SEEN; i++)
		assert_string_equal(a->s.rows[i], b->s.rows[i]);
	assert_int_equal(fbc_diags_count(&a->d), fbc_diags_count(&b->d));
	for (size_t i = 0; i < fbc_diags_count(&a->d); i++) {
		const fbc_diag *x = fbc_diags_at(&a->d, i), *y = fbc_diags_at(&b->d, i);

		assert_string_equal(x->code, y->code);
		assert_string_equal(x->file ? x->file : "-", y->file ? y->file : "-");
		assert_int_equal(x->line, y->line);
		assert_string_equal(x->message, y->message);
	}
}

/* A small catalog with something for every rule of the walk: nested
 * directories, .indexignore in two domains, files that fail (L4, L5, L6),
 * JSON streams, multi-document YAML and a file over max_file_bytes. */
static const char *const paths[] = {
	"pkg-a/catalog.yaml", "pkg-a/.indexignore", "pkg-a/notes.txt", "pkg-a/sub/more.json",
	"pkg-b/index.json",   "pkg-b/broken.json",  ".indexignore",    "ignored/x.yaml",
	"README.md",	      "z/bad.yaml",	    "z/big.yaml",      "B/upper.yaml",
};
static const char *const data[] = {
	"---\nschema: olm.package\nname: a\n---\nschema: olm.channel\npackage: a\nname: "
	"stable\nentries: []\n",
	"notes.txt\n",
	"this is ignored\n",
	"{\"schema\":\"olm.bundle\",\"package\":\"a\",\"name\":\"a.v1\"}\n"
	"{\"schema\":\"olm.bundle\",\"package\":\"a\",\"name\":\"a.v2\"}",
	"{\"schema\":\"olm.package\",\"name\":\"b\"}",
	"{\"schema\":\"olm.package\",\"name\":",
	"/ignored\n",
	"schema: [",
	"# Title\nprose\n",
	"schema: x\nname: [1\n",
	"schema: big\nname: big-big-big-big-big-big-big-big-big-big-big-big-big-big-big-big-big-"
	"big-big-big-big-big-big-big-big-big-big-big-big-big-big-big-big-big-big-big-big-big-big-"
	"big-big-big-big-big-big-big-big-big-big-big-big-big\n",
	"schema: s\nname: upper\n",
};

#define N_FILES (sizeof(paths) / sizeof(paths[0]))

static void write_dir(const char *root)
{
	for (size_t i = 0; i < N_FILES; i++)
		put_file(root, paths[i], data[i]);
}

static void open_mem(fbc_tree **t)
{
	size_t lens[N_FILES];
	fbc_error e;

	for (size_t i = 0; i < N_FILES; i++)
		lens[i] = strlen(data[i]);
	fbc_error_init(&e);
	assert_int_equal(fbc_tree_open_mem(t, paths, data, lens, N_FILES, "mem", &e), 0);
}

static void fbc_load_tree__dir_and_memory_give_the_same_result(void **state)
{
	char *root = make_tree();
	fbc_tree *dt = NULL, *mt = NULL;
	fbc_load_limits lim;
	fbc_error e;
	result a, b;

	(void)state;
	write_dir(root);
	fbc_error_init(&e);
	assert_int_equal(fbc_tree_open_dir(&dt, root, &e), 0);
	open_mem(&mt);
	fbc_load_limits_default(&lim);
	lim.max_file_bytes = 150; /* z/big.yaml is over it */
	for (unsigned threads = 1; threads <= 2; threads++) {
		lim.threads = threads;
		load_tree(&a, dt, &lim);
		load_tree(&b, mt, &lim);
		assert_int_equal(a.rc, 0);
		assert_same(&a, &b);
		/* what the walk must have seen, so the comparison is not vacuous */
		assert_int_equal(a.s.n, 6);
		assert_string_equal(a.s.rows[0], "B/upper.yaml:1 s  upper");
		assert_string_equal(a.s.rows[5], "pkg-b/index.json:1 olm.package  b");
		assert_true(find_diag(&a.d, "LIMIT") >= 0);
		assert_true(find_diag(&a.d, "L4") >= 0);
		assert_true(find_diag(&a.d, "L5") >= 0);
		assert_true(find_diag(&a.d, "L6") >= 0);
		result_dispose(&a);
		result_dispose(&b);
	}
	fbc_tree_free(dt);
	fbc_tree_free(mt);
	rm_tree(root);
}

static void fbc_load_tree__sub_view_is_the_subdirectory(void **state)
{
	char *root = make_tree();
	char sub[4200];
	fbc_tree *dt = NULL, *st = NULL, *mt = NULL, *mst = NULL;
	fbc_error e;
	result a, b, c;

	(void)state;
	write_dir(root);
	snprintf(sub, sizeof(sub), "%s/pkg-a", root);
	fbc_error_init(&e);
	assert_int_equal(fbc_tree_open_dir(&dt, sub, &e), 0);
	assert_int_equal(fbc_tree_open_dir(&st, root, &e), 0);
	open_mem(&mt);
	assert_int_equal(fbc_tree_sub(&mst, mt, "pkg-a", &e), 0);
	load_tree(&a, dt, NULL);
	fbc_tree_free(dt);
	assert_int_equal(fbc_tree_sub(&dt, st, "pkg-a", &e), 0);
	load_tree(&b, dt, NULL);
	load_tree(&c, mst, NULL);
	assert_same(&a, &b);
	assert_same(&a, &c);
	assert_int_equal(a.s.n, 4); /* notes.txt ignored by pkg-a/.indexignore */
	assert_int_equal(fbc_diags_count(&a.d), 0);
	result_dispose(&a);
	result_dispose(&b);
	result_dispose(&c);
	fbc_tree_free(dt);
	fbc_tree_free(st);
	fbc_tree_free(mst);
	fbc_tree_free(mt);
	rm_tree(root);
}

static void fbc_load_tree__links_through_the_tree(void **state)
{
	char *root = make_tree();
	char *outside = make_tree();
	char link[4200], target[4200];
	fbc_tree *t = NULL;
	fbc_error e;
	result a;

	(void)state;
	put_file(root, "real/f.yaml", "schema: s\nname: f\n");
	put_file(outside, "secret.yaml", "schema: s\nname: secret\n");
	snprintf(link, sizeof(link), "%s/a-link.yaml", root);
	assert_int_equal(symlink("real/f.yaml", link), 0);
	snprintf(link, sizeof(link), "%s/b-out.yaml", root);
	snprintf(target, sizeof(target), "%s/secret.yaml", outside);
	assert_int_equal(symlink(target, link), 0);
	snprintf(link, sizeof(link), "%s/c-dir", root);
	assert_int_equal(symlink("real", link), 0);
	snprintf(link, sizeof(link), "%s/d-dangling", root);
	assert_int_equal(symlink("nothing-here", link), 0);
	snprintf(link, sizeof(link), "%s/e-fifo", root);
	assert_int_equal(mkfifo(link, 0644), 0);
	snprintf(link, sizeof(link), "%s/f-fifo-link", root);
	assert_int_equal(symlink("e-fifo", link), 0); /* must not hang either */
	fbc_error_init(&e);
	assert_int_equal(fbc_tree_open_dir(&t, root, &e), 0);
	load_tree(&a, t, NULL);
	assert_int_equal(a.rc, 0);
	assert_int_equal(a.s.n, 2);
	assert_string_equal(a.s.rows[0], "a-link.yaml:1 s  f");
	assert_string_equal(a.s.rows[1], "real/f.yaml:1 s  f");
	assert_int_equal(fbc_diags_count(&a.d), 5);
	assert_string_equal(fbc_diags_at(&a.d, 0)->message,
			    "open b-out.yaml: symlink resolves outside the catalog root");
	assert_string_equal(fbc_diags_at(&a.d, 1)->message, "read c-dir: is a directory");
	assert_string_equal(fbc_diags_at(&a.d, 2)->message,
			    "open d-dangling: No such file or directory");
	assert_string_equal(fbc_diags_at(&a.d, 3)->message, "read e-fifo: not a regular file");
	assert_string_equal(fbc_diags_at(&a.d, 4)->message, "read f-fifo-link: not a regular file");
	for (size_t i = 0; i < 5; i++)
		assert_string_equal(fbc_diags_at(&a.d, i)->code, "L1");
	result_dispose(&a);
	fbc_tree_free(t);
	rm_tree(root);
	rm_tree(outside);
}

/* The real catalog, read into a memory tree file by file. */
static fbc_vec mem_paths, mem_data, mem_lens;
static const char *real_root;

static int gather(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
	FILE *f;
	char *buf;

	(void)ftw;
	if (flag != FTW_F)
		return 0;
	buf = malloc((size_t)st->st_size + 1);
	f = fopen(p, "rb");
	if (!buf || !f || fread(buf, 1, (size_t)st->st_size, f) != (size_t)st->st_size)
		return 1;
	fclose(f);
	*(char **)fbc_vec_push(&mem_paths) = strdup(p + strlen(real_root) + 1);
	*(char **)fbc_vec_push(&mem_data) = buf;
	*(size_t *)fbc_vec_push(&mem_lens) = (size_t)st->st_size;
	return 0;
}

static void fbc_load_tree__real_catalog_from_memory_equals_directory(void **state)
{
	char root[4096];
	fbc_tree *dt = NULL, *mt = NULL;
	fbc_error e;
	result a, b;

	(void)state;
	snprintf(root, sizeof(root), "%s/community-operators/catalog-v4.20", FBC_TEST_DATA_DIR);
	if (access(root, R_OK) != 0)
		skip();
	real_root = root;
	fbc_vec_init(&mem_paths, sizeof(char *));
	fbc_vec_init(&mem_data, sizeof(char *));
	fbc_vec_init(&mem_lens, sizeof(size_t));
	assert_int_equal(nftw(root, gather, 16, FTW_PHYS), 0);
	fbc_error_init(&e);
	assert_int_equal(fbc_tree_open_mem(&mt, (const char *const *)mem_paths.items,
					   (const char *const *)mem_data.items, mem_lens.items,
					   mem_paths.len, "mem", &e),
			 0);
	for (size_t i = 0; i < mem_paths.len; i++) {
		free(*FBC_VEC_AT(&mem_paths, char *, i));
		free(*FBC_VEC_AT(&mem_data, char *, i));
	}
	fbc_vec_dispose(&mem_paths);
	fbc_vec_dispose(&mem_data);
	fbc_vec_dispose(&mem_lens);
	assert_int_equal(fbc_tree_open_dir(&dt, root, &e), 0);
	load_tree(&a, dt, NULL);
	load_tree(&b, mt, NULL);
	assert_int_equal(a.rc, 0);
	assert_int_equal(a.s.packages, 37);
	assert_same(&a, &b);
	result_dispose(&a);
	result_dispose(&b);
	fbc_tree_free(dt);
	fbc_tree_free(mt);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(fbc_load_tree__dir_and_memory_give_the_same_result),
		cmocka_unit_test(fbc_load_tree__sub_view_is_the_subdirectory),
		cmocka_unit_test(fbc_load_tree__links_through_the_tree),
		cmocka_unit_test(fbc_load_tree__real_catalog_from_memory_equals_directory),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
