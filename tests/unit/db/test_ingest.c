/* db/ ingest and queries with the real community-operators catalog. */
#include "db/db.h"
#include "pgtest.h"
#include "service/fbc/render.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>

static fbc_catalog *cat;
static fbc_db *db;

static long jint(json_t *j, const char *path1, const char *path2)
{
	json_t *v = json_object_get(j, path1);

	if (path2)
		v = json_object_get(v, path2);
	return (long)json_integer_value(v);
}

static size_t count_lines(const char *s, size_t n)
{
	size_t c = 0;

	for (size_t i = 0; i < n; i++)
		c += s[i] == '\n';
	return c;
}

static void fbc_db_ingest__real_catalog_counts(void **state)
{
	json_t *rev = NULL, *j = NULL;
	fbc_db_catalog_spec spec = {"community", 0, NULL, NULL};
	bool created = false;
	fbc_error err;
	size_t n_entries = 0, n_edges = 0;

	fbc_error_init(&err);
	assert_int_equal(fbc_db_catalog_create(&j, db, &spec, &err), 0);
	json_decref(j);
	if (fbc_db_ingest(&rev, &created, db, "community", cat, &err))
		fail_msg("ingest: %s", err.message);
	assert_true(created);
	assert_int_equal(jint(rev, "revision", NULL), 1);
	assert_true(json_is_true(json_object_get(rev, "current")));
	assert_int_equal(jint(rev, "counts", "packages"), 37);
	assert_int_equal(jint(rev, "counts", "bundles"), (long)cat->bundles.len);
	assert_int_equal(jint(rev, "counts", "channels"), (long)cat->channels.len);
	for (size_t i = 0; i < cat->channels.len; i++) {
		const fbc_channel *ch = FBC_CATALOG_AT(cat->channels, fbc_channel, i);

		n_entries += ch->n_entries;
		for (size_t k = 0; k < ch->n_entries; k++) {
			n_edges += ch->entries[k].replaces[0] != '\0';
			for (size_t s = 0; s < ch->entries[k].n_skips; s++)
				n_edges += ch->entries[k].skips[s][0] != '\0';
		}
	}
	assert_int_equal(jint(rev, "counts", "entries"), (long)n_entries);
	/* skipRange edges come on top of the replaces/skips edges. */
	assert_true(jint(rev, "counts", "edges") >= (long)n_edges);
	json_decref(rev);
}

static void fbc_db_ingest__reingest_is_a_noop(void **state)
{
	json_t *rev = NULL, *list = NULL;
	bool created = true;
	fbc_error err;

	fbc_error_init(&err);
	assert_int_equal(fbc_db_ingest(&rev, &created, db, "community", cat, &err), 0);
	assert_false(created);
	assert_int_equal(jint(rev, "revision", NULL), 1);
	json_decref(rev);
	assert_int_equal(fbc_db_revision_list(&list, db, "community", NULL, &err), 0);
	assert_int_equal(json_array_size(json_object_get(list, "items")), 1);
	json_decref(list);
	assert_int_equal(fbc_db_ingest(&rev, &created, db, "no-such-catalog", cat, &err),
			 FBC_ENOTFOUND);
}

static void fbc_db_all_get__equals_render(void **state)
{
	fbc_db_rev rev;
	fbc_buf want;
	char *data = NULL;
	size_t len = 0;
	fbc_error err;

	fbc_error_init(&err);
	fbc_buf_init(&want, 0);
	assert_int_equal(fbc_render_catalog(cat, fbc_render_to_buf, &want, &err), 0);
	assert_int_equal(fbc_db_revision_resolve(&rev, db, "community", 0, &err), 0);
	assert_int_equal(strncmp(rev.digest, "sha256:", 7), 0);
	assert_int_equal(fbc_db_all_get(&data, &len, db, &rev, &err), 0);
	assert_int_equal(len, want.len);
	assert_memory_equal(data, want.data, len);
	free(data);
	/* metas: every bundle blob, and only bundles. */
	assert_int_equal(fbc_db_metas_get(&data, &len, db, &rev, "olm.bundle", NULL, NULL, &err),
			 0);
	assert_int_equal(count_lines(data, len), cat->bundles.len);
	free(data);
	assert_int_equal(
		fbc_db_metas_get(&data, &len, db, &rev, "olm.package", "no-such", NULL, &err), 0);
	assert_int_equal(len, 0);
	free(data);
	fbc_buf_dispose(&want);
}

static void fbc_db_package_list__pages_and_filters(void **state)
{
	fbc_db_rev rev;
	fbc_db_page page = {10, NULL};
	fbc_db_package_filter f = {NULL, {NULL, NULL, NULL}, {NULL, NULL, NULL}, -1};
	char *cursor = NULL;
	size_t total = 0;
	json_t *j = NULL;
	fbc_error err;
	const fbc_package *p0 = cat->sorted_packages[0];

	fbc_error_init(&err);
	assert_int_equal(fbc_db_revision_resolve(&rev, db, "community", 0, &err), 0);
	for (int guard = 0; guard < 10; guard++) {
		assert_int_equal(fbc_db_package_list(&j, db, &rev, &f, &page, &err), 0);
		json_t *items = json_object_get(j, "items");

		for (size_t i = 0; i < json_array_size(items); i++)
			assert_string_equal(json_string_value(json_object_get(
						    json_array_get(items, i), "name")),
					    cat->sorted_packages[total + i]->name);
		total += json_array_size(items);
		free(cursor);
		cursor = json_is_string(json_object_get(j, "next"))
				 ? strdup(json_string_value(json_object_get(j, "next")))
				 : NULL;
		json_decref(j);
		if (!cursor)
			break;
		page.cursor = cursor;
	}
	assert_int_equal(total, 37);

	/* Prefix: the full name of the first package matches at least it. */
	f.name_prefix = p0->name;
	page.cursor = NULL;
	assert_int_equal(fbc_db_package_list(&j, db, &rev, &f, &page, &err), 0);
	assert_true(json_array_size(json_object_get(j, "items")) >= 1);
	json_decref(j);
	f.name_prefix = "zzzz-no-such";
	assert_int_equal(fbc_db_package_list(&j, db, &rev, &f, &page, &err), 0);
	assert_int_equal(json_array_size(json_object_get(j, "items")), 0);
	json_decref(j);

	/* Provided GVK: pick one from the first bundle that has one. */
	f.name_prefix = NULL;
	for (size_t i = 0; i < cat->bundles.len; i++) {
		const fbc_bundle *b = FBC_CATALOG_AT(cat->bundles, fbc_bundle, i);

		if (b->n_provided) {
			f.provides.kind = b->provided[0].kind;
			f.provides.group = b->provided[0].group;
			assert_int_equal(fbc_db_package_list(&j, db, &rev, &f, &page, &err), 0);
			json_t *items = json_object_get(j, "items");
			bool found = false;

			for (size_t k = 0; k < json_array_size(items); k++)
				found |= strcmp(json_string_value(json_object_get(
							json_array_get(items, k), "name")),
						b->package) == 0;
			assert_true(found);
			json_decref(j);
			break;
		}
	}
	f.provides.kind = "NoSuchKindAnywhere";
	f.provides.group = NULL;
	assert_int_equal(fbc_db_package_list(&j, db, &rev, &f, &page, &err), 0);
	assert_int_equal(json_array_size(json_object_get(j, "items")), 0);
	json_decref(j);
	free(cursor);
}

static void fbc_db_package_get__channels_bundles_graph(void **state)
{
	const fbc_package *pkg = cat->sorted_packages[0];
	fbc_db_rev rev;
	json_t *j = NULL;
	fbc_error err;
	size_t n_edges = 0;

	fbc_error_init(&err);
	assert_int_equal(fbc_db_revision_resolve(&rev, db, "community", 0, &err), 0);
	assert_int_equal(fbc_db_package_get(&j, db, &rev, pkg->name, &err), 0);
	assert_string_equal(json_string_value(json_object_get(j, "defaultChannel")),
			    pkg->default_channel);
	assert_int_equal(json_array_size(json_object_get(j, "channels")), pkg->n_channels);
	assert_int_equal(json_integer_value(json_object_get(j, "bundles")), (long)pkg->n_bundles);
	json_decref(j);
	assert_int_equal(fbc_db_package_get(&j, db, &rev, "no-such-package", &err), FBC_ENOTFOUND);

	const fbc_channel *ch = pkg->channels[0];
	assert_int_equal(fbc_db_channel_get(&j, db, &rev, pkg->name, ch->name, &err), 0);
	assert_int_equal(json_array_size(json_object_get(j, "entries")), ch->n_entries);
	json_decref(j);
	assert_int_equal(fbc_db_channel_graph(&j, db, &rev, pkg->name, ch->name, &err), 0);
	assert_int_equal(json_array_size(json_object_get(j, "nodes")), ch->n_entries);
	for (size_t k = 0; k < ch->n_entries; k++)
		n_edges += (ch->entries[k].replaces[0] != '\0') + ch->entries[k].n_skips;
	assert_true(json_array_size(json_object_get(j, "edges")) >= n_edges);
	json_decref(j);

	const fbc_bundle *b = pkg->bundles[0];
	assert_int_equal(fbc_db_bundle_get(&j, db, &rev, pkg->name, b->name, &err), 0);
	assert_int_equal(json_array_size(json_object_get(j, "properties")), b->n_properties);
	assert_int_equal(json_array_size(json_object_get(j, "relatedImages")), b->n_related_images);
	assert_int_equal(json_array_size(json_object_get(j, "channels")), b->n_channels);
	assert_int_equal(json_array_size(json_object_get(j, "provides")), b->n_provided);
	json_decref(j);

	fbc_db_page page = {1000, NULL};
	assert_int_equal(fbc_db_bundle_list(&j, db, &rev, pkg->name, &page, &err), 0);
	assert_int_equal(json_array_size(json_object_get(j, "items")), pkg->n_bundles);
	json_decref(j);
}

static void fbc_db_icon_get__decoded_with_media_type(void **state)
{
	fbc_db_rev rev;
	fbc_error err;
	int seen = 0;

	fbc_error_init(&err);
	assert_int_equal(fbc_db_revision_resolve(&rev, db, "community", 0, &err), 0);
	for (size_t i = 0; i < cat->n_sorted_packages; i++) {
		const fbc_package *p = cat->sorted_packages[i];
		void *data = NULL;
		char *mt = NULL;
		size_t len = 0;
		int rc = fbc_db_icon_get(&data, &len, &mt, db, &rev, p->name, &err);

		if (!p->icon_data) {
			assert_int_equal(rc, FBC_ENOTFOUND);
			continue;
		}
		assert_int_equal(rc, 0);
		assert_string_equal(mt, p->icon_mediatype);
		assert_true(len > 0 && len < strlen(p->icon_data)); /* decoded */
		seen++;
		free(data);
		free(mt);
	}
	assert_true(seen > 0);
}

static void fbc_db_registry__grpc_equivalents(void **state)
{
	const fbc_package *pkg = cat->sorted_packages[0];
	fbc_db_rev rev;
	json_t *j = NULL;
	fbc_error err;

	fbc_error_init(&err);
	assert_int_equal(fbc_db_revision_resolve(&rev, db, "community", 0, &err), 0);
	assert_int_equal(fbc_db_registry_list_packages(&j, db, &rev, &err), 0);
	assert_int_equal(json_array_size(json_object_get(j, "items")), 37);
	json_decref(j);
	assert_int_equal(fbc_db_registry_get_package(&j, db, &rev, pkg->name, &err), 0);
	assert_string_equal(json_string_value(json_object_get(j, "defaultChannelName")),
			    pkg->default_channel);
	json_decref(j);
	assert_int_equal(fbc_db_registry_get_bundle_for_channel(&j, db, &rev, pkg->name,
								pkg->default_channel, &err),
			 0);
	const char *head = json_string_value(json_object_get(j, "csvName"));
	assert_non_null(head);
	assert_string_equal(json_string_value(json_object_get(j, "channelName")),
			    pkg->default_channel);
	char *head_copy = strdup(head);
	json_decref(j);
	assert_int_equal(fbc_db_registry_get_bundle(&j, db, &rev, pkg->name, pkg->default_channel,
						    head_copy, &err),
			 0);
	assert_string_equal(json_string_value(json_object_get(j, "replaces")), "");
	json_decref(j);
	free(head_copy);
	assert_int_equal(fbc_db_registry_list_bundles(&j, db, &rev, &err), 0);
	size_t n_entries = 0;
	for (size_t i = 0; i < cat->channels.len; i++)
		n_entries += FBC_CATALOG_AT(cat->channels, fbc_channel, i)->n_entries;
	assert_int_equal(json_array_size(json_object_get(j, "items")), n_entries);
	json_decref(j);
}

typedef struct ingest_job {
	const char *catalog;
	bool created;
	int rc;
} ingest_job;

static void *ingest_thread(void *p)
{
	ingest_job *job = p;
	fbc_error err;

	fbc_error_init(&err);
	job->rc = fbc_db_ingest(NULL, &job->created, db, job->catalog, cat, &err);
	return NULL;
}

static void fbc_db_ingest__concurrent_identical_ingests_store_one_revision(void **state)
{
	fbc_db_catalog_spec spec = {"racing", 0, NULL, NULL};
	ingest_job jobs[3] = {{"racing", false, -1}, {"racing", false, -1}, {"racing", false, -1}};
	pthread_t t[3];
	json_t *j = NULL;
	fbc_error err;
	int created = 0;

	fbc_error_init(&err);
	assert_int_equal(fbc_db_catalog_create(&j, db, &spec, &err), 0);
	json_decref(j);
	for (int i = 0; i < 3; i++)
		assert_int_equal(pthread_create(&t[i], NULL, ingest_thread, &jobs[i]), 0);
	for (int i = 0; i < 3; i++) {
		pthread_join(t[i], NULL);
		assert_int_equal(jobs[i].rc, 0);
		created += jobs[i].created;
	}
	assert_int_equal(created, 1);
	assert_int_equal(fbc_db_revision_list(&j, db, "racing", NULL, &err), 0);
	assert_int_equal(json_array_size(json_object_get(j, "items")), 1);
	json_decref(j);
	/* Deleting the catalog removes its revisions' rows too. */
	assert_int_equal(fbc_db_catalog_delete(db, "racing", &err), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(fbc_db_ingest__real_catalog_counts),
		cmocka_unit_test(fbc_db_ingest__reingest_is_a_noop),
		cmocka_unit_test(fbc_db_all_get__equals_render),
		cmocka_unit_test(fbc_db_package_list__pages_and_filters),
		cmocka_unit_test(fbc_db_package_get__channels_bundles_graph),
		cmocka_unit_test(fbc_db_icon_get__decoded_with_media_type),
		cmocka_unit_test(fbc_db_registry__grpc_equivalents),
		cmocka_unit_test(fbc_db_ingest__concurrent_identical_ingests_store_one_revision),
	};
	fbc_db_options opt = {.pool_size = 4, .migrate = true};
	fbc_diags diags;
	fbc_error err;
	int rc;

	if (access(CATALOG_DIR, R_OK) != 0) {
		fprintf(stderr, "skip: %s is missing\n", CATALOG_DIR);
		return 77;
	}
	if ((rc = pgtest_start()))
		return rc;
	fbc_error_init(&err);
	fbc_diags_init(&diags, 0);
	opt.url = pgtest_new_db();
	if (fbc_catalog_load_dir(&cat, CATALOG_DIR, NULL, &diags, &err) ||
	    fbc_db_open(&db, &opt, &err)) {
		fprintf(stderr, "setup: %s\n", err.message);
		fbc_db_close(db);
		fbc_catalog_free(cat);
		fbc_diags_dispose(&diags);
		pgtest_stop();
		return 1;
	}
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	fbc_db_close(db);
	fbc_catalog_free(cat);
	fbc_diags_dispose(&diags);
	pgtest_stop();
	return rc;
}
