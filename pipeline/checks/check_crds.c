/* `crds`: CRD upgrade safety of new bundles against their predecessors. */
#include "pipeline/checks/internal.h"

int chk_run_crds(chk_ctx *c, chk_out *o, fbc_error *err)
{
	size_t added = 0;

	for (size_t i = 0; i < c->bundles.len; i++)
		added += FBC_VEC_AT(&c->bundles, chk_bundle, i)->state == CHK_B_ADDED;
	if (added == 0)
		return chk_summary(o, "no bundle is added by this change");
	return chk_skip(o, "not implemented yet");
}
