/* `fbcd migrate`: apply the embedded database migrations and exit. */
#include "api/cli/cli.h"
#include "db/db.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

static void usage(FILE *f)
{
	fprintf(f, "usage: fbcd migrate [--database-url URL]\n\n"
		   "Apply the database migrations built into fbcd (under an advisory lock,\n"
		   "safe with several replicas) and exit. The URL defaults to\n"
		   "$FBCD_DATABASE_URL.\n");
}

int fbc_cmd_migrate(int argc, char **argv)
{
	static const struct option opts[] = {
		{"database-url", required_argument, NULL, 'd'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	const char *url = getenv("FBCD_DATABASE_URL");
	fbc_error err;
	int c, applied = 0;

	optind = 1;
	while ((c = getopt_long(argc, argv, "d:h", opts, NULL)) != -1) {
		switch (c) {
		case 'd':
			url = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind != argc || !url || !*url) {
		fprintf(stderr, "fbcd migrate: %s\n",
			optind != argc ? "unexpected argument" : "no --database-url given");
		usage(stderr);
		return 2;
	}
	fbc_error_init(&err);
	if (fbc_db_migrate_url(url, &applied, &err)) {
		fprintf(stderr, "fbcd migrate: %s\n", err.message);
		return err.code == FBC_ECONFLICT ? 1 : 2;
	}
	printf("%d migration%s applied; schema at version %d\n", applied, applied == 1 ? "" : "s",
	       fbc_db_n_migrations ? fbc_db_migrations[fbc_db_n_migrations - 1].version : 0);
	return 0;
}
