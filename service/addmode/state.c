/*
 * The index state: packages, store records, channel rows (index-add.md §1),
 * their copies, version order and the inputs' recording.
 */
#include "service/addmode/internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

int am_fail(fbc_error *err, int code, const char *rule, const char *pkg, const char *bundle,
	    const char *fmt, ...)
{
	char msg[FBC_ERROR_MESSAGE_MAX];
	char where[FBC_ERROR_WHERE_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	snprintf(where, sizeof(where), "%s/%s", pkg ? pkg : "", bundle ? bundle : "");
	return fbc_error_set(err, code, where, "%s: %s", rule, msg);
}

void fbc_addmode_error_rule(const fbc_error *err, char out[8])
{
	size_t i = 0;

	out[0] = '\0';
	if (!err || err->message[0] != 'A')
		return;
	out[i] = 'A';
	for (i = 1; i < 7 && err->message[i] >= '0' && err->message[i] <= '9'; i++)
		out[i] = err->message[i];
	if (i == 1 || err->message[i] != ':') {
		out[0] = '\0';
		return;
	}
	out[i] = '\0';
}

void am_format_list(char *buf, size_t size, const char *const *v, size_t n)
{
	size_t i, len = 0;

	if (size == 0)
		return;
	buf[0] = '\0';
	len += (size_t)snprintf(buf + len, size - len, "[");
	for (i = 0; i < n && len < size; i++)
		len += (size_t)snprintf(buf + len, size - len, "%s%s", i ? " " : "", v[i]);
	if (len < size)
		snprintf(buf + len, size - len, "]");
}

int fbc_addmode_mode_parse(fbc_addmode_mode *out, const char *s, fbc_error *err)
{
	if (s && strcasecmp(s, "replaces") == 0)
		*out = FBC_ADDMODE_REPLACES;
	else if (s && strcasecmp(s, "semver") == 0)
		*out = FBC_ADDMODE_SEMVER;
	else if (s && strcasecmp(s, "semver-skippatch") == 0)
		*out = FBC_ADDMODE_SEMVER_SKIPPATCH;
	else
		return fbc_error_set(err, FBC_EINVAL, "mode",
				     "A1: Invalid channel update mode %s specified", s ? s : "");
	return 0;
}

const char *fbc_addmode_mode_name(fbc_addmode_mode m)
{
	switch (m) {
	case FBC_ADDMODE_SEMVER:
		return "semver";
	case FBC_ADDMODE_SEMVER_SKIPPATCH:
		return "semver-skippatch";
	default:
		return "replaces";
	}
}

/* ---- version order ---- */

static bool all_digits(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
	}
	return n > 0;
}

/* Compare two dot-separated identifier lists with pre-release rules. */
static int compare_idents(const char *a, size_t an, const char *b, size_t bn)
{
	size_t i = 0, j = 0;

	for (;;) {
		size_t ie = i, je = j;
		bool da, db;
		int c;

		if (i >= an && j >= bn)
			return 0;
		if (i >= an)
			return -1;
		if (j >= bn)
			return 1;
		while (ie < an && a[ie] != '.')
			ie++;
		while (je < bn && b[je] != '.')
			je++;
		da = all_digits(a + i, ie - i);
		db = all_digits(b + j, je - j);
		if (da && db) {
			size_t la = ie - i, lb = je - j;

			while (la > 1 && a[i] == '0') {
				i++;
				la--;
			}
			while (lb > 1 && b[j] == '0') {
				j++;
				lb--;
			}
			if (la != lb)
				return la < lb ? -1 : 1;
			c = memcmp(a + i, b + j, la);
		} else if (da != db) {
			return da ? -1 : 1;
		} else {
			size_t la = ie - i, lb = je - j;

			c = memcmp(a + i, b + j, la < lb ? la : lb);
			if (c == 0 && la != lb)
				c = la < lb ? -1 : 1;
		}
		if (c != 0)
			return c < 0 ? -1 : 1;
		i = ie + (ie < an);
		j = je + (je < bn);
		if ((ie < an) != (je < bn))
			return ie < an ? 1 : -1;
	}
}

static const fbc_semver *missing_version(void)
{
	static const fbc_semver z = {0, 0, 0, "z", 1, NULL, 0};

	return &z;
}

int am_version_precedence(const am_rec *a, const am_rec *b)
{
	const fbc_semver *va = a->has_sv ? &a->sv : missing_version();
	const fbc_semver *vb = b->has_sv ? &b->sv : missing_version();

	return fbc_semver_compare(va, vb);
}

int am_version_order(const am_rec *a, const am_rec *b)
{
	const fbc_semver *va = a->has_sv ? &a->sv : missing_version();
	const fbc_semver *vb = b->has_sv ? &b->sv : missing_version();
	int c = fbc_semver_compare(va, vb);

	if (c != 0)
		return c;
	if (!va->build && !vb->build)
		return 0;
	if (!va->build)
		return -1;
	if (!vb->build)
		return 1;
	return compare_idents(va->build, va->build_len, vb->build, vb->build_len);
}

/* ---- containers ---- */

am_channel *am_channel_new(const char *name)
{
	am_channel *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->name = name;
	fbc_vec_init(&c->members, sizeof(am_member *));
	fbc_strmap_init(&c->index);
	return c;
}

void am_channel_free(am_channel *c)
{
	size_t i;

	if (!c)
		return;
	for (i = 0; i < c->members.len; i++) {
		am_member *m = *FBC_VEC_AT(&c->members, am_member *, i);

		fbc_vec_dispose(&m->skips);
		free(m);
	}
	fbc_vec_dispose(&c->members);
	fbc_strmap_dispose(&c->index);
	free(c);
}

am_member *am_channel_member(const am_channel *c, const char *name)
{
	return fbc_strmap_get(&c->index, name);
}

am_member *am_channel_ensure(am_channel *c, const char *name)
{
	am_member *m = fbc_strmap_get(&c->index, name), **slot;

	if (m)
		return m;
	m = calloc(1, sizeof(*m));
	if (!m)
		return NULL;
	m->name = name;
	fbc_vec_init(&m->skips, sizeof(const char *));
	slot = fbc_vec_push(&c->members);
	if (!slot) {
		free(m);
		return NULL;
	}
	*slot = m;
	if (fbc_strmap_put(&c->index, name, m, NULL) != 0) {
		c->members.len--;
		free(m);
		return NULL;
	}
	return m;
}

int am_member_add_skip(am_member *m, const char *name)
{
	const char **slot;
	size_t i;

	for (i = 0; i < m->skips.len; i++) {
		if (strcmp(*FBC_VEC_AT(&m->skips, const char *, i), name) == 0)
			return 0;
	}
	slot = fbc_vec_push(&m->skips);
	if (!slot)
		return FBC_ENOMEM;
	*slot = name;
	return 0;
}

static am_channel *channel_clone(const am_channel *src)
{
	am_channel *c = am_channel_new(src->name);
	size_t i, j;

	if (!c)
		return NULL;
	c->head = src->head;
	for (i = 0; i < src->members.len; i++) {
		const am_member *sm = *FBC_VEC_AT(&src->members, am_member *, i);
		am_member *m = am_channel_ensure(c, sm->name);

		if (!m)
			goto fail;
		m->next = sm->next;
		for (j = 0; j < sm->skips.len; j++) {
			if (am_member_add_skip(m, *FBC_VEC_AT(&sm->skips, const char *, j)) != 0)
				goto fail;
		}
	}
	return c;
fail:
	am_channel_free(c);
	return NULL;
}

am_pkg *am_pkg_new(fbc_arena *a, const char *name)
{
	am_pkg *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->name = fbc_arena_strdup(a, name);
	if (!p->name) {
		free(p);
		return NULL;
	}
	fbc_vec_init(&p->recs, sizeof(am_rec *));
	fbc_strmap_init(&p->rec_index);
	fbc_vec_init(&p->channels, sizeof(am_channel *));
	return p;
}

void am_pkg_free(am_pkg *p)
{
	size_t i;

	if (!p)
		return;
	for (i = 0; i < p->channels.len; i++)
		am_channel_free(*FBC_VEC_AT(&p->channels, am_channel *, i));
	fbc_vec_dispose(&p->channels);
	fbc_vec_dispose(&p->recs);
	fbc_strmap_dispose(&p->rec_index);
	free(p);
}

am_rec *am_pkg_rec(const am_pkg *p, const char *name)
{
	return fbc_strmap_get(&p->rec_index, name);
}

int am_pkg_put_rec(am_pkg *p, am_rec *r)
{
	am_rec **slot;

	if (p->recs.len >= FBC_ADDMODE_PACKAGE_MAX)
		return FBC_ELIMIT;
	slot = fbc_vec_push(&p->recs);
	if (!slot)
		return FBC_ENOMEM;
	*slot = r;
	if (fbc_strmap_put(&p->rec_index, r->name, r, NULL) != 0) {
		p->recs.len--;
		return FBC_ENOMEM;
	}
	return 0;
}

void am_pkg_remove_rec(am_pkg *p, const char *name)
{
	size_t i, j = 0;
	fbc_strmap fresh;

	fbc_strmap_init(&fresh);
	for (i = 0; i < p->recs.len; i++) {
		am_rec *r = *FBC_VEC_AT(&p->recs, am_rec *, i);

		if (strcmp(r->name, name) != 0)
			*FBC_VEC_AT(&p->recs, am_rec *, j++) = r;
	}
	p->recs.len = j;
	/* rebuild the index: strmap has no delete */
	for (i = 0; i < p->recs.len; i++) {
		am_rec *r = *FBC_VEC_AT(&p->recs, am_rec *, i);

		if (fbc_strmap_put(&fresh, r->name, r, NULL) != 0)
			break;
	}
	fbc_strmap_dispose(&p->rec_index);
	p->rec_index = fresh;
}

am_channel *am_pkg_channel(const am_pkg *p, const char *name)
{
	size_t i;

	for (i = 0; i < p->channels.len; i++) {
		am_channel *c = *FBC_VEC_AT(&p->channels, am_channel *, i);

		if (strcmp(c->name, name) == 0)
			return c;
	}
	return NULL;
}

int am_pkg_put_channel(am_pkg *p, am_channel *c)
{
	size_t i, pos;
	am_channel **slot;

	for (i = 0; i < p->channels.len; i++) {
		am_channel **cur = FBC_VEC_AT(&p->channels, am_channel *, i);

		if (strcmp((*cur)->name, c->name) == 0) {
			am_channel_free(*cur);
			*cur = c;
			return 0;
		}
	}
	slot = fbc_vec_push(&p->channels);
	if (!slot)
		return FBC_ENOMEM;
	pos = p->channels.len - 1;
	while (pos > 0 &&
	       strcmp((*FBC_VEC_AT(&p->channels, am_channel *, pos - 1))->name, c->name) > 0) {
		*FBC_VEC_AT(&p->channels, am_channel *, pos) =
			*FBC_VEC_AT(&p->channels, am_channel *, pos - 1);
		pos--;
	}
	*FBC_VEC_AT(&p->channels, am_channel *, pos) = c;
	return 0;
}

void am_pkg_drop_channel(am_pkg *p, const char *name)
{
	size_t i, j = 0;

	for (i = 0; i < p->channels.len; i++) {
		am_channel *c = *FBC_VEC_AT(&p->channels, am_channel *, i);

		if (strcmp(c->name, name) == 0)
			am_channel_free(c);
		else
			*FBC_VEC_AT(&p->channels, am_channel *, j++) = c;
	}
	p->channels.len = j;
}

bool am_pkg_is_member(const am_pkg *p, const char *name)
{
	size_t i;

	for (i = 0; i < p->channels.len; i++) {
		if (am_channel_member(*FBC_VEC_AT(&p->channels, am_channel *, i), name))
			return true;
	}
	return false;
}

am_pkg *am_pkg_clone(const am_pkg *src)
{
	am_pkg *p = calloc(1, sizeof(*p));
	size_t i;

	if (!p)
		return NULL;
	p->name = src->name;
	p->default_channel = src->default_channel;
	fbc_vec_init(&p->recs, sizeof(am_rec *));
	fbc_strmap_init(&p->rec_index);
	fbc_vec_init(&p->channels, sizeof(am_channel *));
	for (i = 0; i < src->recs.len; i++) {
		if (am_pkg_put_rec(p, *FBC_VEC_AT(&src->recs, am_rec *, i)) != 0)
			goto fail;
	}
	for (i = 0; i < src->channels.len; i++) {
		am_channel *c = channel_clone(*FBC_VEC_AT(&src->channels, am_channel *, i));
		am_channel **slot;

		if (!c)
			goto fail;
		slot = fbc_vec_push(&p->channels);
		if (!slot) {
			am_channel_free(c);
			goto fail;
		}
		*slot = c;
	}
	return p;
fail:
	am_pkg_free(p);
	return NULL;
}

/* Records are shared between copies but a copy may change a record's
 * tombstone flag: such changes go through a fresh copy of the record. */

am_pkg *am_index_pkg(const fbc_addmode_index *ix, const char *name)
{
	size_t i;

	for (i = 0; i < ix->pkgs.len; i++) {
		am_pkg *p = *FBC_VEC_AT(&ix->pkgs, am_pkg *, i);

		if (strcmp(p->name, name) == 0)
			return p;
	}
	return NULL;
}

int am_index_put_pkg(fbc_addmode_index *ix, am_pkg *p)
{
	size_t i, pos;
	am_pkg **slot;

	for (i = 0; i < ix->pkgs.len; i++) {
		am_pkg **cur = FBC_VEC_AT(&ix->pkgs, am_pkg *, i);

		if (strcmp((*cur)->name, p->name) == 0) {
			if (*cur != p)
				am_pkg_free(*cur);
			*cur = p;
			return 0;
		}
	}
	slot = fbc_vec_push(&ix->pkgs);
	if (!slot)
		return FBC_ENOMEM;
	pos = ix->pkgs.len - 1;
	while (pos > 0 && strcmp((*FBC_VEC_AT(&ix->pkgs, am_pkg *, pos - 1))->name, p->name) > 0) {
		*FBC_VEC_AT(&ix->pkgs, am_pkg *, pos) = *FBC_VEC_AT(&ix->pkgs, am_pkg *, pos - 1);
		pos--;
	}
	*FBC_VEC_AT(&ix->pkgs, am_pkg *, pos) = p;
	return 0;
}

void am_index_remove_pkg(fbc_addmode_index *ix, const char *name)
{
	size_t i, j = 0;

	for (i = 0; i < ix->pkgs.len; i++) {
		am_pkg *p = *FBC_VEC_AT(&ix->pkgs, am_pkg *, i);

		if (strcmp(p->name, name) == 0)
			am_pkg_free(p);
		else
			*FBC_VEC_AT(&ix->pkgs, am_pkg *, j++) = p;
	}
	ix->pkgs.len = j;
}

/* ---- the index ---- */

static void decref_blob(void *p)
{
	json_decref(p);
}

int fbc_addmode_index_create(fbc_addmode_index **out, fbc_error *err)
{
	fbc_addmode_index *ix = calloc(1, sizeof(*ix));

	if (!ix || fbc_arena_create(&ix->arena, 0) != 0) {
		free(ix);
		return fbc_error_set(err, FBC_ENOMEM, NULL, "out of memory");
	}
	fbc_vec_init(&ix->pkgs, sizeof(am_pkg *));
	fbc_strmap_init(&ix->deprecated_names);
	*out = ix;
	return 0;
}

void fbc_addmode_index_free(fbc_addmode_index *ix)
{
	size_t i;

	if (!ix)
		return;
	for (i = 0; i < ix->pkgs.len; i++)
		am_pkg_free(*FBC_VEC_AT(&ix->pkgs, am_pkg *, i));
	fbc_vec_dispose(&ix->pkgs);
	fbc_strmap_dispose(&ix->deprecated_names);
	fbc_arena_free(ix->arena);
	free(ix);
}

static const char *adup(fbc_arena *a, const char *s)
{
	return fbc_arena_strdup(a, s ? s : "");
}

/* Deep copy of a record into another arena (clone of an index). */
static am_rec *rec_copy(fbc_arena *a, const am_rec *s)
{
	am_rec *r = fbc_arena_calloc(a, 1, sizeof(*r));
	size_t i;

	if (!r)
		return NULL;
	*r = *s;
	r->name = adup(a, s->name);
	r->version = adup(a, s->version);
	r->replaces = adup(a, s->replaces);
	r->skip_range = adup(a, s->skip_range);
	r->image = adup(a, s->image);
	r->default_channel = adup(a, s->default_channel);
	r->substitutes_for = adup(a, s->substitutes_for);
	r->icon_data = s->icon_data ? adup(a, s->icon_data) : NULL;
	r->icon_mediatype = s->icon_mediatype ? adup(a, s->icon_mediatype) : NULL;
	r->skips.v = fbc_arena_calloc(a, s->skips.n + 1, sizeof(char *));
	r->channels.v = fbc_arena_calloc(a, s->channels.n + 1, sizeof(char *));
	if (!r->name || !r->version || !r->replaces || !r->skip_range || !r->image ||
	    !r->default_channel || !r->substitutes_for || !r->skips.v || !r->channels.v)
		return NULL;
	for (i = 0; i < s->skips.n; i++) {
		if (!(r->skips.v[i] = adup(a, s->skips.v[i])))
			return NULL;
	}
	for (i = 0; i < s->channels.n; i++) {
		if (!(r->channels.v[i] = adup(a, s->channels.v[i])))
			return NULL;
	}
	r->props = NULL;
	r->n_props = 0;
	if (!s->blob && s->n_props) {
		fbc_addmode_property *pp = fbc_arena_calloc(a, s->n_props, sizeof(*pp));

		if (!pp)
			return NULL;
		for (i = 0; i < s->n_props; i++) {
			pp[i].type = adup(a, s->props[i].type);
			pp[i].value = adup(a, s->props[i].value);
			if (!pp[i].type || !pp[i].value)
				return NULL;
		}
		r->props = pp;
		r->n_props = s->n_props;
	}
	if (s->blob) {
		json_incref(s->blob);
		if (fbc_arena_defer(a, decref_blob, s->blob) != 0) {
			json_decref(s->blob);
			return NULL;
		}
	}
	r->has_sv = r->version[0] &&
		    fbc_semver_parse(&r->sv, r->version, strlen(r->version), NULL) == 0;
	return r;
}

int fbc_addmode_index_clone(fbc_addmode_index **out, const fbc_addmode_index *src, fbc_error *err)
{
	fbc_addmode_index *ix = NULL;
	size_t i, j, k;
	int rc;

	rc = fbc_addmode_index_create(&ix, err);
	if (rc != 0)
		goto done;
	for (i = 0; i < src->pkgs.len; i++) {
		const am_pkg *sp = *FBC_VEC_AT(&src->pkgs, am_pkg *, i);
		am_pkg *p = am_pkg_clone(sp);

		if (!p || am_index_put_pkg(ix, p) != 0) {
			am_pkg_free(p);
			rc = fbc_error_set(err, FBC_ENOMEM, NULL, "out of memory");
			goto done;
		}
		/* records and strings must live in the new index's arena */
		p->name = adup(ix->arena, sp->name);
		p->default_channel =
			sp->default_channel ? adup(ix->arena, sp->default_channel) : NULL;
		fbc_strmap_dispose(&p->rec_index);
		fbc_strmap_init(&p->rec_index);
		for (j = 0; j < p->recs.len; j++) {
			am_rec **slot = FBC_VEC_AT(&p->recs, am_rec *, j);
			am_rec *r = rec_copy(ix->arena, *slot);

			if (!r || fbc_strmap_put(&p->rec_index, r->name, r, NULL) != 0) {
				rc = fbc_error_set(err, FBC_ENOMEM, NULL, "out of memory");
				goto done;
			}
			*slot = r;
		}
		for (j = 0; j < p->channels.len; j++) {
			am_channel *c = *FBC_VEC_AT(&p->channels, am_channel *, j);

			c->name = adup(ix->arena, c->name);
			c->head = c->head ? adup(ix->arena, c->head) : NULL;
			fbc_strmap_dispose(&c->index);
			fbc_strmap_init(&c->index);
			for (k = 0; k < c->members.len; k++) {
				am_member *m = *FBC_VEC_AT(&c->members, am_member *, k);
				size_t s;

				m->name = adup(ix->arena, m->name);
				m->next = m->next ? adup(ix->arena, m->next) : NULL;
				for (s = 0; s < m->skips.len; s++) {
					const char **sk = FBC_VEC_AT(&m->skips, const char *, s);

					*sk = adup(ix->arena, *sk);
				}
				if (fbc_strmap_put(&c->index, m->name, m, NULL) != 0) {
					rc = fbc_error_set(err, FBC_ENOMEM, NULL, "out of memory");
					goto done;
				}
			}
		}
	}
	{
		const char *key;
		void *val;

		for (k = 0; fbc_strmap_next(&src->deprecated_names, &k, &key, &val);) {
			if (fbc_strmap_put(&ix->deprecated_names, adup(ix->arena, key), val,
					   NULL) != 0) {
				rc = fbc_error_set(err, FBC_ENOMEM, NULL, "out of memory");
				goto done;
			}
		}
	}
	*out = ix;
	ix = NULL;
done:
	fbc_addmode_index_free(ix);
	return rc;
}

/* ---- inputs ---- */

static int check_len(const char *s, const char *what, const char *pkg, const char *name,
		     fbc_error *err)
{
	if (s && strlen(s) > FBC_ADDMODE_NAME_MAX)
		return am_fail(err, FBC_ELIMIT, "LIMIT", pkg, name, "%s longer than %d bytes", what,
			       FBC_ADDMODE_NAME_MAX);
	return 0;
}

static int copy_strs(am_strs *out, fbc_arena *a, const char *const *v, size_t n, bool dedup)
{
	size_t i, j, k = 0;

	out->v = fbc_arena_calloc(a, n + 1, sizeof(char *));
	if (!out->v)
		return FBC_ENOMEM;
	for (i = 0; i < n; i++) {
		bool dup = false;

		for (j = 0; dedup && j < k; j++)
			dup = dup || strcmp(out->v[j], v[i] ? v[i] : "") == 0;
		if (dup)
			continue;
		if (!(out->v[k++] = adup(a, v[i])))
			return FBC_ENOMEM;
	}
	out->n = k;
	return 0;
}

int am_rec_from_input(am_rec **out, fbc_arena *a, const fbc_addmode_bundle *b,
		      const fbc_addmode_opts *opts, fbc_error *err)
{
	am_rec *r;
	size_t i;
	int rc;

	if (!b->name || !b->name[0])
		return am_fail(err, FBC_EINVAL, "A2", b->package, "", "csv name not found");
	if ((rc = check_len(b->name, "name", b->package, b->name, err)) ||
	    (rc = check_len(b->version, "version", b->package, b->name, err)) ||
	    (rc = check_len(b->replaces, "replaces", b->package, b->name, err)) ||
	    (rc = check_len(b->default_channel, "default channel", b->package, b->name, err)) ||
	    (rc = check_len(b->image, "image", b->package, b->name, err)) ||
	    (rc = check_len(b->substitutes_for, "substitutesFor", b->package, b->name, err)))
		return rc;
	if (b->n_skips > FBC_ADDMODE_LIST_MAX || b->n_channels > FBC_ADDMODE_LIST_MAX)
		return am_fail(err, FBC_ELIMIT, "LIMIT", b->package, b->name,
			       "more than %d skips or channels", FBC_ADDMODE_LIST_MAX);
	for (i = 0; i < b->n_skips; i++) {
		if ((rc = check_len(b->skips[i], "skip", b->package, b->name, err)))
			return rc;
	}
	for (i = 0; i < b->n_channels; i++) {
		if ((rc = check_len(b->channels[i], "channel", b->package, b->name, err)))
			return rc;
	}
	if (b->substitutes_for && b->substitutes_for[0] && opts->disable_alpha)
		return am_fail(err, FBC_EINVAL, "A8", b->package, b->name,
			       "SubstitutesFor is an alpha-only feature. You must enable alpha "
			       "features with the flag --enable-alpha in order to use this "
			       "feature.");
	r = fbc_arena_calloc(a, 1, sizeof(*r));
	if (!r)
		return fbc_error_set(err, FBC_ENOMEM, NULL, "out of memory");
	r->name = adup(a, b->name);
	r->version = adup(a, b->version);
	r->replaces = adup(a, b->replaces);
	r->skip_range = adup(a, b->skip_range);
	r->image = adup(a, b->image);
	r->default_channel = adup(a, b->default_channel);
	r->substitutes_for = adup(a, b->substitutes_for);
	r->icon_data = b->icon_data ? adup(a, b->icon_data) : NULL;
	r->icon_mediatype = b->icon_mediatype ? adup(a, b->icon_mediatype) : NULL;
	if (!r->name || !r->version || !r->replaces || !r->skip_range || !r->image ||
	    !r->default_channel || !r->substitutes_for)
		return fbc_error_set(err, FBC_ENOMEM, NULL, "out of memory");
	/* 6.4: with alpha features every insert passes skips through a set */
	if (copy_strs(&r->skips, a, b->skips, b->n_skips, !opts->disable_alpha) != 0 ||
	    copy_strs(&r->channels, a, b->channels, b->n_channels, false) != 0)
		return fbc_error_set(err, FBC_ENOMEM, NULL, "out of memory");
	if (b->blob) {
		r->blob = json_deep_copy(b->blob);
		if (!r->blob || fbc_arena_defer(a, decref_blob, r->blob) != 0) {
			json_decref(r->blob);
			return fbc_error_set(err, FBC_ENOMEM, NULL, "out of memory");
		}
	} else if (b->n_properties) {
		fbc_addmode_property *pp;

		if (b->n_properties > FBC_ADDMODE_LIST_MAX)
			return am_fail(err, FBC_ELIMIT, "LIMIT", b->package, b->name,
				       "more than %d properties", FBC_ADDMODE_LIST_MAX);
		pp = fbc_arena_calloc(a, b->n_properties, sizeof(*pp));
		if (!pp)
			return fbc_error_set(err, FBC_ENOMEM, NULL, "out of memory");
		for (i = 0; i < b->n_properties; i++) {
			pp[i].type = adup(a, b->properties[i].type);
			pp[i].value = adup(a, b->properties[i].value);
			if (!pp[i].type || !pp[i].value)
				return fbc_error_set(err, FBC_ENOMEM, NULL, "out of memory");
		}
		r->props = pp;
		r->n_props = b->n_properties;
	}
	r->has_sv = r->version[0] &&
		    fbc_semver_parse(&r->sv, r->version, strlen(r->version), NULL) == 0;
	*out = r;
	return 0;
}

/* ---- introspection ---- */

size_t fbc_addmode_package_count(const fbc_addmode_index *ix)
{
	return ix->pkgs.len;
}

const char *fbc_addmode_package_name(const fbc_addmode_index *ix, size_t i)
{
	return i < ix->pkgs.len ? (*FBC_VEC_AT(&ix->pkgs, am_pkg *, i))->name : NULL;
}

bool fbc_addmode_has_package(const fbc_addmode_index *ix, const char *package)
{
	return am_index_pkg(ix, package) != NULL;
}

const char *fbc_addmode_default_channel(const fbc_addmode_index *ix, const char *package)
{
	am_pkg *p = am_index_pkg(ix, package);

	return p ? p->default_channel : NULL;
}

const char *fbc_addmode_channel_head(const fbc_addmode_index *ix, const char *package,
				     const char *channel)
{
	am_pkg *p = am_index_pkg(ix, package);
	am_channel *c = p ? am_pkg_channel(p, channel) : NULL;

	return c ? c->head : NULL;
}

bool fbc_addmode_stored(const fbc_addmode_index *ix, const char *package, const char *name)
{
	am_pkg *p = am_index_pkg(ix, package);

	return p && am_pkg_rec(p, name);
}

bool fbc_addmode_deprecated(const fbc_addmode_index *ix, const char *package, const char *name)
{
	am_pkg *p = am_index_pkg(ix, package);
	am_rec *r = p ? am_pkg_rec(p, name) : NULL;

	return r && r->deprecated;
}

bool fbc_addmode_stranded(const fbc_addmode_index *ix, const char *package, const char *name)
{
	am_pkg *p = am_index_pkg(ix, package);

	return p && am_pkg_rec(p, name) && !am_pkg_is_member(p, name);
}
