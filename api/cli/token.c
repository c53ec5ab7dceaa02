/* fbcd token create|revoke: manage API bearer tokens (stored hashed). */
#include "api/cli/cli.h"
#include "api/cli/util.h"

#include "db/db.h"
#include "db/embedded.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *f)
{
	fprintf(f, "usage: fbcd token create --scope read|write|admin [--description TEXT]\n"
		   "                         [--database-url URL | --data-dir DIR]\n"
		   "       fbcd token revoke ID [--database-url URL | --data-dir DIR]\n\n"
		   "create prints the new token once on stdout; only its hash is stored.\n"
		   "The database comes from --database-url or FBCD_DATABASE_URL; without\n"
		   "either, the embedded PostgreSQL under --data-dir (FBCD_DATA_DIR) is used\n"
		   "(it must not be running under another fbcd process).\n");
}

int fbc_cmd_token(int argc, char **argv)
{
	static const struct option opts[] = {
		{"scope", required_argument, NULL, 's'},
		{"description", required_argument, NULL, 'd'},
		{"database-url", required_argument, NULL, 'u'},
		{"data-dir", required_argument, NULL, 'D'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	const char *scope_s = NULL, *desc = NULL, *url = getenv("FBCD_DATABASE_URL");
	const char *data_dir = getenv("FBCD_DATA_DIR");
	fbc_db_embedded *emb = NULL;
	fbc_db *db = NULL;
	fbc_error err;
	char *token = NULL;
	int ch, status = 2;

	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	const char *sub = argv[1];
	if (strcmp(sub, "create") && strcmp(sub, "revoke")) {
		fprintf(stderr, "fbcd token: unknown subcommand '%s'\n", sub);
		usage(stderr);
		return 2;
	}
	optind = 2;
	while ((ch = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (ch) {
		case 's':
			scope_s = optarg;
			break;
		case 'd':
			desc = optarg;
			break;
		case 'u':
			url = optarg;
			break;
		case 'D':
			data_dir = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	fbc_error_init(&err);
	fbc_db_scope scope = FBC_DB_SCOPE_NONE;
	int64_t id = 0;
	if (!strcmp(sub, "create")) {
		if (!scope_s) {
			fprintf(stderr,
				"fbcd token create: --scope read|write|admin is required\n");
			return 2;
		}
		if (fbc_db_scope_parse(&scope, scope_s, &err) != 0) {
			fbc_cli_report("token", &err, NULL);
			return 2;
		}
		if (optind != argc) {
			fprintf(stderr, "fbcd token create: unexpected argument '%s'\n",
				argv[optind]);
			return 2;
		}
	} else {
		char *end = NULL;
		if (optind + 1 != argc) {
			fprintf(stderr, "fbcd token revoke: exactly one token id is expected\n");
			return 2;
		}
		errno = 0;
		long long v = strtoll(argv[optind], &end, 10);
		if (errno || *end || v < 1) {
			fprintf(stderr, "fbcd token revoke: '%s' is not a token id\n",
				argv[optind]);
			return 2;
		}
		id = v;
	}
	if (!url || !url[0]) {
		if (fbc_db_embedded_start(&emb, data_dir ? data_dir : "fbcd-data", &err) != 0) {
			fbc_cli_report("token", &err, NULL);
			goto done;
		}
		url = fbc_db_embedded_url(emb);
	}
	fbc_db_options dopt;
	memset(&dopt, 0, sizeof(dopt));
	dopt.url = url;
	dopt.pool_size = 1;
	dopt.migrate = true;
	if (fbc_db_open(&db, &dopt, &err) != 0) {
		fbc_cli_report("token", &err, NULL);
		goto done;
	}
	if (!strcmp(sub, "create")) {
		json_t *info = NULL;
		if (fbc_db_token_create(&token, &info, db, scope, desc, &err) != 0) {
			fbc_cli_report("token", &err, NULL);
			goto done;
		}
		printf("%s\n", token);
		/* the id (for `fbcd token revoke`) goes to stderr: stdout is the secret alone */
		json_t *idj = json_object_get(info, "id");
		if (json_is_integer(idj))
			fprintf(stderr, "fbcd token: created token id %lld with scope %s\n",
				(long long)json_integer_value(idj), fbc_db_scope_name(scope));
		json_decref(info);
	} else if (fbc_db_token_revoke(db, id, &err) != 0) {
		fbc_cli_report("token", &err, NULL);
		status = err.code == FBC_ENOTFOUND ? 1 : 2;
		goto done;
	}
	status = 0;
done:
	free(token);
	fbc_db_close(db);
	fbc_db_embedded_stop(emb);
	return status;
}
