/* The route table (one row per operation of openapi/openapi.yaml) and bearer-token auth. */
#include "api/http/handlers.h"

#include <string.h>
#include <strings.h>

int fbc_http_api_auth(void *appv, const char *authorization, unsigned *scopes, fbc_error *err)
{
	fbc_http_app *app = appv;
	fbc_db_scope s = FBC_DB_SCOPE_NONE;
	const char *tok;
	int rc;

	*scopes = 0;
	if (strncasecmp(authorization, "Bearer ", 7) != 0)
		return 0;
	tok = authorization + 7;
	while (*tok == ' ')
		tok++;
	if (!*tok || strlen(tok) > FBC_DB_TOKEN_MAX)
		return 0;
	rc = fbc_db_token_lookup(&s, app->db, tok, err);
	if (rc == FBC_EAUTH)
		return 0;
	if (rc != 0)
		return rc;
	switch (s) {
	case FBC_DB_SCOPE_ADMIN:
		*scopes = FBC_SCOPE_ADMIN | FBC_SCOPE_WRITE | FBC_SCOPE_READ;
		break;
	case FBC_DB_SCOPE_WRITE:
		*scopes = FBC_SCOPE_WRITE | FBC_SCOPE_READ;
		break;
	case FBC_DB_SCOPE_READ:
		*scopes = FBC_SCOPE_READ;
		break;
	default:
		break;
	}
	return 0;
}

/* ---------------------------------------------------------------- routes */

#define C  "/v1/catalogs/{catalog}"
#define P  C "/packages/{package}"
#define CH P "/channels/{channel}"
#define R  C "/registry"

static const fbc_http_route routes[] = {
	{"GET", "/healthz", fbc_http_healthz, FBC_SCOPE_NONE, "healthz"},
	{"GET", "/readyz", fbc_http_readyz, FBC_SCOPE_NONE, "readyz"},
	{"GET", "/metrics", fbc_http_metrics, FBC_SCOPE_NONE, "getMetrics"},
	{"GET", "/openapi.json", fbc_http_openapi, FBC_SCOPE_NONE, "getOpenAPI"},
	{"GET", "/ui/", fbc_http_ui_index, FBC_SCOPE_NONE, "getUi"},
	{"GET", "/ui/{file}", fbc_http_ui_file_get, FBC_SCOPE_NONE, "getUiFile"},
	{"POST", "/v1/validate", fbc_http_validate, FBC_SCOPE_READ, "validateContent"},
	{"POST", "/v1/resolve", fbc_http_api_resolve, FBC_SCOPE_READ, "resolve"},
	{"GET", "/v1/catalogs", fbc_http_catalog_list, FBC_SCOPE_READ, "listCatalogs"},
	{"POST", "/v1/catalogs", fbc_http_catalog_create, FBC_SCOPE_WRITE, "createCatalog"},
	{"GET", C, fbc_http_catalog_get, FBC_SCOPE_READ, "getCatalog"},
	{"DELETE", C, fbc_http_catalog_delete, FBC_SCOPE_ADMIN, "deleteCatalog"},
	{"PUT", C "/content", fbc_http_content_put, FBC_SCOPE_WRITE, "putCatalogContent"},
	{"GET", C "/revisions", fbc_http_revision_list, FBC_SCOPE_READ, "listRevisions"},
	{"GET", C "/revisions/{revision}", fbc_http_revision_get, FBC_SCOPE_READ, "getRevision"},
	{"GET", C "/images", fbc_http_image_list, FBC_SCOPE_READ, "listCatalogImages"},
	{"POST", C "/images", fbc_http_image_publish, FBC_SCOPE_WRITE, "publishCatalogImage"},
	{"GET", "/v1/images/{digest}", fbc_http_image_get, FBC_SCOPE_READ, "getImage"},
	{"GET", C "/packages", fbc_http_package_list, FBC_SCOPE_READ, "listPackages"},
	{"GET", P, fbc_http_package_get, FBC_SCOPE_READ, "getPackage"},
	{"GET", P "/icon", fbc_http_package_icon, FBC_SCOPE_READ, "getPackageIcon"},
	{"GET", P "/channels", fbc_http_channel_list, FBC_SCOPE_READ, "listChannels"},
	{"GET", CH, fbc_http_channel_get, FBC_SCOPE_READ, "getChannel"},
	{"GET", CH "/graph", fbc_http_channel_graph, FBC_SCOPE_READ, "getChannelGraph"},
	{"GET", CH "/successors", fbc_http_successors, FBC_SCOPE_READ, "getSuccessors"},
	{"GET", CH "/upgrade-path", fbc_http_upgrade_path, FBC_SCOPE_READ, "getUpgradePath"},
	{"GET", P "/bundles", fbc_http_bundle_list, FBC_SCOPE_READ, "listBundles"},
	{"GET", P "/bundles/{bundle}", fbc_http_bundle_get, FBC_SCOPE_READ, "getBundle"},
	{"GET", P "/bundles/{bundle}/history", fbc_http_bundle_history, FBC_SCOPE_READ,
	 "getBundleHistory"},
	{"GET", R "/packages", fbc_http_reg_list_packages, FBC_SCOPE_READ, "registryListPackages"},
	{"GET", R "/packages/{package}", fbc_http_reg_get_package, FBC_SCOPE_READ,
	 "registryGetPackage"},
	{"GET", R "/bundle", fbc_http_reg_get_bundle, FBC_SCOPE_READ, "registryGetBundle"},
	{"GET", R "/bundle-for-channel", fbc_http_reg_bundle_for_channel, FBC_SCOPE_READ,
	 "registryGetBundleForChannel"},
	{"GET", R "/entries-that-replace", fbc_http_reg_entries_that_replace, FBC_SCOPE_READ,
	 "registryGetChannelEntriesThatReplace"},
	{"GET", R "/bundle-that-replaces", fbc_http_reg_bundle_that_replaces, FBC_SCOPE_READ,
	 "registryGetBundleThatReplaces"},
	{"GET", R "/entries-that-provide", fbc_http_reg_entries_that_provide, FBC_SCOPE_READ,
	 "registryGetChannelEntriesThatProvide"},
	{"GET", R "/latest-entries-that-provide", fbc_http_reg_latest_entries_that_provide,
	 FBC_SCOPE_READ, "registryGetLatestChannelEntriesThatProvide"},
	{"GET", R "/default-bundle-that-provides", fbc_http_reg_default_bundle_that_provides,
	 FBC_SCOPE_READ, "registryGetDefaultBundleThatProvides"},
	{"GET", R "/bundles", fbc_http_reg_list_bundles, FBC_SCOPE_READ, "registryListBundles"},
	{"GET", "/v1/repositories", fbc_http_repo_list, FBC_SCOPE_READ, "listRepositories"},
	{"POST", "/v1/repositories", fbc_http_repo_create, FBC_SCOPE_ADMIN, "createRepository"},
	{"GET", "/v1/repositories/{repository}", fbc_http_repo_get, FBC_SCOPE_READ,
	 "getRepository"},
	{"PATCH", "/v1/repositories/{repository}", fbc_http_repo_patch, FBC_SCOPE_ADMIN,
	 "patchRepository"},
	{"DELETE", "/v1/repositories/{repository}", fbc_http_repo_delete, FBC_SCOPE_ADMIN,
	 "deleteRepository"},
	{"GET", "/v1/repositories/{repository}/pulls", fbc_http_pull_list, FBC_SCOPE_READ,
	 "listPulls"},
	{"GET", "/v1/repositories/{repository}/pulls/{number}", fbc_http_pull_get, FBC_SCOPE_READ,
	 "getPull"},
	{"GET", "/v1/repositories/{repository}/commits/{sha}", fbc_http_commit_get, FBC_SCOPE_READ,
	 "getCommit"},
	{"POST", "/v1/webhooks/github", fbc_http_webhook_github, FBC_SCOPE_NONE, "githubWebhook"},
	{"POST", "/v1/webhooks/gitlab", fbc_http_webhook_gitlab, FBC_SCOPE_NONE, "gitlabWebhook"},
	{"GET", "/v1/jobs", fbc_http_job_list, FBC_SCOPE_READ, "listJobs"},
	{"GET", "/v1/jobs/{job}", fbc_http_job_get, FBC_SCOPE_READ, "getJob"},
	{"POST", "/v1/jobs/{job}/retry", fbc_http_job_retry, FBC_SCOPE_ADMIN, "retryJob"},
	{"POST", "/v1/jobs/{job}/cancel", fbc_http_job_cancel, FBC_SCOPE_ADMIN, "cancelJob"},
	{"GET", "/catalogs/{catalog}/api/v1/all", fbc_http_catalogd_all, FBC_SCOPE_READ,
	 "catalogdAll"},
	{"GET", "/catalogs/{catalog}/api/v1/metas", fbc_http_catalogd_metas, FBC_SCOPE_READ,
	 "catalogdMetas"},
};

const fbc_http_route *fbc_http_api_routes(size_t *n)
{
	*n = sizeof(routes) / sizeof(routes[0]);
	return routes;
}
