/*
 * Private helpers of pipeline/catalogs (not for use outside this folder).
 */
#ifndef FBC_PIPELINE_CATALOGS_INTERNAL_H
#define FBC_PIPELINE_CATALOGS_INTERNAL_H

#include "pipeline/catalogs/catalogs.h"
#include "service/base/arena.h"
#include "service/base/strmap.h"
#include "service/base/vec.h"

#include <stdbool.h>
#include <stdint.h>

/* The state of a build (catalogs.c builds it, output.c writes it out). */
typedef struct repo_file {
	char *path; /* relative to the catalog directory */
	char *data;
	size_t len;
} repo_file;

typedef struct repo_catalog {
	char *name;
	bool ocp;      /* named v4.NN: labels apply */
	bool csv_meta; /* v4.17 and later: bundle-object-to-csv-metadata */
	fbc_vec files; /* of repo_file: committed files of template-managed packages */
	fbc_addmode_index *ix;
	fbc_vec adds; /* of size_t: the replay's number of every bundle added to it, in order */
} repo_catalog;

typedef struct repo_pkg {
	char *name;
	bool addmode;
	fbc_addmode_mode mode;
	bool broken; /* ci.yaml problem: not replayed */
} repo_pkg;

struct fbc_repo_catalogs {
	fbc_vec catalogs; /* of repo_catalog */
	fbc_vec pkgs;	  /* of repo_pkg, sorted by name */
	fbc_vec findings; /* of fbc_repo_finding */
	fbc_arena *arena; /* finding strings */
	char *image_prefix;
	uint64_t replay; /* this replay's id, shared with its snapshot */
	size_t seq;	 /* bundles tried so far in the replay */
};

/* Sorted names of the directories under dir (malloc'd; dispose below). */
int am_repo_subdirs(fbc_vec *out, fbc_tree *t, const char *dir, fbc_error *err);
void am_repo_names_dispose(fbc_vec *names);
/* Is name one of names[0..n)? */
bool am_repo_listed(const char *name, const char *const *names, size_t n);

#endif
