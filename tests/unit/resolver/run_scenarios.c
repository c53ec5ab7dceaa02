/* Runs every JSON scenario in tests/resolver: {"description", "input", "expect"}
 * where expect is matched as a subset of the result (rtest_match). */
#include "tests/unit/resolver/rtest.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int main(int argc, char **argv)
{
	char *names[1024];
	size_t n = 0, failed = 0;
	DIR *d;
	struct dirent *de;

	if (argc != 2) {
		fprintf(stderr, "usage: run_scenarios DIR\n");
		return 2;
	}
	if (!(d = opendir(argv[1]))) {
		perror(argv[1]);
		return 2;
	}
	while ((de = readdir(d)) && n < 1024) {
		size_t l = strlen(de->d_name);
		if (l > 5 && strcmp(de->d_name + l - 5, ".json") == 0)
			names[n++] = strdup(de->d_name);
	}
	closedir(d);
	qsort(names, n, sizeof(*names), cmp);
	printf("1..%zu\n", n);
	for (size_t i = 0; i < n; i++) {
		char path[4096], why[1024] = "";
		json_error_t je;
		json_t *sc, *out = NULL;
		bool ok = false;

		snprintf(path, sizeof(path), "%s/%s", argv[1], names[i]);
		sc = json_load_file(path, 0, &je);
		if (!sc) {
			snprintf(why, sizeof(why), "line %d: %s", je.line, je.text);
		} else if (!(out = rtest_resolve(json_object_get(sc, "input"), argv[1]))) {
			snprintf(why, sizeof(why), "resolution failed");
		} else {
			ok = rtest_match(json_object_get(sc, "expect"), out, why, sizeof(why));
		}
		printf("%s %zu - %s%s%s\n", ok ? "ok" : "not ok", i + 1, names[i], ok ? "" : ": ",
		       why);
		if (!ok && out) {
			char *s = json_dumps(out, JSON_INDENT(2));
			printf("# got: %s\n", s ? s : "?");
			free(s);
		}
		failed += !ok;
		json_decref(out);
		json_decref(sc);
		free(names[i]);
	}
	return failed ? 1 : 0;
}
