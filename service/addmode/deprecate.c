/*
 * `opm registry deprecatetruncate` (index-add.md §6.2, DP-1..DP-5): it is
 * not part of add, but it makes the tombstones add must respect, and the
 * community pipeline uses it when a new OCP index is made (P-8).
 */
#include "service/addmode/internal.h"

#include <stdlib.h>
#include <string.h>

static int oom(fbc_error *err)
{
	return fbc_error_set(err, FBC_ENOMEM, NULL, "out of memory");
}

/* DP-1: every name reachable from d over row pointers, in any channel. */
static int tail_of(const am_pkg *p, const char *d, fbc_strmap *tail)
{
	fbc_vec todo;
	int rc = 0;

	fbc_vec_init(&todo, sizeof(const char *));
	if (!fbc_vec_push(&todo))
		return FBC_ENOMEM;
	*FBC_VEC_AT(&todo, const char *, 0) = d;
	while (todo.len) {
		const char *x = *FBC_VEC_AT(&todo, const char *, todo.len - 1);
		size_t i, s;

		todo.len--;
		for (i = 0; i < p->channels.len; i++) {
			am_member *m =
				am_channel_member(*FBC_VEC_AT(&p->channels, am_channel *, i), x);
			const char *targets[1 + FBC_ADDMODE_LIST_MAX];
			size_t nt = 0;

			if (!m)
				continue;
			if (m->next)
				targets[nt++] = m->next;
			for (s = 0; s < m->skips.len && nt < FBC_ADDMODE_LIST_MAX; s++)
				targets[nt++] = *FBC_VEC_AT(&m->skips, const char *, s);
			for (s = 0; s < nt; s++) {
				const char **slot;

				if (strcmp(targets[s], d) == 0 || fbc_strmap_has(tail, targets[s]))
					continue;
				if (fbc_strmap_put(tail, targets[s], (void *)1, NULL) != 0 ||
				    !(slot = fbc_vec_push(&todo))) {
					rc = FBC_ENOMEM;
					goto done;
				}
				*slot = targets[s];
			}
		}
	}
done:
	fbc_vec_dispose(&todo);
	return rc;
}

/* A copy of channel c without the members in drop; pointers to them cleared.
 * clear_self: the name whose own pointers are cleared (DP-3), or NULL. */
static am_channel *rebuild(const am_channel *c, const fbc_strmap *drop, const char *clear_self)
{
	am_channel *nc = am_channel_new(c->name);
	size_t i, s;

	if (!nc)
		return NULL;
	nc->head = c->head;
	for (i = 0; i < c->members.len; i++) {
		am_member *m = *FBC_VEC_AT(&c->members, am_member *, i), *cp;

		if (fbc_strmap_has(drop, m->name))
			continue;
		if (!(cp = am_channel_ensure(nc, m->name)))
			goto fail;
		if (clear_self && strcmp(m->name, clear_self) == 0)
			continue;
		cp->next = m->next && !fbc_strmap_has(drop, m->next) ? m->next : NULL;
		for (s = 0; s < m->skips.len; s++) {
			const char *t = *FBC_VEC_AT(&m->skips, const char *, s);

			if (!fbc_strmap_has(drop, t) && am_member_add_skip(cp, t) != 0)
				goto fail;
		}
	}
	return nc;
fail:
	am_channel_free(nc);
	return NULL;
}

static int deprecate_one(fbc_addmode_index *ix, am_pkg *p, const char *d, fbc_error *err)
{
	fbc_strmap tail, none;
	const char *k;
	void *v;
	size_t i, it, j;
	am_rec *r = am_pkg_rec(p, d), *cp;
	int rc = 0;

	fbc_strmap_init(&tail);
	fbc_strmap_init(&none);
	if (!r)
		return 0; /* DP-4: no longer in the store */
	if (tail_of(p, d, &tail) != 0) {
		rc = oom(err);
		goto done;
	}
	/* DP-2: the tail leaves the channels d is a member of */
	for (i = 0; i < p->channels.len; i++) {
		am_channel **slot = FBC_VEC_AT(&p->channels, am_channel *, i), *nc;

		if (!am_channel_member(*slot, d))
			continue;
		nc = rebuild(*slot, &tail, d); /* DP-3: d's own pointers are cleared too */
		if (!nc) {
			rc = oom(err);
			goto done;
		}
		am_channel_free(*slot);
		*slot = nc;
	}
	for (it = 0; fbc_strmap_next(&tail, &it, &k, &v);) {
		bool replaced = false;

		if (!am_pkg_rec(p, k) || am_pkg_is_member(p, k))
			continue;
		for (j = 0; j < p->recs.len && !replaced; j++) {
			am_rec *o = *FBC_VEC_AT(&p->recs, am_rec *, j);

			replaced = strcmp(o->replaces, k) == 0 && !fbc_strmap_has(&tail, o->name) &&
				   strcmp(o->name, d) != 0;
		}
		if (!replaced)
			am_pkg_remove_rec(p, k);
	}
	/* DP-3: a channel whose head is d goes; d becomes a tombstone */
	for (i = 0; i < p->channels.len;) {
		am_channel *c = *FBC_VEC_AT(&p->channels, am_channel *, i);

		if (c->head && strcmp(c->head, d) == 0)
			am_pkg_drop_channel(p, c->name);
		else
			i++;
	}
	cp = fbc_arena_alloc(ix->arena, sizeof(*cp));
	if (!cp) {
		rc = oom(err);
		goto done;
	}
	*cp = *r;
	cp->deprecated = true;
	for (j = 0; j < p->recs.len; j++) {
		if (*FBC_VEC_AT(&p->recs, am_rec *, j) == r)
			*FBC_VEC_AT(&p->recs, am_rec *, j) = cp;
	}
	if (fbc_strmap_put(&p->rec_index, cp->name, cp, NULL) != 0)
		rc = oom(err);
done:
	fbc_strmap_dispose(&tail);
	fbc_strmap_dispose(&none);
	return rc;
}

/* DP-5: the names stay recorded as deprecated, even past package removal. */
static int remember(fbc_addmode_index *ix, const am_pkg *p, const char *const *names, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		const char *k;

		if (!am_pkg_rec(p, names[i]))
			continue;
		k = fbc_arena_strdup(ix->arena, names[i]);
		if (!k || fbc_strmap_put(&ix->deprecated_names, k, (void *)1, NULL) != 0)
			return FBC_ENOMEM;
	}
	return 0;
}

int fbc_addmode_deprecate(fbc_addmode_index *ix, const char *package, const char *const *names,
			  size_t n, bool allow_package_removal, fbc_error *err)
{
	am_pkg *orig = am_index_pkg(ix, package), *p = NULL;
	am_channel *dc;
	size_t i, j;
	int rc = 0;

	if (!orig)
		return 0;
	/* DP-4: the default channel's head */
	dc = orig->default_channel ? am_pkg_channel(orig, orig->default_channel) : NULL;
	for (i = 0; dc && i < n; i++) {
		bool all_heads = true;

		if (strcmp(names[i], dc->head) != 0)
			continue;
		for (j = 0; j < orig->channels.len && all_heads; j++) {
			am_channel *c = *FBC_VEC_AT(&orig->channels, am_channel *, j);
			size_t k;
			bool listed = false;

			for (k = 0; k < n && !listed; k++)
				listed = strcmp(names[k], c->head) == 0;
			all_heads = listed;
		}
		if (!allow_package_removal || !all_heads)
			return am_fail(err, FBC_EINVAL, "DP-4", package, names[i],
				       "cannot deprecate default channel head from package without "
				       "removing all other channel heads");
		rc = remember(ix, orig, names, n);
		if (rc != 0)
			return oom(err);
		am_index_remove_pkg(ix, package);
		return 0;
	}
	p = am_pkg_clone(orig);
	if (!p)
		return oom(err);
	for (i = 0; i < n && rc == 0; i++)
		rc = deprecate_one(ix, p, names[i], err);
	if (rc == 0 && remember(ix, orig, names, n) != 0)
		rc = oom(err);
	if (rc == 0)
		rc = am_index_put_pkg(ix, p) == 0 ? 0 : oom(err);
	if (rc != 0)
		am_pkg_free(p);
	return rc;
}
