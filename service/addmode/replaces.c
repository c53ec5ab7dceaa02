/*
 * Replaces mode (index-add.md §4): every channel of the package is
 * recomputed from the candidates on each add.
 */
#include "service/addmode/internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct cand {
	am_rec *rec;
	const char **channels;
	size_t n_channels;
	const char *dflt;
} cand;

typedef struct chname {
	const char *name;
	am_rec *head;
	size_t n_top; /* candidates tied at the top */
} chname;

static int oom(fbc_error *err)
{
	return fbc_error_set(err, FBC_ENOMEM, NULL, "out of memory");
}

/* Channels (current membership) of a stored name, into an arena list. */
static int member_channels(const am_pkg *p, fbc_arena *a, const char *name, const char ***out,
			   size_t *n)
{
	size_t i, k = 0;
	const char **v = fbc_arena_calloc(a, p->channels.len + 1, sizeof(char *));

	if (!v)
		return FBC_ENOMEM;
	for (i = 0; i < p->channels.len; i++) {
		am_channel *c = *FBC_VEC_AT(&p->channels, am_channel *, i);

		if (am_channel_member(c, name))
			v[k++] = c->name;
	}
	*out = v;
	*n = k;
	return 0;
}

static chname *find_ch(fbc_vec *chs, const char *name)
{
	size_t i;

	for (i = 0; i < chs->len; i++) {
		chname *c = FBC_VEC_AT(chs, chname, i);

		if (strcmp(c->name, name) == 0)
			return c;
	}
	return NULL;
}

/* RM-8: the chain walk of one channel from its head. */
static int walk(const am_pkg *p, am_channel *c, const char *pkg, fbc_error *err)
{
	fbc_strmap seen;
	const char *x = c->head;
	int rc = 0;

	fbc_strmap_init(&seen);
	if (!am_channel_ensure(c, x) || fbc_strmap_put(&seen, x, (void *)1, NULL) != 0) {
		rc = oom(err);
		goto done;
	}
	for (;;) {
		am_rec *r = am_pkg_rec(p, x);
		am_member *m = am_channel_member(c, x);
		size_t i;

		if (!r || r->deprecated)
			break;
		for (i = 0; i < r->skips.n; i++) {
			/* skip rows may name anything, stored or not */
			if (!am_channel_ensure(c, r->skips.v[i])) {
				rc = oom(err);
				goto done;
			}
			m = am_channel_member(c, x);
			if (am_member_add_skip(m, r->skips.v[i]) != 0) {
				rc = oom(err);
				goto done;
			}
		}
		if (!r->replaces[0])
			break;
		if (fbc_strmap_has(&seen, r->replaces)) {
			rc = am_fail(err, FBC_EINVAL, "A19", pkg, r->name,
				     "Cycle detected, %s replaces %s", r->name, r->replaces);
			goto done;
		}
		if (!am_channel_ensure(c, r->replaces)) {
			rc = oom(err);
			goto done;
		}
		am_channel_member(c, x)->next = r->replaces;
		if (!am_pkg_rec(p, r->replaces)) {
			rc = am_fail(err, FBC_EINVAL, "A20", pkg, r->name,
				     "Invalid bundle %s, replaces nonexistent bundle %s", c->head,
				     r->replaces);
			goto done;
		}
		if (fbc_strmap_put(&seen, r->replaces, (void *)1, NULL) != 0) {
			rc = oom(err);
			goto done;
		}
		x = r->replaces;
	}
done:
	fbc_strmap_dispose(&seen);
	return rc;
}

int am_add_replaces(fbc_addmode_index *ix, am_pkg *p, am_rec **news, size_t n,
		    const fbc_addmode_opts *opts, fbc_error *err)
{
	fbc_vec cands, chs, built;
	am_rec *max = NULL;
	const char *dflt = p->default_channel ? p->default_channel : "";
	size_t i, j, n_max = 0;
	int rc = 0;

	(void)opts;
	fbc_vec_init(&cands, sizeof(cand));
	fbc_vec_init(&chs, sizeof(chname));
	fbc_vec_init(&built, sizeof(am_channel *));
	/* step 1: insert into the store (A5 on a name clash, PC-3) */
	for (i = 0; i < n; i++) {
		if (am_pkg_rec(p, news[i]->name)) {
			rc = am_fail(err, FBC_ECONFLICT, "A5", p->name, news[i]->name,
				     "failed to add bundle \"%s\": UNIQUE constraint failed: "
				     "operatorbundle.name",
				     news[i]->name);
			goto done;
		}
		if (am_pkg_put_rec(p, news[i]) != 0) {
			rc = oom(err);
			goto done;
		}
	}
	/* step 2: candidates: stored members with their current channels, then the new ones */
	for (i = 0; i < p->recs.len; i++) {
		am_rec *r = *FBC_VEC_AT(&p->recs, am_rec *, i);
		cand *cd;
		const char **v;
		size_t k;

		if (member_channels(p, ix->arena, r->name, &v, &k) != 0) {
			rc = oom(err);
			goto done;
		}
		if (k == 0)
			continue;
		if (!(cd = fbc_vec_push(&cands))) {
			rc = oom(err);
			goto done;
		}
		cd->rec = r;
		cd->channels = v;
		cd->n_channels = k;
		cd->dflt = dflt;
	}
	for (i = 0; i < n; i++) {
		cand *cd = fbc_vec_push(&cands);

		if (!cd) {
			rc = oom(err);
			goto done;
		}
		cd->rec = news[i];
		cd->channels = news[i]->channels.v;
		cd->n_channels = news[i]->channels.n;
		cd->dflt = news[i]->default_channel;
	}
	/* RM-1, RM-3, RM-5 */
	for (i = 0; i < cands.len; i++) {
		cand *cd = FBC_VEC_AT(&cands, cand, i);
		am_rec *r = cd->rec;
		int c;

		if (r->version[0] && !r->has_sv) {
			fbc_semver tmp;
			fbc_error perr;

			fbc_semver_parse(&tmp, r->version, strlen(r->version), &perr);
			rc = am_fail(err, FBC_EINVAL, "A13", p->name, r->name,
				     "error parsing bundle %s version %s: %s", r->name, r->version,
				     perr.message);
			goto done;
		}
		for (j = 0; j < cd->n_channels; j++) {
			chname *ch = find_ch(&chs, cd->channels[j]);

			if (!ch) {
				if (!(ch = fbc_vec_push(&chs))) {
					rc = oom(err);
					goto done;
				}
				ch->name = cd->channels[j];
			}
			c = ch->head ? am_version_order(r, ch->head) : 1;
			if (c > 0) {
				ch->head = r;
				ch->n_top = 1;
			} else if (c == 0) {
				ch->n_top++;
			}
		}
		c = max ? am_version_order(r, max) : 1;
		if (c >= 0) {
			n_max = c > 0 ? 1 : n_max + 1;
			max = r;
			if (cd->dflt && cd->dflt[0])
				dflt = cd->dflt;
		}
	}
	for (i = 0; i < chs.len; i++) {
		chname *ch = FBC_VEC_AT(&chs, chname, i);

		if (ch->n_top > 1) {
			rc = am_fail(err, FBC_EINVAL, "A16", p->name, ch->head->name,
				     "more than one potential channel head for %s", ch->name);
			goto done;
		}
	}
	if (n_max > 1) {
		rc = am_fail(err, FBC_EINVAL, "A15", p->name, max->name,
			     "more than one bundle with maximum version %s", max->version);
		goto done;
	}
	/* RM-6 */
	if (chs.len == 1) {
		chname *only = FBC_VEC_AT(&chs, chname, 0);

		if (dflt[0] && strcmp(dflt, only->name) != 0) {
			rc = am_fail(err, FBC_EINVAL, "A17", p->name, max ? max->name : "",
				     "unable to determine default channel among channel heads: "
				     "[%s]",
				     only->head->name);
			goto done;
		}
		dflt = only->name;
	} else if (!find_ch(&chs, dflt)) {
		char heads[FBC_ERROR_MESSAGE_MAX / 2];
		size_t len = 0;

		heads[0] = '\0';
		for (i = 0; i < chs.len && len < sizeof(heads); i++)
			len += (size_t)snprintf(heads + len, sizeof(heads) - len, "%s%s",
						i ? " " : "",
						FBC_VEC_AT(&chs, chname, i)->head->name);
		rc = am_fail(err, FBC_EINVAL, "A17", p->name, max ? max->name : "",
			     "unable to determine default channel among channel heads: [%s]",
			     heads);
		goto done;
	}
	/* RM-7 and RM-8 */
	for (i = 0; i < chs.len; i++) {
		chname *ch = FBC_VEC_AT(&chs, chname, i);
		am_channel *c, **slot;

		if (ch->head->deprecated) {
			if (strcmp(ch->name, dflt) == 0) {
				rc = am_fail(err, FBC_EINVAL, "A18", p->name, ch->head->name,
					     "no default channel specified for %s", p->name);
				goto done;
			}
			continue;
		}
		c = am_channel_new(ch->name);
		if (!c || !(slot = fbc_vec_push(&built))) {
			am_channel_free(c);
			rc = oom(err);
			goto done;
		}
		*slot = c;
		c->head = ch->head->name;
		rc = walk(p, c, p->name, err);
		if (rc != 0)
			goto done;
	}
	/* replace the rows of every channel */
	while (p->channels.len)
		am_pkg_drop_channel(p, (*FBC_VEC_AT(&p->channels, am_channel *, 0))->name);
	for (i = 0; i < built.len; i++) {
		if (am_pkg_put_channel(p, *FBC_VEC_AT(&built, am_channel *, i)) != 0) {
			for (j = i; j < built.len; j++)
				am_channel_free(*FBC_VEC_AT(&built, am_channel *, j));
			built.len = 0;
			rc = oom(err);
			goto done;
		}
	}
	built.len = 0;
	p->default_channel = dflt;
	rc = am_check_reachable(p, news, n, err);
done:
	for (i = 0; i < built.len; i++)
		am_channel_free(*FBC_VEC_AT(&built, am_channel *, i));
	fbc_vec_dispose(&built);
	fbc_vec_dispose(&cands);
	fbc_vec_dispose(&chs);
	return rc;
}

int am_check_reachable(const am_pkg *p, am_rec **news, size_t n, fbc_error *err)
{
	size_t i, j;

	for (i = 0; i < n; i++) {
		for (j = 0; j < news[i]->channels.n; j++) {
			const char *cn = news[i]->channels.v[j];
			am_channel *c = am_pkg_channel(p, cn);
			char edges[FBC_ERROR_MESSAGE_MAX / 2];
			const char *hv = "";
			const char *list[FBC_ADDMODE_LIST_MAX + 1];
			size_t k = 0, s;

			if (c && am_channel_member(c, news[i]->name))
				continue;
			edges[0] = '\0';
			if (c) {
				am_rec *h = am_pkg_rec(p, c->head);
				am_member *hm = am_channel_member(c, c->head);

				hv = h ? h->version : "";
				if (hm && hm->next)
					list[k++] = hm->next;
				for (s = 0; hm && s < hm->skips.len && k < FBC_ADDMODE_LIST_MAX;
				     s++)
					list[k++] = *FBC_VEC_AT(&hm->skips, const char *, s);
				am_format_list(edges, sizeof(edges), list, k);
			}
			return am_fail(
				err, FBC_EINVAL, "A21", p->name, news[i]->name,
				"add prunes bundle %s (%s) from package %s, channel %s: this "
				"may be due to incorrect channel head (%s, skips/replaces %s)",
				news[i]->name, news[i]->version, p->name, cn, c ? c->head : "none",
				c ? edges : "[]");
			(void)hv;
		}
	}
	return 0;
}
