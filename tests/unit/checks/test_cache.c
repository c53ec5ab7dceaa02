/* The check cache's on-disk layer, recording trees and the add-mode entry format. */
#include "pipeline/checks/internal.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char dir[64];

static int setup(void **state)
{
	snprintf(dir, sizeof(dir), "/tmp/fbcd-cache-XXXXXX");
	assert_non_null(mkdtemp(dir));
	return 0;
}

static int teardown(void **state)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

static void sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void sh(const char *fmt, ...)
{
	char cmd[4096], full[4600];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	snprintf(full, sizeof(full),
		 "cd '%s' && export GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@x GIT_COMMITTER_NAME=t "
		 "GIT_COMMITTER_EMAIL=t@x GIT_CONFIG_NOSYSTEM=1 HOME='%s' && (%s) >/dev/null 2>&1",
		 dir, dir, cmd);
	assert_int_equal(system(full), 0);
}

static uint64_t dir_bytes(const char *path)
{
	char cmd[256];
	unsigned long long n = 0;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "cat '%s'/* 2>/dev/null | wc -c", path);
	assert_non_null(f = popen(cmd, "r"));
	assert_int_equal(fscanf(f, "%llu", &n), 1);
	pclose(f);
	return n;
}

static void disk__put_get_and_damage(void **state)
{
	chk_disk *d = NULL;
	fbc_error err;
	char path[256], *data = NULL;
	size_t len = 0;
	const char *payload;
	size_t plen;
	int fd;

	fbc_error_init(&err);
	assert_int_equal(chk_disk_open(&d, dir, 0, &err), 0);
	assert_int_equal(chk_disk_get(d, "am-1", &data, &len), FBC_ENOTFOUND);
	chk_disk_put(d, "am-1", "hello\0world", 11);
	assert_int_equal(chk_disk_get(d, "am-1", &data, &len), 0);
	assert_int_equal(len, 11);
	assert_memory_equal(data, "hello\0world", 11);
	free(data);
	/* keys are names, never paths */
	chk_disk_put(d, "../x", "a", 1);
	assert_int_equal(chk_disk_get(d, "../x", &data, &len), FBC_EINVAL);
	assert_int_equal(chk_disk_get(d, "", &data, &len), FBC_EINVAL);
	/* a flipped byte: a miss, and the file goes */
	snprintf(path, sizeof(path), "%s/checks-v1/am-1", dir);
	assert_true((fd = open(path, O_WRONLY)) >= 0);
	assert_int_equal(pwrite(fd, "H", 1, 50), 1);
	close(fd);
	assert_int_equal(chk_disk_get(d, "am-1", &data, &len), FBC_EINVAL);
	assert_int_equal(access(path, F_OK), -1);
	/* cut short */
	chk_disk_put(d, "am-1", "hello world", 11);
	assert_int_equal(truncate(path, 40), 0);
	assert_int_equal(chk_disk_get(d, "am-1", &data, &len), FBC_EINVAL);
	/* the header alone is checked by chk_disk_decode */
	assert_int_equal(chk_disk_decode("fbcd-cache 1 ", 13, &payload, &plen), FBC_EINVAL);
	assert_int_equal(chk_disk_decode("x", 1, &payload, &plen), FBC_EINVAL);
	chk_disk_close(d);
}

static void disk__unusable_directory(void **state)
{
	chk_disk *d = NULL;
	fbc_checks_cache *cc = NULL;
	fbc_error err;
	char path[256];

	snprintf(path, sizeof(path), "%s/file", dir);
	sh("echo x > file");
	fbc_error_init(&err);
	assert_int_equal(chk_disk_open(&d, path, 0, &err), FBC_EINVAL);
	assert_null(d);
	assert_non_null(strstr(err.message, "cannot use it as a cache directory"));
	assert_string_equal(err.where, path);
	fbc_error_init(&err);
	assert_int_equal(fbc_checks_cache_create(&cc, 0, path, &err), FBC_EINVAL);
	assert_null(cc);
	/* a fresh directory is made, parents too */
	snprintf(path, sizeof(path), "%s/a/b/c", dir);
	assert_int_equal(fbc_checks_cache_create(&cc, 0, path, &err), 0);
	assert_non_null(strstr(fbc_checks_cache_dir(cc), "/a/b/c/checks-v1"));
	fbc_checks_cache_free(cc);
}

static void disk__bounded_least_recently_used_out(void **state)
{
	chk_disk *d = NULL;
	fbc_error err;
	char key[16], path[256], *data = NULL, blob[3000];
	size_t len;

	memset(blob, 'x', sizeof(blob));
	fbc_error_init(&err);
	assert_int_equal(chk_disk_open(&d, dir, 10000, &err), 0);
	for (int i = 0; i < 3; i++) {
		struct timespec ts[2] = {{1000 + i, 0}, {1000 + i, 0}};

		snprintf(key, sizeof(key), "k%d", i);
		chk_disk_put(d, key, blob, sizeof(blob));
		/* make them old, k0 the oldest */
		snprintf(path, sizeof(path), "%s/checks-v1/%s", dir, key);
		assert_int_equal(utimensat(AT_FDCWD, path, ts, 0), 0);
	}
	/* a hit makes k0 the most recently used */
	assert_int_equal(chk_disk_get(d, "k0", &data, &len), 0);
	free(data);
	/* past the bound: the least recently used go, down to 3/4 of it */
	chk_disk_put(d, "k3", blob, sizeof(blob));
	snprintf(path, sizeof(path), "%s/checks-v1", dir);
	assert_true(dir_bytes(path) <= 7500);
	assert_int_equal(chk_disk_get(d, "k1", &data, &len), FBC_ENOTFOUND);
	assert_int_equal(chk_disk_get(d, "k2", &data, &len), FBC_ENOTFOUND);
	assert_int_equal(chk_disk_get(d, "k0", &data, &len), 0);
	free(data);
	assert_int_equal(chk_disk_get(d, "k3", &data, &len), 0);
	free(data);
	/* an entry larger than half the bound is not kept */
	chk_disk_set_max(d, 1000);
	chk_disk_put(d, "big", blob, sizeof(blob));
	assert_int_equal(chk_disk_get(d, "big", &data, &len), FBC_ENOTFOUND);
	chk_disk_close(d);
}

static void cache__bytes_shared_through_disk(void **state)
{
	fbc_checks_cache *a = NULL, *b = NULL, *m = NULL;
	fbc_error err;
	char *data = NULL;
	size_t len, n, bytes, hits, misses;

	fbc_error_init(&err);
	assert_int_equal(fbc_checks_cache_create(&a, 0, dir, &err), 0);
	assert_int_equal(fbc_checks_cache_create(&b, 0, dir, &err), 0);
	assert_int_equal(fbc_checks_cache_create(&m, 0, NULL, &err), 0);
	assert_int_equal(chk_cache_bytes_get(a, "am-2", &data, &len), FBC_ENOTFOUND);
	chk_cache_bytes_put(a, "am-2", "entry", 5);
	chk_cache_bytes_put(m, "am-2", "entry", 5);
	/* another cache on the same directory (another process) finds it */
	assert_int_equal(chk_cache_bytes_get(b, "am-2", &data, &len), 0);
	assert_int_equal(len, 5);
	assert_memory_equal(data, "entry", 5);
	free(data);
	fbc_checks_cache_stats(b, &n, &bytes, &hits, &misses);
	assert_int_equal(n, 1); /* kept in memory too */
	assert_int_equal(chk_cache_bytes_get(m, "am-2", &data, &len), 0);
	free(data);
	/* a memory-only cache bounded to nothing keeps nothing */
	fbc_checks_cache_free(m);
	assert_int_equal(fbc_checks_cache_create(&m, 1, NULL, &err), 0);
	chk_cache_bytes_put(m, "am-2", "entry", 5);
	assert_int_equal(chk_cache_bytes_get(m, "am-2", &data, &len), FBC_ENOTFOUND);
	fbc_checks_cache_free(a);
	fbc_checks_cache_free(b);
	fbc_checks_cache_free(m);
}

/* What a recording tree saw, verified against other commits of a git repository. */
static void record__verify_by_object_id(void **state)
{
	char repo[128];
	fbc_git *g = NULL;
	fbc_tree *t1 = NULL, *t2 = NULL, *t3 = NULL, *rt = NULL;
	chk_rec *r = NULL;
	fbc_error err;
	fbc_vec v;
	fbc_tree_blob b = {0};
	fbc_tree_entry e = {0};
	fbc_buf text;

	sh("git init -q r && cd r && mkdir -p a/b && echo 1 > a/b/f && echo 2 > a/g && echo 3 > h "
	   "&& git add -A && git commit -qm 1 && git tag c1 && echo 4 > h && git commit -qam 2 && "
	   "git tag c2 && echo 5 > a/b/f && git commit -qam 3 && git tag c3");
	snprintf(repo, sizeof(repo), "%s/r", dir);
	fbc_error_init(&err);
	assert_int_equal(fbc_git_open(&g, repo, &err), 0);
	assert_int_equal(fbc_git_tree_open(&t1, g, "c1", &err), 0);
	assert_int_equal(fbc_git_tree_open(&t2, g, "c2", &err), 0);
	assert_int_equal(fbc_git_tree_open(&t3, g, "c3", &err), 0);
	assert_int_equal(chk_rec_open(&r, &rt, t1, &err), 0);
	fbc_vec_init(&v, sizeof(fbc_tree_entry));
	assert_int_equal(fbc_tree_list(rt, &v, "a/b", &err), 0);
	fbc_tree_entries_dispose(&v);
	assert_int_equal(fbc_tree_read(rt, &b, "a/b/f", 100, &err), 0);
	fbc_tree_blob_release(rt, &b);
	assert_int_equal(fbc_tree_read(rt, &b, "a/b/f", 1, &err), FBC_ELIMIT);
	assert_int_equal(fbc_tree_read(rt, &b, "nope", 100, &err), FBC_ENOTFOUND);
	assert_int_equal(fbc_tree_follow(rt, &e, "a/g", &err), 0);
	fbc_tree_entry_dispose(&e);
	fbc_tree_free(rt);
	fbc_buf_init(&text, 0);
	assert_int_equal(chk_rec_text(&text, r), 0);
	chk_rec_free(r);
	/* c2 changed only h, which was never read: the same answers */
	assert_int_equal(chk_rec_verify(text.data, text.len, t1), 0);
	assert_int_equal(chk_rec_verify(text.data, text.len, t2), 0);
	/* c3 changed a/b/f */
	assert_int_equal(chk_rec_verify(text.data, text.len, t3), FBC_ECONFLICT);
	/* not a record */
	assert_int_equal(chk_rec_verify("3 1\nX aa", 8, t1), FBC_EINVAL);
	assert_int_equal(chk_rec_verify("99 1\nL a", 8, t1), FBC_EINVAL);
	assert_int_equal(chk_rec_verify("", 0, t1), 0);
	fbc_buf_dispose(&text);
	fbc_tree_free(t1);
	fbc_tree_free(t2);
	fbc_tree_free(t3);
	fbc_git_free(g);
}

static void record__tree_without_ids_cannot_key(void **state)
{
	const char *paths[] = {"a/f"}, *datas[] = {"x"};
	size_t lens[] = {1};
	fbc_tree *m = NULL, *rt = NULL;
	chk_rec *r = NULL;
	fbc_error err;
	fbc_tree_blob b = {0};
	fbc_buf text;

	fbc_error_init(&err);
	assert_int_equal(fbc_tree_open_mem(&m, paths, datas, lens, 1, "m", &err), 0);
	assert_int_equal(chk_rec_open(&r, &rt, m, &err), 0);
	assert_int_equal(fbc_tree_read(rt, &b, "a/f", 10, &err), 0);
	fbc_tree_blob_release(rt, &b);
	fbc_tree_free(rt);
	fbc_buf_init(&text, 0);
	assert_int_equal(chk_rec_text(&text, r), FBC_EINVAL);
	fbc_buf_dispose(&text);
	chk_rec_free(r);
	fbc_tree_free(m);
}

static void amc__thaw_rejects_malformed(void **state)
{
	chk_amc_entry *e = NULL;
	fbc_buf ok;
	fbc_tree *t = NULL;
	fbc_error err;
	const char *good_tail = "1:0,"		      /* no contents */
				"1:1,0:,1:0,1:0,1:0," /* head: built, no catalogs */
				"1:1,0:,1:0,1:0,1:0,";
	char *copy;

	fbc_buf_init(&ok, 0);
	assert_int_equal(fbc_buf_printf(&ok, "9:fbcd-am 1,3:key,0:,0:,%s", good_tail), 0);
	copy = strndup(ok.data, ok.len);
	assert_int_equal(chk_amc_thaw(&e, copy, ok.len), 0);
	assert_true(e->b[0].built && e->b[1].built);
	assert_int_equal(e->key_len, 3);
	chk_amc_entry_free(e);
	/* every cut of a good entry is malformed, never a crash */
	for (size_t n = 0; n < ok.len; n++) {
		copy = strndup(ok.data, n);
		assert_int_equal(chk_amc_thaw(&e, copy, n), FBC_EINVAL);
	}
	/* trailing bytes, a content index out of range, a count past the input */
	copy = strdup("9:fbcd-am 1,0:,0:,0:,1:0,1:1,0:,1:1,1:a,1:0,1:0,1:0,1:1,0:,1:0,1:0,1:0,");
	assert_int_equal(chk_amc_thaw(&e, copy, strlen(copy)), FBC_EINVAL);
	copy = strdup("9:fbcd-am 1,0:,0:,0:,3:999,");
	assert_int_equal(chk_amc_thaw(&e, copy, strlen(copy)), FBC_EINVAL);
	fbc_buf_dispose(&ok);
	/* catalog contents */
	fbc_error_init(&err);
	assert_int_equal(chk_amc_content_tree(&t, "5 2\na/b/cxy", 11, "v", &err), 0);
	fbc_tree_free(t);
	assert_int_equal(chk_amc_content_tree(&t, "5 9\na/b/cxy", 11, "v", &err), FBC_EINVAL);
	assert_int_equal(chk_amc_content_tree(&t, "5", 1, "v", &err), FBC_EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(disk__put_get_and_damage, setup, teardown),
		cmocka_unit_test_setup_teardown(disk__unusable_directory, setup, teardown),
		cmocka_unit_test_setup_teardown(disk__bounded_least_recently_used_out, setup,
						teardown),
		cmocka_unit_test_setup_teardown(cache__bytes_shared_through_disk, setup, teardown),
		cmocka_unit_test_setup_teardown(record__verify_by_object_id, setup, teardown),
		cmocka_unit_test(record__tree_without_ids_cannot_key),
		cmocka_unit_test(amc__thaw_rejects_malformed),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
