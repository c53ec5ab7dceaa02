/* placeholder: 'fbcd serve' is under construction */
#include "api/cli.h"

#include <stdio.h>

int fbc_cmd_serve(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fprintf(stderr, "fbcd serve: not implemented yet\n");
	return 2;
}
