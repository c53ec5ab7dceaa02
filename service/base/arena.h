/*
 * fbc_arena: a bump allocator. Everything allocated from an arena is freed
 * at once with fbc_arena_free. Used for the catalog model (one arena per
 * loaded catalog) and per HTTP request.
 *
 * Allocation returns NULL on out-of-memory; the arena stays usable.
 * Not thread-safe: one arena per thread or per object that owns it.
 */
#ifndef FBC_BASE_ARENA_H
#define FBC_BASE_ARENA_H

#include <stdarg.h>
#include <stddef.h>

typedef struct fbc_arena fbc_arena;

/* chunk_size 0 picks a default (64 KiB). */
int fbc_arena_create(fbc_arena **out, size_t chunk_size);
/* Chunks that start at first_chunk and double with each new one up to
 * max_chunk: small for a small load, few and large for a large one. Chunks of
 * FBC_ARENA_HUGE bytes and more (any arena's) are mapped on FBC_ARENA_HUGE
 * boundaries and advised for transparent huge pages, where the system allows
 * them: one page fault per 2 MiB instead of 512. */
int fbc_arena_create_growing(fbc_arena **out, size_t first_chunk, size_t max_chunk);
#define FBC_ARENA_HUGE ((size_t)2 << 20)
void fbc_arena_free(fbc_arena *a);

/* 16-byte aligned, uninitialised. */
void *fbc_arena_alloc(fbc_arena *a, size_t n);
void *fbc_arena_calloc(fbc_arena *a, size_t count, size_t size);
/* Strings are packed (no alignment, no padding): a chunk hands them out from
 * its end, aligned allocations from its start. */
char *fbc_arena_strndup(fbc_arena *a, const char *s, size_t n);
char *fbc_arena_strdup(fbc_arena *a, const char *s);
char *fbc_arena_printf(fbc_arena *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Register a destructor run (in reverse order) by fbc_arena_free; used to tie
 * json_t, PGresult and the like to a request's lifetime. Returns 0 or FBC_ENOMEM
 * (in which case fn(p) has already been called). */
int fbc_arena_defer(fbc_arena *a, void (*fn)(void *), void *p);

/* Bytes handed out so far (for benchmarks and limits). */
size_t fbc_arena_used(const fbc_arena *a);
/* Bytes of the chunks holding them. */
size_t fbc_arena_reserved(const fbc_arena *a);

#endif
