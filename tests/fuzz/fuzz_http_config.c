/*
 * libFuzzer target for the `fbcd serve` configuration file parser
 * (fbc_http_config_load_file): the input is the YAML file, passed through a
 * memfd so the real file-reading path runs. Errors must name their origin.
 */
#include "tests/fuzz/fuzz.h"

#include "api/http/config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int fd = -1;
	static char path[64];
	fbc_http_config c;
	fbc_error err;

	if (fd < 0) {
		fd = memfd_create("fbcd-config", 0);
		if (fd < 0)
			abort();
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	}
	if (ftruncate(fd, 0) != 0 || pwrite(fd, data, size, 0) != (ssize_t)size)
		abort();
	fbc_http_config_init(&c);
	fbc_error_init(&err);
	if (fbc_http_config_load_file(&c, path, &err) != 0 && (err.code == 0 || !err.where[0]))
		abort();
	fbc_http_config_dispose(&c);
	return 0;
}
