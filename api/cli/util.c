/* Shared helpers of the catalog subcommands; see cli_util.h. */
#include "api/cli/util.h"

#include "service/base/log.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#ifdef FBCD_HAVE_SYSTEMD
#include <systemd/sd-daemon.h>
#endif

int fbc_cli_parse(const char **dir, const fbc_cli_cmd *cmd, void *ctx, int argc, char **argv)
{
	int c, rc;

	*dir = NULL;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, cmd->shortopts, cmd->longopts, NULL)) != -1) {
		switch (c) {
		case 'h':
			cmd->usage(stdout);
			return FBC_CLI_OK;
		case ':':
			fprintf(stderr, "fbcd %s: option '%s' needs a value\n", cmd->name,
				argv[optind - 1]);
			cmd->usage(stderr);
			return FBC_CLI_USAGE;
		case '?':
			fprintf(stderr, "fbcd %s: unknown option '%s'\n", cmd->name,
				argv[optind - 1]);
			cmd->usage(stderr);
			return FBC_CLI_USAGE;
		default:
			if ((rc = cmd->option(ctx, c, optarg)))
				return rc;
		}
	}
	if (optind != argc - 1) {
		fprintf(stderr, "fbcd %s: expected one catalog directory, got %d arguments\n",
			cmd->name, argc - optind);
		cmd->usage(stderr);
		return FBC_CLI_USAGE;
	}
	*dir = argv[optind];
	return FBC_CLI_OK;
}

void fbc_cli_report(const char *cmd, const fbc_error *err, const char *dflt)
{
	const char *where = err->where[0] || !dflt ? err->where : dflt;

	fprintf(stderr, "fbcd %s: %s%s%s\n", cmd, where, where[0] && err->message[0] ? ": " : "",
		err->message);
}

int fbc_cli_check_dir(const char *cmd, const char *dir)
{
	struct stat sb;

	if (stat(dir, &sb) != 0) {
		fprintf(stderr, "fbcd %s: %s: %s\n", cmd, dir, strerror(errno));
		return FBC_CLI_USAGE;
	}
	if (!S_ISDIR(sb.st_mode)) {
		fprintf(stderr, "fbcd %s: \"%s\" is not a directory\n", cmd, dir);
		return FBC_CLI_USAGE;
	}
	return 0;
}

/* Is `"name"` (quoted, as messages quote names) already in the message? */
static bool mentions(const char *msg, const char *name)
{
	size_t n = strlen(name);
	const char *p = msg;

	while ((p = strstr(p, name))) {
		if (p > msg && p[-1] == '"' && p[n] == '"')
			return true;
		p++;
	}
	return false;
}

int fbc_cli_format_diag(fbc_buf *b, const fbc_diag *d)
{
	const char *labels[3] = {"package", "channel", "bundle"};
	const char *vals[3] = {d->package, d->channel, d->bundle};
	int rc, any = 0;

	rc = fbc_buf_puts(b, d->file ? d->file : ".");
	if (!rc && d->line > 0)
		rc = fbc_buf_printf(b, ":%d", d->line);
	if (!rc)
		rc = fbc_buf_printf(b, ": %s: ", d->code ? d->code : "?");
	for (int i = 0; i < 3 && !rc; i++) {
		if (!vals[i] || !vals[i][0] || mentions(d->message ? d->message : "", vals[i]))
			continue;
		rc = fbc_buf_printf(b, "%s%s \"%s\"", any ? ", " : "", labels[i], vals[i]);
		any = 1;
	}
	if (!rc && any)
		rc = fbc_buf_puts(b, ": ");
	if (!rc)
		rc = fbc_buf_puts(b, d->message ? d->message : "");
	return rc;
}

int fbc_cli_print_diags_text(FILE *f, const fbc_diags *diags)
{
	fbc_buf line;
	int rc = 0;

	fbc_buf_init(&line, 0);
	for (size_t i = 0; i < fbc_diags_count(diags) && !rc; i++) {
		fbc_buf_reset(&line);
		if (fbc_cli_format_diag(&line, fbc_diags_at(diags, i)) ||
		    fbc_buf_putc(&line, '\n') || fwrite(line.data, 1, line.len, f) != line.len)
			rc = -1;
	}
	fbc_buf_dispose(&line);
	return rc;
}

static int put_field(fbc_buf *b, const char *key, const char *val)
{
	int rc;

	if (!val || !val[0])
		return 0;
	if ((rc = fbc_buf_printf(b, ",\"%s\":", key)))
		return rc;
	return fbc_buf_put_json_string(b, val, strlen(val));
}

int fbc_cli_format_diags_json(fbc_buf *b, const fbc_diags *diags, bool valid)
{
	int rc = fbc_buf_printf(b, "{\"valid\":%s,\"errors\":[", valid ? "true" : "false");

	for (size_t i = 0; i < fbc_diags_count(diags) && !rc; i++) {
		const fbc_diag *d = fbc_diags_at(diags, i);
		const char *code = d->code ? d->code : "";
		const char *msg = d->message ? d->message : "";

		if (i)
			rc = fbc_buf_putc(b, ',');
		if (!rc)
			rc = fbc_buf_puts(b, "{\"code\":");
		if (!rc)
			rc = fbc_buf_put_json_string(b, code, strlen(code));
		if (!rc)
			rc = fbc_buf_puts(b, ",\"message\":");
		if (!rc)
			rc = fbc_buf_put_json_string(b, msg, strlen(msg));
		if (!rc)
			rc = put_field(b, "file", d->file);
		if (!rc && d->line > 0)
			rc = fbc_buf_printf(b, ",\"line\":%d", d->line);
		if (!rc)
			rc = put_field(b, "package", d->package);
		if (!rc)
			rc = put_field(b, "channel", d->channel);
		if (!rc)
			rc = put_field(b, "bundle", d->bundle);
		if (!rc)
			rc = fbc_buf_putc(b, '}');
	}
	if (!rc)
		rc = fbc_buf_puts(b, "]");
	if (!rc && diags->dropped)
		rc = fbc_buf_printf(b, ",\"dropped\":%zu", diags->dropped);
	if (!rc)
		rc = fbc_buf_puts(b, "}\n");
	return rc;
}

int fbc_cli_write_file(void *ctx, const char *data, size_t len, fbc_error *err)
{
	if (fwrite(data, 1, len, (FILE *)ctx) != len)
		return fbc_error_set(err, FBC_EIO, "stdout", "write failed: %s", strerror(errno));
	return 0;
}

void fbc_cli_notify(const char *state)
{
#ifdef FBCD_HAVE_SYSTEMD
	sd_notify(0, state);
#else
	(void)state;
#endif
}

void fbc_cli_log_setup(int format)
{
	fbc_log_format lf = FBC_LOG_TEXT;

	if (format < 0)
		fbc_log_format_parse(&lf, "auto", NULL);
	else
		lf = (fbc_log_format)format;
	fbc_log_configure(lf, FBC_LOG_INFO, NULL);
}
