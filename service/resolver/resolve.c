/*
 * The resolution core: candidate entries and channel chains (spec §3.1),
 * dependency candidate lists in the order of §2.6, the boolean encoding on
 * CryptoMiniSat with one selector literal per applied constraint (§2.1), the
 * greedy ordered search of §2.5 and unsat cores (§2.8).
 */
#include "service/resolver/internal.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct fbc_resolve_result_priv {
	fbc_arena *arena;
};

/* ---------------------------------------------------------------- ptrmap */

static size_t ptr_hash(const void *p)
{
	uintptr_t x = (uintptr_t)p;

	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	return (size_t)x;
}

void *r_ptrmap_get(const r_ptrmap *m, const void *k)
{
	size_t i;

	if (!m->cap)
		return NULL;
	for (i = ptr_hash(k) & (m->cap - 1); m->keys[i]; i = (i + 1) & (m->cap - 1))
		if (m->keys[i] == k)
			return m->vals[i];
	return NULL;
}

int r_ptrmap_put(r_ptrmap *m, const void *k, void *v)
{
	size_t i;

	if ((m->count + 1) * 2 > m->cap) {
		r_ptrmap n = {0};

		n.cap = m->cap ? m->cap * 2 : 64;
		n.keys = calloc(n.cap, sizeof(*n.keys));
		n.vals = calloc(n.cap, sizeof(*n.vals));
		if (!n.keys || !n.vals) {
			free(n.keys);
			free(n.vals);
			return FBC_ENOMEM;
		}
		for (i = 0; i < m->cap; i++)
			if (m->keys[i])
				r_ptrmap_put(&n, m->keys[i], m->vals[i]);
		free(m->keys);
		free(m->vals);
		*m = n;
	}
	for (i = ptr_hash(k) & (m->cap - 1); m->keys[i]; i = (i + 1) & (m->cap - 1))
		if (m->keys[i] == k) {
			m->vals[i] = v;
			return 0;
		}
	m->keys[i] = k;
	m->vals[i] = v;
	m->count++;
	return 0;
}

void r_ptrmap_dispose(r_ptrmap *m)
{
	free(m->keys);
	free(m->vals);
	memset(m, 0, sizeof(*m));
}

/* ---------------------------------------------------------------- basics */

static int oom(r_ctx *c)
{
	return fbc_error_set(c->err, FBC_ENOMEM, NULL, "out of memory");
}

int r_input_error(r_ctx *c, const char *fmt, ...)
{
	va_list ap;
	fbc_buf b;
	char *s;

	if (c->input_error)
		return FBC_EINVAL; /* the first error wins */
	fbc_buf_init(&b, 8192);
	va_start(ap, fmt);
	fbc_buf_vprintf(&b, fmt, ap);
	va_end(ap);
	s = fbc_arena_strdup(c->arena, b.data ? b.data : "");
	fbc_buf_dispose(&b);
	if (!s)
		return oom(c);
	c->input_error = s;
	return FBC_EINVAL;
}

bool r_bundle_has_property(const fbc_bundle *b, const char *type)
{
	for (size_t i = 0; b && i < b->n_properties; i++)
		if (strcmp(b->properties[i].type, type) == 0)
			return true;
	return false;
}

const char *r_entry_id(r_ctx *c, const r_entry *e)
{
	(void)c;
	return e->id;
}

static const char *make_id(r_ctx *c, const r_entry *e)
{
	if (e->inst >= 0)
		return fbc_arena_printf(c->arena, "@existing/%s", e->name);
	return fbc_arena_printf(c->arena, "%s/%s/%s", c->req->catalogs[e->cat].name, e->channel,
				e->name);
}

static int entry_push(r_ctx *c, const r_entry *tmpl, int *out)
{
	r_entry *e = fbc_vec_push(&c->entries);

	if (!e)
		return oom(c);
	*e = *tmpl;
	e->var = -1;
	e->has_ver = false;
	if (e->version && *e->version &&
	    fbc_semver_parse_tolerant(&e->ver, e->version, strlen(e->version), NULL) == 0)
		e->has_ver = true;
	e->id = make_id(c, e);
	if (!e->id)
		return oom(c);
	*out = (int)(c->entries.len - 1);
	return 0;
}

static bool is_default_channel(const fbc_channel *ch)
{
	return ch->pkg && ch->pkg->default_channel &&
	       strcmp(ch->pkg->default_channel, ch->name) == 0;
}

/* §3.1 sortChannel: heads, then the replaces walk dropping skipped entries. */
static int chain_build(r_ctx *c, int cat, const fbc_channel *ch, r_chain *out)
{
	const char *catname = c->req->catalogs[cat].name;
	fbc_strmap names;
	unsigned char *flag = NULL; /* bit0 replaced/skipped, bit1 skipped, bit2 visited */
	size_t i, j, n = ch->n_entries, n_heads = 0, head = 0;
	int rc = 0;

	fbc_strmap_init(&names);
	memset(out, 0, sizeof(*out));
	flag = calloc(n ? n : 1, 1);
	out->ents = fbc_arena_calloc(c->arena, n ? n : 1, sizeof(int));
	if (!flag || !out->ents) {
		rc = oom(c);
		goto done;
	}
	for (i = 0; i < n; i++)
		if (fbc_strmap_add(&names, ch->entries[i].name, (void *)(uintptr_t)(i + 1)) < 0) {
			rc = oom(c);
			goto done;
		}
	for (i = 0; i < n; i++) {
		const fbc_channel_entry *e = &ch->entries[i];
		uintptr_t r = (uintptr_t)fbc_strmap_get(&names, e->replaces);

		if (*e->replaces && r)
			flag[r - 1] |= 1;
		for (j = 0; j < e->n_skips; j++) {
			uintptr_t s = (uintptr_t)fbc_strmap_get(&names, e->skips[j]);
			if (s)
				flag[s - 1] |= 3;
		}
	}
	for (i = 0; i < n; i++)
		if (!(flag[i] & 1)) {
			if (!n_heads)
				head = i;
			n_heads++;
		}
	if (n_heads == 0) {
		out->error = fbc_arena_printf(
			c->arena,
			"no channel heads (entries not replaced by another entry) found in channel "
			"\"%s\" of package \"%s\" in catalog \"%s\"",
			ch->name, ch->package, catname);
		goto done;
	}
	if (n_heads > 1) {
		fbc_buf b;

		fbc_buf_init(&b, 4096);
		for (i = 0; i < n; i++)
			if (!(flag[i] & 1))
				fbc_buf_printf(&b, "%s%s", b.len ? ", " : "", ch->entries[i].name);
		out->error = fbc_arena_printf(c->arena,
					      "a unique replacement chain within channel \"%s\" of "
					      "package \"%s\" in catalog "
					      "\"%s\" is required to determine the relative order "
					      "between channel entries, "
					      "but %zu replacement chains were found (heads: %s): "
					      "the channel is ambiguous",
					      ch->name, ch->package, catname, n_heads,
					      b.data ? b.data : "");
		fbc_buf_dispose(&b);
		goto done;
	}
	for (i = head;;) {
		uintptr_t nx;

		if (flag[i] & 4) {
			out->error = fbc_arena_printf(
				c->arena,
				"a cycle exists in the chain of replacement of channel \"%s\" of "
				"package \"%s\" in catalog \"%s\" (at %s)",
				ch->name, ch->package, catname, ch->entries[i].name);
			out->n = 0;
			goto done;
		}
		flag[i] |= 4;
		if (!(flag[i] & 2) && ch->entries[i].bundle) {
			r_entry t;
			int idx;

			memset(&t, 0, sizeof(t));
			t.cat = cat;
			t.ch = ch;
			t.ce = &ch->entries[i];
			t.b = ch->entries[i].bundle;
			t.name = ch->entries[i].name;
			t.package = ch->package;
			t.channel = ch->name;
			t.version = t.b->version ? t.b->version : "";
			t.pos = out->n;
			t.is_default = is_default_channel(ch);
			t.inst = -1;
			if ((rc = entry_push(c, &t, &idx)) < 0)
				goto done;
			out->ents[out->n++] = idx;
		}
		nx = *ch->entries[i].replaces
			     ? (uintptr_t)fbc_strmap_get(&names, ch->entries[i].replaces)
			     : 0;
		if (!nx)
			break;
		i = nx - 1;
	}
done:
	if (out->error && !out->error[0])
		rc = oom(c);
	if (!out->error && rc == 0 && !out->ents)
		rc = oom(c);
	free(flag);
	fbc_strmap_dispose(&names);
	return rc;
}

int r_chain_get(r_ctx *c, int cat, const fbc_channel *ch, const r_chain **out)
{
	r_chain *ch_out = r_ptrmap_get(&c->chains, ch);
	int rc;

	if (!ch_out) {
		ch_out = fbc_arena_calloc(c->arena, 1, sizeof(*ch_out));
		if (!ch_out)
			return oom(c);
		if ((rc = chain_build(c, cat, ch, ch_out)) < 0)
			return rc;
		if (r_ptrmap_put(&c->chains, ch, ch_out) < 0)
			return oom(c);
	}
	*out = ch_out;
	return 0;
}

/* An entry that need not be on the chain (v1-deps: the bundle v1 picked). */
int r_entry_offchain(r_ctx *c, int cat, const fbc_channel *ch, const fbc_bundle *b, int *out)
{
	const r_chain *chain;
	r_entry t;
	size_t i;
	int rc;

	if ((rc = r_chain_get(c, cat, ch, &chain)) < 0)
		return rc;
	for (i = 0; i < chain->n; i++)
		if (R_ENT(c, chain->ents[i])->b == b) {
			*out = chain->ents[i];
			return 0;
		}
	for (i = 0; i < c->entries.len; i++) {
		const r_entry *e = R_ENT(c, i);
		if (e->cat == cat && e->ch == ch && e->b == b) {
			*out = (int)i;
			return 0;
		}
	}
	memset(&t, 0, sizeof(t));
	t.cat = cat;
	t.ch = ch;
	t.b = b;
	for (i = 0; i < ch->n_entries; i++)
		if (ch->entries[i].bundle == b)
			t.ce = &ch->entries[i];
	t.name = b->name;
	t.package = ch->package;
	t.channel = ch->name;
	t.version = b->version ? b->version : "";
	t.pos = SIZE_MAX;
	t.is_default = is_default_channel(ch);
	t.inst = -1;
	return entry_push(c, &t, out);
}

/* ------------------------------------------------------- candidate order */

struct sort_ctx {
	r_ctx *c;
	int own;
};

/* §2.6: @existing first; the depender's catalog; priority desc; name asc;
 * default channels of all packages first; package; channel; chain position. */
static int cmp_entries(const void *pa, const void *pb, void *arg)
{
	const struct sort_ctx *s = arg;
	const r_entry *a = R_ENT(s->c, *(const int *)pa), *b = R_ENT(s->c, *(const int *)pb);
	int r;

	if ((a->inst >= 0) != (b->inst >= 0))
		return a->inst >= 0 ? -1 : 1;
	if (a->inst >= 0)
		return a->inst - b->inst;
	if (a->cat != b->cat) {
		if (s->own >= 0 && (a->cat == s->own || b->cat == s->own))
			return a->cat == s->own ? -1 : 1;
		return s->c->cat_rank[a->cat] - s->c->cat_rank[b->cat];
	}
	if (a->is_default != b->is_default)
		return a->is_default ? -1 : 1;
	if ((r = strcmp(a->package, b->package)) != 0)
		return r;
	if ((r = strcmp(a->channel, b->channel)) != 0)
		return r;
	if (a->pos != b->pos)
		return a->pos < b->pos ? -1 : 1;
	return *(const int *)pa - *(const int *)pb;
}

void r_sort_entries(r_ctx *c, int *ents, size_t n, int own)
{
	struct sort_ctx s = {c, own};

	if (n > 1)
		qsort_r(ents, n, sizeof(int), cmp_entries, &s);
}

static bool gvk_matches(const fbc_bundle *b, const r_pred *p)
{
	for (size_t i = 0; b && i < b->n_provided; i++)
		if (strcmp(b->provided[i].kind, p->kind_name) == 0 &&
		    strcmp(b->provided[i].group, p->group) == 0 &&
		    strcmp(b->provided[i].version, p->version) == 0)
			return true;
	return false;
}

static int cands_push(fbc_vec *v, int e)
{
	int *p = fbc_vec_push(v);
	if (!p)
		return FBC_ENOMEM;
	*p = e;
	return 0;
}

/* All chain entries of one matching bundle (every channel listing it). */
static int add_bundle_entries(r_ctx *c, int cat, const fbc_bundle *b, fbc_vec *v)
{
	for (size_t i = 0; i < b->n_channels; i++) {
		const r_chain *chain;
		int rc;

		if ((rc = r_chain_get(c, cat, b->channels[i], &chain)) < 0)
			return rc;
		if (chain->error)
			return r_input_error(c, "%s", chain->error);
		for (size_t j = 0; j < chain->n; j++)
			if (R_ENT(c, chain->ents[j])->b == b && cands_push(v, chain->ents[j]) < 0)
				return oom(c);
	}
	return 0;
}

/* The ordered candidate list of a Dependency built from predicate p for a
 * depender in catalog own (-1 for installed/requests), §2.2 step 4. */
static int find_candidates(r_ctx *c, const r_pred *p, int own, const r_cands **out)
{
	char *key;
	r_cands *cs;
	fbc_vec v;
	size_t i, k;
	int rc = 0;

	key = fbc_arena_printf(c->arena, "%d\x1f%s", own, p->text);
	if (!key)
		return oom(c);
	cs = fbc_strmap_get(&c->cand_cache, key);
	if (cs) {
		*out = cs;
		return 0;
	}
	fbc_vec_init(&v, sizeof(int));
	for (i = 0; i < c->req->n_installed; i++) {
		bool ok;
		if ((rc = r_pred_test(c, p, R_ENT(c, c->inst_entry[i]), &ok)) < 0)
			goto done;
		if (ok && cands_push(&v, c->inst_entry[i]) < 0) {
			rc = oom(c);
			goto done;
		}
	}
	for (k = 0; k < c->req->n_catalogs; k++) {
		const fbc_catalog *cat = c->req->catalogs[k].catalog;
		fbc_bundle *const *bs;
		size_t n;

		if (p->kind == P_PACKAGE) {
			const fbc_package *pkg = fbc_catalog_package(cat, p->package);
			if (!pkg)
				continue;
			bs = pkg->bundles;
			n = pkg->n_bundles;
		} else if (p->kind == P_GVK && c->req->catalogs[k].index &&
			   r_index_catalog(c->req->catalogs[k].index) == cat) {
			const r_bundle_list *l;
			char *gk = r_gvk_key(c->arena, p->group, p->version, p->kind_name);

			if (!gk) {
				rc = oom(c);
				goto done;
			}
			l = r_index_gvk(c->req->catalogs[k].index, gk);
			if (!l)
				continue;
			bs = (fbc_bundle *const *)l->items;
			n = l->n;
		} else {
			bs = (fbc_bundle *const *)cat->bundles.items;
			n = cat->bundles.len;
		}
		for (i = 0; i < n; i++) {
			const fbc_bundle *b = bs[i];
			bool ok;

			if (!b->n_channels)
				continue;
			if (p->kind == P_GVK) {
				ok = gvk_matches(b, p);
			} else {
				r_entry t;

				memset(&t, 0, sizeof(t));
				t.cat = (int)k;
				t.b = b;
				t.name = b->name;
				t.package = b->package;
				t.version = b->version ? b->version : "";
				t.inst = -1;
				t.has_ver = *t.version &&
					    fbc_semver_parse_tolerant(&t.ver, t.version,
								      strlen(t.version), NULL) == 0;
				if ((rc = r_pred_test(c, p, &t, &ok)) < 0)
					goto done;
			}
			if (ok && (rc = add_bundle_entries(c, (int)k, b, &v)) < 0)
				goto done;
		}
	}
	r_sort_entries(c, v.items, v.len, own);
	cs = fbc_arena_calloc(c->arena, 1, sizeof(*cs));
	if (!cs) {
		rc = oom(c);
		goto done;
	}
	cs->n = v.len;
	cs->ents = fbc_arena_calloc(c->arena, v.len ? v.len : 1, sizeof(int));
	if (!cs->ents) {
		rc = oom(c);
		goto done;
	}
	if (v.len)
		memcpy(cs->ents, v.items, v.len * sizeof(int));
	if (fbc_strmap_put(&c->cand_cache, key, cs, NULL) < 0) {
		rc = oom(c);
		goto done;
	}
	*out = cs;
done:
	fbc_vec_dispose(&v);
	return rc;
}

/* ------------------------------------------------ variables, constraints */

int r_var_new(r_ctx *c, int kind, int idx, int *out)
{
	r_var *v;

	if (c->vars.len >= c->lim.max_variables)
		return fbc_error_set(c->err, FBC_ELIMIT, NULL,
				     "resolution needs more than %zu variables",
				     c->lim.max_variables);
	v = fbc_vec_push(&c->vars);
	if (!v)
		return oom(c);
	v->kind = kind;
	v->idx = idx;
	v->first = v->last = -1;
	v->reason = -1;
	*out = (int)(c->vars.len - 1);
	if (kind == V_ENTRY) {
		int *q = fbc_vec_push(&c->queue);
		if (!q)
			return oom(c);
		*q = *out;
	}
	return 0;
}

int r_var_for_entry(r_ctx *c, int ent, int *out)
{
	int rc, v;

	if (R_ENT(c, ent)->var >= 0) {
		*out = R_ENT(c, ent)->var;
		return 0;
	}
	if ((rc = r_var_new(c, V_ENTRY, ent, &v)) < 0)
		return rc;
	R_ENT(c, ent)->var = v;
	*out = v;
	return 0;
}

int r_con_add(r_ctx *c, int kind, int owner, const int *lits, size_t n, const char *msg,
	      const char *why, int *out)
{
	r_con *k = fbc_vec_push(&c->cons);
	int idx;

	if (!k || !msg)
		return oom(c);
	idx = (int)(c->cons.len - 1);
	k->kind = kind;
	k->owner = owner;
	k->n = n;
	k->msg = msg;
	k->why = why;
	k->next = -1;
	k->lits = fbc_arena_calloc(c->arena, n ? n : 1, sizeof(int));
	if (!k->lits)
		return oom(c);
	if (n)
		memcpy(k->lits, lits, n * sizeof(int));
	if (owner >= 0) {
		r_var *v = R_VAR(c, owner);
		if (v->last >= 0)
			R_CON(c, v->last)->next = idx;
		else
			v->first = idx;
		v->last = idx;
	}
	if (out)
		*out = idx;
	return 0;
}

static const char *var_name(r_ctx *c, int v)
{
	const r_var *x = R_VAR(c, v);

	if (x->kind == V_REQ)
		return c->req_label[x->idx];
	return R_ENT(c, x->idx)->id;
}

/* "A", "A and B", "A, B and C" (last_sep " and " / " or "). */
const char *r_join_ids(r_ctx *c, const int *vars, size_t n, const char *last_sep)
{
	fbc_buf b;
	const char *s;

	fbc_buf_init(&b, 1 << 20);
	for (size_t i = 0; i < n; i++) {
		if (i > 0)
			fbc_buf_puts(&b, i + 1 == n ? last_sep : ", ");
		fbc_buf_puts(&b, var_name(c, vars[i]));
	}
	s = fbc_arena_strdup(c->arena, b.data ? b.data : "");
	fbc_buf_dispose(&b);
	return s;
}

/* Expand one bundle variable: legacy deprecation and dependency properties. */
static int expand(r_ctx *c, int var)
{
	/* Copies, not pointers: finding candidates grows the entry and variable
	 * vectors, which moves them. */
	const r_entry ent = *R_ENT(c, R_VAR(c, var)->idx);
	const r_entry *e = &ent;
	int own = e->cat, rc = 0;
	fbc_vec lits;

	R_VAR(c, var)->expanded = true;
	if (!e->b)
		return 0;
	fbc_vec_init(&lits, sizeof(int));
	if (e->inst < 0 && r_bundle_has_property(e->b, "olm.deprecated")) {
		rc = r_con_add(c, C_PROHIBITED, var, NULL, 0,
			       fbc_arena_printf(c->arena, "bundle %s is deprecated", e->id), NULL,
			       NULL);
		if (rc < 0)
			goto done;
	}
	for (size_t i = 0; i < e->b->n_properties; i++) {
		const fbc_property *p = &e->b->properties[i];
		const r_cands *cs = NULL;
		r_pred *pred = NULL;
		const char *msg;

		if (!r_property_is_dependency(p->type))
			continue;
		if ((rc = r_pred_from_property(c, p, e->id, &pred)) < 0)
			goto done;
		if (!pred)
			continue;
		if ((rc = find_candidates(c, pred, own, &cs)) < 0)
			goto done;
		lits.len = 0;
		for (size_t j = 0; j < cs->n; j++) {
			int cv;
			if ((rc = r_var_for_entry(c, cs->ents[j], &cv)) < 0)
				goto done;
			/* The depender itself may be a candidate (it provides the API it
			 * requires): upstream keeps it, which makes the Dependency trivial. */
			if (cands_push(&lits, cv) < 0) {
				rc = oom(c);
				goto done;
			}
		}
		if (lits.len)
			msg = fbc_arena_printf(c->arena, "bundle %s requires an operator %s", e->id,
					       pred->text);
		else
			msg = fbc_arena_printf(c->arena,
					       "bundle %s requires an operator %s, but no bundle "
					       "in any catalog provides it",
					       e->id, pred->text);
		rc = r_con_add(c, C_DEPENDENCY, var, lits.items, lits.len, msg,
			       fbc_arena_printf(c->arena, "required by %s (an operator %s)", e->id,
						pred->text),
			       NULL);
		if (rc < 0)
			goto done;
	}
done:
	fbc_vec_dispose(&lits);
	return rc;
}

static int expand_all(r_ctx *c)
{
	int rc;

	for (size_t q = 0; q < c->queue.len; q++) {
		int var = *FBC_VEC_AT(&c->queue, int, q);
		if (!R_VAR(c, var)->expanded && (rc = expand(c, var)) < 0)
			return rc;
	}
	c->queue.len = 0;
	return 0;
}

typedef struct group {
	const char *key;
	fbc_vec vars;
} group;

static int cmp_groups(const void *a, const void *b)
{
	return strcmp((*(group *const *)a)->key, (*(group *const *)b)->key);
}

static int group_add(r_ctx *c, fbc_strmap *m, const char *key, int var)
{
	group *g = fbc_strmap_get(m, key);

	if (!g) {
		g = fbc_arena_calloc(c->arena, 1, sizeof(*g));
		if (!g)
			return oom(c);
		g->key = key;
		fbc_vec_init(&g->vars, sizeof(int));
		if (fbc_strmap_put(m, key, g, NULL) < 0)
			return oom(c);
	}
	if (g->vars.len && *FBC_VEC_AT(&g->vars, int, g->vars.len - 1) == var)
		return 0;
	return cands_push(&g->vars, var) < 0 ? oom(c) : 0;
}

static int emit_groups(r_ctx *c, fbc_strmap *m, bool gvk)
{
	group **gs = NULL;
	size_t n = 0, it = 0;
	const char *k;
	void *val;
	int rc = 0;

	gs = calloc(m->count ? m->count : 1, sizeof(*gs));
	if (!gs)
		return oom(c);
	while (fbc_strmap_next(m, &it, &k, &val))
		gs[n++] = val;
	qsort(gs, n, sizeof(*gs), cmp_groups);
	for (size_t i = 0; i < n; i++) {
		group *g = gs[i];
		const char *ids, *msg;

		bool span = !gvk;

		/* A GVK group within one package is implied by the package group. */
		for (size_t j = 1; gvk && j < g->vars.len && !span; j++)
			span = strcmp(R_ENT(c, R_VAR(c, *FBC_VEC_AT(&g->vars, int, j))->idx)
					      ->package,
				      R_ENT(c, R_VAR(c, *FBC_VEC_AT(&g->vars, int, 0))->idx)
					      ->package) != 0;
		if (g->vars.len >= 2 && span && rc == 0) {
			ids = r_join_ids(c, g->vars.items, g->vars.len, " and ");
			if (gvk)
				msg = fbc_arena_printf(c->arena,
						       "%s provide %s (only one provider "
						       "of an API may be installed)",
						       ids, g->key);
			else
				msg = fbc_arena_printf(c->arena,
						       "%s originate from package %s (only one "
						       "bundle of a package may be installed)",
						       ids, g->key);
			rc = r_con_add(c, C_ATMOST, -1, g->vars.items, g->vars.len, msg, NULL,
				       NULL);
		}
		fbc_vec_dispose(&g->vars);
	}
	free(gs);
	return rc;
}

/* §2.2 step 5: one bundle per package, one provider per GVK. */
static int add_invariants(r_ctx *c)
{
	fbc_strmap pk, gv;
	int rc = 0;

	fbc_strmap_init(&pk);
	fbc_strmap_init(&gv);
	for (size_t i = 0; i < c->vars.len && rc == 0; i++) {
		const r_var *v = R_VAR(c, i);
		const r_entry *e;

		if (v->kind != V_ENTRY)
			continue;
		e = R_ENT(c, v->idx);
		if ((rc = group_add(c, &pk, e->package, (int)i)) < 0)
			break;
		for (size_t j = 0; e->b && j < e->b->n_provided; j++) {
			const fbc_gvk *g = &e->b->provided[j];
			const char *key = fbc_arena_printf(c->arena, "%s (%s/%s)", g->kind,
							   g->group, g->version);
			if (!key) {
				rc = oom(c);
				break;
			}
			if ((rc = group_add(c, &gv, key, (int)i)) < 0)
				break;
		}
	}
	if (rc == 0)
		rc = emit_groups(c, &pk, false);
	else
		emit_groups(c, &pk, false);
	if (rc == 0)
		rc = emit_groups(c, &gv, true);
	else
		emit_groups(c, &gv, true);
	fbc_strmap_dispose(&pk);
	fbc_strmap_dispose(&gv);
	return rc;
}

/* ---------------------------------------------------------- SAT encoding */

static c_Lit lit(unsigned var, bool neg)
{
	c_Lit l;
	l.x = (var << 1) | (neg ? 1u : 0u);
	return l;
}

static unsigned new_sat_var(r_ctx *c)
{
	cmsat_new_vars(c->sat, 1);
	return c->n_sat_vars++;
}

static int add_clause(r_ctx *c, const c_Lit *ls, size_t n)
{
	cmsat_add_clause(c->sat, ls, n); /* false only when trivially UNSAT: fine */
	return 0;
}

static int encode(r_ctx *c)
{
	fbc_vec cl;
	int rc = 0;

	c->sat = cmsat_new();
	if (!c->sat)
		return oom(c);
	cmsat_set_num_threads(c->sat, 1);
	cmsat_set_verbosity(c->sat, 0);
	/* Small incremental problems: startup simplification costs more than it saves. */
	cmsat_set_no_simplify_at_startup(c->sat);
	cmsat_set_no_bva(c->sat);
	/* Bound hostile inputs; an undecided call aborts the resolution below. */
	cmsat_set_max_time(c->sat, R_SAT_MAX_SECONDS);
	c->n_sat_vars = (unsigned)c->vars.len;
	cmsat_new_vars(c->sat, c->vars.len);
	fbc_vec_init(&cl, sizeof(c_Lit));
	for (size_t i = 0; i < c->cons.len; i++) {
		r_con *k = R_CON(c, i);
		c_Lit *p;

		k->sel = new_sat_var(c);
		cl.len = 0;
#define PUSH(L)                                 \
	do {                                    \
		if (!(p = fbc_vec_push(&cl))) { \
			rc = oom(c);            \
			goto done;              \
		}                               \
		*p = (L);                       \
	} while (0)
		PUSH(lit(k->sel, true));
		switch (k->kind) {
		case C_MANDATORY:
			PUSH(lit((unsigned)k->owner, false));
			break;
		case C_PROHIBITED:
			PUSH(lit((unsigned)k->owner, true));
			break;
		case C_DEPENDENCY:
			PUSH(lit((unsigned)k->owner, true));
			for (size_t j = 0; j < k->n; j++)
				PUSH(lit((unsigned)k->lits[j], false));
			break;
		case C_CONFLICT:
			PUSH(lit((unsigned)k->owner, true));
			PUSH(lit((unsigned)k->lits[0], true));
			break;
		case C_ATMOST:
			if (k->n <= 6) {
				for (size_t a = 0; a < k->n; a++)
					for (size_t b = a + 1; b < k->n; b++) {
						c_Lit t[3] = {lit(k->sel, true),
							      lit((unsigned)k->lits[a], true),
							      lit((unsigned)k->lits[b], true)};
						add_clause(c, t, 3);
					}
			} else {
				/* Sequential counter: r_j = "one of y_1..y_j is true". */
				unsigned prev = 0;
				for (size_t a = 0; a < k->n; a++) {
					unsigned y = (unsigned)k->lits[a];
					unsigned r = new_sat_var(c);
					c_Lit t1[3] = {lit(k->sel, true), lit(y, true),
						       lit(r, false)};
					add_clause(c, t1, 3);
					if (a > 0) {
						c_Lit t2[3] = {lit(k->sel, true), lit(prev, true),
							       lit(r, false)};
						c_Lit t3[3] = {lit(k->sel, true), lit(prev, true),
							       lit(y, true)};
						add_clause(c, t2, 3);
						add_clause(c, t3, 3);
					}
					prev = r;
				}
			}
			continue;
		}
#undef PUSH
		add_clause(c, cl.items, cl.len);
	}
	c->model = calloc(c->vars.len ? c->vars.len : 1, sizeof(bool));
	if (!c->model)
		rc = oom(c);
done:
	fbc_vec_dispose(&cl);
	return rc;
}

/* Solve under assumptions; on SAT keep the model of the problem variables. */
static bool solve(r_ctx *c, const c_Lit *as, size_t n)
{
	c_lbool r = cmsat_solve_with_assumptions(c->sat, as, n);

	c->sat_calls++;
	if (r.x == L_UNDEF)
		c->sat_gave_up = true;
	if (r.x != L_TRUE)
		return false;
	slice_lbool m = cmsat_get_model(c->sat);
	for (size_t i = 0; i < c->vars.len && i < m.num_vals; i++)
		c->model[i] = m.vals[i].x == L_TRUE;
	return true;
}

/* ------------------------------------------------------------ explanation */

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static int explain(r_ctx *c, const c_Lit *base, size_t n_base)
{
	unsigned n_sel_base = (unsigned)c->vars.len;
	int *con_of_sel = NULL; /* selector var - vars.len -> constraint (or -1 for aux) */
	c_Lit *core = NULL, *trial = NULL;
	size_t n_core = 0, i, j, n_msgs = 0;
	const char **msgs = NULL;
	fbc_buf b;
	int rc = 0;

	(void)n_base;
	fbc_buf_init(&b, 1 << 20);
	con_of_sel = malloc((c->n_sat_vars - n_sel_base + 1) * sizeof(int));
	core = malloc((c->cons.len + 1) * sizeof(c_Lit));
	trial = malloc((c->cons.len + 1) * sizeof(c_Lit));
	if (!con_of_sel || !core || !trial) {
		rc = oom(c);
		goto done;
	}
	for (i = 0; i < c->n_sat_vars - n_sel_base; i++)
		con_of_sel[i] = -1;
	for (i = 0; i < c->cons.len; i++)
		con_of_sel[R_CON(c, i)->sel - n_sel_base] = (int)i;
	{
		slice_Lit cf = cmsat_get_conflict(c->sat);
		for (i = 0; i < cf.num_vals; i++) {
			unsigned v = cf.vals[i].x >> 1;
			if (v >= n_sel_base && con_of_sel[v - n_sel_base] >= 0)
				core[n_core++] = lit(v, false);
		}
	}
	if (n_core == 0) { /* CMS found it without assumptions: report everything */
		for (i = 0; i < c->cons.len; i++)
			core[n_core++] = base[i];
	}
	/* Deletion-based shrinking: a smaller core names fewer innocent constraints. */
	for (i = 0; i < n_core && c->sat_calls < 100000 && n_core <= 256;) {
		size_t n_trial = 0;
		for (j = 0; j < n_core; j++)
			if (j != i)
				trial[n_trial++] = core[j];
		if (!solve(c, trial, n_trial)) {
			slice_Lit cf = cmsat_get_conflict(c->sat);
			size_t k2 = 0;
			/* keep the order of trial, restricted to the new conflict */
			for (j = 0; j < n_trial; j++) {
				bool in = false;
				for (size_t q = 0; q < cf.num_vals; q++)
					if ((cf.vals[q].x >> 1) == (trial[j].x >> 1))
						in = true;
				if (in || cf.num_vals == 0)
					core[k2++] = trial[j];
			}
			n_core = k2;
			if (i > n_core)
				i = n_core;
		} else {
			i++;
		}
	}
	msgs = calloc(n_core ? n_core : 1, sizeof(*msgs));
	if (!msgs) {
		rc = oom(c);
		goto done;
	}
	for (i = 0; i < n_core; i++) {
		int k = con_of_sel[(core[i].x >> 1) - n_sel_base];
		if (k >= 0)
			msgs[n_msgs++] = R_CON(c, k)->msg;
	}
	qsort(msgs, n_msgs, sizeof(*msgs), cmp_str);
	/* Lead with what is blocked: the requests and pinned installs in the core. */
	{
		size_t n_named = 0;
		for (i = 0; i < n_core; i++) {
			const r_con *k = R_CON(c, con_of_sel[(core[i].x >> 1) - n_sel_base]);
			if (k->kind == C_MANDATORY) {
				const r_var *ov = R_VAR(c, k->owner);
				if (ov->kind == V_ENTRY)
					fbc_buf_printf(&b,
						       "%sthe installed bundle %s of package %s "
						       "(kept: no request refers to it)",
						       n_named ? " and " : "",
						       R_ENT(c, ov->idx)->name,
						       R_ENT(c, ov->idx)->package);
				else
					fbc_buf_printf(&b, "%sthe %s", n_named ? " and " : "",
						       var_name(c, k->owner));
				n_named++;
			}
		}
		if (n_named)
			fbc_buf_puts(&b, n_named > 1 ? " cannot be satisfied together"
						     : " cannot be satisfied");
		else
			fbc_buf_puts(&b, "the request cannot be satisfied");
		fbc_buf_puts(&b, ": constraints not satisfiable: ");
		for (i = 0; i < n_msgs; i++)
			fbc_buf_printf(&b, "%s%s", i ? "; " : "", msgs[i]);
	}
	c->res->satisfiable = false;
	c->res->kind = "conflict";
	c->res->explanation = fbc_arena_strdup(c->arena, b.data ? b.data : "");
	c->res->constraints = fbc_arena_calloc(c->arena, n_msgs ? n_msgs : 1, sizeof(char *));
	if (!c->res->explanation || !c->res->constraints) {
		rc = oom(c);
		goto done;
	}
	for (i = 0; i < n_msgs; i++)
		c->res->constraints[i] = msgs[i];
	c->res->n_constraints = n_msgs;
done:
	fbc_buf_dispose(&b);
	free(con_of_sel);
	free(core);
	free(trial);
	free(msgs);
	return rc;
}

/* ----------------------------------------------------------------- search */

typedef struct choice {
	const int *cands;
	size_t n;
	int con; /* the Dependency it comes from, -1 for an anchor */
} choice;

static int push_choices(r_ctx *c, fbc_vec *q, int var)
{
	for (int k = R_VAR(c, var)->first; k >= 0; k = R_CON(c, k)->next) {
		const r_con *con = R_CON(c, k);
		choice *ch;

		if (con->kind != C_DEPENDENCY)
			continue;
		if (!(ch = fbc_vec_push(q)))
			return oom(c);
		ch->cands = con->lits;
		ch->n = con->n;
		ch->con = k;
	}
	return 0;
}

/* The selection closure in dependency order (post-order DFS). */
static int order_steps(r_ctx *c, int var, unsigned char *seen, fbc_vec *out)
{
	if (seen[var])
		return 0;
	seen[var] = 1;
	for (int k = R_VAR(c, var)->first; k >= 0; k = R_CON(c, k)->next) {
		const r_con *con = R_CON(c, k);
		if (con->kind != C_DEPENDENCY)
			continue;
		for (size_t j = 0; j < con->n; j++)
			if (R_VAR(c, con->lits[j])->selected) {
				int rc = order_steps(c, con->lits[j], seen, out);
				if (rc < 0)
					return rc;
				break;
			}
	}
	if (R_VAR(c, var)->kind == V_ENTRY && cands_push(out, var) < 0)
		return oom(c);
	return 0;
}

static int build_result(r_ctx *c)
{
	fbc_resolve_result *res = c->res;
	unsigned char *seen = calloc(c->vars.len ? c->vars.len : 1, 1);
	fbc_vec order;
	size_t i, n_sel = 0;
	int rc = 0;

	fbc_vec_init(&order, sizeof(int));
	if (!seen) {
		rc = oom(c);
		goto done;
	}
	for (i = 0; i < c->anchors.len && rc == 0; i++)
		rc = order_steps(c, *FBC_VEC_AT(&c->anchors, int, i), seen, &order);
	for (i = 0; i < c->vars.len && rc == 0; i++)
		if (R_VAR(c, i)->selected)
			rc = order_steps(c, (int)i, seen, &order);
	if (rc < 0)
		goto done;
	res->selected = fbc_arena_calloc(c->arena, order.len + 1, sizeof(*res->selected));
	res->steps = fbc_arena_calloc(c->arena, order.len + 1, sizeof(*res->steps));
	if (!res->selected || !res->steps) {
		rc = oom(c);
		goto done;
	}
	/* Installed bundles that stay first (input order), then new ones in step order. */
	for (int pass = 0; pass < 2; pass++)
		for (i = 0; i < order.len; i++) {
			const r_entry *e = R_ENT(c, R_VAR(c, *FBC_VEC_AT(&order, int, i))->idx);
			fbc_resolve_selected *s;

			if ((pass == 0) != (e->inst >= 0))
				continue;
			s = &res->selected[n_sel++];
			s->bundle = e->name;
			s->package = e->package;
			s->version = e->version;
			s->catalog = e->inst >= 0 ? "@existing" : c->req->catalogs[e->cat].name;
			s->channel = e->inst >= 0 ? "" : e->channel;
			s->installed = e->inst >= 0;
		}
	res->n_selected = n_sel;
	for (i = 0; i < order.len; i++) {
		int var = *FBC_VEC_AT(&order, int, i);
		const r_var *v = R_VAR(c, var);
		const r_entry *e = R_ENT(c, v->idx);
		fbc_resolve_step *s;

		if (e->inst >= 0)
			continue;
		s = &res->steps[res->n_steps++];
		s->bundle = e->name;
		s->package = e->package;
		s->version = e->version;
		s->catalog = c->req->catalogs[e->cat].name;
		s->channel = e->channel;
		s->reason = v->reason >= 0 ? R_CON(c, v->reason)->why : "selected";
		for (size_t k = 0; k < c->req->n_installed; k++)
			if (strcmp(c->req->installed[k].package, e->package) == 0 &&
			    !R_VAR(c, R_ENT(c, c->inst_entry[k])->var)->selected)
				s->replaces = c->req->installed[k].bundle;
	}
	res->satisfiable = true;
done:
	fbc_vec_dispose(&order);
	free(seen);
	return rc;
}

/* Expand, add invariants, encode, check the baseline, then the greedy
 * search of §2.5 (normative form) and the result. */
int r_classic_finish(r_ctx *c)
{
	fbc_vec as, q;
	size_t n_base, head;
	int rc;

	fbc_vec_init(&as, sizeof(c_Lit));
	fbc_vec_init(&q, sizeof(choice));
	if ((rc = expand_all(c)) < 0 || (rc = add_invariants(c)) < 0 || (rc = encode(c)) < 0)
		goto done;
	for (size_t i = 0; i < c->cons.len; i++) {
		c_Lit *l = fbc_vec_push(&as);
		if (!l) {
			rc = oom(c);
			goto done;
		}
		*l = lit(R_CON(c, i)->sel, false);
	}
	n_base = as.len;
	c->res->n_variables = c->vars.len;
	c->res->n_clauses_constraints = c->cons.len;
	if (!solve(c, as.items, as.len)) {
		rc = c->sat_gave_up ? 0 : explain(c, as.items, n_base);
		goto done;
	}
	for (size_t i = 0; i < c->anchors.len; i++) {
		choice *ch = fbc_vec_push(&q);
		if (!ch) {
			rc = oom(c);
			goto done;
		}
		ch->cands = FBC_VEC_AT(&c->anchors, int, i);
		ch->n = 1;
		ch->con = -1;
	}
	for (head = 0; head < q.len; head++) {
		choice ch = *FBC_VEC_AT(&q, choice, head);
		bool done_choice = false;

		for (size_t j = 0; j < ch.n; j++)
			if (R_VAR(c, ch.cands[j])->selected)
				done_choice = true;
		for (size_t j = 0; j < ch.n && !done_choice; j++) {
			int cand = ch.cands[j];
			c_Lit *l;
			bool ok;

			/* The last model satisfies baseline + selections; if it already has
			 * cand true, that is the SAT check. */
			ok = c->model[cand];
			if (!ok) {
				if (!(l = fbc_vec_push(&as))) {
					rc = oom(c);
					goto done;
				}
				*l = lit((unsigned)cand, false);
				ok = solve(c, as.items, as.len);
				as.len--;
			}
			if (!ok)
				continue;
			if (!(l = fbc_vec_push(&as))) {
				rc = oom(c);
				goto done;
			}
			*l = lit((unsigned)cand, false);
			R_VAR(c, cand)->selected = true;
			R_VAR(c, cand)->reason = ch.con;
			if ((rc = push_choices(c, &q, cand)) < 0)
				goto done;
			done_choice = true;
		}
	}
	rc = build_result(c);
done:
	if (rc == 0 && c->sat_gave_up)
		rc = r_input_error(c,
				   "the SAT solver gave up (more than %g s for one check); the "
				   "request is too hard to decide",
				   (double)R_SAT_MAX_SECONDS);
	fbc_vec_dispose(&as);
	fbc_vec_dispose(&q);
	return rc;
}

/* ------------------------------------------------------------- entry point */

static int cmp_rank(const void *pa, const void *pb, void *arg)
{
	const fbc_resolve_request *req = arg;
	const fbc_resolve_catalog *a = &req->catalogs[*(const int *)pa];
	const fbc_resolve_catalog *b = &req->catalogs[*(const int *)pb];

	if (a->priority != b->priority)
		return a->priority > b->priority ? -1 : 1;
	return strcmp(a->name, b->name);
}

/* Installed bundles are candidates of their own (@existing); their
 * properties come from the same-named bundle of a catalog (spec §7.6). */
static int add_installed(r_ctx *c)
{
	const fbc_resolve_request *req = c->req;
	int *order = calloc(req->n_catalogs + 1, sizeof(int));
	int rc = 0;

	if (!order)
		return oom(c);
	for (size_t k = 0; k < req->n_catalogs; k++)
		order[c->cat_rank[k]] = (int)k;
	for (size_t i = 0; i < req->n_installed && rc == 0; i++) {
		const fbc_resolve_installed *in = &req->installed[i];
		r_entry t;

		for (size_t j = 0; j < i; j++)
			if (strcmp(req->installed[j].package, in->package) == 0) {
				rc = r_input_error(
					c,
					"installed bundles %s and %s are both of package "
					"%s; at most one bundle per package can be "
					"installed",
					req->installed[j].bundle, in->bundle, in->package);
				goto done;
			}
		memset(&t, 0, sizeof(t));
		t.cat = -1;
		t.inst = (int)i;
		t.name = in->bundle;
		t.package = in->package;
		t.channel = "";
		t.version = in->version;
		t.pos = 0;
		for (size_t k = 0; k < req->n_catalogs && !t.b; k++) {
			const fbc_package *p =
				fbc_catalog_package(req->catalogs[order[k]].catalog, in->package);
			if (p)
				t.b = fbc_package_bundle(p, in->bundle);
		}
		rc = entry_push(c, &t, &c->inst_entry[i]);
		if (rc == 0 && !R_ENT(c, c->inst_entry[i])->has_ver)
			rc = r_input_error(c, "installed bundle %s has an invalid version \"%s\"",
					   in->bundle, in->version);
	}
done:
	free(order);
	return rc;
}

int r_parse_installed_version(r_ctx *c, int inst, fbc_semver *ver, const char **release,
			      bool strict)
{
	const char *v = c->req->installed[inst].version;
	int rc;

	*release = "";
	rc = strict ? fbc_semver_parse(ver, v, strlen(v), NULL)
		    : fbc_semver_parse_tolerant(ver, v, strlen(v), NULL);
	if (rc < 0)
		return r_input_error(c, "installed bundle %s has an invalid version \"%s\"",
				     c->req->installed[inst].bundle, v);
	if (ver->build && fbc_release_validate(ver->build, ver->build_len, NULL) == 0) {
		char *r = fbc_arena_strndup(c->arena, ver->build, ver->build_len);
		if (!r)
			return oom(c);
		*release = r;
		ver->build = NULL;
		ver->build_len = 0;
	}
	return 0;
}

static void ctx_dispose(r_ctx *c)
{
	if (c->sat)
		cmsat_free(c->sat);
	free(c->model);
	free(c->cat_rank);
	free(c->inst_entry);
	free(c->inst_req);
	free(c->req_current);
	free(c->req_label);
	fbc_vec_dispose(&c->entries);
	fbc_vec_dispose(&c->vars);
	fbc_vec_dispose(&c->cons);
	fbc_vec_dispose(&c->queue);
	fbc_vec_dispose(&c->anchors);
	fbc_strmap_dispose(&c->cand_cache);
	r_ptrmap_dispose(&c->chains);
	for (size_t i = 0; i < c->cel_props.cap; i++)
		if (c->cel_props.keys && c->cel_props.keys[i])
			json_decref(c->cel_props.vals[i]);
	r_ptrmap_dispose(&c->cel_props);
}

void fbc_resolve_result_free(fbc_resolve_result *res)
{
	if (!res)
		return;
	if (res->priv) {
		fbc_arena_free(res->priv->arena);
		free(res->priv);
	}
	free(res);
}

int fbc_resolve(fbc_resolve_result **out, const fbc_resolve_request *req,
		const fbc_resolve_limits *lim, fbc_error *err)
{
	fbc_resolve_result *res = NULL;
	r_ctx ctx;
	int *idx = NULL;
	int rc;

	memset(&ctx, 0, sizeof(ctx));
	fbc_vec_init(&ctx.entries, sizeof(r_entry));
	fbc_vec_init(&ctx.vars, sizeof(r_var));
	fbc_vec_init(&ctx.cons, sizeof(r_con));
	fbc_vec_init(&ctx.queue, sizeof(int));
	fbc_vec_init(&ctx.anchors, sizeof(int));
	fbc_strmap_init(&ctx.cand_cache);
	ctx.req = req;
	ctx.err = err;
	if (lim)
		ctx.lim = *lim;
	else
		fbc_resolve_limits_default(&ctx.lim);

	res = calloc(1, sizeof(*res));
	if (!res || !(res->priv = calloc(1, sizeof(*res->priv))) ||
	    fbc_arena_create(&res->priv->arena, 0) < 0) {
		rc = fbc_error_set(err, FBC_ENOMEM, NULL, "out of memory");
		goto done;
	}
	ctx.res = res;
	ctx.arena = res->priv->arena;
	for (size_t k = 0; k < req->n_catalogs; k++)
		if (!req->catalogs[k].catalog) {
			rc = fbc_error_set(err, FBC_EINVAL, req->catalogs[k].name,
					   "catalog \"%s\" was not loaded", req->catalogs[k].name);
			goto done;
		}
	ctx.cat_rank = calloc(req->n_catalogs + 1, sizeof(int));
	idx = calloc(req->n_catalogs + 1, sizeof(int));
	ctx.inst_entry = calloc(req->n_installed + 1, sizeof(int));
	ctx.inst_req = calloc(req->n_installed + 1, sizeof(int));
	ctx.req_current = calloc(req->n_requests + 1, sizeof(int));
	ctx.req_label = calloc(req->n_requests + 1, sizeof(char *));
	if (!ctx.cat_rank || !idx || !ctx.inst_entry || !ctx.inst_req || !ctx.req_current ||
	    !ctx.req_label) {
		rc = fbc_error_set(err, FBC_ENOMEM, NULL, "out of memory");
		goto done;
	}
	for (size_t k = 0; k < req->n_catalogs; k++)
		idx[k] = (int)k;
	qsort_r(idx, req->n_catalogs, sizeof(int), cmp_rank, (void *)req);
	for (size_t k = 0; k < req->n_catalogs; k++)
		ctx.cat_rank[idx[k]] = (int)k;
	for (size_t i = 0; i < req->n_installed; i++)
		ctx.inst_req[i] = -1;

	rc = add_installed(&ctx);
	if (rc == 0) {
		if (req->semantics == FBC_RESOLVE_CLASSIC)
			rc = r_classic_requests(&ctx);
		else
			rc = r_v1_resolve(&ctx, req->semantics == FBC_RESOLVE_V1_DEPS);
	}
	if (rc < 0 && ctx.input_error) {
		res->satisfiable = false;
		res->kind = ctx.fail_kind ? ctx.fail_kind : "error";
		res->explanation = ctx.input_error;
		res->constraints = fbc_arena_calloc(ctx.arena, 1, sizeof(char *));
		if (!res->constraints) {
			rc = fbc_error_set(err, FBC_ENOMEM, NULL, "out of memory");
			goto done;
		}
		res->constraints[0] = ctx.input_error;
		res->n_constraints = 1;
		rc = 0;
	}
	if (rc < 0)
		goto done;
	res->sat_calls = ctx.sat_calls;
	*out = res;
	res = NULL;
done:
	free(idx);
	ctx_dispose(&ctx);
	fbc_resolve_result_free(res);
	return rc;
}
