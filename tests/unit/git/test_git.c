/* pipeline/git against repositories built here with the git CLI. */
#include "pipeline/git/git.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char dir[64];

static void sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void sh(const char *fmt, ...)
{
	char cmd[4096], full[4400];
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

static int setup(void **state)
{
	snprintf(dir, sizeof(dir), "/tmp/fbcd-git-XXXXXX");
	assert_non_null(mkdtemp(dir));
	sh("git init -q -b main r && cd r && mkdir -p ops/a/0.1.0 ops/b && "
	   "printf 'one\\n' > ops/a/0.1.0/x.yaml && printf 'keep\\n' > ops/b/k && "
	   "printf 'gone\\n' > ops/b/gone && seq 1 200 > ops/b/big && "
	   "ln -s ../b/k ops/a/inlink && ln -s /etc/passwd ops/a/outlink && "
	   "ln -s ../../../x ops/a/uplink && ln -s loop2 ops/a/loop1 && ln -s loop1 ops/a/loop2 && "
	   "ln -s ops/a ln_a && git add -A && git commit -qm first && git tag t1 && "
	   "git update-index --add --cacheinfo 160000,$(git rev-parse HEAD),sub && "
	   "git commit -qm sub && "
	   "git checkout -q -b feature && mkdir ops/a/0.2.0 && printf 'two\\n' > "
	   "ops/a/0.2.0/x.yaml && printf 'one!\\n' > ops/a/0.1.0/x.yaml && git rm -q ops/b/gone && "
	   "git mv ops/b/big ops/b/big2 && git add -A && git commit -qm second && "
	   "git checkout -q main && printf 'm\\n' > m && git add m && git commit -qm main2");
	return 0;
}

static int teardown(void **state)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return getenv("KEEP") ? 0 : (system(cmd) == 0 ? 0 : -1);
}

static fbc_git *open_repo(const char *sub)
{
	char p[128];
	fbc_git *g = NULL;
	fbc_error err;

	fbc_error_init(&err);
	snprintf(p, sizeof(p), "%s/%s", dir, sub);
	assert_int_equal(fbc_git_open(&g, p, &err), 0);
	return g;
}

static void fbc_git_open__bare_worktree_and_not_a_repo(void **state)
{
	fbc_git *g = NULL;
	fbc_error err;
	char p[128], id[FBC_GIT_ID_MAX], id2[FBC_GIT_ID_MAX];

	sh("rm -rf bare.git && git clone -q --bare r bare.git && mkdir -p empty");
	g = open_repo("bare.git");
	assert_int_equal(fbc_git_resolve(id, g, "feature", &err), 0);
	fbc_git_free(g);
	g = open_repo("r");
	assert_int_equal(fbc_git_resolve(id2, g, "feature", &err), 0);
	assert_string_equal(id, id2);
	assert_int_equal(strlen(id), 40);
	fbc_git_free(g);
	snprintf(p, sizeof(p), "%s/empty", dir);
	g = NULL;
	assert_int_equal(fbc_git_open(&g, p, &err), FBC_ENOTFOUND);
	assert_null(g);
}

static void fbc_git_resolve__missing_and_not_commit(void **state)
{
	fbc_git *g = open_repo("r");
	fbc_error err;
	char id[FBC_GIT_ID_MAX];

	assert_int_equal(fbc_git_resolve(id, g, "nope", &err), FBC_ENOTFOUND);
	assert_int_equal(fbc_git_resolve(id, g, "main~1", &err), 0);
	assert_int_equal(fbc_git_resolve(id, g, "main:m", &err), FBC_EINVAL);
	assert_int_equal(fbc_git_resolve(id, g, "", &err), FBC_EINVAL);
	fbc_git_free(g);
}

static void fbc_git_merge_base__common_and_unrelated(void **state)
{
	fbc_git *g;
	fbc_error err;
	char mb[FBC_GIT_ID_MAX], want[FBC_GIT_ID_MAX];

	sh("cd r && git checkout -q --orphan lonely && git rm -rq --cached . && "
	   "printf z > z && git add z && git commit -qm lonely && git checkout -qf main");
	g = open_repo("r");
	assert_int_equal(fbc_git_merge_base(mb, g, "main", "feature", &err), 0);
	assert_int_equal(fbc_git_resolve(want, g, "main~1", &err), 0);
	assert_string_equal(mb, want);
	assert_int_equal(fbc_git_merge_base(mb, g, "main", "lonely", &err), FBC_ENOTFOUND);
	assert_non_null(strstr(err.message, "no common ancestor"));
	fbc_git_free(g);
}

static const fbc_git_change *change(const fbc_vec *v, const char *path)
{
	for (size_t i = 0; i < v->len; i++) {
		const fbc_git_change *c = FBC_VEC_AT(v, fbc_git_change, i);

		if (strcmp(fbc_git_change_path(c), path) == 0)
			return c;
	}
	return NULL;
}

static void fbc_git_diff__added_modified_deleted_renamed(void **state)
{
	fbc_git *g = open_repo("r");
	fbc_error err;
	fbc_vec v;
	const fbc_git_change *c;

	fbc_vec_init(&v, sizeof(fbc_git_change));
	assert_int_equal(fbc_git_diff(&v, g, "main~1", "feature", &err), 0);
	assert_int_equal(v.len, 5); /* `git add -A` on feature dropped the gitlink "sub" */
	c = change(&v, "sub");
	assert_int_equal(c->status, FBC_GIT_DELETED);
	assert_int_equal(c->old_mode, 0160000);
	c = change(&v, "ops/a/0.2.0/x.yaml");
	assert_non_null(c);
	assert_int_equal(c->status, FBC_GIT_ADDED);
	assert_string_equal(c->old_id, "");
	assert_int_equal(strlen(c->new_id), 40);
	c = change(&v, "ops/a/0.1.0/x.yaml");
	assert_int_equal(c->status, FBC_GIT_MODIFIED);
	assert_string_not_equal(c->old_id, c->new_id);
	c = change(&v, "ops/b/gone");
	assert_int_equal(c->status, FBC_GIT_DELETED);
	assert_null(c->new_path);
	c = change(&v, "ops/b/big2");
	assert_int_equal(c->status, FBC_GIT_RENAMED);
	assert_string_equal(c->old_path, "ops/b/big");
	assert_string_equal(c->old_id, c->new_id);
	/* sorted by path */
	for (size_t i = 1; i < v.len; i++)
		assert_true(strcmp(fbc_git_change_path(FBC_VEC_AT(&v, fbc_git_change, i - 1)),
				   fbc_git_change_path(FBC_VEC_AT(&v, fbc_git_change, i))) < 0);
	fbc_git_changes_dispose(&v);
	fbc_git_free(g);
}

static void fbc_git_read__blob_limit_and_absent(void **state)
{
	fbc_git *g = open_repo("r");
	fbc_error err;
	char *data = NULL;
	size_t len = 0;

	assert_int_equal(fbc_git_read(&data, &len, g, "feature", "ops/a/0.1.0/x.yaml", 100, &err),
			 0);
	assert_int_equal(len, 5);
	assert_string_equal(data, "one!\n");
	free(data);
	assert_int_equal(fbc_git_read(&data, &len, g, "t1", "ops/a/0.1.0/x.yaml", 100, &err), 0);
	assert_string_equal(data, "one\n");
	free(data);
	assert_int_equal(fbc_git_read(&data, &len, g, "t1", "ops/b/big", 10, &err), FBC_ELIMIT);
	assert_int_equal(fbc_git_read(&data, &len, g, "t1", "ops/none", 10, &err), FBC_ENOTFOUND);
	assert_int_equal(fbc_git_read(&data, &len, g, "t1", "ops", 10, &err), FBC_EINVAL);
	fbc_git_free(g);
}

static const fbc_tree_entry *find(const fbc_vec *v, const char *name)
{
	for (size_t i = 0; i < v->len; i++)
		if (strcmp(FBC_VEC_AT(v, fbc_tree_entry, i)->name, name) == 0)
			return FBC_VEC_AT(v, fbc_tree_entry, i);
	return NULL;
}

static void fbc_git_tree_open__list_follow_read(void **state)
{
	fbc_git *g = open_repo("r");
	fbc_tree *t = NULL;
	fbc_error err;
	fbc_vec v;
	fbc_tree_entry e = {0};
	fbc_tree_blob b = {0};
	char id[FBC_GIT_ID_MAX];

	assert_int_equal(fbc_git_tree_open(&t, g, "main", &err), 0);
	fbc_git_free(g); /* the tree keeps the repository open */
	fbc_vec_init(&v, sizeof(fbc_tree_entry));
	assert_int_equal(fbc_tree_list(t, &v, "", &err), 0);
	assert_int_equal(find(&v, "ops")->kind, FBC_TREE_DIR);
	assert_int_equal(find(&v, "sub")->kind, FBC_TREE_OTHER);
	assert_int_equal(find(&v, "ln_a")->kind, FBC_TREE_LINK);
	assert_int_equal(find(&v, "m")->size, 2);
	assert_int_equal(strlen(find(&v, "ops")->id), 40);
	fbc_tree_entries_dispose(&v);
	fbc_vec_init(&v, sizeof(fbc_tree_entry));
	assert_int_equal(fbc_tree_list(t, &v, "ops/b", &err), 0);
	assert_int_equal(find(&v, "big")->size, 692);
	fbc_tree_entries_dispose(&v);
	fbc_vec_init(&v, sizeof(fbc_tree_entry));
	assert_int_equal(fbc_tree_list(t, &v, "nope", &err), FBC_ENOTFOUND);
	assert_int_equal(fbc_tree_list(t, &v, "m", &err), FBC_EINVAL);
	fbc_tree_entries_dispose(&v);

	assert_int_equal(fbc_tree_follow(t, &e, "ops/a/inlink", &err), 0);
	assert_string_equal(e.name, "ops/b/k");
	assert_int_equal(e.kind, FBC_TREE_FILE);
	assert_int_equal(e.size, 5);
	fbc_tree_entry_dispose(&e);
	assert_int_equal(fbc_tree_follow(t, &e, "ln_a/0.1.0/x.yaml", &err), 0);
	assert_string_equal(e.name, "ops/a/0.1.0/x.yaml");
	fbc_tree_entry_dispose(&e);
	assert_int_equal(fbc_tree_follow(t, &e, "ln_a", &err), 0);
	assert_int_equal(e.kind, FBC_TREE_DIR);
	assert_int_equal(fbc_git_object_id(id, NULL, g = open_repo("r"), "main", "ops/a", &err), 0);
	assert_string_equal(e.id, id);
	fbc_git_free(g);
	fbc_tree_entry_dispose(&e);
	assert_int_equal(fbc_tree_follow(t, &e, "ops/a/outlink", &err), FBC_EINVAL);
	assert_int_equal(fbc_tree_follow(t, &e, "ops/a/uplink", &err), FBC_EINVAL);
	assert_int_equal(fbc_tree_follow(t, &e, "ops/a/loop1", &err), FBC_ELIMIT);
	assert_int_equal(fbc_tree_follow(t, &e, "ops/missing", &err), FBC_ENOTFOUND);
	assert_int_equal(fbc_tree_follow(t, &e, "", &err), 0);
	assert_string_equal(e.name, "");
	fbc_tree_entry_dispose(&e);

	assert_int_equal(fbc_tree_read(t, &b, "ops/b/k", 100, &err), 0);
	assert_int_equal(b.len, 5);
	assert_memory_equal(b.data, "keep\n", 5);
	fbc_tree_blob_release(t, &b);
	assert_int_equal(fbc_tree_read(t, &b, "ops/b/big", 10, &err), FBC_ELIMIT);
	assert_int_equal(fbc_tree_read(t, &b, "ops/a/inlink", 100, &err), FBC_EINVAL);
	assert_int_equal(fbc_tree_read(t, &b, "sub", 100, &err), FBC_EINVAL);
	fbc_tree_free(t);
}

static void *reader(void *arg)
{
	fbc_tree *t = arg;

	for (int i = 0; i < 200; i++) {
		fbc_tree_blob b = {0};
		fbc_tree_entry e = {0};
		fbc_vec v;
		fbc_error err;

		fbc_vec_init(&v, sizeof(fbc_tree_entry));
		if (fbc_tree_read(t, &b, "ops/b/big", 1 << 20, &err) != 0 || b.len != 692)
			return (void *)1;
		fbc_tree_blob_release(t, &b);
		if (fbc_tree_list(t, &v, "ops/a", &err) != 0)
			return (void *)1;
		fbc_tree_entries_dispose(&v);
		if (fbc_tree_follow(t, &e, "ops/a/inlink", &err) != 0)
			return (void *)1;
		fbc_tree_entry_dispose(&e);
	}
	return NULL;
}

static void fbc_git_tree_open__concurrent_readers(void **state)
{
	fbc_git *g = open_repo("r");
	fbc_tree *t = NULL;
	fbc_error err;
	pthread_t th[4];

	assert_int_equal(fbc_git_tree_open(&t, g, "main", &err), 0);
	for (int i = 0; i < 4; i++)
		assert_int_equal(pthread_create(&th[i], NULL, reader, t), 0);
	for (int i = 0; i < 4; i++) {
		void *r;

		pthread_join(th[i], &r);
		assert_null(r);
	}
	fbc_tree_free(t);
	fbc_git_free(g);
}

static void fbc_git_log__oldest_first_and_first_added(void **state)
{
	fbc_git *g = open_repo("r");
	fbc_error err;
	fbc_vec v;
	char id[FBC_GIT_ID_MAX];

	fbc_vec_init(&v, sizeof(fbc_git_commit));
	assert_int_equal(fbc_git_log(&v, g, "feature", 1, 0, &err), 0);
	assert_int_equal(v.len, 3);
	assert_string_equal(FBC_VEC_AT(&v, fbc_git_commit, 0)->summary, "first");
	assert_string_equal(FBC_VEC_AT(&v, fbc_git_commit, 2)->summary, "second");
	fbc_git_commits_dispose(&v);
	fbc_vec_init(&v, sizeof(fbc_git_commit));
	assert_int_equal(fbc_git_log(&v, g, "feature", 1, 2, &err), FBC_ELIMIT);
	fbc_git_commits_dispose(&v);

	fbc_vec_init(&v, sizeof(fbc_git_added));
	assert_int_equal(fbc_git_first_added(&v, g, "feature", "ops/a", &err), 0);
	assert_int_equal(v.len, 2);
	assert_string_equal(FBC_VEC_AT(&v, fbc_git_added, 0)->path, "ops/a/0.1.0");
	assert_string_equal(FBC_VEC_AT(&v, fbc_git_added, 1)->path, "ops/a/0.2.0");
	assert_int_equal(fbc_git_resolve(id, g, "feature", &err), 0);
	assert_string_equal(FBC_VEC_AT(&v, fbc_git_added, 1)->commit, id);
	assert_int_equal(fbc_git_resolve(id, g, "t1", &err), 0);
	assert_string_equal(FBC_VEC_AT(&v, fbc_git_added, 0)->commit, id);
	fbc_git_added_dispose(&v);
	fbc_git_free(g);
}

static void fbc_git__shallow_and_corrupt_repositories(void **state)
{
	fbc_git *g;
	fbc_error err;
	fbc_tree *t = NULL;
	fbc_tree_blob b = {0};
	char id[FBC_GIT_ID_MAX], *data = NULL;
	size_t len;
	fbc_vec v;

	sh("rm -rf shallow corrupt && git clone -q --depth 1 -b feature file://$PWD/r shallow && "
	   "git clone -q --no-local r corrupt && cd corrupt && git repack -qad && "
	   "git checkout -q feature && "
	   "rm -f .git/objects/pack/*.pack && git cat-file -p HEAD >/dev/null; true");
	g = open_repo("shallow");
	assert_int_equal(fbc_git_resolve(id, g, "HEAD", &err), 0);
	assert_int_not_equal(fbc_git_resolve(id, g, "HEAD~1", &err), 0);
	assert_int_not_equal(fbc_git_merge_base(id, g, "HEAD", "HEAD~1", &err), 0);
	/* libgit2 1.5 has no shallow support: walking past the cut is an error, not a crash */
	fbc_vec_init(&v, sizeof(fbc_git_commit));
	if (fbc_git_log(&v, g, "HEAD", 1, 0, &err) != 0)
		assert_true(err.message[0] != '\0');
	fbc_git_commits_dispose(&v);
	fbc_git_free(g);

	g = open_repo("corrupt");
	assert_int_not_equal(fbc_git_resolve(id, g, "HEAD", &err), 0);
	assert_int_not_equal(fbc_git_read(&data, &len, g, "HEAD", "m", 10, &err), 0);
	assert_int_not_equal(fbc_git_tree_open(&t, g, "HEAD", &err), 0);
	assert_null(t);
	(void)b;
	fbc_git_free(g);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(fbc_git_open__bare_worktree_and_not_a_repo),
		cmocka_unit_test(fbc_git_resolve__missing_and_not_commit),
		cmocka_unit_test(fbc_git_merge_base__common_and_unrelated),
		cmocka_unit_test(fbc_git_diff__added_modified_deleted_renamed),
		cmocka_unit_test(fbc_git_read__blob_limit_and_absent),
		cmocka_unit_test(fbc_git_tree_open__list_follow_read),
		cmocka_unit_test(fbc_git_tree_open__concurrent_readers),
		cmocka_unit_test(fbc_git_log__oldest_first_and_first_added),
		cmocka_unit_test(fbc_git__shallow_and_corrupt_repositories),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
