/*
 * Masterminds/semver v3 NewConstraint and Check (placeholder, being written).
 */
#include "service/semver/semver_int.h"

int fbc_semver_range_parse_masterminds(fbc_semver_range **out, const char *s, fbc_error *err)
{
	return fbc_error_set(err, FBC_EINTERNAL, NULL,
			     "Masterminds ranges are not implemented yet");
}

bool mm_term_matches(const struct range_term *t, const fbc_semver *v, bool include_pre)
{
	return false;
}
