/* placeholder: 'fbcd migrate' is under construction */
#include "api/cli.h"

#include <stdio.h>

int fbc_cmd_migrate(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fprintf(stderr, "fbcd migrate: not implemented yet\n");
	return 2;
}
