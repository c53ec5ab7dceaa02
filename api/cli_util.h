/*
 * Helpers shared by the catalog subcommands (validate, render, graph):
 * checking the catalog directory argument, loading it, and printing
 * findings as `file:line: code: message` lines or as the JSON report.
 *
 * Private to api/. Output goes to the FILE* given; nothing is cached, so
 * the helpers are safe from any thread that owns its streams.
 */
#ifndef FBC_API_CLI_UTIL_H
#define FBC_API_CLI_UTIL_H

#include "service/base/buf.h"
#include "service/base/diag.h"
#include "service/fbc/model.h"

#include <stdbool.h>
#include <stdio.h>

/* Exit statuses of the catalog commands (cli.h). */
enum { FBC_CLI_OK = 0, FBC_CLI_INVALID = 1, FBC_CLI_USAGE = 2 };

/* Check that dir is an existing directory; prints "fbcd CMD: DIR: why" on
 * stderr and returns FBC_CLI_USAGE otherwise, 0 when it is. */
int fbc_cli_check_dir(const char *cmd, const char *dir);

/* Load and link the catalog at dir. Findings go to diags. Returns 0, or
 * FBC_CLI_USAGE after printing why the load could not run. */
int fbc_cli_load(fbc_catalog **out, const char *cmd, const char *dir, fbc_diags *diags);

/* One finding as a text line (no newline): `file:line: code: [context: ]message`,
 * where the context names the package, channel and bundle the message does
 * not already mention. */
int fbc_cli_format_diag(fbc_buf *out, const fbc_diag *d);

/* Every finding, one line each. Returns 0 or -1 on a write error. */
int fbc_cli_print_diags_text(FILE *f, const fbc_diags *diags);

/* The JSON report {"valid": bool, "errors": [...]} followed by a newline.
 * Fields that do not apply are left out. */
int fbc_cli_format_diags_json(fbc_buf *out, const fbc_diags *diags, bool valid);

/* Write-callback for fbc_render_catalog and friends: ctx is a FILE*. */
int fbc_cli_write_file(void *ctx, const char *data, size_t len, fbc_error *err);

#endif
