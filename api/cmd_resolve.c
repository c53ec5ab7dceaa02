/* placeholder: 'fbcd resolve' is under construction */
#include "api/cli.h"

#include <stdio.h>

int fbc_cmd_resolve(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fprintf(stderr, "fbcd resolve: not implemented yet\n");
	return 2;
}
