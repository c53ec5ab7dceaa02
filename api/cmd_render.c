/* placeholder: 'fbcd render' is under construction */
#include "api/cli.h"

#include <stdio.h>

int fbc_cmd_render(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fprintf(stderr, "fbcd render: not implemented yet\n");
	return 2;
}
