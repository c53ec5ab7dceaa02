/* Tests of fbc_load_memo: loads that share a memo give exactly what they give
 * without it (metas, findings at each reader's own path, staged results),
 * parse a shared file once, keep nothing past its last expected read, and
 * bypass it under other parse bounds. The tree backend here is a memory tree
 * that reports content ids (FNV-1a of the bytes), as git trees do. */
#include "common.h"

#include "service/base/strmap.h"

#include <pthread.h>

/* ---- a memory tree with content ids ---- */

typedef struct idtree {
	fbc_tree *mem;
	const char *const *paths;
	const char *const *data;
	size_t n;
} idtree;

static void id_of(char out[FBC_TREE_ID_MAX], const char *data)
{
	snprintf(out, FBC_TREE_ID_MAX, "%016llx",
		 (unsigned long long)fbc_hash_bytes(data, strlen(data)));
}

static const char *data_at(idtree *t, const char *path)
{
	for (size_t i = 0; i < t->n; i++)
		if (strcmp(t->paths[i], path) == 0)
			return t->data[i];
	return NULL;
}

static int id_list(void *self, fbc_vec *out, const char *dir, fbc_error *err)
{
	idtree *t = self;
	size_t start = out->len;
	int rc = fbc_tree_list(t->mem, out, dir, err);

	for (size_t i = start; rc == 0 && i < out->len; i++) {
		fbc_tree_entry *e = FBC_VEC_AT(out, fbc_tree_entry, i);
		char *path = fbc_tree_join(dir, e->name);
		const char *d = path ? data_at(t, path) : NULL;

		if (e->kind == FBC_TREE_FILE && d)
			id_of(e->id, d);
		free(path);
	}
	return rc;
}

static int id_follow(void *self, fbc_tree_entry *out, const char *path, fbc_error *err)
{
	return fbc_tree_follow(((idtree *)self)->mem, out, path, err);
}

static int id_read(void *self, fbc_tree_blob *out, const char *path, size_t max, fbc_error *err)
{
	return fbc_tree_read(((idtree *)self)->mem, out, path, max, err);
}

static void id_release(void *self, fbc_tree_blob *b)
{
	fbc_tree_blob_release(((idtree *)self)->mem, b);
}

static void id_free(void *self)
{
	idtree *t = self;

	fbc_tree_free(t->mem);
	free(t);
}

static const fbc_tree_ops id_ops = {id_list, id_follow, id_read, id_release, id_free};

static fbc_tree *open_ids(const char *const *paths, const char *const *data, size_t n)
{
	idtree *t = calloc(1, sizeof(*t));
	size_t lens[16];
	fbc_tree *out = NULL;
	fbc_error e;

	assert_non_null(t);
	assert_true(n <= 16);
	for (size_t i = 0; i < n; i++)
		lens[i] = strlen(data[i]);
	fbc_error_init(&e);
	assert_int_equal(fbc_tree_open_mem(&t->mem, paths, data, lens, n, "mem", &e), 0);
	t->paths = paths;
	t->data = data;
	t->n = n;
	assert_int_equal(fbc_tree_create(&out, &id_ops, t, "ids", &e), 0);
	return out;
}

/* ---- two catalogs sharing files ---- */

#define SHARED_OK "---\nschema: olm.package\nname: a\n---\nschema: olm.bundle\npackage: a\nname: a.v1\n"
#define SHARED_BAD "schema: olm.bundle\npackage: b\nname: [1\n" /* L5 */
#define SHARED_JSON "{\"schema\":\"olm.channel\",\"package\":\"a\",\"name\":\"s\"}\n{\"schema\":"

static const char *const p1[] = {"a/catalog.yaml", "b/catalog.yaml", "c/index.json",
				 "only1.yaml"};
static const char *const d1[] = {SHARED_OK, SHARED_BAD, SHARED_JSON, "schema: one\nname: x\n"};
/* the same contents at other paths, one file of its own */
static const char *const p2[] = {"pkg-a/catalog.yaml", "pkg-b/bad.yaml", "x/y/z.json",
				 "zz.yaml"};
static const char *const d2[] = {SHARED_OK, SHARED_BAD, SHARED_JSON, "schema: two\nname: y\n"};

typedef struct result {
	seen s;
	fbc_diags d;
	int rc;
} result;

static void load(result *r, fbc_tree *t, const fbc_load_limits *lim)
{
	fbc_error e;

	fbc_error_init(&e);
	memset(&r->s, 0, sizeof(r->s));
	assert_int_equal(fbc_diags_init(&r->d, 0), 0);
	r->rc = fbc_load_tree(t, lim, collect, &r->s, &r->d, &e);
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

static void expect_shared(fbc_load_memo *m, unsigned uses)
{
	char id[FBC_TREE_ID_MAX];
	fbc_error e;

	fbc_error_init(&e);
	id_of(id, SHARED_OK);
	assert_int_equal(fbc_load_memo_expect(m, id, uses, &e), 0);
	id_of(id, SHARED_BAD);
	assert_int_equal(fbc_load_memo_expect(m, id, uses, &e), 0);
	id_of(id, SHARED_JSON);
	assert_int_equal(fbc_load_memo_expect(m, id, uses, &e), 0);
}

static void memo__loads_give_what_they_give_without_it(void **state)
{
	fbc_tree *t1 = open_ids(p1, d1, 4), *t2 = open_ids(p2, d2, 4);
	fbc_load_memo *m = NULL;
	fbc_load_limits lim;
	fbc_error e;
	result plain1, plain2, memo1, memo2;
	size_t hits, parsed, kept;

	(void)state;
	fbc_error_init(&e);
	load(&plain1, t1, NULL);
	load(&plain2, t2, NULL);
	assert_int_equal(fbc_load_memo_create(&m, &e), 0);
	expect_shared(m, 2);
	fbc_load_limits_default(&lim);
	lim.memo = m;
	for (unsigned threads = 1; threads <= 2; threads++) {
		lim.threads = threads;
		load(&memo1, t1, &lim);
		load(&memo2, t2, &lim);
		assert_same(&plain1, &memo1);
		assert_same(&plain2, &memo2);
		result_dispose(&memo1);
		result_dispose(&memo2);
		fbc_load_memo_stats(m, &hits, &parsed, &kept);
		/* the three shared files: parsed by the first load, answered to the second */
		assert_int_equal(parsed, 3 * threads);
		assert_int_equal(hits, 3 * threads);
		assert_int_equal(kept, 0); /* nothing past the last expected read */
		expect_shared(m, 2);
	}
	/* findings sit at each reader's path (not vacuous: the L5 and L4 are there) */
	assert_true(find_diag(&plain2.d, "L5") >= 0);
	assert_string_equal(fbc_diags_at(&plain2.d, (size_t)find_diag(&plain2.d, "L5"))->file,
			    "pkg-b/bad.yaml");
	assert_true(find_diag(&plain2.d, "L4") >= 0);
	assert_int_equal(plain2.s.n, 3); /* a JSON stream with a syntax error yields nothing */
	result_dispose(&plain1);
	result_dispose(&plain2);
	fbc_load_memo_free(m); /* expected reads that never came are released too */
	fbc_tree_free(t1);
	fbc_tree_free(t2);
}

static void memo__other_parse_bounds_do_not_use_it(void **state)
{
	fbc_tree *t1 = open_ids(p1, d1, 4), *t2 = open_ids(p2, d2, 4);
	fbc_load_memo *m = NULL;
	fbc_load_limits lim, deep;
	fbc_error e;
	result a, b, plain;
	size_t hits, parsed;

	(void)state;
	fbc_error_init(&e);
	assert_int_equal(fbc_load_memo_create(&m, &e), 0);
	expect_shared(m, 2);
	fbc_load_limits_default(&lim);
	lim.memo = m;
	deep = lim;
	deep.max_depth = 1; /* every blob is now too deep */
	load(&a, t1, &lim);
	load(&b, t2, &deep);
	load(&plain, t2, &(fbc_load_limits){.max_depth = 1});
	assert_same(&plain, &b); /* the memo's parse under other bounds was not used */
	assert_true(fbc_diags_count(&b.d) > fbc_diags_count(&a.d));
	fbc_load_memo_stats(m, &hits, &parsed, NULL);
	assert_int_equal(hits, 0);
	assert_int_equal(parsed, 3);
	result_dispose(&a);
	result_dispose(&b);
	result_dispose(&plain);
	fbc_load_memo_free(m);
	fbc_tree_free(t1);
	fbc_tree_free(t2);
}

/* Staged loads: prepare sees the same metas, with each reader's path. */
static void *prep(void *ctx, unsigned worker, const fbc_meta *meta)
{
	char *row = NULL;

	(void)ctx;
	(void)worker;
	if (asprintf(&row, "%s:%d %s %s %s %zu", meta->loc.file, meta->loc.line, meta->schema,
		     meta->package, meta->name, json_object_size(meta->blob)) < 0)
		return NULL;
	return row;
}

static void discard(void *ctx, void *p)
{
	(void)ctx;
	free(p);
}

static int take(void *ctx, const fbc_meta *meta, fbc_error *err)
{
	seen *s = ctx;

	(void)err;
	if (s->n < MAX_SEEN)
		s->rows[s->n++] = meta->prepared;
	else
		free(meta->prepared);
	return 0;
}

static void staged(seen *s, fbc_tree *t, const fbc_load_limits *lim)
{
	fbc_load_stage st = {prep, discard, NULL};
	fbc_diags d;
	fbc_error e;

	memset(s, 0, sizeof(*s));
	fbc_error_init(&e);
	assert_int_equal(fbc_diags_init(&d, 0), 0);
	assert_int_equal(fbc_load_tree_staged(t, lim, &st, take, s, &d, &e), 0);
	fbc_diags_dispose(&d);
}

static void memo__staged_loads_prepare_the_same_metas(void **state)
{
	fbc_tree *t1 = open_ids(p1, d1, 4), *t2 = open_ids(p2, d2, 4);
	fbc_load_memo *m = NULL;
	fbc_load_limits lim;
	fbc_error e;
	seen a1, a2, b1, b2;
	size_t hits;

	(void)state;
	fbc_error_init(&e);
	staged(&a1, t1, NULL);
	staged(&a2, t2, NULL);
	assert_int_equal(fbc_load_memo_create(&m, &e), 0);
	expect_shared(m, 2);
	fbc_load_limits_default(&lim);
	lim.memo = m;
	staged(&b1, t1, &lim);
	staged(&b2, t2, &lim);
	fbc_load_memo_stats(m, &hits, NULL, NULL);
	assert_int_equal(hits, 3);
	assert_int_equal(a2.n, b2.n);
	assert_int_equal(a2.n, 3);
	for (size_t i = 0; i < a1.n; i++)
		assert_string_equal(a1.rows[i], b1.rows[i]);
	for (size_t i = 0; i < a2.n; i++)
		assert_string_equal(a2.rows[i], b2.rows[i]);
	assert_string_equal(b2.rows[0], "pkg-a/catalog.yaml:2 olm.package  a 2");
	seen_dispose(&a1);
	seen_dispose(&a2);
	seen_dispose(&b1);
	seen_dispose(&b2);
	fbc_load_memo_free(m);
	fbc_tree_free(t1);
	fbc_tree_free(t2);
}

/* Loads on several threads at once share one memo. */
typedef struct par {
	fbc_tree *t;
	const fbc_load_limits *lim;
	result r;
} par;

static void *par_load(void *arg)
{
	par *p = arg;

	load(&p->r, p->t, p->lim);
	return NULL;
}

static void memo__concurrent_loads_share_it(void **state)
{
	fbc_tree *t1 = open_ids(p1, d1, 4), *t2 = open_ids(p2, d2, 4);
	fbc_load_memo *m = NULL;
	fbc_load_limits lim;
	fbc_error e;
	result plain1, plain2;
	par ps[8];
	pthread_t th[8];
	size_t hits, parsed, kept;

	(void)state;
	fbc_error_init(&e);
	load(&plain1, t1, NULL);
	load(&plain2, t2, NULL);
	for (int round = 0; round < 20; round++) {
		assert_int_equal(fbc_load_memo_create(&m, &e), 0);
		expect_shared(m, 8);
		fbc_load_limits_default(&lim);
		lim.memo = m;
		lim.threads = 2;
		for (int i = 0; i < 8; i++) {
			ps[i].t = i % 2 ? t2 : t1;
			ps[i].lim = &lim;
			assert_int_equal(pthread_create(&th[i], NULL, par_load, &ps[i]), 0);
		}
		for (int i = 0; i < 8; i++) {
			pthread_join(th[i], NULL);
			assert_same(i % 2 ? &plain2 : &plain1, &ps[i].r);
			result_dispose(&ps[i].r);
		}
		fbc_load_memo_stats(m, &hits, &parsed, &kept);
		/* every read either hit or parsed (a reader never waits for another) */
		assert_true(parsed >= 3);
		assert_true(hits <= 21);
		assert_int_equal(kept, 0);
		fbc_load_memo_free(m);
	}
	result_dispose(&plain1);
	result_dispose(&plain2);
	fbc_tree_free(t1);
	fbc_tree_free(t2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(memo__loads_give_what_they_give_without_it),
		cmocka_unit_test(memo__other_parse_bounds_do_not_use_it),
		cmocka_unit_test(memo__staged_loads_prepare_the_same_metas),
		cmocka_unit_test(memo__concurrent_loads_share_it),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
