/* Private glue of service/template. */
#ifndef FBC_TEMPLATE_INTERNAL_H
#define FBC_TEMPLATE_INTERNAL_H

#include "service/template/template.h"

/* Go encoding/json field lookup: among the keys of obj that equal name
 * case-insensitively, the one last in byte order wins (sigs.k8s.io/yaml
 * hands the decoder a key-sorted object). NULL when none. */
json_t *tpl_fold_get(const json_t *obj, const char *name, const char **key_out);
/* Whether key equals one of the names (NULL-terminated) case-insensitively. */
bool tpl_fold_known(const char *key, const char *const *names);

/* Decode the first document of a template (JSON when the first non-blank
 * byte is '{', else YAML with go-yaml v2 typing). */
int tpl_decode(json_t **out, const char *data, size_t len, const char *file, fbc_error *err);

/* 1-based line of the n-th (0-based) occurrence of needle in text; the
 * line of the first occurrence when there are fewer; 1 when none. */
int tpl_line_of(const char *text, size_t len, const char *needle, size_t nth);

/* Set err with where = "file:line". */
int tpl_fail(fbc_error *err, int code, const char *file, int line, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

/* Resolve a bundle image to its olm.bundle blob (new reference) in the form
 * the migrate level asks for. FBC_ENOTFOUND with a message naming the image
 * when no source has it. */
int tpl_sources_resolve(json_t **out, fbc_template_sources *s, const char *image,
			fbc_bundle_migrate migrate, fbc_error *err);
/* The CSV object behind an image (new reference), for §3.7; NULL when no
 * source has it (not an error). */
json_t *tpl_sources_csv(fbc_template_sources *s, const char *image);

/* Order blobs as declcfg.WriteYAML does (§2.4); takes a reference of each. */
int tpl_order(json_t **out, json_t *packages, json_t *channels, json_t *bundles, json_t *others,
	      json_t *deprecations, fbc_error *err);

int tpl_render_basic(fbc_template_result *r, const json_t *doc, const char *text, size_t len,
		     const fbc_template_opts *o, fbc_template_sources *src, fbc_error *err);
int tpl_render_semver(fbc_template_result *r, const json_t *doc, const char *text, size_t len,
		      const fbc_template_opts *o, fbc_template_sources *src, fbc_error *err);

/* Standard base64 re-encoding of an icon's base64data (Go's decode then
 * encode); FBC_EINVAL with Go's message on bad data. */
int tpl_icon_canonical(json_t **out, const json_t *b64, fbc_error *err);

#endif
