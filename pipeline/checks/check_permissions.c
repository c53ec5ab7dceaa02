/* `permissions` (§5.2): owners from the base commit; the author or an /approve of an owner. */
#include "pipeline/checks/internal.h"

#include <stdlib.h>
#include <string.h>

/* One unit that needs an owner: a package, or the repository (maintainers). */
typedef struct unit {
	const char *name;	   /* package, or NULL for repository files */
	const char *first_path;	   /* first changed file */
	const char *const *owners; /* who may approve */
	size_t n_owners;
	const char *why; /* why these owners */
} unit;

static bool approved(const chk_ctx *c, const char *const *owners, size_t n)
{
	if (fbc_login_in(c->opts->author, owners, n))
		return true;
	for (size_t i = 0; i < c->opts->n_approved_by; i++)
		if (fbc_login_in(c->opts->approved_by[i], owners, n))
			return true;
	return false;
}

static const char *owner_list(fbc_arena *a, const char *const *owners, size_t n)
{
	fbc_buf b;
	const char *s;

	fbc_buf_init(&b, 8192);
	for (size_t i = 0; i < n; i++)
		fbc_buf_printf(&b, "%s@%s", i ? ", " : "", owners[i]);
	s = fbc_arena_strdup(a, b.data ? b.data : "(nobody)");
	fbc_buf_dispose(&b);
	return s;
}

static int operators_units(fbc_vec *units, chk_ctx *c, fbc_error *err)
{
	const fbc_settings *s = &c->settings;
	bool repo_files = false;
	const char *repo_first = NULL;

	for (size_t i = 0; i < c->files.len; i++) {
		const chk_file *f = FBC_VEC_AT(&c->files, chk_file, i);

		if (!f->package && !repo_files) {
			repo_files = true;
			repo_first = f->path;
		}
	}
	for (size_t i = 0; i < c->packages.len; i++) {
		const char *pkg = *FBC_VEC_AT(&c->packages, const char *, i);
		char *path = fbc_tree_join("operators", pkg),
		     *ci = path ? fbc_tree_join(path, "ci.yaml") : NULL;
		char *data = NULL;
		size_t len = 0;
		fbc_ci_yaml y = {0};
		fbc_error e2;
		unit *u = fbc_vec_push(units);
		int rc;

		free(path);
		fbc_error_init(&e2);
		if (!u || !ci) {
			free(ci);
			return fbc_error_set(err, FBC_ENOMEM, pkg, "out of memory");
		}
		u->name = pkg;
		for (size_t k = 0; k < c->files.len; k++) {
			const chk_file *f = FBC_VEC_AT(&c->files, chk_file, k);

			if (f->package && strcmp(f->package, pkg) == 0) {
				u->first_path = f->path;
				break;
			}
		}
		rc = fbc_git_read(&data, &len, c->git, c->base, ci, FBC_SETTINGS_MAX_BYTES, &e2);
		if (rc == 0 && fbc_settings_parse_ci(&y, c->arena, ci, data, len, &e2) == 0 &&
		    y.n_reviewers > 0) {
			u->owners = y.reviewers;
			u->n_owners = y.n_reviewers;
			u->why = fbc_arena_printf(c->arena, "reviewers of %s at the base commit",
						  ci);
		} else {
			u->owners = s->maintainers;
			u->n_owners = s->n_maintainers;
			u->why = rc == FBC_ENOTFOUND ? "a new package needs a repository maintainer"
				 : rc != 0 || e2.code
					 ? fbc_arena_printf(
						   c->arena,
						   "%s cannot be read at the base commit (%s); "
						   "a repository maintainer must approve",
						   ci, e2.message)
					 : "the package has no reviewers; a repository maintainer "
					   "must approve";
		}
		free(data);
		free(ci);
		fbc_error_init(&e2);
	}
	if (repo_files) {
		unit *u = fbc_vec_push(units);

		if (!u)
			return fbc_error_set(err, FBC_ENOMEM, "", "out of memory");
		u->name = NULL;
		u->first_path = repo_first;
		u->owners = s->maintainers;
		u->n_owners = s->n_maintainers;
		u->why = "files outside packages need a repository maintainer (config.yaml)";
	}
	return 0;
}

static int codeowners_units(fbc_vec *units, chk_ctx *c, fbc_error *err)
{
	for (size_t i = 0; i < c->files.len; i++) {
		const chk_file *f = FBC_VEC_AT(&c->files, chk_file, i);
		const fbc_owner_rule *r = fbc_settings_owners_of(&c->settings, f->path);
		unit *u;

		if (!r || r->n_owners == 0)
			continue; /* GitHub: a file without code owners needs no owner review */
		if (!(u = fbc_vec_push(units)))
			return fbc_error_set(err, FBC_ENOMEM, "", "out of memory");
		u->name = f->path;
		u->first_path = f->path;
		u->owners = r->owners;
		u->n_owners = r->n_owners;
		u->why = fbc_arena_printf(c->arena, "%s line %d (%s) is the last rule matching it",
					  c->settings.owners_file, r->line, r->pattern);
	}
	return 0;
}

int chk_run_permissions(chk_ctx *c, chk_out *o, fbc_error *err)
{
	fbc_vec units;
	size_t waiting = 0;
	int rc;
	bool by_ci = c->settings.owners && strcmp(c->settings.owners, "ci.yaml") == 0;

	fbc_vec_init(&units, sizeof(unit));
	if (by_ci)
		rc = operators_units(&units, c, err);
	else if (c->settings.owner_rules || c->settings.n_owner_rules)
		rc = codeowners_units(&units, c, err);
	else {
		rc = chk_summary(o, "no owners are configured (no ci.yaml layout, no CODEOWNERS): "
				    "anyone may change this repository");
		goto done;
	}
	if (rc)
		goto done;
	for (size_t i = 0; i < units.len; i++) {
		const unit *u = FBC_VEC_AT(&units, unit, i);
		const char *who;

		if (approved(c, u->owners, u->n_owners))
			continue;
		waiting++;
		who = owner_list(c->arena, u->owners, u->n_owners);
		if ((rc = chk_add(o, FBC_LEVEL_NOTICE, u->first_path, 0, "approval-needed",
				  "%s%s%s needs an approval: %s; %s may comment /approve",
				  u->name ? "change to " : "repository files",
				  u->name ? (by_ci ? "package " : "") : "", u->name ? u->name : "",
				  u->why, who)))
			goto done;
	}
	if (waiting) {
		o->forced = FBC_CONCL_ACTION_REQUIRED;
		o->has_forced = true;
		rc = chk_summary(o, "%zu of %zu owned parts wait for an owner's /approve%s%s",
				 waiting, units.len, c->opts->author ? "; author " : "",
				 c->opts->author ? c->opts->author : "");
	} else {
		rc = chk_summary(o, "approved: %zu owned parts, each by its owner or an /approve",
				 units.len);
	}
done:
	fbc_vec_dispose(&units);
	return rc;
}
