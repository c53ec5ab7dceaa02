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

/* The catalogs the touched add-mode packages reach, built as the ingest builds them
 * (addmode.c): every finding of loading and validating them, pointed at the change. An add
 * that fails is `templates`' finding (IIB validates after every add, so such a bundle is in
 * no catalog); what is found here is what the adds let through. */
static int check_built(chk_ctx *c, chk_out *o, size_t *n_checked, size_t *n_err, fbc_error *err)
{
	const chk_am_build *ah = NULL;
	int rc;

	if ((rc = chk_am_get(&ah, c, true, err)) != 0)
		return rc;
	if (!ah || chk_am_error(ah) || chk_am_addmode_count(ah) == 0)
		return 0;
	for (size_t i = 0; i < chk_am_catalogs(ah); i++) {
		const char *name = chk_am_catalog_name(ah, i);
		const chk_catalog *k = NULL;
		bool any = false;

		if ((rc = chk_am_catalog(&k, ah, name, err)) != 0)
			return rc;
		for (size_t p = 0; k && k->cat && p < chk_am_addmode_count(ah); p++)
			any |= fbc_catalog_package(k->cat, chk_am_addmode_package(ah, p, NULL)) !=
			       NULL;
		if (!k || (!any && !k->load_error[0]))
			continue; /* none of the packages reaches this catalog */
		(*n_checked)++;
		if (k->load_error[0]) {
			size_t from = o->findings.len;

			(*n_err)++;
			if ((rc = chk_add(o, FBC_LEVEL_FAILURE, "", 0, "load",
					  "the catalog cannot be loaded: %s", k->load_error)) ||
			    (rc = chk_am_relocate(c, o, from, name,
						  chk_am_addmode_package(ah, 0, NULL))))
				return rc;
		}
		for (size_t d = 0; d < fbc_diags_count(k->diags); d++) {
			const fbc_diag *g = fbc_diags_at(k->diags, d);
			size_t from = o->findings.len;

			(*n_err)++;
			if ((rc = chk_add(o, FBC_LEVEL_FAILURE, "", 0, g->code, "%s%s%s%s%s%s",
					  g->message, g->package ? " (package " : "",
					  g->package ? g->package : "",
					  g->package && g->bundle ? ", bundle " : "",
					  g->package && g->bundle ? g->bundle : "",
					  g->package ? ")" : "")) ||
			    (rc = chk_am_relocate(c, o, from, name,
						  g->package
							  ? g->package
							  : chk_am_addmode_package(ah, 0, NULL))))
				return rc;
		}
	}
	return 0;
}

int chk_run_catalogs(chk_ctx *c, chk_out *o, fbc_error *err)
{
	size_t n_checked = 0, n_err = 0, n_built = 0;
	int rc;

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
	if ((rc = check_built(c, o, &n_built, &n_err, err)) != 0)
		return rc;
	if (n_checked == 0 && n_built == 0) {
		for (size_t i = 0; i < c->bundles.len; i++)
			if (FBC_VEC_AT(&c->bundles, chk_bundle, i)->state == CHK_B_ADDED &&
			    c->settings.layout == FBC_LAYOUT_OPERATORS)
				return chk_skip(o, "the change adds bundles but no catalog holds "
						   "them: a template-managed package's catalogs "
						   "come in a later pull request, and an add-mode "
						   "bundle whose label admits no catalog under "
						   "catalogs/ is added to none");
		return chk_summary(o, "no catalog is affected by this change");
	}
	if (n_built)
		return chk_summary(
			o,
			"%zu catalogs checked at head, %zu more built in add mode as the "
			"ingest builds them, %zu findings",
			n_checked, n_built, n_err);
	return chk_summary(o, "%zu catalogs checked at head, %zu findings", n_checked, n_err);
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
