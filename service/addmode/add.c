/*
 * fbc_addmode_add: the request (index-add.md §3 pre-checks, §6.1
 * overwrite, §6.4 substitutes), the mode, then the §7.2 validation; all on
 * a copy of the package that replaces the original only on success.
 */
#include "service/addmode/internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int oom(fbc_error *err)
{
	return fbc_error_set(err, FBC_ENOMEM, NULL, "out of memory");
}

/* PC-4 against the index: the package a name belongs to elsewhere. */
static const char *other_owner(const fbc_addmode_index *ix, const char *pkg, const char *name)
{
	size_t i;

	for (i = 0; i < ix->pkgs.len; i++) {
		am_pkg *o = *FBC_VEC_AT(&ix->pkgs, am_pkg *, i);

		if (strcmp(o->name, pkg) == 0)
			continue;
		if (am_pkg_rec(o, name) || am_pkg_is_member(o, name))
			return o->name;
	}
	return NULL;
}

static int precheck_edges(const fbc_addmode_index *ix, const fbc_addmode_bundle *const *bs,
			  size_t n, fbc_error *err)
{
	size_t i, j, k, l;

	for (i = 0; i < n; i++) {
		const fbc_addmode_bundle *b = bs[i];
		const char *names[2 + FBC_ADDMODE_LIST_MAX];
		size_t nn = 0;

		names[nn++] = b->name;
		if (b->replaces && b->replaces[0])
			names[nn++] = b->replaces;
		for (j = 0; j < b->n_skips && nn < sizeof(names) / sizeof(names[0]); j++)
			names[nn++] = b->skips[j] ? b->skips[j] : "";
		for (k = 0; k < nn; k++) {
			const char *owner;

			/* A6: within the request */
			for (l = 0; l < n; l++) {
				const fbc_addmode_bundle *o = bs[l];
				bool mentions = false;
				size_t s;

				if (strcmp(o->package, b->package) == 0)
					continue;
				mentions = strcmp(o->name, names[k]) == 0 ||
					   (o->replaces && strcmp(o->replaces, names[k]) == 0);
				for (s = 0; s < o->n_skips && !mentions; s++)
					mentions =
						o->skips[s] && strcmp(o->skips[s], names[k]) == 0;
				if (mentions)
					return am_fail(
						err, FBC_EINVAL, "A6", b->package, b->name,
						"bundle %s must belong to exactly one package, "
						"found on: [%s %s]",
						names[k], b->package, o->package);
			}
			owner = other_owner(ix, b->package, names[k]);
			if (owner)
				return am_fail(
					err, FBC_EINVAL, "A7", b->package, b->name,
					"bundle %s belongs to package %s on index, cannot be "
					"added as an edge for package %s",
					names[k], owner, b->package);
		}
	}
	return 0;
}

/* PC-1, PC-2, PC-5 and OW-3 for one package's request. */
static int precheck_pkg(const am_pkg *p, am_rec **news, size_t n, const fbc_addmode_opts *opts,
			fbc_error *err)
{
	size_t i, j, n_over = 0;

	if (!p)
		return 0;
	/* OW-3, checked by `registry add` itself, before and apart from PC-5 */
	for (i = 0; i < n && opts->overwrite_latest; i++) {
		am_rec *old = am_pkg_rec(p, news[i]->name);

		if (old && am_pkg_is_member(p, old->name) && !old->image[0])
			return am_fail(err, FBC_EINVAL, "A9", p->name, news[i]->name,
				       "index add --overwrite-latest is only supported when using "
				       "bundle images");
	}
	for (i = 0; i < p->recs.len; i++) {
		am_rec *r = *FBC_VEC_AT(&p->recs, am_rec *, i);

		if (!r->image[0] && am_pkg_is_member(p, r->name))
			return 0; /* PC-5: listing bundle paths fails, checks skipped */
	}
	for (i = 0; i < n; i++) {
		am_rec *old = am_pkg_rec(p, news[i]->name);

		for (j = 0; j < p->recs.len && news[i]->image[0]; j++) {
			am_rec *r = *FBC_VEC_AT(&p->recs, am_rec *, j);

			if (am_pkg_is_member(p, r->name) && strcmp(r->image, news[i]->image) == 0)
				return am_fail(err, FBC_ECONFLICT, "A3", p->name, news[i]->name,
					       "Bundle %s already exists", news[i]->image);
		}
		if (!old || !am_pkg_is_member(p, old->name))
			continue; /* a stranded name fails on insert (PC-3, A5) */
		if (!opts->overwrite_latest)
			return am_fail(err, FBC_ECONFLICT, "A4", p->name, news[i]->name,
				       "Bundle already added that provides package and csv");
		for (j = 0; j < p->channels.len; j++) {
			am_channel *c = *FBC_VEC_AT(&p->channels, am_channel *, j);
			size_t k;

			if (!am_channel_member(c, old->name))
				continue;
			for (k = 0; k < c->members.len; k++) {
				am_member *m = *FBC_VEC_AT(&c->members, am_member *, k);

				if (m->next && strcmp(m->next, old->name) == 0)
					return am_fail(
						err, FBC_EINVAL, "A10", p->name, news[i]->name,
						"Cannot overwrite a bundle that is not at the "
						"head of a channel using --overwrite-latest");
			}
		}
		if (++n_over > 1)
			return am_fail(
				err, FBC_EINVAL, "A11", p->name, news[i]->name,
				"Cannot overwrite more than one bundle at a time for a given "
				"package using --overwrite-latest");
	}
	return 0;
}

/* OW-4: replaces mode removes the overwritten bundle first. */
static int remove_overwritten(am_pkg *p, const char *name, fbc_error *err)
{
	size_t i, k;

	for (i = 0; i < p->channels.len; i++) {
		am_channel *c = *FBC_VEC_AT(&p->channels, am_channel *, i), *nc;
		am_member *om = am_channel_member(c, name);

		if (!om)
			continue;
		for (k = 0; k < c->members.len; k++) {
			am_member *m = *FBC_VEC_AT(&c->members, am_member *, k);
			size_t s;

			for (s = 0; s < m->skips.len; s++) {
				if (strcmp(*FBC_VEC_AT(&m->skips, const char *, s), name) == 0)
					return am_fail(
						err, FBC_EINVAL, "A12", p->name, name,
						"cannot overwrite bundle %s from package %s: "
						"replaced by %s on channel %s",
						name, p->name, m->name, c->name);
			}
		}
		/* rebuild the channel without the bundle; the head moves down */
		nc = am_channel_new(c->name);
		if (!nc)
			return oom(err);
		nc->head = strcmp(c->head, name) == 0 ? om->next : c->head;
		for (k = 0; k < c->members.len; k++) {
			am_member *m = *FBC_VEC_AT(&c->members, am_member *, k), *cp;
			size_t s;

			if (strcmp(m->name, name) == 0)
				continue;
			if (!(cp = am_channel_ensure(nc, m->name))) {
				am_channel_free(nc);
				return oom(err);
			}
			cp->next = m->next;
			for (s = 0; s < m->skips.len; s++) {
				if (am_member_add_skip(cp,
						       *FBC_VEC_AT(&m->skips, const char *, s))) {
					am_channel_free(nc);
					return oom(err);
				}
			}
		}
		if (!nc->head || nc->members.len == 0) {
			am_channel_free(nc);
			am_pkg_drop_channel(p, c->name);
			i--;
			continue;
		}
		if (am_pkg_put_channel(p, nc) != 0) {
			am_channel_free(nc);
			return oom(err);
		}
	}
	am_pkg_remove_rec(p, name);
	return 0;
}

/* 6.4: olm.substitutesFor on insert. */
static int substitutes(fbc_addmode_index *ix, am_pkg *p, am_rec **news, size_t n, fbc_error *err)
{
	size_t i, j, hops;

	for (i = 0; i < n; i++) {
		am_rec *nb = news[i], *win = nb, *sub;
		const char *s = nb->substitutes_for;
		const char **sk;

		if (!s[0])
			continue;
		/* a cycle of substitutions */
		for (hops = 0, sub = am_pkg_rec(p, s); sub && hops <= p->recs.len + n; hops++) {
			if (strcmp(sub->name, nb->name) == 0 ||
			    strcmp(sub->substitutes_for, nb->name) == 0)
				return am_fail(
					err, FBC_EINVAL, "A8", p->name, nb->name,
					"cyclic substitutesFor chain detected involving \"%s\"",
					nb->name);
			sub = sub->substitutes_for[0] ? am_pkg_rec(p, sub->substitutes_for) : NULL;
		}
		if (strcmp(s, nb->name) == 0)
			return am_fail(err, FBC_EINVAL, "A8", p->name, nb->name,
				       "cyclic substitutesFor chain detected involving \"%s\"",
				       nb->name);
		/* several substitutes of one bundle: the higher version wins */
		for (j = 0; j < p->recs.len; j++) {
			am_rec *o = *FBC_VEC_AT(&p->recs, am_rec *, j);

			if (o == nb || strcmp(o->substitutes_for, s) != 0)
				continue;
			if (am_version_order(o, nb) == 0)
				return am_fail(err, FBC_EINVAL, "A8", p->name, nb->name,
					       "cannot determine latest substitution because of "
					       "duplicate versions");
			if (am_version_order(o, win) > 0)
				win = o;
		}
		/* the winner skips the substituted bundle and its skips */
		if (win == nb) {
			am_rec *target = am_pkg_rec(p, s);
			size_t extra = 1 + (target ? target->skips.n : 0), k = 0;

			sk = fbc_arena_calloc(ix->arena, nb->skips.n + extra + 1, sizeof(char *));
			if (!sk)
				return oom(err);
			for (j = 0; j < nb->skips.n; j++)
				sk[k++] = nb->skips.v[j];
			sk[k++] = s;
			for (j = 0; target && j < target->skips.n; j++)
				sk[k++] = target->skips.v[j];
			nb->skips.v = sk;
			nb->skips.n = k;
		}
		/* re-point bundles that replace the substituted one */
		for (j = 0; j < p->recs.len; j++) {
			am_rec **slot = FBC_VEC_AT(&p->recs, am_rec *, j), *cp;

			if (*slot == win || strcmp((*slot)->replaces, s) != 0)
				continue;
			cp = fbc_arena_alloc(ix->arena, sizeof(*cp));
			if (!cp)
				return oom(err);
			*cp = **slot;
			cp->replaces = win->name;
			*slot = cp;
			if (fbc_strmap_put(&p->rec_index, cp->name, cp, NULL) != 0)
				return oom(err);
		}
	}
	return 0;
}

static int add_package(fbc_addmode_index *ix, const fbc_addmode_bundle *const *bs, size_t n,
		       const fbc_addmode_opts *opts, fbc_error *err)
{
	const char *pkg = bs[0]->package;
	am_pkg *orig = am_index_pkg(ix, pkg), *p = NULL;
	am_rec **news = NULL;
	size_t i;
	int rc = 0;

	news = calloc(n, sizeof(*news));
	if (!news)
		return oom(err);
	for (i = 0; i < n; i++) {
		rc = am_rec_from_input(&news[i], ix->arena, bs[i], opts, err);
		if (rc != 0)
			goto done;
		/* DP-5: a name still recorded as deprecated comes back deprecated */
		if (fbc_strmap_has(&ix->deprecated_names, news[i]->name))
			news[i]->deprecated = true;
	}
	rc = precheck_pkg(orig, news, n, opts, err);
	if (rc != 0)
		goto done;
	p = orig ? am_pkg_clone(orig) : am_pkg_new(ix->arena, pkg);
	if (!p) {
		rc = oom(err);
		goto done;
	}
	if (opts->overwrite_latest) {
		for (i = 0; i < n; i++) {
			am_rec *old = am_pkg_rec(p, news[i]->name);

			if (!old || !am_pkg_is_member(p, old->name))
				continue;
			if (opts->mode == FBC_ADDMODE_REPLACES) {
				rc = remove_overwritten(p, old->name, err);
				if (rc != 0)
					goto done;
			} else if (am_version_precedence(old, news[i]) == 0) {
				/* OW-5 */
				rc = am_fail(err, FBC_ECONFLICT, "A26", pkg, news[i]->name,
					     "Bundle version %s already added to index",
					     news[i]->version);
				goto done;
			}
		}
	}
	rc = substitutes(ix, p, news, n, err);
	if (rc != 0)
		goto done;
	if (opts->mode == FBC_ADDMODE_REPLACES) {
		rc = am_add_replaces(ix, p, news, n, opts, err);
	} else {
		for (i = 0; i < n && rc == 0; i++)
			rc = am_add_semver(ix, p, news[i], opts, err);
	}
	if (rc != 0)
		goto done;
	/* SV-13 before the validation: IIB validates what opm migrate writes */
	if (opts->mode != FBC_ADDMODE_REPLACES && !opts->keep_bundle_objects &&
	    (rc = am_clear_non_heads(ix, p)) != 0) {
		rc = oom(err);
		goto done;
	}
	if (!opts->no_validate) {
		rc = am_validate_pkg(p, news, n, NULL, err);
		if (rc != 0) {
			if (bs[0]->name)
				snprintf(err->where, sizeof(err->where), "%s/%s", pkg,
					 bs[n - 1]->name);
			goto done;
		}
	}
	rc = am_index_put_pkg(ix, p);
	if (rc != 0) {
		rc = oom(err);
		goto done;
	}
	p = NULL;
done:
	if (p != orig)
		am_pkg_free(p);
	free(news);
	return rc;
}

static int note_heads(fbc_strmap *heads, const am_pkg *p)
{
	for (size_t i = 0; i < p->channels.len; i++) {
		const am_channel *c = *FBC_VEC_AT(&p->channels, am_channel *, i);

		if (c->head && fbc_strmap_put(heads, c->head, (void *)1, NULL) < 0)
			return FBC_ENOMEM;
	}
	return 0;
}

static int clear_pkg(fbc_addmode_index *ix, am_pkg *p, const fbc_strmap *heads)
{
	for (size_t j = 0; j < p->recs.len; j++) {
		am_rec **slot = FBC_VEC_AT(&p->recs, am_rec *, j), *cp;

		if ((*slot)->cleared || !(*slot)->image[0] || fbc_strmap_has(heads, (*slot)->name))
			continue;
		if (!(cp = fbc_arena_alloc(ix->arena, sizeof(*cp))))
			return FBC_ENOMEM;
		*cp = **slot;
		cp->cleared = true;
		*slot = cp;
		if (fbc_strmap_put(&p->rec_index, cp->name, cp, NULL) < 0)
			return FBC_ENOMEM;
	}
	return 0;
}

int am_clear_non_heads(fbc_addmode_index *ix, am_pkg *p)
{
	fbc_strmap heads;
	int rc = 0;

	fbc_strmap_init(&heads);
	for (size_t i = 0; rc == 0 && i < ix->pkgs.len; i++) {
		const am_pkg *q = *FBC_VEC_AT(&ix->pkgs, am_pkg *, i);

		if (!p || strcmp(q->name, p->name) != 0) /* p replaces its old copy */
			rc = note_heads(&heads, q);
	}
	if (rc == 0 && p && (rc = note_heads(&heads, p)) == 0)
		rc = clear_pkg(ix, p, &heads);
	for (size_t i = 0; rc == 0 && !p && i < ix->pkgs.len; i++)
		rc = clear_pkg(ix, *FBC_VEC_AT(&ix->pkgs, am_pkg *, i), &heads);
	fbc_strmap_dispose(&heads);
	return rc;
}

static int cmp_pkg(const void *a, const void *b)
{
	const fbc_addmode_bundle *x = *(const fbc_addmode_bundle *const *)a;
	const fbc_addmode_bundle *y = *(const fbc_addmode_bundle *const *)b;

	return strcmp(x->package, y->package);
}

int fbc_addmode_add(fbc_addmode_index *ix, const fbc_addmode_bundle *const *bundles, size_t n,
		    const fbc_addmode_opts *opts, fbc_error *err)
{
	const fbc_addmode_bundle **sorted = NULL;
	fbc_addmode_opts dflt = {0};
	size_t i, start;
	int rc = 0;

	if (!opts)
		opts = &dflt;
	if (opts->mode != FBC_ADDMODE_REPLACES && opts->mode != FBC_ADDMODE_SEMVER &&
	    opts->mode != FBC_ADDMODE_SEMVER_SKIPPATCH)
		return fbc_error_set(err, FBC_EINVAL, "mode", "A30: Unsupported update mode");
	if (n == 0)
		return 0;
	if (n > FBC_ADDMODE_REQUEST_MAX)
		return fbc_error_set(err, FBC_ELIMIT, NULL,
				     "LIMIT: more than %d bundles in one add",
				     FBC_ADDMODE_REQUEST_MAX);
	for (i = 0; i < n; i++) {
		if (!bundles[i]->package || !bundles[i]->package[0])
			return am_fail(err, FBC_EINVAL, "A2", "", bundles[i]->name,
				       "Could not find annotations file (no package annotation)");
		if (strlen(bundles[i]->package) > FBC_ADDMODE_NAME_MAX)
			return am_fail(err, FBC_ELIMIT, "LIMIT", "", bundles[i]->name,
				       "package name longer than %d bytes", FBC_ADDMODE_NAME_MAX);
		if (!bundles[i]->name || !bundles[i]->name[0])
			return am_fail(err, FBC_EINVAL, "A2", bundles[i]->package, "",
				       "csv name not found");
	}
	rc = precheck_edges(ix, bundles, n, err);
	if (rc != 0)
		return rc;
	sorted = malloc(n * sizeof(*sorted));
	if (!sorted)
		return oom(err);
	/* stable: the order within a package is the request's (IN-9) */
	for (i = 0; i < n; i++) {
		size_t k = i;

		while (k > 0 && cmp_pkg(&sorted[k - 1], &bundles[i]) > 0) {
			sorted[k] = sorted[k - 1];
			k--;
		}
		sorted[k] = bundles[i];
	}
	for (start = 0; start < n; start = i) {
		for (i = start + 1;
		     i < n && strcmp(sorted[i]->package, sorted[start]->package) == 0; i++)
			;
		rc = add_package(ix, sorted + start, i - start, opts, err);
		if (rc != 0)
			break;
	}
	free(sorted);
	/* SV-13 across the index: opm clears once, after every bundle of the call is in */
	if (rc == 0 && opts->mode != FBC_ADDMODE_REPLACES && !opts->keep_bundle_objects &&
	    am_clear_non_heads(ix, NULL) != 0)
		rc = oom(err);
	return rc;
}
