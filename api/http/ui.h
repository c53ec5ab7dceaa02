/* The dashboard's static files (ui/), embedded at build time by ui_gen.c. */
#ifndef FBC_API_HTTP_UI_H
#define FBC_API_HTTP_UI_H

#include <stddef.h>

typedef struct fbc_http_ui_file {
	const char *name; /* base name, e.g. "app.js" */
	const char *content_type;
	const char *data;
	size_t len;
	const char *etag; /* quoted strong entity tag (hash of the bytes) */
} fbc_http_ui_file;

extern const fbc_http_ui_file fbc_http_ui_files[];
extern const size_t fbc_http_ui_n_files;

#endif
