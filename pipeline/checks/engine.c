/* The engine: settings from the base commit, the check table, conclusions (§5.1). */
#include "pipeline/checks/internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct fbc_checks_result_priv {
	fbc_arena *arena;
};

typedef struct chk_row {
	const char *id;
	fbc_check_level default_level; /* what a finding of the check is worth by default */
	chk_fn fn;
} chk_row;

/* Checks are data: one row per check, in the order of §5. */
static const chk_row table[] = {
	{"changes", FBC_LEVEL_FAILURE, chk_run_changes},
	{"permissions", FBC_LEVEL_FAILURE, chk_run_permissions},
	{"bundles", FBC_LEVEL_FAILURE, chk_run_bundles},
	{"catalogs", FBC_LEVEL_FAILURE, chk_run_catalogs},
	{"templates", FBC_LEVEL_FAILURE, chk_run_templates},
	{"graph", FBC_LEVEL_FAILURE, chk_run_graph},
	{"crds", FBC_LEVEL_FAILURE, chk_run_crds},
	{"resolve", FBC_LEVEL_FAILURE, chk_run_resolve},
	{"policy", FBC_LEVEL_FAILURE, chk_run_policy},
};

const char *const fbc_checks_ids[] = {"changes", "permissions", "bundles", "catalogs", "templates",
				      "graph",	 "crds",	"resolve", "policy",   NULL};

bool fbc_checks_id_known(const char *id)
{
	for (size_t i = 0; fbc_checks_ids[i]; i++)
		if (strcmp(fbc_checks_ids[i], id) == 0)
			return true;
	return false;
}

const char *fbc_check_conclusion_name(fbc_check_conclusion c)
{
	switch (c) {
	case FBC_CONCL_SUCCESS:
		return "success";
	case FBC_CONCL_WARNING:
		return "warning";
	case FBC_CONCL_SKIPPED:
		return "skipped";
	case FBC_CONCL_ACTION_REQUIRED:
		return "action_required";
	default:
		return "failure";
	}
}

const char *fbc_check_level_name(fbc_check_level l)
{
	return l == FBC_LEVEL_FAILURE ? "failure" : l == FBC_LEVEL_WARNING ? "warning" : "notice";
}

int chk_add(chk_out *o, fbc_check_level level, const char *path, int line, const char *code,
	    const char *fmt, ...)
{
	fbc_finding *f = fbc_vec_push(&o->findings);
	char msg[2048];
	va_list ap;

	if (!f)
		return FBC_ENOMEM;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	f->path = fbc_arena_strdup(o->arena, path ? path : "");
	f->line = line;
	f->level = level;
	f->code = fbc_arena_strdup(o->arena, code);
	f->message = fbc_arena_strdup(o->arena, msg);
	return f->path && f->code && f->message ? 0 : FBC_ENOMEM;
}

int chk_summary(chk_out *o, const char *fmt, ...)
{
	char msg[2048];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	o->summary = fbc_arena_strdup(o->arena, msg);
	return o->summary ? 0 : FBC_ENOMEM;
}

int chk_skip(chk_out *o, const char *fmt, ...)
{
	char msg[2048];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	o->summary = fbc_arena_strdup(o->arena, msg);
	o->forced = FBC_CONCL_SKIPPED;
	o->has_forced = true;
	return o->summary ? 0 : FBC_ENOMEM;
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* Read one settings file of the base commit; absent is fine (*found false). */
static int read_base(char **data, size_t *len, bool *found, chk_ctx *c, const char *path,
		     fbc_error *err)
{
	int rc = fbc_git_read(data, len, c->git, c->base, path, FBC_SETTINGS_MAX_BYTES, err);

	*found = rc == 0;
	if (rc == FBC_ENOTFOUND) {
		fbc_error_init(err);
		return 0;
	}
	return rc;
}

static bool has_operator_ci(chk_ctx *c, fbc_tree *t)
{
	fbc_vec v;
	bool found = false;
	fbc_error e2;

	fbc_vec_init(&v, sizeof(fbc_tree_entry));
	if (fbc_tree_list(t, &v, "operators", &e2) == 0)
		for (size_t i = 0; i < v.len && !found; i++) {
			fbc_tree_entry *e = FBC_VEC_AT(&v, fbc_tree_entry, i), ci = {0};
			char *p;

			if (e->kind != FBC_TREE_DIR || !(p = fbc_tree_join("operators", e->name)))
				continue;
			{
				char *q = fbc_tree_join(p, "ci.yaml");

				found = q && fbc_tree_stat(t, &ci, q, &e2) == 0;
				free(q);
			}
			fbc_tree_entry_dispose(&ci);
			free(p);
		}
	fbc_tree_entries_dispose(&v);
	return found;
}

/* Settings problems are findings of the check they feed, recorded here. */
typedef struct settings_problem {
	const char *path;
	int line;
	const char *message;
} settings_problem;

static int load_settings(chk_ctx *c, fbc_vec *problems, fbc_error *err)
{
	fbc_tree *base = NULL;
	char *data = NULL;
	size_t len = 0;
	bool found = false;
	fbc_error perr;
	int rc;
	static const char *const owners_files[] = {"CODEOWNERS", ".github/CODEOWNERS",
						   "docs/CODEOWNERS"};

	if ((rc = fbc_git_tree_open(&base, c->git, c->base, err)) != 0)
		return rc;
	c->settings.layout = FBC_LAYOUT_PLAIN;
	if ((rc = read_base(&data, &len, &found, c, ".fbcd.yaml", err)) != 0)
		goto done;
	if (found) {
		fbc_error_init(&perr);
		c->settings.layout = FBC_LAYOUT_FBCD;
		if (fbc_settings_parse_fbcd(&c->settings, c->arena, ".fbcd.yaml", data, len,
					    &perr) != 0) {
			settings_problem *p = fbc_vec_push(problems);

			if (p) {
				p->path = ".fbcd.yaml";
				p->message = fbc_arena_strdup(c->arena, perr.message);
			}
		}
	} else if (has_operator_ci(c, base)) {
		static fbc_settings_catalog cats[] = {{"catalogs/*", NULL}};

		c->settings.layout = FBC_LAYOUT_OPERATORS;
		c->settings.catalogs = cats;
		c->settings.n_catalogs = 1;
		c->settings.bundles = "operators/*/*";
		c->settings.templates = "operators/*/catalog-templates/*";
		c->settings.owners = "ci.yaml";
		c->settings.csv_metadata_from_v417 = true;
	}
	free(data);
	data = NULL;
	if (c->settings.layout != FBC_LAYOUT_PLAIN) {
		if ((rc = read_base(&data, &len, &found, c, "config.yaml", err)) != 0)
			goto done;
		fbc_error_init(&perr);
		if (found && fbc_settings_parse_config(&c->settings, c->arena, "config.yaml", data,
						       len, &perr) != 0) {
			settings_problem *p = fbc_vec_push(problems);

			if (p) {
				p->path = "config.yaml";
				p->message = fbc_arena_strdup(c->arena, perr.message);
			}
		}
		free(data);
		data = NULL;
	}
	if (!c->settings.owners || strcmp(c->settings.owners, "ci.yaml") != 0) {
		for (size_t i = 0; i < 3; i++) {
			const char *f =
				c->settings.owners && i == 0 ? c->settings.owners : owners_files[i];

			if ((rc = read_base(&data, &len, &found, c, f, err)) != 0)
				goto done;
			if (!found)
				continue;
			fbc_error_init(&perr);
			if (fbc_settings_parse_codeowners(&c->settings, c->arena, f, data, len,
							  &perr) != 0) {
				settings_problem *p = fbc_vec_push(problems);

				if (p) {
					p->path = f;
					p->message = fbc_arena_strdup(c->arena, perr.message);
				}
			}
			free(data);
			data = NULL;
			break;
		}
	}
done:
	free(data);
	fbc_tree_free(base);
	return rc;
}

static const char *repo_name_of(fbc_arena *a, const char *path)
{
	char buf[1024];
	size_t n = strlen(path);
	const char *slash;

	if (n >= sizeof(buf))
		n = sizeof(buf) - 1;
	memcpy(buf, path, n);
	buf[n] = '\0';
	while (n > 1 && buf[n - 1] == '/')
		buf[--n] = '\0';
	if (n > 4 && strcmp(buf + n - 4, ".git") == 0)
		buf[n -= 4] = '\0';
	while (n > 1 && buf[n - 1] == '/')
		buf[--n] = '\0';
	slash = strrchr(buf, '/');
	return fbc_arena_strdup(a, slash ? slash + 1 : buf);
}

static bool selected(const fbc_checks_options *o, const char *id)
{
	if (!o || !o->only || o->n_only == 0)
		return true;
	for (size_t i = 0; i < o->n_only; i++)
		if (strcmp(o->only[i], id) == 0)
			return true;
	return false;
}

/* The conclusion of one check from its findings, severity and forced state. */
static fbc_check_conclusion conclude(chk_out *o)
{
	fbc_check_conclusion c = FBC_CONCL_SUCCESS;

	if (o->has_forced && o->forced == FBC_CONCL_SKIPPED)
		return FBC_CONCL_SKIPPED;
	for (size_t i = 0; i < o->findings.len; i++) {
		const fbc_finding *f = FBC_VEC_AT(&o->findings, fbc_finding, i);

		if (f->level == FBC_LEVEL_FAILURE)
			return FBC_CONCL_FAILURE;
		if (f->level == FBC_LEVEL_WARNING)
			c = FBC_CONCL_WARNING;
	}
	if (o->has_forced)
		return o->forced;
	return c;
}

static const fbc_vec *list_of(chk_ctx *c, int which)
{
	switch (which) {
	case 0:
		return &c->packages;
	case 1:
		return &c->catalog_dirs;
	case 2:
		return &c->templates;
	default:
		return &c->other;
	}
}

static int copy_list(const char ***out, size_t *n, fbc_arena *a, const fbc_vec *v)
{
	*n = v->len;
	*out = NULL;
	if (!v->len)
		return 0;
	if (!(*out = fbc_arena_calloc(a, v->len, sizeof(char *))))
		return FBC_ENOMEM;
	/* the strings may live in the run's change list: copy them into the result */
	for (size_t i = 0; i < v->len; i++)
		if (!((*out)[i] = fbc_arena_strdup(a, *FBC_VEC_AT(v, const char *, i))))
			return FBC_ENOMEM;
	return 0;
}

static int fill_changes(fbc_checks_result *r, chk_ctx *c)
{
	fbc_vec add, mod, del;
	int rc = 0;

	fbc_vec_init(&add, sizeof(char *));
	fbc_vec_init(&mod, sizeof(char *));
	fbc_vec_init(&del, sizeof(char *));
	for (size_t i = 0; i < c->bundles.len && rc == 0; i++) {
		const chk_bundle *b = FBC_VEC_AT(&c->bundles, chk_bundle, i);

		rc = chk_strvec_add(b->state == CHK_B_ADDED	? &add
				    : b->state == CHK_B_DELETED ? &del
								: &mod,
				    b->dir);
	}
	chk_strvec_sort_unique(&add);
	chk_strvec_sort_unique(&mod);
	chk_strvec_sort_unique(&del);
	if (rc == 0)
		rc = copy_list(&r->changes.packages, &r->changes.n_packages, c->arena,
			       list_of(c, 0));
	if (rc == 0)
		rc = copy_list(&r->changes.catalogs, &r->changes.n_catalogs, c->arena,
			       list_of(c, 1));
	if (rc == 0)
		rc = copy_list(&r->changes.templates, &r->changes.n_templates, c->arena,
			       list_of(c, 2));
	if (rc == 0)
		rc = copy_list(&r->changes.other, &r->changes.n_other, c->arena, list_of(c, 3));
	if (rc == 0)
		rc = copy_list(&r->changes.bundles_added, &r->changes.n_bundles_added, c->arena,
			       &add);
	if (rc == 0)
		rc = copy_list(&r->changes.bundles_modified, &r->changes.n_bundles_modified,
			       c->arena, &mod);
	if (rc == 0)
		rc = copy_list(&r->changes.bundles_deleted, &r->changes.n_bundles_deleted, c->arena,
			       &del);
	fbc_vec_dispose(&add);
	fbc_vec_dispose(&mod);
	fbc_vec_dispose(&del);
	return rc;
}

/* Severity and waivers (§5, .fbcd.yaml `checks` and `waivers`, config.yaml `tests`). */
static int apply_settings(chk_ctx *c, const char *id, chk_out *o)
{
	fbc_severity sev = fbc_settings_severity(&c->settings, id);

	for (size_t i = 0; i < o->findings.len; i++) {
		fbc_finding *f = FBC_VEC_AT(&o->findings, fbc_finding, i);
		const char *pkg;

		if (f->level != FBC_LEVEL_FAILURE)
			continue;
		if (sev == FBC_SEV_WARN) {
			f->level = FBC_LEVEL_WARNING;
			continue;
		}
		pkg = f->path && *f->path ? chk_package_of(c, f->path) : NULL;
		if (pkg && fbc_settings_waived(&c->settings, id, pkg)) {
			f->level = FBC_LEVEL_WARNING;
			f->message = fbc_arena_printf(
				c->arena, "%s (waived for %s by the settings)", f->message, pkg);
			if (!f->message)
				return FBC_ENOMEM;
		}
	}
	return 0;
}

static void ctx_dispose(chk_ctx *c)
{
	fbc_tree_free(c->head_tree);
	fbc_tree_free(c->mb_tree);
	fbc_git_changes_dispose(&c->changes);
	fbc_vec_dispose(&c->files);
	fbc_vec_dispose(&c->bundles);
	fbc_vec_dispose(&c->packages);
	fbc_vec_dispose(&c->catalog_dirs);
	fbc_vec_dispose(&c->affected);
	fbc_vec_dispose(&c->templates);
	fbc_vec_dispose(&c->other);
	chk_catalogs_dispose(&c->head_cats, c->cache);
	chk_catalogs_dispose(&c->mb_cats, c->cache);
	chk_am_free(c->am_head);
	chk_am_free(c->am_mb);
	if (c->own_cache)
		fbc_checks_cache_free(c->cache);
}

int fbc_checks_run(fbc_checks_result **out, fbc_git *repo, const char *base, const char *head,
		   const fbc_checks_options *opts, fbc_error *err)
{
	static const fbc_checks_options none = {0};
	fbc_checks_result *r = NULL;
	chk_ctx c;
	fbc_vec problems;
	double t0 = now_ms();
	int rc;
	bool waiting = false, failed = false;

	memset(&c, 0, sizeof(c));
	fbc_vec_init(&c.changes, sizeof(fbc_git_change));
	fbc_vec_init(&c.files, sizeof(chk_file));
	fbc_vec_init(&c.bundles, sizeof(chk_bundle));
	fbc_vec_init(&c.packages, sizeof(char *));
	fbc_vec_init(&c.catalog_dirs, sizeof(char *));
	fbc_vec_init(&c.affected, sizeof(char *));
	fbc_vec_init(&c.templates, sizeof(char *));
	fbc_vec_init(&c.other, sizeof(char *));
	fbc_strmap_init(&c.head_cats);
	fbc_strmap_init(&c.mb_cats);
	fbc_vec_init(&problems, sizeof(settings_problem));
	if (!opts)
		opts = &none;
	if (!(r = calloc(1, sizeof(*r))) || !(r->priv = calloc(1, sizeof(*r->priv))) ||
	    fbc_arena_create(&r->priv->arena, 0) != 0) {
		rc = fbc_error_set(err, FBC_ENOMEM, "", "out of memory");
		goto done;
	}
	c.git = repo;
	c.arena = r->priv->arena;
	c.opts = opts;
	c.cache = opts->cache;
	if (c.cache) {
		size_t n, bytes;

		fbc_checks_cache_stats(c.cache, &n, &bytes, &r->cache_hits, &r->cache_misses);
		r->cache_used = true;
	}
	if (!c.cache) {
		if ((rc = fbc_checks_cache_create(&c.cache, (size_t)-1 / 2, NULL, err)) != 0)
			goto done;
		c.own_cache = true;
	}
	c.repo_name = repo_name_of(c.arena, fbc_git_path(repo));
	if ((rc = fbc_git_resolve(c.base, repo, base, err)) != 0 ||
	    (rc = fbc_git_resolve(c.head, repo, head, err)) != 0 ||
	    (rc = fbc_git_merge_base(c.mb, repo, c.base, c.head, err)) != 0 ||
	    (rc = fbc_git_tree_open(&c.head_tree, repo, c.head, err)) != 0 ||
	    (rc = fbc_git_tree_open(&c.mb_tree, repo, c.mb, err)) != 0 ||
	    (rc = load_settings(&c, &problems, err)) != 0 ||
	    (rc = fbc_git_diff(&c.changes, repo, c.mb, c.head, err)) != 0 ||
	    (rc = chk_changes_map(&c, err)) != 0)
		goto done;
	memcpy(r->base, c.base, sizeof(r->base));
	memcpy(r->head, c.head, sizeof(r->head));
	memcpy(r->merge_base, c.mb, sizeof(r->merge_base));
	r->author = fbc_arena_strdup(c.arena, opts->author ? opts->author : "");
	r->layout = c.settings.layout == FBC_LAYOUT_OPERATORS ? "operators"
		    : c.settings.layout == FBC_LAYOUT_FBCD    ? "fbcd"
							      : "plain";
	if ((rc = fill_changes(r, &c)) != 0 ||
	    !(r->checks = fbc_arena_calloc(c.arena, sizeof(table) / sizeof(table[0]),
					   sizeof(fbc_check_result)))) {
		rc = fbc_error_set(err, FBC_ENOMEM, "", "out of memory");
		goto done;
	}
	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
		chk_out o = {0};
		fbc_check_result *cr;
		double t1 = now_ms();

		if (!selected(opts, table[i].id))
			continue;
		o.arena = c.arena;
		o.check_id = table[i].id;
		fbc_vec_init(&o.findings, sizeof(fbc_finding));
		if (fbc_settings_severity(&c.settings, table[i].id) == FBC_SEV_OFF) {
			rc = chk_skip(&o,
				      "turned off by the repository's .fbcd.yaml (checks.%s: off)",
				      table[i].id);
		} else {
			/* a settings file that does not parse fails the checks it feeds */
			for (size_t k = 0; k < problems.len; k++) {
				const settings_problem *p =
					FBC_VEC_AT(&problems, settings_problem, k);

				if ((strcmp(table[i].id, "changes") == 0 ||
				     strcmp(table[i].id, "permissions") == 0) &&
				    (rc = chk_add(&o, FBC_LEVEL_FAILURE, p->path, p->line,
						  "settings", "%s (read from the base commit): %s",
						  p->path, p->message ? p->message : "invalid")))
					break;
			}
			if (rc == 0)
				rc = table[i].fn(&c, &o, err);
			if (rc == 0)
				rc = apply_settings(&c, table[i].id, &o);
		}
		if (rc) {
			fbc_vec_dispose(&o.findings);
			goto done;
		}
		cr = &r->checks[r->n_checks++];
		cr->id = table[i].id;
		cr->conclusion = conclude(&o);
		cr->n_findings = o.findings.len;
		if (o.findings.len) {
			cr->findings =
				fbc_arena_calloc(c.arena, o.findings.len, sizeof(fbc_finding));
			if (!cr->findings) {
				fbc_vec_dispose(&o.findings);
				rc = fbc_error_set(err, FBC_ENOMEM, "", "out of memory");
				goto done;
			}
			memcpy(cr->findings, o.findings.items,
			       o.findings.len * sizeof(fbc_finding));
		}
		fbc_vec_dispose(&o.findings);
		if (!o.summary) {
			size_t nf = 0, nw = 0;

			for (size_t k = 0; k < cr->n_findings; k++)
				nf += cr->findings[k].level == FBC_LEVEL_FAILURE,
					nw += cr->findings[k].level == FBC_LEVEL_WARNING;
			o.summary = fbc_arena_printf(c.arena, "%zu failures, %zu warnings", nf, nw);
		}
		cr->summary = o.summary;
		cr->ms = now_ms() - t1;
		if (cr->conclusion == FBC_CONCL_FAILURE)
			failed = true;
		if (cr->conclusion == FBC_CONCL_ACTION_REQUIRED)
			waiting = true;
	}
	r->conclusion = failed	  ? FBC_CONCL_FAILURE
			: waiting ? FBC_CONCL_ACTION_REQUIRED
				  : FBC_CONCL_SUCCESS;
	r->total_ms = now_ms() - t0;
	if (r->cache_used) {
		size_t n, bytes, hits, misses;

		/* this run's share of the shared counters (other runs may add to them too) */
		fbc_checks_cache_stats(c.cache, &n, &bytes, &hits, &misses);
		r->cache_hits = hits - r->cache_hits;
		r->cache_misses = misses - r->cache_misses;
	}
	*out = r;
	r = NULL;
	rc = 0;
done:
	fbc_vec_dispose(&problems);
	ctx_dispose(&c);
	fbc_checks_result_free(r);
	return rc;
}

void fbc_checks_result_free(fbc_checks_result *r)
{
	if (!r)
		return;
	if (r->priv) {
		fbc_arena_free(r->priv->arena);
		free(r->priv);
	}
	free(r);
}

int fbc_checks_result_exit(const fbc_checks_result *r)
{
	return r->conclusion == FBC_CONCL_SUCCESS ? 0 : 1;
}
