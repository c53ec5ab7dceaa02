/*
 * gore: regex parse -> tree -> RE2-style program -> memoising backtracker.
 * The program for a search starts with a lazy "skip a byte" loop, so the
 * first match the backtracker finds is the leftmost one, and among those the
 * one Go's leftmost-first rules prefer.
 */
#include "service/semver/gore.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define MAX_NODES 4096
#define MAX_INST  8192
#define MAX_CAPS  64

enum node_type { N_EMPTY, N_CLASS, N_CAT, N_ALT, N_QUEST, N_STAR, N_PLUS, N_GROUP, N_BOL, N_EOL };

struct node {
	enum node_type type;
	int a, b; /* children (node indexes) */
	int cls;  /* N_CLASS: class index */
	int cap;  /* N_GROUP: capture index, -1 for (?: ) */
};

enum inst_op { I_CLASS, I_SPLIT, I_JMP, I_SAVE, I_MATCH, I_BOL, I_EOL };

struct inst {
	enum inst_op op;
	int x, y; /* SPLIT: preferred, other; JMP: x; SAVE: x = slot; CLASS: x = class */
};

struct gore {
	struct inst *prog;
	int ninst;
	uint8_t (*cls)[32];
	int ncls;
	int ncap;
};

struct parser {
	const char *p;
	struct node *nodes;
	int nnodes;
	uint8_t (*cls)[32];
	int ncls, capcls;
	int ncap;
	bool fail;
};

static int new_node(struct parser *ps, enum node_type t, int a, int b)
{
	if (ps->nnodes >= MAX_NODES) {
		ps->fail = true;
		return 0;
	}
	ps->nodes[ps->nnodes] = (struct node){t, a, b, -1, -1};
	return ps->nnodes++;
}

static int new_class(struct parser *ps)
{
	if (ps->ncls == ps->capcls) {
		int nc = ps->capcls ? ps->capcls * 2 : 16;
		uint8_t(*c)[32] = realloc(ps->cls, (size_t)nc * sizeof(*c));
		if (!c) {
			ps->fail = true;
			return -1;
		}
		ps->cls = c;
		ps->capcls = nc;
	}
	memset(ps->cls[ps->ncls], 0, 32);
	return ps->ncls++;
}

static void cls_set(uint8_t *c, unsigned ch)
{
	c[ch >> 3] |= (uint8_t)(1u << (ch & 7));
}

static bool cls_has(const uint8_t *c, unsigned ch)
{
	return (c[ch >> 3] >> (ch & 7)) & 1u;
}

static void cls_perl(uint8_t *c, char e)
{
	if (e == 's' || e == 'S') {
		uint8_t t[32] = {0};
		cls_set(t, '\t');
		cls_set(t, '\n');
		cls_set(t, '\f');
		cls_set(t, '\r');
		cls_set(t, ' ');
		for (int i = 0; i < 32; i++)
			c[i] |= e == 's' ? t[i] : (uint8_t)~t[i];
	} else {
		for (unsigned ch = 0; ch < 256; ch++)
			if ((ch >= '0' && ch <= '9') == (e == 'd'))
				cls_set(c, ch);
	}
}

static int parse_alt(struct parser *ps);

static int class_node(struct parser *ps, int cls)
{
	int n = new_node(ps, N_CLASS, -1, -1);
	if (!ps->fail)
		ps->nodes[n].cls = cls;
	return n;
}

static int parse_bracket(struct parser *ps)
{
	int ci = new_class(ps);
	bool neg = false, first = true;
	uint8_t *c;

	if (ci < 0)
		return 0;
	c = ps->cls[ci];
	if (*ps->p == '^') {
		neg = true;
		ps->p++;
	}
	while (*ps->p && (*ps->p != ']' || first)) {
		unsigned lo, hi;
		first = false;
		if (ps->p[0] == '\\') {
			char e = ps->p[1];
			if (!e) {
				ps->fail = true;
				return 0;
			}
			ps->p += 2;
			if (e == 's' || e == 'S' || e == 'd' || e == 'D') {
				cls_perl(c, e);
				continue;
			}
			lo = (unsigned char)e;
		} else {
			lo = (unsigned char)*ps->p++;
		}
		hi = lo;
		if (ps->p[0] == '-' && ps->p[1] && ps->p[1] != ']') {
			if (ps->p[1] == '\\') {
				if (!ps->p[2]) {
					ps->fail = true;
					return 0;
				}
				hi = (unsigned char)ps->p[2];
				ps->p += 3;
			} else {
				hi = (unsigned char)ps->p[1];
				ps->p += 2;
			}
			if (hi < lo) {
				ps->fail = true;
				return 0;
			}
		}
		for (unsigned ch = lo; ch <= hi; ch++)
			cls_set(c, ch);
	}
	if (*ps->p != ']') {
		ps->fail = true;
		return 0;
	}
	ps->p++;
	if (neg)
		for (int i = 0; i < 32; i++)
			c[i] = (uint8_t)~c[i];
	return class_node(ps, ci);
}

static int parse_atom(struct parser *ps)
{
	char ch = *ps->p;
	int ci;

	if (ch == '(') {
		int cap = -1, inner, n;
		ps->p++;
		if (ps->p[0] == '?' && ps->p[1] == ':') {
			ps->p += 2;
		} else {
			if (ps->ncap >= MAX_CAPS) {
				ps->fail = true;
				return 0;
			}
			cap = ps->ncap++;
		}
		inner = parse_alt(ps);
		if (*ps->p != ')') {
			ps->fail = true;
			return 0;
		}
		ps->p++;
		n = new_node(ps, N_GROUP, inner, -1);
		if (!ps->fail)
			ps->nodes[n].cap = cap;
		return n;
	}
	if (ch == '[') {
		ps->p++;
		return parse_bracket(ps);
	}
	if (ch == '^') {
		ps->p++;
		return new_node(ps, N_BOL, -1, -1);
	}
	if (ch == '$') {
		ps->p++;
		return new_node(ps, N_EOL, -1, -1);
	}
	ci = new_class(ps);
	if (ci < 0)
		return 0;
	if (ch == '\\') {
		char e = ps->p[1];
		if (!e) {
			ps->fail = true;
			return 0;
		}
		ps->p += 2;
		if (e == 's' || e == 'S' || e == 'd' || e == 'D')
			cls_perl(ps->cls[ci], e);
		else
			cls_set(ps->cls[ci], (unsigned char)e);
		return class_node(ps, ci);
	}
	ps->p++;
	if (ch == '.') {
		for (unsigned c = 0; c < 256; c++)
			if (c != '\n')
				cls_set(ps->cls[ci], c);
	} else {
		cls_set(ps->cls[ci], (unsigned char)ch);
	}
	return class_node(ps, ci);
}

static int parse_repeat(struct parser *ps)
{
	int n = parse_atom(ps);

	while (!ps->fail && (*ps->p == '?' || *ps->p == '*' || *ps->p == '+')) {
		char q = *ps->p++;
		n = new_node(ps, q == '?' ? N_QUEST : q == '*' ? N_STAR : N_PLUS, n, -1);
	}
	return n;
}

static int parse_cat(struct parser *ps)
{
	int n = new_node(ps, N_EMPTY, -1, -1);

	while (!ps->fail && *ps->p && *ps->p != '|' && *ps->p != ')') {
		if (*ps->p == '?' || *ps->p == '*' || *ps->p == '+') {
			ps->fail = true;
			return 0;
		}
		n = new_node(ps, N_CAT, n, parse_repeat(ps));
	}
	return n;
}

static int parse_alt(struct parser *ps)
{
	int n = parse_cat(ps);

	while (!ps->fail && *ps->p == '|') {
		ps->p++;
		n = new_node(ps, N_ALT, n, parse_cat(ps));
	}
	return n;
}

struct emitter {
	struct inst *prog;
	int n;
	bool fail;
};

static int emit(struct emitter *em, enum inst_op op, int x, int y)
{
	if (em->n >= MAX_INST) {
		em->fail = true;
		return 0;
	}
	em->prog[em->n] = (struct inst){op, x, y};
	return em->n++;
}

static void compile(struct emitter *em, const struct node *nodes, int i)
{
	const struct node *nd = &nodes[i];
	int s, j, l0;

	if (em->fail)
		return;
	switch (nd->type) {
	case N_EMPTY:
		break;
	case N_CLASS:
		emit(em, I_CLASS, nd->cls, 0);
		break;
	case N_BOL:
		emit(em, I_BOL, 0, 0);
		break;
	case N_EOL:
		emit(em, I_EOL, 0, 0);
		break;
	case N_CAT:
		compile(em, nodes, nd->a);
		compile(em, nodes, nd->b);
		break;
	case N_ALT:
		s = emit(em, I_SPLIT, 0, 0);
		em->prog[s].x = em->n;
		compile(em, nodes, nd->a);
		j = emit(em, I_JMP, 0, 0);
		em->prog[s].y = em->n;
		compile(em, nodes, nd->b);
		em->prog[j].x = em->n;
		break;
	case N_QUEST:
		s = emit(em, I_SPLIT, 0, 0);
		em->prog[s].x = em->n;
		compile(em, nodes, nd->a);
		em->prog[s].y = em->n;
		break;
	case N_STAR:
		l0 = emit(em, I_SPLIT, 0, 0);
		em->prog[l0].x = em->n;
		compile(em, nodes, nd->a);
		emit(em, I_JMP, l0, 0);
		em->prog[l0].y = em->n;
		break;
	case N_PLUS:
		l0 = em->n;
		compile(em, nodes, nd->a);
		s = emit(em, I_SPLIT, l0, 0);
		em->prog[s].y = em->n;
		break;
	case N_GROUP:
		if (nd->cap >= 0)
			emit(em, I_SAVE, 2 * (nd->cap + 1), 0);
		compile(em, nodes, nd->a);
		if (nd->cap >= 0)
			emit(em, I_SAVE, 2 * (nd->cap + 1) + 1, 0);
		break;
	}
}

int gore_compile(gore **out, const char *pattern)
{
	struct parser ps = {0};
	struct emitter em = {0};
	gore *re = NULL;
	int root, any, l0, rc = -1;

	ps.p = pattern;
	ps.nodes = malloc(MAX_NODES * sizeof(*ps.nodes));
	em.prog = malloc(MAX_INST * sizeof(*em.prog));
	if (!ps.nodes || !em.prog)
		goto done;
	/* the "any byte" class used by the unanchored prefix */
	any = new_class(&ps);
	if (any < 0)
		goto done;
	memset(ps.cls[any], 0xff, 32);
	root = parse_alt(&ps);
	if (ps.fail || *ps.p != '\0')
		goto done;

	/* L0: split main, skip; skip: any; jmp L0; main: save 0; ...; save 1; match */
	l0 = emit(&em, I_SPLIT, 3, 1);
	emit(&em, I_CLASS, any, 0);
	emit(&em, I_JMP, l0, 0);
	emit(&em, I_SAVE, 0, 0);
	compile(&em, ps.nodes, root);
	emit(&em, I_SAVE, 1, 0);
	emit(&em, I_MATCH, 0, 0);
	if (em.fail)
		goto done;

	re = calloc(1, sizeof(*re));
	if (!re)
		goto done;
	re->prog = realloc(em.prog, (size_t)em.n * sizeof(*em.prog));
	if (!re->prog) {
		free(re);
		re = NULL;
		goto done;
	}
	em.prog = NULL;
	re->ninst = em.n;
	re->cls = ps.cls;
	ps.cls = NULL;
	re->ncls = ps.ncls;
	re->ncap = ps.ncap + 1;
	*out = re;
	rc = 0;
done:
	free(ps.nodes);
	free(ps.cls);
	free(em.prog);
	return rc;
}

void gore_free(gore *re)
{
	if (!re)
		return;
	free(re->prog);
	free(re->cls);
	free(re);
}

int gore_ncap(const gore *re)
{
	return re->ncap;
}

struct job {
	int pc; /* -1: restore caps[slot] = pos */
	int slot;
	long pos;
};

int gore_search(const gore *re, const char *text, size_t len, size_t from, long *caps)
{
	size_t nslots = (size_t)re->ncap * 2;
	size_t width = len + 1;
	uint64_t *visited = NULL;
	struct job *stack = NULL;
	size_t sp = 0, scap = 0;
	long *cur = NULL;
	int rc = -1;

	if (from > len)
		return 0;
	visited = calloc(((size_t)re->ninst * width + 63) / 64, sizeof(uint64_t));
	cur = malloc(nslots * sizeof(*cur));
	if (!visited || !cur)
		goto done;
	for (size_t i = 0; i < nslots; i++)
		cur[i] = -1;

#define PUSH(PC, SLOT, POS)                                                \
	do {                                                               \
		if (sp == scap) {                                          \
			size_t nc = scap ? scap * 2 : 64;                  \
			struct job *ns = realloc(stack, nc * sizeof(*ns)); \
			if (!ns)                                           \
				goto done;                                 \
			stack = ns;                                        \
			scap = nc;                                         \
		}                                                          \
		stack[sp++] = (struct job){(PC), (SLOT), (POS)};           \
	} while (0)

	PUSH(0, 0, (long)from);
	while (sp > 0) {
		struct job jb = stack[--sp];
		int pc;
		size_t pos;

		if (jb.pc < 0) {
			cur[jb.slot] = jb.pos;
			continue;
		}
		pc = jb.pc;
		pos = (size_t)jb.pos;
		for (;;) {
			size_t bit = (size_t)pc * width + pos;
			const struct inst *in;

			if (visited[bit / 64] & (1ull << (bit % 64)))
				break;
			visited[bit / 64] |= 1ull << (bit % 64);
			in = &re->prog[pc];
			if (in->op == I_CLASS) {
				if (pos < len &&
				    cls_has(re->cls[in->x], (unsigned char)text[pos])) {
					pc++;
					pos++;
					continue;
				}
				break;
			} else if (in->op == I_SPLIT) {
				PUSH(in->y, 0, (long)pos);
				pc = in->x;
			} else if (in->op == I_JMP) {
				pc = in->x;
			} else if (in->op == I_SAVE) {
				PUSH(-1, in->x, cur[in->x]);
				cur[in->x] = (long)pos;
				pc++;
			} else if (in->op == I_BOL) {
				if (pos != 0)
					break;
				pc++;
			} else if (in->op == I_EOL) {
				if (pos != len)
					break;
				pc++;
			} else {
				memcpy(caps, cur, nslots * sizeof(*cur));
				rc = 1;
				goto done;
			}
		}
	}
	rc = 0;
#undef PUSH
done:
	free(visited);
	free(stack);
	free(cur);
	return rc;
}
