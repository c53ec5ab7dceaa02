/* The real community-operators catalog validates with zero findings, and
 * fbc_catalog_load_dir (typed decoding on the parser threads) builds the
 * same catalog, with the same findings, as add_meta on the loading thread. */
#include "service/fbc/model.h"
#include "service/fbc/validate.h"
#include "fbc_test_util.h"
#include "service/fbc/internal.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

static void fbc_catalog_load_dir__real_catalog_is_valid(void **state)
{
	const char *base = getenv("FBC_DATA_DIR");
	char root[1024];
	struct stat st;
	fbc_catalog *cat = NULL;
	fbc_diags diags;
	fbc_error err;
	size_t i;

	(void)state;
	snprintf(root, sizeof(root), "%s/community-operators/catalog-v4.20",
		 base ? base : "/work/shared/data");
	if (stat(root, &st) != 0) {
		fprintf(stderr, "skipped: %s not found\n", root);
		skip();
	}
	fbc_error_init(&err);
	assert_int_equal(fbc_diags_init(&diags, 0), 0);
	if (fbc_catalog_load_dir(&cat, root, NULL, &diags, &err) != 0)
		fail_msg("load: %s %s", err.where, err.message);
	assert_int_equal(fbc_validate(cat, NULL, &diags, &err), 0);
	for (i = 0; i < fbc_diags_count(&diags) && i < 20; i++) {
		const fbc_diag *d = fbc_diags_at(&diags, i);

		fprintf(stderr, "%s %s:%d %s\n", d->code, d->file ? d->file : "-", d->line,
			d->message);
	}
	assert_int_equal(fbc_diags_count(&diags), 0);
	assert_int_equal(cat->n_sorted_packages, 37);
	assert_true(cat->bundles.len > 37);
	fbc_catalog_free(cat);
	fbc_diags_dispose(&diags);
}

typedef struct sync_ctx {
	fbc_catalog *cat;
	fbc_diags *diags;
} sync_ctx;

static int sync_meta(void *ctx, const fbc_meta *m, fbc_error *err)
{
	sync_ctx *c = ctx;

	return fbc_catalog_add_meta(c->cat, m, c->diags, err);
}

/* Fingerprint of root loaded (staged: fbc_catalog_load_dir; or metas added
 * one by one on this thread), linked and validated; malloc'd. */
static char *load_print(const char *root, bool staged, unsigned threads)
{
	fbc_load_limits lim;
	fbc_catalog *cat = NULL;
	fbc_diags diags;
	fbc_error err;
	char *text;

	fbc_load_limits_default(&lim);
	lim.threads = threads;
	fbc_error_init(&err);
	assert_int_equal(fbc_diags_init(&diags, 0), 0);
	if (staged) {
		assert_int_equal(fbc_catalog_load_dir(&cat, root, &lim, &diags, &err), 0);
	} else {
		sync_ctx c = {NULL, &diags};

		assert_int_equal(fbc_catalog_create(&cat, &lim, &err), 0);
		c.cat = cat;
		assert_int_equal(fbc_load_dir(root, &lim, sync_meta, &c, &diags, &err), 0);
		assert_int_equal(fbc_catalog_link(cat, &err), 0);
	}
	text = tcat_validate_print(cat, &diags);
	fbc_catalog_free(cat);
	fbc_diags_dispose(&diags);
	return text;
}

static void put(const char *dir, const char *name, const char *text)
{
	char path[1024];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void fbc_catalog_load_dir__staged_equals_add_meta(void **state)
{
	char dir[] = "/tmp/fbc-staged-XXXXXX";
	char *a, *b, *c;
	char cmd[1100];

	(void)state;
	assert_non_null(mkdtemp(dir));
	put(dir, "a.yaml",
	    "schema: olm.package\nname: p\ndefaultChannel: nope\nicon: {base64data: aGk=, "
	    "mediatype: image/png}\nproperties:\n- {type: x.y, value: {b: 2, a: [1, 2.5, "
	    "null, \"q\\\"\\u0001\"]}}\n---\nschema: olm.bundle\nname: p.v1\npackage: "
	    "p\nimage: quay.io/x/y:1\nproperties:\n- {type: olm.package, value: {packageName: "
	    "p, version: 1.0.0}}\n- {type: olm.gvk, value: {group: g, kind: [K], version: "
	    "v1}}\n- {type: olm.gvk, value: {group: g, kind: K, version: v1}}\n- {type: "
	    "olm.gvk.required, value: {group: g, kind: K, version: 7}}\n- {type: "
	    "olm.package.required, value: {packageName: o, versionRange: '>=1'}}\n- {type: "
	    "olm.csv.metadata, value: {installModes: [{type: x, supported: 'yes'}]}}\n- {type: "
	    "olm.bundle.object, value: {data: 'not base64!'}}\n- {type: olm.bundle.object, "
	    "value: {data: a2luZDogQ2x1c3RlclNlcnZpY2VWZXJzaW9uCg==}}\n- {type: "
	    "olm.package}\n---\nschema: olm.channel\npackage: p\nname: s\nentries:\n- "
	    "{name: p.v1, skips: [a, '', 3]}\n---\nschema: my.other\npackage: p\nz: 1\na: "
	    "{y: [3, {k: v}]}\n---\n- not an object\n---\nschema: olm.bundle\nname: "
	    "b2\nName: dup\n");
	put(dir, "b.json",
	    "{\"schema\":\"olm.deprecations\",\"package\":\"p\",\"entries\":[{"
	    "\"reference\":{\"schema\":\"olm.bundle\",\"name\":\"p.v1\"},\"message\":"
	    "\"m\"}]}\n{\"schema\":\"olm.package\",\"name\":7}\n{\"schema\":"
	    "\"olm.channel\",\"package\":\"p\",\"name\":\"s2\",\"entries\":[{\"name\":"
	    "\"p.v1\"}],\"properties\":[{\"type\":\"t\",\"value\":{\"b\":1E+20}}]}\n");
	a = load_print(dir, false, 1);
	b = load_print(dir, true, 1);
	c = load_print(dir, true, 3);
	assert_non_null(strstr(a, "D C11 ")); /* the tree exercises findings */
	assert_non_null(strstr(a, "D L11 "));
	assert_non_null(strstr(a, "B p/p.v1 a.yaml:8 1.0.0  1 1 0 1 2 {\"kind\""));
	assert_string_equal(a, b);
	assert_string_equal(a, c);
	free(a);
	free(b);
	free(c);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
}

static void fbc_catalog_load_dir__staged_equals_add_meta_on_real_catalog(void **state)
{
	const char *base = getenv("FBC_DATA_DIR");
	char root[1024];
	struct stat st;
	char *a, *b;

	(void)state;
	snprintf(root, sizeof(root), "%s/community-operators/catalog-v4.20",
		 base ? base : "/work/shared/data");
	if (stat(root, &st) != 0)
		skip();
	a = load_print(root, false, 2);
	b = load_print(root, true, 2);
	assert_true(strlen(a) > 10000000); /* the property values are in it */
	assert_string_equal(a, b);
	free(a);
	free(b);
}

/* Linking: a package's bundles sorted by name, duplicates in the order declared
 * (bundles declared in any order, some already sorted); every channel entry,
 * in any order, links the first-declared bundle of its name, and a bundle
 * lists each channel naming it once. */
static void fbc_catalog_link__entries_find_the_first_declared(void **state)
{
	static const char *const text =
		"{\"schema\":\"olm.package\",\"name\":\"foo\"}\n"
		"{\"schema\":\"olm.bundle\",\"name\":\"foo.d\",\"package\":\"foo\"}\n"
		"{\"schema\":\"olm.bundle\",\"name\":\"foo.b\",\"package\":\"foo\"}\n"
		"{\"schema\":\"olm.bundle\",\"name\":\"foo.c\",\"package\":\"foo\"}\n"
		"{\"schema\":\"olm.bundle\",\"name\":\"foo.b\",\"package\":\"foo\"}\n"
		"{\"schema\":\"olm.bundle\",\"name\":\"foo.a\",\"package\":\"foo\"}\n"
		"{\"schema\":\"olm.bundle\",\"name\":\"foo.e\",\"package\":\"foo\"}\n"
		"{\"schema\":\"olm.bundle\",\"name\":\"foo.f\",\"package\":\"foo\"}\n"
		"{\"schema\":\"olm.bundle\",\"name\":\"foo.c\",\"package\":\"foo\"}\n"
		"{\"schema\":\"olm.channel\",\"name\":\"one\",\"package\":\"foo\",\"entries\":["
		"{\"name\":\"foo.a\"},{\"name\":\"foo.b\"},{\"name\":\"foo.c\"},{\"name\":\"foo."
		"d\"},"
		"{\"name\":\"foo.b\"},{\"name\":\"foo.x\"},{\"name\":\"foo.c\"},{\"name\":\"foo."
		"f\"}]}\n"
		"{\"schema\":\"olm.channel\",\"name\":\"two\",\"package\":\"foo\",\"entries\":["
		"{\"name\":\"foo.c\"},{\"name\":\"foo.c\"},{\"name\":\"foo.b\"},{\"name\":\"foo."
		"a\"},"
		"{\"name\":\"foo.e\"}]}\n";
	/* line of the first-declared bundle of each name */
	static const struct {
		const char *name;
		int line;
	} first[] = {{"foo.a", 6}, {"foo.b", 3}, {"foo.c", 4},
		     {"foo.d", 2}, {"foo.e", 7}, {"foo.f", 8}};
	static const int sorted_lines[] = {6, 3, 5, 4, 9, 2, 7, 8};
	tcat t;
	const fbc_package *p;

	(void)state;
	memset(&t, 0, sizeof(t));
	tcat_load(&t, text);
	p = fbc_catalog_package(t.cat, "foo");
	assert_non_null(p);
	assert_int_equal(p->n_bundles, 8);
	for (size_t i = 0; i < 8; i++)
		assert_int_equal(p->bundles[i]->loc.line, sorted_lines[i]);
	for (size_t j = 0; j < p->n_channels; j++) {
		const fbc_channel *c = p->channels[j];

		for (size_t k = 0; k < c->n_entries; k++) {
			const fbc_bundle *b = c->entries[k].bundle;
			int want = 0;

			for (size_t f = 0; f < sizeof(first) / sizeof(first[0]); f++)
				if (strcmp(first[f].name, c->entries[k].name) == 0)
					want = first[f].line;
			if (want == 0) {
				assert_null(b);
				continue;
			}
			assert_non_null(b);
			assert_string_equal(b->name, c->entries[k].name);
			assert_int_equal(b->loc.line, want);
			assert_ptr_equal(fbc_package_bundle(p, b->name), b);
		}
	}
	for (size_t i = 0; i < 8; i++) {
		const fbc_bundle *b = p->bundles[i];
		size_t want = 0;

		/* the first-declared of each name: both channels but d (one) and e (two) */
		for (size_t f = 0; f < sizeof(first) / sizeof(first[0]); f++)
			if (first[f].line == (int)b->loc.line)
				want = strcmp(b->name, "foo.d") == 0 ||
						       strcmp(b->name, "foo.e") == 0 ||
						       strcmp(b->name, "foo.f") == 0
					       ? 1
					       : 2;
		assert_int_equal(b->n_channels, want);
		for (size_t k = 0; k < b->n_channels; k++)
			for (size_t m = k + 1; m < b->n_channels; m++)
				assert_ptr_not_equal(b->channels[k], b->channels[m]);
	}
	tcat_dispose(&t);
}

/* fbc_gt_members finds what fbc_gt_get finds for each name (the member equal
 * ignoring ASCII case that sorts last, nulls skipped), and with a name's
 * nulls bit the last such member even when it is null: objects of random
 * case variants, nulls, strings and other keys, in random order. */
static void fbc_gt_members__as_one_lookup_each(void **state)
{
	static const char *const keys[] = {"name",
					   "Name",
					   "NAME",
					   "nAmE",
					   "image",
					   "Image",
					   "imagE",
					   "relatedImages",
					   "relatedimages",
					   "RelatedImages",
					   "RELATEDIMAGES",
					   "names",
					   "x",
					   "imag",
					   "\xc3\xa9"};
	static const char *const names[] = {"name", "image", "relatedImages"};
	const size_t nk = sizeof(keys) / sizeof(keys[0]);
	unsigned seed = 7;

	(void)state;
	for (int round = 0; round < 20000; round++) {
		json_t *o = json_object(), *got[3], *want_null[3];
		size_t n = (size_t)(rand_r(&seed) % 7);
		unsigned nulls = (unsigned)(rand_r(&seed) % 8);

		assert_non_null(o);
		for (size_t i = 0; i < n; i++) {
			const char *k = keys[rand_r(&seed) % nk];
			json_t *v = rand_r(&seed) % 3 == 0 ? json_null() : json_string(k);

			assert_int_equal(json_object_set_new(o, k, v), 0);
		}
		fbc_gt_members(o, names, 3, 0, got);
		for (size_t i = 0; i < 3; i++)
			assert_ptr_equal(got[i], fbc_gt_get(o, names[i]));
		/* nulls: the reference, a plain scan */
		for (size_t i = 0; i < 3; i++) {
			const char *best = NULL, *k;
			json_t *v;

			want_null[i] = NULL;
			json_object_foreach(o, k, v)
			{
				if (strcasecmp(k, names[i]) != 0 ||
				    (!(nulls >> i & 1) && json_is_null(v)))
					continue;
				if (!best || strcmp(k, best) > 0) {
					best = k;
					want_null[i] = v;
				}
			}
		}
		fbc_gt_members(o, names, 3, nulls, got);
		for (size_t i = 0; i < 3; i++)
			assert_ptr_equal(got[i], want_null[i]);
		json_decref(o);
	}
	{
		json_t *got[3], *str = json_string("name");

		fbc_gt_members(NULL, names, 3, 7, got);
		assert_null(got[0]);
		fbc_gt_members(str, names, 3, 7, got); /* not an object: nothing */
		assert_null(got[0]);
		assert_null(got[2]);
		json_decref(str);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(fbc_catalog_load_dir__real_catalog_is_valid),
		cmocka_unit_test(fbc_catalog_link__entries_find_the_first_declared),
		cmocka_unit_test(fbc_gt_members__as_one_lookup_each),
		cmocka_unit_test(fbc_catalog_load_dir__staged_equals_add_meta),
		cmocka_unit_test(fbc_catalog_load_dir__staged_equals_add_meta_on_real_catalog),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
