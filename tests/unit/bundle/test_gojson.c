/* service/gojson: Go encoding/json bytes. */
#include "service/gojson/gojson.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <string.h>

static void expect_str(const char *in, size_t n, bool html, const char *want)
{
	fbc_buf b;

	fbc_buf_init(&b, 0);
	assert_int_equal(fbc_gojson_string(&b, in, n, html), 0);
	assert_string_equal(b.data, want);
	fbc_buf_dispose(&b);
}

static void fbc_gojson_string__escapes_as_go(void **state)
{
	(void)state;
	expect_str("a<b>&c", 6, true, "\"a\\u003cb\\u003e\\u0026c\"");
	expect_str("a<b>&c", 6, false, "\"a<b>&c\"");
	expect_str("q\"\\\n\r\t\b\f\x01\x7f", 10, false, "\"q\\\"\\\\\\n\\r\\t\\b\\f\\u0001\x7f\"");
	expect_str("\xe2\x80\xa8x\xe2\x80\xa9", 7, false, "\"\\u2028x\\u2029\"");
	expect_str("\xff"
		   "a\xc3\xa9",
		   4, false, "\"\\ufffda\xc3\xa9\"");
}

static void expect_num(double f, const char *want)
{
	fbc_buf b;

	fbc_buf_init(&b, 0);
	assert_int_equal(fbc_gojson_number(&b, f), 0);
	assert_string_equal(b.data, want);
	fbc_buf_dispose(&b);
}

static void fbc_gojson_number__formats_as_go(void **state)
{
	(void)state;
	expect_num(1.0, "1");
	expect_num(0.5, "0.5");
	expect_num(300, "300");
	expect_num(1e21, "1e+21");
	expect_num(1e20, "100000000000000000000");
	expect_num(1e-7, "1e-7");
	expect_num(1.5e-10, "1.5e-10");
	expect_num(0.000001, "0.000001");
	expect_num(-0.0, "-0");
	expect_num(18446744073709551615.0, "18446744073709552000");
	expect_num(0.1, "0.1");
	expect_num(123456.789, "123456.789");
}

static void fbc_gojson_value__sorts_keys_bytewise(void **state)
{
	json_t *v = json_loads(
		"{\"b\":1,\"B\":[true,null,\"<\"],\"a\":{\"z\":0.5,\"y\":{}},\"\":[]}", 0, NULL);
	fbc_buf b;

	(void)state;
	fbc_buf_init(&b, 0);
	assert_int_equal(fbc_gojson_value(&b, v, true), 0);
	assert_string_equal(b.data,
			    "{\"\":[],\"B\":[true,null,\"\\u003c\"],\"a\":{\"y\":{},\"z\":0.5},"
			    "\"b\":1}");
	fbc_buf_dispose(&b);
	json_decref(v);
}

static void fbc_gojson_indent__like_encoder_setindent(void **state)
{
	const char *in = "{\"a\":[],\"b\":{},\"c\":[1,{\"d\":\"x,y:z\"}]}";
	fbc_buf b;

	(void)state;
	fbc_buf_init(&b, 0);
	assert_int_equal(fbc_gojson_indent(&b, in, strlen(in), "    "), 0);
	assert_string_equal(b.data, "{\n    \"a\": [],\n    \"b\": {},\n    \"c\": [\n        1,\n"
				    "        {\n            \"d\": \"x,y:z\"\n        }\n    ]\n}");
	fbc_buf_reset(&b);
	assert_int_equal(fbc_gojson_indent(&b, "{\"a\":", 5, "  "), FBC_EPARSE);
	fbc_buf_dispose(&b);
}

static void fbc_gojson_compact__keeps_bytes_drops_space(void **state)
{
	const char *in = " { \"b\" : \"x y\\\"<\" ,\n \"a\":[ 1 , 2 ] } ";
	fbc_buf b;

	(void)state;
	fbc_buf_init(&b, 0);
	assert_int_equal(fbc_gojson_compact(&b, in, strlen(in), false), 0);
	assert_string_equal(b.data, "{\"b\":\"x y\\\"<\",\"a\":[1,2]}");
	fbc_buf_reset(&b);
	assert_int_equal(fbc_gojson_compact(&b, in, strlen(in), true), 0);
	assert_string_equal(b.data, "{\"b\":\"x y\\\"\\u003c\",\"a\":[1,2]}");
	fbc_buf_reset(&b);
	assert_int_equal(fbc_gojson_compact(&b, "\"abc", 4, false), FBC_EPARSE);
	fbc_buf_dispose(&b);
}

static void fbc_gojson_base64__std_encoding(void **state)
{
	fbc_buf b;

	(void)state;
	fbc_buf_init(&b, 0);
	assert_int_equal(fbc_gojson_base64(&b, "", 0), 0);
	assert_int_equal(fbc_gojson_base64(&b, "f", 1), 0);
	assert_int_equal(fbc_gojson_base64(&b, "fo", 2), 0);
	assert_int_equal(fbc_gojson_base64(&b, "foo", 3), 0);
	assert_int_equal(fbc_gojson_base64(&b, "\xfb\xff", 2), 0);
	assert_string_equal(b.data, "Zg==Zm8=Zm9v+/8=");
	fbc_buf_dispose(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(fbc_gojson_string__escapes_as_go),
		cmocka_unit_test(fbc_gojson_number__formats_as_go),
		cmocka_unit_test(fbc_gojson_value__sorts_keys_bytewise),
		cmocka_unit_test(fbc_gojson_indent__like_encoder_setindent),
		cmocka_unit_test(fbc_gojson_compact__keeps_bytes_drops_space),
		cmocka_unit_test(fbc_gojson_base64__std_encoding),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
