/* Loading the catalog argument of a CLI command; see cli_util.h. Kept apart
 * from the formatting helpers so that those can be tested without the loader. */
#include "api/cli/util.h"

static int load(fbc_catalog **out, const char *cmd, const char *dir, fbc_diags *diags,
		const fbc_load_limits *lim)
{
	fbc_catalog *cat = NULL;
	fbc_error err;
	int rc;

	if (fbc_diags_init(diags, 0)) {
		fprintf(stderr, "fbcd %s: out of memory\n", cmd);
		return FBC_CLI_USAGE;
	}
	if ((rc = fbc_cli_check_dir(cmd, dir)))
		return rc;
	fbc_error_init(&err);
	if (fbc_catalog_load_dir(&cat, dir, lim, diags, &err)) {
		fbc_cli_report(cmd, &err, dir);
		return FBC_CLI_USAGE;
	}
	*out = cat;
	return 0;
}

int fbc_cli_load(fbc_catalog **out, const char *cmd, const char *dir, fbc_diags *diags)
{
	return load(out, cmd, dir, diags, NULL);
}

int fbc_cli_load_to_validate(fbc_catalog **out, const char *cmd, const char *dir, fbc_diags *diags)
{
	fbc_load_limits lim;

	fbc_load_limits_default(&lim);
	lim.validate_only = true;
	lim.validate_lean = true;
	return load(out, cmd, dir, diags, &lim);
}
