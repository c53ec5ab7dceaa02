/*
 * fbc_repo_catalogs: every catalog of an operator repository (pipeline.md
 * §3, layout 2: `operators/<pkg>/ci.yaml`, bundles in
 * `operators/<pkg>/<version>/`, rendered catalogs in `catalogs/<name>/<pkg>/`)
 * built deterministically from the repository alone:
 *
 *  - template-managed packages (ci.yaml `fbc.enabled: true`): their
 *    committed `catalogs/<name>/<pkg>/` files, verbatim;
 *  - add-mode packages (every other package with a ci.yaml): their bundles
 *    added one by one in the order their directories were merged (the
 *    history, an input), each to every catalog its
 *    `com.redhat.openshift.versions` label admits (service/addmode/ocp.h),
 *    in the package's `updateGraph` mode (index-add.md P-1), with IIB's
 *    rules (service/addmode). Each package is written as
 *    `<catalog>/<pkg>/catalog.json`, as `opm migrate` writes it.
 *
 * The catalogs are the directories under `catalogs/` at the commit. A
 * bundle is rendered with image `<first allowed_bundle_registries entry of
 * config.yaml><pkg>:<directory>` and, in catalogs v4.17 and later, with
 * the bundle-object-to-csv-metadata migration (templates.md §5).
 *
 * IIB's release rule (P-6, A36): a bundle whose add fails in one catalog is
 * added to none; the failure is a finding, the replay goes on. Problems of
 * a package (ci.yaml A33-A35), of a bundle (unreadable, B rules, a label
 * that does not parse) are findings too: building fails only on I/O,
 * memory or limits.
 *
 * The same code serves `fbcd repo catalogs`, the pull-request checks and
 * the service's ingest: the history is an input so that callers with or
 * without git can compute it (fbc_repo_history_from_git walks first-parent
 * history with pipeline/git; fbc_repo_history_from_tree orders each
 * package's bundles by version when no history is known).
 *
 * Ownership: every object here is opaque and freed with its _free; strings
 * returned are borrowed from it. The tree given to build is only read during
 * the call. Thread-safety: none inside an object; separate objects are
 * independent.
 */
#ifndef FBC_PIPELINE_CATALOGS_H
#define FBC_PIPELINE_CATALOGS_H

#include "pipeline/git/git.h"
#include "service/addmode/addmode.h"
#include "service/base/buf.h"
#include "service/base/error.h"
#include "service/base/tree.h"

#include <stdbool.h>
#include <stddef.h>

/* Bounds. */
#define FBC_REPO_MAX_BUNDLES  100000 /* bundle directories replayed */
#define FBC_REPO_MAX_CATALOGS 256
#define FBC_REPO_MAX_FILE     (64u << 20) /* one committed catalog or ci.yaml file */

/* One merged commit and the bundle directories it added
 * ("operators/<pkg>/<dir>"), in merge order. */
typedef struct fbc_repo_history_step {
	const char *commit; /* for messages; may be "" */
	const char *const *paths;
	size_t n_paths;
} fbc_repo_history_step;

typedef struct fbc_repo_history fbc_repo_history;

/* The steps of a history built by the functions below (borrowed). */
size_t fbc_repo_history_count(const fbc_repo_history *h);
const fbc_repo_history_step *fbc_repo_history_step_at(const fbc_repo_history *h, size_t i);

/* From git: for each package directory under operators/ at rev, its bundle
 * directories in the order of the first-parent commit that first had them
 * (fbc_git_first_added); steps in first-parent commit order. */
int fbc_repo_history_from_git(fbc_repo_history **out, fbc_git *g, const char *rev, fbc_error *err);
/* The same for the named packages only (those absent at rev are left out). */
int fbc_repo_history_from_git_packages(fbc_repo_history **out, fbc_git *g, const char *rev,
				       const char *const *packages, size_t n_packages,
				       fbc_error *err);
/* Without git: one step holding every bundle directory of the tree. */
int fbc_repo_history_from_tree(fbc_repo_history **out, fbc_tree *tree, fbc_error *err);
/* A history from caller-given steps (copied). */
int fbc_repo_history_create(fbc_repo_history **out, const fbc_repo_history_step *steps, size_t n,
			    fbc_error *err);
void fbc_repo_history_free(fbc_repo_history *h);

typedef struct fbc_repo_opts {
	unsigned label_flags;	  /* FBC_OCP_* of service/addmode/ocp.h */
	bool no_validate;	  /* skip the validation after every add (§7.2) */
	bool keep_bundle_objects; /* fbc_addmode_opts.keep_bundle_objects (no SV-13) */
	/* When n_packages > 0: only these packages are read and replayed, and
	 * no committed catalog file is collected, so each catalog holds the
	 * add-mode packages among them and nothing else (the pull-request
	 * checks build the packages a change touches this way). Packages are
	 * independent in add mode but for SV-13 (a semver-mode add of any
	 * package clears the stored objects of every bundle of the index that
	 * heads no channel): built alone, a package has the same channels,
	 * entries and bundles as in a full build, and may keep the objects of
	 * bundles that another package's later semver-mode add would clear. */
	const char *const *packages;
	size_t n_packages;
} fbc_repo_opts;

typedef struct fbc_repo_finding {
	const char *path;    /* bundle directory, ci.yaml, ... */
	const char *commit;  /* the history step, "" when none */
	const char *catalog; /* "" when not about one catalog */
	const char *rule;    /* "A21", "B3", "A34", "P-4", "LIMIT", ... */
	const char *message;
} fbc_repo_finding;

typedef struct fbc_repo_catalogs fbc_repo_catalogs;

/* Build every catalog of the operator repository in tree (its root).
 * FBC_ENOTFOUND when it has no operators/ directory (not this layout). */
int fbc_repo_catalogs_build(fbc_repo_catalogs **out, fbc_tree *tree, const fbc_repo_history *h,
			    const fbc_repo_opts *opts, fbc_error *err);
/* The same, and in *before the catalogs as they were after the first `steps`
 * steps of h (all of them when h has fewer): one replay gives a pull
 * request's merge base and head when the head's history extends the
 * base's and the packages' ci.yaml and config.yaml did not change. */
int fbc_repo_catalogs_build_with(fbc_repo_catalogs **out, fbc_repo_catalogs **before, size_t steps,
				 fbc_tree *tree, const fbc_repo_history *h,
				 const fbc_repo_opts *opts, fbc_error *err);
void fbc_repo_catalogs_free(fbc_repo_catalogs *rc);

size_t fbc_repo_catalogs_count(const fbc_repo_catalogs *rc);
const char *fbc_repo_catalogs_name(const fbc_repo_catalogs *rc, size_t i);
/* The files of catalog i (paths relative to the catalog directory) as a
 * tree in memory, to load or validate. */
int fbc_repo_catalogs_tree(fbc_tree **out, const fbc_repo_catalogs *rc, size_t i, fbc_error *err);
/* True when catalog i of a and catalog j of b certainly hold the same files:
 * both come from one replay (a build and the snapshot fbc_repo_catalogs_
 * build_with took of it), are migrated alike, hold the same committed files
 * and received the same bundles in the same order (adds are deterministic).
 * False means not known to be the same. */
bool fbc_repo_catalogs_same(const fbc_repo_catalogs *a, size_t i, const fbc_repo_catalogs *b,
			    size_t j);
/* Do a and b come from one replay (a build and its snapshot)? Then catalogs
 * that are not fbc_repo_catalogs_same received different bundles. */
bool fbc_repo_catalogs_related(const fbc_repo_catalogs *a, const fbc_repo_catalogs *b);
/* The files of catalog i serialised for comparison (each as "<path length>
 * <data length>\n<path><data>", in tree order), appended to out: two
 * catalogs with the same content give the same bytes. */
int fbc_repo_catalogs_content(fbc_buf *out, const fbc_repo_catalogs *rc, size_t i, fbc_error *err);
/* The add state of catalog i (add-mode packages only). */
const fbc_addmode_index *fbc_repo_catalogs_index(const fbc_repo_catalogs *rc, size_t i);
/* Write `<dir>/<catalog>/...` for every catalog; dir is created if needed,
 * existing catalog directories inside it are replaced. */
int fbc_repo_catalogs_write(const fbc_repo_catalogs *rc, const char *dir, fbc_error *err);

size_t fbc_repo_catalogs_findings_count(const fbc_repo_catalogs *rc);
const fbc_repo_finding *fbc_repo_catalogs_finding(const fbc_repo_catalogs *rc, size_t i);
/* Package names in add mode, and their mode (borrowed). */
size_t fbc_repo_catalogs_addmode_count(const fbc_repo_catalogs *rc);
const char *fbc_repo_catalogs_addmode_package(const fbc_repo_catalogs *rc, size_t i,
					      fbc_addmode_mode *mode);

#endif
