/*
 * The pull-request check engine (spec pipeline.md §5): given a repository and
 * two revisions, it takes the change set from their merge base, reads the
 * settings from the base commit, runs every check of the table (changes,
 * permissions, bundles, catalogs, templates, graph, crds, resolve, policy)
 * and returns the result as a value: per check a conclusion, a summary and
 * findings that point at the file and line at fault in the head commit.
 * `fbcd pr check` and the service's `pr.check` job run this same function;
 * the only formatter of the result (JSON, text) is here too.
 *
 *     fbc_checks_options o = {.author = "alice"};
 *     fbc_checks_result *r;
 *     if (fbc_checks_run(&r, repo, "main", "refs/pull/7/head", &o, &err) == 0) {
 *             json_t *doc;
 *             fbc_checks_result_json(&doc, r, &err);   // the §5 document
 *             ... fbc_checks_result_exit(r) ...        // 0 success, 1 otherwise
 *             fbc_checks_result_free(r);
 *     }
 *
 * Every check runs even when another fails; a check that cannot run is
 * `skipped` with the reason in its summary (never a pass). fbc_checks_run
 * fails (negative FBC_E*) only when the comparison itself is impossible: a
 * revision that does not resolve, unrelated histories, an unreadable
 * repository, out of memory. Findings about the content are never errors.
 *
 * Ownership: the result owns everything reachable from it
 * (fbc_checks_result_free). The repository and the options are borrowed for
 * the call only. The optional cache (fbc_checks_cache) is shared between
 * runs and threads; it keeps parse and validation results by git object id.
 * Thread-safety: runs on different results may proceed concurrently.
 */
#ifndef FBC_PIPELINE_CHECKS_H
#define FBC_PIPELINE_CHECKS_H

#include "pipeline/git/git.h"
#include "service/base/buf.h"
#include "service/base/error.h"
#include "service/base/vec.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum fbc_check_level {
	FBC_LEVEL_NOTICE = 0,
	FBC_LEVEL_WARNING = 1,
	FBC_LEVEL_FAILURE = 2,
} fbc_check_level;

typedef enum fbc_check_conclusion {
	FBC_CONCL_SUCCESS = 0,
	FBC_CONCL_WARNING = 1,
	FBC_CONCL_SKIPPED = 2,
	FBC_CONCL_ACTION_REQUIRED = 3, /* permissions waiting for an approval */
	FBC_CONCL_FAILURE = 4,
} fbc_check_conclusion;

/* One finding (a GitHub annotation): path and line in the head commit. */
typedef struct fbc_finding {
	const char *path; /* "" when it is about the whole change */
	int line;	  /* 1-based; 0 when unknown (the whole file) */
	fbc_check_level level;
	const char *code; /* stable per check: "V4", "G1", "not-owner", ... */
	const char *message;
} fbc_finding;

typedef struct fbc_check_result {
	const char *id;
	fbc_check_conclusion conclusion;
	const char *summary;
	fbc_finding *findings;
	size_t n_findings;
	double ms; /* wall time of this check */
} fbc_check_result;

/* The change set (§5 "changes"): sorted lists of strings. */
typedef struct fbc_checks_changes {
	const char **packages;
	size_t n_packages;
	const char **bundles_added, **bundles_modified, **bundles_deleted;
	size_t n_bundles_added, n_bundles_modified, n_bundles_deleted;
	const char **catalogs; /* catalog directories touched (paths) */
	size_t n_catalogs;
	const char **templates;
	size_t n_templates;
	const char **other;
	size_t n_other;
} fbc_checks_changes;

typedef struct fbc_checks_result {
	char base[FBC_GIT_ID_MAX], head[FBC_GIT_ID_MAX], merge_base[FBC_GIT_ID_MAX];
	const char *author;		 /* "" when not given */
	const char *layout;		 /* "fbcd", "operators" or "plain" */
	fbc_check_conclusion conclusion; /* SUCCESS, ACTION_REQUIRED or FAILURE */
	fbc_checks_changes changes;
	fbc_check_result *checks; /* in table order; only the selected ones */
	size_t n_checks;
	double total_ms;
	bool cache_used; /* a cache from the options: hits and misses of this run */
	size_t cache_hits, cache_misses;
	struct fbc_checks_result_priv *priv;
} fbc_checks_result;

typedef struct fbc_checks_cache fbc_checks_cache;

typedef struct fbc_checks_options {
	const char *author;		/* NULL: unknown (permissions need approvals) */
	const char *const *approved_by; /* logins who commented /approve */
	size_t n_approved_by;
	const char *const *only; /* run only these check ids (NULL: all) */
	size_t n_only;
	fbc_checks_cache *cache; /* optional; shared between runs */
} fbc_checks_options;

/* The check ids in table order (NULL-terminated). */
extern const char *const fbc_checks_ids[];
bool fbc_checks_id_known(const char *id);

int fbc_checks_run(fbc_checks_result **out, fbc_git *repo, const char *base, const char *head,
		   const fbc_checks_options *opts, fbc_error *err);
void fbc_checks_result_free(fbc_checks_result *r);

/* The §5 JSON document. */
int fbc_checks_result_json(json_t **out, const fbc_checks_result *r, fbc_error *err);
/* Text: `path:line: level: check/code: message` per finding, then a summary
 * table (check, conclusion, findings, ms, summary) and the conclusion. */
int fbc_checks_result_text(fbc_buf *out, const fbc_checks_result *r, fbc_error *err);
/* 0 for success, 1 for failure or action_required (the CLI's exit status). */
int fbc_checks_result_exit(const fbc_checks_result *r);

const char *fbc_check_conclusion_name(fbc_check_conclusion c);
const char *fbc_check_level_name(fbc_check_level l);

/* A cache shared between runs: loaded and validated catalogs keyed by the git tree id of
 * their directory (equal ids, equal content), and the add-mode builds of a change keyed by
 * their inputs (this executable's build id, the packages, their merge histories) and checked
 * against every file and directory the builds read (by object id), bounded to max_bytes (0:
 * 256 MiB) of accounted memory, least recently used unreferenced entries out first. A catalog
 * unchanged between base and head, or between runs sharing the cache, is parsed and validated
 * once; a change checked again replays nothing. Safe to share between threads.
 * With dir (NULL: memory only), the add-mode builds also live on disk under
 * <dir>/checks-v1 (created; FBC_EINVAL when it cannot be used), shared by every process using
 * the same directory and bounded to 1 GiB (fbc_checks_cache_set_disk_max). Without a cache in
 * the options, each run uses a private one and nothing is kept. */
int fbc_checks_cache_create(fbc_checks_cache **out, size_t max_bytes, const char *dir,
			    fbc_error *err);
void fbc_checks_cache_set_disk_max(fbc_checks_cache *c, uint64_t bytes);
/* <dir>/checks-v1, or NULL without a directory. */
const char *fbc_checks_cache_dir(const fbc_checks_cache *c);
void fbc_checks_cache_free(fbc_checks_cache *c);
/* Entries, accounted bytes, hits and misses so far (benchmarks, metrics). */
void fbc_checks_cache_stats(const fbc_checks_cache *c, size_t *entries, size_t *bytes, size_t *hits,
			    size_t *misses);

#endif
