/*
 * Replay driver: runs a fuzz target (linked in) over every file named on the
 * command line, directories walked one level deep in name order. Built in
 * every configuration and registered as a unit test, so that the sanitizer
 * build exercises each target on its seed corpus and on every reproducer
 * kept there.
 */
#include "tests/fuzz/fuzz.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define REPLAY_MAX_INPUT (16u << 20)

static int run_file(const char *path, size_t *count)
{
	FILE *f = fopen(path, "rb");
	uint8_t *data = NULL;
	size_t n;
	int rc = 1;

	if (!f) {
		fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
		return 1;
	}
	data = malloc(REPLAY_MAX_INPUT + 1);
	if (!data) {
		fprintf(stderr, "replay: out of memory\n");
		goto done;
	}
	n = fread(data, 1, REPLAY_MAX_INPUT + 1, f);
	if (ferror(f) || n > REPLAY_MAX_INPUT) {
		fprintf(stderr, "replay: %s: unreadable or larger than %u bytes\n", path,
			REPLAY_MAX_INPUT);
		goto done;
	}
	/* exact-size copy so that ASan sees reads past the input's end */
	uint8_t *exact = malloc(n ? n : 1);
	if (!exact)
		goto done;
	memcpy(exact, data, n);
	fprintf(stderr, "replay: %s (%zu bytes)\n", path, n);
	LLVMFuzzerTestOneInput(exact, n);
	free(exact);
	(*count)++;
	rc = 0;
done:
	free(data);
	fclose(f);
	return rc;
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int run_dir(const char *dir, size_t *count)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char **names = NULL;
	size_t n = 0, cap = 0;
	int rc = 0;

	if (!d) {
		fprintf(stderr, "replay: %s: %s\n", dir, strerror(errno));
		return 1;
	}
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		if (n == cap) {
			size_t nc = cap ? 2 * cap : 64;
			char **nn = realloc(names, nc * sizeof(*nn));
			if (!nn) {
				rc = 1;
				goto done;
			}
			names = nn;
			cap = nc;
		}
		size_t len = strlen(dir) + strlen(e->d_name) + 2;
		if (!(names[n] = malloc(len))) {
			rc = 1;
			goto done;
		}
		snprintf(names[n], len, "%s/%s", dir, e->d_name);
		n++;
	}
	qsort(names, n, sizeof(*names), cmp_names);
	for (size_t i = 0; i < n; i++) {
		struct stat st;
		if (stat(names[i], &st) == 0 && S_ISREG(st.st_mode))
			rc |= run_file(names[i], count);
	}
done:
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	closedir(d);
	return rc;
}

int main(int argc, char **argv)
{
	size_t count = 0;
	int rc = 0;

	for (int i = 1; i < argc; i++) {
		struct stat st;
		if (stat(argv[i], &st) != 0) {
			fprintf(stderr, "replay: %s: %s\n", argv[i], strerror(errno));
			rc = 1;
		} else if (S_ISDIR(st.st_mode)) {
			rc |= run_dir(argv[i], &count);
		} else {
			rc |= run_file(argv[i], &count);
		}
	}
	fprintf(stderr, "replay: %zu inputs\n", count);
	if (count == 0)
		rc = 1; /* an empty corpus is a wiring mistake, not a pass */
	return rc;
}
