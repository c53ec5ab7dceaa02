/*
 * Canonical writing of a catalog (spec fbc-validation.md §5.4): every blob as
 * one line of compact JSON with sorted keys and no HTML escaping, packages in
 * name order, and within a package the olm.package, its channels by name, its
 * bundles by name, its other-schema blobs by schema, then its deprecations;
 * other-schema blobs without a package come last. The bytes depend only on
 * the catalog's content, never on how it was split into files or written
 * (YAML or JSON): the same catalog always renders the same.
 *
 * Used by `fbcd render` and by the HTTP server (catalogd's /api/v1/all), so
 * output is streamed through a write callback one line at a time and memory
 * stays proportional to the largest blob, not to the catalog.
 *
 * Ownership: the functions only read the catalog. Thread-safety: a catalog
 * that is no longer being built may be rendered from several threads at once.
 */
#ifndef FBC_FBC_RENDER_H
#define FBC_FBC_RENDER_H

#include "service/base/buf.h"
#include "service/base/error.h"
#include "service/fbc/model.h"

/* Receives one line (a blob followed by '\n'). Non-zero stops the rendering
 * and is returned by fbc_render_catalog; the callback fills err. */
typedef int (*fbc_render_write_fn)(void *ctx, const char *data, size_t len, fbc_error *err);

/* Append one blob, compact, keys sorted, without a trailing newline.
 * Returns 0, or FBC_ENOMEM / FBC_ELIMIT when out cannot grow. */
int fbc_render_package(fbc_buf *out, const fbc_package *pkg, fbc_error *err);
int fbc_render_channel(fbc_buf *out, const fbc_channel *ch, fbc_error *err);
int fbc_render_bundle(fbc_buf *out, const fbc_bundle *b, fbc_error *err);
int fbc_render_deprecation(fbc_buf *out, const fbc_deprecation *d, fbc_error *err);
int fbc_render_other(fbc_buf *out, const fbc_other *o, fbc_error *err);

/* Render every loaded object of cat (its load-order vectors, so invalid
 * catalogs with duplicates render too; the catalog need not be linked) in
 * canonical order. */
int fbc_render_catalog(const fbc_catalog *cat, fbc_render_write_fn fn, void *ctx, fbc_error *err);

/* The same lines in the same order, each with the name of the package it
 * belongs to (NULL for other-schema blobs without a package; "" for blobs
 * naming no package, only in invalid catalogs). The image builder writes one
 * /configs/<package>/catalog.json per group from it. */
typedef int (*fbc_render_group_write_fn)(void *ctx, const char *package, const char *data,
					 size_t len, fbc_error *err);
int fbc_render_catalog_grouped(const fbc_catalog *cat, fbc_render_group_write_fn fn, void *ctx,
			       fbc_error *err);

/* A ready-made fbc_render_write_fn appending to the fbc_buf passed as ctx. */
int fbc_render_to_buf(void *ctx, const char *data, size_t len, fbc_error *err);

#endif
