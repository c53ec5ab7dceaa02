/* The summary comment of a pull request (pipeline.md §6): one Markdown
 * table of the checks, the findings and what to do next (review.h). */
#include "pipeline/review/review.h"

#include "service/base/buf.h"

#include <stdio.h>
#include <string.h>

#define MAX_FINDINGS 50

static const char *js(json_t *o, const char *k)
{
	json_t *v = json_object_get(o, k);
	return json_is_string(v) ? json_string_value(v) : "";
}

static const char *mark(const char *conclusion)
{
	if (!strcmp(conclusion, "success"))
		return "✅";
	if (!strcmp(conclusion, "warning"))
		return "⚠️";
	if (!strcmp(conclusion, "skipped"))
		return "⏭️";
	if (!strcmp(conclusion, "action_required"))
		return "✋";
	return "❌";
}

/* Markdown table cells: no newlines, no unescaped pipes. */
static void cell(fbc_buf *b, const char *s, size_t max)
{
	size_t n = 0;
	for (; *s && n < max; s++, n++) {
		if (*s == '|')
			fbc_buf_puts(b, "\\|");
		else if (*s == '\n' || *s == '\r')
			fbc_buf_puts(b, " ");
		else
			fbc_buf_append(b, s, 1);
	}
	if (*s)
		fbc_buf_puts(b, "…");
}

char *fbc_review_comment(json_t *doc, const char *merge_note, const char *link)
{
	const char *concl = js(doc, "conclusion");
	json_t *checks = json_object_get(doc, "checks"), *c, *a;
	size_t i, k, shown = 0, total = 0;
	fbc_buf b;

	fbc_buf_init(&b, 0); /* bounded by the caps above, under the forges' 65,536 */
	fbc_buf_printf(&b, "%s\n### fbcd checks: %s **%s** for `%.12s`\n\n", FBC_REVIEW_COMMENT_TAG,
		       mark(concl), concl, js(doc, "head"));
	fbc_buf_puts(&b, "| check | result | findings | summary |\n| --- | --- | --- | --- |\n");
	json_array_foreach(checks, i, c)
	{
		size_t n = json_array_size(json_object_get(c, "annotations"));
		total += n;
		fbc_buf_printf(&b, "| %s | %s %s | %zu | ", js(c, "id"), mark(js(c, "conclusion")),
			       js(c, "conclusion"), n);
		cell(&b, js(c, "summary"), 200);
		fbc_buf_puts(&b, " |\n");
	}
	if (total) {
		fbc_buf_printf(&b, "\n<details%s><summary>Findings (%zu)</summary>\n\n",
			       strcmp(concl, "success") ? " open" : "", total);
		json_array_foreach(checks, i, c)
		{
			json_array_foreach(json_object_get(c, "annotations"), k, a)
			{
				if (shown == MAX_FINDINGS)
					break;
				long line = (long)json_integer_value(json_object_get(a, "line"));
				fbc_buf_puts(&b, "- ");
				if (js(a, "path")[0])
					fbc_buf_printf(&b, line > 0 ? "`%s:%ld` " : "`%s` ",
						       js(a, "path"), line);
				fbc_buf_printf(&b, "**%s** %s/%s: ", js(a, "level"), js(c, "id"),
					       js(a, "code"));
				cell(&b, js(a, "message"), 500);
				fbc_buf_puts(&b, "\n");
				shown++;
			}
		}
		if (shown < total)
			fbc_buf_printf(&b, "- … and %zu more%s\n", total - shown,
				       link ? " (see the link below)" : "");
		fbc_buf_puts(&b, "\n</details>\n");
	}
	fbc_buf_puts(&b, "\n**What next:** ");
	if (!strcmp(concl, "success"))
		fbc_buf_puts(&b, "every check passed.");
	else if (!strcmp(concl, "action_required"))
		fbc_buf_puts(&b, "an owner of the changed packages must comment `/approve` "
				 "(the `permissions` finding names them); the checks then run "
				 "again.");
	else
		fbc_buf_puts(&b, "fix the findings marked failure and push; every push is "
				 "checked again (comment `/recheck` to re-run without a push).");
	fbc_buf_puts(&b, "\n");
	if (merge_note)
		fbc_buf_printf(&b, "\n**Merge:** %s\n", merge_note);
	if (link)
		fbc_buf_printf(&b, "\nFull result: %s\n", link);
	return fbc_buf_detach(&b, NULL);
}
