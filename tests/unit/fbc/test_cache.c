/* fbc_catalog_cache: catalogs loaded through the file cache are exactly the
 * catalogs loaded without it (every record field decoding and linking make,
 * every finding at its own path), a file shared by two trees is read once,
 * a changed file is read again, and catalogs outlive the cache and each
 * other. Trees here report content ids as git trees do (FNV-1a of the bytes
 * and the size), over directories on disk. */
#include "service/fbc/model.h"
#include "service/fbc/validate.h"
#include "fbc_test_util.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

/* ---- a directory tree with content ids ---- */

typedef struct idtree {
	fbc_tree *dir;
	char root[1024];
} idtree;

static void id_of_file(char out[FBC_TREE_ID_MAX], const char *path)
{
	FILE *f = fopen(path, "rb");
	uint64_t h = 1469598103934665603ULL;
	size_t n = 0;
	int ch;

	out[0] = '\0';
	if (!f)
		return;
	while ((ch = fgetc(f)) != EOF) {
		h = (h ^ (unsigned char)ch) * 1099511628211ULL;
		n++;
	}
	fclose(f);
	snprintf(out, FBC_TREE_ID_MAX, "%016llx%08zx", (unsigned long long)h, n);
}

static int id_list(void *self, fbc_vec *out, const char *dir, fbc_error *err)
{
	idtree *t = self;
	size_t start = out->len;
	int rc = fbc_tree_list(t->dir, out, dir, err);

	for (size_t i = start; rc == 0 && i < out->len; i++) {
		fbc_tree_entry *e = FBC_VEC_AT(out, fbc_tree_entry, i);
		char path[4096];

		if (e->kind != FBC_TREE_FILE)
			continue;
		snprintf(path, sizeof(path), "%s/%s%s%s", t->root, dir, *dir ? "/" : "", e->name);
		id_of_file(e->id, path);
	}
	return rc;
}

static int id_follow(void *self, fbc_tree_entry *out, const char *path, fbc_error *err)
{
	return fbc_tree_follow(((idtree *)self)->dir, out, path, err);
}

static int id_read(void *self, fbc_tree_blob *out, const char *path, size_t max, fbc_error *err)
{
	return fbc_tree_read(((idtree *)self)->dir, out, path, max, err);
}

static void id_release(void *self, fbc_tree_blob *b)
{
	fbc_tree_blob_release(((idtree *)self)->dir, b);
}

static void id_free(void *self)
{
	idtree *t = self;

	fbc_tree_free(t->dir);
	free(t);
}

static const fbc_tree_ops id_ops = {id_list, id_follow, id_read, id_release, id_free};

static fbc_tree *open_ids(const char *root)
{
	idtree *t = calloc(1, sizeof(*t));
	fbc_tree *out = NULL;
	fbc_error e;

	assert_non_null(t);
	snprintf(t->root, sizeof(t->root), "%s", root);
	fbc_error_init(&e);
	assert_int_equal(fbc_tree_open_dir(&t->dir, root, &e), 0);
	assert_int_equal(fbc_tree_create(&out, &id_ops, t, root, &e), 0);
	return out;
}

/* ---- loads ---- */

/* Load (through cc when given), validate, fingerprint; the catalog goes to *keep when keep is
 * given, else it is freed. malloc'd text. */
static char *print(fbc_tree *t, fbc_catalog_cache *cc, unsigned threads, bool validate_only,
		   fbc_catalog **keep)
{
	fbc_load_limits lim;
	fbc_catalog *cat = NULL;
	fbc_diags diags;
	fbc_error err;
	char *text;

	fbc_load_limits_default(&lim);
	lim.threads = threads;
	lim.validate_only = validate_only;
	fbc_error_init(&err);
	assert_int_equal(fbc_diags_init(&diags, 0), 0);
	if (fbc_catalog_load_tree_cached(&cat, t, &lim, cc, &diags, &err) != 0)
		fail_msg("load: %s: %s", err.where, err.message);
	text = tcat_validate_print(cat, &diags);
	if (keep)
		*keep = cat;
	else
		fbc_catalog_free(cat);
	fbc_diags_dispose(&diags);
	return text;
}

static void put(const char *dir, const char *name, const char *text)
{
	char path[1024], cmd[1200];
	FILE *f;

	snprintf(cmd, sizeof(cmd), "mkdir -p \"$(dirname '%s/%s')\"", dir, name);
	assert_int_equal(system(cmd), 0);
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

#define PKG_A                                                                                   \
	"schema: olm.package\nname: a\ndefaultChannel: stable\n---\nschema: olm.channel\n"      \
	"package: a\nname: stable\nentries:\n- name: a.v1\n- name: a.v2\n  replaces: a.v1\n  "  \
	"skips: [a.v0]\n---\nschema: olm.bundle\nname: a.v1\npackage: a\nimage: q.io/a:1\n"     \
	"properties:\n- {type: olm.package, value: {packageName: a, version: 1.0.0}}\n"         \
	"- {type: olm.gvk, value: {group: g, kind: K, version: v1}}\n---\nschema: olm.bundle\n" \
	"name: a.v2\npackage: a\nimage: q.io/a:2\nproperties:\n- {type: olm.package, value: "   \
	"{packageName: a, version: 2.0.0}}\n- {type: olm.csv.metadata, value: {displayName: "   \
	"A}}\n- {type: olm.package.required, value: {packageName: b, versionRange: '>=1'}}\n"

#define PKG_B                                                                                     \
	"{\"schema\":\"olm.package\",\"name\":\"b\",\"defaultChannel\":\"fast\"}\n"               \
	"{\"schema\":\"olm.channel\",\"package\":\"b\",\"name\":\"fast\",\"entries\":[{\"name\":" \
	"\"b.v1\"}]}\n{\"schema\":\"olm.bundle\",\"package\":\"b\",\"name\":\"b.v1\",\"image\":"  \
	"\"q.io/b:1\",\"properties\":[{\"type\":\"olm.package\",\"value\":{\"packageName\":"      \
	"\"b\",\"version\":\"1.0.0\"}},{\"type\":\"olm.bundle.object\",\"value\":{\"data\":"      \
	"\"not base64!\"}}]}\n"

/* a file with findings (L5 after a good document) and a deprecation */
#define BROKEN                                                                                     \
	"schema: olm.deprecations\npackage: a\nentries:\n- reference: {schema: olm.bundle, name: " \
	"a.v1}\n  message: old\n---\nschema: x\nname: [1\n"

static void make_catalog(const char *dir)
{
	put(dir, "a/catalog.yaml", PKG_A);
	put(dir, "b/catalog.json", PKG_B);
	put(dir, "c/broken.yaml", BROKEN);
	put(dir, "c/copy/broken.yaml", BROKEN); /* the same content at another path */
}

static void rm_rf(const char *dir)
{
	char cmd[1100];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
}

static void cache__loads_equal_uncached_loads(void **state)
{
	char d1[] = "/tmp/fbc-cache-XXXXXX", d2[] = "/tmp/fbc-cache-XXXXXX";
	fbc_tree *t1, *t2;
	fbc_catalog_cache *cc = NULL;
	fbc_error e;
	size_t files, hits, misses;

	(void)state;
	assert_non_null(mkdtemp(d1));
	assert_non_null(mkdtemp(d2));
	make_catalog(d1);
	make_catalog(d2);
	/* d2: package a changed (a.v3 added) */
	put(d2, "a/catalog.yaml",
	    PKG_A "---\nschema: olm.bundle\nname: a.v3\npackage: a\nimage: q.io/a:3\n"
		  "properties:\n- {type: olm.package, value: {packageName: a, version: 3.0.0}}\n");
	t1 = open_ids(d1);
	t2 = open_ids(d2);
	fbc_error_init(&e);
	assert_int_equal(fbc_catalog_cache_create(&cc, 0, &e), 0);
	for (int validate_only = 0; validate_only <= 1; validate_only++)
		for (unsigned threads = 1; threads <= 2; threads++) {
			char *p1 = print(t1, NULL, threads, validate_only, NULL);
			char *p2 = print(t2, NULL, threads, validate_only, NULL);
			char *c1 = print(t1, cc, threads, validate_only, NULL);
			char *c1b = print(t1, cc, threads, validate_only, NULL);
			char *c2 = print(t2, cc, threads, validate_only, NULL);

			/* not vacuous: records, findings at both paths of the shared file */
			assert_non_null(strstr(p1, "B a/a.v2 a/catalog.yaml:"));
			assert_non_null(strstr(p1, "D L5 c/broken.yaml:"));
			assert_non_null(strstr(p1, "D L5 c/copy/broken.yaml:"));
			assert_non_null(strstr(p2, "B a/a.v3 "));
			assert_string_equal(p1, c1);
			assert_string_equal(p1, c1b);
			assert_string_equal(p2, c2);
			free(p1);
			free(p2);
			free(c1);
			free(c1b);
			free(c2);
		}
	fbc_catalog_cache_stats(cc, &files, NULL, &hits, &misses);
	/* per (validate_only) key: 4 files of d1 (the copy a hit of its twin, or parsed beside
	 * it) and d2's changed a/catalog.yaml; every other read a hit */
	assert_true(files >= 2 * 4 && files <= 2 * 5);
	assert_true(hits >= 2 * (2 * 4 + 3 + 4 + 3) - 4);
	(void)misses;
	fbc_catalog_cache_free(cc);
	fbc_tree_free(t1);
	fbc_tree_free(t2);
	rm_rf(d1);
	rm_rf(d2);
}

static void cache__catalogs_outlive_the_cache_and_each_other(void **state)
{
	char d1[] = "/tmp/fbc-cache-XXXXXX";
	fbc_tree *t1;
	fbc_catalog_cache *cc = NULL;
	fbc_catalog *k1 = NULL, *k2 = NULL;
	fbc_error e;
	char *a, *b, *c;

	(void)state;
	assert_non_null(mkdtemp(d1));
	make_catalog(d1);
	t1 = open_ids(d1);
	fbc_error_init(&e);
	assert_int_equal(fbc_catalog_cache_create(&cc, 0, &e), 0);
	a = print(t1, cc, 2, false, &k1); /* decodes into k1's arenas, the cache keeps them */
	b = print(t1, cc, 2, false, &k2); /* k2 uses k1's records (copies of them) */
	fbc_catalog_cache_free(cc);
	fbc_catalog_free(k1);
	/* k2's records still there (ASan: no use after free), its links its own */
	{
		fbc_package *p = fbc_catalog_package(k2, "a");

		assert_non_null(p);
		assert_int_equal(p->n_channels, 1);
		assert_int_equal(p->n_bundles, 2);
		assert_ptr_equal(p->channels[0]->entries[1].bundle, p->bundles[1]);
		assert_ptr_equal(p->bundles[0]->pkg, p);
	}
	c = print(t1, NULL, 1, false, NULL);
	assert_string_equal(a, b);
	assert_string_equal(a, c);
	fbc_catalog_free(k2);
	free(a);
	free(b);
	free(c);
	fbc_tree_free(t1);
	rm_rf(d1);
}

static void cache__a_small_bound_evicts_and_stays_correct(void **state)
{
	char d1[] = "/tmp/fbc-cache-XXXXXX";
	fbc_tree *t1;
	fbc_catalog_cache *cc = NULL;
	fbc_error e;
	char *p, *q;
	size_t files, bytes;

	(void)state;
	assert_non_null(mkdtemp(d1));
	make_catalog(d1);
	t1 = open_ids(d1);
	fbc_error_init(&e);
	assert_int_equal(fbc_catalog_cache_create(&cc, 1500, &e), 0);
	p = print(t1, NULL, 2, false, NULL);
	for (int i = 0; i < 20; i++) {
		q = print(t1, cc, 2, false, NULL);
		assert_string_equal(p, q);
		free(q);
	}
	fbc_catalog_cache_stats(cc, &files, &bytes, NULL, NULL);
	assert_true(bytes <= 1500);
	assert_true(files < 4);
	free(p);
	fbc_catalog_cache_free(cc);
	fbc_tree_free(t1);
	rm_rf(d1);
}

/* The real catalog: loaded through the cache twice (the second time every file a hit), the
 * same as without it. */
static void cache__real_catalog(void **state)
{
	const char *base = getenv("FBC_DATA_DIR");
	char root[1024];
	struct stat st;
	fbc_tree *t;
	fbc_catalog_cache *cc = NULL;
	fbc_error e;
	char *a, *b, *c;
	size_t files, hits;

	(void)state;
	snprintf(root, sizeof(root), "%s/community-operators/catalog-v4.20",
		 base ? base : "/work/shared/data");
	if (stat(root, &st) != 0)
		skip();
	t = open_ids(root);
	fbc_error_init(&e);
	assert_int_equal(fbc_catalog_cache_create(&cc, 0, &e), 0);
	a = print(t, NULL, 2, false, NULL);
	b = print(t, cc, 2, false, NULL);
	c = print(t, cc, 2, false, NULL);
	fbc_catalog_cache_stats(cc, &files, NULL, &hits, NULL);
	assert_int_equal(files, 37);
	assert_int_equal(hits, 37);
	assert_true(strlen(a) > 10000000);
	assert_string_equal(a, b);
	assert_string_equal(a, c);
	free(a);
	free(b);
	free(c);
	fbc_catalog_cache_free(cc);
	fbc_tree_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(cache__loads_equal_uncached_loads),
		cmocka_unit_test(cache__catalogs_outlive_the_cache_and_each_other),
		cmocka_unit_test(cache__a_small_bound_evicts_and_stays_correct),
		cmocka_unit_test(cache__real_catalog),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
