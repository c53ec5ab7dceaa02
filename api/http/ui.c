/* GET /ui/ and /ui/{file}: the dashboard's static files, embedded at build
 * time (ui_gen.c). Revalidated by ETag (the bytes' hash); a strict
 * Content-Security-Policy: scripts and styles from this origin only, graph
 * pictures fetched with the reader's token shown through blob: URLs. */
#include "api/http/handlers.h"
#include "api/http/ui.h"

#include <string.h>

static const char csp[] = "default-src 'self'; img-src 'self' blob: data:; "
			  "object-src 'none'; base-uri 'none'; frame-ancestors 'none'; "
			  "form-action 'self'";

static int serve(fbc_http_req *req, fbc_http_resp *resp, const char *name)
{
	for (size_t i = 0; i < fbc_http_ui_n_files; i++) {
		const fbc_http_ui_file *f = &fbc_http_ui_files[i];
		if (strcmp(f->name, name) != 0)
			continue;
		fbc_http_body(resp, 200, f->content_type, f->data, f->len);
		resp->etag = f->etag;
		fbc_http_resp_header(resp, "Cache-Control", "no-cache");
		fbc_http_resp_header(resp, "Content-Security-Policy", csp);
		fbc_http_resp_header(resp, "Referrer-Policy", "no-referrer");
		return 0;
	}
	return fbc_http_problem(resp, req, 404, "not_found", "no dashboard file %s", name);
}

int fbc_http_ui_index(fbc_http_req *req, fbc_http_resp *resp)
{
	return serve(req, resp, "index.html");
}

int fbc_http_ui_file_get(fbc_http_req *req, fbc_http_resp *resp)
{
	const char *name = fbc_http_param(req, "file");
	return serve(req, resp, name ? name : "");
}
