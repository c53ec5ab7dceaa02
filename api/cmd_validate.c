/* placeholder: 'fbcd validate' is under construction */
#include "api/cli.h"

#include <stdio.h>

int fbc_cmd_validate(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fprintf(stderr, "fbcd validate: not implemented yet\n");
	return 2;
}
