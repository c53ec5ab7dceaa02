/*
 * Per-thread bump arenas for jansson (see json_arena.h).
 *
 * One region of address space is reserved (PROT_NONE, so nothing is charged
 * for it) the first time a thread attaches, and cut into ARENAS slices of
 * ARENA_BYTES. An attached thread owns one slice; its pages are made
 * writable as the arena grows and handed back to the kernel on detach.
 * An allocation the slice cannot hold falls back to malloc (free tells the
 * two apart by address).
 */
#include "service/load/json_arena.h"

#include <jansson.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>

#if defined(__SANITIZE_ADDRESS__)
#define ARENA_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ARENA_ASAN 1
#endif
#endif
#ifdef ARENA_ASAN
#include <sanitizer/asan_interface.h>
#define POISON(p, n)   ASAN_POISON_MEMORY_REGION((p), (n))
#define UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION((p), (n))
#else
#define POISON(p, n)   ((void)(p), (void)(n))
#define UNPOISON(p, n) ((void)(p), (void)(n))
#endif

#define ARENAS	     64
#define ARENA_BYTES  ((size_t)1 << 30)
#define FIRST_COMMIT ((size_t)2 << 20)
#define ALIGN	     16

static bool installed;
static pthread_once_t reserve_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t slots_mu = PTHREAD_MUTEX_INITIALIZER;
static uint64_t slots_taken; /* bit i: slice i is attached to a thread (under slots_mu) */
static char *region;	     /* ARENAS * ARENA_BYTES, or NULL (atomic) */

static __thread struct {
	char *base; /* the thread's slice, NULL when not attached */
	size_t used, committed;
	unsigned slot;
	bool on;
} ta;

static void *arena_malloc(size_t n)
{
	size_t need = n ? (n + ALIGN - 1) & ~(size_t)(ALIGN - 1) : ALIGN;
	char *p;

	if (!ta.on || n > ARENA_BYTES || need > ARENA_BYTES - ta.used)
		return malloc(n);
	if (need > ta.committed - ta.used) {
		size_t c = ta.committed ? ta.committed : FIRST_COMMIT;

		while (c < ta.used + need)
			c *= 2;
		if (c > ARENA_BYTES)
			c = ARENA_BYTES;
		if (mprotect(ta.base + ta.committed, c - ta.committed, PROT_READ | PROT_WRITE) != 0)
			return malloc(n);
		POISON(ta.base + ta.committed, c - ta.committed);
		ta.committed = c;
	}
	p = ta.base + ta.used;
	ta.used += need;
	UNPOISON(p, n);
	return p;
}

static bool in_region(const void *p)
{
	const char *r = __atomic_load_n(&region, __ATOMIC_ACQUIRE);

	return r != NULL && (uintptr_t)p - (uintptr_t)r < (uintptr_t)ARENAS * ARENA_BYTES;
}

static void arena_free(void *p)
{
	if (!in_region(p))
		free(p); /* an arena's memory goes with its reset */
}

void fbc_json_arena_install(void)
{
	installed = true;
	json_set_alloc_funcs(arena_malloc, arena_free);
}

static void reserve(void)
{
	void *r = mmap(NULL, (size_t)ARENAS * ARENA_BYTES, PROT_NONE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	if (r != MAP_FAILED)
		__atomic_store_n(&region, (char *)r, __ATOMIC_RELEASE);
}

bool fbc_json_arena_attach(void)
{
	char *r;
	unsigned i;

	if (!installed || ta.base != NULL)
		return false;
	pthread_once(&reserve_once, reserve);
	r = __atomic_load_n(&region, __ATOMIC_ACQUIRE);
	if (r == NULL)
		return false;
	pthread_mutex_lock(&slots_mu);
	for (i = 0; i < ARENAS && (slots_taken >> i & 1); i++)
		;
	if (i < ARENAS)
		slots_taken |= (uint64_t)1 << i;
	pthread_mutex_unlock(&slots_mu);
	if (i == ARENAS)
		return false;
	ta.base = r + (size_t)i * ARENA_BYTES;
	ta.slot = i;
	ta.used = 0;
	ta.committed = 0;
	ta.on = false;
	return true;
}

void fbc_json_arena_detach(void)
{
	if (ta.base == NULL)
		return;
	/* back to reserved address space: nothing stays resident or charged */
	if (ta.committed > 0)
		(void)mmap(ta.base, ta.committed, PROT_NONE,
			   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0);
	UNPOISON(ta.base, ta.committed);
	pthread_mutex_lock(&slots_mu);
	slots_taken &= ~((uint64_t)1 << ta.slot);
	pthread_mutex_unlock(&slots_mu);
	ta.base = NULL;
	ta.used = ta.committed = 0;
	ta.on = false;
}

bool fbc_json_arena_enable(bool on)
{
	ta.on = on && ta.base != NULL;
	return ta.on;
}

bool fbc_json_arena_active(void)
{
	return ta.on;
}

void fbc_json_arena_reset(void)
{
	POISON(ta.base, ta.used);
	ta.used = 0;
}

size_t fbc_json_arena_used(void)
{
	return ta.used;
}
