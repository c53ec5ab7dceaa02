/* `fbcd template render --pull`: bundle images pulled from their registry
 * (template_pull.c). */
#ifndef FBC_API_CLI_TEMPLATE_PULL_H
#define FBC_API_CLI_TEMPLATE_PULL_H

#include "pipeline/oci/client.h"
#include "service/template/template.h"

#include <pthread.h>

typedef struct fbc_cli_puller {
	fbc_oci_client_options o; /* --insecure, --ca-file, --authfile */
	fbc_oci_client *client;	  /* created at the first pull */
	pthread_mutex_t lock;
} fbc_cli_puller;

void fbc_cli_puller_init(fbc_cli_puller *p);
void fbc_cli_puller_dispose(fbc_cli_puller *p);

/* An fbc_template_puller (ctx: an fbc_cli_puller). */
int fbc_cli_template_pull(fbc_bundle_dir **out, const char *image, void *ctx, fbc_error *err);

#endif
