/*
 * Private to pipeline/checks: the run context every check reads, the change
 * set mapped to the layout, the settings read from the base commit, and the
 * helpers checks use to record findings. Not a contract for other modules.
 * One context per run, used from one thread.
 */
#ifndef FBC_PIPELINE_CHECKS_INTERNAL_H
#define FBC_PIPELINE_CHECKS_INTERNAL_H

#include "pipeline/checks/checks.h"
#include "pipeline/checks/settings.h"
#include "service/base/arena.h"
#include "service/base/buf.h"
#include "service/base/diag.h"
#include "service/base/strmap.h"
#include "service/base/tree.h"
#include "service/fbc/model.h"

/* What a changed path is, by the layout at head (or base for deletions). */
typedef enum chk_kind {
	CHK_BUNDLE = 1,	  /* inside a bundle directory */
	CHK_CATALOG = 2,  /* inside a catalog directory */
	CHK_TEMPLATE = 3, /* a catalog template */
	CHK_PACKAGE = 4,  /* another file of a package (ci.yaml, Makefile, release-config) */
	CHK_SETTINGS = 5, /* a repository settings file (config.yaml, .fbcd.yaml, CODEOWNERS) */
	CHK_OTHER = 6,	  /* outside the layout's paths */
} chk_kind;

typedef struct chk_file {
	const fbc_git_change *change;
	const char *path; /* new path, or old path for a deletion */
	chk_kind kind;
	const char *package; /* NULL when none */
	const char *unit;    /* bundle or catalog directory; NULL otherwise */
} chk_file;

typedef enum chk_bundle_state { CHK_B_ADDED = 1, CHK_B_MODIFIED, CHK_B_DELETED } chk_bundle_state;

typedef struct chk_bundle {
	const char *dir; /* operators/<pkg>/<version> */
	const char *package;
	chk_bundle_state state;
	const char *first_path; /* first changed file in it */
} chk_bundle;

/* One catalog directory, loaded lazily at one commit. */
typedef struct chk_catalog {
	const char *dir;	 /* "" for the repository root */
	const char *name;	 /* catalog name (v4.20, the repository's name...) */
	char id[FBC_GIT_ID_MAX]; /* tree id at that commit; "" when absent */
	bool loaded, present;
	fbc_catalog *cat;	    /* linked; NULL when absent or failed (borrowed from ce) */
	fbc_diags *diags;	    /* load and validation findings, paths relative to dir (ce's) */
	char load_error[512];	    /* why it could not be loaded, "" if it was */
	struct chk_cache_entry *ce; /* the cache entry holding cat and diags (a reference) */
} chk_catalog;

/* The cache (cache.c): catalogs by tree id, shared read-only between runs and threads. */
/* Its decoded catalog files by blob id: a catalog whose tree changed re-reads only the files
 * that changed (service/fbc fbc_catalog_cache). */
fbc_catalog_cache *chk_cache_files(fbc_checks_cache *cc);
typedef struct chk_cache_entry chk_cache_entry;
/* A reference to the entry for tree id, or NULL. */
chk_cache_entry *chk_cache_get(fbc_checks_cache *cc, const char *id);
/* Insert (cat and diags are moved in, even on failure) and return a reference. */
int chk_cache_put(chk_cache_entry **out, fbc_checks_cache *cc, const char *id, fbc_catalog *cat,
		  fbc_diags *diags, const char *load_error, fbc_error *err);
void chk_cache_release(fbc_checks_cache *cc, chk_cache_entry *e);
fbc_catalog *chk_cache_catalog(const chk_cache_entry *e);
fbc_diags *chk_cache_diags(chk_cache_entry *e);
const char *chk_cache_error(const chk_cache_entry *e);

/* Byte entries by key ([a-z0-9-], at most 60 characters): the memory layer, then the disk.
 * get: 0 with a malloc'd copy, FBC_ENOTFOUND on a miss. put: best effort (a cache). The
 * caller counts the hit or miss (chk_cache_count) once it knows whether the entry was the
 * one it looked for. */
void chk_cache_count(fbc_checks_cache *cc, bool hit);
int chk_cache_bytes_get(fbc_checks_cache *cc, const char *key, char **data, size_t *len);
void chk_cache_bytes_put(fbc_checks_cache *cc, const char *key, const char *data, size_t len);

/* The on-disk layer (disk.c): files under <dir>/checks-v1, bounded to max bytes (0: 1 GiB). */
typedef struct chk_disk chk_disk;
int chk_disk_open(chk_disk **out, const char *dir, uint64_t max, fbc_error *err);
void chk_disk_close(chk_disk *d);
void chk_disk_set_max(chk_disk *d, uint64_t bytes);
const char *chk_disk_path(const chk_disk *d);
/* 0 with the payload (malloc'd), FBC_ENOTFOUND, or FBC_EINVAL for a damaged file (removed). */
int chk_disk_get(chk_disk *d, const char *key, char **data, size_t *len);
void chk_disk_put(chk_disk *d, const char *key, const char *data, size_t len);
/* A file's header checked: its payload (borrowed), or FBC_EINVAL. */
int chk_disk_decode(const char *file, size_t len, const char **payload, size_t *plen);

/* Recording trees (record.c): *out reads inner and records every request with what it gave,
 * by content id. Free *out (fbc_tree_free) before the record. */
typedef struct chk_rec chk_rec;
int chk_rec_open(chk_rec **rec, fbc_tree **out, fbc_tree *inner, fbc_error *err);
void chk_rec_free(chk_rec *r);
/* The requests and answers as text (appended to out); FBC_EINVAL when an answer had no
 * content id (such a tree cannot key a cache entry). */
int chk_rec_text(fbc_buf *out, const chk_rec *r);
/* 0 when t gives the recorded answers, FBC_ECONFLICT when it does not, FBC_EINVAL for text
 * that is not a record. */
int chk_rec_verify(const char *text, size_t len, fbc_tree *t);
/* "<decimal>term" at *p (before e): the value, *p past term. */
bool chk_parse_len(const char **p, const char *e, char term, size_t *v);

/* Add-mode builds in the cache (amcache.c). */
#define CHK_AMC_NAME_MAX 40
struct fbc_repo_history;
struct fbc_repo_catalogs;
typedef struct chk_amc_finding {
	const char *path, *commit, *catalog, *rule, *message;
} chk_amc_finding;
typedef struct chk_amc_build {
	bool built; /* else error says why */
	const char *error;
	size_t n_cats;
	const char **names;
	size_t *content; /* per catalog: its index in the entry's contents */
	size_t n_add;
	const char **add_pkg, **add_mode;
	size_t n_find;
	chk_amc_finding *finds;
} chk_amc_build;
typedef struct chk_amc_entry {
	char *data; /* the entry's bytes; contents, key and reads point into it */
	size_t len;
	fbc_arena *arena;
	const char *key, *reads[2]; /* reads of the head's and the merge base's trees */
	size_t key_len, reads_len[2];
	size_t n_contents;
	const char **contents;
	size_t *content_len;
	chk_amc_build b[2]; /* head, merge base */
} chk_amc_entry;
/* The lookup key (text) and its file name; FBC_EINVAL when this executable has no build id. */
int chk_amc_key(fbc_buf *key, char name[CHK_AMC_NAME_MAX], bool one_replay, size_t steps,
		const char *const *pkgs, size_t n, const struct fbc_repo_history *hh,
		const struct fbc_repo_history *hm);
int chk_amc_freeze(fbc_buf *out, const char *key, size_t key_len, const fbc_buf *reads_head,
		   const fbc_buf *reads_mb, const struct fbc_repo_catalogs *rh, const char *why_h,
		   const struct fbc_repo_catalogs *rm, const char *why_m, fbc_error *err);
/* data (malloc'd) is taken, also on failure; FBC_EINVAL when malformed. */
int chk_amc_thaw(chk_amc_entry **out, char *data, size_t len);
void chk_amc_entry_free(chk_amc_entry *e);
/* A catalog content (fbc_repo_catalogs_content's form) as a tree in memory. */
int chk_amc_content_tree(fbc_tree **out, const char *content, size_t len, const char *label,
			 fbc_error *err);

typedef struct chk_out {
	fbc_arena *arena;
	fbc_vec findings;	     /* of fbc_finding */
	fbc_check_conclusion forced; /* SKIPPED or ACTION_REQUIRED when set by the check */
	bool has_forced;
	const char *summary; /* set by the check, or derived */
	const char *check_id;
	const char *waiver_package_re_owner; /* unused */
} chk_out;

typedef struct chk_am_build chk_am_build;

typedef struct chk_ctx {
	fbc_git *git;
	fbc_arena *arena; /* the result's */
	const fbc_checks_options *opts;
	fbc_checks_cache *cache; /* the caller's, or a private one (own_cache) */
	bool own_cache;
	char base[FBC_GIT_ID_MAX], head[FBC_GIT_ID_MAX], mb[FBC_GIT_ID_MAX];
	fbc_tree *head_tree, *mb_tree;
	fbc_settings settings; /* from the base commit */
	fbc_vec changes;       /* of fbc_git_change, merge base -> head */
	fbc_vec files;	       /* of chk_file */
	fbc_vec bundles;       /* of chk_bundle */
	fbc_vec packages;      /* of const char * (sorted, unique) */
	fbc_vec catalog_dirs;  /* of const char *: catalogs touched (sorted, unique) */
	fbc_vec affected;      /* of const char *: catalogs to check (touched + add-mode targets) */
	fbc_vec templates;     /* of const char * */
	fbc_vec other;	       /* of const char * */
	fbc_strmap head_cats, mb_cats; /* dir -> chk_catalog * */
	chk_am_build *am_head, *am_mb; /* add-mode builds (addmode.c), made on first use */
	const char *repo_name;
} chk_ctx;

typedef int (*chk_fn)(chk_ctx *c, chk_out *o, fbc_error *err);

/* Record a finding (message formatted). path may be NULL (""). */
int chk_add(chk_out *o, fbc_check_level level, const char *path, int line, const char *code,
	    const char *fmt, ...) __attribute__((format(printf, 6, 7)));
int chk_summary(chk_out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int chk_skip(chk_out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The change set (changes.c). */
int chk_changes_map(chk_ctx *c, fbc_error *err);
/* Package owning a path by the layout, or NULL. */
const char *chk_package_of(const chk_ctx *c, const char *path);

/* Catalogs at head / merge base (catalog.c). *out is NULL when the catalog
 * directory does not exist at that commit. Load problems are in the
 * returned chk_catalog (diags, load_error), never an error return. */
int chk_catalog_get(chk_catalog **out, chk_ctx *c, bool head, const char *dir, fbc_error *err);
void chk_catalogs_dispose(fbc_strmap *m, fbc_checks_cache *cc);
/* The catalog directories at head (every one the layout declares). */
int chk_catalog_dirs(fbc_vec *out, chk_ctx *c, fbc_tree *t, fbc_error *err);
/* Line of the first occurrence of needle in the file at path at head,
 * at or after line `from` (1 when 0); 0 when not found. */
int chk_line_of(chk_ctx *c, const char *path, int from, const char *needle);
/* Read a head file (malloc'd). */
int chk_read_head(char **data, size_t *len, chk_ctx *c, const char *path, size_t max,
		  fbc_error *err);

/* The add-mode packages among the touched ones, built as the ingest builds them (addmode.c),
 * at head or at the merge base, made on first use and kept in the context. *out is NULL
 * outside the operator layout or when no package is touched. A build that cannot run (no
 * operators/ directory at that commit...) is not an error: chk_am_error says why. */
int chk_am_get(const chk_am_build **out, chk_ctx *c, bool head, fbc_error *err);
void chk_am_free(chk_am_build *b);
const char *chk_am_error(const chk_am_build *b); /* NULL when it was built */
/* Its catalogs: their names, and each loaded and validated on first use (dir
 * "catalogs/<name>"; cat NULL and load_error set when it does not load; *out NULL when the
 * build has no such catalog). */
size_t chk_am_catalogs(const chk_am_build *b);
const char *chk_am_catalog_name(const chk_am_build *b, size_t i);
int chk_am_catalog(const chk_catalog **out, const chk_am_build *b, const char *name,
		   fbc_error *err);
/* The touched packages that are in add mode, and their mode's name. */
size_t chk_am_addmode_count(const chk_am_build *b);
const char *chk_am_addmode_package(const chk_am_build *b, size_t i, const char **mode);
bool chk_am_is_addmode(const chk_am_build *b, const char *pkg);
/* The build's findings (pipeline/catalogs: path, catalog or "", rule, message). */
size_t chk_am_findings(const chk_am_build *b);
void chk_am_finding(const chk_am_build *b, size_t i, const char **path, const char **catalog,
		    const char **rule, const char **message);
bool chk_am_has_finding(const chk_am_build *b, const char *path, const char *catalog,
			const char *rule);
/* Findings from index `from` of o on are about a catalog built in add mode, whose files are
 * not in the repository: point them at the change (the CSV of the package's first bundle
 * this change adds, at its replaces line; else the package's ci.yaml; else its first
 * changed file) and name the catalog in the message. */
int chk_am_relocate(chk_ctx *c, chk_out *o, size_t from, const char *catalog, const char *pkg);
/* The manifests/ file of a bundle directory at head holding its CSV (first by name), or NULL. */
const char *chk_csv_file(chk_ctx *c, const char *dir);

/* Checks (check_*.c). */
int chk_run_changes(chk_ctx *c, chk_out *o, fbc_error *err);
int chk_run_permissions(chk_ctx *c, chk_out *o, fbc_error *err);
int chk_run_bundles(chk_ctx *c, chk_out *o, fbc_error *err);
int chk_run_catalogs(chk_ctx *c, chk_out *o, fbc_error *err);
int chk_run_templates(chk_ctx *c, chk_out *o, fbc_error *err);
int chk_run_graph(chk_ctx *c, chk_out *o, fbc_error *err);
int chk_run_crds(chk_ctx *c, chk_out *o, fbc_error *err);
int chk_run_resolve(chk_ctx *c, chk_out *o, fbc_error *err);
int chk_run_policy(chk_ctx *c, chk_out *o, fbc_error *err);

/* Push an arena string onto a vec of const char *, unique and sorted later. */
int chk_strvec_add(fbc_vec *v, const char *s);
void chk_strvec_sort_unique(fbc_vec *v);
bool chk_strvec_has(const fbc_vec *v, const char *s);

#endif
