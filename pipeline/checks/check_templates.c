/*
 * `templates`: for a template-managed package (ci.yaml `fbc.enabled` at head) whose templates
 * or catalogs the change touches, rendering each template for each catalog it maps to
 * (service/template, opm's render-template) reproduces the committed catalog file; a stale
 * render fails at the first differing blob. Bundle images resolve from the package's
 * committed catalogs and its bundle directories at head. Community-operators rendered semver
 * templates with opm v1.46 until July 2026: heads committed before then use those edge rules.
 * For a touched package in add mode (no `fbc.enabled`), the package is built at head the way
 * the ingest will build it (addmode.c): a bundle of this change whose add fails in any
 * catalog fails the check with the A* rule of index-add.md, at the CSV line it is about.
 *
 * Render findings are warnings for now: on community-operators' history 15 merged pull requests
 * give renders that differ from the committed catalogs (some change a template and re-render in a
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

static const chk_bundle *added_bundle(const chk_ctx *c, const char *dir)
{
	for (size_t i = 0; i < c->bundles.len; i++) {
		const chk_bundle *b = FBC_VEC_AT(&c->bundles, chk_bundle, i);

		if (b->state == CHK_B_ADDED && strcmp(b->dir, dir) == 0)
			return b;
	}
	return NULL;
}

/* Where an add failure points: the CSV line the rule is about (index-add.md §8). */
static void add_failure_at(chk_ctx *c, const chk_bundle *b, const char *rule, const char **path,
			   int *line)
{
	static const char *const replaces[] = {"A19", "A20", "A21", "A22", "A28", NULL};
	static const char *const version[] = {"A13", "A15", "A23", "A25", "A26", "A31", NULL};
	static const char *const channels[] = {"A16", "A17", "A18", "A24", "A27", "A29", NULL};
	const char *csv = chk_csv_file(c, b->dir), *needle = "name:";

	for (size_t i = 0; replaces[i]; i++)
		if (strcmp(rule, replaces[i]) == 0)
			needle = "replaces:";
	for (size_t i = 0; version[i]; i++)
		if (strcmp(rule, version[i]) == 0)
			needle = "version:";
	for (size_t i = 0; channels[i]; i++)
		if (strcmp(rule, channels[i]) == 0) {
			*path = fbc_arena_printf(c->arena, "%s/metadata/annotations.yaml", b->dir);
			*line = chk_line_of(c, *path, 1, "channel");
			return;
		}
	*path = csv ? csv : b->first_path;
	*line = csv ? chk_line_of(c, csv, 1, needle) : 0;
	if (csv && !*line)
		*line = chk_line_of(c, csv, 1, "name:");
}

/* Add mode: the touched packages without templates, built at head as the ingest will build
 * them after the merge. An add that fails for a bundle this change adds fails the check (IIB
 * would fail the release, A36); a finding new at head about anything else (a ci.yaml whose
 * updateGraph changed, a bundle merged earlier that no longer adds) is a warning. */
static int check_addmode(chk_ctx *c, chk_out *o, size_t *added, size_t *pkgs, fbc_error *err)
{
	const chk_am_build *ah = NULL, *ab = NULL;
	int rc;

	if ((rc = chk_am_get(&ah, c, true, err)) != 0)
		return rc;
	if (!ah)
		return 0;
	if (chk_am_error(ah))
		return chk_add(o, FBC_LEVEL_FAILURE, "operators", 0, "addmode-build",
			       "the add-mode packages cannot be built at head: %s",
			       chk_am_error(ah));
	*pkgs = chk_am_addmode_count(ah);
	for (size_t i = 0; i < c->bundles.len; i++) {
		const chk_bundle *b = FBC_VEC_AT(&c->bundles, chk_bundle, i);

		*added += b->state == CHK_B_ADDED && chk_am_is_addmode(ah, b->package);
	}
	for (size_t i = 0; i < chk_am_findings(ah); i++) {
		const char *path, *cat, *rule, *msg, *at = NULL;
		const chk_bundle *b;
		int line = 0;

		chk_am_finding(ah, i, &path, &cat, &rule, &msg);
		if (strcmp(rule, "BUNDLE") == 0 || strcmp(rule, "RENDER") == 0 ||
		    strcmp(rule, "IN-3") == 0)
			continue; /* a bundle that does not read or render: `bundles` owns it */
		if ((b = added_bundle(c, path))) {
			add_failure_at(c, b, rule, &at, &line);
			rc = chk_add(o, FBC_LEVEL_FAILURE, at, line, rule, "%s%s%s: %s",
				     *cat ? "catalog " : "", cat, *cat ? ": adding it fails" : "",
				     msg);
		} else {
			if (!ab && (rc = chk_am_get(&ab, c, false, err)) != 0)
				return rc;
			if (ab && !chk_am_error(ab) && chk_am_has_finding(ab, path, cat, rule))
				continue; /* already so at the merge base */
			rc = chk_add(o, FBC_LEVEL_WARNING, path, 0, rule, "%s%s%s%s (new at head)",
				     *cat ? "catalog " : "", cat, *cat ? ": " : "", msg);
		}
		if (rc != 0)
			return rc;
	}
	return 0;
}

int chk_run_templates(chk_ctx *c, chk_out *o, fbc_error *err)
{
	size_t pairs = 0, added = 0, pkgs = 0;
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
	if ((rc = check_addmode(c, o, &added, &pkgs, err)) != 0)
		return rc;
	return chk_summary(o,
			   "%zu (template, catalog) renders compared with the committed "
			   "catalogs (differences are warnings for now); %zu touched package(s) "
			   "in add mode rebuilt from their merge history, %zu new bundle(s) added",
			   pairs, pkgs, added);
}
