#include "service/base/arena.h"
#include "service/base/base64.h"
#include "service/base/buf.h"
#include "service/base/diag.h"
#include "service/base/error.h"
#include "service/base/strmap.h"
#include "service/base/utf8.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void fbc_buf_append__respects_max(void **state)
{
	fbc_buf b;

	fbc_buf_init(&b, 8);
	assert_int_equal(fbc_buf_puts(&b, "12345678"), 0);
	assert_int_equal(fbc_buf_putc(&b, 'x'), FBC_ELIMIT);
	assert_int_equal(b.len, 8);
	assert_string_equal(b.data, "12345678");
	fbc_buf_dispose(&b);
}

static void fbc_buf_put_json_string__escapes_controls(void **state)
{
	fbc_buf b;

	fbc_buf_init(&b, 0);
	assert_int_equal(fbc_buf_put_json_string(&b, "a\"b\\\n\x01</", 8), 0);
	assert_string_equal(b.data, "\"a\\\"b\\\\\\n\\u0001</\"");
	fbc_buf_dispose(&b);
}

/* The output must be valid UTF-8 JSON whatever the input bytes (a file
 * name is not necessarily UTF-8): valid sequences pass, others are U+FFFD. */
static void fbc_buf_put_json_string__invalid_utf8_becomes_fffd(void **state)
{
	fbc_buf b;

	(void)state;
	fbc_buf_init(&b, 0);
	assert_int_equal(
		fbc_buf_put_json_string(
			&b, "caf\xc3\xa9 \xff|\xe9|\xed\xa0\x80|\xf0\x9f\x98\x80|\xc3", 20),
		0);
	assert_string_equal(
		b.data,
		"\"caf\xc3\xa9 \\ufffd|\\ufffd|\\ufffd\\ufffd\\ufffd|\xf0\x9f\x98\x80|\\ufffd\"");
	fbc_buf_dispose(&b);
}

/* Strings pack without padding (from each chunk's end) between aligned
 * allocations (from its start); calloc clears, whichever chunk serves it; a
 * string too long for the head gets room elsewhere; every byte stays put. */
static void fbc_arena_strndup__packed_beside_aligned(void **state)
{
	fbc_arena *a = NULL;
	char *s[4000], expect[64];
	unsigned char *q[4000];
	size_t before;

	(void)state;
	for (size_t n = 4096; n <= 65536; n *= 2) {
		/* dirty memory for malloc to hand the first chunks */
		void *dirty = malloc(n + 64);

		assert_non_null(dirty);
		memset(dirty, 0xaa, n + 64);
		free(dirty);
	}
	assert_int_equal(fbc_arena_create_growing(&a, 4096, (size_t)4 << 20), 0);
	before = fbc_arena_used(a);
	s[0] = fbc_arena_strdup(a, "ab");
	s[1] = fbc_arena_strdup(a, "cde");
	assert_int_equal(fbc_arena_used(a) - before, 3 + 4); /* no padding */
	assert_ptr_equal(s[0], s[1] + 4);		     /* packed, downwards */
	for (size_t i = 0; i < 4000; i++) {
		int n = snprintf(expect, sizeof(expect), "string-%zu", i * 7919);

		s[i] = fbc_arena_strndup(a, expect, (size_t)n);
		q[i] = fbc_arena_calloc(a, 1, 24 + i % 50);
		assert_non_null(s[i]);
		assert_non_null(q[i]);
		assert_int_equal((uintptr_t)q[i] % 16, 0);
		for (size_t b = 0; b < 24 + i % 50; b++)
			assert_int_equal(q[i][b], 0);
		memset(q[i], 0xff, 24 + i % 50);
	}
	for (size_t i = 0; i < 4000; i++) {
		snprintf(expect, sizeof(expect), "string-%zu", i * 7919);
		assert_string_equal(s[i], expect);
		assert_int_equal(q[i][0], 0xff);
	}
	/* longer than a chunk: a chunk of its own, the head keeps filling */
	{
		char *big = malloc(3 << 20);

		assert_non_null(big);
		memset(big, 'y', 3 << 20);
		s[0] = fbc_arena_strndup(a, big, (3 << 20) - 1);
		assert_non_null(s[0]);
		assert_int_equal(strlen(s[0]), (3 << 20) - 1);
		free(big);
	}
	assert_string_equal(fbc_arena_strdup(a, "tail"), "tail");
	fbc_arena_free(a);
}

/* A growing arena's chunks double up to the maximum; chunks of 2 MiB and more
 * are mapped (whole huge pages, less a header); every byte stays usable. */
static void fbc_arena_create_growing__chunks_double_to_the_maximum(void **state)
{
	const size_t k = 256 * 1024, huge = FBC_ARENA_HUGE;
	fbc_arena *a = NULL, *flat = NULL;
	unsigned char *p[30000];
	size_t r, big_room;

	assert_int_equal(fbc_arena_create_growing(&a, k, 8 * huge / 2), 0);
	assert_int_equal(fbc_arena_reserved(a), 0);
	/* 1 KiB pieces: 256 KiB, 512 KiB and 1 MiB chunks malloc'd, then 2, 4, 8 MiB mapped */
	for (size_t i = 0; i < 30000; i++) {
		p[i] = fbc_arena_alloc(a, 1000);
		assert_non_null(p[i]);
		assert_int_equal((uintptr_t)p[i] % 16, 0);
		memset(p[i], (int)(i & 0xff), 1000);
	}
	r = fbc_arena_reserved(a);
	/* 30,000 x 1008 bytes (28.8 MiB) in 256 KiB + 512 KiB + 1 MiB malloc'd and
	 * 2 + 4 + 8 + 8 + 8 MiB mapped, each of these less its header */
	assert_true(r <= 7 * k + 30 * (huge / 2));
	assert_true(r > 7 * k + 30 * (huge / 2) - 5 * 64);
	for (size_t i = 0; i < 30000; i += 997)
		for (size_t b = 0; b < 1000; b++)
			assert_int_equal(p[i][b], (unsigned char)(i & 0xff));
	/* a big value gets a chunk of its own, in whole huge pages */
	r = fbc_arena_reserved(a);
	p[0] = fbc_arena_alloc(a, 3 * huge + 1);
	assert_non_null(p[0]);
	big_room = fbc_arena_reserved(a) - r;
	assert_true(big_room >= 3 * huge + 1 && big_room < 4 * huge);
	memset(p[0], 7, 3 * huge + 1);
	fbc_arena_free(a);

	/* a plain arena keeps its chunk size */
	assert_int_equal(fbc_arena_create(&flat, k), 0);
	for (size_t i = 0; i < 1000; i++)
		assert_non_null(fbc_arena_alloc(flat, 1000));
	assert_int_equal(fbc_arena_reserved(flat), 4 * k);
	fbc_arena_free(flat);
}

static void fbc_arena_alloc__large_and_small(void **state)
{
	fbc_arena *a = NULL;
	char *big, *s;

	assert_int_equal(fbc_arena_create(&a, 128), 0);
	s = fbc_arena_strdup(a, "hello");
	big = fbc_arena_alloc(a, 100000);
	assert_non_null(big);
	memset(big, 'x', 100000);
	assert_string_equal(s, "hello");
	assert_string_equal(fbc_arena_printf(a, "%d-%s", 42, "x"), "42-x");
	assert_int_equal((uintptr_t)fbc_arena_alloc(a, 3) % 16, 0);
	fbc_arena_free(a);
}

static void fbc_strmap_put__grows_and_finds(void **state)
{
	fbc_strmap m;
	char keys[1000][8];
	size_t it = 0, n = 0;

	fbc_strmap_init(&m);
	for (int i = 0; i < 1000; i++) {
		snprintf(keys[i], sizeof(keys[i]), "k%d", i);
		assert_int_equal(fbc_strmap_add(&m, keys[i], (void *)(intptr_t)(i + 1)), 1);
	}
	assert_int_equal(fbc_strmap_add(&m, "k5", NULL), 0);
	assert_int_equal((intptr_t)fbc_strmap_get(&m, "k999"), 1000);
	assert_null(fbc_strmap_get(&m, "nope"));
	while (fbc_strmap_next(&m, &it, NULL, NULL))
		n++;
	assert_int_equal(n, 1000);
	fbc_strmap_dispose(&m);
}

/* Catalog-like keys that differ in one byte anywhere (first word, last word,
 * tail): every one found, and probes stay short (the slot hash mixes every
 * byte into the low bits). */
static void fbc_strmap_get__similar_keys_spread(void **state)
{
	enum { N = 60000 };
	static char keys[N][48];
	fbc_strmap m;
	size_t probes = 0;

	fbc_strmap_init(&m);
	for (int i = 0; i < N; i++) {
		/* 2,000 packages x 30 versions; lengths 28..30 */
		snprintf(keys[i], sizeof(keys[i]), "gen-operator-%05d.v1.0.%d", i / 30, i % 30);
		assert_int_equal(fbc_strmap_add(&m, keys[i], (void *)(intptr_t)(i + 1)), 1);
	}
	for (int i = 0; i < N; i++) {
		char probe[48];

		snprintf(probe, sizeof(probe), "gen-operator-%05d.v1.0.%d", i / 30, i % 30);
		assert_int_equal((intptr_t)fbc_strmap_get(&m, probe), i + 1);
		probe[0] = 'G'; /* the first byte */
		assert_null(fbc_strmap_get(&m, probe));
	}
	/* linear probing at load <= 3/4: the mean distance from the home slot is
	 * about 1.5 with a good hash, hundreds with one that ignores bytes */
	for (size_t s = 0; s < m.cap; s++) {
		if (m.slots[s].key) {
			size_t home = (size_t)m.slots[s].hash & (m.cap - 1);

			probes += (s - home) & (m.cap - 1);
		}
	}
	assert_true(probes < 3 * (size_t)N);
	fbc_strmap_dispose(&m);
}

static void fbc_diags_sort__orders_and_dedupes_per_channel(void **state)
{
	fbc_diags d;
	fbc_loc b = {"b.yaml", 3}, a = {"a.yaml", 9};

	assert_int_equal(fbc_diags_init(&d, 0), 0);
	fbc_diags_add(&d, "V10", &b, "p", "stable", "p.v1", "x");
	fbc_diags_add(&d, "V10", &b, "p", "alpha", "p.v1", "x");
	fbc_diags_add(&d, "V2", &b, "p", NULL, NULL, "y");
	fbc_diags_add(&d, "C2", &a, "q", NULL, NULL, "z\nw");
	fbc_diags_sort(&d);
	assert_int_equal(fbc_diags_count(&d), 3);
	assert_string_equal(fbc_diags_at(&d, 0)->file, "a.yaml");
	assert_string_equal(fbc_diags_at(&d, 0)->message, "z w");
	assert_string_equal(fbc_diags_at(&d, 1)->code, "V2");
	assert_string_equal(fbc_diags_at(&d, 2)->channel, "alpha");
	fbc_diags_dispose(&d);
}

static void fbc_error_set__truncates(void **state)
{
	fbc_error e;
	char big[4000];

	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	fbc_error_init(&e);
	assert_int_equal(fbc_error_set(&e, FBC_EINVAL, "f", "%s", big), FBC_EINVAL);
	assert_int_equal(strlen(e.message), FBC_ERROR_MESSAGE_MAX - 1);
	fbc_error_prefix(&e, "ctx");
	assert_memory_equal(e.message, "ctx: aaa", 8);
}

/* Every code point round-trips except the surrogates; the forms Go refuses
 * (overlong, above U+10FFFF, stray or missing continuation bytes) give 0. */
static void fbc_utf8_decode__go_rules(void **state)
{
	unsigned char b[4];
	uint32_t cp;

	(void)state;
	for (uint32_t c = 0; c <= 0x10ffff; c++) {
		size_t n = c < 0x80 ? 1 : c < 0x800 ? 2 : c < 0x10000 ? 3 : 4;

		if (n == 1)
			b[0] = (unsigned char)c;
		else
			b[0] = (unsigned char)((n == 2	 ? 0xc0
						: n == 3 ? 0xe0
							 : 0xf0) |
					       c >> (6 * (n - 1)));
		for (size_t i = 1; i < n; i++)
			b[i] = (unsigned char)(0x80 | ((c >> (6 * (n - 1 - i))) & 0x3f));
		cp = 0xffffffffu;
		if (c >= 0xd800 && c <= 0xdfff) {
			assert_int_equal(fbc_utf8_decode(&cp, b, n), 0);
			continue;
		}
		assert_int_equal(fbc_utf8_decode(&cp, b, n), n);
		assert_int_equal(cp, c);
		if (n > 1)
			assert_int_equal(fbc_utf8_decode(&cp, b, n - 1), 0); /* cut short */
	}
	assert_int_equal(fbc_utf8_decode(NULL, (const unsigned char *)"\xc0\x80", 2), 0);
	assert_int_equal(fbc_utf8_decode(NULL, (const unsigned char *)"\xe0\x9f\xbf", 3), 0);
	assert_int_equal(fbc_utf8_decode(NULL, (const unsigned char *)"\xf0\x8f\xbf\xbf", 4), 0);
	assert_int_equal(fbc_utf8_decode(NULL, (const unsigned char *)"\xf4\x90\x80\x80", 4), 0);
	assert_int_equal(fbc_utf8_decode(NULL, (const unsigned char *)"\xf5\x80\x80\x80", 4), 0);
	assert_int_equal(fbc_utf8_decode(NULL, (const unsigned char *)"\x80", 1), 0);
	assert_int_equal(fbc_utf8_decode(NULL, (const unsigned char *)"\xe2\x82\x41", 3), 0);
	assert_int_equal(fbc_utf8_decode(NULL, (const unsigned char *)"", 0), 0);
	assert_true(fbc_utf8_valid("a\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80", 10));
	assert_true(fbc_utf8_valid("", 0));
	assert_false(fbc_utf8_valid("a\xc3", 2));
	assert_false(fbc_utf8_valid("\xed\xa0\x80", 3));
}

static void fbc_base64_decode__go_std_encoding(void **state)
{
	unsigned char *out = NULL;
	size_t len = 0, bad = 0;

	assert_int_equal(fbc_base64_decode(&out, &len, &bad, "aGVs\r\nbG8=", 10), 0);
	assert_int_equal(len, 5);
	assert_memory_equal(out, "hello", 5);
	free(out);
	/* Go: missing padding is CorruptInputError(4), a stray '=' reports its offset */
	assert_int_equal(fbc_base64_decode(NULL, NULL, &bad, "aGVsbG8", 7), FBC_EPARSE);
	assert_int_equal(bad, 4);
	assert_int_equal(fbc_base64_decode(NULL, NULL, &bad, "a===", 4), FBC_EPARSE);
	assert_int_equal(bad, 1);
	assert_int_equal(fbc_base64_decode(NULL, NULL, &bad, "aGVsbG8=x", 9), FBC_EPARSE);
	assert_int_equal(bad, 8);
	assert_int_equal(fbc_base64_decode(NULL, NULL, &bad, "", 0), 0);
}

/* An encoder of the standard alphabet with padding, independent of the decoder. */
static size_t b64_encode(char *o, const unsigned char *in, size_t n)
{
	static const char abc[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	size_t k = 0;

	for (size_t i = 0; i < n; i += 3) {
		unsigned v = (unsigned)in[i] << 16 | (i + 1 < n ? (unsigned)in[i + 1] << 8 : 0) |
			     (i + 2 < n ? in[i + 2] : 0);

		o[k++] = abc[v >> 18 & 63];
		o[k++] = abc[v >> 12 & 63];
		o[k++] = i + 1 < n ? abc[v >> 6 & 63] : '=';
		o[k++] = i + 2 < n ? abc[v & 63] : '=';
	}
	o[k] = 0;
	return k;
}

/* decode and decode_portable agree on s: status, bytes, offset; returns the status */
static int b64_same(const char *s, size_t n)
{
	unsigned char *a = NULL, *b = NULL;
	size_t alen = 0, blen = 0, abad = 12345, bbad = 54321;
	int ra = fbc_base64_decode(&a, &alen, &abad, s, n);
	int rb = fbc_base64_decode_portable(&b, &blen, &bbad, s, n);

	assert_int_equal(ra, rb);
	if (ra == 0) {
		assert_int_equal(alen, blen);
		assert_memory_equal(a, b, alen);
	} else {
		assert_int_equal(abad, bbad);
	}
	free(a);
	free(b);
	/* validating only gives the same answer */
	size_t va = 1, vb = 2;

	assert_int_equal(fbc_base64_decode(NULL, NULL, &va, s, n), ra);
	assert_int_equal(fbc_base64_decode_portable(NULL, NULL, &vb, s, n), ra);
	if (ra) {
		assert_int_equal(va, abad);
		assert_int_equal(vb, abad);
	}
	return ra;
}

/* The vector loop (AVX2 where the CPU has it) decodes as the portable loops:
 * round trips of every length to 300 bytes, and every byte value at every
 * position of blocks around the 32-byte vector boundaries. */
static void fbc_base64_decode__vector_same_as_portable(void **state)
{
	unsigned char raw[300], *out = NULL;
	char enc[512], mut[512];
	size_t len = 0, bad = 0;
	unsigned seed = 12345;

#if defined(__x86_64__) && defined(__GNUC__)
	if (!__builtin_cpu_supports("avx2"))
		print_message("no AVX2 on this CPU: both paths are the portable one\n");
#endif
	for (size_t n = 0; n <= sizeof(raw); n++) {
		for (size_t i = 0; i < n; i++)
			raw[i] = (unsigned char)((seed = seed * 1103515245u + 12345u) >> 16);
		size_t k = b64_encode(enc, raw, n);

		assert_int_equal(fbc_base64_decode(&out, &len, &bad, enc, k), 0);
		assert_int_equal(len, n);
		assert_memory_equal(out, raw, n);
		free(out);
		out = NULL;
		assert_int_equal(b64_same(enc, k), 0);
	}
	/* 150 bytes -> 200 characters: vector blocks at 0, 32, ... 160 */
	size_t k = b64_encode(enc, raw, 150);
	const size_t at[] = {0, 1, 30, 31, 32, 33, 63, 64, 95, 127, 159, 160, 191, 196, 199};
	for (size_t p = 0; p < sizeof(at) / sizeof(at[0]); p++) {
		for (int c = 0; c < 256; c++) {
			memcpy(mut, enc, k);
			mut[at[p]] = (char)c;
			b64_same(mut, k);
			/* and with the byte inserted (CR and LF are skipped anywhere) */
			memcpy(mut, enc, at[p]);
			mut[at[p]] = (char)c;
			memcpy(mut + at[p] + 1, enc + at[p], k - at[p]);
			b64_same(mut, k + 1);
		}
	}
	/* every prefix and every length of the same text, padding included */
	for (size_t n = 0; n <= k; n++)
		b64_same(enc + (k - n), n);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(fbc_buf_append__respects_max),
		cmocka_unit_test(fbc_buf_put_json_string__escapes_controls),
		cmocka_unit_test(fbc_buf_put_json_string__invalid_utf8_becomes_fffd),
		cmocka_unit_test(fbc_arena_alloc__large_and_small),
		cmocka_unit_test(fbc_arena_create_growing__chunks_double_to_the_maximum),
		cmocka_unit_test(fbc_arena_strndup__packed_beside_aligned),
		cmocka_unit_test(fbc_strmap_put__grows_and_finds),
		cmocka_unit_test(fbc_strmap_get__similar_keys_spread),
		cmocka_unit_test(fbc_diags_sort__orders_and_dedupes_per_channel),
		cmocka_unit_test(fbc_error_set__truncates),
		cmocka_unit_test(fbc_base64_decode__go_std_encoding),
		cmocka_unit_test(fbc_base64_decode__vector_same_as_portable),
		cmocka_unit_test(fbc_utf8_decode__go_rules),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
