/*
 * Catalog validation: the conversion rules C1-C28 and the model rules
 * V1-V12 of spec fbc-validation.md §2.2-§2.3, on a linked catalog.
 *
 * Verdict: a catalog is invalid exactly when opm validate says so (load
 * findings L1-L11 come from the loader and fbc_catalog_add_meta). Unlike
 * opm, every error is reported, not only the first: after a C-rule failure
 * validation goes on wherever the model still makes sense (a duplicate
 * package, channel or bundle is reported and then left out; an unknown
 * package's channels and bundles are reported and skipped), and the V rules
 * run on the rest. Each finding carries the rule id, a message in opm's
 * wording, the file and line of the blob at fault and the package, channel
 * and bundle where they apply.
 *
 * Strict extras (opts->strict, off by default because they go beyond opm):
 *   S1  at most one olm.csv.metadata per bundle (opm serve)
 *   S2  custom schema and package names match ^[a-zA-Z0-9][a-zA-Z0-9._-]*$ (opm serve)
 *   S4  olm.constraint values: at most 131072 bytes, known fields only (OLM v0 resolver)
 *   S5  olm.package.required versionRange parses as a blang range (OLM v0 resolver)
 *
 * Thread-safety: reads the catalog only; concurrent validations of one
 * linked catalog are fine, each with its own diags.
 */
#ifndef FBC_FBC_VALIDATE_H
#define FBC_FBC_VALIDATE_H

#include "service/base/diag.h"
#include "service/base/error.h"
#include "service/fbc/model.h"

#include <stdbool.h>

typedef struct fbc_validate_opts {
	bool strict; /* S1, S2, S4, S5 */
	/* 0: the channel-graph and model rules (V1-V12) run on a second thread
	 * next to the others when the catalog is large (FBC_VALIDATE_PARALLEL_MIN
	 * bundles and channels) and there are two CPUs, in parts (of the sorted
	 * packages) that the calling thread takes too once the other rules are
	 * done; 1: one thread. The findings and their order are the same either
	 * way. */
	unsigned threads;
} fbc_validate_opts;

#define FBC_VALIDATE_PARALLEL_MIN 2000

/* Validate a linked catalog; findings are appended to diags (not sorted:
 * call fbc_diags_sort). opts may be NULL (defaults). Returns 0 whatever the
 * findings; an error only when validation itself failed (out of memory). */
int fbc_validate(const fbc_catalog *cat, const fbc_validate_opts *opts, fbc_diags *diags,
		 fbc_error *err);

#endif
