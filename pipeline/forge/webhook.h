/*
 * Forge webhook deliveries (pipeline.md §4, api-pipeline.md §5.1, §5.3):
 * signature checks and the parser that turns a GitHub or GitLab payload into
 * the one event the pipeline acts on. Pure functions: no I/O, no database;
 * the HTTP handler (api/http/webhooks.c) stores the delivery and enqueues.
 *
 * Every input is bounded: the body by FBC_WEBHOOK_MAX_BODY, every string
 * taken from it by FBC_WEBHOOK_MAX_STRING (longer is an error, not a
 * truncation). Ownership: an fbc_webhook_event owns its strings
 * (fbc_webhook_event_dispose). Thread-safe.
 */
#ifndef FBC_PIPELINE_FORGE_WEBHOOK_H
#define FBC_PIPELINE_FORGE_WEBHOOK_H

#include "service/base/error.h"

#include <stdbool.h>
#include <stddef.h>

#define FBC_WEBHOOK_MAX_BODY   ((size_t)25 << 20)
#define FBC_WEBHOOK_MAX_STRING 4096

typedef enum fbc_webhook_forge {
	FBC_FORGE_GITHUB = 1,
	FBC_FORGE_GITLAB = 2,
} fbc_webhook_forge;

typedef enum fbc_webhook_kind {
	FBC_WEBHOOK_IGNORED = 0, /* a verified delivery the pipeline does not act on */
	FBC_WEBHOOK_PING,	 /* GitHub ping: answered 200 */
	FBC_WEBHOOK_PR_UPDATED,	 /* opened, reopened, new head, ready for review: pr.check */
	FBC_WEBHOOK_PR_CLOSED,	 /* closed without merge */
	FBC_WEBHOOK_PR_MERGED,	 /* merged (the push that follows triggers the ingest) */
	FBC_WEBHOOK_PUSH,	 /* a branch moved */
	FBC_WEBHOOK_RECHECK,	 /* "/recheck" comment on a pull request */
	FBC_WEBHOOK_APPROVE,	 /* "/approve" comment on a pull request */
} fbc_webhook_kind;

typedef struct fbc_webhook_event {
	fbc_webhook_kind kind;
	char *event;	  /* the event header as sent ("pull_request", "Push Hook") */
	char *action;	  /* payload action, or NULL */
	char *project;	  /* "owner/repo" (GitHub full_name, GitLab path_with_namespace) */
	char *project_id; /* GitLab numeric project id as text, or NULL */
	long number;	  /* pull / merge request number, 0 when none */
	char *head_sha;	  /* PR head or push "after" */
	char *base_sha;	  /* PR base sha (GitHub), or push "before" */
	char *base_ref;	  /* PR target branch */
	char *ref;	  /* push: "refs/heads/main" */
	char *author;	  /* PR author login */
	char *sender;	  /* who triggered the event (commenter for comments) */
	char *title;	  /* PR title */
	char *merge_sha;  /* merged PR: the merge commit on the target branch, or NULL */
	bool deleted;	  /* push deleting the branch */
} fbc_webhook_event;

void fbc_webhook_event_dispose(fbc_webhook_event *ev);

/* Parse a delivery. event is X-GitHub-Event or X-Gitlab-Event. Unknown
 * events and actions are FBC_WEBHOOK_IGNORED (not errors); malformed JSON,
 * a known event missing the fields it needs, or an over-long string is
 * FBC_EINVAL with the field in err->where. */
int fbc_webhook_parse(fbc_webhook_event *out, fbc_webhook_forge forge, const char *event,
		      const char *body, size_t len, fbc_error *err);

/* GitHub: does sig ("sha256=<64 hex>") match HMAC-SHA256(secret, body)?
 * Constant-time in the signature's content. */
bool fbc_webhook_github_verify(const char *secret, const char *body, size_t len, const char *sig);
/* GitLab: X-Gitlab-Token equals the secret (compared in constant time over
 * digests, so the lengths leak nothing either). */
bool fbc_webhook_gitlab_verify(const char *secret, const char *token);

/* The comment commands: "/recheck" and "/approve" as the first word of a
 * line. Returns FBC_WEBHOOK_RECHECK, FBC_WEBHOOK_APPROVE or IGNORED
 * (/approve wins when both appear). */
fbc_webhook_kind fbc_webhook_command(const char *comment);

#endif
