/*
 * Private helpers of pipeline/catalogs (not for use outside this folder).
 */
#ifndef FBC_PIPELINE_CATALOGS_INTERNAL_H
#define FBC_PIPELINE_CATALOGS_INTERNAL_H

#include "pipeline/catalogs/catalogs.h"
#include "service/base/arena.h"
#include "service/base/strmap.h"
#include "service/base/vec.h"

/* Sorted names of the directories under dir (malloc'd; dispose below). */
int am_repo_subdirs(fbc_vec *out, fbc_tree *t, const char *dir, fbc_error *err);
void am_repo_names_dispose(fbc_vec *names);

#endif
