/* Loading the catalog argument of a CLI command; see cli_util.h. Kept apart
 * from the formatting helpers so that those can be tested without the loader. */
#include "api/cli_util.h"

int fbc_cli_load(fbc_catalog **out, const char *cmd, const char *dir, fbc_diags *diags)
{
	fbc_catalog *cat = NULL;
	fbc_error err;
	int rc;

	if ((rc = fbc_cli_check_dir(cmd, dir)))
		return rc;
	fbc_error_init(&err);
	if (fbc_catalog_load_dir(&cat, dir, NULL, diags, &err)) {
		fprintf(stderr, "fbcd %s: %s%s%s\n", cmd, err.where[0] ? err.where : dir,
			err.message[0] ? ": " : "", err.message);
		return FBC_CLI_USAGE;
	}
	*out = cat;
	return 0;
}
