/* REST equivalents of the Operator Registry gRPC API (opm serve). */
#include "api/http/handlers.h"

#include <string.h>

static int need_query(const char **out, fbc_http_req *req, fbc_http_resp *resp, const char *name)
{
	const char *v = fbc_http_query(req, name);
	if (!v || !v[0]) {
		fbc_http_problem(resp, req, 400, "bad_request", "%s: required", name);
		return 1;
	}
	*out = v;
	return 0;
}

static int gvk_args(fbc_db_gvk_filter *f, fbc_http_req *req, fbc_http_resp *resp)
{
	memset(f, 0, sizeof(*f));
	f->group = fbc_http_query(req, "group");
	f->version = fbc_http_query(req, "version");
	if (need_query(&f->kind, req, resp, "kind"))
		return 1;
	/* "plural" is accepted for gRPC parity; GVKs are matched without it */
	return 0;
}

#define REG_PRELUDE         \
	fbc_db_rev rev;     \
	json_t *out = NULL; \
	fbc_error err;      \
	fbc_error_init(&err);

int fbc_http_reg_list_packages(fbc_http_req *req, fbc_http_resp *resp)
{
	REG_PRELUDE
	if (fbc_http_resolve_rev(&rev, req, resp))
		return 0;
	int rc = fbc_db_registry_list_packages(&out, app_of(req)->db, &rev, &err);
	return fbc_http_reply_db(req, resp, rc, out, &err);
}

int fbc_http_reg_get_package(fbc_http_req *req, fbc_http_resp *resp)
{
	REG_PRELUDE
	if (fbc_http_resolve_rev(&rev, req, resp))
		return 0;
	int rc = fbc_db_registry_get_package(&out, app_of(req)->db, &rev,
					     fbc_http_param(req, "package"), &err);
	return fbc_http_reply_db(req, resp, rc, out, &err);
}

int fbc_http_reg_get_bundle(fbc_http_req *req, fbc_http_resp *resp)
{
	const char *pkg, *ch, *csv;
	REG_PRELUDE
	if (need_query(&pkg, req, resp, "pkgName") || need_query(&ch, req, resp, "channelName") ||
	    need_query(&csv, req, resp, "csvName") || fbc_http_resolve_rev(&rev, req, resp))
		return 0;
	int rc = fbc_db_registry_get_bundle(&out, app_of(req)->db, &rev, pkg, ch, csv, &err);
	return fbc_http_reply_db(req, resp, rc, out, &err);
}

int fbc_http_reg_bundle_for_channel(fbc_http_req *req, fbc_http_resp *resp)
{
	const char *pkg, *ch;
	REG_PRELUDE
	if (need_query(&pkg, req, resp, "pkgName") || need_query(&ch, req, resp, "channelName") ||
	    fbc_http_resolve_rev(&rev, req, resp))
		return 0;
	int rc = fbc_db_registry_get_bundle_for_channel(&out, app_of(req)->db, &rev, pkg, ch, &err);
	return fbc_http_reply_db(req, resp, rc, out, &err);
}

int fbc_http_reg_entries_that_replace(fbc_http_req *req, fbc_http_resp *resp)
{
	const char *csv;
	REG_PRELUDE
	if (need_query(&csv, req, resp, "csvName") || fbc_http_resolve_rev(&rev, req, resp))
		return 0;
	int rc = fbc_db_registry_entries_that_replace(&out, app_of(req)->db, &rev, csv, &err);
	return fbc_http_reply_db(req, resp, rc, out, &err);
}

int fbc_http_reg_bundle_that_replaces(fbc_http_req *req, fbc_http_resp *resp)
{
	const char *pkg, *ch, *csv;
	REG_PRELUDE
	if (need_query(&csv, req, resp, "csvName") || need_query(&pkg, req, resp, "pkgName") ||
	    need_query(&ch, req, resp, "channelName") || fbc_http_resolve_rev(&rev, req, resp))
		return 0;
	int rc = fbc_db_registry_bundle_that_replaces(&out, app_of(req)->db, &rev, csv, pkg, ch,
						      &err);
	return fbc_http_reply_db(req, resp, rc, out, &err);
}

int fbc_http_reg_entries_that_provide(fbc_http_req *req, fbc_http_resp *resp)
{
	fbc_db_gvk_filter g;
	REG_PRELUDE
	if (gvk_args(&g, req, resp) || fbc_http_resolve_rev(&rev, req, resp))
		return 0;
	int rc = fbc_db_registry_entries_that_provide(&out, app_of(req)->db, &rev, &g, &err);
	return fbc_http_reply_db(req, resp, rc, out, &err);
}

int fbc_http_reg_latest_entries_that_provide(fbc_http_req *req, fbc_http_resp *resp)
{
	fbc_db_gvk_filter g;
	REG_PRELUDE
	if (gvk_args(&g, req, resp) || fbc_http_resolve_rev(&rev, req, resp))
		return 0;
	int rc = fbc_db_registry_latest_entries_that_provide(&out, app_of(req)->db, &rev, &g, &err);
	return fbc_http_reply_db(req, resp, rc, out, &err);
}

int fbc_http_reg_default_bundle_that_provides(fbc_http_req *req, fbc_http_resp *resp)
{
	fbc_db_gvk_filter g;
	REG_PRELUDE
	if (gvk_args(&g, req, resp) || fbc_http_resolve_rev(&rev, req, resp))
		return 0;
	int rc =
		fbc_db_registry_default_bundle_that_provides(&out, app_of(req)->db, &rev, &g, &err);
	return fbc_http_reply_db(req, resp, rc, out, &err);
}

int fbc_http_reg_list_bundles(fbc_http_req *req, fbc_http_resp *resp)
{
	REG_PRELUDE
	if (fbc_http_resolve_rev(&rev, req, resp))
		return 0;
	int rc = fbc_db_registry_list_bundles(&out, app_of(req)->db, &rev, &err);
	return fbc_http_reply_db(req, resp, rc, out, &err);
}
