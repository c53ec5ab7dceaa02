#include "service/base/arena.h"

#include "service/base/error.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ALIGN	      16
#define DEFAULT_CHUNK (64 * 1024)

struct chunk {
	struct chunk *next;
	size_t size;
	size_t used;
	_Alignas(16) unsigned char data[];
};

struct deferred {
	struct deferred *next;
	void (*fn)(void *);
	void *p;
};

struct fbc_arena {
	struct chunk *head;
	struct deferred *deferred;
	size_t chunk_size;
	size_t used;
};

int fbc_arena_create(fbc_arena **out, size_t chunk_size)
{
	fbc_arena *a = calloc(1, sizeof(*a));

	if (!a)
		return FBC_ENOMEM;
	a->chunk_size = chunk_size ? chunk_size : DEFAULT_CHUNK;
	*out = a;
	return 0;
}

void fbc_arena_free(fbc_arena *a)
{
	struct chunk *c, *next;
	struct deferred *d, *dn;

	if (!a)
		return;
	for (d = a->deferred; d; d = dn) {
		dn = d->next;
		d->fn(d->p);
	}
	for (c = a->head; c; c = next) {
		next = c->next;
		free(c);
	}
	free(a);
}

void *fbc_arena_alloc(fbc_arena *a, size_t n)
{
	struct chunk *c = a->head;
	size_t need = (n + ALIGN - 1) & ~(size_t)(ALIGN - 1);
	void *p;

	if (n > SIZE_MAX / 2)
		return NULL;
	if (need == 0)
		need = ALIGN;
	if (!c || c->size - c->used < need) {
		size_t size = need > a->chunk_size / 4 ? need : a->chunk_size;

		c = malloc(sizeof(*c) + size);
		if (!c)
			return NULL;
		c->size = size;
		c->used = 0;
		if (size == need && a->head) {
			/* Big allocation: keep filling the current chunk afterwards. */
			c->next = a->head->next;
			a->head->next = c;
		} else {
			c->next = a->head;
			a->head = c;
		}
	}
	p = c->data + c->used;
	c->used += need;
	a->used += need;
	return p;
}

void *fbc_arena_calloc(fbc_arena *a, size_t count, size_t size)
{
	void *p;

	if (size && count > SIZE_MAX / size)
		return NULL;
	p = fbc_arena_alloc(a, count * size);
	if (p)
		memset(p, 0, count * size);
	return p;
}

char *fbc_arena_strndup(fbc_arena *a, const char *s, size_t n)
{
	char *p = fbc_arena_alloc(a, n + 1);

	if (!p)
		return NULL;
	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

char *fbc_arena_strdup(fbc_arena *a, const char *s)
{
	return fbc_arena_strndup(a, s, strlen(s));
}

char *fbc_arena_printf(fbc_arena *a, const char *fmt, ...)
{
	va_list ap;
	int n;
	char *p;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		return NULL;
	p = fbc_arena_alloc(a, (size_t)n + 1);
	if (!p)
		return NULL;
	va_start(ap, fmt);
	vsnprintf(p, (size_t)n + 1, fmt, ap);
	va_end(ap);
	return p;
}

int fbc_arena_defer(fbc_arena *a, void (*fn)(void *), void *p)
{
	struct deferred *d = fbc_arena_alloc(a, sizeof(*d));

	if (!d) {
		fn(p);
		return FBC_ENOMEM;
	}
	d->fn = fn;
	d->p = p;
	d->next = a->deferred;
	a->deferred = d;
	return 0;
}

size_t fbc_arena_used(const fbc_arena *a)
{
	return a->used;
}
