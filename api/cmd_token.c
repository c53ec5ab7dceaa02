/* placeholder: 'fbcd token' is under construction */
#include "api/cli.h"

#include <stdio.h>

int fbc_cmd_token(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fprintf(stderr, "fbcd token: not implemented yet\n");
	return 2;
}
