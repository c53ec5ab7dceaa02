/*
 * Classic (OLM v0) requests as subscriptions (spec §2.2 steps 1-2, §2.7):
 * candidates of the request's catalog(s), package and channel in the order
 * default channel, channel name, chain position; successors of the installed
 * bundle (replaces / skips / skipRange) with the installed bundle itself last;
 * unreferenced installed bundles pinned.
 */
#include "service/resolver/internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int oom(r_ctx *c)
{
	return fbc_error_set(c->err, FBC_ENOMEM, NULL, "out of memory");
}

static void free_range(void *p)
{
	fbc_semver_range_free(p);
}

/* Labels, the installed bundle each request refers to (same package). */
int r_prepare_requests(r_ctx *c)
{
	const fbc_resolve_request *req = c->req;

	for (size_t i = 0; i < req->n_requests; i++) {
		const fbc_resolve_req *r = &req->requests[i];
		fbc_buf b;
		int n = 0;

		fbc_buf_init(&b, 16384);
		fbc_buf_printf(&b, "request for package %s", r->package);
		if (r->channel)
			fbc_buf_printf(&b, "%schannel %s", n++ ? ", " : " (", r->channel);
		if (r->catalog)
			fbc_buf_printf(&b, "%scatalog %s", n++ ? ", " : " (", r->catalog);
		if (r->version_range)
			fbc_buf_printf(&b, "%sversion range \"%s\"", n++ ? ", " : " (",
				       r->version_range);
		if (r->starting_csv)
			fbc_buf_printf(&b, "%sstartingCSV %s", n++ ? ", " : " (", r->starting_csv);
		if (n)
			fbc_buf_puts(&b, ")");
		c->req_label[i] = fbc_arena_strdup(c->arena, b.data ? b.data : "");
		fbc_buf_dispose(&b);
		if (!c->req_label[i])
			return oom(c);
		c->req_current[i] = -1;
		for (size_t k = 0; k < req->n_installed; k++)
			if (strcmp(req->installed[k].package, r->package) == 0) {
				c->req_current[i] = (int)k;
				c->inst_req[k] = (int)i;
			}
		if (r->catalog) {
			size_t k;
			for (k = 0; k < req->n_catalogs; k++)
				if (strcmp(req->catalogs[k].name, r->catalog) == 0)
					break;
			if (k == req->n_catalogs)
				return r_input_error(c,
						     "catalog \"%s\" named by %s is not one of "
						     "the request's catalogs",
						     r->catalog, c->req_label[i]);
		}
	}
	return 0;
}

/* Every installed bundle is a variable; unreferenced ones are pinned. */
int r_add_installed_vars(r_ctx *c)
{
	for (size_t k = 0; k < c->req->n_installed; k++) {
		const r_entry *e;
		int v, rc;

		if ((rc = r_var_for_entry(c, c->inst_entry[k], &v)) < 0)
			return rc;
		e = R_ENT(c, c->inst_entry[k]);
		if (c->inst_req[k] >= 0)
			continue;
		rc = r_con_add(c, C_MANDATORY, v, NULL, 0,
			       fbc_arena_printf(c->arena,
						"installed bundle %s of package %s exists and is "
						"not referenced by a request, so it stays",
						e->id, e->package),
			       NULL, NULL);
		if (rc < 0)
			return rc;
	}
	return 0;
}

/* Anchors in a deterministic order (spec §7.1): requests, then pinned installs. */
int r_add_anchors(r_ctx *c, const int *req_vars)
{
	for (size_t i = 0; i < c->req->n_requests; i++) {
		int *a = fbc_vec_push(&c->anchors);
		if (!a)
			return oom(c);
		*a = req_vars[i];
	}
	for (size_t k = 0; k < c->req->n_installed; k++) {
		int *a;
		if (c->inst_req[k] >= 0)
			continue;
		if (!(a = fbc_vec_push(&c->anchors)))
			return oom(c);
		*a = R_ENT(c, c->inst_entry[k])->var;
	}
	return 0;
}

static bool is_successor(const r_entry *e, const r_entry *cur)
{
	const fbc_channel_entry *ce = e->ce;
	fbc_semver_range *r = NULL;
	bool ok = false;

	if (!ce)
		return false;
	if (strcmp(ce->replaces, cur->name) == 0)
		return true;
	for (size_t i = 0; i < ce->n_skips; i++)
		if (strcmp(ce->skips[i], cur->name) == 0)
			return true;
	/* An unparsable skipRange is no range (upstream ignores the error). */
	if (*ce->skip_range && cur->has_ver &&
	    fbc_semver_range_parse_blang(&r, ce->skip_range, NULL) == 0) {
		ok = fbc_semver_range_contains(r, &cur->ver);
		fbc_semver_range_free(r);
	}
	return ok;
}

/* The request variable with Mandatory and Dependency(candidates..., current). */
int r_request_var(r_ctx *c, size_t i, const int *ents, size_t n, bool allow_stay,
		  const char *empty_msg, int *out)
{
	const char *label = c->req_label[i];
	int cur = c->req_current[i], cur_var = -1, v, rc;
	int *lits = calloc(n + 2, sizeof(int));
	size_t nl = 0;
	const char *msg, *why;

	if (!lits)
		return oom(c);
	if ((rc = r_var_new(c, V_REQ, (int)i, &v)) < 0)
		goto done;
	if (cur >= 0)
		cur_var = R_ENT(c, c->inst_entry[cur])->var;
	for (size_t j = 0; j < n; j++) {
		int cv;
		if ((rc = r_var_for_entry(c, ents[j], &cv)) < 0)
			goto done;
		if (cv == cur_var)
			continue;
		lits[nl++] = cv;
		if (cur_var >= 0) {
			rc = r_con_add(c, C_CONFLICT, cv, &cur_var, 1,
				       fbc_arena_printf(c->arena,
							"%s conflicts with installed %s (it would "
							"replace it)",
							R_ENT(c, ents[j])->id,
							R_ENT(c, c->inst_entry[cur])->id),
				       NULL, NULL);
			if (rc < 0)
				goto done;
		}
	}
	if (cur_var >= 0 && allow_stay)
		lits[nl++] = cur_var;
	rc = r_con_add(c, C_MANDATORY, v, NULL, 0, fbc_arena_printf(c->arena, "%s is made", label),
		       NULL, NULL);
	if (rc < 0)
		goto done;
	if (nl == 0)
		msg = empty_msg;
	else if (nl == 1)
		msg = fbc_arena_printf(c->arena, "%s requires %s", label,
				       r_join_ids(c, lits, nl, " or "));
	else
		msg = fbc_arena_printf(c->arena, "%s requires at least one of %s", label,
				       r_join_ids(c, lits, nl, " or "));
	if (cur >= 0)
		why = fbc_arena_printf(c->arena, "requested by %s (upgrade of installed %s)", label,
				       c->req->installed[cur].bundle);
	else
		why = fbc_arena_printf(c->arena, "requested by %s", label);
	rc = r_con_add(c, C_DEPENDENCY, v, lits, nl, msg, why, NULL);
	if (rc < 0)
		goto done;
	*out = v;
done:
	free(lits);
	return rc;
}

static int request_candidates(r_ctx *c, size_t i, fbc_vec *out, const char **empty_msg)
{
	const fbc_resolve_req *r = &c->req->requests[i];
	const char *label = c->req_label[i];
	bool found_pkg = false, found_ch = false, found_name = false;
	int cur = c->req_current[i];
	fbc_semver_range *range = NULL;
	size_t k, j, w;
	int rc = 0;

	if (r->version_range) {
		fbc_error e;
		fbc_error_init(&e);
		rc = fbc_semver_range_parse_masterminds(&range, r->version_range, &e);
		if (rc == FBC_ENOMEM)
			return oom(c);
		if (rc < 0)
			return r_input_error(c, "invalid version range \"%s\" in %s: %s",
					     r->version_range, label, e.message);
		if (fbc_arena_defer(c->arena, free_range, range) < 0)
			return oom(c);
	}
	for (k = 0; k < c->req->n_catalogs; k++) {
		const fbc_resolve_catalog *rc_cat = &c->req->catalogs[k];
		const fbc_package *pkg;

		if (r->catalog && strcmp(r->catalog, rc_cat->name) != 0)
			continue;
		pkg = fbc_catalog_package(rc_cat->catalog, r->package);
		if (!pkg)
			continue;
		found_pkg = true;
		for (j = 0; j < pkg->n_channels; j++) {
			const fbc_channel *ch = pkg->channels[j];
			const r_chain *chain;

			if (r->channel && strcmp(r->channel, ch->name) != 0)
				continue;
			found_ch = true;
			if ((rc = r_chain_get(c, (int)k, ch, &chain)) < 0)
				return rc;
			if (chain->error)
				return r_input_error(c, "%s: %s", label, chain->error);
			for (w = 0; w < chain->n; w++) {
				const r_entry *e = R_ENT(c, chain->ents[w]);
				int *p;

				if (r->starting_csv && cur < 0 &&
				    strcmp(e->name, r->starting_csv) != 0)
					continue;
				found_name = true;
				if (range &&
				    !(e->has_ver && fbc_semver_range_contains(range, &e->ver)))
					continue;
				if (!(p = fbc_vec_push(out)))
					return oom(c);
				*p = chain->ents[w];
			}
		}
	}
	if (!found_pkg)
		return r_input_error(c,
				     "no operators found in package %s in the catalog%s "
				     "referenced by %s",
				     r->package, r->catalog ? "" : "s", label);
	if (!found_ch)
		return r_input_error(c,
				     "no operators found in channel %s of package %s in the "
				     "catalog%s referenced by %s",
				     r->channel, r->package, r->catalog ? "" : "s", label);
	if (r->starting_csv && cur < 0 && !found_name)
		return r_input_error(c,
				     "no operators found with name %s in channel %s of package %s "
				     "in the catalog%s referenced by %s",
				     r->starting_csv, r->channel ? r->channel : "(any)", r->package,
				     r->catalog ? "" : "s", label);
	r_sort_entries(c, out->items, out->len, -1);
	if (cur >= 0) {
		const r_entry *ce = R_ENT(c, c->inst_entry[cur]);
		size_t n = 0;
		for (w = 0; w < out->len; w++) {
			int e = *FBC_VEC_AT(out, int, w);
			if (is_successor(R_ENT(c, e), ce))
				*FBC_VEC_AT(out, int, n++) = e;
		}
		out->len = n;
	}
	if (r->version_range)
		*empty_msg = fbc_arena_printf(c->arena,
					      "no operators found matching the criteria of %s: no "
					      "bundle of package %s has a version in range \"%s\"",
					      label, r->package, r->version_range);
	else
		*empty_msg = fbc_arena_printf(
			c->arena, "no operators found matching the criteria of %s", label);
	return *empty_msg ? 0 : oom(c);
}

int r_classic_requests(r_ctx *c)
{
	int *req_vars = calloc(c->req->n_requests + 1, sizeof(int));
	fbc_vec ents;
	int rc;

	fbc_vec_init(&ents, sizeof(int));
	if (!req_vars)
		return oom(c);
	if ((rc = r_prepare_requests(c)) < 0 || (rc = r_add_installed_vars(c)) < 0)
		goto done;
	for (size_t i = 0; i < c->req->n_requests; i++) {
		const char *empty;

		ents.len = 0;
		if ((rc = request_candidates(c, i, &ents, &empty)) < 0)
			goto done;
		if ((rc = r_request_var(c, i, ents.items, ents.len, true, empty, &req_vars[i])) < 0)
			goto done;
	}
	if ((rc = r_add_anchors(c, req_vars)) < 0)
		goto done;
	rc = r_classic_finish(c);
done:
	fbc_vec_dispose(&ents);
	free(req_vars);
	return rc;
}
