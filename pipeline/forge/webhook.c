/* Forge webhook parsing and verification (see webhook.h). */
#include "pipeline/forge/webhook.h"

#include <jansson.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void fbc_webhook_event_dispose(fbc_webhook_event *ev)
{
	if (!ev)
		return;
	free(ev->event);
	free(ev->action);
	free(ev->project);
	free(ev->project_id);
	free(ev->head_sha);
	free(ev->base_sha);
	free(ev->base_ref);
	free(ev->ref);
	free(ev->author);
	free(ev->sender);
	free(ev->title);
	free(ev->merge_sha);
	memset(ev, 0, sizeof(*ev));
}

/* Follow a dotted path of object members ("pull_request.head.sha"). */
static json_t *at(json_t *root, const char *path)
{
	char part[64];
	json_t *j = root;

	while (j && *path) {
		size_t n = strcspn(path, ".");
		if (n >= sizeof(part))
			return NULL;
		memcpy(part, path, n);
		part[n] = '\0';
		j = json_is_object(j) ? json_object_get(j, part) : NULL;
		path += n;
		if (*path == '.')
			path++;
	}
	return j;
}

/* Copy an optional string member: absent or null is fine (NULL); another
 * type or an over-long value is an error. */
static int take(char **out, json_t *root, const char *path, bool required, fbc_error *err)
{
	json_t *j = at(root, path);

	free(*out); /* a later field may replace an earlier one (comment author) */
	*out = NULL;
	if (!j || json_is_null(j)) {
		if (required)
			return fbc_error_set(err, FBC_EINVAL, path, "missing");
		return 0;
	}
	if (json_is_integer(j)) {
		char num[32];
		snprintf(num, sizeof(num), "%lld", (long long)json_integer_value(j));
		if (!(*out = strdup(num)))
			return fbc_error_set(err, FBC_ENOMEM, path, "out of memory");
		return 0;
	}
	if (!json_is_string(j))
		return fbc_error_set(err, FBC_EINVAL, path, "not a string");
	if (json_string_length(j) > FBC_WEBHOOK_MAX_STRING)
		return fbc_error_set(err, FBC_EINVAL, path, "longer than %d bytes",
				     FBC_WEBHOOK_MAX_STRING);
	if (strlen(json_string_value(j)) != json_string_length(j))
		return fbc_error_set(err, FBC_EINVAL, path, "contains a NUL byte");
	if (!(*out = strdup(json_string_value(j))))
		return fbc_error_set(err, FBC_ENOMEM, path, "out of memory");
	return 0;
}

static int take_number(long *out, json_t *root, const char *path, fbc_error *err)
{
	json_t *j = at(root, path);

	if (!json_is_integer(j) || json_integer_value(j) < 1 || json_integer_value(j) > 2147483647)
		return fbc_error_set(err, FBC_EINVAL, path, "not a positive integer");
	*out = (long)json_integer_value(j);
	return 0;
}

static bool is_sha(const char *s)
{
	size_t n = s ? strlen(s) : 0;
	if (n != 40 && n != 64)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return true;
}

static int need_sha(const char *s, const char *field, fbc_error *err)
{
	if (!is_sha(s))
		return fbc_error_set(err, FBC_EINVAL, field, "not a commit id");
	return 0;
}

fbc_webhook_kind fbc_webhook_command(const char *c)
{
	fbc_webhook_kind k = FBC_WEBHOOK_IGNORED;

	while (c && *c) {
		while (*c == ' ' || *c == '\t')
			c++;
		if (!strncmp(c, "/approve", 8) && (!c[8] || strchr(" \t\r\n", c[8])))
			return FBC_WEBHOOK_APPROVE;
		if (!strncmp(c, "/recheck", 8) && (!c[8] || strchr(" \t\r\n", c[8])))
			k = FBC_WEBHOOK_RECHECK;
		c = strchr(c, '\n');
		if (c)
			c++;
	}
	return k;
}

static int parse_github(fbc_webhook_event *ev, json_t *p, fbc_error *err)
{
	int rc;

	if (!strcmp(ev->event, "ping")) {
		ev->kind = FBC_WEBHOOK_PING;
		return take(&ev->project, p, "repository.full_name", false, err);
	}
	if (strcmp(ev->event, "pull_request") && strcmp(ev->event, "push") &&
	    strcmp(ev->event, "issue_comment")) /* ignored, once its signature verifies */
		return take(&ev->project, p, "repository.full_name", false, err);
	if ((rc = take(&ev->project, p, "repository.full_name", true, err)) ||
	    (rc = take(&ev->sender, p, "sender.login", false, err)))
		return rc;
	if (!strcmp(ev->event, "push")) {
		json_t *d = json_object_get(p, "deleted");
		if ((rc = take(&ev->ref, p, "ref", true, err)) ||
		    (rc = take(&ev->head_sha, p, "after", true, err)) ||
		    (rc = take(&ev->base_sha, p, "before", false, err)) ||
		    (rc = need_sha(ev->head_sha, "after", err)))
			return rc;
		ev->deleted = json_is_true(d);
		ev->kind = FBC_WEBHOOK_PUSH;
		return 0;
	}
	if ((rc = take(&ev->action, p, "action", true, err)))
		return rc;
	if (!strcmp(ev->event, "issue_comment")) {
		char *body = NULL;
		fbc_webhook_kind k;

		/* only new comments on pull requests (issues have no pull_request) */
		if (strcmp(ev->action, "created") || !at(p, "issue.pull_request"))
			return 0;
		if ((rc = take_number(&ev->number, p, "issue.number", err)) ||
		    (rc = take(&ev->author, p, "issue.user.login", false, err)) ||
		    (rc = take(&ev->sender, p, "comment.user.login", true, err)))
			return rc;
		json_t *b = at(p, "comment.body");
		if (!json_is_string(b))
			return fbc_error_set(err, FBC_EINVAL, "comment.body", "not a string");
		body = (char *)json_string_value(b);
		k = fbc_webhook_command(body);
		ev->kind = k;
		return 0;
	}
	/* pull_request */
	if ((rc = take_number(&ev->number, p, "number", err)) ||
	    (rc = take(&ev->head_sha, p, "pull_request.head.sha", true, err)) ||
	    (rc = take(&ev->base_sha, p, "pull_request.base.sha", false, err)) ||
	    (rc = take(&ev->base_ref, p, "pull_request.base.ref", true, err)) ||
	    (rc = take(&ev->author, p, "pull_request.user.login", true, err)) ||
	    (rc = take(&ev->title, p, "pull_request.title", false, err)) ||
	    (rc = need_sha(ev->head_sha, "pull_request.head.sha", err)))
		return rc;
	if (!strcmp(ev->action, "opened") || !strcmp(ev->action, "reopened") ||
	    !strcmp(ev->action, "synchronize") || !strcmp(ev->action, "ready_for_review")) {
		/* drafts are checked only once ready */
		if (json_is_true(at(p, "pull_request.draft")) &&
		    strcmp(ev->action, "ready_for_review"))
			return 0;
		ev->kind = FBC_WEBHOOK_PR_UPDATED;
	} else if (!strcmp(ev->action, "closed")) {
		ev->kind = json_is_true(at(p, "pull_request.merged")) ? FBC_WEBHOOK_PR_MERGED
								      : FBC_WEBHOOK_PR_CLOSED;
		/* the commit the merge made (a merge or squash commit): the push
		 * that follows names it, and its revisions name this PR */
		if (ev->kind == FBC_WEBHOOK_PR_MERGED &&
		    ((rc = take(&ev->merge_sha, p, "pull_request.merge_commit_sha", false, err)) ||
		     (ev->merge_sha &&
		      (rc = need_sha(ev->merge_sha, "pull_request.merge_commit_sha", err)))))
			return rc;
	}
	return 0;
}

static int parse_gitlab(fbc_webhook_event *ev, json_t *p, fbc_error *err)
{
	int rc;

	if (strcmp(ev->event, "Merge Request Hook") && strcmp(ev->event, "Push Hook") &&
	    strcmp(ev->event, "Note Hook")) {
		if ((rc = take(&ev->project, p, "project.path_with_namespace", false, err)))
			return rc;
		return take(&ev->project_id, p, "project.id", false, err);
	}
	if ((rc = take(&ev->project, p, "project.path_with_namespace", true, err)) ||
	    (rc = take(&ev->project_id, p, "project.id", false, err)) ||
	    (rc = take(&ev->sender, p, "user.username", false, err)))
		return rc;
	if (!strcmp(ev->event, "Push Hook")) {
		if ((rc = take(&ev->ref, p, "ref", true, err)) ||
		    (rc = take(&ev->head_sha, p, "after", true, err)) ||
		    (rc = take(&ev->base_sha, p, "before", false, err)) ||
		    (rc = need_sha(ev->head_sha, "after", err)))
			return rc;
		ev->deleted = strspn(ev->head_sha, "0") == strlen(ev->head_sha);
		ev->kind = FBC_WEBHOOK_PUSH;
		return 0;
	}
	if (!strcmp(ev->event, "Note Hook")) {
		char *type = NULL;
		json_t *b;

		if ((rc = take(&type, p, "object_attributes.noteable_type", true, err)))
			return rc;
		bool mr = !strcmp(type, "MergeRequest");
		free(type);
		if (!mr)
			return 0;
		if ((rc = take_number(&ev->number, p, "merge_request.iid", err)) ||
		    (rc = take(&ev->head_sha, p, "merge_request.last_commit.id", false, err)) ||
		    (rc = take(&ev->base_ref, p, "merge_request.target_branch", false, err)) ||
		    (rc = take(&ev->title, p, "merge_request.title", false, err)))
			return rc;
		b = at(p, "object_attributes.note");
		if (!json_is_string(b))
			return fbc_error_set(err, FBC_EINVAL, "object_attributes.note",
					     "not a string");
		ev->kind = fbc_webhook_command(json_string_value(b));
		return 0;
	}
	/* Merge Request Hook */
	if ((rc = take(&ev->action, p, "object_attributes.action", false, err)) ||
	    (rc = take_number(&ev->number, p, "object_attributes.iid", err)) ||
	    (rc = take(&ev->head_sha, p, "object_attributes.last_commit.id", true, err)) ||
	    (rc = take(&ev->base_ref, p, "object_attributes.target_branch", true, err)) ||
	    (rc = take(&ev->title, p, "object_attributes.title", false, err)) ||
	    (rc = need_sha(ev->head_sha, "object_attributes.last_commit.id", err)))
		return rc;
	/* the author of the merge request; user is who triggered the event */
	if ((rc = take(&ev->author, p, "object_attributes.author.username", false, err)))
		return rc;
	if (!ev->author && ev->sender && !(ev->author = strdup(ev->sender)))
		return fbc_error_set(err, FBC_ENOMEM, "user", "out of memory");
	if (!ev->action)
		return 0;
	if (!strcmp(ev->action, "open") || !strcmp(ev->action, "reopen") ||
	    (!strcmp(ev->action, "update") && at(p, "object_attributes.oldrev"))) {
		if (json_is_true(at(p, "object_attributes.draft")))
			return 0;
		ev->kind = FBC_WEBHOOK_PR_UPDATED;
	} else if (!strcmp(ev->action, "update") && at(p, "changes.draft") &&
		   !json_is_true(at(p, "object_attributes.draft"))) {
		ev->kind = FBC_WEBHOOK_PR_UPDATED; /* marked ready */
	} else if (!strcmp(ev->action, "merge")) {
		ev->kind = FBC_WEBHOOK_PR_MERGED;
		if ((rc = take(&ev->merge_sha, p, "object_attributes.merge_commit_sha", false,
			       err)) ||
		    (ev->merge_sha &&
		     (rc = need_sha(ev->merge_sha, "object_attributes.merge_commit_sha", err))))
			return rc;
	} else if (!strcmp(ev->action, "close")) {
		ev->kind = FBC_WEBHOOK_PR_CLOSED;
	}
	return 0;
}

int fbc_webhook_parse(fbc_webhook_event *out, fbc_webhook_forge forge, const char *event,
		      const char *body, size_t len, fbc_error *err)
{
	fbc_webhook_event ev;
	json_error_t jerr;
	json_t *p = NULL;
	int rc;

	memset(&ev, 0, sizeof(ev));
	if (!event || !*event || strlen(event) > 128)
		return fbc_error_set(err, FBC_EINVAL, "event", "missing or over-long event name");
	if (len > FBC_WEBHOOK_MAX_BODY)
		return fbc_error_set(err, FBC_ELIMIT, "body", "larger than %zu bytes",
				     FBC_WEBHOOK_MAX_BODY);
	if (!(ev.event = strdup(event)))
		return fbc_error_set(err, FBC_ENOMEM, "event", "out of memory");
	if (!body || !(p = json_loadb(body, len, JSON_REJECT_DUPLICATES, &jerr))) {
		rc = fbc_error_set(err, FBC_EINVAL, "body", "not JSON: %s",
				   body ? jerr.text : "empty");
		goto done;
	}
	if (!json_is_object(p)) {
		rc = fbc_error_set(err, FBC_EINVAL, "body", "not a JSON object");
		goto done;
	}
	rc = forge == FBC_FORGE_GITHUB	 ? parse_github(&ev, p, err)
	     : forge == FBC_FORGE_GITLAB ? parse_gitlab(&ev, p, err)
					 : fbc_error_set(err, FBC_EINVAL, "forge", "unknown forge");
done:
	json_decref(p);
	if (rc) {
		fbc_webhook_event_dispose(&ev);
		return rc;
	}
	*out = ev;
	return 0;
}

bool fbc_webhook_github_verify(const char *secret, const char *body, size_t len, const char *sig)
{
	unsigned char mac[32];
	unsigned int n = 0;
	char hex[65];
	static const char digits[] = "0123456789abcdef";

	if (!secret || !*secret || !sig || strncmp(sig, "sha256=", 7) || strlen(sig) != 71)
		return false;
	if (!HMAC(EVP_sha256(), secret, (int)strlen(secret), (const unsigned char *)body, len, mac,
		  &n) ||
	    n != 32)
		return false;
	for (int i = 0; i < 32; i++) {
		hex[2 * i] = digits[mac[i] >> 4];
		hex[2 * i + 1] = digits[mac[i] & 15];
	}
	hex[64] = '\0';
	return CRYPTO_memcmp(hex, sig + 7, 64) == 0;
}

bool fbc_webhook_gitlab_verify(const char *secret, const char *token)
{
	unsigned char a[32], b[32];
	unsigned int n = 0;

	if (!secret || !*secret || !token)
		return false;
	EVP_Digest(secret, strlen(secret), a, &n, EVP_sha256(), NULL);
	EVP_Digest(token, strlen(token), b, &n, EVP_sha256(), NULL);
	return CRYPTO_memcmp(a, b, 32) == 0;
}
