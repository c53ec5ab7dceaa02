/*
 * fbc_vec: a growable array of fixed-size elements in malloc'd memory.
 * Value type: zero-initialise (or fbc_vec_init), push, then fbc_vec_dispose.
 * Not thread-safe.
 */
#ifndef FBC_BASE_VEC_H
#define FBC_BASE_VEC_H

#include <stddef.h>

typedef struct fbc_vec {
	void *items;
	size_t len;
	size_t cap;
	size_t elem; /* element size in bytes */
} fbc_vec;

void fbc_vec_init(fbc_vec *v, size_t elem);
void fbc_vec_dispose(fbc_vec *v);
/* Append a zeroed element and return a pointer to it (NULL on OOM). */
void *fbc_vec_push(fbc_vec *v);
#define FBC_VEC_AT(v, type, i) (&((type *)(v)->items)[(i)])

#endif
