/* Unit tests for the canonical writer (service/fbc/render.c) and the CLI's
 * finding formatters (api/cli_util.c), on hand-built catalogs so that they
 * do not depend on the loader. */
#include "api/cli/util.h"
#include "service/fbc/render.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

static void push(fbc_vec *v, void *p)
{
	void **slot = fbc_vec_push(v);

	assert_non_null(slot);
	*slot = p;
}

static fbc_property bundle_props[] = {
	{"olm.package", "{\"packageName\":\"foo\",\"version\":\"1.0.0\"}", 39},
	{"olm.bundle.object", "{\"data\":\"eyJraW5kIjoiWCJ9\"}", 27},
	{"olm.gvk", NULL, 0},
};
static const char *skips[] = {"foo.v0.9.0"};
static fbc_channel_entry entries_stable[] = {
	{"foo.v1.0.0", "foo.v0.8.0", skips, 1, ">=0.1.0 <1.0.0", NULL},
};
static fbc_channel_entry entries_alpha[] = {{"foo.v1.0.0", "", NULL, 0, "", NULL}};
static fbc_package pkg_foo = {.name = "foo",
			      .default_channel = "stable",
			      .description = "Foo <b>&</b>",
			      .icon_data = "aGVs\nbG8=\r\n",
			      .icon_mediatype = "image/png"};
static fbc_package pkg_bar = {.name = "bar", .default_channel = "alpha"};
static fbc_channel ch_stable = {
	.name = "stable", .package = "foo", .entries = entries_stable, .n_entries = 1};
static fbc_channel ch_alpha = {
	.name = "alpha", .package = "foo", .entries = entries_alpha, .n_entries = 1};
static fbc_related_image rel[] = {{"op", "quay.io/x/op:1"}};
static fbc_bundle b_foo = {.name = "foo.v1.0.0",
			   .package = "foo",
			   .image = "quay.io/x/foo:1",
			   .properties = bundle_props,
			   .n_properties = 3,
			   .related_images = rel,
			   .n_related_images = 1};
static fbc_deprecation_entry dep_entries[] = {{"olm.channel", "alpha", "use stable"},
					      {"olm.package", "", "gone"}};
static fbc_deprecation dep_foo = {.package = "foo", .entries = dep_entries, .n_entries = 2};
static fbc_other o_global = {.schema = "z.global",
			     .package = "",
			     .name = "g",
			     .blob = "{\"name\":\"g\",\"schema\":\"z.global\"}",
			     .blob_len = 32};
static fbc_other o_foo_b = {.schema = "b.x",
			    .package = "foo",
			    .name = "",
			    .blob = "{\"package\":\"foo\",\"schema\":\"b.x\"}",
			    .blob_len = 32};
static fbc_other o_foo_a = {.schema = "a.x",
			    .package = "foo",
			    .name = "",
			    .blob = "{\"package\":\"foo\",\"schema\":\"a.x\"}",
			    .blob_len = 32};

static void init_cat(fbc_catalog *cat)
{
	memset(cat, 0, sizeof(*cat));
	fbc_vec_init(&cat->packages, sizeof(void *));
	fbc_vec_init(&cat->channels, sizeof(void *));
	fbc_vec_init(&cat->bundles, sizeof(void *));
	fbc_vec_init(&cat->deprecations, sizeof(void *));
	fbc_vec_init(&cat->others, sizeof(void *));
}

static void dispose_cat(fbc_catalog *cat)
{
	fbc_vec_dispose(&cat->packages);
	fbc_vec_dispose(&cat->channels);
	fbc_vec_dispose(&cat->bundles);
	fbc_vec_dispose(&cat->deprecations);
	fbc_vec_dispose(&cat->others);
}

static char *render(fbc_catalog *cat)
{
	fbc_buf b;
	fbc_error err;

	fbc_buf_init(&b, 0);
	fbc_error_init(&err);
	assert_int_equal(fbc_render_catalog(cat, fbc_render_to_buf, &b, &err), 0);
	return fbc_buf_detach(&b, NULL);
}

static const char expected[] =
	"{\"defaultChannel\":\"alpha\",\"name\":\"bar\",\"schema\":\"olm.package\"}\n"
	"{\"defaultChannel\":\"stable\",\"description\":\"Foo <b>&</b>\",\"icon\":{\"base64data\":"
	"\"aGVsbG8=\",\"mediatype\":\"image/png\"},\"name\":\"foo\",\"schema\":\"olm.package\"}\n"
	"{\"entries\":[{\"name\":\"foo.v1.0.0\"}],\"name\":\"alpha\",\"package\":\"foo\","
	"\"schema\":\"olm.channel\"}\n"
	"{\"entries\":[{\"name\":\"foo.v1.0.0\",\"replaces\":\"foo.v0.8.0\",\"skipRange\":"
	"\">=0.1.0 <1.0.0\",\"skips\":[\"foo.v0.9.0\"]}],\"name\":\"stable\",\"package\":\"foo\","
	"\"schema\":\"olm.channel\"}\n"
	"{\"image\":\"quay.io/x/foo:1\",\"name\":\"foo.v1.0.0\",\"package\":\"foo\",\"properties\":"
	"[{\"type\":\"olm.package\",\"value\":{\"packageName\":\"foo\",\"version\":\"1.0.0\"}},"
	"{\"type\":\"olm.bundle.object\",\"value\":{\"data\":\"eyJraW5kIjoiWCJ9\"}},"
	"{\"type\":\"olm.gvk\",\"value\":null}],\"relatedImages\":[{\"image\":\"quay.io/x/op:1\","
	"\"name\":\"op\"}],\"schema\":\"olm.bundle\"}\n"
	"{\"package\":\"foo\",\"schema\":\"a.x\"}\n"
	"{\"package\":\"foo\",\"schema\":\"b.x\"}\n"
	"{\"entries\":[{\"message\":\"use stable\",\"reference\":{\"name\":\"alpha\",\"schema\":"
	"\"olm.channel\"}},{\"message\":\"gone\",\"reference\":{\"schema\":\"olm.package\"}}],"
	"\"package\":\"foo\",\"schema\":\"olm.deprecations\"}\n"
	"{\"name\":\"g\",\"schema\":\"z.global\"}\n";

static void fbc_render_catalog__canonical_order_and_format(void **state)
{
	fbc_catalog cat;
	char *out;

	init_cat(&cat);
	push(&cat.others, &o_global);
	push(&cat.packages, &pkg_foo);
	push(&cat.deprecations, &dep_foo);
	push(&cat.bundles, &b_foo);
	push(&cat.others, &o_foo_b);
	push(&cat.channels, &ch_stable);
	push(&cat.channels, &ch_alpha);
	push(&cat.others, &o_foo_a);
	push(&cat.packages, &pkg_bar);
	out = render(&cat);
	assert_string_equal(out, expected);
	free(out);
	dispose_cat(&cat);
}

static void fbc_render_catalog__independent_of_load_order(void **state)
{
	fbc_catalog a, b;
	char *oa, *ob;
	fbc_package dup1 = {.name = "bar", .default_channel = "zeta"};

	init_cat(&a);
	init_cat(&b);
	push(&a.packages, &pkg_bar);
	push(&a.packages, &dup1);
	push(&a.packages, &pkg_foo);
	push(&a.channels, &ch_alpha);
	push(&a.channels, &ch_stable);
	push(&a.others, &o_foo_a);
	push(&a.others, &o_foo_b);

	push(&b.others, &o_foo_b);
	push(&b.channels, &ch_stable);
	push(&b.packages, &pkg_foo);
	push(&b.packages, &dup1);
	push(&b.others, &o_foo_a);
	push(&b.channels, &ch_alpha);
	push(&b.packages, &pkg_bar);
	oa = render(&a);
	ob = render(&b);
	assert_string_equal(oa, ob);
	/* The duplicate is rendered too, ordered by content. */
	assert_non_null(strstr(oa, "\"alpha\",\"name\":\"bar\""));
	assert_true(strstr(oa, "\"alpha\",\"name\":\"bar\"") < strstr(oa, "\"zeta\""));
	free(oa);
	free(ob);
	dispose_cat(&a);
	dispose_cat(&b);
}

static void fbc_render_catalog__empty_catalog_writes_nothing(void **state)
{
	fbc_catalog cat;
	char *out;

	init_cat(&cat);
	out = render(&cat);
	assert_string_equal(out, "");
	free(out);
	dispose_cat(&cat);
}

static int failing_writer(void *ctx, const char *data, size_t len, fbc_error *err)
{
	int *calls = ctx;

	(*calls)++;
	return fbc_error_set(err, FBC_EIO, "stdout", "broken pipe");
}

static void fbc_render_catalog__stops_on_write_error(void **state)
{
	fbc_catalog cat;
	fbc_error err;
	int calls = 0;

	init_cat(&cat);
	push(&cat.packages, &pkg_foo);
	push(&cat.packages, &pkg_bar);
	fbc_error_init(&err);
	assert_int_equal(fbc_render_catalog(&cat, failing_writer, &calls, &err), FBC_EIO);
	assert_int_equal(calls, 1);
	assert_string_equal(err.message, "broken pipe");
	dispose_cat(&cat);
}

static void fbc_render_bundle__reports_buffer_limit(void **state)
{
	fbc_buf b;
	fbc_error err;

	fbc_buf_init(&b, 16);
	fbc_error_init(&err);
	assert_int_equal(fbc_render_bundle(&b, &b_foo, &err), FBC_ELIMIT);
	assert_int_equal(err.code, FBC_ELIMIT);
	assert_non_null(strstr(err.message, "olm.bundle"));
	fbc_buf_dispose(&b);
}

static void fbc_cli_format_diag__file_line_code_and_context(void **state)
{
	fbc_diag d = {.code = "V4",
		      .message = "multiple channel heads found in graph: a, b",
		      .file = "foo/catalog.yaml",
		      .line = 12,
		      .package = "foo",
		      .channel = "stable"};
	fbc_diag d2 = {.code = "C2", .message = "duplicate package \"foo\"", .package = "foo"};
	fbc_buf b;

	fbc_buf_init(&b, 0);
	assert_int_equal(fbc_cli_format_diag(&b, &d), 0);
	assert_string_equal(b.data, "foo/catalog.yaml:12: V4: package \"foo\", channel \"stable\": "
				    "multiple channel heads found in graph: a, b");
	fbc_buf_reset(&b);
	/* No file: "."; the package already quoted in the message is not repeated. */
	assert_int_equal(fbc_cli_format_diag(&b, &d2), 0);
	assert_string_equal(b.data, ".: C2: duplicate package \"foo\"");
	fbc_buf_dispose(&b);
}

static void fbc_cli_format_diags_json__omits_absent_fields(void **state)
{
	fbc_diags diags;
	fbc_loc loc = {"a/b.json", 3};
	fbc_buf b;

	assert_int_equal(fbc_diags_init(&diags, 0), 0);
	assert_int_equal(fbc_diags_add(&diags, "C18", &loc, "p", NULL, "p.v1", "not \"found\""), 0);
	assert_int_equal(fbc_diags_add(&diags, "L1", NULL, NULL, NULL, NULL, "x"), 0);
	fbc_buf_init(&b, 0);
	assert_int_equal(fbc_cli_format_diags_json(&b, &diags, false), 0);
	assert_string_equal(b.data,
			    "{\"valid\":false,\"errors\":[{\"code\":\"C18\",\"message\":\"not "
			    "\\\"found\\\"\",\"file\":\"a/b.json\",\"line\":3,\"package\":\"p\","
			    "\"bundle\":\"p.v1\"},{\"code\":\"L1\",\"message\":\"x\"}]}\n");
	fbc_buf_dispose(&b);
	fbc_diags_dispose(&diags);
}

static void parse_usage(FILE *f)
{
	fputs("usage: fbcd t DIR\n", f);
}

/* 'x' takes a value ("bad" is refused), 'y' does not. */
static int parse_option(void *ctx, int c, const char *arg)
{
	char *seen = ctx;

	if (c == 'x' && strcmp(arg, "bad") == 0)
		return FBC_CLI_USAGE;
	seen[strlen(seen)] = (char)c;
	return 0;
}

static int parse(const char **dir, char *seen, int argc, const char **argv)
{
	static const struct option opts[] = {{"ex", required_argument, NULL, 'x'},
					     {"why", no_argument, NULL, 'y'},
					     {"help", no_argument, NULL, 'h'},
					     {NULL, 0, NULL, 0}};
	static const fbc_cli_cmd cmd = {"t", ":x:yh", opts, parse_usage, parse_option};
	char *args[8];

	memset(seen, 0, 8);
	for (int i = 0; i < argc; i++)
		args[i] = (char *)argv[i];
	args[argc] = NULL;
	return fbc_cli_parse(dir, &cmd, seen, argc, args);
}

static void fbc_cli_parse__options_then_one_directory(void **state)
{
	const char *dir = "unset";
	char seen[8];

	(void)state;
	assert_int_equal(parse(&dir, seen, 5, (const char *[]){"t", "-x", "1", "--why", "d"}),
			 FBC_CLI_OK);
	assert_string_equal(dir, "d");
	assert_string_equal(seen, "xy");
	/* --help: nothing more to do, later errors are not looked at */
	assert_int_equal(parse(&dir, seen, 4, (const char *[]){"t", "-y", "--help", "--nope"}),
			 FBC_CLI_OK);
	assert_null(dir);
	assert_int_equal(parse(&dir, seen, 3, (const char *[]){"t", "--nope", "d"}), FBC_CLI_USAGE);
	assert_int_equal(parse(&dir, seen, 3, (const char *[]){"t", "d", "-x"}), FBC_CLI_USAGE);
	assert_int_equal(parse(&dir, seen, 4, (const char *[]){"t", "-x", "bad", "d"}),
			 FBC_CLI_USAGE);
	assert_string_equal(seen, "");
	assert_int_equal(parse(&dir, seen, 1, (const char *[]){"t"}), FBC_CLI_USAGE);
	assert_int_equal(parse(&dir, seen, 3, (const char *[]){"t", "a", "b"}), FBC_CLI_USAGE);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(fbc_render_catalog__canonical_order_and_format),
		cmocka_unit_test(fbc_render_catalog__independent_of_load_order),
		cmocka_unit_test(fbc_render_catalog__empty_catalog_writes_nothing),
		cmocka_unit_test(fbc_render_catalog__stops_on_write_error),
		cmocka_unit_test(fbc_render_bundle__reports_buffer_limit),
		cmocka_unit_test(fbc_cli_format_diag__file_line_code_and_context),
		cmocka_unit_test(fbc_cli_format_diags_json__omits_absent_fields),
		cmocka_unit_test(fbc_cli_parse__options_then_one_directory),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
