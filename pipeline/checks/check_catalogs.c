/* `catalogs` (every affected catalog valid at head) and `policy` (registries, csv metadata). */
#include "pipeline/checks/internal.h"

#include <string.h>

static const char *repo_path(chk_ctx *c, const chk_catalog *k, const char *file)
{
	if (!file || !*file)
		return k->dir;
	return *k->dir ? fbc_arena_printf(c->arena, "%s/%s", k->dir, file) : file;
}

static bool touched(const chk_ctx *c, const char *pkg)
{
	return pkg && chk_strvec_has(&c->packages, pkg);
}

/* Bundles added by operators/<pkg>/<v>/ directories reach catalogs through add mode. */
static size_t addmode_bundles(const chk_ctx *c)
{
	size_t n = 0;

	for (size_t i = 0; i < c->bundles.len; i++)
		n += FBC_VEC_AT(&c->bundles, chk_bundle, i)->state == CHK_B_ADDED;
	return n;
}

int chk_run_catalogs(chk_ctx *c, chk_out *o, fbc_error *err)
{
	size_t n_checked = 0, n_err = 0;
	int rc;

	if (c->affected.len == 0) {
		if (addmode_bundles(c) && c->settings.layout == FBC_LAYOUT_OPERATORS)
			return chk_skip(o, "the change adds bundles but touches no catalog: a "
					   "template package's catalogs come in a later pull "
					   "request, and the catalogs an add-mode package reaches "
					   "are not built by the checks yet (service/addmode)");
		return chk_summary(o, "no catalog is affected by this change");
	}
	for (size_t i = 0; i < c->affected.len; i++) {
		const char *dir = *FBC_VEC_AT(&c->affected, const char *, i);
		chk_catalog *k = NULL;

		if ((rc = chk_catalog_get(&k, c, true, dir, err)) != 0)
			return rc;
		if (!k)
			continue; /* the catalog is deleted by the change */
		n_checked++;
		if (k->load_error[0]) {
			n_err++;
			if ((rc = chk_add(o, FBC_LEVEL_FAILURE, k->dir, 0, "load",
					  "catalog %s cannot be loaded: %s", k->name,
					  k->load_error)))
				return rc;
		}
		for (size_t d = 0; d < fbc_diags_count(k->diags); d++) {
			const fbc_diag *g = fbc_diags_at(k->diags, d);

			n_err++;
			if ((rc = chk_add(o, FBC_LEVEL_FAILURE, repo_path(c, k, g->file), g->line,
					  g->code, "%s%s%s%s%s%s", g->message,
					  g->package ? " (package " : "",
					  g->package ? g->package : "",
					  g->package && g->bundle ? ", bundle " : "",
					  g->package && g->bundle ? g->bundle : "",
					  g->package ? ")" : "")) != 0)
				return rc;
		}
		if (k->diags->dropped &&
		    (rc = chk_add(o, FBC_LEVEL_FAILURE, k->dir, 0, "LIMIT",
				  "%zu more findings in catalog %s were not kept",
				  k->diags->dropped, k->name)))
			return rc;
	}
	return chk_summary(o, "%zu catalogs checked at head, %zu findings%s", n_checked, n_err,
			   addmode_bundles(c) ? "; add-mode catalogs not built (service/addmode "
						"not available yet)"
					      : "");
}

static bool registry_allowed(const fbc_settings *s, const char *image)
{
	if (s->n_allowed_registries == 0)
		return true;
	for (size_t i = 0; i < s->n_allowed_registries; i++)
		if (strncmp(image, s->allowed_registries[i], strlen(s->allowed_registries[i])) == 0)
			return true;
	return false;
}

int chk_run_policy(chk_ctx *c, chk_out *o, fbc_error *err)
{
	size_t n_bundles = 0;
	int rc;

	if (c->affected.len == 0)
		return chk_summary(o, "no catalog is affected by this change");
	for (size_t i = 0; i < c->affected.len; i++) {
		const char *dir = *FBC_VEC_AT(&c->affected, const char *, i);
		chk_catalog *k = NULL;
		bool csv_only;

		if ((rc = chk_catalog_get(&k, c, true, dir, err)) != 0)
			return rc;
		if (!k || !k->cat)
			continue;
		csv_only = fbc_settings_csv_metadata_only(&c->settings, k->name);
		for (size_t b = 0; b < k->cat->bundles.len; b++) {
			const fbc_bundle *bu = FBC_CATALOG_AT(k->cat->bundles, fbc_bundle, b);
			const char *path = repo_path(c, k, bu->loc.file);

			if (c->settings.layout != FBC_LAYOUT_PLAIN && !touched(c, bu->package))
				continue;
			n_bundles++;
			if (*bu->image && !registry_allowed(&c->settings, bu->image)) {
				int line = chk_line_of(c, path, bu->loc.line, bu->image);

				if ((rc = chk_add(
					     o, FBC_LEVEL_FAILURE, path, line ? line : bu->loc.line,
					     "registry",
					     "bundle %s: image %s is not from an allowed registry "
					     "(%s)",
					     bu->name, bu->image,
					     c->settings.allowed_registries[0])))
					return rc;
			}
			if (csv_only && bu->n_bundle_objects > 0) {
				int line = chk_line_of(c, path, bu->loc.line, "olm.bundle.object");

				if ((rc = chk_add(
					     o, FBC_LEVEL_FAILURE, path, line ? line : bu->loc.line,
					     "bundle-object",
					     "bundle %s carries %zu olm.bundle.object properties; "
					     "catalog %s is csv-metadata only: re-render with "
					     "--migrate-level bundle-object-to-csv-metadata",
					     bu->name, bu->n_bundle_objects, k->name)))
					return rc;
			}
		}
	}
	return chk_summary(o, "%zu bundles of touched packages checked in %zu catalogs", n_bundles,
			   c->affected.len);
}
