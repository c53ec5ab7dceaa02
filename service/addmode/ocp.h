/*
 * The `com.redhat.openshift.versions` bundle label: which OpenShift
 * catalogs (indices v4.NN) a bundle goes to (index-add.md §9 P-3..P-5,
 * IIB's is_bundle_version_valid).
 *
 * Grammar, after every 'v' is removed and surrounding blanks trimmed:
 *   X          X and later              (v4.12)
 *   A-B        A to B inclusive         (v4.12-v4.16)
 *   =X         exactly X                (=v4.14)
 *   X,Y,...    the lowest listed and later (legacy; v4.5,v4.6)
 *   P|P|...    any part admits; each part is =X or >=X (=v4.5|>=v4.7)
 * X = N(.N)* with 1 to 4 numeric parts (missing parts are 0). No label
 * (NULL or empty) admits every catalog (P-3, community). A label IIB cannot
 * parse admits nothing: here it is an FBC_EPARSE error naming the label.
 *
 * Pure functions, thread-safe.
 */
#ifndef FBC_ADDMODE_OCP_H
#define FBC_ADDMODE_OCP_H

#include "service/base/error.h"

#include <stdbool.h>

#define FBC_OCP_LABEL_MAX 256 /* bytes in a label; longer is FBC_ELIMIT */

enum {
	/* P-5: a label written without any 'v' was not honoured on release
	 * (history shows such bundles in every index): admit every catalog. */
	FBC_OCP_VLESS_ADMITS_ALL = 1,
};

/* Whether `label` admits the catalog of OpenShift version `catalog`
 * ("v4.20", "4.20"). FBC_EPARSE when the label (or catalog) does not parse;
 * *out is written only on success. */
int fbc_ocp_label_admits(bool *out, const char *label, const char *catalog, unsigned flags,
			 fbc_error *err);

/* Whether a catalog name is an OpenShift version ("v4.20"). */
bool fbc_ocp_catalog_name(const char *catalog);

#endif
