/* placeholder: 'fbcd graph' is under construction */
#include "api/cli.h"

#include <stdio.h>

int fbc_cmd_graph(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fprintf(stderr, "fbcd graph: not implemented yet\n");
	return 2;
}
