/*
 * Helpers shared by the CLI subcommands: parsing `fbcd CMD [options] DIR`
 * (validate, render, graph), checking the catalog directory argument,
 * loading it, printing findings as `file:line: code: message` lines or as
 * the JSON report, and reporting an fbc_error as `fbcd CMD: where: why`.
 *
 * Private to api/. Output goes to the FILE* given; nothing is cached, so
 * the helpers are safe from any thread that owns its streams.
 */
#ifndef FBC_API_CLI_UTIL_H
#define FBC_API_CLI_UTIL_H

#include "service/base/buf.h"
#include "service/base/diag.h"
#include "service/base/error.h"
#include "service/fbc/model.h"

#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>

/* Exit statuses of the catalog commands (cli.h). */
enum { FBC_CLI_OK = 0, FBC_CLI_INVALID = 1, FBC_CLI_USAGE = 2 };

/* A catalog command's command line: `fbcd NAME [options] DIR`. */
typedef struct fbc_cli_cmd {
	const char *name;	       /* "graph": messages start "fbcd graph: " */
	const char *shortopts;	       /* getopt_long's, starting with ':', with h for --help */
	const struct option *longopts; /* with {"help", no_argument, NULL, 'h'} */
	void (*usage)(FILE *f);
	/* The command's own options (every one but h): 0, or FBC_CLI_USAGE
	 * after printing why on stderr. */
	int (*option)(void *ctx, int c, const char *arg);
} fbc_cli_cmd;

/* Parse argv: the options through cmd->option(ctx, ...), then exactly one
 * directory argument. Returns FBC_CLI_OK with *dir set, or with *dir NULL
 * after printing the usage on stdout for --help (nothing more to do);
 * FBC_CLI_USAGE after printing why (and, for a malformed command line, the
 * usage) on stderr. */
int fbc_cli_parse(const char **dir, const fbc_cli_cmd *cmd, void *ctx, int argc, char **argv);

/* Print `fbcd CMD: WHERE: MESSAGE` on stderr, WHERE being err's where or,
 * when that is empty, dflt (may be NULL); empty parts are left out. */
void fbc_cli_report(const char *cmd, const fbc_error *err, const char *dflt);

/* Check that dir is an existing directory; prints "fbcd CMD: DIR: why" on
 * stderr and returns FBC_CLI_USAGE otherwise, 0 when it is. */
int fbc_cli_check_dir(const char *cmd, const char *dir);

/* Load and link the catalog at dir. diags is initialised here (dispose it
 * in any case; a zeroed one may be disposed too) and receives the
 * findings. Returns 0, or FBC_CLI_USAGE after printing why the load could
 * not run. */
int fbc_cli_load(fbc_catalog **out, const char *cmd, const char *dir, fbc_diags *diags);
/* The same for a catalog that is only validated (fbc_load_limits.validate_only and
 * validate_lean: values validation never reads are not kept, so the catalog takes less
 * memory; nothing but fbc_validate may read it). */
int fbc_cli_load_to_validate(fbc_catalog **out, const char *cmd, const char *dir, fbc_diags *diags);

/* One finding as a text line (no newline): `file:line: code: [context: ]message`,
 * where the context names the package, channel and bundle the message does
 * not already mention. */
int fbc_cli_format_diag(fbc_buf *out, const fbc_diag *d);

/* Every finding, one line each. Returns 0 or -1 on a write error. */
int fbc_cli_print_diags_text(FILE *f, const fbc_diags *diags);

/* The JSON report {"valid": bool, "errors": [...]} followed by a newline.
 * Fields that do not apply are left out. */
int fbc_cli_format_diags_json(fbc_buf *out, const fbc_diags *diags, bool valid);

/* Tell systemd how start-up and stop go (Type=notify units of deploy/systemd:
 * "READY=1", "STOPPING=1", "STATUS=..."); a no-op when not started by
 * systemd ($NOTIFY_SOCKET unset) or built without libsystemd. */
void fbc_cli_notify(const char *state);

/* Configure service/base/log for a long-running command: format -1 is
 * "auto" (text on a terminal, JSON otherwise), else an fbc_log_format. */
void fbc_cli_log_setup(int format);

/* Write-callback for fbc_render_catalog and friends: ctx is a FILE*. */
int fbc_cli_write_file(void *ctx, const char *data, size_t len, fbc_error *err);

#endif
