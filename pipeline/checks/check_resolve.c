/* `resolve`: each touched package's channel heads resolve (classic) against their catalog; for
 * add-mode packages, the catalogs built for them (addmode.c). */
#include "pipeline/checks/internal.h"
#include "service/fbc/graph.h"
#include "service/resolver/resolver.h"

#include <string.h>

/* Resolve package/channel against cat (and cat2 when not NULL, e.g. the committed catalog
 * beside a built one): 1 satisfiable, 0 not (explanation set), <0 error. */
static int resolve_in(const char **why, chk_ctx *c, const fbc_catalog *cat, const char *name,
		      const fbc_catalog *cat2, const char *name2, const char *pkg,
		      const fbc_channel *channel, fbc_error *err)
{
	fbc_resolve_request *req = NULL;
	fbc_resolve_result *res = NULL;
	fbc_resolve_req r = {0};
	fbc_graph *g = NULL;
	fbc_error e2;
	int rc;

	r.package = pkg;
	r.channel = channel->name;
	r.catalog = name; /* the package from this catalog; dependencies from any */
	/* the head itself, not whatever older entry the resolver would fall back to */
	if (fbc_graph_build(&g, channel, 0, &e2) == 0 && g->head != FBC_GRAPH_NONE)
		r.starting_csv = g->nodes[g->head].name;
	if ((rc = fbc_resolve_request_create(&req, FBC_RESOLVE_CLASSIC, err)) != 0 ||
	    (rc = fbc_resolve_request_add_catalog(req, name, 0, NULL, err)) != 0 ||
	    (cat2 && (rc = fbc_resolve_request_add_catalog(req, name2, 0, NULL, err)) != 0) ||
	    (rc = fbc_resolve_request_add(req, &r, err)) != 0)
		goto done;
	req->catalogs[0].catalog = cat;
	if (cat2)
		req->catalogs[1].catalog = cat2;
	if ((rc = fbc_resolve(&res, req, NULL, err)) != 0)
		goto done;
	rc = res->satisfiable ? 1 : 0;
	if (!res->satisfiable)
		*why = fbc_arena_strdup(c->arena, res->explanation ? res->explanation : res->kind);
done:
	fbc_graph_free(g);
	fbc_resolve_result_free(res);
	fbc_resolve_request_free(req);
	return rc;
}

static int resolve_one(const char **why, chk_ctx *c, const fbc_catalog *cat, const char *name,
		       const char *pkg, const fbc_channel *channel, fbc_error *err)
{
	return resolve_in(why, c, cat, name, NULL, NULL, pkg, channel, err);
}

/* Against a built add-mode catalog alone, then with the committed catalog of the same name
 * (template-managed packages) beside it when that does not suffice. */
static int resolve_built(const char **why, chk_ctx *c, bool head, const chk_catalog *k,
			 const char *pkg, const fbc_channel *ch, fbc_error *err)
{
	chk_catalog *kc = NULL;
	int ok = resolve_one(why, c, k->cat, k->name, pkg, ch, err), rc;

	if (ok != 0)
		return ok;
	if ((rc = chk_catalog_get(&kc, c, head, k->dir, err)) != 0)
		return rc;
	if (!kc || !kc->cat || fbc_diags_count(kc->diags))
		return 0;
	return resolve_in(why, c, k->cat, k->name, kc->cat,
			  fbc_arena_printf(c->arena, "%s (committed)", k->name), pkg, ch, err);
}

/* The touched add-mode packages (addmode.c): each channel head in each catalog it is built
 * into. Other add-mode packages are not built, so a dependency only one of them provides is
 * not found: what does not resolve is a warning, never a failure. */
static int resolve_addmode(chk_ctx *c, chk_out *o, size_t *n, fbc_error *err)
{
	const chk_am_build *ah = NULL, *ab = NULL;
	int rc;

	if ((rc = chk_am_get(&ah, c, true, err)) != 0 || (rc = chk_am_get(&ab, c, false, err)))
		return rc;
	if (!ah || chk_am_error(ah) || chk_am_addmode_count(ah) == 0)
		return 0;
	if (chk_am_error(ab))
		ab = NULL;
	for (size_t i = 0; i < chk_am_catalogs(ah); i++) {
		const char *name = chk_am_catalog_name(ah, i);
		const chk_catalog *kh = NULL, *kb = NULL;

		if ((rc = chk_am_catalog(&kh, ah, name, err)) != 0 ||
		    (ab && (rc = chk_am_catalog(&kb, ab, name, err)) != 0))
			return rc;
		if (!kh || !kh->cat || fbc_diags_count(kh->diags))
			continue; /* `catalogs` reports it */
		for (size_t p = 0; p < chk_am_addmode_count(ah); p++) {
			const char *pname = chk_am_addmode_package(ah, p, NULL);
			const fbc_package *pkg = fbc_catalog_package(kh->cat, pname);
			const fbc_package *pb =
				kb && kb->cat ? fbc_catalog_package(kb->cat, pname) : NULL;

			for (size_t ci = 0; pkg && ci < pkg->n_channels; ci++) {
				const fbc_channel *ch = pkg->channels[ci];
				const fbc_channel *cb =
					pb ? fbc_package_channel(pb, ch->name) : NULL;
				const char *why = NULL, *why_base = NULL;
				size_t from = o->findings.len;
				int ok, ok_base = 1;

				(*n)++;
				if ((ok = resolve_built(&why, c, true, kh, pname, ch, err)) < 0)
					return ok;
				if (ok)
					continue;
				if (cb && !fbc_diags_count(kb->diags) &&
				    (ok_base = resolve_built(&why_base, c, false, kb, pname, cb,
							     err)) < 0)
					return ok_base;
				if ((rc = chk_add(o, FBC_LEVEL_WARNING, "", 0, "unsatisfiable",
						  "installing %s from channel %s cannot be "
						  "resolved%s: %s (add-mode packages other than "
						  "the touched ones are not built by the checks: a "
						  "dependency only one of them provides is not "
						  "found)",
						  pname, ch->name,
						  ok_base ? "" : " (already so at the merge base)",
						  why)) ||
				    (rc = chk_am_relocate(c, o, from, name, pname)))
					return rc;
			}
		}
	}
	return 0;
}

int chk_run_resolve(chk_ctx *c, chk_out *o, fbc_error *err)
{
	size_t n = 0, n_am = 0;
	int rc;

	if ((rc = resolve_addmode(c, o, &n_am, err)) != 0)
		return rc;
	if (c->affected.len == 0 && n_am == 0)
		return chk_summary(o, "no catalog is affected by this change");
	for (size_t i = 0; i < c->affected.len; i++) {
		const char *dir = *FBC_VEC_AT(&c->affected, const char *, i);
		chk_catalog *kh = NULL, *kb = NULL;
		bool kb_loaded = false;

		if ((rc = chk_catalog_get(&kh, c, true, dir, err)) != 0)
			return rc;
		if (!kh || !kh->cat || fbc_diags_count(kh->diags))
			continue; /* an invalid catalog is the catalogs check's finding */
		for (size_t p = 0; p < kh->cat->n_sorted_packages; p++) {
			const fbc_package *pkg = kh->cat->sorted_packages[p];

			if (c->settings.layout != FBC_LAYOUT_PLAIN &&
			    !chk_strvec_has(&c->packages, pkg->name))
				continue;
			if (c->settings.layout == FBC_LAYOUT_PLAIN) {
				/* unchanged catalog: nothing to resolve again */
				char id[FBC_GIT_ID_MAX];
				fbc_error e2;

				if (fbc_git_object_id(id, NULL, c->git, c->mb, dir, &e2) == 0 &&
				    strcmp(id, kh->id) == 0)
					continue;
			}
			for (size_t ci = 0; ci < pkg->n_channels; ci++) {
				const fbc_channel *ch = pkg->channels[ci];
				const char *why = NULL, *why_base = NULL;
				int ok =
					resolve_one(&why, c, kh->cat, kh->name, pkg->name, ch, err);
				int ok_base = 1;
				const char *path;

				n++;
				if (ok < 0)
					return ok;
				if (ok)
					continue;
				/* the merge base only now: is it already so there? */
				if (!kb_loaded &&
				    (rc = chk_catalog_get(&kb, c, false, dir, err)) != 0)
					return rc;
				kb_loaded = true;
				if (kb && kb->cat && fbc_catalog_package(kb->cat, pkg->name) &&
				    fbc_package_channel(fbc_catalog_package(kb->cat, pkg->name),
							ch->name)) {
					ok_base = resolve_one(
						&why_base, c, kb->cat, kb->name, pkg->name,
						fbc_package_channel(
							fbc_catalog_package(kb->cat, pkg->name),
							ch->name),
						err);
					if (ok_base < 0)
						return ok_base;
				}
				path = *kh->dir ? fbc_arena_printf(c->arena, "%s/%s", kh->dir,
								   ch->loc.file)
						: ch->loc.file;
				if ((rc = chk_add(
					     o, ok_base ? FBC_LEVEL_FAILURE : FBC_LEVEL_WARNING,
					     path, ch->loc.line, "unsatisfiable",
					     "installing %s from channel %s of catalog %s cannot "
					     "be resolved%s: %s",
					     pkg->name, ch->name, kh->name,
					     ok_base ? "" : " (already so at the merge base)",
					     why)))
					return rc;
			}
		}
	}
	if (n_am)
		return chk_summary(o,
				   "%zu channel heads resolved (classic semantics), %zu more of "
				   "add-mode packages in their built catalogs (with the committed "
				   "catalog beside them where needed)",
				   n, n_am);
	return chk_summary(o, "%zu channel heads resolved (classic semantics)", n);
}
