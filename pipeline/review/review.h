/*
 * The review jobs of a pull request (pipeline.md §4–§7).
 *
 * pr.check (prcheck.c): payload {"repository", "number", "head"?, "base"?,
 * "baseRef"?, "author"?, "trigger"} as the webhooks enqueue it (key
 * "pr:<repository>:<number>", superseding). Fetches the mirror with the
 * forge's review refs, takes the head (the payload's sha, else the stored
 * pull request's, else refs/pull/N/head or refs/merge-requests/N/head) and
 * the base (the target branch's tip), runs the check engine of `fbcd pr
 * check` with the pull request's author and its recorded /approve comments,
 * and stores the §5 document in pull_checks with the job's completion. For
 * a repository with a forge (github, gitlab) it enqueues forge.report:
 * phase "pending" when the check starts, phase "final" with the stored
 * result. A check superseded by a newer head while it ran stores nothing.
 */
#ifndef FBC_PIPELINE_REVIEW_H
#define FBC_PIPELINE_REVIEW_H

#include "pipeline/queue/queue.h"

#include <jansson.h>
#include <stdbool.h>

#define FBC_REVIEW_REPORT_KIND "forge.report"
#define FBC_REVIEW_MERGE_KIND  "pr.merge"
#define FBC_REVIEW_COMMENT_TAG "<!-- fbcd:summary -->"

int fbc_review_check_run(fbc_queue_ctx *ctx, json_t *payload, char **result, fbc_error *err);

/*
 * forge.report (report.c): payload {"repository", "number", "sha", "phase":
 * "pending"|"final", "pullCheck"}. GitHub `report: checks`: one check run
 * per check id named fbcd/<id>, created in_progress (pending) and completed
 * with its conclusion, summary and annotations, 50 a request (final); the
 * run ids are kept in pulls.check_runs. `report: statuses` and GitLab: one
 * commit status per check (context/name fbcd/<id>). Final also writes the
 * summary comment, edited in place (pulls.comment_id), and — repository
 * `merge: auto`, conclusion success — enqueues pr.merge. A final report of
 * a check that is no longer the newest is skipped. Forge answers 429/5xx or
 * an exhausted rate limit are transient (the job is retried after its
 * backoff); other refusals fail the job with the forge's message.
 *
 * pr.merge: payload {"repository", "number", "sha", "pullCheck"}. Merges
 * through the forge with the checked sha as precondition, unless a changed
 * package's ci.yaml (base commit) says `merge: false`; a refusal (moved
 * head, conflict, not mergeable) is recorded (pulls.merge_error) and said in
 * the summary comment, not retried.
 */
int fbc_review_report_run(fbc_queue_ctx *ctx, json_t *payload, char **result, fbc_error *err);
int fbc_review_merge_run(fbc_queue_ctx *ctx, json_t *payload, char **result, fbc_error *err);

/* The summary comment's Markdown for a check document (§5 JSON), with an
 * optional merge note and link (malloc'd; NULL on OOM). */
char *fbc_review_comment(json_t *doc, const char *merge_note, const char *link);

/* Does the repository (db/gitops.h JSON) report to a forge? */
bool fbc_review_forge_reports(json_t *repo);

#endif
