/* fbc_tree: the directory, memory and sub-view backends behave alike. */
#include "service/base/tree.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char tmpl[64];

static void put(const char *rel, const char *text)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", tmpl, rel);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static int setup_dir(void **state)
{
	char p[256];

	snprintf(tmpl, sizeof(tmpl), "/tmp/fbcd-tree-XXXXXX");
	assert_non_null(mkdtemp(tmpl));
	snprintf(p, sizeof(p), "%s/a", tmpl);
	mkdir(p, 0755);
	snprintf(p, sizeof(p), "%s/a/b", tmpl);
	mkdir(p, 0755);
	put("a/x.yaml", "x: 1\n");
	put("a/b/y.json", "{}");
	put("top", "0123456789");
	snprintf(p, sizeof(p), "%s/a/link", tmpl);
	assert_int_equal(symlink("b/y.json", p), 0);
	snprintf(p, sizeof(p), "%s/a/out", tmpl);
	assert_int_equal(symlink("/etc/hostname", p), 0);
	snprintf(p, sizeof(p), "%s/a/up", tmpl);
	assert_int_equal(symlink("../top", p), 0);
	return 0;
}

static int teardown_dir(void **state)
{
	char cmd[300];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpl);
	return system(cmd) == 0 ? 0 : -1;
}

static const fbc_tree_entry *find(const fbc_vec *v, const char *name)
{
	for (size_t i = 0; i < v->len; i++)
		if (strcmp(FBC_VEC_AT(v, fbc_tree_entry, i)->name, name) == 0)
			return FBC_VEC_AT(v, fbc_tree_entry, i);
	return NULL;
}

static void fbc_tree_open_dir__lists_reads_and_follows_inside_root(void **state)
{
	fbc_tree *t = NULL, *sub = NULL;
	fbc_error err;
	fbc_vec v;
	fbc_tree_entry e = {0};
	fbc_tree_blob b = {0};

	fbc_error_init(&err);
	assert_int_equal(fbc_tree_open_dir(&t, tmpl, &err), 0);
	fbc_vec_init(&v, sizeof(fbc_tree_entry));
	assert_int_equal(fbc_tree_list(t, &v, "a", &err), 0);
	fbc_tree_entries_sort(&v);
	assert_int_equal(v.len, 5);
	assert_string_equal(FBC_VEC_AT(&v, fbc_tree_entry, 0)->name, "b");
	assert_int_equal(find(&v, "b")->kind, FBC_TREE_DIR);
	assert_int_equal(find(&v, "link")->kind, FBC_TREE_LINK);
	assert_int_equal(find(&v, "x.yaml")->kind, FBC_TREE_FILE);
	assert_int_equal(find(&v, "x.yaml")->size, 5);
	fbc_tree_entries_dispose(&v);

	assert_int_equal(fbc_tree_follow(t, &e, "a/link", &err), 0);
	assert_string_equal(e.name, "a/b/y.json");
	assert_int_equal(e.kind, FBC_TREE_FILE);
	fbc_tree_entry_dispose(&e);
	assert_int_equal(fbc_tree_follow(t, &e, "a/out", &err), FBC_EINVAL);
	assert_int_equal(fbc_tree_read(t, &b, "top", 100, &err), 0);
	assert_int_equal(b.len, 10);
	assert_memory_equal(b.data, "0123456789", 10);
	fbc_tree_blob_release(t, &b);
	assert_int_equal(fbc_tree_read(t, &b, "top", 9, &err), FBC_ELIMIT);
	assert_int_equal(fbc_tree_read(t, &b, "nope", 9, &err), FBC_ENOTFOUND);
	assert_int_equal(fbc_tree_list(t, &v, "top", &err), FBC_EINVAL);
	fbc_vec_dispose(&v);

	/* A view of a/: ../top is outside it, b/y.json inside. */
	assert_int_equal(fbc_tree_sub(&sub, t, "a", &err), 0);
	assert_int_equal(fbc_tree_follow(sub, &e, "link", &err), 0);
	assert_string_equal(e.name, "b/y.json");
	fbc_tree_entry_dispose(&e);
	assert_int_equal(fbc_tree_follow(sub, &e, "up", &err), FBC_EINVAL);
	assert_int_equal(fbc_tree_stat(sub, &e, "b/y.json", &err), 0);
	assert_int_equal(e.size, 2);
	fbc_tree_entry_dispose(&e);
	assert_int_equal(fbc_tree_read(sub, &b, "b/y.json", 100, &err), 0);
	assert_memory_equal(b.data, "{}", 2);
	fbc_tree_blob_release(sub, &b);
	assert_non_null(strstr(fbc_tree_label(sub), "/a"));
	fbc_tree_free(sub);
	fbc_tree_free(t);
}

static void fbc_tree_open_mem__implies_directories(void **state)
{
	const char *paths[] = {"pkg/catalog.yaml", "pkg/sub/a.json", "README", "pkg2/x"};
	const char *data[] = {"schema: olm.package\n", "{}", "", "x"};
	size_t lens[] = {20, 2, 0, 1};
	fbc_tree *t = NULL, *sub = NULL;
	fbc_error err;
	fbc_vec v;
	fbc_tree_blob b = {0};
	fbc_tree_entry e = {0};

	assert_int_equal(fbc_tree_open_mem(&t, paths, data, lens, 4, "mem", &err), 0);
	fbc_vec_init(&v, sizeof(fbc_tree_entry));
	assert_int_equal(fbc_tree_list(t, &v, "", &err), 0);
	fbc_tree_entries_sort(&v);
	assert_int_equal(v.len, 3);
	assert_string_equal(FBC_VEC_AT(&v, fbc_tree_entry, 0)->name, "README");
	assert_int_equal(find(&v, "pkg")->kind, FBC_TREE_DIR);
	assert_int_equal(find(&v, "README")->size, 0);
	fbc_tree_entries_dispose(&v);
	fbc_vec_init(&v, sizeof(fbc_tree_entry));
	assert_int_equal(fbc_tree_list(t, &v, "pkg", &err), 0);
	assert_int_equal(v.len, 2);
	fbc_tree_entries_dispose(&v);
	assert_int_equal(fbc_tree_list(t, &v, "nope", &err), FBC_ENOTFOUND);
	assert_int_equal(fbc_tree_read(t, &b, "README", 10, &err), 0);
	assert_int_equal(b.len, 0);
	fbc_tree_blob_release(t, &b);
	assert_int_equal(fbc_tree_sub(&sub, t, "pkg", &err), 0);
	assert_int_equal(fbc_tree_stat(sub, &e, "catalog.yaml", &err), 0);
	assert_int_equal(e.kind, FBC_TREE_FILE);
	fbc_tree_entry_dispose(&e);
	assert_int_equal(fbc_tree_sub(&sub, t, "README", &err), FBC_EINVAL);
	fbc_tree_free(sub);
	fbc_tree_free(t);
}

static void fbc_tree_join__root_and_nested(void **state)
{
	char *a = fbc_tree_join("", "x"), *b = fbc_tree_join("d/e", "x");

	assert_string_equal(a, "x");
	assert_string_equal(b, "d/e/x");
	free(a);
	free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
			fbc_tree_open_dir__lists_reads_and_follows_inside_root, setup_dir,
			teardown_dir),
		cmocka_unit_test(fbc_tree_open_mem__implies_directories),
		cmocka_unit_test(fbc_tree_join__root_and_nested),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
