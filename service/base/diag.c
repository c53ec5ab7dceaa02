#include "service/base/diag.h"

#include "service/base/error.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int fbc_diags_init(fbc_diags *d, size_t max)
{
	fbc_vec_init(&d->items, sizeof(fbc_diag));
	d->max = max ? max : 10000;
	d->dropped = 0;
	d->arena = NULL; /* so that dispose is safe even when creation fails */
	return fbc_arena_create(&d->arena, 0);
}

void fbc_diags_dispose(fbc_diags *d)
{
	if (!d)
		return;
	fbc_vec_dispose(&d->items);
	fbc_arena_free(d->arena);
	d->arena = NULL;
}

static const char *dup_or_null(fbc_arena *a, const char *s)
{
	return s ? fbc_arena_strdup(a, s) : NULL;
}

int fbc_diags_vadd(fbc_diags *d, const char *code, const fbc_loc *loc, const char *pkg,
		   const char *channel, const char *bundle, const char *fmt, va_list ap)
{
	char msg[2048];
	fbc_diag *x;

	if (d->items.len >= d->max) {
		d->dropped++;
		return 0;
	}
	vsnprintf(msg, sizeof(msg), fmt, ap);
	/* Findings are one line each: fold any newline the source text carried. */
	for (char *p = msg; *p; p++) {
		if (*p == '\n' || *p == '\r')
			*p = ' ';
	}
	x = fbc_vec_push(&d->items);
	if (!x)
		return FBC_ENOMEM;
	x->code = fbc_arena_strdup(d->arena, code);
	x->message = fbc_arena_strdup(d->arena, msg);
	x->file = loc ? dup_or_null(d->arena, loc->file) : NULL;
	x->line = loc ? loc->line : 0;
	x->package = dup_or_null(d->arena, pkg);
	x->channel = dup_or_null(d->arena, channel);
	x->bundle = dup_or_null(d->arena, bundle);
	if (!x->code || !x->message || (loc && loc->file && !x->file) || (pkg && !x->package) ||
	    (channel && !x->channel) || (bundle && !x->bundle)) {
		d->items.len--;
		return FBC_ENOMEM;
	}
	return 0;
}

int fbc_diags_add(fbc_diags *d, const char *code, const fbc_loc *loc, const char *pkg,
		  const char *channel, const char *bundle, const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = fbc_diags_vadd(d, code, loc, pkg, channel, bundle, fmt, ap);
	va_end(ap);
	return rc;
}

int fbc_diags_append(fbc_diags *d, const fbc_diags *from)
{
	for (size_t i = 0; i < fbc_diags_count(from); i++) {
		const fbc_diag *x = fbc_diags_at(from, i);
		fbc_loc loc = {x->file, x->line};
		int rc = fbc_diags_add(d, x->code, &loc, x->package, x->channel, x->bundle, "%s",
				       x->message);

		if (rc)
			return rc;
	}
	d->dropped += from->dropped;
	return 0;
}

static int cmp_str(const char *a, const char *b)
{
	if (a == b)
		return 0;
	if (!a)
		return -1;
	if (!b)
		return 1;
	return strcmp(a, b);
}

/* Rule codes sort by letter then number, so V2 comes before V10. */
static int cmp_code(const char *a, const char *b)
{
	if (a[0] != b[0])
		return (unsigned char)a[0] - (unsigned char)b[0];
	size_t la = strlen(a), lb = strlen(b);
	if (la != lb)
		return la < lb ? -1 : 1;
	return strcmp(a, b);
}

static int cmp_diag(const void *pa, const void *pb)
{
	const fbc_diag *a = pa, *b = pb;
	int c;

	if ((c = cmp_str(a->file, b->file)))
		return c;
	if (a->line != b->line)
		return a->line < b->line ? -1 : 1;
	if ((c = cmp_str(a->package, b->package)))
		return c;
	if ((c = cmp_str(a->channel, b->channel)))
		return c;
	if ((c = cmp_str(a->bundle, b->bundle)))
		return c;
	if ((c = cmp_code(a->code, b->code)))
		return c;
	return strcmp(a->message, b->message);
}

/* Equal apart from the channel: the same bundle finding seen through two channels. */
static int same_bundle_finding(const fbc_diag *a, const fbc_diag *b)
{
	return a->bundle && b->bundle && cmp_str(a->file, b->file) == 0 && a->line == b->line &&
	       cmp_str(a->package, b->package) == 0 && strcmp(a->bundle, b->bundle) == 0 &&
	       strcmp(a->code, b->code) == 0 && strcmp(a->message, b->message) == 0;
}

void fbc_diags_sort(fbc_diags *d)
{
	fbc_diag *v = d->items.items;
	size_t i, o = 0;

	if (d->items.len < 2)
		return;
	qsort(v, d->items.len, sizeof(*v), cmp_diag);
	for (i = 0; i < d->items.len; i++) {
		if (o > 0 && (cmp_diag(&v[o - 1], &v[i]) == 0))
			continue;
		v[o++] = v[i];
	}
	d->items.len = o;
	/* Bundle findings repeated per channel: keep the first channel's (sorted by name). */
	o = 0;
	for (i = 0; i < d->items.len; i++) {
		size_t j;
		int dup = 0;

		for (j = o; j-- > 0;) {
			if (cmp_str(v[j].file, v[i].file) || v[j].line != v[i].line)
				break;
			if (same_bundle_finding(&v[j], &v[i])) {
				dup = 1;
				break;
			}
		}
		if (!dup)
			v[o++] = v[i];
	}
	d->items.len = o;
}
