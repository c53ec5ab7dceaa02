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
void fbc_arena_free(fbc_arena *a);

/* 16-byte aligned, uninitialised. */
void *fbc_arena_alloc(fbc_arena *a, size_t n);
void *fbc_arena_calloc(fbc_arena *a, size_t count, size_t size);
char *fbc_arena_strndup(fbc_arena *a, const char *s, size_t n);
char *fbc_arena_strdup(fbc_arena *a, const char *s);
char *fbc_arena_printf(fbc_arena *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Register a destructor run (in reverse order) by fbc_arena_free; used to tie
 * json_t, PGresult and the like to a request's lifetime. Returns 0 or FBC_ENOMEM
 * (in which case fn(p) has already been called). */
int fbc_arena_defer(fbc_arena *a, void (*fn)(void *), void *p);

/* Bytes handed out so far (for benchmarks and limits). */
size_t fbc_arena_used(const fbc_arena *a);

#endif
