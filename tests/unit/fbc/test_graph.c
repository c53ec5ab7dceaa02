/* Channel graphs (spec §3): heads, chain, stranded, edges, successors, paths. */
#include "fbc_test_util.h"
#include "service/fbc/graph.h"
#include "service/fbc/graph_format.h"
#include "service/base/buf.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#define P "{\"schema\":\"olm.package\",\"name\":\"foo\",\"defaultChannel\":\"stable\"}\n"
#define CH(entries)                                                                        \
	"{\"schema\":\"olm.channel\",\"name\":\"stable\",\"package\":\"foo\",\"entries\":" \
	"[" entries "]}\n"
#define B(name, ver)                                                                    \
	"{\"schema\":\"olm.bundle\",\"name\":\"" name                                   \
	"\",\"package\":\"foo\",\"image\":\"quay.io/a/b:1\","                           \
	"\"properties\":[{\"type\":\"olm.package\",\"value\":{\"packageName\":\"foo\"," \
	"\"version\":\"" ver "\"}}]}\n"

typedef struct gfix {
	tcat t;
	fbc_graph *g;
} gfix;

static void gload(gfix *f, const char *text)
{
	fbc_error err;
	fbc_channel *c;

	memset(f, 0, sizeof(*f));
	tcat_load(&f->t, text);
	c = fbc_package_channel(fbc_catalog_package(f->t.cat, "foo"), "stable");
	assert_non_null(c);
	if (fbc_graph_build(&f->g, c, FBC_GRAPH_EDGES, &err))
		fail_msg("graph: %s", err.message);
}

static void gfree(gfix *f)
{
	fbc_graph_free(f->g);
	tcat_dispose(&f->t);
}

static const char *node(const gfix *f, size_t i)
{
	assert_true(i < f->g->n_nodes);
	return f->g->nodes[i].name;
}

static void fbc_graph_build__replaces_and_skips_stop_the_walk(void **state)
{
	gfix f;

	(void)state;
	/* C replaces B, skips [B]; B replaces A: the walk stops at C, A is stranded */
	gload(&f, P CH("{\"name\":\"a\"},{\"name\":\"b\",\"replaces\":\"a\"},{\"name\":\"c\","
		       "\"replaces\":\"b\",\"skips\":[\"b\"]}") B("a", "1.0.0") B("b", "2.0.0")
			  B("c", "3.0.0"));
	assert_int_equal(f.g->status, FBC_GRAPH_STRANDED);
	assert_string_equal(node(&f, f.g->head), "c");
	assert_int_equal(f.g->n_stranded, 1);
	assert_string_equal(node(&f, f.g->stranded[0]), "a");
	assert_false(f.g->nodes[fbc_graph_find(f.g, "b")].on_chain);
	assert_true(f.g->nodes[fbc_graph_find(f.g, "b")].skipped);
	gfree(&f);
	/* C replaces B, skips [A]; B replaces A: the walk goes on to B, A is skipped */
	gload(&f, P CH("{\"name\":\"a\"},{\"name\":\"b\",\"replaces\":\"a\"},{\"name\":\"c\","
		       "\"replaces\":\"b\",\"skips\":[\"a\"]}") B("a", "1.0.0") B("b", "2.0.0")
			  B("c", "3.0.0"));
	assert_int_equal(f.g->status, FBC_GRAPH_OK);
	assert_true(f.g->nodes[fbc_graph_find(f.g, "b")].on_chain);
	assert_int_equal(f.g->n_stranded, 0);
	gfree(&f);
}

static void fbc_graph_build__cycles(void **state)
{
	gfix f;

	(void)state;
	/* not reachable from the head: stranded, not a cycle */
	gload(&f, P CH("{\"name\":\"h\"},{\"name\":\"x\",\"replaces\":\"y\"},{\"name\":\"y\","
		       "\"replaces\":\"x\"}") B("h", "3.0.0") B("x", "1.0.0") B("y", "2.0.0"));
	assert_int_equal(f.g->status, FBC_GRAPH_STRANDED);
	assert_int_equal(f.g->n_stranded, 2);
	assert_string_equal(node(&f, f.g->stranded[0]), "x");
	assert_string_equal(node(&f, f.g->stranded[1]), "y");
	gfree(&f);
	/* reachable from the head: V5 with the loop from its first visit */
	gload(&f, P CH("{\"name\":\"a\",\"replaces\":\"b\"},{\"name\":\"b\",\"replaces\":\"a\"},{"
		       "\"name\":\"c\",\"replaces\":\"b\"}") B("a", "1.0.0") B("b", "2.0.0")
			  B("c", "3.0.0"));
	assert_int_equal(f.g->status, FBC_GRAPH_CYCLE);
	assert_int_equal(f.g->n_cycle, 3);
	assert_string_equal(f.g->cycle[0], "b");
	assert_string_equal(f.g->cycle[1], "a");
	assert_string_equal(f.g->cycle[2], "b");
	gfree(&f);
	/* everything referenced: no head */
	gload(&f, P CH("{\"name\":\"a\",\"replaces\":\"b\"},{\"name\":\"b\",\"replaces\":\"a\"}")
			  B("a", "1.0.0") B("b", "2.0.0"));
	assert_int_equal(f.g->status, FBC_GRAPH_NO_HEAD);
	assert_int_equal(f.g->n_heads, 0);
	gfree(&f);
}

static void fbc_graph_build__single_entry_and_heads(void **state)
{
	gfix f;

	(void)state;
	gload(&f, P CH("{\"name\":\"a\",\"replaces\":\"gone\",\"skips\":[\"older\"],\"skipRange\":"
		       "\"<1.0.0\"}") B("a", "1.0.0"));
	assert_int_equal(f.g->status, FBC_GRAPH_OK);
	assert_string_equal(node(&f, f.g->head), "a");
	assert_true(f.g->nodes[fbc_graph_find(f.g, "gone")].external);
	gfree(&f);
	gload(&f, P CH("{\"name\":\"a\",\"skips\":[\"a\"]}") B("a", "1.0.0"));
	assert_int_equal(f.g->status, FBC_GRAPH_NO_HEAD);
	gfree(&f);
	/* skipRange makes no head-count edge */
	gload(&f, P CH("{\"name\":\"a\"},{\"name\":\"b\",\"skipRange\":\"<2.0.0\"}") B("a", "1.0.0")
			  B("b", "2.0.0"));
	assert_int_equal(f.g->status, FBC_GRAPH_MULTIPLE_HEADS);
	assert_int_equal(f.g->n_heads, 2);
	assert_string_equal(node(&f, f.g->heads[0]), "a");
	assert_string_equal(node(&f, f.g->heads[1]), "b");
	gfree(&f);
}

#define CHAIN4(range)                                                                             \
	P CH("{\"name\":\"a\"},{\"name\":\"b\",\"replaces\":\"a\"},{\"name\":\"c\",\"replaces\":" \
	     "\"b\"},"                                                                            \
	     "{\"name\":\"d\",\"replaces\":\"c\"" range "}") B("a", "1.0.0") B("b", "2.0.0")      \
		B("c", "3.0.0") B("d", "4.0.0")

static void fbc_graph_build__edges(void **state)
{
	gfix f;
	size_t i, n[3] = {0, 0, 0};

	(void)state;
	gload(&f, CHAIN4(",\"skipRange\":\">=1.0.0 <3.0.0\",\"skips\":[\"zz\"]"));
	for (i = 0; i < f.g->n_edges; i++) {
		const fbc_graph_edge *e = &f.g->edges[i];

		n[e->kind]++;
		assert_string_equal(node(&f, e->to),
				    e->kind == FBC_EDGE_REPLACES
					    ? (strcmp(node(&f, e->from), "a") == 0   ? "b"
					       : strcmp(node(&f, e->from), "b") == 0 ? "c"
										     : "d")
					    : "d");
	}
	assert_int_equal(n[FBC_EDGE_REPLACES], 3);
	assert_int_equal(n[FBC_EDGE_SKIPS], 1);
	assert_int_equal(n[FBC_EDGE_SKIP_RANGE], 2); /* a (1.0.0) and b (2.0.0) */
	assert_string_equal(fbc_graph_edge_kind_name(FBC_EDGE_SKIP_RANGE), "skipRange");
	assert_int_equal(f.g->n_classic, 4);
	assert_string_equal(node(&f, f.g->classic[0]), "d");
	gfree(&f);
}

static void fbc_graph_successors__olm_docs_example(void **state)
{
	gfix f;
	fbc_graph_list l;
	fbc_error err;

	(void)state;
	/* v3 skips [v2]; v2 skipRange ">=1.0.0 <2.0.0"; installed 1.0.0 */
	gload(&f, P CH("{\"name\":\"example.v2.0.0\",\"skipRange\":\">=1.0.0 <2.0.0\"},"
		       "{\"name\":\"example.v3.0.0\",\"skips\":[\"example.v2.0.0\"]}")
			  B("example.v2.0.0", "2.0.0") B("example.v3.0.0", "3.0.0"));
	assert_int_equal(f.g->status, FBC_GRAPH_OK);
	assert_int_equal(
		fbc_graph_successors(&l, f.g, FBC_UPGRADE_CLASSIC, "example.v1.0.0", "1.0.0", &err),
		0);
	assert_int_equal(l.n, 0); /* v2 is skipped, so off the chain; v3 covers nothing */
	fbc_graph_list_dispose(&l);
	assert_int_equal(
		fbc_graph_successors(&l, f.g, FBC_UPGRADE_V1, "example.v1.0.0", "1.0.0", &err), 0);
	assert_int_equal(l.n, 1);
	assert_string_equal(node(&f, l.items[0]), "example.v2.0.0");
	fbc_graph_list_dispose(&l);
	/* from v2 both semantics go to v3 */
	assert_int_equal(
		fbc_graph_successors(&l, f.g, FBC_UPGRADE_CLASSIC, "example.v2.0.0", NULL, &err),
		0);
	assert_int_equal(l.n, 1);
	assert_string_equal(node(&f, l.items[0]), "example.v3.0.0");
	fbc_graph_list_dispose(&l);
	/* upgrade paths */
	assert_int_equal(
		fbc_graph_upgrade_path(&l, f.g, FBC_UPGRADE_V1, "example.v1.0.0", "1.0.0", &err),
		0);
	assert_int_equal(l.n, 2);
	assert_string_equal(node(&f, l.items[0]), "example.v2.0.0");
	assert_string_equal(node(&f, l.items[1]), "example.v3.0.0");
	fbc_graph_list_dispose(&l);
	assert_int_equal(fbc_graph_upgrade_path(&l, f.g, FBC_UPGRADE_CLASSIC, "example.v1.0.0",
						"1.0.0", &err),
			 FBC_ENOTFOUND);
	gfree(&f);
}

static void fbc_graph_successors__ordering(void **state)
{
	gfix f;
	fbc_graph_list l;
	fbc_error err;

	(void)state;
	gload(&f, CHAIN4(",\"skipRange\":\">=1.0.0 <3.0.0\""));
	/* classic: closest to the head first; v1: highest version first */
	assert_int_equal(fbc_graph_successors(&l, f.g, FBC_UPGRADE_CLASSIC, "a", NULL, &err), 0);
	assert_int_equal(l.n, 2);
	assert_string_equal(node(&f, l.items[0]), "d");
	assert_string_equal(node(&f, l.items[1]), "b");
	fbc_graph_list_dispose(&l);
	assert_int_equal(fbc_graph_successors(&l, f.g, FBC_UPGRADE_V1, "a", NULL, &err), 0);
	assert_int_equal(l.n, 2);
	assert_string_equal(node(&f, l.items[0]), "d");
	fbc_graph_list_dispose(&l);
	/* an installed version that is no entry at all */
	assert_int_equal(fbc_graph_successors(&l, f.g, FBC_UPGRADE_V1, "other", "2.5.0", &err), 0);
	assert_int_equal(l.n, 1);
	assert_string_equal(node(&f, l.items[0]), "d");
	fbc_graph_list_dispose(&l);
	assert_int_equal(fbc_graph_upgrade_path(&l, f.g, FBC_UPGRADE_CLASSIC, "a", NULL, &err), 0);
	assert_int_equal(l.n, 1);
	assert_string_equal(node(&f, l.items[0]), "d");
	fbc_graph_list_dispose(&l);
	assert_int_equal(fbc_graph_upgrade_path(&l, f.g, FBC_UPGRADE_CLASSIC, "d", NULL, &err), 0);
	assert_int_equal(l.n, 0);
	fbc_graph_list_dispose(&l);
	gfree(&f);

	gload(&f, CHAIN4(""));
	assert_int_equal(fbc_graph_upgrade_path(&l, f.g, FBC_UPGRADE_CLASSIC, "a", NULL, &err), 0);
	assert_int_equal(l.n, 3);
	assert_string_equal(node(&f, l.items[0]), "b");
	assert_string_equal(node(&f, l.items[1]), "c");
	assert_string_equal(node(&f, l.items[2]), "d");
	fbc_graph_list_dispose(&l);
	assert_int_equal(fbc_graph_upgrade_path(&l, f.g, FBC_UPGRADE_V1, "b", NULL, &err), 0);
	assert_int_equal(l.n, 2);
	fbc_graph_list_dispose(&l);
	gfree(&f);
}

static void fbc_graph_build__deprecation_flags(void **state)
{
	gfix f;

	(void)state;
	gload(&f,
	      P CH("{\"name\":\"a\"},{\"name\":\"b\",\"replaces\":\"a\"}") B("a", "1.0.0") B(
		      "b",
		      "2.0.0") "{\"schema\":\"olm.deprecations\",\"package\":\"foo\",\"entries\":["
			       "{\"reference\":{\"schema\":\"olm.bundle\",\"name\":\"a\"},"
			       "\"message\":\"old\"},"
			       "{\"reference\":{\"schema\":\"olm.channel\",\"name\":\"stable\"},"
			       "\"message\":\"m\"}]}\n");
	assert_true(f.g->nodes[fbc_graph_find(f.g, "a")].deprecated);
	assert_false(f.g->nodes[fbc_graph_find(f.g, "b")].deprecated);
	assert_true(f.g->channel_deprecated);
	assert_false(f.g->package_deprecated);
	gfree(&f);
}

/* Heads and stranded entries come out sorted by name, and quickly: a hostile
 * channel may have 10^5 of them (an insertion sort took 40 s). */
static void fbc_graph_build__many_heads_and_stranded_sorted_fast(void **state)
{
	const size_t n = 60000;
	struct timespec t0, t1;
	fbc_buf b;
	gfix f;
	double ms;

	(void)state;
	for (int kind = 0; kind < 2; kind++) {
		fbc_buf_init(&b, 0);
		assert_int_equal(fbc_buf_puts(&b,
					      P "{\"schema\":\"olm.channel\",\"name\":\"stable\","
						"\"package\":\"foo\",\"entries\":["),
				 0);
		if (kind == 1) /* h skips s; s replaces x(n-1); x(i) replaces x(i-1) */
			assert_int_equal(
				fbc_buf_printf(&b,
					       "{\"name\":\"h\",\"skips\":[\"s\"]},{\"name\":"
					       "\"s\",\"replaces\":\"x%06zu\"},",
					       n - 1),
				0);
		for (size_t i = n; i-- > 0;) {
			assert_int_equal(fbc_buf_printf(&b, "{\"name\":\"x%06zu\"", i), 0);
			if (kind == 1 && i > 0)
				assert_int_equal(
					fbc_buf_printf(&b, ",\"replaces\":\"x%06zu\"", i - 1), 0);
			assert_int_equal(fbc_buf_puts(&b, i ? "}," : "}"), 0);
		}
		assert_int_equal(fbc_buf_puts(&b, "]}\n"), 0);
		memset(&f, 0, sizeof(f));
		tcat_load(&f.t, b.data);
		clock_gettime(CLOCK_MONOTONIC, &t0);
		{
			fbc_error err;
			fbc_channel *c =
				fbc_package_channel(fbc_catalog_package(f.t.cat, "foo"), "stable");
			assert_int_equal(fbc_graph_build(&f.g, c, 0, &err), 0);
		}
		clock_gettime(CLOCK_MONOTONIC, &t1);
		ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 +
		     (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
		if (kind == 0) {
			assert_int_equal(f.g->status, FBC_GRAPH_MULTIPLE_HEADS);
			assert_int_equal(f.g->n_heads, n);
			for (size_t i = 1; i < n; i++)
				assert_true(strcmp(node(&f, f.g->heads[i - 1]),
						   node(&f, f.g->heads[i])) < 0);
		} else {
			assert_int_equal(f.g->status, FBC_GRAPH_STRANDED);
			assert_int_equal(f.g->n_stranded, n);
			for (size_t i = 1; i < n; i++)
				assert_true(strcmp(node(&f, f.g->stranded[i - 1]),
						   node(&f, f.g->stranded[i])) < 0);
		}
		assert_true(ms < 2000.0);
		gfree(&f);
		fbc_buf_dispose(&b);
	}
}

/* One writer, two documented styles: the REST API's plain one and the
 * annotated one of `fbcd graph`; names are escaped for each language. */
static void fbc_graph_write_view__styles_and_escaping(void **state)
{
	const fbc_graph_view_node nodes[] = {
		{"a\"b", "1.0.0", FBC_GRAPH_VIEW_HEAD},
		{"c\\d", NULL, FBC_GRAPH_VIEW_DEPRECATED | FBC_GRAPH_VIEW_STRANDED},
	};
	const fbc_graph_view_edge edges[] = {
		{"c\\d", "a\"b", 1, 0, FBC_EDGE_SKIPS},
		{"x", "a\"b", FBC_GRAPH_NONE, 0, FBC_EDGE_REPLACES},
	};
	fbc_graph_view v = {"p", "c", "stranded", true, nodes, 2, edges, 2, FBC_GRAPH_STYLE_PLAIN};
	fbc_buf b;

	(void)state;
	fbc_buf_init(&b, 0);
	assert_int_equal(fbc_graph_write_view(&b, &v, FBC_GRAPH_FORMAT_DOT), 0);
	assert_string_equal(b.data, "digraph \"p/c\" {\n  rankdir=LR;\n  node [shape=box];\n"
				    "  \"a\\\"b\" [label=\"a\\\"b\\n1.0.0\", style=bold];\n"
				    "  \"c\\\\d\" [label=\"c\\\\d\\n(deprecated)\", color=gray];\n"
				    "  \"c\\\\d\" -> \"a\\\"b\" [label=\"skips\", style=dashed];\n"
				    "  \"x\" -> \"a\\\"b\" [label=\"replaces\"];\n}\n");
	fbc_buf_reset(&b);
	assert_int_equal(fbc_graph_write_view(&b, &v, FBC_GRAPH_FORMAT_MERMAID), 0);
	/* the edge from "x" (not a node) has no number: left out */
	assert_string_equal(b.data, "graph LR\n  n0[\"a#quot;b<br/>1.0.0\"]\n"
				    "  n1[\"c\\d<br/>(deprecated)\"]\n  n1 -.->|skips| n0\n");
	fbc_buf_reset(&b);
	v.style = FBC_GRAPH_STYLE_ANNOTATED;
	assert_int_equal(fbc_graph_write_view(&b, &v, FBC_GRAPH_FORMAT_DOT), 0);
	assert_non_null(strstr(b.data, "\tlabel=\"p / c (stranded) deprecated\";\n"));
	assert_non_null(strstr(b.data, "\t\"a\\\"b\" [label=\"a\\\"b\\n1.0.0\\nhead\", "
				       "penwidth=2, color=\"darkgreen\"];\n"));
	assert_non_null(strstr(b.data,
			       "[label=\"c\\\\d\\n?\\nstranded deprecated\", "
			       "color=\"red\", style=\"filled\", fillcolor=\"lightgrey\"];"));
	fbc_buf_reset(&b);
	assert_int_equal(fbc_graph_write_view(&b, &v, FBC_GRAPH_FORMAT_MERMAID), 0);
	assert_non_null(strstr(b.data, "\tn1[\"c\\d<br/>?<br/>stranded deprecated\"]\n"));
	assert_non_null(strstr(b.data, "\tclass n0 head\n\tclass n1 stranded\n"
				       "\tclass n1 deprecated\n"));
	/* a full buffer is reported, not cut silently */
	fbc_buf_dispose(&b);
	fbc_buf_init(&b, 16);
	assert_int_equal(fbc_graph_write_view(&b, &v, FBC_GRAPH_FORMAT_DOT), FBC_ELIMIT);
	fbc_buf_dispose(&b);
}

static void fbc_graph_write__json_dot_mermaid(void **state)
{
	fbc_graph_format fmt;
	fbc_buf b;
	gfix f;

	(void)state;
	gload(&f, P CH("{\"name\":\"a\",\"replaces\":\"z\"},{\"name\":\"b\",\"replaces\":\"a\"}")
			  B("a", "1.0.0") B("b", "2.0.0"));
	fbc_buf_init(&b, 0);
	assert_int_equal(fbc_graph_format_parse(&fmt, "json"), 0);
	assert_int_equal(fbc_graph_write(&b, fbc_catalog_package(f.t.cat, "foo"), f.g, fmt), 0);
	assert_non_null(strstr(b.data, "\"status\":\"ok\",\"head\":\"b\""));
	assert_non_null(strstr(b.data, "{\"from\":\"z\",\"to\":\"a\",\"type\":\"replaces\"}"));
	fbc_buf_reset(&b);
	assert_int_equal(fbc_graph_format_parse(&fmt, "dot"), 0);
	assert_int_equal(fbc_graph_write(&b, fbc_catalog_package(f.t.cat, "foo"), f.g, fmt), 0);
	assert_non_null(strstr(b.data, "\t\"z\" [label=\"z\\n?\\nexternal\", style=\"dashed\"];"));
	assert_non_null(strstr(b.data, "\t\"z\" -> \"a\" [label=\"replaces\"];"));
	fbc_buf_reset(&b);
	assert_int_equal(fbc_graph_format_parse(&fmt, "mermaid"), 0);
	assert_int_equal(fbc_graph_write(&b, fbc_catalog_package(f.t.cat, "foo"), f.g, fmt), 0);
	assert_non_null(strstr(b.data, "\tn2 -->|replaces| n0\n"));
	assert_int_equal(fbc_graph_format_parse(&fmt, "svg"), FBC_EINVAL);
	fbc_buf_dispose(&b);
	gfree(&f);
}

/* ---- a reference of §3.1-3.2 with sets of names, as opm keeps them ---- */

#define RN 8 /* names "", "a".."g": entries name some, replaces/skips any */
static const char *const rnames[RN] = {"", "a", "b", "c", "d", "e", "f", "g"};

typedef struct rset {
	bool has[RN];
} rset;

static int rname(const char *s)
{
	for (int i = 0; i < RN; i++)
		if (strcmp(rnames[i], s) == 0)
			return i;
	fail_msg("unknown name %s", s);
	return -1;
}

/* Random channels (duplicates, empty names, names no entry has, cycles,
 * self-replaces, skips of anything): fbc_graph_build's heads, skipped, chain,
 * cycle, stranded and classic order are those of the name-set algorithm. */
static void fbc_graph_build__same_as_name_sets(void **state)
{
	unsigned seed = 12345;

	(void)state;
	for (int round = 0; round < 20000; round++) {
		fbc_channel_entry ent[6];
		const char *skips[6][3];
		fbc_channel ch;
		fbc_graph *g = NULL;
		fbc_error err;
		size_t n = 1 + (size_t)(rand_r(&seed) % 6), first[RN], nn = 0, node_of[RN];
		rset incoming = {{0}}, skipped = {{0}}, chain = {{0}};
		int head = -1, n_heads = 0, order[RN], n_order = 0;
		bool cycle = false;

		memset(&ch, 0, sizeof(ch));
		memset(ent, 0, sizeof(ent));
		for (size_t i = 0; i < n; i++) {
			/* names mostly non-empty; replaces empty half the time */
			ent[i].name = rnames[1 + rand_r(&seed) % (RN - 1)];
			if (rand_r(&seed) % 23 == 0)
				ent[i].name = "";
			ent[i].replaces = rand_r(&seed) % 2 ? "" : rnames[rand_r(&seed) % RN];
			ent[i].n_skips = (size_t)(rand_r(&seed) % 3);
			for (size_t k = 0; k < ent[i].n_skips; k++)
				skips[i][k] = rnames[rand_r(&seed) % RN];
			ent[i].skips = skips[i];
			ent[i].skip_range = "";
		}
		ch.name = "stable";
		ch.package = "foo";
		ch.entries = ent;
		ch.n_entries = n;
		if (fbc_graph_build(&g, &ch, 0, &err))
			fail_msg("graph: %s", err.message);
		/* nodes: the first entry of each name */
		for (int x = 0; x < RN; x++)
			node_of[x] = FBC_GRAPH_NONE;
		for (size_t i = 0; i < n; i++) {
			int x = rname(ent[i].name);

			if (node_of[x] == FBC_GRAPH_NONE) {
				node_of[x] = nn;
				first[nn++] = i;
			}
		}
		assert_int_equal(g->n_entries, nn);
		for (size_t i = 0; i < nn; i++) {
			const fbc_channel_entry *e = &ent[first[i]];

			if (*e->replaces)
				incoming.has[rname(e->replaces)] = true;
			for (size_t k = 0; k < e->n_skips; k++) {
				incoming.has[rname(e->skips[k])] = true;
				skipped.has[rname(e->skips[k])] = true;
			}
		}
		for (size_t i = 0; i < nn; i++) {
			int x = rname(ent[first[i]].name);

			assert_int_equal(g->nodes[i].head, !incoming.has[x]);
			assert_int_equal(g->nodes[i].skipped, skipped.has[x]);
			if (!incoming.has[x]) {
				n_heads++;
				head = (int)i;
			}
		}
		assert_int_equal(g->n_heads, n_heads);
		if (n_heads != 1) {
			assert_int_equal(g->head, FBC_GRAPH_NONE);
			fbc_graph_free(g);
			continue;
		}
		assert_int_equal(g->head, head);
		/* the walk: names, until a skipped one, a repeat, or no entry */
		{
			const fbc_channel_entry *cur = &ent[first[head]];
			int list[RN + 2], n_list = 0;

			chain.has[rname(cur->name)] = true;
			list[n_list++] = rname(cur->name);
			while (cur) {
				int r = rname(cur->replaces);

				if (skipped.has[r])
					break;
				if (chain.has[r]) {
					int i = 0;

					list[n_list++] = r;
					while (list[i] != r)
						i++;
					cycle = true;
					assert_int_equal(g->status, FBC_GRAPH_CYCLE);
					assert_int_equal(g->n_cycle, (size_t)(n_list - i));
					for (int q = i; q < n_list; q++)
						assert_string_equal(g->cycle[q - i],
								    rnames[list[q]]);
					break;
				}
				chain.has[r] = true;
				list[n_list++] = r;
				cur = node_of[r] != FBC_GRAPH_NONE ? &ent[first[node_of[r]]] : NULL;
			}
		}
		if (!cycle) {
			size_t n_str = 0;

			for (size_t i = 0; i < nn; i++) {
				int x = rname(ent[first[i]].name);
				bool str = !chain.has[x] && !skipped.has[x];

				assert_int_equal(g->nodes[i].on_chain, chain.has[x]);
				assert_int_equal(g->nodes[i].stranded, str);
				n_str += str;
			}
			assert_int_equal(g->n_stranded, n_str);
			assert_int_equal(g->status, n_str ? FBC_GRAPH_STRANDED : FBC_GRAPH_OK);
		}
		/* the OLM v0 order: along replaces from the head, skipped left out */
		{
			bool seen[RN] = {0};
			size_t cur = (size_t)head;

			while (cur != FBC_GRAPH_NONE && !seen[cur]) {
				const fbc_channel_entry *e = &ent[first[cur]];

				seen[cur] = true;
				if (!skipped.has[rname(e->name)])
					order[n_order++] = (int)cur;
				cur = *e->replaces ? node_of[rname(e->replaces)] : FBC_GRAPH_NONE;
			}
			assert_int_equal(g->n_classic, (size_t)n_order);
			for (int i = 0; i < n_order; i++)
				assert_int_equal(g->classic[i], (size_t)order[i]);
		}
		fbc_graph_free(g);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(fbc_graph_build__replaces_and_skips_stop_the_walk),
		cmocka_unit_test(fbc_graph_build__cycles),
		cmocka_unit_test(fbc_graph_build__same_as_name_sets),
		cmocka_unit_test(fbc_graph_build__single_entry_and_heads),
		cmocka_unit_test(fbc_graph_build__edges),
		cmocka_unit_test(fbc_graph_successors__olm_docs_example),
		cmocka_unit_test(fbc_graph_successors__ordering),
		cmocka_unit_test(fbc_graph_build__deprecation_flags),
		cmocka_unit_test(fbc_graph_build__many_heads_and_stranded_sorted_fast),
		cmocka_unit_test(fbc_graph_write_view__styles_and_escaping),
		cmocka_unit_test(fbc_graph_write__json_dot_mermaid),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
