/*
 * The repository's settings for pull-request checks, read from the BASE
 * commit (spec pipeline.md §3, §5.2) so that a pull request cannot loosen its
 * own rules: `.fbcd.yaml`, community-operators' `config.yaml` and
 * `operators/<pkg>/ci.yaml`, and CODEOWNERS. Each file has a small parser
 * over bounded input (YAML through service/load's bounded decoder); a file
 * that does not parse is an fbc_error naming the file, line and field.
 *
 * Ownership: everything parsed lives in the arena given to the parser.
 * Thread-safety: parsers are reentrant.
 */
#ifndef FBC_PIPELINE_CHECKS_SETTINGS_H
#define FBC_PIPELINE_CHECKS_SETTINGS_H

#include "service/base/arena.h"
#include "service/base/error.h"

#include <stdbool.h>
#include <stddef.h>

struct fbc_tree;

#define FBC_SETTINGS_MAX_BYTES (1u << 20) /* any settings file */

typedef enum fbc_layout {
	FBC_LAYOUT_PLAIN = 0,	  /* the root is one catalog */
	FBC_LAYOUT_OPERATORS = 1, /* operators/<pkg>/ci.yaml (community-operators) */
	FBC_LAYOUT_FBCD = 2,	  /* .fbcd.yaml */
} fbc_layout;

typedef enum fbc_severity {
	FBC_SEV_DEFAULT = 0,
	FBC_SEV_FAIL,
	FBC_SEV_WARN,
	FBC_SEV_OFF,
	FBC_SEV_STRICT, /* crds: v1 safety rules fail too */
} fbc_severity;

typedef struct fbc_settings_catalog {
	const char *path; /* glob over directories, `*` per component */
	const char *name; /* "{dir}" substituted; NULL: the directory's name */
} fbc_settings_catalog;

typedef struct fbc_waiver {
	const char *check;     /* check id */
	const char **packages; /* POSIX extended regexes, matched unanchored as Python re.search */
	size_t n_packages;
} fbc_waiver;

typedef struct fbc_owner_rule {
	const char *pattern; /* as written */
	const char **owners; /* "@user", "@org/team" or e-mail; without the '@' */
	size_t n_owners;
	int line;
} fbc_owner_rule;

typedef struct fbc_settings {
	fbc_layout layout;
	/* .fbcd.yaml (or the layout's defaults) */
	fbc_settings_catalog *catalogs;
	size_t n_catalogs;
	const char *bundles;   /* glob, NULL if none */
	const char *templates; /* glob, NULL if none */
	const char *owners;    /* "CODEOWNERS" path or "ci.yaml" */
	struct {
		const char *id;
		fbc_severity sev;
	} severities[16];
	size_t n_severities;
	fbc_waiver *waivers;
	size_t n_waivers;
	/* config.yaml */
	const char **maintainers;
	size_t n_maintainers;
	const char **allowed_registries; /* prefixes; none: any registry */
	size_t n_allowed_registries;
	const char **csv_metadata_only; /* catalog names (globs); operator layout default v4.17+ */
	size_t n_csv_metadata_only;
	bool csv_metadata_from_v417; /* operator layout: catalogs v4.17 and later */
	/* CODEOWNERS */
	fbc_owner_rule *owner_rules;
	size_t n_owner_rules;
	const char *owners_file; /* where the rules were read, for messages */
} fbc_settings;

typedef struct fbc_ci_yaml {
	const char **reviewers;
	size_t n_reviewers;
	bool fbc_enabled;
	const char *update_graph; /* "replaces-mode", "semver-mode" or NULL */
	bool merge;		  /* `merge: false` turns auto-merge off */
	struct {
		const char *template_name;
		const char *type;
		const char **catalogs;
		size_t n_catalogs;
	} * mappings;
	size_t n_mappings;
} fbc_ci_yaml;

/* Parsers. data need not be NUL-terminated. `file` names the input in
 * errors. Each leaves the output untouched on error. */
int fbc_settings_parse_fbcd(fbc_settings *out, fbc_arena *a, const char *file, const char *data,
			    size_t len, fbc_error *err);
int fbc_settings_parse_config(fbc_settings *out, fbc_arena *a, const char *file, const char *data,
			      size_t len, fbc_error *err);
int fbc_settings_parse_codeowners(fbc_settings *out, fbc_arena *a, const char *file,
				  const char *data, size_t len, fbc_error *err);
int fbc_settings_parse_ci(fbc_ci_yaml *out, fbc_arena *a, const char *file, const char *data,
			  size_t len, fbc_error *err);

/* The configured severity of a check (DEFAULT when not set). */
fbc_severity fbc_settings_severity(const fbc_settings *s, const char *check);
/* Is package waived for check? */
bool fbc_settings_waived(const fbc_settings *s, const char *check, const char *package);
/* Owners of path by CODEOWNERS (last matching rule wins); NULL/0 if none. */
const fbc_owner_rule *fbc_settings_owners_of(const fbc_settings *s, const char *path);
/* GitHub CODEOWNERS pattern match (gitignore rules, exposed for tests). */
bool fbc_codeowners_match(const char *pattern, const char *path);
/* The catalog directories of a .fbcd.yaml layout in tree: for each
 * catalogs[i] (in order), the directory its path names (no '*') or every
 * directory under it (one trailing "/<star>" component; other globs match
 * nothing), in name order, with the catalog's name (catalogs[i].name with
 * "{dir}" replaced by the directory's last component; the directory's name
 * when unset). fn's non-zero return stops the walk and is returned. */
typedef int (*fbc_settings_catalog_fn)(const char *dir, const char *name, void *ctx,
				       fbc_error *err);
int fbc_settings_catalog_dirs(const fbc_settings *s, struct fbc_tree *t, fbc_settings_catalog_fn fn,
			      void *ctx, fbc_error *err);
/* Does a catalog named `name` carry csv metadata only (no olm.bundle.object)? */
bool fbc_settings_csv_metadata_only(const fbc_settings *s, const char *name);
/* Case-insensitive membership (GitHub logins). */
bool fbc_login_in(const char *login, const char *const *list, size_t n);

#endif
