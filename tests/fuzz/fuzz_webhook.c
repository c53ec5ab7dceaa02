/*
 * libFuzzer target for pipeline/forge/webhook.c: the webhook parser for
 * both forges, the comment-command scanner and the signature checks.
 *
 * Input: the first byte selects the forge and the event (low 3 bits index
 * the event table), the rest is the body. Every event must parse to a
 * consistent record or a clean error; nothing may crash, leak or read out
 * of bounds.
 */
#include "pipeline/forge/webhook.h"

#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const struct {
	fbc_webhook_forge forge;
	const char *event;
} events[] = {
	{FBC_FORGE_GITHUB, "pull_request"},	  {FBC_FORGE_GITHUB, "push"},
	{FBC_FORGE_GITHUB, "issue_comment"},	  {FBC_FORGE_GITHUB, "ping"},
	{FBC_FORGE_GITLAB, "Merge Request Hook"}, {FBC_FORGE_GITLAB, "Push Hook"},
	{FBC_FORGE_GITLAB, "Note Hook"},	  {FBC_FORGE_GITHUB, "check_run"},
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fbc_webhook_event ev;
	fbc_error err;
	char *copy;

	if (size < 1)
		return 0;
	unsigned sel = data[0] & 7;
	const char *body = (const char *)data + 1;
	size_t len = size - 1;

	fbc_error_init(&err);
	if (fbc_webhook_parse(&ev, events[sel].forge, events[sel].event, body, len, &err) == 0) {
		if (ev.kind == FBC_WEBHOOK_PR_UPDATED || ev.kind == FBC_WEBHOOK_PR_MERGED ||
		    ev.kind == FBC_WEBHOOK_PR_CLOSED)
			assert(ev.number > 0 && ev.head_sha && ev.project);
		if (ev.kind == FBC_WEBHOOK_PUSH)
			assert(ev.ref && ev.head_sha && ev.project);
		if (ev.kind == FBC_WEBHOOK_RECHECK || ev.kind == FBC_WEBHOOK_APPROVE)
			assert(ev.number > 0);
		fbc_webhook_event_dispose(&ev);
	} else {
		assert(err.code != 0);
	}
	if ((copy = malloc(len + 1))) {
		memcpy(copy, body, len);
		copy[len] = '\0';
		(void)fbc_webhook_command(copy);
		(void)fbc_webhook_gitlab_verify("secret", copy);
		(void)fbc_webhook_github_verify("secret", body, len, copy);
		free(copy);
	}
	return 0;
}
