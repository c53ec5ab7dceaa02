/*
 * `templates`: for a template-managed package (ci.yaml `fbc.enabled` at head) whose templates
 * or catalogs the change touches, rendering each template for each catalog it maps to
 * (service/template, opm's render-template) reproduces the committed catalog file. Bundle
 * images resolve from the package's committed catalogs and its bundle directories at head.
 *
 * What the real history of community-operators showed (templates.md §7, and every pull request
 * of history.bundle):
 *  - opm changed: the pipeline rendered semver templates with opm v1.46 until late July 2026
 *    (catalogs written up to 2026-07-20 match its rules, from 2026-07-27 v1.71's), and a
 *    catalog promoted later is a copy of one rendered earlier. The rules of the head's date come
 *    first; a catalog that matches the other rules exactly is current too.
 *  - Bundle pull requests usually append the image to the template and leave the catalogs to
 *    the release automation, which re-renders them after the merge: a difference in a catalog
 *    the change does not touch is a warning (the catalog is re-rendered after the merge, or it
 *    stays stale). A catalog the change does touch must be the render: a difference fails.
 *  - A bot wrote some catalogs with another YAML emitter ('' for ""): the same blobs with other
 *    bytes are a warning, not a stale render.
 * A template that does not render fails.
 *
 * For a touched package in add mode (no `fbc.enabled`), the package is built at head the way
 * the ingest will build it (addmode.c): a bundle of this change whose add fails in any
 * catalog fails the check with the A* rule of index-add.md, at the CSV line it is about.
 */
#include "pipeline/checks/internal.h"
#include "service/load/load.h"
#include "service/template/template.h"

#include <stdlib.h>
#include <string.h>

#define OPM_171_SINCE 1784592000 /* 2026-07-21T00:00:00Z */

static int collect_blob(void *ctx, const fbc_meta *meta, fbc_error *err)
{
	(void)err;
	return json_array_append(ctx, meta->blob) ? FBC_ENOMEM : 0;
}

/* The blobs of a YAML catalog file, in order (NULL if it does not load cleanly). */
static json_t *blobs_of(const char *data, size_t len)
{
	json_t *a = json_array();
	fbc_diags diags;
	fbc_error e2;

	if (!a || fbc_diags_init(&diags, 16) != 0) {
		json_decref(a);
		return NULL;
	}
	if (fbc_load_buffer("catalog.yaml", data, len, NULL, collect_blob, a, &diags, &e2) != 0 ||
	    fbc_diags_count(&diags) > 0) {
		json_decref(a);
		a = NULL;
	}
	fbc_diags_dispose(&diags);
	return a;
}

/* The renders of a package's templates: a render depends only on the template's bytes and type,
 * the migrate level of the catalog and the semver rules. A template maps to many catalogs
 * (v4.12 ... v4.22) with two levels among them, and packages onboarded by the community keep one
 * template per catalog, mostly the same bytes: each distinct render is made once. */
typedef struct rendered {
	char *tdata; /* the template (a copy) */
	size_t tlen;
	fbc_template_type type;
	fbc_bundle_migrate migrate;
	fbc_semver_rules rules;
	int rc;
	fbc_buf out;
	fbc_error e2;
	bool parsed;   /* blobs below is the parse of out */
	json_t *blobs; /* NULL when out does not load cleanly */
} rendered;

/* A committed catalog file's blobs, by blob id (catalogs of several versions often hold the
 * same file). */
typedef struct committed {
	char id[FBC_TREE_ID_MAX];
	json_t *blobs;
} committed;

typedef struct render_memo {
	rendered *r; /* a few: migrate levels x semver rules */
	size_t n;
	committed *c;
	size_t nc;
} render_memo;

static void render_memo_dispose(render_memo *rm)
{
	for (size_t i = 0; i < rm->n; i++) {
		fbc_buf_dispose(&rm->r[i].out);
		json_decref(rm->r[i].blobs);
		free(rm->r[i].tdata);
	}
	for (size_t i = 0; i < rm->nc; i++)
		json_decref(rm->c[i].blobs);
	free(rm->r);
	free(rm->c);
	memset(rm, 0, sizeof(*rm));
}

/* The blobs of a render that render() returned (borrowed from rm). */
static json_t *render_blobs(render_memo *rm, const fbc_buf *out)
{
	for (size_t i = 0; i < rm->n; i++)
		if (rm->r[i].out.data == out->data && rm->r[i].out.len == out->len) {
			if (!rm->r[i].parsed) {
				rm->r[i].blobs = blobs_of(out->data ? out->data : "", out->len);
				rm->r[i].parsed = true;
			}
			return rm->r[i].blobs;
		}
	return NULL;
}

/* The blobs of a committed file of blob id `id` ("" unknown: not kept), borrowed from rm. */
static json_t *committed_blobs(render_memo *rm, const char *id, const char *data, size_t len,
			       json_t **own)
{
	committed *grown;

	*own = NULL;
	for (size_t i = 0; *id && i < rm->nc; i++)
		if (strcmp(rm->c[i].id, id) == 0)
			return rm->c[i].blobs;
	if (!*id || !(grown = realloc(rm->c, (rm->nc + 1) * sizeof(*rm->c))))
		return *own = blobs_of(data, len);
	rm->c = grown;
	snprintf(rm->c[rm->nc].id, sizeof(rm->c[rm->nc].id), "%s", id);
	rm->c[rm->nc].blobs = blobs_of(data, len);
	return rm->c[rm->nc++].blobs;
}

/* Render the template under rules for catalog cat: *out is the YAML (owned by rm, valid until
 * the next call: copy the fbc_buf, not the pointer); 0, or the render error in e2. */
static int render(fbc_buf *out, render_memo *rm, const char *tdata, size_t tlen,
		  const fbc_template_mapping *m, const char *cat, fbc_semver_rules rules,
		  const char *tpath, fbc_template_sources *src, fbc_error *e2)
{
	fbc_template_opts to = {m->type, fbc_template_catalog_migrate(cat), rules, tpath};
	rendered *r, *grown;

	for (size_t i = 0; i < rm->n; i++)
		if (rm->r[i].migrate == to.migrate && rm->r[i].rules == rules &&
		    rm->r[i].type == m->type && rm->r[i].tlen == tlen &&
		    memcmp(rm->r[i].tdata, tdata, tlen) == 0) {
			*out = rm->r[i].out;
			*e2 = rm->r[i].e2;
			return rm->r[i].rc;
		}
	if (!(grown = realloc(rm->r, (rm->n + 1) * sizeof(*rm->r)))) {
		fbc_buf_init(out, 0);
		return fbc_error_set(e2, FBC_ENOMEM, tpath, "out of memory");
	}
	rm->r = grown;
	r = &rm->r[rm->n];
	memset(r, 0, sizeof(*r));
	if (!(r->tdata = malloc(tlen ? tlen : 1))) {
		fbc_buf_init(out, 0);
		return fbc_error_set(e2, FBC_ENOMEM, tpath, "out of memory");
	}
	memcpy(r->tdata, tdata, tlen);
	r->tlen = tlen;
	r->type = m->type;
	rm->n++;
	r->migrate = to.migrate;
	r->rules = rules;
	fbc_buf_init(&r->out, 0);
	fbc_error_init(&r->e2);
	r->rc = fbc_template_render_yaml(&r->out, tdata, tlen, &to, src, &r->e2);
	*e2 = r->e2;
	if (r->rc != 0) {
		/* not kept: the error names this template's file, another one with the same
		 * bytes renders again for its own message */
		int rc = r->rc;

		fbc_buf_dispose(&r->out);
		free(r->tdata);
		rm->n--;
		fbc_buf_init(out, 0);
		return rc;
	}
	*out = r->out;
	return 0;
}

static bool touches(const chk_ctx *c, const char *path)
{
	for (size_t i = 0; i < c->files.len; i++)
		if (strcmp(FBC_VEC_AT(&c->files, chk_file, i)->path, path) == 0)
			return true;
	return false;
}

typedef struct tpl_counts {
	size_t pairs, other_rules, format_only, stale;
} tpl_counts;

/* One (template, catalog) pair: the committed file against the render. */
static int compare_pair(chk_ctx *c, chk_out *o, const fbc_template_mapping *m, const char *cat,
			const char *tdata, size_t tlen, const char *tpath, const char *cpath,
			const char *cid, const char *cdata, size_t clen, fbc_semver_rules rules,
			fbc_template_sources *src, render_memo *rm, tpl_counts *n)
{
	fbc_semver_rules other =
		rules == FBC_SEMVER_RULES_V146 ? FBC_SEMVER_RULES_V171 : FBC_SEMVER_RULES_V146;
	fbc_buf a, b; /* views of rm's renders */
	fbc_template_diff d = {0}, d2 = {0};
	fbc_error e2;
	json_t *ja = NULL, *jb = NULL, *jc = NULL, *own = NULL; /* borrowed from rm but own */
	bool has_b;
	int rc = 0;

	n->pairs++;
	if ((rc = render(&a, rm, tdata, tlen, m, cat, rules, tpath, src, &e2)) != 0) {
		rc = chk_add(o, FBC_LEVEL_FAILURE, tpath, 0, "render",
			     "template %s does not render for %s: %s: %s", m->template_name, cat,
			     e2.where, e2.message);
		goto done;
	}
	fbc_template_compare(&d, a.data ? a.data : "", a.len, cdata, clen);
	if (d.same)
		goto done;
	/* the other opm's rules (semver only: basic templates render alike) */
	has_b = m->type == FBC_TEMPLATE_SEMVER &&
		render(&b, rm, tdata, tlen, m, cat, other, tpath, src, &e2) == 0;
	if (has_b) {
		fbc_template_compare(&d2, b.data ? b.data : "", b.len, cdata, clen);
		if (d2.same) {
			n->other_rules++;
			goto done;
		}
	}
	/* the same blobs written by another emitter */
	jc = committed_blobs(rm, cid, cdata, clen, &own);
	ja = jc ? render_blobs(rm, &a) : NULL;
	jb = jc && has_b ? render_blobs(rm, &b) : NULL;
	if (jc && ((ja && json_equal(ja, jc)) || (jb && json_equal(jb, jc)))) {
		n->format_only++;
		rc = chk_add(o, FBC_LEVEL_WARNING, cpath, 1, "format",
			     "%s holds the blobs template %s renders for %s, written differently "
			     "(not opm's YAML): re-render it to keep later diffs small",
			     cpath, m->template_name, cat);
		goto done;
	}
	n->stale++;
	if (has_b && d2.blob > d.blob) { /* the other rules' render is the closer one */
		d = d2;
		rules = other;
	}
	if (touches(c, cpath))
		rc = chk_add(o, FBC_LEVEL_FAILURE, cpath, (int)d.line, "stale-render",
			     "this change writes %s, but rendering %s for %s (%s) gives a "
			     "different document %zu (rendered line %zu): re-render the catalog "
			     "from the template",
			     cpath, m->template_name, cat,
			     rules == FBC_SEMVER_RULES_V146 ? "opm v1.46 rules" : "opm v1.71",
			     d.blob, d.rendered_line);
	else
		rc = chk_add(o, FBC_LEVEL_WARNING, cpath, (int)d.line, "stale-render",
			     "rendering %s for %s (%s) gives a different document %zu (rendered "
			     "line %zu), and this change does not write %s: it stays stale after "
			     "the merge unless the release automation re-renders it",
			     m->template_name, cat,
			     rules == FBC_SEMVER_RULES_V146 ? "opm v1.46 rules" : "opm v1.71",
			     d.blob, d.rendered_line, cpath);
done:
	json_decref(own);
	return rc;
}

static int check_package(chk_ctx *c, chk_out *o, const char *pkg, tpl_counts *n, fbc_error *err)
{
	char *ci = NULL, *tdata = NULL;
	size_t cilen = 0;
	fbc_template_ci tc = {0};
	fbc_template_sources *src = NULL;
	fbc_tree *ops = NULL;
	fbc_error e2;
	int64_t when = 0;
	fbc_semver_rules rules = FBC_SEMVER_RULES_V171;
	render_memo rm = {0};
	char path[1024], cipath[1024];
	int rc = 0;

	snprintf(cipath, sizeof(cipath), "operators/%s/ci.yaml", pkg);
	if (chk_read_head(&ci, &cilen, c, cipath, FBC_SETTINGS_MAX_BYTES, &e2) != 0)
		goto done; /* no ci.yaml at head: nothing template-managed */
	if (fbc_template_ci_parse(&tc, ci, cilen, cipath, &e2) != 0) {
		rc = chk_add(o, FBC_LEVEL_FAILURE, cipath, 0, "ci", "%s", e2.message);
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
			rc = chk_add(o, FBC_LEVEL_FAILURE, cipath,
				     chk_line_of(c, cipath, 1, tc.maps[m].template_name),
				     "missing-template",
				     "ci.yaml maps template %s, which is not in the commit (%s)",
				     tc.maps[m].template_name, tpath);
			continue;
		}
		for (size_t k = 0; k < tc.maps[m].ncatalogs && rc == 0; k++) {
			const char *cat = tc.maps[m].catalogs[k];
			char cpath[1024], *cdata = NULL;
			size_t clen = 0;

			fbc_tree_entry ce = {0};

			snprintf(cpath, sizeof(cpath), "catalogs/%s/%s/catalog.yaml", cat, pkg);
			if (chk_read_head(&cdata, &clen, c, cpath, 256u << 20, &e2) != 0)
				continue; /* not released to that catalog yet */
			if (fbc_tree_stat(c->head_tree, &ce, cpath, &e2) != 0 ||
			    ce.kind != FBC_TREE_FILE)
				ce.id[0] = '\0';
			rc = compare_pair(c, o, &tc.maps[m], cat, tdata, tlen, tpath, cpath, ce.id,
					  cdata, clen, rules, src, &rm, n);
			fbc_tree_entry_dispose(&ce);
			free(cdata);
		}
	}
done:
	render_memo_dispose(&rm);
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
	tpl_counts n = {0};
	size_t added = 0, pkgs = 0;
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
		if (touched && (rc = check_package(c, o, pkg, &n, err)) != 0)
			return rc;
	}
	if ((rc = check_addmode(c, o, &added, &pkgs, err)) != 0)
		return rc;
	return chk_summary(
		o,
		"%zu (template, catalog) renders compared with the committed catalogs "
		"(%zu matched the other opm's semver rules, %zu differ only in "
		"formatting, %zu stale); %zu touched package(s) in add mode rebuilt from "
		"their merge history, %zu new bundle(s) added",
		n.pairs, n.other_rules, n.format_only, n.stale, pkgs, added);
}
