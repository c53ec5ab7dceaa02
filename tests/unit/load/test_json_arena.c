/*
 * service/load/json_arena.c: jansson's allocations in per-thread arenas.
 * Under ASan (the CI's second build) a tree freed with free() instead of its
 * arena, or a malloc'd tree the arena swallowed (a leak), fails these tests.
 */
#include "common.h"
#include "service/load/json_arena.h"

#include <jansson.h>
#include <pthread.h>
#include <stdint.h>

static json_t *tree(int n)
{
	json_t *o = json_object(), *a = json_array();
	char key[32];

	assert_non_null(o);
	for (int i = 0; i < n; i++) {
		snprintf(key, sizeof(key), "key-%d", i);
		assert_int_equal(json_object_set_new(o, key, json_sprintf("value %d", i)), 0);
		assert_int_equal(json_array_append_new(a, json_integer(i)), 0);
	}
	assert_int_equal(json_object_set_new(o, "list", a), 0);
	return o;
}

static void check_tree(const json_t *o, int n)
{
	char key[32], want[32];

	assert_int_equal(json_object_size(o), (size_t)n + 1);
	for (int i = 0; i < n; i++) {
		snprintf(key, sizeof(key), "key-%d", i);
		snprintf(want, sizeof(want), "value %d", i);
		assert_string_equal(json_string_value(json_object_get(o, key)), want);
		assert_int_equal(json_integer_value(json_array_get(json_object_get(o, "list"), i)),
				 i);
	}
}

/* Runs first: before fbc_json_arena_install nothing changes. */
static void fbc_json_arena__nothing_before_install(void **state)
{
	assert_false(fbc_json_arena_attach());
	assert_false(fbc_json_arena_enable(true));
	assert_false(fbc_json_arena_active());
	fbc_json_arena_install();
}

static void fbc_json_arena__trees_live_there_until_reset(void **state)
{
	json_t *before, *in, *again;
	size_t used;

	before = tree(50); /* malloc'd: not attached yet */
	assert_true(fbc_json_arena_attach());
	assert_false(fbc_json_arena_attach()); /* one per thread */
	assert_false(fbc_json_arena_active());
	json_decref(tree(10)); /* attached but off: malloc, and freed (LSan checks) */
	assert_int_equal(fbc_json_arena_used(), 0);

	assert_true(fbc_json_arena_enable(true));
	assert_true(fbc_json_arena_active());
	in = tree(1000);
	used = fbc_json_arena_used();
	assert_true(used > 1000 * 32); /* every node, key and string */
	check_tree(in, 1000);
	check_tree(before, 50);
	/* a malloc'd tree freed while the arena is on goes back to malloc */
	json_decref(before);
	assert_int_equal(fbc_json_arena_used(), used);
	/* decref of an arena tree returns nothing, and is harmless */
	json_incref(in);
	json_decref(in);
	json_decref(in);
	/* a big string that takes the arena past its first commit */
	{
		size_t big = (size_t)5 << 20;
		char *s = malloc(big);

		assert_non_null(s);
		memset(s, 'x', big);
		again = json_stringn_nocheck(s, big);
		free(s);
		assert_non_null(again);
		assert_int_equal(json_string_length(again), big);
		assert_true(fbc_json_arena_used() > used + big);
	}
	fbc_json_arena_reset();
	assert_int_equal(fbc_json_arena_used(), 0);
	/* the memory is reused after a reset */
	in = tree(1000);
	assert_int_equal(fbc_json_arena_used(), used);
	check_tree(in, 1000);
	fbc_json_arena_reset();

	/* off again: malloc */
	assert_false(fbc_json_arena_enable(false));
	in = tree(5);
	assert_int_equal(fbc_json_arena_used(), 0);
	json_decref(in);
	fbc_json_arena_detach();
	assert_false(fbc_json_arena_enable(true)); /* detached: no arena */
	json_decref(tree(5));
}

/* Every thread its own arena; when none is left a thread goes on with malloc. */
#define THREADS 70

typedef struct thr {
	pthread_barrier_t *all_attached, *done;
	bool attached;
	uintptr_t node;
	size_t used;
} thr;

static void *thread_main(void *arg)
{
	thr *t = arg;
	json_t *o;

	t->attached = fbc_json_arena_attach();
	fbc_json_arena_enable(true);
	pthread_barrier_wait(t->all_attached);
	o = tree(20);
	t->node = (uintptr_t)o;
	t->used = fbc_json_arena_used();
	check_tree(o, 20);
	if (!t->attached)
		json_decref(o);
	pthread_barrier_wait(t->done);
	fbc_json_arena_reset();
	fbc_json_arena_detach();
	return NULL;
}

static void fbc_json_arena__one_per_thread(void **state)
{
	pthread_barrier_t b1, b2;
	pthread_t th[THREADS];
	thr t[THREADS];
	size_t attached = 0;

	pthread_barrier_init(&b1, NULL, THREADS);
	pthread_barrier_init(&b2, NULL, THREADS);
	for (int i = 0; i < THREADS; i++) {
		t[i] = (thr){&b1, &b2, false, 0, 0};
		assert_int_equal(pthread_create(&th[i], NULL, thread_main, &t[i]), 0);
	}
	for (int i = 0; i < THREADS; i++)
		assert_int_equal(pthread_join(th[i], NULL), 0);
	for (int i = 0; i < THREADS; i++) {
		if (!t[i].attached) {
			assert_int_equal(t[i].used, 0);
			continue;
		}
		attached++;
		assert_true(t[i].used > 0);
		/* no two threads' trees at the same address: they lived at once */
		for (int k = 0; k < i; k++)
			assert_true(t[k].node != t[i].node);
	}
	assert_int_equal(attached, 64); /* json_arena.c: ARENAS */
	pthread_barrier_destroy(&b1);
	pthread_barrier_destroy(&b2);
	/* every arena came back */
	assert_true(fbc_json_arena_attach());
	fbc_json_arena_detach();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(fbc_json_arena__nothing_before_install),
		cmocka_unit_test(fbc_json_arena__trees_live_there_until_reset),
		cmocka_unit_test(fbc_json_arena__one_per_thread),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
