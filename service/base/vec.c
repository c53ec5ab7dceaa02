#include "service/base/vec.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

void fbc_vec_init(fbc_vec *v, size_t elem)
{
	v->items = NULL;
	v->len = 0;
	v->cap = 0;
	v->elem = elem;
}

void fbc_vec_dispose(fbc_vec *v)
{
	if (!v)
		return;
	free(v->items);
	v->items = NULL;
	v->len = 0;
	v->cap = 0;
}

void *fbc_vec_push(fbc_vec *v)
{
	void *p;

	if (v->len == v->cap) {
		size_t ncap = v->cap ? v->cap * 2 : 8;

		if (ncap > SIZE_MAX / v->elem)
			return NULL;
		p = realloc(v->items, ncap * v->elem);
		if (!p)
			return NULL;
		v->items = p;
		v->cap = ncap;
	}
	p = (char *)v->items + v->len * v->elem;
	memset(p, 0, v->elem);
	v->len++;
	return p;
}
