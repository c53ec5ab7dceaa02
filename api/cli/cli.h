/*
 * CLI subcommands of the fbcd executable. main.c dispatches argv[1] to one
 * of these; each parses its own options (getopt_long), prints its own help
 * for --help, and returns the process exit status: 0 success, 1 a negative
 * verdict (invalid catalog, unsatisfiable request), 2 usage or I/O error.
 */
#ifndef FBC_API_CLI_H
#define FBC_API_CLI_H

int fbc_cmd_validate(int argc, char **argv);
int fbc_cmd_render(int argc, char **argv);
int fbc_cmd_bundle(int argc, char **argv);
int fbc_cmd_graph(int argc, char **argv);
int fbc_cmd_serve(int argc, char **argv);
int fbc_cmd_resolve(int argc, char **argv);
int fbc_cmd_token(int argc, char **argv);
int fbc_cmd_migrate(int argc, char **argv);
int fbc_cmd_template(int argc, char **argv);
int fbc_cmd_pr(int argc, char **argv);
int fbc_cmd_worker(int argc, char **argv);
int fbc_cmd_repo(int argc, char **argv);
int fbc_cmd_image(int argc, char **argv);

/* Start the job workers configured by cfg (serve.c and worker.c). */
struct fbc_queue;
struct fbc_db;
struct fbc_http_config;
struct fbc_error;
int fbc_cli_queue_start(struct fbc_queue **out, struct fbc_db *db,
			const struct fbc_http_config *cfg, void *app, struct fbc_error *err);

#endif
