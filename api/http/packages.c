/* Packages, channels (with graphs, successors, upgrade paths) and bundles of a revision. */
#include "api/http/handlers.h"

#include <string.h>

int fbc_http_package_list(fbc_http_req *req, fbc_http_resp *resp)
{
	fbc_db_rev rev;
	fbc_db_page page;
	fbc_db_package_filter f;
	const char *s;
	json_t *out = NULL;
	fbc_error err;

	if (fbc_http_page_db(&page, req, resp) != 0)
		return 0;
	memset(&f, 0, sizeof(f));
	f.deprecated = -1;
	f.name_prefix = fbc_http_query(req, "prefix");
	if ((s = fbc_http_query(req, "provides")) && fbc_http_parse_gvk(&f.provides, req, s) != 0)
		return fbc_http_problem(resp, req, 400, "bad_filter",
					"provides: expected group/version/kind or kind, got '%s'",
					s);
	if ((s = fbc_http_query(req, "requires")) && fbc_http_parse_gvk(&f.requires, req, s) != 0)
		return fbc_http_problem(resp, req, 400, "bad_filter",
					"requires: expected group/version/kind or kind, got '%s'",
					s);
	if ((s = fbc_http_query(req, "deprecated"))) {
		if (!strcmp(s, "true"))
			f.deprecated = 1;
		else if (!strcmp(s, "false"))
			f.deprecated = 0;
		else
			return fbc_http_problem(resp, req, 400, "bad_filter",
						"deprecated: expected true or false, got '%s'", s);
	}
	if (fbc_http_resolve_rev(&rev, req, resp))
		return 0;
	fbc_error_init(&err);
	int rc = fbc_db_package_list(&out, app_of(req)->db, &rev, &f, &page, &err);
	return fbc_http_reply_db(req, resp, rc, out, &err);
}

int fbc_http_package_get(fbc_http_req *req, fbc_http_resp *resp)
{
	fbc_db_rev rev;
	json_t *out = NULL;
	fbc_error err;

	if (fbc_http_resolve_rev(&rev, req, resp))
		return 0;
	fbc_error_init(&err);
	int rc = fbc_db_package_get(&out, app_of(req)->db, &rev, fbc_http_param(req, "package"),
				    &err);
	return fbc_http_reply_db(req, resp, rc, out, &err);
}

int fbc_http_package_icon(fbc_http_req *req, fbc_http_resp *resp)
{
	fbc_db_rev rev;
	void *data = NULL;
	size_t len = 0;
	char *mt = NULL;
	fbc_error err;

	if (fbc_http_resolve_rev(&rev, req, resp))
		return 0;
	fbc_error_init(&err);
	if (fbc_db_icon_get(&data, &len, &mt, app_of(req)->db, &rev, fbc_http_param(req, "package"),
			    &err) != 0)
		return fbc_http_problem_from_error(resp, req, &err);
	/* a failed defer frees its own pointer, not the other one */
	if (fbc_arena_defer(req->arena, free, mt) != 0) {
		free(data);
		return FBC_ENOMEM;
	}
	if (fbc_arena_defer(req->arena, free, data) != 0)
		return FBC_ENOMEM;
	/* the media type comes from catalog data: only pass through image types */
	const char *ct = (mt && strncasecmp(mt, "image/", 6) == 0 && !strpbrk(mt, "\r\n"))
				 ? mt
				 : "application/octet-stream";
	fbc_http_body(resp, 200, ct, data, len);
	fbc_http_cache_store(req, resp);
	return 0;
}

/* ------------------------------------------------------------- channels */

int fbc_http_channel_list(fbc_http_req *req, fbc_http_resp *resp)
{
	fbc_db_rev rev;
	json_t *out = NULL;
	fbc_error err;

	if (fbc_http_resolve_rev(&rev, req, resp))
		return 0;
	fbc_error_init(&err);
	int rc = fbc_db_channel_list(&out, app_of(req)->db, &rev, fbc_http_param(req, "package"),
				     &err);
	return fbc_http_reply_db(req, resp, rc, out, &err);
}

int fbc_http_channel_get(fbc_http_req *req, fbc_http_resp *resp)
{
	fbc_db_rev rev;
	json_t *out = NULL;
	fbc_error err;

	if (fbc_http_resolve_rev(&rev, req, resp))
		return 0;
	fbc_error_init(&err);
	int rc = fbc_db_channel_get(&out, app_of(req)->db, &rev, fbc_http_param(req, "package"),
				    fbc_http_param(req, "channel"), &err);
	return fbc_http_reply_db(req, resp, rc, out, &err);
}

static int load_graph(json_t **graph, fbc_http_req *req, fbc_http_resp *resp)
{
	fbc_db_rev rev;
	fbc_error err;

	if (fbc_http_resolve_rev(&rev, req, resp))
		return 1;
	fbc_error_init(&err);
	if (fbc_db_channel_graph(graph, app_of(req)->db, &rev, fbc_http_param(req, "package"),
				 fbc_http_param(req, "channel"), &err) != 0) {
		fbc_http_problem_from_error(resp, req, &err);
		return 1;
	}
	if (fbc_arena_defer(req->arena, fbc_http_free_json, *graph) != 0) {
		fbc_http_problem(resp, req, 500, "internal", "out of memory");
		return 1;
	}
	return 0;
}

int fbc_http_channel_graph(fbc_http_req *req, fbc_http_resp *resp)
{
	const char *format = fbc_http_query(req, "format");
	json_t *graph = NULL;
	fbc_buf *b;
	fbc_error err;

	if (!format)
		format = "json";
	bool svg = !strcmp(format, "svg");

	if (strcmp(format, "json") && strcmp(format, "dot") && strcmp(format, "mermaid") && !svg)
		return fbc_http_problem(resp, req, 400, "bad_format",
					"format: expected json, dot, mermaid or svg, got '%s'",
					format);
	if (load_graph(&graph, req, resp))
		return 0;
	if (!strcmp(format, "json")) {
		json_incref(graph);
		if (fbc_http_json(resp, req, 200, graph) != 0)
			return FBC_ENOMEM;
		fbc_http_cache_store(req, resp);
		return 0;
	}
	b = fbc_arena_alloc(req->arena, sizeof(*b));
	if (!b)
		return FBC_ENOMEM;
	fbc_buf_init(b, 64u << 20);
	if (fbc_arena_defer(req->arena, (void (*)(void *))fbc_buf_dispose, b) != 0)
		return FBC_ENOMEM;
	fbc_error_init(&err);
	if (fbc_http_graph_format(b, graph, format, &err) != 0)
		return fbc_http_problem_from_error(resp, req, &err);
	if (svg) {
		fbc_buf *pic = fbc_arena_alloc(req->arena, sizeof(*pic));

		if (!pic)
			return FBC_ENOMEM;
		fbc_buf_init(pic, 64u << 20);
		if (fbc_arena_defer(req->arena, (void (*)(void *))fbc_buf_dispose, pic) != 0)
			return FBC_ENOMEM;
		if (fbc_http_graph_svg(pic, b->data,
				       json_array_size(json_object_get(graph, "nodes")),
				       &err) != 0) {
			if (err.code == FBC_ELIMIT)
				return fbc_http_problem(resp, req, 422, "graph_too_large", "%s",
							err.message);
			return fbc_http_problem_from_error(resp, req, &err);
		}
		fbc_http_body(resp, 200, "image/svg+xml", pic->data, pic->len);
		fbc_http_cache_store(req, resp);
		return 0;
	}
	fbc_http_body(resp, 200,
		      !strcmp(format, "dot") ? "text/vnd.graphviz; charset=utf-8"
					     : "text/vnd.mermaid; charset=utf-8",
		      b->data, b->len);
	fbc_http_cache_store(req, resp);
	return 0;
}

static int semantics_arg(const char **out, fbc_http_req *req, fbc_http_resp *resp)
{
	const char *s = fbc_http_query(req, "semantics");

	if (!s)
		s = "v1";
	if (strcmp(s, "classic") && strcmp(s, "v1")) {
		fbc_http_problem(resp, req, 400, "bad_semantics",
				 "semantics: expected classic or v1, got '%s'", s);
		return 1;
	}
	*out = s;
	return 0;
}

int fbc_http_successors(fbc_http_req *req, fbc_http_resp *resp)
{
	const char *from = fbc_http_query(req, "from"), *sem;
	json_t *graph = NULL, *items = NULL;
	fbc_error err;

	if (semantics_arg(&sem, req, resp))
		return 0;
	if (!from || !from[0])
		return fbc_http_problem(resp, req, 400, "bad_request",
					"from: a bundle name or version is required");
	if (load_graph(&graph, req, resp))
		return 0;
	fbc_error_init(&err);
	if (fbc_http_graph_successors(&items, graph, from, sem, &err) != 0)
		return fbc_http_problem_from_error(resp, req, &err);
	if (fbc_http_list(resp, req, items, NULL) != 0)
		return FBC_ENOMEM;
	fbc_http_cache_store(req, resp);
	return 0;
}

int fbc_http_upgrade_path(fbc_http_req *req, fbc_http_resp *resp)
{
	const char *from = fbc_http_query(req, "from"), *to = fbc_http_query(req, "to"), *sem;
	json_t *graph = NULL, *out = NULL;
	fbc_error err;

	if (semantics_arg(&sem, req, resp))
		return 0;
	if (!from || !from[0])
		return fbc_http_problem(resp, req, 400, "bad_request",
					"from: a bundle name or version is required");
	if (load_graph(&graph, req, resp))
		return 0;
	fbc_error_init(&err);
	if (fbc_http_graph_upgrade_path(&out, graph, from, to && to[0] ? to : NULL, sem, &err) != 0)
		return fbc_http_problem_from_error(resp, req, &err);
	return fbc_http_json(resp, req, 200, out);
}

/* -------------------------------------------------------------- bundles */

int fbc_http_bundle_list(fbc_http_req *req, fbc_http_resp *resp)
{
	fbc_db_rev rev;
	fbc_db_page page;
	json_t *out = NULL;
	fbc_error err;

	if (fbc_http_page_db(&page, req, resp) != 0)
		return 0;
	if (fbc_http_resolve_rev(&rev, req, resp))
		return 0;
	fbc_error_init(&err);
	int rc = fbc_db_bundle_list(&out, app_of(req)->db, &rev, fbc_http_param(req, "package"),
				    &page, &err);
	return fbc_http_reply_db(req, resp, rc, out, &err);
}

int fbc_http_bundle_get(fbc_http_req *req, fbc_http_resp *resp)
{
	fbc_db_rev rev;
	json_t *out = NULL;
	fbc_error err;

	if (fbc_http_resolve_rev(&rev, req, resp))
		return 0;
	fbc_error_init(&err);
	int rc = fbc_db_bundle_get(&out, app_of(req)->db, &rev, fbc_http_param(req, "package"),
				   fbc_http_param(req, "bundle"), &err);
	return fbc_http_reply_db(req, resp, rc, out, &err);
}
