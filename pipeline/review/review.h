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

int fbc_review_check_run(fbc_queue_ctx *ctx, json_t *payload, char **result, fbc_error *err);

/* Does the repository (db/gitops.h JSON) report to a forge? */
bool fbc_review_forge_reports(json_t *repo);

#endif
