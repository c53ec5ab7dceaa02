/*
 * The resolver: "what gets installed if I ask for these packages", following
 * spec resolver.md. Three semantics:
 *
 *  - classic (OLM v0): one SAT problem (CryptoMiniSat) per request set, with
 *    a selector literal per applied constraint and the greedy ordered search
 *    of §2.5 (a full SAT check per choice); candidate order §2.6, installed
 *    bundles §2.7, unsat cores §2.8.
 *  - v1 (operator-controller today): per request filtering and sorting
 *    (§1.2, §3.2), no dependencies.
 *  - v1-deps (fbcd extension): the v1 choice for each requested package, then
 *    classic dependency resolution for what the chosen bundles require.
 *
 * Use: fbc_resolve_request_parse turns the request JSON (issue 4 format) into
 * an fbc_resolve_request; the caller then sets `catalog` on every
 * fbc_resolve_catalog (from `path` with fbc_catalog_load_dir, from inline
 * `fbc` blobs with fbc_resolve_catalog_from_blobs, or from the database) and
 * calls fbc_resolve. An unsatisfiable request or a bad input inside it (a bad
 * range string, an ambiguous channel, an unknown package) is a *result*
 * (satisfiable = false, kind "conflict" or "error"), not an fbc_error: the
 * error return is for malformed request JSON, out-of-memory and limits.
 *
 * Ownership: a request owns its strings and the parsed JSON it was built
 * from, but not the catalogs it points to (the caller frees those after the
 * request). A result owns everything reachable from it (one arena).
 * Thread-safety: fbc_resolve only reads the request and the catalogs, so
 * concurrent resolutions over shared linked catalogs are fine; each result
 * belongs to one thread.
 */
#ifndef FBC_RESOLVER_H
#define FBC_RESOLVER_H

#include "service/base/diag.h"
#include "service/base/error.h"
#include "service/fbc/model.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

typedef enum fbc_resolve_semantics {
	FBC_RESOLVE_CLASSIC = 0,
	FBC_RESOLVE_V1 = 1,
	FBC_RESOLVE_V1_DEPS = 2,
} fbc_resolve_semantics;

/* Bounds on one request (all inputs are bounded, STYLE.md). */
typedef struct fbc_resolve_limits {
	size_t max_catalogs;  /* default 64 */
	size_t max_requests;  /* default 256 */
	size_t max_installed; /* default 1024 */
	size_t max_blobs;     /* inline FBC blobs over all catalogs, default 200,000 */
	size_t max_string;    /* one string field, default 4096 bytes */
	size_t max_variables; /* solver variables per resolution, default 2,000,000 */
} fbc_resolve_limits;

void fbc_resolve_limits_default(fbc_resolve_limits *lim);

/* Optional per-catalog look-up tables (GVK -> bundles), built once per
 * linked catalog and shared read-only by any number of resolutions (the
 * service keeps one per cached catalog). Without one, a resolution scans the
 * catalog's bundles for each required API. Borrows the catalog. */
typedef struct fbc_resolve_index fbc_resolve_index;
int fbc_resolve_index_build(fbc_resolve_index **out, const fbc_catalog *cat, fbc_error *err);
void fbc_resolve_index_free(fbc_resolve_index *ix);

typedef struct fbc_resolve_catalog {
	const char *name;
	int priority;
	const char *path; /* directory to load, NULL for inline catalogs */
	json_t *fbc;	  /* inline blobs (array, borrowed from the request), or NULL */
	/* Set by the caller before fbc_resolve; borrowed, must be linked. */
	const fbc_catalog *catalog;
	const fbc_resolve_index *index; /* optional, built for `catalog`; borrowed */
} fbc_resolve_catalog;

typedef struct fbc_resolve_installed {
	const char *package;
	const char *bundle;
	const char *version; /* as given; parsed tolerantly (classic) or strictly (v1) */
} fbc_resolve_installed;

typedef enum fbc_resolve_policy {
	FBC_RESOLVE_CATALOG_PROVIDED = 0,
	FBC_RESOLVE_SELF_CERTIFIED = 1,
} fbc_resolve_policy;

typedef struct fbc_resolve_req {
	const char *package;
	const char *channel;	   /* NULL: any channel (classic: default channel first) */
	const char *catalog;	   /* NULL: every catalog */
	const char *starting_csv;  /* NULL if absent (classic, first install only) */
	const char *version_range; /* Masterminds grammar (spec §4.2); NULL if absent */
	fbc_resolve_policy policy; /* v1 only */
} fbc_resolve_req;

typedef struct fbc_resolve_request {
	fbc_resolve_semantics semantics;
	fbc_resolve_catalog *catalogs;
	size_t n_catalogs;
	fbc_resolve_installed *installed;
	size_t n_installed;
	fbc_resolve_req *requests;
	size_t n_requests;
	struct fbc_resolve_request_priv *priv; /* owns the memory */
} fbc_resolve_request;

/* Parse the request body (a JSON object). lim may be NULL (defaults). Errors
 * name the field ("requests[2].package") in err->where. */
int fbc_resolve_request_parse(fbc_resolve_request **out, json_t *body,
			      const fbc_resolve_limits *lim, fbc_error *err);
/* An empty request to fill by hand (CLI shorthand flags); strings given to
 * the add functions are copied. */
int fbc_resolve_request_create(fbc_resolve_request **out, fbc_resolve_semantics semantics,
			       fbc_error *err);
int fbc_resolve_request_add_catalog(fbc_resolve_request *req, const char *name, int priority,
				    const char *path, fbc_error *err);
int fbc_resolve_request_add_installed(fbc_resolve_request *req, const char *package,
				      const char *bundle, const char *version, fbc_error *err);
int fbc_resolve_request_add(fbc_resolve_request *req, const fbc_resolve_req *r, fbc_error *err);
void fbc_resolve_request_free(fbc_resolve_request *req);

/* Build a linked catalog from inline FBC blobs (a JSON array of objects).
 * Findings of the typed decode go to diags (may be NULL). */
int fbc_resolve_catalog_from_blobs(fbc_catalog **out, const json_t *blobs, const char *name,
				   fbc_diags *diags, fbc_error *err);

typedef struct fbc_resolve_selected {
	const char *bundle;
	const char *package;
	const char *version;
	const char *catalog; /* "@existing" for an installed bundle that stays */
	const char *channel; /* "" for an installed bundle that stays */
	bool installed;	     /* it was installed before and stays */
} fbc_resolve_selected;

typedef struct fbc_resolve_step {
	const char *bundle;
	const char *package;
	const char *version;
	const char *catalog;
	const char *channel;
	const char *replaces; /* installed bundle it upgrades, NULL if none */
	const char *reason;   /* which request or dependency pulled it in */
} fbc_resolve_step;

typedef struct fbc_resolve_result {
	bool satisfiable;
	const char *kind;	 /* when not satisfiable: "conflict" or "error" */
	const char *explanation; /* when not satisfiable */
	const char **constraints;
	size_t n_constraints;
	fbc_resolve_selected *selected; /* the whole resulting set */
	size_t n_selected;
	fbc_resolve_step *steps; /* new bundles, dependencies before dependers */
	size_t n_steps;
	/* Statistics (benchmarks, metrics). */
	size_t sat_calls;
	size_t n_variables;
	size_t n_clauses_constraints; /* applied constraints (selector literals) */
	struct fbc_resolve_result_priv *priv;
} fbc_resolve_result;

/* Resolve. Every req->catalogs[i].catalog must be set. Returns 0 with a
 * result (satisfiable or not) or a negative code (out of memory, limits). */
int fbc_resolve(fbc_resolve_result **out, const fbc_resolve_request *req,
		const fbc_resolve_limits *lim, fbc_error *err);
void fbc_resolve_result_free(fbc_resolve_result *res);

/* The issue 4 output object; `stats` adds {"satCalls", "variables"}. */
int fbc_resolve_result_to_json(json_t **out, const fbc_resolve_result *res, bool stats,
			       fbc_error *err);

const char *fbc_resolve_semantics_name(fbc_resolve_semantics s);
int fbc_resolve_semantics_parse(fbc_resolve_semantics *out, const char *s);

#endif
