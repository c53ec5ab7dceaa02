/*
 * `templates`: for a template-managed package (ci.yaml `fbc.enabled` at head) whose templates
 * or catalogs the change touches, rendering each template for each catalog it maps to
 * (service/template, opm's render-template) reproduces the committed catalog file; a stale
 * render fails at the first differing blob. Bundle images resolve from the package's
 * committed catalogs and its bundle directories at head. Community-operators rendered semver
 * templates with opm v1.46 until July 2026: heads committed before then use those edge rules.
 * Add mode (bundles of packages without templates) is not wired to service/addmode yet.
 *
 * Findings are warnings for now: on community-operators' history 15 merged pull requests give
 * renders that differ from the committed catalogs (some change a template and re-render in a
 * later pull request, others are not understood yet), so a failure here is not yet trusted.
 */
#include "pipeline/checks/internal.h"
#include "service/template/template.h"

#include <stdlib.h>
#include <string.h>

#define OPM_171_SINCE 1782864000	/* 2026-07-01T00:00:00Z */
#define LEVEL	      FBC_LEVEL_WARNING /* see the top of the file */

static int check_package(chk_ctx *c, chk_out *o, const char *pkg, size_t *pairs, fbc_error *err)
{
	char *ci = NULL, *tdata = NULL;
	size_t cilen = 0;
	fbc_template_ci tc = {0};
	fbc_template_sources *src = NULL;
	fbc_tree *ops = NULL;
	fbc_error e2;
	int64_t when = 0;
	fbc_semver_rules rules = FBC_SEMVER_RULES_V171;
	char path[1024];
	int rc = 0;

	snprintf(path, sizeof(path), "operators/%s/ci.yaml", pkg);
	if (chk_read_head(&ci, &cilen, c, path, FBC_SETTINGS_MAX_BYTES, &e2) != 0)
		goto done; /* no ci.yaml at head: nothing template-managed */
	if (fbc_template_ci_parse(&tc, ci, cilen, path, &e2) != 0) {
		rc = chk_add(o, LEVEL, path, 0, "ci", "%s", e2.message);
		goto done;
	}
	if (!tc.enabled)
		goto done;
	if (fbc_git_commit_time(&when, c->git, c->head, &e2) == 0 && when < OPM_171_SINCE)
		rules = FBC_SEMVER_RULES_V146;
	if ((rc = fbc_template_sources_create(&src, err)) != 0)
		goto done;
	for (size_t m = 0; m < tc.nmaps; m++)
		for (size_t k = 0; k < tc.maps[m].ncatalogs; k++) {
			fbc_tree_entry e = {0};

			snprintf(path, sizeof(path), "catalogs/%s/%s", tc.maps[m].catalogs[k], pkg);
			if (fbc_tree_stat(c->head_tree, &e, path, &e2) == 0 &&
			    e.kind == FBC_TREE_DIR)
				fbc_template_sources_add_fbc_tree(src, c->head_tree, path, &e2);
			fbc_tree_entry_dispose(&e);
		}
	if (fbc_tree_sub(&ops, c->head_tree, "operators", &e2) == 0)
		fbc_template_sources_add_bundle_root(src, ops, &e2);
	for (size_t m = 0; m < tc.nmaps && rc == 0; m++) {
		char tpath[1024];
		size_t tlen = 0;

		snprintf(tpath, sizeof(tpath), "operators/%s/catalog-templates/%s", pkg,
			 tc.maps[m].template_name);
		free(tdata);
		tdata = NULL;
		if (chk_read_head(&tdata, &tlen, c, tpath, 64u << 20, &e2) != 0) {
			rc = chk_add(o, LEVEL, tpath, 0, "missing-template",
				     "ci.yaml maps template %s, which is not in the commit",
				     tc.maps[m].template_name);
			continue;
		}
		for (size_t k = 0; k < tc.maps[m].ncatalogs && rc == 0; k++) {
			const char *cat = tc.maps[m].catalogs[k];
			char cpath[1024], *cdata = NULL;
			size_t clen = 0;
			fbc_template_opts to = {tc.maps[m].type, fbc_template_catalog_migrate(cat),
						rules, tpath};
			fbc_buf out;

			snprintf(cpath, sizeof(cpath), "catalogs/%s/%s/catalog.yaml", cat, pkg);
			if (chk_read_head(&cdata, &clen, c, cpath, 256u << 20, &e2) != 0)
				continue; /* not released to that catalog yet */
			(*pairs)++;
			fbc_buf_init(&out, 0);
			if (fbc_template_render_yaml(&out, tdata, tlen, &to, src, &e2) != 0) {
				rc = chk_add(o, LEVEL, tpath, 0, "render",
					     "template %s does not render for %s: %s: %s",
					     tc.maps[m].template_name, cat, e2.where, e2.message);
			} else {
				fbc_template_diff d;

				fbc_template_compare(&d, out.data ? out.data : "", out.len, cdata,
						     clen);
				if (!d.same)
					rc = chk_add(
						o, LEVEL, cpath, (int)d.line, "stale-render",
						"rendering %s for %s (%s) gives a different "
						"document %zu (rendered line %zu): re-render the "
						"catalog",
						tc.maps[m].template_name, cat,
						rules == FBC_SEMVER_RULES_V146 ? "opm v1.46 rules"
									       : "opm v1.71",
						d.blob, d.rendered_line);
			}
			fbc_buf_dispose(&out);
			free(cdata);
		}
	}
done:
	free(tdata);
	free(ci);
	fbc_template_ci_dispose(&tc);
	fbc_template_sources_free(src);
	fbc_tree_free(ops);
	return rc;
}

int chk_run_templates(chk_ctx *c, chk_out *o, fbc_error *err)
{
	size_t pairs = 0, addmode = 0;
	int rc;

	if (c->settings.layout != FBC_LAYOUT_OPERATORS)
		return chk_summary(o, "templates are checked in the operator layout only");
	for (size_t i = 0; i < c->packages.len; i++) {
		const char *pkg = *FBC_VEC_AT(&c->packages, const char *, i);
		bool touched = false;

		for (size_t k = 0; k < c->files.len && !touched; k++) {
			const chk_file *f = FBC_VEC_AT(&c->files, chk_file, k);

			touched = f->package && strcmp(f->package, pkg) == 0 &&
				  (f->kind == CHK_TEMPLATE || f->kind == CHK_CATALOG);
		}
		if (touched && (rc = check_package(c, o, pkg, &pairs, err)) != 0)
			return rc;
	}
	for (size_t i = 0; i < c->bundles.len; i++)
		addmode += FBC_VEC_AT(&c->bundles, chk_bundle, i)->state == CHK_B_ADDED;
	return chk_summary(o,
			   "%zu (template, catalog) renders compared with the committed "
			   "catalogs (differences are warnings for now)%s",
			   pairs,
			   addmode ? "; add mode for new bundles of packages without templates is "
				     "not checked yet (service/addmode not wired in)"
				   : "");
}
