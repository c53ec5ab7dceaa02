/*
 * The catalog loader: walks an FBC file tree (fbc_tree) (spec fbc-validation.md
 * §1: lexical walk, .indexignore, JSON streams and multi-document YAML 1.1)
 * and yields one "meta" per top-level object, in deterministic order (walk
 * order, then order within the file), with load rules L1-L9 applied.
 *
 * Load findings (a file with bad YAML, a non-object document, a duplicate
 * key...) are recorded in an fbc_diags and loading goes on with the next file
 * or document, so that every error is reported, not only the first. An
 * fbc_error return means the load itself could not proceed (the root is not
 * a directory, out of memory, the callback failed).
 *
 * Every input is bounded by fbc_load_limits; exceeding one is a finding with
 * code "LIMIT" naming the file and the limit, never a crash or a hang.
 * Thread-safety: one load per call; calls may run concurrently.
 */
#ifndef FBC_LOAD_H
#define FBC_LOAD_H

#include "service/base/error.h"
#include "service/base/diag.h"
#include "service/base/tree.h"
#include "service/load/gotype.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

typedef struct fbc_load_limits {
	size_t max_file_bytes;	/* per file (default 64 MiB) */
	size_t max_total_bytes; /* whole tree (default 4 GiB) */
	size_t max_depth;	/* YAML/JSON nesting depth (default 64) */
	size_t max_alias_nodes; /* YAML nodes produced through aliases, per document (default 10000)
				 */
	size_t max_string_bytes; /* one scalar/string (default 16 MiB) */
	/* Bytes a YAML document may expand to through aliases: its own size
	 * plus what aliases repeat (each copied scalar, key and container counted
	 * at its JSON size) may not exceed max_expand_ratio x its size (or
	 * FBC_LOAD_EXPAND_FLOOR, whichever is larger), nor max_expanded_bytes.
	 * Defaults 10 and 256 MiB; see fbc_load_limits_set_expansion. */
	size_t max_expand_ratio;
	size_t max_expanded_bytes;
	size_t max_blobs; /* top-level objects in the tree (default 1,000,000) */
	size_t max_files; /* files in the tree (default 100,000) */
	unsigned threads; /* parser threads (0 = number of CPUs, max 16) */
	/* Not a bound: the catalog is loaded to be validated and nothing more
	 * (`fbcd validate`), so property values validation never reads —
	 * olm.csv.metadata, most of a modern catalog's bytes — are checked at
	 * load (C11) and not kept (service/fbc/model.h: FBC_PROPERTY_NOT_KEPT),
	 * and the CSV of a bundle's JSON olm.bundle.object properties is not
	 * parsed (fbc_bundle.csv_json stays NULL; YAML objects are still parsed:
	 * L11 checks them). Default false. */
	bool validate_only;
	/* With validate_only: fbc_validate is all that reads the catalog
	 * (`fbcd validate`, POST /v1/validate), so the valid olm.package, olm.gvk,
	 * olm.gvk.required and olm.package.required values are not kept either
	 * (validation reads the bundle fields derived from them at load, GVKs
	 * excepted: none are derived), nor, when they all parse, a bundle's image
	 * and related images (FBC_IMAGE_NOT_KEPT). The resolver and the pull-request checks read
	 * those: they load with validate_only alone. Default false. */
	bool validate_lean;
} fbc_load_limits;

/* A document may always expand to this many bytes (small documents with a
 * few aliases stay valid whatever the ratio). */
#define FBC_LOAD_EXPAND_FLOOR ((size_t)64 * 1024)

void fbc_load_limits_default(fbc_load_limits *lim);

/* Set the process-wide default expansion bounds (0 keeps the built-in
 * default) that fbc_load_limits_default and limits left at 0 use: the
 * commands' --yaml-expand-ratio/--yaml-expand-max. Call before any load
 * starts (not synchronised). */
void fbc_load_limits_set_expansion(size_t ratio, size_t max_bytes);

typedef struct fbc_meta {
	const char *schema;  /* non-empty (L9 checked) */
	const char *package; /* "" when absent */
	const char *name;    /* "" when absent */
	json_t *blob;	     /* the decoded object; borrowed for the callback's duration */
	fbc_loc loc;	     /* file relative to root, line where the object starts */
	void *prepared;	     /* staged loads only: the result of the prepare stage */
} fbc_meta;

/* Called once per meta, in deterministic order, on the calling thread. A
 * non-zero return stops the load and is returned by fbc_load_dir (err set
 * by the callback). The callback may json_incref the blob to keep it. */
typedef int (*fbc_meta_fn)(void *ctx, const fbc_meta *meta, fbc_error *err);

/* Load the catalog in tree t (any fbc_tree backend: directory, memory,
 * sub-view, git). lim may be NULL (defaults). Findings go to diags; their
 * files are relative to t's root. Links are followed inside t only. */
int fbc_load_tree(fbc_tree *t, const fbc_load_limits *lim, fbc_meta_fn fn, void *ctx,
		  fbc_diags *diags, fbc_error *err);

/* Open directory root as a tree (fbc_tree_open_dir), FBC_ENOTFOUND /
 * FBC_EINVAL with the loader's message when it is missing or not a
 * directory. */
int fbc_load_open_dir(fbc_tree **out, const char *root, fbc_error *err);

/* fbc_load_tree over the directory root (FBC_ENOTFOUND / FBC_EINVAL when it
 * is missing or not a directory). */
int fbc_load_dir(const char *root, const fbc_load_limits *lim, fbc_meta_fn fn, void *ctx,
		 fbc_diags *diags, fbc_error *err);

/*
 * Staged load: the per-meta work that does not need the caller's state runs
 * on the parser threads, next to the parsing, so that all CPUs share it and
 * the decoded tree is released at once (memory stays bounded by the results,
 * not by the json_t trees of the files in flight).
 *
 * prepare is called on a parser thread for each meta, in file order within a
 * file (files run concurrently), with meta->blob valid for the call only:
 * prepare keeps no json_t, neither the blob nor one it makes itself (with
 * fbc_json_arena_install they live in the thread's arena, json_arena.h, reset
 * after the call; nor may it free() what jansson returns, e.g. json_dumps).
 * `worker` (0 .. FBC_LOAD_MAX_WORKERS-1) identifies the calling thread: two
 * calls with the same index never overlap, so per-worker state needs no lock.
 * Its result (may be NULL) reaches fn, on the calling thread and in the same
 * deterministic order as fbc_load_dir, as meta->prepared; there, blob,
 * schema, package and name are NULL (only loc and prepared are set).
 * discard (may be NULL) releases a result that fn never receives (the load
 * stopped early). Limits and findings are exactly those of fbc_load_dir.
 */
#define FBC_LOAD_MAX_WORKERS 16

typedef void *(*fbc_meta_prepare_fn)(void *ctx, unsigned worker, const fbc_meta *meta);
typedef void (*fbc_meta_discard_fn)(void *ctx, void *prepared);

/* One result of a file, for a stage's file cache: a meta's prepare result, or a load finding
 * of the file (L4, L5, LIMIT...: not an I/O error, which is never cached). */
typedef struct fbc_load_result {
	bool is_meta;
	void *prepared;	     /* is_meta: the prepare result (non-NULL) */
	int line;	     /* line in the file (meta or finding) */
	const char *code;    /* a finding: its rule (a static string) */
	const char *message; /* a finding: its text */
} fbc_load_result;

/* Property values a staged load of a JSON stream need not build: in a blob's
 * top-level "properties" array, the "value" of an element {"type": T,
 * "value": V} (exactly these two members, in this order, as opm writes them)
 * whose T is one of these is checked on the raw text (that it decodes into
 * the Go type; with base64_json, that it is {"data": S} with S base64 of
 * bytes that start, after white space, with '{'), and when it is, prepare
 * sees `placeholder` in its place. Blobs of another schema than `schema`, and
 * values the check leaves in doubt, are built as usual. For a prepare that
 * only wants to know whether such values decode (a catalog loaded to be
 * validated: service/fbc). */
typedef struct fbc_load_skim_type {
	const char *type;	 /* "olm.csv.metadata" */
	const fbc_gt_type *go;	 /* the Go type V must decode into */
	bool base64_json;	 /* the olm.bundle.object shape above, besides */
	const char *placeholder; /* JSON text prepare sees instead (it must decode
				  * exactly as V would for what prepare does) */
} fbc_load_skim_type;

typedef struct fbc_load_skim {
	const char *schema; /* "olm.bundle" */
	const fbc_load_skim_type *types;
	size_t n_types;
	/* Optional: a top-level "relatedImages" array whose elements are all
	 * objects of string members "name" and "image" only (each at most once,
	 * no escapes, no nulls; a Go []RelatedImage then) and whose every
	 * image passes this check (NUL-terminated, n bytes) is not built
	 * either: prepare sees [] (for a prepare that only wants to know whether
	 * they all check out). */
	bool (*related_image_ok)(const char *image, size_t n);
} fbc_load_skim;

typedef struct fbc_load_stage {
	fbc_meta_prepare_fn prepare;
	fbc_meta_discard_fn discard; /* may be NULL */
	void *ctx;		     /* for prepare, discard, lookup and store */
	/* Optional: the prepare results of whole files kept by the caller across loads, by
	 * the content id of the file's tree entry (files without an id never use them).
	 * lookup (any parser thread) returns true with *out a malloc'd array of *n results
	 * (messages malloc'd; the loader owns both): the file is not read, and its metas reach
	 * fn with those `prepared` (which the caller keeps alive: discard is never called on
	 * them). store (any parser thread) is offered the results of a file just parsed
	 * (`bytes` long), before they are delivered; it copies what it keeps. */
	bool (*lookup)(void *ctx, const char *id, fbc_load_result **out, size_t *n);
	void (*store)(void *ctx, const char *id, size_t bytes, const fbc_load_result *res,
		      size_t n);
	const fbc_load_skim *skim; /* optional: see fbc_load_skim */
} fbc_load_stage;

int fbc_load_tree_staged(fbc_tree *t, const fbc_load_limits *lim, const fbc_load_stage *stage,
			 fbc_meta_fn fn, void *ctx, fbc_diags *diags, fbc_error *err);
int fbc_load_dir_staged(const char *root, const fbc_load_limits *lim, const fbc_load_stage *stage,
			fbc_meta_fn fn, void *ctx, fbc_diags *diags, fbc_error *err);

/* Load one in-memory file as if it were at path `name` in a tree (used for
 * HTTP uploads of JSON lines and tests). Same rules as for a file on disk. */
int fbc_load_buffer(const char *name, const char *data, size_t len, const fbc_load_limits *lim,
		    fbc_meta_fn fn, void *ctx, fbc_diags *diags, fbc_error *err);

/* Decode a YAML 1.1 (go-yaml v2 typing) or JSON document into a json_t, with
 * the limits applied; used by the loader and by L11 (bundle objects). */
int fbc_yaml_to_json(json_t **out, const char *data, size_t len, const fbc_load_limits *lim,
		     fbc_error *err);

/* Convert the first YAML document of data (YAML only: no JSON sniff) with
 * go-yaml v2 typing and the limits applied. *content_line (may be NULL)
 * receives the 1-based line where the root node starts (1 for an empty
 * document, which yields json null). Used by service/bundle, which does its
 * own document splitting and JSON sniffing (bundles.md §2.2). */
int fbc_yaml_doc_to_json(json_t **out, int *content_line, const char *data, size_t len,
			 const fbc_load_limits *lim, fbc_error *err);

#endif
