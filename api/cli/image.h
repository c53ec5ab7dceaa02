/*
 * Pieces of `fbcd image` shared by its source files (private to api/cli).
 */
#ifndef FBC_API_CLI_IMAGE_H
#define FBC_API_CLI_IMAGE_H

#include <stddef.h>

/* "oci:DIR[:NAME]" into dir and name ("" when absent); -1 when arg is not
 * of that form or does not fit. */
int fbc_cli_image_parse_layout(char *dir, size_t dir_size, char *name, size_t name_size,
			       const char *arg);

/* `fbcd image inspect REF|oci:DIR[:NAME]`. */
int fbc_cli_image_inspect(int argc, char **argv);

#endif
