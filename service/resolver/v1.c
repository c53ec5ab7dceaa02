/*
 * v1 (operator-controller today, spec §1.2 and §3.2): per request, filter the
 * package's bundles by channel, Masterminds version range and successors of
 * the installed bundle, sort (deprecated last, version desc, release desc),
 * pick across catalogs by priority (a tie at the top is an error). Plain v1
 * rejects bundles with dependency properties; v1-deps hands the chosen
 * bundles to the classic machinery for their dependencies.
 */
#include "service/resolver/internal.h"

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

static bool in_channel(const fbc_bundle *b, const char *channel)
{
	for (size_t i = 0; i < b->n_channels; i++)
		if (strcmp(b->channels[i]->name, channel) == 0)
			return true;
	return false;
}

static bool is_deprecated(const fbc_bundle *b)
{
	const fbc_deprecation *d = b->pkg ? b->pkg->deprecation : NULL;

	for (size_t i = 0; d && i < d->n_entries; i++)
		if (strcmp(d->entries[i].schema, "olm.bundle") == 0 &&
		    strcmp(d->entries[i].name, b->name) == 0)
			return true;
	return false;
}

/* §3.2: an entry of b (in the considered channels) names the installed bundle
 * in replaces or skips, or its skipRange (blang) holds the installed version. */
static bool v1_successor(const fbc_bundle *b, const char *channel, const char *cur_name,
			 const fbc_semver *cur_ver)
{
	for (size_t i = 0; i < b->n_channels; i++) {
		const fbc_channel *ch = b->channels[i];

		if (channel && strcmp(ch->name, channel) != 0)
			continue;
		for (size_t j = 0; j < ch->n_entries; j++) {
			const fbc_channel_entry *e = &ch->entries[j];
			fbc_semver_range *r = NULL;

			if (e->bundle != b && strcmp(e->name, b->name) != 0)
				continue;
			if (strcmp(e->replaces, cur_name) == 0)
				return true;
			for (size_t k = 0; k < e->n_skips; k++)
				if (strcmp(e->skips[k], cur_name) == 0)
					return true;
			if (*e->skip_range &&
			    fbc_semver_range_parse_blang(&r, e->skip_range, NULL) == 0) {
				bool ok = fbc_semver_range_contains(r, cur_ver);
				fbc_semver_range_free(r);
				if (ok)
					return true;
			}
		}
	}
	return false;
}

#define RELEASE_MAX 256

/* §3.2: a bundle's release is its olm.package `release`, or else the
 * registry+v1 build metadata of its version (`1.0.0+2` is release 2) when
 * that parses as a release; "" (lowest) otherwise. buf holds the copy. */
static const char *v1_release(const fbc_bundle *b, char buf[RELEASE_MAX])
{
	if (b->release && *b->release)
		return b->release;
	if (b->semver.build && b->semver.build_len < RELEASE_MAX &&
	    fbc_release_validate(b->semver.build, b->semver.build_len, NULL) == 0) {
		memcpy(buf, b->semver.build, b->semver.build_len);
		buf[b->semver.build_len] = 0;
		return buf;
	}
	return "";
}

/* Better = not deprecated, higher version, higher release (steps 2-3). */
static int v1_cmp(const fbc_bundle *a, const fbc_bundle *b)
{
	bool da = is_deprecated(a), db = is_deprecated(b);
	char ra[RELEASE_MAX], rb[RELEASE_MAX];
	int r;

	if (da != db)
		return da ? 1 : -1;
	if ((r = fbc_semver_compare(&a->semver, &b->semver)) != 0)
		return -r;
	return -fbc_release_compare(v1_release(a, ra), v1_release(b, rb));
}

typedef struct v1_pick {
	int cat;
	const fbc_bundle *b;
} v1_pick;

static int v1_select(r_ctx *c, size_t i, bool with_deps, v1_pick *out)
{
	const fbc_resolve_req *r = &c->req->requests[i];
	int cur = c->req_current[i];
	fbc_semver cur_ver;
	const char *cur_rel = "";
	fbc_semver_range *range = NULL;
	v1_pick *best = NULL;
	size_t n_best = 0;
	int rc = 0;
	bool successors = cur >= 0 && r->policy != FBC_RESOLVE_SELF_CERTIFIED;

	if (cur >= 0 && (rc = r_parse_installed_version(c, cur, &cur_ver, &cur_rel, true)) < 0)
		return rc;
	if (r->version_range && strlen(r->version_range) > 64)
		return r_input_error(c,
				     "version range of %s is longer than 64 characters (the "
				     "ClusterExtension limit)",
				     c->req_label[i]);
	if (r->version_range) {
		fbc_error e;
		fbc_error_init(&e);
		rc = fbc_semver_range_parse_masterminds(&range, r->version_range, &e);
		if (rc == FBC_ENOMEM)
			return oom(c);
		if (rc < 0)
			return r_input_error(c, "invalid version range \"%s\" in %s: %s",
					     r->version_range, c->req_label[i], e.message);
		if (fbc_arena_defer(c->arena, free_range, range) < 0)
			return oom(c);
	}
	best = calloc(c->req->n_catalogs + 1, sizeof(*best));
	if (!best)
		return oom(c);
	for (size_t k = 0; k < c->req->n_catalogs; k++) {
		const fbc_package *pkg;
		const fbc_bundle *top = NULL;

		if (r->catalog && strcmp(r->catalog, c->req->catalogs[k].name) != 0)
			continue;
		pkg = fbc_catalog_package(c->req->catalogs[k].catalog, r->package);
		for (size_t j = 0; pkg && j < pkg->n_bundles; j++) {
			const fbc_bundle *b = pkg->bundles[j];
			fbc_semver plain;

			/* Channel-less bundles count only without a channel filter,
			 * and never for v1-deps (a solver entry needs a channel). */
			if (!b->has_semver || (!b->n_channels && (r->channel || with_deps)))
				continue;
			if (r->channel && !in_channel(b, r->channel))
				continue;
			plain = b->semver;
			plain.build = NULL;
			plain.build_len = 0;
			if (range && !fbc_semver_range_contains(range, &plain))
				continue;
			if (successors) {
				char rel[RELEASE_MAX];
				bool self = fbc_semver_compare(&b->semver, &cur_ver) == 0 &&
					    fbc_release_compare(v1_release(b, rel), cur_rel) == 0;
				if (!self && !v1_successor(b, r->channel,
							   c->req->installed[cur].bundle, &cur_ver))
					continue;
			}
			if (!top || v1_cmp(b, top) < 0)
				top = b;
		}
		if (top) {
			best[n_best].cat = (int)k;
			best[n_best].b = top;
			n_best++;
		}
	}
	if (n_best == 0) {
		fbc_buf b;

		fbc_buf_init(&b, 16384);
		if (successors)
			fbc_buf_printf(&b,
				       "error upgrading from currently installed version \"%s\": ",
				       c->req->installed[cur].version);
		fbc_buf_printf(&b, "no bundles found for package \"%s\"", r->package);
		if (r->version_range)
			fbc_buf_printf(&b, " matching version \"%s\"", r->version_range);
		if (r->channel)
			fbc_buf_printf(&b, " in channels [%s]", r->channel);
		rc = r_input_error(c, "%s (%s)", b.data ? b.data : "", c->req_label[i]);
		fbc_buf_dispose(&b);
		c->fail_kind = "conflict";
		goto done;
	}
	{
		/* A non-deprecated best beats deprecated ones regardless of priority;
		 * then the highest priority; a tie at the top is ambiguous. */
		bool any_ok = false;
		size_t top = SIZE_MAX, ties = 0;
		fbc_buf names;

		for (size_t j = 0; j < n_best; j++)
			if (!is_deprecated(best[j].b))
				any_ok = true;
		for (size_t j = 0; j < n_best; j++) {
			if (any_ok && is_deprecated(best[j].b))
				continue;
			if (top == SIZE_MAX || c->req->catalogs[best[j].cat].priority >
						       c->req->catalogs[best[top].cat].priority)
				top = j;
		}
		fbc_buf_init(&names, 16384);
		for (size_t j = 0; j < n_best; j++) {
			if (any_ok && is_deprecated(best[j].b))
				continue;
			if (c->req->catalogs[best[j].cat].priority ==
			    c->req->catalogs[best[top].cat].priority) {
				fbc_buf_printf(&names, "%s%s", ties ? " " : "",
					       c->req->catalogs[best[j].cat].name);
				ties++;
			}
		}
		if (ties > 1) {
			rc = r_input_error(c,
					   "found bundles for package \"%s\" in multiple catalogs "
					   "with the same priority [%s] (%s)",
					   r->package, names.data, c->req_label[i]);
			fbc_buf_dispose(&names);
			goto done;
		}
		fbc_buf_dispose(&names);
		*out = best[top];
	}
done:
	free(best);
	return rc;
}

static const char *dependency_property(const fbc_bundle *b)
{
	static const char *const types[] = {"olm.package.required", "olm.gvk.required",
					    "olm.constraint"};
	for (size_t i = 0; i < b->n_properties; i++)
		for (size_t t = 0; t < 3; t++)
			if (strcmp(b->properties[i].type, types[t]) == 0)
				return types[t];
	return NULL;
}

/* The channel to report: the requested one, else the default, else the first by name. */
static const fbc_channel *report_channel(const fbc_bundle *b, const char *channel)
{
	const fbc_channel *first = NULL;

	for (size_t i = 0; i < b->n_channels; i++) {
		const fbc_channel *ch = b->channels[i];
		if (channel && strcmp(ch->name, channel) != 0)
			continue;
		if (ch->pkg && ch->pkg->default_channel &&
		    strcmp(ch->pkg->default_channel, ch->name) == 0)
			return ch;
		if (!first)
			first = ch;
	}
	return first;
}

static int v1_plain_result(r_ctx *c, const v1_pick *picks)
{
	fbc_resolve_result *res = c->res;
	const fbc_resolve_request *req = c->req;
	size_t n = req->n_requests + req->n_installed + 1;

	res->selected = fbc_arena_calloc(c->arena, n, sizeof(*res->selected));
	res->steps = fbc_arena_calloc(c->arena, n, sizeof(*res->steps));
	if (!res->selected || !res->steps)
		return oom(c);
	for (size_t k = 0; k < req->n_installed; k++) {
		const fbc_resolve_installed *in = &req->installed[k];
		int ri = c->inst_req[k];
		fbc_resolve_selected *s;

		if (ri >= 0 && strcmp(picks[ri].b->name, in->bundle) != 0)
			continue; /* replaced */
		s = &res->selected[res->n_selected++];
		s->bundle = in->bundle;
		s->package = in->package;
		s->version = in->version;
		s->catalog = "@existing";
		s->channel = "";
		s->installed = true;
	}
	for (size_t i = 0; i < req->n_requests; i++) {
		const fbc_bundle *b = picks[i].b;
		const fbc_channel *ch = report_channel(b, req->requests[i].channel);
		int cur = c->req_current[i];
		fbc_resolve_selected *s;
		fbc_resolve_step *st;

		if (cur >= 0 && strcmp(req->installed[cur].bundle, b->name) == 0)
			continue;
		s = &res->selected[res->n_selected++];
		s->bundle = b->name;
		s->package = b->package;
		s->version = b->version;
		s->catalog = req->catalogs[picks[i].cat].name;
		s->channel = ch ? ch->name : "";
		st = &res->steps[res->n_steps++];
		st->bundle = s->bundle;
		st->package = s->package;
		st->version = s->version;
		st->catalog = s->catalog;
		st->channel = s->channel;
		st->replaces = cur >= 0 ? req->installed[cur].bundle : NULL;
		st->reason = fbc_arena_printf(c->arena, "requested by %s", c->req_label[i]);
		if (!st->reason)
			return oom(c);
	}
	res->satisfiable = true;
	return 0;
}

int r_v1_resolve(r_ctx *c, bool with_deps)
{
	const fbc_resolve_request *req = c->req;
	v1_pick *picks = calloc(req->n_requests + 1, sizeof(*picks));
	int *req_vars = calloc(req->n_requests + 1, sizeof(int));
	fbc_vec ents;
	int rc;

	fbc_vec_init(&ents, sizeof(int));
	if (!picks || !req_vars) {
		rc = oom(c);
		goto done;
	}
	if ((rc = r_prepare_requests(c)) < 0)
		goto done;
	for (size_t i = 0; i < req->n_requests; i++)
		for (size_t j = 0; j < i; j++)
			if (strcmp(req->requests[i].package, req->requests[j].package) == 0) {
				rc = r_input_error(c, "package %s is requested twice",
						   req->requests[i].package);
				goto done;
			}
	for (size_t i = 0; i < req->n_requests; i++) {
		const char *t;

		if ((rc = v1_select(c, i, with_deps, &picks[i])) < 0)
			goto done;
		if (!with_deps && (t = dependency_property(picks[i].b))) {
			rc = r_input_error(c,
					   "bundle \"%s\" has a dependency declared via property "
					   "\"%s\" which is currently not supported (%s; use "
					   "semantics v1-deps to resolve dependencies)",
					   picks[i].b->name, t, c->req_label[i]);
			goto done;
		}
	}
	if (!with_deps) {
		rc = v1_plain_result(c, picks);
		goto done;
	}
	if ((rc = r_add_installed_vars(c)) < 0)
		goto done;
	for (size_t i = 0; i < req->n_requests; i++) {
		const fbc_bundle *b = picks[i].b;
		int cur = c->req_current[i];
		const char *empty;
		bool stay = cur >= 0 && strcmp(req->installed[cur].bundle, b->name) == 0;

		ents.len = 0;
		if (stay) {
			int *p = fbc_vec_push(&ents);
			if (!p) {
				rc = oom(c);
				goto done;
			}
			*p = c->inst_entry[cur];
		} else {
			const fbc_channel *def = report_channel(b, req->requests[i].channel);
			/* The reported channel first, then the others by name. */
			for (int pass = 0; pass < 2; pass++)
				for (size_t j = 0; j < b->n_channels; j++) {
					const fbc_channel *ch = b->channels[j];
					int e, *p;

					if ((pass == 0) != (ch == def))
						continue;
					if (req->requests[i].channel &&
					    strcmp(ch->name, req->requests[i].channel) != 0)
						continue;
					if ((rc = r_entry_offchain(c, picks[i].cat, ch, b, &e)) < 0)
						goto done;
					if (!(p = fbc_vec_push(&ents))) {
						rc = oom(c);
						goto done;
					}
					*p = e;
				}
		}
		empty = fbc_arena_printf(c->arena, "no bundle left for %s", c->req_label[i]);
		rc = r_request_var(c, i, ents.items, ents.len, stay, empty, &req_vars[i]);
		if (rc < 0)
			goto done;
	}
	if ((rc = r_add_anchors(c, req_vars)) < 0)
		goto done;
	rc = r_classic_finish(c);
done:
	fbc_vec_dispose(&ents);
	free(picks);
	free(req_vars);
	return rc;
}
