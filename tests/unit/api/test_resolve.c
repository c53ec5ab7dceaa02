/* Unit tests for POST /v1/resolve without a database: the loaded-catalog
 * cache (hits, LRU eviction that never frees an entry in use, one load per
 * digest under concurrency, failed loads not cached, the byte budget) and
 * the handler on inline catalogs (results, problems, "path" refused). The
 * registered-catalog path is covered end to end by
 * tests/integration/api_resolve.sh. */
#include "api/http/http.h"
#include "service/base/buf.h"
#include "api/http/app.h"
#include "api/http/catcache.h"

#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

/* ---------------------------------------------------------------- cache */

struct loader {
	pthread_mutex_t lock;
	int calls;
	int fail;	   /* return this code instead of a catalog */
	unsigned delay_ms; /* make concurrent callers overlap */
};

static int load_empty(fbc_catalog **out, void *ctx, fbc_error *err)
{
	struct loader *l = ctx;
	fbc_catalog *cat = NULL;
	int rc;

	pthread_mutex_lock(&l->lock);
	l->calls++;
	pthread_mutex_unlock(&l->lock);
	if (l->delay_ms) {
		struct timespec ts = {0, (long)l->delay_ms * 1000000L};
		nanosleep(&ts, NULL);
	}
	if (l->fail)
		return fbc_error_set(err, l->fail, "db", "revision is gone");
	if ((rc = fbc_catalog_create(&cat, NULL, err)) != 0)
		return rc;
	if ((rc = fbc_catalog_link(cat, err)) != 0) {
		fbc_catalog_free(cat);
		return rc;
	}
	*out = cat;
	return 0;
}

static void loader_init(struct loader *l)
{
	memset(l, 0, sizeof(*l));
	pthread_mutex_init(&l->lock, NULL);
}

static void fbc_http_catcache_acquire__loads_once_then_hits(void **state)
{
	(void)state;
	fbc_http_catcache *c = NULL;
	const fbc_http_catentry *a = NULL, *b = NULL;
	fbc_http_catcache_stats st;
	struct loader l;
	fbc_error err;

	loader_init(&l);
	fbc_error_init(&err);
	assert_int_equal(fbc_http_catcache_create(&c, 4, 0), 0);
	assert_int_equal(fbc_http_catcache_acquire(&a, c, "sha256:aa", load_empty, &l, &err), 0);
	assert_int_equal(fbc_http_catcache_acquire(&b, c, "sha256:aa", load_empty, &l, &err), 0);
	assert_ptr_equal(a, b);
	assert_non_null(a->catalog);
	assert_true(a->catalog->linked);
	assert_non_null(a->index);
	assert_int_equal(l.calls, 1);
	fbc_http_catcache_stats_get(c, &st);
	assert_int_equal(st.entries, 1);
	assert_int_equal(st.misses, 1);
	assert_int_equal(st.hits, 1);
	assert_int_equal(st.bytes, a->bytes);
	fbc_http_catcache_release(a);
	fbc_http_catcache_release(b);
	fbc_http_catcache_free(c);
}

static void fbc_http_catcache_acquire__evicts_lru_keeps_in_use(void **state)
{
	(void)state;
	fbc_http_catcache *c = NULL;
	const fbc_http_catentry *a = NULL, *b = NULL, *x = NULL;
	fbc_http_catcache_stats st;
	struct loader l;
	fbc_error err;

	loader_init(&l);
	fbc_error_init(&err);
	assert_int_equal(fbc_http_catcache_create(&c, 2, 0), 0);
	assert_int_equal(fbc_http_catcache_acquire(&a, c, "d1", load_empty, &l, &err), 0);
	assert_int_equal(fbc_http_catcache_acquire(&b, c, "d2", load_empty, &l, &err), 0);
	fbc_http_catcache_release(b);
	/* d2 is more recent than d1 */
	assert_int_equal(fbc_http_catcache_acquire(&b, c, "d2", load_empty, &l, &err), 0);
	fbc_http_catcache_release(b);
	assert_int_equal(fbc_http_catcache_acquire(&x, c, "d3", load_empty, &l, &err), 0);
	fbc_http_catcache_release(x);
	fbc_http_catcache_stats_get(c, &st);
	assert_int_equal(st.entries, 2);
	assert_int_equal(st.evictions, 1);
	/* d1 left the table but is still ours to read (ASan would catch a free) */
	assert_true(a->catalog->linked);
	assert_int_equal(a->catalog->n_sorted_packages, 0);
	fbc_http_catcache_release(a);
	/* d2 stayed, d1 is loaded again */
	assert_int_equal(l.calls, 3);
	assert_int_equal(fbc_http_catcache_acquire(&b, c, "d2", load_empty, &l, &err), 0);
	fbc_http_catcache_release(b);
	assert_int_equal(l.calls, 3);
	assert_int_equal(fbc_http_catcache_acquire(&a, c, "d1", load_empty, &l, &err), 0);
	fbc_http_catcache_release(a);
	assert_int_equal(l.calls, 4);
	fbc_http_catcache_free(c);
}

static void fbc_http_catcache_acquire__failed_load_is_reported_not_cached(void **state)
{
	(void)state;
	fbc_http_catcache *c = NULL;
	const fbc_http_catentry *a = NULL;
	fbc_http_catcache_stats st;
	struct loader l;
	fbc_error err;

	loader_init(&l);
	fbc_error_init(&err);
	l.fail = FBC_ENOTFOUND;
	assert_int_equal(fbc_http_catcache_create(&c, 2, 0), 0);
	assert_int_equal(fbc_http_catcache_acquire(&a, c, "d1", load_empty, &l, &err),
			 FBC_ENOTFOUND);
	assert_null(a);
	assert_string_equal(err.message, "revision is gone");
	fbc_http_catcache_stats_get(c, &st);
	assert_int_equal(st.entries, 0);
	l.fail = 0;
	assert_int_equal(fbc_http_catcache_acquire(&a, c, "d1", load_empty, &l, &err), 0);
	assert_int_equal(l.calls, 2);
	fbc_http_catcache_release(a);
	fbc_http_catcache_free(c);
}

static void fbc_http_catcache_acquire__over_budget_is_used_once(void **state)
{
	(void)state;
	fbc_http_catcache *c = NULL;
	const fbc_http_catentry *a = NULL;
	fbc_http_catcache_stats st;
	struct loader l;
	fbc_error err;

	loader_init(&l);
	fbc_error_init(&err);
	assert_int_equal(fbc_http_catcache_create(&c, 4, 1), 0); /* 1 byte */
	assert_int_equal(fbc_http_catcache_acquire(&a, c, "d1", load_empty, &l, &err), 0);
	assert_true(a->bytes > 1);
	assert_true(a->catalog->linked);
	fbc_http_catcache_stats_get(c, &st);
	assert_int_equal(st.entries, 0);
	assert_int_equal(st.bytes, 0);
	fbc_http_catcache_release(a);
	fbc_http_catcache_free(c);
}

struct racer {
	fbc_http_catcache *c;
	struct loader *l;
	const fbc_http_catentry *got;
	int rc;
};

static void *race(void *p)
{
	struct racer *r = p;
	fbc_error err;

	fbc_error_init(&err);
	r->rc = fbc_http_catcache_acquire(&r->got, r->c, "same", load_empty, r->l, &err);
	return NULL;
}

static void fbc_http_catcache_acquire__one_load_per_digest_under_concurrency(void **state)
{
	(void)state;
	enum { N = 8 };
	fbc_http_catcache *c = NULL;
	pthread_t th[N];
	struct racer r[N];
	struct loader l;
	fbc_http_catcache_stats st;

	loader_init(&l);
	l.delay_ms = 100;
	assert_int_equal(fbc_http_catcache_create(&c, 2, 0), 0);
	for (int i = 0; i < N; i++) {
		r[i].c = c;
		r[i].l = &l;
		r[i].got = NULL;
		r[i].rc = -100;
		assert_int_equal(pthread_create(&th[i], NULL, race, &r[i]), 0);
	}
	for (int i = 0; i < N; i++)
		pthread_join(th[i], NULL);
	assert_int_equal(l.calls, 1);
	for (int i = 0; i < N; i++) {
		assert_int_equal(r[i].rc, 0);
		assert_ptr_equal(r[i].got, r[0].got);
		fbc_http_catcache_release(r[i].got);
	}
	fbc_http_catcache_stats_get(c, &st);
	assert_int_equal(st.misses, 1);
	assert_int_equal(st.hits + st.waits, N - 1);
	fbc_http_catcache_free(c);
}

/* -------------------------------------------------------------- handler */

static fbc_http_app app;

struct answer {
	int status;
	char code[64];
	json_t *json;
};

/* POST body to the handler (no database: inline catalogs only). */
static struct answer post(const char *body, const char *stats)
{
	fbc_http_req req;
	fbc_http_resp resp;
	fbc_arena *a = NULL;
	struct answer ans;
	json_error_t je;

	memset(&ans, 0, sizeof(ans));
	assert_int_equal(fbc_arena_create(&a, 0), 0);
	memset(&req, 0, sizeof(req));
	memset(&resp, 0, sizeof(resp));
	req.arena = a;
	req.method = "POST";
	req.path = "/v1/resolve";
	req.body = body;
	req.body_len = strlen(body);
	req.app = &app;
	if (stats) {
		req.query[0].key = "stats";
		req.query[0].value = stats;
		req.n_query = 1;
	}
	assert_int_equal(fbc_http_api_resolve(&req, &resp), 0);
	ans.status = resp.status;
	ans.json = json_loadb(resp.body, resp.body_len, 0, &je);
	assert_non_null(ans.json);
	if (resp.content_type && strstr(resp.content_type, "problem"))
		snprintf(ans.code, sizeof(ans.code), "%s",
			 json_string_value(json_object_get(ans.json, "code")));
	fbc_http_resp_dispose(&resp);
	fbc_arena_free(a);
	return ans;
}

#define PKG(n) "{\"schema\":\"olm.package\",\"name\":\"" n "\",\"defaultChannel\":\"stable\"}"
#define CHAN(p, b)                                     \
	"{\"schema\":\"olm.channel\",\"package\":\"" p \
	"\",\"name\":\"stable\",\"entries\":[{\"name\":\"" b "\"}]}"
#define BUNDLE(p, b, v, extra)                                                        \
	"{\"schema\":\"olm.bundle\",\"package\":\"" p "\",\"name\":\"" b              \
	"\",\"image\":\"quay.io/x/" b "\",\"properties\":[{\"type\":\"olm.package\"," \
	"\"value\":{\"packageName\":\"" p "\",\"version\":\"" v "\"}}" extra "]}"
#define NEEDS_GVK                                                                           \
	",{\"type\":\"olm.gvk.required\",\"value\":{\"group\":\"x.io\",\"version\":\"v1\"," \
	"\"kind\":\"Thing\"}}"

static const char INLINE[] =
	"{\"catalogs\":[{\"name\":\"mine\",\"fbc\":[" PKG("a") "," CHAN("a", "a.v1") "," BUNDLE(
		"a", "a.v1", "1.0.0",
		"") "," PKG("b") "," CHAN("b", "b.v1") "," BUNDLE("b", "b.v1", "1.0.0",
								  NEEDS_GVK) "]}],";

static char *body_with(const char *rest)
{
	size_t n = strlen(INLINE) + strlen(rest) + 1;
	char *s = malloc(n);
	assert_non_null(s);
	snprintf(s, n, "%s%s", INLINE, rest);
	return s;
}

static void fbc_http_api_resolve__inline_catalog_is_resolved(void **state)
{
	(void)state;
	char *b = body_with("\"requests\":[{\"package\":\"a\"}]}");
	struct answer ans = post(b, NULL);
	json_t *sel;

	assert_int_equal(ans.status, 200);
	assert_true(json_is_true(json_object_get(ans.json, "satisfiable")));
	sel = json_array_get(json_object_get(ans.json, "selected"), 0);
	assert_string_equal(json_string_value(json_object_get(sel, "bundle")), "a.v1");
	assert_string_equal(json_string_value(json_object_get(sel, "catalog")), "mine");
	assert_null(json_object_get(ans.json, "stats"));
	json_decref(ans.json);
	free(b);
}

static void fbc_http_api_resolve__unsatisfiable_is_200_with_explanation(void **state)
{
	(void)state;
	char *b = body_with("\"requests\":[{\"package\":\"b\"}]}");
	struct answer ans = post(b, "true");

	assert_int_equal(ans.status, 200);
	assert_true(json_is_false(json_object_get(ans.json, "satisfiable")));
	assert_string_equal(json_string_value(json_object_get(ans.json, "kind")), "conflict");
	assert_non_null(
		strstr(json_string_value(json_object_get(ans.json, "explanation")), "b.v1"));
	assert_true(json_array_size(json_object_get(ans.json, "constraints")) > 0);
	assert_non_null(json_object_get(json_object_get(ans.json, "stats"), "satCalls"));
	json_decref(ans.json);
	free(b);
}

static void fbc_http_api_resolve__bad_range_is_kind_error(void **state)
{
	(void)state;
	char *b = body_with("\"requests\":[{\"package\":\"a\",\"versionRange\":\">=1 <<\"}]}");
	struct answer ans = post(b, NULL);

	assert_int_equal(ans.status, 200);
	assert_true(json_is_false(json_object_get(ans.json, "satisfiable")));
	assert_string_equal(json_string_value(json_object_get(ans.json, "kind")), "error");
	json_decref(ans.json);
	free(b);
}

static void fbc_http_api_resolve__refuses_path_catalogs(void **state)
{
	(void)state;
	struct answer ans = post("{\"catalogs\":[{\"name\":\"etc\",\"path\":\"/etc\"}],"
				 "\"requests\":[{\"package\":\"a\"}]}",
				 NULL);

	assert_int_equal(ans.status, 400);
	assert_string_equal(ans.code, "path_not_allowed");
	assert_non_null(
		strstr(json_string_value(json_object_get(ans.json, "detail")), "catalogs[0]"));
	json_decref(ans.json);
}

static void fbc_http_api_resolve__malformed_requests_are_400(void **state)
{
	(void)state;
	static const struct {
		const char *body;
		const char *code;
		const char *detail;
	} cases[] = {
		{"{\"catalogs\":[{\"name\":\"m\",\"fbc\":[]}],\"requests\":[{\"pkg\":\"a\"}]}",
		 "bad_resolve_request", "requests[0]: unknown field \"pkg\""},
		{"{\"catalogs\":[],\"requests\":[]}", "bad_resolve_request", "catalogs"},
		{"{\"semantics\":\"v2\",\"catalogs\":[{\"name\":\"m\",\"fbc\":[]}],\"requests\":[]"
		 "}",
		 "bad_resolve_request", "semantics"},
		{"{\"catalogs\":[{\"name\":\"m\",\"fbc\":[],\"revision\":2}],\"requests\":[]}",
		 "bad_resolve_request", "registered catalogs only"},
		{"{\"catalogs\":[{\"name\":\"m\",\"revision\":0}],\"requests\":[]}", "bad_revision",
		 "catalogs[0]"},
		{"{\"catalogs\":[{\"name\":\"m\",\"fbc\":[{\"name\":\"x\"}]}],\"requests\":[]}",
		 "bad_catalog", "no \"schema\""},
		{"{\"catalogs\":", "bad_json", "body"},
		{"[1]", "bad_json", "object"},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct answer ans = post(cases[i].body, NULL);
		const char *detail = json_string_value(json_object_get(ans.json, "detail"));

		if (ans.status != 400 || strcmp(ans.code, cases[i].code) ||
		    !strstr(detail ? detail : "", cases[i].detail))
			fail_msg("case %zu: %d %s %s", i, ans.status, ans.code,
				 detail ? detail : "(no detail)");
		json_decref(ans.json);
	}
	struct answer ans = post("{\"catalogs\":[]}", "yes");
	assert_int_equal(ans.status, 400);
	assert_non_null(strstr(json_string_value(json_object_get(ans.json, "detail")), "stats"));
	json_decref(ans.json);
}

static void fbc_http_api_resolve__too_many_catalogs_is_413_before_copying(void **state)
{
	(void)state;
	fbc_buf b;

	fbc_buf_init(&b, 0);
	assert_int_equal(fbc_buf_puts(&b, "{\"catalogs\":["), 0);
	for (int i = 0; i < 100000; i++)
		assert_int_equal(fbc_buf_puts(&b, i ? ",{}" : "{}"), 0);
	assert_int_equal(fbc_buf_puts(&b, "],\"requests\":[]}"), 0);
	struct answer ans = post(b.data, NULL);
	const char *detail = json_string_value(json_object_get(ans.json, "detail"));
	assert_int_equal(ans.status, 413);
	assert_string_equal(ans.code, "too_large");
	assert_non_null(strstr(detail ? detail : "", "100000 catalogs"));
	json_decref(ans.json);
	fbc_buf_dispose(&b);
}

static int setup(void **state)
{
	(void)state;
	return fbc_http_app_init(&app, NULL, NULL, 0, 0);
}

static int teardown(void **state)
{
	(void)state;
	fbc_http_app_dispose(&app);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(fbc_http_catcache_acquire__loads_once_then_hits),
		cmocka_unit_test(fbc_http_catcache_acquire__evicts_lru_keeps_in_use),
		cmocka_unit_test(fbc_http_catcache_acquire__failed_load_is_reported_not_cached),
		cmocka_unit_test(fbc_http_catcache_acquire__over_budget_is_used_once),
		cmocka_unit_test(fbc_http_catcache_acquire__one_load_per_digest_under_concurrency),
		cmocka_unit_test(fbc_http_api_resolve__inline_catalog_is_resolved),
		cmocka_unit_test(fbc_http_api_resolve__unsatisfiable_is_200_with_explanation),
		cmocka_unit_test(fbc_http_api_resolve__bad_range_is_kind_error),
		cmocka_unit_test(fbc_http_api_resolve__refuses_path_catalogs),
		cmocka_unit_test(fbc_http_api_resolve__malformed_requests_are_400),
		cmocka_unit_test(fbc_http_api_resolve__too_many_catalogs_is_413_before_copying),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
