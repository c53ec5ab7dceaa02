/* `resolve`: each touched package's channel heads resolve (classic) against their catalog. */
#include "pipeline/checks/internal.h"
#include "service/fbc/graph.h"
#include "service/resolver/resolver.h"

#include <string.h>

/* Resolve package/channel against cat: 1 satisfiable, 0 not (explanation set), <0 error. */
static int resolve_one(const char **why, chk_ctx *c, const fbc_catalog *cat, const char *name,
		       const char *pkg, const fbc_channel *channel, fbc_error *err)
{
	fbc_resolve_request *req = NULL;
	fbc_resolve_result *res = NULL;
	fbc_resolve_req r = {0};
	fbc_graph *g = NULL;
	fbc_error e2;
	int rc;

	r.package = pkg;
	r.channel = channel->name;
	/* the head itself, not whatever older entry the resolver would fall back to */
	if (fbc_graph_build(&g, channel, 0, &e2) == 0 && g->head != FBC_GRAPH_NONE)
		r.starting_csv = g->nodes[g->head].name;
	if ((rc = fbc_resolve_request_create(&req, FBC_RESOLVE_CLASSIC, err)) != 0 ||
	    (rc = fbc_resolve_request_add_catalog(req, name, 0, NULL, err)) != 0 ||
	    (rc = fbc_resolve_request_add(req, &r, err)) != 0)
		goto done;
	req->catalogs[0].catalog = cat;
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

int chk_run_resolve(chk_ctx *c, chk_out *o, fbc_error *err)
{
	size_t n = 0;
	int rc;

	if (c->affected.len == 0)
		return chk_summary(o, "no catalog is affected by this change");
	for (size_t i = 0; i < c->affected.len; i++) {
		const char *dir = *FBC_VEC_AT(&c->affected, const char *, i);
		chk_catalog *kh = NULL, *kb = NULL;

		if ((rc = chk_catalog_get(&kh, c, true, dir, err)) != 0 ||
		    (rc = chk_catalog_get(&kb, c, false, dir, err)) != 0)
			return rc;
		if (!kh || !kh->cat || fbc_diags_count(kh->diags))
			continue; /* an invalid catalog is the catalogs check's finding */
		for (size_t p = 0; p < kh->cat->n_sorted_packages; p++) {
			const fbc_package *pkg = kh->cat->sorted_packages[p];

			if (c->settings.layout != FBC_LAYOUT_PLAIN &&
			    !chk_strvec_has(&c->packages, pkg->name))
				continue;
			if (c->settings.layout == FBC_LAYOUT_PLAIN && kb &&
			    strcmp(kb->id, kh->id) == 0)
				continue;
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
	return chk_summary(o, "%zu channel heads resolved (classic semantics)", n);
}
