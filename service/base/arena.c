#include "service/base/arena.h"

#include "service/base/error.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define ALIGN	      16
#define DEFAULT_CHUNK (64 * 1024)

/* Aligned allocations grow up from data; strings (no alignment) grow down
 * from data + size, so that they pack without padding. */
struct chunk {
	struct chunk *next;
	size_t size;
	size_t used;   /* data[0, used): aligned allocations */
	size_t top;    /* data[top, size): strings */
	size_t mapped; /* the mapping's length (huge-page chunk), 0: malloc'd; a
			* mapped chunk's free room is zero (the arena never
			* reuses memory), so calloc need not clear it */
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
	size_t chunk_size; /* the next regular chunk's */
	size_t max_chunk;  /* chunk_size doubles up to it (growing arenas) */
	size_t used;
	size_t reserved; /* bytes of the chunks */
};

int fbc_arena_create(fbc_arena **out, size_t chunk_size)
{
	fbc_arena *a = calloc(1, sizeof(*a));

	if (!a)
		return FBC_ENOMEM;
	a->chunk_size = chunk_size ? chunk_size : DEFAULT_CHUNK;
	a->max_chunk = a->chunk_size;
	*out = a;
	return 0;
}

int fbc_arena_create_growing(fbc_arena **out, size_t first_chunk, size_t max_chunk)
{
	int rc = fbc_arena_create(out, first_chunk);

	if (rc == 0 && max_chunk > (*out)->chunk_size)
		(*out)->max_chunk = max_chunk;
	return rc;
}

/* A chunk of about size bytes with room for need (<= size) at least:
 * malloc'd, or mapped on a huge-page boundary when size is that large (its
 * room then the mapping's, whole huge pages, less the header). */
static struct chunk *chunk_new(size_t size, size_t need)
{
	const size_t huge = FBC_ARENA_HUGE;
	struct chunk *c;
	size_t len, over;
	char *m, *al;

	if (size < huge || size > SIZE_MAX / 2) {
		c = malloc(sizeof(*c) + size);
		if (c) {
			c->size = size;
			c->mapped = 0;
		}
		return c;
	}
	len = (size + huge - 1) & ~(huge - 1);
	if (len - sizeof(*c) < need)
		len = (sizeof(*c) + need + huge - 1) & ~(huge - 1);
	over = len + huge; /* room to align */
	m = mmap(NULL, over, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return NULL;
	al = (char *)(((uintptr_t)m + huge - 1) & ~(uintptr_t)(huge - 1));
	if (al > m)
		munmap(m, (size_t)(al - m));
	if (m + over > al + len)
		munmap(al + len, (size_t)(m + over - (al + len)));
	(void)madvise(al, len, MADV_HUGEPAGE); /* advice: without it, small pages */
	c = (struct chunk *)al;
	c->size = len - sizeof(*c);
	c->mapped = len;
	return c;
}

static void chunk_free(struct chunk *c)
{
	if (c->mapped)
		munmap(c, c->mapped);
	else
		free(c);
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
		chunk_free(c);
	}
	free(a);
}

/* A chunk with room for need bytes: the head, or a new one. A big request
 * gets a chunk of its own, linked behind the head so that the head keeps
 * filling up. */
static struct chunk *room(fbc_arena *a, size_t need)
{
	struct chunk *c = a->head;
	bool big;

	if (c && c->top - c->used >= need)
		return c;
	big = need > a->chunk_size / 4;
	c = chunk_new(big ? need : a->chunk_size, need);
	if (!c)
		return NULL;
	c->used = 0;
	c->top = c->size;
	a->reserved += c->size;
	if (!big && a->chunk_size < a->max_chunk)
		a->chunk_size = a->chunk_size > a->max_chunk / 2 ? a->max_chunk : a->chunk_size * 2;
	if (big && a->head) {
		c->next = a->head->next;
		a->head->next = c;
	} else {
		c->next = a->head;
		a->head = c;
	}
	return c;
}

/* n bytes, 16-byte aligned; *zero: known to be all zero bytes. */
static void *alloc_aligned(fbc_arena *a, size_t n, bool *zero)
{
	size_t need = (n + ALIGN - 1) & ~(size_t)(ALIGN - 1);
	struct chunk *c;
	void *p;

	if (n > SIZE_MAX / 2)
		return NULL;
	if (need == 0)
		need = ALIGN;
	if (!(c = room(a, need)))
		return NULL;
	p = c->data + c->used;
	c->used += need;
	a->used += need;
	*zero = c->mapped != 0;
	return p;
}

void *fbc_arena_alloc(fbc_arena *a, size_t n)
{
	bool zero;

	return alloc_aligned(a, n, &zero);
}

void *fbc_arena_calloc(fbc_arena *a, size_t count, size_t size)
{
	void *p;
	bool zero;

	if (size && count > SIZE_MAX / size)
		return NULL;
	p = alloc_aligned(a, count * size, &zero);
	if (p && !zero)
		memset(p, 0, count * size);
	return p;
}

char *fbc_arena_strndup(fbc_arena *a, const char *s, size_t n)
{
	struct chunk *c;
	char *p;

	if (n > SIZE_MAX / 2 || !(c = room(a, n + 1)))
		return NULL;
	c->top -= n + 1;
	p = (char *)c->data + c->top;
	a->used += n + 1;
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

size_t fbc_arena_reserved(const fbc_arena *a)
{
	return a->reserved;
}

size_t fbc_arena_used(const fbc_arena *a)
{
	return a->used;
}
