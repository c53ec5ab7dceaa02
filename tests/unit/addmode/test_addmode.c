/*
 * service/addmode: every A rule with a passing and a failing case, the
 * worked examples of index-add.md §4.3 and §5.3, the §6 cases (overwrite,
 * deprecation and tombstones, stranded bundles, substitutes) and the §7.3
 * rebuild from an FBC.
 */
#include "service/addmode/addmode.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

/* A hand-built input: "name ver replaces skips(a;b) channels(a,b) default". */
typedef struct tb {
	fbc_addmode_bundle b;
	char buf[512];
	const char *skips[8];
	const char *chans[8];
	char image[256];
} tb;

static size_t split(char *s, char sep, const char **out, size_t max)
{
	size_t n = 0;

	if (!*s)
		return 0;
	out[n++] = s;
	for (; *s && n < max; s++) {
		if (*s == sep) {
			*s = '\0';
			out[n++] = s + 1;
		}
	}
	return n;
}

/* fields separated by '|': name|version|replaces|skips;|channels,|default */
static void mk(tb *t, const char *pkg, const char *spec)
{
	const char *f[6] = {"", "", "", "", "", ""};
	size_t nf;

	memset(t, 0, sizeof(*t));
	snprintf(t->buf, sizeof(t->buf), "%s", spec);
	nf = split(t->buf, '|', f, 6);
	assert_true(nf >= 2);
	t->b.package = pkg;
	t->b.name = f[0];
	t->b.version = f[1];
	t->b.replaces = f[2];
	t->b.n_skips = split((char *)f[3], ';', t->skips, 8);
	t->b.skips = t->skips;
	t->b.n_channels = split((char *)f[4], ',', t->chans, 8);
	t->b.channels = t->chans;
	t->b.default_channel = f[5];
	snprintf(t->image, sizeof(t->image), "quay.io/test/%s:%s", pkg, f[0]);
	t->b.image = t->image;
}

static fbc_addmode_index *ix_new(void)
{
	fbc_addmode_index *ix = NULL;
	fbc_error err;

	fbc_error_init(&err);
	assert_int_equal(fbc_addmode_index_create(&ix, &err), 0);
	return ix;
}

static int add_one(fbc_addmode_index *ix, fbc_addmode_mode mode, const char *spec, fbc_error *err)
{
	fbc_addmode_opts o = {.mode = mode};
	tb t;
	const fbc_addmode_bundle *p = &t.b;

	mk(&t, "a", spec);
	fbc_error_init(err);
	return fbc_addmode_add(ix, &p, 1, &o, err);
}

static void ok(fbc_addmode_index *ix, fbc_addmode_mode mode, const char *spec)
{
	fbc_error err;

	if (add_one(ix, mode, spec, &err) != 0)
		fail_msg("add %s: %s: %s", spec, err.where, err.message);
}

static void fails(fbc_addmode_index *ix, fbc_addmode_mode mode, const char *spec, const char *rule)
{
	fbc_error err;
	char got[8];

	if (add_one(ix, mode, spec, &err) == 0)
		fail_msg("add %s succeeded, expected %s", spec, rule);
	fbc_addmode_error_rule(&err, got);
	if (strcmp(got, rule) != 0)
		fail_msg("add %s: expected %s, got: %s: %s", spec, rule, err.where, err.message);
}

#define R  FBC_ADDMODE_REPLACES
#define S  FBC_ADDMODE_SEMVER
#define SP FBC_ADDMODE_SEMVER_SKIPPATCH

/* The package as JSON blobs; returns the channel blob of that name. */
static json_t *blobs_of(fbc_addmode_index *ix)
{
	json_t *a = json_array();
	fbc_error err;

	if (fbc_addmode_package_blobs(ix, "a", a, &err) != 0)
		fail_msg("blobs: %s", err.message);
	return a;
}

static json_t *channel(json_t *blobs, const char *name)
{
	size_t i;
	json_t *b;

	json_array_foreach(blobs, i, b)
	{
		if (strcmp(json_string_value(json_object_get(b, "schema")), "olm.channel") == 0 &&
		    strcmp(json_string_value(json_object_get(b, "name")), name) == 0)
			return b;
	}
	return NULL;
}

static json_t *entry(json_t *ch, const char *name)
{
	size_t i;
	json_t *e;

	assert_non_null(ch);
	json_array_foreach(json_object_get(ch, "entries"), i, e)
	{
		if (strcmp(json_string_value(json_object_get(e, "name")), name) == 0)
			return e;
	}
	return NULL;
}

static const char *replaces_of(json_t *e)
{
	const char *s;

	assert_non_null(e);
	s = json_string_value(json_object_get(e, "replaces"));
	return s ? s : "";
}

/* "a;b" of the entry's skips */
static void skips_are(json_t *e, const char *want)
{
	char got[256] = "";
	size_t i, len = 0;
	json_t *s;

	assert_non_null(e);
	json_array_foreach(json_object_get(e, "skips"), i, s) len += (size_t)snprintf(
		got + len, sizeof(got) - len, "%s%s", i ? ";" : "", json_string_value(s));
	assert_string_equal(got, want);
}

static size_t n_entries(json_t *ch)
{
	assert_non_null(ch);
	return json_array_size(json_object_get(ch, "entries"));
}

/* ---- §4.3 worked examples (replaces mode) ---- */

static void example_4_3(fbc_addmode_index *ix)
{
	ok(ix, R, "a.v1|1.0.0|||alpha|alpha");
	ok(ix, R, "a.v2|2.0.0|a.v1||alpha|");
	ok(ix, R, "a.v3|3.0.0|a.v2|a.v1|alpha,beta|");
	ok(ix, R, "a.v4|4.0.0|a.v2||alpha|");
}

static void add_replaces__worked_example_1(void **state)
{
	fbc_addmode_index *ix = ix_new();
	json_t *b;

	(void)state;
	example_4_3(ix);
	b = blobs_of(ix);
	/* alpha: a.v4 -> a.v2 -> a.v1, a.v3 pruned */
	assert_int_equal(n_entries(channel(b, "alpha")), 3);
	assert_string_equal(replaces_of(entry(channel(b, "alpha"), "a.v4")), "a.v2");
	assert_string_equal(replaces_of(entry(channel(b, "alpha"), "a.v2")), "a.v1");
	assert_null(entry(channel(b, "alpha"), "a.v3"));
	/* beta: a.v3 (replaces a.v2, skips a.v1) -> a.v2 -> a.v1 (inherited) */
	assert_string_equal(replaces_of(entry(channel(b, "beta"), "a.v3")), "a.v2");
	skips_are(entry(channel(b, "beta"), "a.v3"), "a.v1");
	assert_string_equal(replaces_of(entry(channel(b, "beta"), "a.v2")), "a.v1");
	assert_non_null(entry(channel(b, "beta"), "a.v1"));
	assert_string_equal(fbc_addmode_default_channel(ix, "a"), "alpha");
	assert_string_equal(fbc_addmode_channel_head(ix, "a", "alpha"), "a.v4");
	assert_string_equal(fbc_addmode_channel_head(ix, "a", "beta"), "a.v3");
	json_decref(b);
	fbc_addmode_index_free(ix);
}

static void add_replaces__worked_example_2_prunes(void **state)
{
	fbc_addmode_index *ix = ix_new();

	(void)state;
	example_4_3(ix);
	fails(ix, R, "a.v2x|2.5.0|a.v2||alpha|", "A21");
	/* the failed add changed nothing */
	assert_false(fbc_addmode_stored(ix, "a", "a.v2x"));
	assert_string_equal(fbc_addmode_channel_head(ix, "a", "alpha"), "a.v4");
	fbc_addmode_index_free(ix);
}

static void add_replaces__worked_example_3_bare_skip(void **state)
{
	fbc_addmode_index *ix = ix_new();
	json_t *b;

	(void)state;
	ok(ix, R, "a.v0|0.5.0|||other|other");
	ok(ix, R, "a.w|1.0.0|||stable|stable");
	ok(ix, R, "a.x|2.0.0|a.w|a.v0|stable|stable");
	b = blobs_of(ix);
	/* a.v0 is a bare member of stable */
	assert_non_null(entry(channel(b, "stable"), "a.v0"));
	assert_string_equal(replaces_of(entry(channel(b, "stable"), "a.v0")), "");
	assert_null(json_object_get(entry(channel(b, "stable"), "a.v0"), "skips"));
	skips_are(entry(channel(b, "stable"), "a.x"), "a.v0");
	json_decref(b);
	fbc_addmode_index_free(ix);
}

/* ---- §5.3 worked examples (semver modes) ---- */

static void add_semver__worked_example_1(void **state)
{
	fbc_addmode_index *ix = ix_new();
	json_t *b;

	(void)state;
	ok(ix, S, "a.v1.0.0|1.0.0|||stable|");
	ok(ix, S, "a.v1.2.0|1.2.0|||stable|");
	ok(ix, S, "a.v1.1.0|1.1.0|nonexistent||stable|");
	b = blobs_of(ix);
	assert_string_equal(replaces_of(entry(channel(b, "stable"), "a.v1.2.0")), "a.v1.1.0");
	assert_string_equal(replaces_of(entry(channel(b, "stable"), "a.v1.1.0")), "a.v1.0.0");
	assert_string_equal(replaces_of(entry(channel(b, "stable"), "a.v1.0.0")), "");
	assert_string_equal(fbc_addmode_default_channel(ix, "a"), "stable");
	json_decref(b);
	fbc_addmode_index_free(ix);
}

static void add_skippatch__worked_example_2(void **state)
{
	fbc_addmode_index *ix = ix_new();
	json_t *b;

	(void)state;
	ok(ix, SP, "a.v1.0.0|1.0.0|||stable|");
	ok(ix, SP, "a.v1.0.1|1.0.1|||stable|");
	b = blobs_of(ix);
	assert_string_equal(replaces_of(entry(channel(b, "stable"), "a.v1.0.1")), "");
	skips_are(entry(channel(b, "stable"), "a.v1.0.1"), "a.v1.0.0");
	assert_non_null(entry(channel(b, "stable"), "a.v1.0.0"));
	json_decref(b);
	ok(ix, SP, "a.v1.1.0|1.1.0|||stable|");
	b = blobs_of(ix);
	assert_string_equal(replaces_of(entry(channel(b, "stable"), "a.v1.1.0")), "a.v1.0.1");
	assert_string_equal(replaces_of(entry(channel(b, "stable"), "a.v1.0.1")), "a.v1.0.0");
	json_decref(b);
	fbc_addmode_index_free(ix);
}

static void add_skippatch__worked_example_3_a28(void **state)
{
	fbc_addmode_index *ix = ix_new();
	fbc_error err;

	(void)state;
	ok(ix, SP, "a.v0.9.0|0.9.0|||stable|");
	ok(ix, SP, "a.v1.0.0|1.0.0|||stable|");
	assert_int_not_equal(add_one(ix, SP, "a.v1.0.1|1.0.1|||stable|", &err), 0);
	assert_non_null(strstr(err.message, "A28: "));
	assert_non_null(strstr(err.message, "(1 != 0)"));
	fbc_addmode_index_free(ix);
}

static void add_semver__worked_example_4_default(void **state)
{
	fbc_addmode_index *ix = ix_new();

	(void)state;
	ok(ix, S, "a.v2|2.0.0|||stable,fast|stable");
	ok(ix, S, "a.v1|1.0.0|||fast|fast");
	assert_string_equal(fbc_addmode_default_channel(ix, "a"), "fast");
	fbc_addmode_index_free(ix);
	/* replaces mode keeps stable, and 1.0.0 fails A21 */
	ix = ix_new();
	ok(ix, R, "a.v2|2.0.0|||stable,fast|stable");
	fails(ix, R, "a.v1|1.0.0|||fast|fast", "A21");
	assert_string_equal(fbc_addmode_default_channel(ix, "a"), "stable");
	fbc_addmode_index_free(ix);
	/* ... unless 2.0.0 replaces it */
	ix = ix_new();
	ok(ix, R, "a.v1|1.0.0|||fast|fast");
	ok(ix, R, "a.v2|2.0.0|a.v1||stable,fast|stable");
	assert_string_equal(fbc_addmode_default_channel(ix, "a"), "stable");
	fbc_addmode_index_free(ix);
}

/* ---- errors, one passing and one failing case each ---- */

static void mode_parse__a1(void **state)
{
	fbc_addmode_mode m;
	fbc_error err;
	char rule[8];

	(void)state;
	assert_int_equal(fbc_addmode_mode_parse(&m, "Semver-SkipPatch", &err), 0);
	assert_int_equal(m, SP);
	assert_int_equal(fbc_addmode_mode_parse(&m, "replaces", &err), 0);
	assert_int_equal(m, R);
	assert_int_not_equal(fbc_addmode_mode_parse(&m, "semver-mode", &err), 0);
	fbc_addmode_error_rule(&err, rule);
	assert_string_equal(rule, "A1");
}

static void add__a2_no_csv_name(void **state)
{
	fbc_addmode_index *ix = ix_new();

	(void)state;
	ok(ix, R, "a.v1|1.0.0|||alpha|alpha");
	fails(ix, R, "|1.0.0|||alpha|alpha", "A2");
	fbc_addmode_index_free(ix);
}

static void add__a3_same_image(void **state)
{
	fbc_addmode_index *ix = ix_new();
	fbc_addmode_opts o = {.mode = R};
	fbc_error err;
	tb t;
	const fbc_addmode_bundle *p = &t.b;
	char rule[8];

	(void)state;
	ok(ix, R, "a.v1|1.0.0|||alpha|alpha");
	mk(&t, "a", "a.v2|2.0.0|a.v1||alpha|");
	t.b.image = "quay.io/test/a:a.v1";
	assert_int_not_equal(fbc_addmode_add(ix, &p, 1, &o, &err), 0);
	fbc_addmode_error_rule(&err, rule);
	assert_string_equal(rule, "A3");
	t.b.image = "quay.io/test/a:other";
	assert_int_equal(fbc_addmode_add(ix, &p, 1, &o, &err), 0);
	fbc_addmode_index_free(ix);
}

static void add__a4_same_name(void **state)
{
	fbc_addmode_index *ix = ix_new();
	fbc_addmode_opts o = {.mode = S};
	fbc_error err;
	tb t;
	const fbc_addmode_bundle *p = &t.b;
	char rule[8];

	(void)state;
	ok(ix, S, "a.v1|1.0.0|||alpha|alpha");
	mk(&t, "a", "a.v1|1.0.1|||alpha|");
	t.b.image = "quay.io/test/a:new";
	assert_int_not_equal(fbc_addmode_add(ix, &p, 1, &o, &err), 0);
	fbc_addmode_error_rule(&err, rule);
	assert_string_equal(rule, "A4");
	ok(ix, S, "a.v2|2.0.0|||alpha|");
	fbc_addmode_index_free(ix);
}

static void add__a5_stranded_name(void **state)
{
	fbc_addmode_index *ix = ix_new();

	(void)state;
	ok(ix, R, "a.v1|1.0.0|||alpha|alpha");
	ok(ix, R, "a.v2|2.0.0|||alpha|alpha"); /* a.v1 is pruned: stranded */
	assert_true(fbc_addmode_stranded(ix, "a", "a.v1"));
	fails(ix, R, "a.v1|1.0.1|||beta|alpha", "A5");
	/* a later bundle replacing it brings it back */
	ok(ix, R, "a.v3|3.0.0|a.v1||alpha|alpha");
	assert_false(fbc_addmode_stranded(ix, "a", "a.v1"));
	assert_true(fbc_addmode_stranded(ix, "a", "a.v2"));
	fbc_addmode_index_free(ix);
}

static void add__a6_a7_packages(void **state)
{
	fbc_addmode_index *ix = ix_new();
	fbc_addmode_opts o = {.mode = R};
	fbc_error err;
	tb t1, t2;
	const fbc_addmode_bundle *p[2] = {&t1.b, &t2.b};
	char rule[8];

	(void)state;
	mk(&t1, "a", "a.v1|1.0.0|||alpha|alpha");
	mk(&t2, "b", "b.v1|1.0.0|a.v1||alpha|alpha");
	assert_int_not_equal(fbc_addmode_add(ix, p, 2, &o, &err), 0);
	fbc_addmode_error_rule(&err, rule);
	assert_string_equal(rule, "A6");
	mk(&t2, "b", "b.v1|1.0.0|||alpha|alpha");
	assert_int_equal(fbc_addmode_add(ix, p, 2, &o, &err), 0);
	/* A7: an edge to a bundle of another package */
	mk(&t2, "b", "b.v2|2.0.0|a.v1||alpha|alpha");
	assert_int_not_equal(fbc_addmode_add(ix, &p[1], 1, &o, &err), 0);
	fbc_addmode_error_rule(&err, rule);
	assert_string_equal(rule, "A7");
	fbc_addmode_index_free(ix);
}

static void add__a8_substitutes(void **state)
{
	fbc_addmode_index *ix = ix_new();
	fbc_addmode_opts o = {.mode = R, .disable_alpha = true};
	fbc_error err;
	tb t;
	const fbc_addmode_bundle *p = &t.b;
	char rule[8];
	json_t *b;

	(void)state;
	ok(ix, R, "a.v1|1.0.0|||alpha|alpha");
	ok(ix, R, "a.v2|2.0.0|a.v1||alpha|alpha");
	mk(&t, "a", "a.v2s|2.0.1|a.v1||alpha|alpha");
	t.b.substitutes_for = "a.v2";
	assert_int_not_equal(fbc_addmode_add(ix, &p, 1, &o, &err), 0);
	fbc_addmode_error_rule(&err, rule);
	assert_string_equal(rule, "A8");
	/* with alpha features the substitute takes a.v2's place */
	o.disable_alpha = false;
	assert_int_equal(fbc_addmode_add(ix, &p, 1, &o, &err), 0);
	b = blobs_of(ix);
	skips_are(entry(channel(b, "alpha"), "a.v2s"), "a.v2");
	json_decref(b);
	/* a bundle substituting itself is a cycle */
	mk(&t, "a", "a.v3|3.0.0|a.v2s||alpha|alpha");
	t.b.substitutes_for = "a.v3";
	assert_int_not_equal(fbc_addmode_add(ix, &p, 1, &o, &err), 0);
	fbc_addmode_error_rule(&err, rule);
	assert_string_equal(rule, "A8");
	fbc_addmode_index_free(ix);
}

static void add__overwrite_a9_a10_a11(void **state)
{
	fbc_addmode_index *ix = ix_new();
	fbc_addmode_opts o = {.mode = R, .overwrite_latest = true};
	fbc_error err;
	tb t1, t2;
	const fbc_addmode_bundle *p[2] = {&t1.b, &t2.b};
	char rule[8];
	json_t *b;

	(void)state;
	ok(ix, R, "a.v1|1.0.0|||alpha|alpha");
	ok(ix, R, "a.v2|2.0.0|a.v1||alpha|alpha");
	/* A10: a.v1 is replaced by a.v2 */
	mk(&t1, "a", "a.v1|1.0.0|||alpha|alpha");
	t1.b.image = "quay.io/test/a:v1-rebuilt";
	assert_int_not_equal(fbc_addmode_add(ix, p, 1, &o, &err), 0);
	fbc_addmode_error_rule(&err, rule);
	assert_string_equal(rule, "A10");
	/* OW-4: the head is replaced by the new image; channels from the new CSV */
	mk(&t1, "a", "a.v2|2.0.0|a.v1||alpha,beta|alpha");
	t1.b.image = "quay.io/test/a:v2-rebuilt";
	assert_int_equal(fbc_addmode_add(ix, p, 1, &o, &err), 0);
	b = blobs_of(ix);
	assert_string_equal(replaces_of(entry(channel(b, "beta"), "a.v2")), "a.v1");
	json_decref(b);
	/* A11: two overwrites in one request */
	ok(ix, R, "a.v3|3.0.0|||gamma|alpha");
	mk(&t1, "a", "a.v3|3.0.0|||gamma|alpha");
	t1.b.image = "x/1";
	mk(&t2, "a", "a.v2|2.0.0|a.v1||alpha|alpha");
	t2.b.image = "x/2";
	assert_int_not_equal(fbc_addmode_add(ix, p, 2, &o, &err), 0);
	fbc_addmode_error_rule(&err, rule);
	assert_string_equal(rule, "A11");
	/* A9: the stored bundle has no image */
	fbc_addmode_index_free(ix);
	ix = ix_new();
	mk(&t1, "a", "a.v1|1.0.0|||alpha|alpha");
	t1.b.image = "";
	o.overwrite_latest = false;
	o.no_validate = true; /* an entry without an image is not visible */
	assert_int_equal(fbc_addmode_add(ix, p, 1, &o, &err), 0);
	o.overwrite_latest = true;
	t1.b.image = "quay.io/test/a:v1";
	assert_int_not_equal(fbc_addmode_add(ix, p, 1, &o, &err), 0);
	fbc_addmode_error_rule(&err, rule);
	assert_string_equal(rule, "A9");
	fbc_addmode_index_free(ix);
}

static void add__overwrite_semver_a26(void **state)
{
	fbc_addmode_index *ix = ix_new();
	fbc_addmode_opts o = {.mode = S, .overwrite_latest = true};
	fbc_error err;
	tb t;
	const fbc_addmode_bundle *p = &t.b;
	char rule[8];

	(void)state;
	ok(ix, S, "a.v1|1.0.0|||alpha|alpha");
	mk(&t, "a", "a.v1|1.0.0|||alpha|alpha");
	t.b.image = "quay.io/test/a:rebuilt";
	assert_int_not_equal(fbc_addmode_add(ix, &p, 1, &o, &err), 0);
	fbc_addmode_error_rule(&err, rule);
	assert_string_equal(rule, "A26");
	mk(&t, "a", "a.v1|1.0.1|||alpha|alpha");
	t.b.image = "quay.io/test/a:rebuilt";
	assert_int_not_equal(fbc_addmode_add(ix, &p, 1, &o, &err), 0);
	fbc_addmode_error_rule(&err, rule);
	assert_string_equal(rule, "A5");
	fbc_addmode_index_free(ix);
}

static void add__overwrite_a12(void **state)
{
	fbc_addmode_index *ix = ix_new();
	fbc_addmode_opts o = {.mode = R, .overwrite_latest = true};
	fbc_error err;
	tb t;
	const fbc_addmode_bundle *p = &t.b;
	char rule[8];

	(void)state;
	ok(ix, R, "a.v1|1.0.0|||alpha|alpha");
	ok(ix, R, "a.v2|2.0.0||a.v1|alpha|alpha"); /* skips a.v1 */
	mk(&t, "a", "a.v1|1.0.0|||alpha|alpha");
	t.b.image = "quay.io/test/a:rebuilt";
	assert_int_not_equal(fbc_addmode_add(ix, &p, 1, &o, &err), 0);
	fbc_addmode_error_rule(&err, rule);
	assert_string_equal(rule, "A12");
	fbc_addmode_index_free(ix);
}

static void add_replaces__a13_a15_a16(void **state)
{
	fbc_addmode_index *ix = ix_new();

	(void)state;
	fails(ix, R, "a.v1|v1.0.0|||alpha|alpha", "A13");
	ok(ix, R, "a.v1|1.0.0|||alpha|alpha");
	/* A16: a tie at the top of a channel */
	fails(ix, R, "a.v1b|1.0.0|||alpha|alpha", "A16");
	/* A15: a tie at the top overall, different channels */
	fails(ix, R, "a.v1c|1.0.0|||beta|alpha", "A15");
	/* build metadata orders (BuildIdCompare): 1.0.0 < 1.0.0+1 */
	ok(ix, R, "a.v1d|1.0.0+1|a.v1||alpha|alpha");
	assert_string_equal(fbc_addmode_channel_head(ix, "a", "alpha"), "a.v1d");
	fbc_addmode_index_free(ix);
}

static void add_replaces__a17_default(void **state)
{
	fbc_addmode_index *ix = ix_new();

	(void)state;
	fails(ix, R, "a.v1|1.0.0|||alpha,beta|", "A17");
	fails(ix, R, "a.v1|1.0.0|||alpha|beta", "A17");
	ok(ix, R, "a.v1|1.0.0|||alpha|"); /* one channel: it is the default */
	assert_string_equal(fbc_addmode_default_channel(ix, "a"), "alpha");
	/* a lower-version add never changes the default (RM-5) */
	ok(ix, R, "a.v2|2.0.0|a.v1||alpha,beta|beta");
	assert_string_equal(fbc_addmode_default_channel(ix, "a"), "beta");
	fbc_addmode_index_free(ix);
}

static void add_replaces__a18_a19_a20(void **state)
{
	fbc_addmode_index *ix = ix_new();
	fbc_error err;
	const char *dep[] = {"a.v2"};

	(void)state;
	fails(ix, R, "a.v1|1.0.0|a.v1||alpha|alpha", "A19");
	fails(ix, R, "a.v1|1.0.0|a.v0||alpha|alpha", "A20");
	ok(ix, R, "a.v1|1.0.0|||alpha|alpha");
	ok(ix, R, "a.v2|2.0.0|a.v1||alpha,beta|alpha");
	ok(ix, R, "a.v3|3.0.0|a.v2||alpha|alpha");
	/* deprecate the head of beta: beta is elided at the next add (RM-7) */
	assert_int_equal(fbc_addmode_deprecate(ix, "a", dep, 1, false, &err), 0);
	assert_true(fbc_addmode_deprecated(ix, "a", "a.v2"));
	assert_null(fbc_addmode_channel_head(ix, "a", "beta"));
	ok(ix, R, "a.v4|4.0.0|a.v3||alpha|alpha");
	{
		json_t *b = blobs_of(ix);

		/* the chain stops at the tombstone; a.v3 keeps replaces: a.v2 */
		assert_string_equal(replaces_of(entry(channel(b, "alpha"), "a.v3")), "a.v2");
		assert_null(entry(channel(b, "alpha"), "a.v2"));
		assert_null(entry(channel(b, "alpha"), "a.v1"));
		json_decref(b);
	}
	fbc_addmode_index_free(ix);
	/* A18: the default channel's head is a tombstone */
	ix = ix_new();
	ok(ix, R, "a.v1|1.0.0|||alpha,beta|beta");
	ok(ix, R, "a.v2|2.0.0|a.v1||alpha|beta");
	{
		const char *d2[] = {"a.v1"};

		/* a.v1 is beta's head and the default's: refused without removal */
		assert_int_not_equal(fbc_addmode_deprecate(ix, "a", d2, 1, false, &err), 0);
	}
	fbc_addmode_index_free(ix);
}

static void add_replaces__a18_elided_default(void **state)
{
	fbc_addmode_index *ix = ix_new();
	fbc_error err;
	const char *dep[] = {"a.v1"};

	(void)state;
	ok(ix, R, "a.v1|1.0.0|||alpha|alpha");
	/* DP-4 with package removal; DP-5: the name stays deprecated */
	assert_int_equal(fbc_addmode_deprecate(ix, "a", dep, 1, true, &err), 0);
	assert_false(fbc_addmode_has_package(ix, "a"));
	/* re-added, it comes back a tombstone: the default channel is elided */
	fails(ix, R, "a.v1|1.0.0|||alpha|alpha", "A18");
	ok(ix, R, "a.v2|2.0.0|||alpha|alpha");
	fbc_addmode_index_free(ix);
}

static void add__a21_a22_reachable(void **state)
{
	fbc_addmode_index *ix = ix_new();

	(void)state;
	ok(ix, R, "a.v2|2.0.0|||alpha|alpha");
	fails(ix, R, "a.v1|1.0.0|||alpha|alpha", "A21");
	ok(ix, R, "a.v3|3.0.0|a.v2|a.v1|alpha|alpha");
	ok(ix, R, "a.v1|1.0.0|||alpha|alpha"); /* skipped by the head: reachable */
	fbc_addmode_index_free(ix);
}

static void add_semver__a23_a24_a26_a29(void **state)
{
	fbc_addmode_index *ix = ix_new();

	(void)state;
	fails(ix, S, "a.v1|1.0|||alpha|", "A23");
	fails(ix, S, "a.v1||||alpha|", "A23");
	fails(ix, S, "a.v1|1.0.0||||", "A24");
	fails(ix, S, "a.v1|1.0.0|||alpha|nope", "A29");
	ok(ix, S, "a.v1|1.0.0|||beta,alpha|");
	assert_string_equal(fbc_addmode_default_channel(ix, "a"), "alpha");
	fails(ix, S, "a.v1b|1.0.0+2|||alpha|", "A26");
	ok(ix, S, "a.v1c|1.0.1|||alpha|");
	fbc_addmode_index_free(ix);
}

/* Loads an FBC (JSON lines) into a new index. */
static fbc_addmode_index *ix_from_fbc(const char *jsonl)
{
	fbc_addmode_index *ix = ix_new();
	fbc_catalog *cat = NULL;
	fbc_diags diags;
	fbc_error err;
	char *s = strdup(jsonl), *p, *line;

	assert_non_null(s);
	for (p = s; *p; p++) {
		if (*p == '\'')
			*p = '"';
	}
	assert_int_equal(fbc_diags_init(&diags, 0), 0);
	assert_int_equal(fbc_catalog_create(&cat, NULL, &err), 0);
	for (line = s; line && *line;) {
		char *nl = strchr(line, '\n');
		json_t *blob;
		fbc_meta m;

		if (nl)
			*nl = '\0';
		blob = json_loads(line, 0, NULL);
		assert_non_null(blob);
		memset(&m, 0, sizeof(m));
		m.schema = json_string_value(json_object_get(blob, "schema"));
		m.package = json_string_value(json_object_get(blob, "package"));
		m.name = json_string_value(json_object_get(blob, "name"));
		m.package = m.package ? m.package : "";
		m.name = m.name ? m.name : "";
		m.blob = blob;
		m.loc.file = "t.json";
		assert_int_equal(fbc_catalog_add_meta(cat, &m, &diags, &err), 0);
		json_decref(blob);
		line = nl ? nl + 1 : NULL;
	}
	assert_int_equal(fbc_catalog_link(cat, &err), 0);
	if (fbc_addmode_index_load(ix, cat, NULL, &err) != 0)
		fail_msg("load: %s", err.message);
	fbc_catalog_free(cat);
	fbc_diags_dispose(&diags);
	free(s);
	return ix;
}

#define PKG "{'schema':'olm.package','name':'a','defaultChannel':'alpha'}\n"
#define BND(n, v)                                                                        \
	"{'schema':'olm.bundle','name':'" n "','package':'a','image':'quay.io/a:" n "'," \
	"'properties':[{'type':'olm.package','value':{'packageName':'a','version':'" v "'}}]}\n"

static void load__st_rebuild_then_add(void **state)
{
	fbc_addmode_index *ix = ix_from_fbc(
		PKG "{'schema':'olm.channel','name':'alpha','package':'a','entries':["
		    "{'name':'a.v2','replaces':'a.v1','skips':['a.v0'],'skipRange':'<2.0.0'},"
		    "{'name':'a.v1','replaces':'a.v0tomb'}]}\n" BND("a.v1", "1.0.0")
			    BND("a.v2", "2.0.0"));
	json_t *b;

	(void)state;
	assert_string_equal(fbc_addmode_channel_head(ix, "a", "alpha"), "a.v2");
	assert_true(fbc_addmode_deprecated(ix, "a", "a.v0tomb")); /* ST-4 */
	assert_false(fbc_addmode_stored(ix, "a", "a.v0"));	  /* a skipped name */
	/* ST-1: replaces and skips came from the entries */
	ok(ix, R, "a.v3|3.0.0|a.v2||alpha|alpha");
	b = blobs_of(ix);
	assert_string_equal(replaces_of(entry(channel(b, "alpha"), "a.v2")), "a.v1");
	skips_are(entry(channel(b, "alpha"), "a.v2"), "a.v0");
	assert_string_equal(replaces_of(entry(channel(b, "alpha"), "a.v1")), "a.v0tomb");
	assert_null(entry(channel(b, "alpha"), "a.v0tomb"));
	assert_string_equal(
		json_string_value(json_object_get(entry(channel(b, "alpha"), "a.v2"), "skipRange")),
		"<2.0.0");
	json_decref(b);
	/* ST-5: replaces of something the FBC does not know is A20 */
	fails(ix, R, "a.v4|4.0.0|a.vX||alpha|alpha", "A20");
	/* A25: the semver modes need the tombstone's version, which is lost */
	fails(ix, S, "a.v5|5.0.0|||alpha|", "A25");
	fbc_addmode_index_free(ix);
}

static void load__a27_two_heads(void **state)
{
	fbc_addmode_index *ix =
		ix_from_fbc(PKG "{'schema':'olm.channel','name':'alpha','package':'a','entries':["
				"{'name':'a.v2'},{'name':'a.v1'}]}\n" BND("a.v1", "1.0.0")
					BND("a.v2", "2.0.0"));

	(void)state;
	fails(ix, S, "a.v3|3.0.0|||alpha|", "A27");
	fbc_addmode_index_free(ix);
	ix = ix_from_fbc(PKG "{'schema':'olm.channel','name':'alpha','package':'a','entries':["
			     "{'name':'a.v2','replaces':'a.v1'},{'name':'a.v1'}]}\n" BND(
				     "a.v1", "1.0.0") BND("a.v2", "2.0.0"));
	ok(ix, S, "a.v3|3.0.0|||alpha|");
	fbc_addmode_index_free(ix);
}

static void add__a31_a32_validation(void **state)
{
	fbc_addmode_index *ix = ix_new();

	(void)state;
	/* replaces mode accepts a missing version, migrate does not (A31) */
	fails(ix, R, "a.v1||||alpha|alpha", "A31");
	ok(ix, R, "a.v1|1.0.0|||alpha|alpha");
	ok(ix, R, "a.v2|2.0.0|a.v1||alpha|alpha");
	/* 7.2: replaces X and skips X leaves a.v1 stranded for new opm (A32) */
	fails(ix, R, "a.v3|3.0.0|a.v2|a.v2|alpha|alpha", "A32");
	ok(ix, R, "a.v3|3.0.0|a.v2||alpha|alpha");
	fbc_addmode_index_free(ix);
}

static void add__a30_mode(void **state)
{
	fbc_addmode_index *ix = ix_new();
	fbc_addmode_opts o = {.mode = (fbc_addmode_mode)7};
	fbc_error err;
	tb t;
	const fbc_addmode_bundle *p = &t.b;
	char rule[8];

	(void)state;
	mk(&t, "a", "a.v1|1.0.0|||alpha|alpha");
	assert_int_not_equal(fbc_addmode_add(ix, &p, 1, &o, &err), 0);
	fbc_addmode_error_rule(&err, rule);
	assert_string_equal(rule, "A30");
	o.mode = R;
	assert_int_equal(fbc_addmode_add(ix, &p, 1, &o, &err), 0);
	fbc_addmode_index_free(ix);
}

static void add_replaces__batch_and_duplicate_channel(void **state)
{
	fbc_addmode_index *ix = ix_new();
	fbc_addmode_opts o = {.mode = R};
	fbc_error err;
	tb t1, t2;
	const fbc_addmode_bundle *p[2] = {&t2.b, &t1.b};
	char rule[8];

	(void)state;
	/* a set: the order of the request does not matter in replaces mode */
	mk(&t1, "a", "a.v1|1.0.0|||alpha|alpha");
	mk(&t2, "a", "a.v2|2.0.0|a.v1||alpha|alpha");
	assert_int_equal(fbc_addmode_add(ix, p, 2, &o, &err), 0);
	assert_string_equal(fbc_addmode_channel_head(ix, "a", "alpha"), "a.v2");
	/* RM-4: listing the channel twice competes with itself */
	fails(ix, R, "a.v3|3.0.0|a.v2||alpha,alpha|alpha", "A16");
	fbc_addmode_error_rule(&err, rule);
	fbc_addmode_index_free(ix);
}

static void semver__mode_switch_and_channels(void **state)
{
	fbc_addmode_index *ix = ix_new();
	json_t *b;

	(void)state;
	/* replaces first, then semver adds rewrite the graph (SV-11) */
	ok(ix, R, "a.v1|1.0.0|||alpha|alpha");
	ok(ix, R, "a.v2|2.0.0|a.v1||alpha|alpha");
	ok(ix, S, "a.v1.5|1.5.0|||alpha|");
	b = blobs_of(ix);
	assert_string_equal(replaces_of(entry(channel(b, "alpha"), "a.v2")), "a.v1.5");
	assert_string_equal(replaces_of(entry(channel(b, "alpha"), "a.v1.5")), "a.v1");
	json_decref(b);
	/* a new channel in semver mode (SV-7) */
	ok(ix, S, "a.v3|3.0.0|||beta|");
	assert_string_equal(fbc_addmode_channel_head(ix, "a", "beta"), "a.v3");
	assert_string_equal(fbc_addmode_default_channel(ix, "a"), "alpha");
	fbc_addmode_index_free(ix);
}

static void write_package__json_stream(void **state)
{
	fbc_addmode_index *ix = ix_new();
	fbc_buf out;
	fbc_error err;
	fbc_diags d;

	(void)state;
	ok(ix, R, "a.v1|1.0.0|||alpha|alpha");
	fbc_buf_init(&out, 0);
	assert_int_equal(fbc_addmode_write_package(ix, "a", &out, &err), 0);
	assert_non_null(strstr(out.data, "\"schema\": \"olm.package\""));
	assert_non_null(strstr(out.data, "\"defaultChannel\": \"alpha\""));
	assert_true(strstr(out.data, "olm.package") < strstr(out.data, "olm.channel"));
	assert_true(strstr(out.data, "olm.channel") < strstr(out.data, "olm.bundle"));
	fbc_buf_dispose(&out);
	assert_int_equal(fbc_diags_init(&d, 0), 0);
	assert_int_equal(fbc_addmode_validate_package(ix, "a", &d, &err), 0);
	assert_int_equal(fbc_diags_count(&d), 0);
	fbc_diags_dispose(&d);
	assert_int_equal(fbc_addmode_write_package(ix, "zz", &out, &err), FBC_ENOTFOUND);
	fbc_addmode_index_free(ix);
}

static void index_clone__independent(void **state)
{
	fbc_addmode_index *ix = ix_new(), *cp = NULL;
	fbc_error err;

	(void)state;
	ok(ix, R, "a.v1|1.0.0|||alpha|alpha");
	assert_int_equal(fbc_addmode_index_clone(&cp, ix, &err), 0);
	ok(ix, R, "a.v2|2.0.0|a.v1||alpha|alpha");
	fbc_addmode_index_free(ix);
	assert_string_equal(fbc_addmode_channel_head(cp, "a", "alpha"), "a.v1");
	ok(cp, R, "a.v3|3.0.0|a.v1||alpha|alpha");
	assert_string_equal(fbc_addmode_channel_head(cp, "a", "alpha"), "a.v3");
	fbc_addmode_index_free(cp);
}

static void deprecate__truncates_tail_dp(void **state)
{
	fbc_addmode_index *ix = ix_new();
	fbc_error err;
	const char *dep[] = {"a.v2"};
	json_t *b;

	(void)state;
	ok(ix, R, "a.v1|1.0.0|||alpha|alpha");
	ok(ix, R, "a.v2|2.0.0|a.v1||alpha|alpha");
	ok(ix, R, "a.v3|3.0.0|a.v2||alpha|alpha");
	assert_int_equal(fbc_addmode_deprecate(ix, "a", dep, 1, false, &err), 0);
	assert_false(fbc_addmode_stored(ix, "a", "a.v1")); /* DP-2: deleted */
	b = blobs_of(ix);
	assert_int_equal(n_entries(channel(b, "alpha")), 1);
	assert_string_equal(replaces_of(entry(channel(b, "alpha"), "a.v3")), "a.v2");
	json_decref(b);
	/* DP-4: the default channel's head with package removal */
	dep[0] = "a.v3";
	assert_int_not_equal(fbc_addmode_deprecate(ix, "a", dep, 1, false, &err), 0);
	assert_int_equal(fbc_addmode_deprecate(ix, "a", dep, 1, true, &err), 0);
	assert_false(fbc_addmode_has_package(ix, "a"));
	fbc_addmode_index_free(ix);
}

/* SV-13: an add with a rendered blob (objects, relatedImages) in package pkg. */
static void add_blob(fbc_addmode_index *ix, fbc_addmode_mode mode, const char *pkg,
		     const char *spec, bool keep)
{
	fbc_addmode_opts o = {.mode = mode, .keep_bundle_objects = keep};
	const fbc_addmode_bundle *p;
	fbc_error err;
	tb t;

	mk(&t, pkg, spec);
	t.b.blob =
		json_pack("{s:s, s:s, s:s, s:s, s:[{s:s, s:{s:s, s:s}}, {s:s, s:{s:s}}], "
			  "s:[{s:s, s:s}, {s:s, s:s}, {s:s, s:s}]}",
			  "schema", "olm.bundle", "name", t.b.name, "package", pkg, "image",
			  t.b.image, "properties", "type", "olm.package", "value", "packageName",
			  pkg, "version", t.b.version, "type", "olm.bundle.object", "value", "data",
			  "e30=", "relatedImages", "name", "operator", "image", "quay.io/test/op:1",
			  "name", "", "image", "quay.io/test/op:1", "name", "", "image", t.b.image);
	assert_non_null(t.b.blob);
	p = &t.b;
	fbc_error_init(&err);
	if (fbc_addmode_add(ix, &p, 1, &o, &err) != 0)
		fail_msg("add %s: %s: %s", spec, err.where, err.message);
	json_decref((json_t *)t.b.blob);
}

/* Whether the written bundle still has its objects; without them its
 * relatedImages are each image once, unnamed. */
static bool has_objects(const fbc_addmode_index *ix, const char *pkg, const char *name)
{
	json_t *a = json_array(), *b;
	fbc_error err;
	size_t i, k;
	int objs = -1, ri = -1;

	if (fbc_addmode_package_blobs(ix, pkg, a, &err) != 0)
		fail_msg("blobs: %s", err.message);
	json_array_foreach(a, i, b)
	{
		json_t *pr;

		if (strcmp(json_string_value(json_object_get(b, "schema")), "olm.bundle") != 0 ||
		    strcmp(json_string_value(json_object_get(b, "name")), name) != 0)
			continue;
		objs = 0;
		json_array_foreach(json_object_get(b, "properties"), k, pr)
		{
			const char *t = json_string_value(json_object_get(pr, "type"));

			objs += strcmp(t, "olm.bundle.object") == 0;
			if (strcmp(t, "olm.package") == 0)
				ri = ri < 0 ? 0 : ri; /* the properties table stays */
		}
		assert_int_equal(ri, 0);
		{
			json_t *r = json_object_get(b, "relatedImages");
			const char *n0 =
				json_string_value(json_object_get(json_array_get(r, 0), "name"));

			assert_int_equal(json_array_size(r), objs ? 3 : 2);
			assert_string_equal(n0, objs ? "operator" : "");
			assert_string_equal(
				json_string_value(json_object_get(json_array_get(r, 0), "image")),
				"quay.io/test/op:1");
			if (!objs)
				assert_string_equal(json_string_value(json_object_get(
							    json_array_get(r, 1), "name")),
						    "");
		}
	}
	json_decref(a);
	if (objs < 0)
		fail_msg("no bundle %s in %s", name, pkg);
	return objs > 0;
}

static void add_semver__sv13_clears_non_heads(void **state)
{
	fbc_addmode_index *ix = ix_new(), *cp = NULL;
	fbc_error err;

	(void)state;
	/* replaces mode never clears */
	add_blob(ix, R, "b", "b.v1|1.0.0|||stable|stable", false);
	add_blob(ix, R, "b", "b.v2|2.0.0|b.v1||stable|stable", false);
	assert_true(has_objects(ix, "b", "b.v1"));
	/* a semver-mode add clears every non-head bundle of the index, any package, any mode */
	add_blob(ix, S, "a", "a.v1|1.0.0|||stable|stable", false);
	assert_false(has_objects(ix, "b", "b.v1"));
	assert_true(has_objects(ix, "b", "b.v2"));
	assert_true(has_objects(ix, "a", "a.v1"));
	/* the head moves on: the old one is cleared at that add */
	add_blob(ix, S, "a", "a.v2|1.1.0|||stable|stable", false);
	assert_false(has_objects(ix, "a", "a.v1"));
	assert_true(has_objects(ix, "a", "a.v2"));
	/* a head of one channel keeps them, even when another channel goes past it */
	add_blob(ix, S, "a", "a.v3|1.2.0|||fast|stable", false);
	assert_true(has_objects(ix, "a", "a.v2"));
	assert_true(has_objects(ix, "a", "a.v3"));
	/* cleared stays cleared: in a copy, and after later replaces-mode adds */
	assert_int_equal(fbc_addmode_index_clone(&cp, ix, &err), 0);
	assert_false(has_objects(cp, "b", "b.v1"));
	add_blob(cp, R, "b", "b.v3|3.0.0|b.v2||stable|stable", false);
	assert_true(has_objects(cp, "b", "b.v2")); /* replaces mode: no clearing */
	assert_false(has_objects(cp, "b", "b.v1"));
	fbc_addmode_index_free(cp);
	fbc_addmode_index_free(ix);

	/* keep_bundle_objects: nothing is cleared */
	ix = ix_new();
	add_blob(ix, R, "b", "b.v1|1.0.0|||stable|stable", true);
	add_blob(ix, R, "b", "b.v2|2.0.0|b.v1||stable|stable", true);
	add_blob(ix, S, "a", "a.v1|1.0.0|||stable|stable", true);
	add_blob(ix, S, "a", "a.v2|1.1.0|||stable|stable", true);
	assert_true(has_objects(ix, "b", "b.v1"));
	assert_true(has_objects(ix, "a", "a.v1"));
	fbc_addmode_index_free(ix);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(add_replaces__worked_example_1),
		cmocka_unit_test(add_replaces__worked_example_2_prunes),
		cmocka_unit_test(add_replaces__worked_example_3_bare_skip),
		cmocka_unit_test(add_semver__worked_example_1),
		cmocka_unit_test(add_skippatch__worked_example_2),
		cmocka_unit_test(add_skippatch__worked_example_3_a28),
		cmocka_unit_test(add_semver__worked_example_4_default),
		cmocka_unit_test(mode_parse__a1),
		cmocka_unit_test(add__a2_no_csv_name),
		cmocka_unit_test(add__a3_same_image),
		cmocka_unit_test(add__a4_same_name),
		cmocka_unit_test(add__a5_stranded_name),
		cmocka_unit_test(add__a6_a7_packages),
		cmocka_unit_test(add__a8_substitutes),
		cmocka_unit_test(add__overwrite_a9_a10_a11),
		cmocka_unit_test(add__overwrite_semver_a26),
		cmocka_unit_test(add__overwrite_a12),
		cmocka_unit_test(add_replaces__a13_a15_a16),
		cmocka_unit_test(add_replaces__a17_default),
		cmocka_unit_test(add_replaces__a18_a19_a20),
		cmocka_unit_test(add_replaces__a18_elided_default),
		cmocka_unit_test(add__a21_a22_reachable),
		cmocka_unit_test(add_semver__a23_a24_a26_a29),
		cmocka_unit_test(load__st_rebuild_then_add),
		cmocka_unit_test(load__a27_two_heads),
		cmocka_unit_test(add__a31_a32_validation),
		cmocka_unit_test(add__a30_mode),
		cmocka_unit_test(add_replaces__batch_and_duplicate_channel),
		cmocka_unit_test(semver__mode_switch_and_channels),
		cmocka_unit_test(write_package__json_stream),
		cmocka_unit_test(index_clone__independent),
		cmocka_unit_test(deprecate__truncates_tail_dp),
		cmocka_unit_test(add_semver__sv13_clears_non_heads),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
