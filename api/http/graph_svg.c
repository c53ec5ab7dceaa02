/* GET …/graph?format=svg: the channel's DOT (service/fbc/graph_format.h,
 * the same text as format=dot) laid out and drawn by Graphviz's library
 * (libgvc, "dot" layout, "svg" renderer). Graphviz keeps global state and
 * is not thread-safe: one rendering at a time; the response cache keeps
 * each revision's picture, so a channel is laid out once per revision. */
#include "api/http/handlers.h"

#include <graphviz/cgraph.h>
#include <graphviz/gvc.h>
#include <pthread.h>
#include <string.h>

static pthread_mutex_t gv_lock = PTHREAD_MUTEX_INITIALIZER;
static GVC_t *gvc; /* created on first use, kept for the process */

int fbc_http_graph_svg(fbc_buf *out, const char *dot, size_t nodes, fbc_error *err)
{
	Agraph_t *g = NULL;
	char *data = NULL;
	unsigned int len = 0;
	int rc = 0;

	if (nodes > FBC_HTTP_SVG_MAX_NODES)
		return fbc_error_set(err, FBC_ELIMIT, "format",
				     "the channel has %zu entries, more than the %d drawn as SVG: "
				     "ask for format=dot and lay it out yourself",
				     nodes, FBC_HTTP_SVG_MAX_NODES);
	pthread_mutex_lock(&gv_lock);
	if (!gvc && !(gvc = gvContext())) {
		rc = fbc_error_set(err, FBC_EINTERNAL, "graphviz",
				   "cannot create a Graphviz context");
		goto done;
	}
	if (!(g = agmemread(dot))) {
		rc = fbc_error_set(err, FBC_EINTERNAL, "graphviz",
				   "Graphviz cannot read the DOT text");
		goto done;
	}
	if (gvLayout(gvc, g, "dot") != 0) {
		rc = fbc_error_set(err, FBC_EINTERNAL, "graphviz", "Graphviz layout failed");
		goto done;
	}
	if (gvRenderData(gvc, g, "svg", &data, &len) != 0 || !data) {
		rc = fbc_error_set(err, FBC_EINTERNAL, "graphviz", "Graphviz cannot render SVG");
		gvFreeLayout(gvc, g);
		goto done;
	}
	rc = fbc_buf_append(out, data, len)
		     ? fbc_error_set(err, FBC_ELIMIT, "svg", "the picture is too large")
		     : 0;
	gvFreeRenderData(data);
	gvFreeLayout(gvc, g);
done:
	if (g)
		agclose(g);
	pthread_mutex_unlock(&gv_lock);
	return rc;
}
