/*
 * A tree that records what is read through it (see internal.h, chk_rec): every list, follow
 * and read of the wrapped tree, with what it gave, as lines of text. A result computed only
 * from what a tree gave is the same for another tree that gives the same answers to the same
 * requests: chk_rec_verify replays the requests on it and compares. The add-mode build cache
 * keys its entries this way, whatever the build reads.
 *
 * Results are recorded by content id (git object ids), never by bytes: a read records the id
 * of the blob read (the parent directory's entry), a list every entry's name, kind, size and
 * id. A tree without ids (a directory on disk) makes the record unusable (chk_rec_text fails).
 */
#include "pipeline/checks/internal.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct chk_rec {
	fbc_tree *inner;
	pthread_mutex_t mu;
	fbc_strmap lines; /* "<op> <path>" (malloc'd) -> result (malloc'd) */
	bool unkeyable;	  /* an entry without an id was read */
	bool failed;	  /* out of memory while recording */
};

static int cmp_entry(const void *a, const void *b)
{
	return strcmp((*(const fbc_tree_entry *const *)a)->name,
		      (*(const fbc_tree_entry *const *)b)->name);
}

/* Entries [from, len) of v as text: "L" then one "name\tkind\tsize\tid\n" per entry in name
 * order. *unkeyable is set when an entry has no id. NULL on out-of-memory. */
static char *entries_text(const fbc_vec *v, size_t from, bool *unkeyable)
{
	size_t n = v->len - from;
	const fbc_tree_entry **s = calloc(n + 1, sizeof(*s));
	fbc_buf b;
	int rc;

	if (!s)
		return NULL;
	for (size_t i = 0; i < n; i++)
		s[i] = FBC_VEC_AT(v, fbc_tree_entry, from + i);
	qsort(s, n, sizeof(*s), cmp_entry);
	fbc_buf_init(&b, 0);
	rc = fbc_buf_putc(&b, 'L');
	for (size_t i = 0; i < n && rc == 0; i++) {
		if (!s[i]->id[0])
			*unkeyable = true;
		rc = fbc_buf_printf(&b, "%s\t%d\t%llu\t%s\n", s[i]->name, (int)s[i]->kind,
				    (unsigned long long)s[i]->size, s[i]->id);
	}
	free(s);
	if (rc != 0) {
		fbc_buf_dispose(&b);
		return NULL;
	}
	return fbc_buf_detach(&b, NULL);
}

/* The answer about one entry: "<op><name>\t<kind>\t<size>\t<id>", or "E<code>" when rc says
 * the request failed. *unkeyable is set when the entry has no id. NULL on out-of-memory. */
static char *entry_text(char op, int rc, const fbc_tree_entry *x, bool *unkeyable)
{
	char *s = NULL;

	if (rc == FBC_ENOMEM)
		return NULL;
	if (rc != 0)
		return asprintf(&s, "E%d", rc) < 0 ? NULL : s;
	if (!x->id[0])
		*unkeyable = true;
	return asprintf(&s, "%c%s\t%d\t%llu\t%s", op, x->name, (int)x->kind,
			(unsigned long long)x->size, x->id) < 0
		       ? NULL
		       : s;
}

/* The result of a list of dir, as entries_text or "E<code>". */
static char *list_text(fbc_tree *t, const char *dir, bool *unkeyable)
{
	fbc_vec v;
	fbc_error e;
	char *s;
	int rc;

	fbc_vec_init(&v, sizeof(fbc_tree_entry));
	fbc_error_init(&e);
	rc = fbc_tree_list(t, &v, dir, &e);
	s = rc ? entry_text('L', rc, NULL, unkeyable) : entries_text(&v, 0, unkeyable);
	fbc_tree_entries_dispose(&v);
	return s;
}

/* The result of a follow of path. */
static char *follow_text(fbc_tree *t, const char *path, bool *unkeyable)
{
	fbc_tree_entry x = {0};
	fbc_error e;
	char *s;

	fbc_error_init(&e);
	s = entry_text('F', fbc_tree_follow(t, &x, path, &e), &x, unkeyable);
	fbc_tree_entry_dispose(&x);
	return s;
}

/* The result of a read of path that returned rc: the blob's entry (its id, from the
 * directory that holds it), or "E<code>". */
static char *read_text(fbc_tree *t, const char *path, int rc, bool *unkeyable)
{
	fbc_tree_entry x = {0};
	fbc_error e;
	char *s;

	if (rc != 0)
		return entry_text('R', rc, NULL, unkeyable);
	fbc_error_init(&e);
	rc = fbc_tree_stat(t, &x, path, &e);
	if (rc != 0 && rc != FBC_ENOMEM)
		*unkeyable = true; /* read but not found by stat: cannot be keyed */
	s = entry_text('R', rc, &x, unkeyable);
	fbc_tree_entry_dispose(&x);
	return s;
}

/* Record key -> result (both taken); the first result of a request stays. */
static void note(chk_rec *r, char *key, char *result, bool unkeyable)
{
	pthread_mutex_lock(&r->mu);
	if (unkeyable)
		r->unkeyable = true;
	if (!key || !result)
		r->failed = true;
	else
		switch (fbc_strmap_add(&r->lines, key, result)) {
		case 1:
			key = NULL;
			result = NULL;
			break;
		case 0:
			break;
		default:
			r->failed = true;
		}
	pthread_mutex_unlock(&r->mu);
	free(key);
	free(result);
}

/* "<op> <path>", malloc'd (NULL on out-of-memory). */
static char *request(char op, const char *path)
{
	char *s = NULL;

	return asprintf(&s, "%c %s", op, path) < 0 ? NULL : s;
}

static int rec_list(void *self, fbc_vec *out, const char *dir, fbc_error *err)
{
	chk_rec *r = self;
	bool unkeyable = false;
	size_t before = out->len;
	int rc = fbc_tree_list(r->inner, out, dir, err);
	char *res;

	if (rc == FBC_ENOMEM)
		return rc;
	res = rc ? entry_text('L', rc, NULL, &unkeyable) : entries_text(out, before, &unkeyable);
	note(r, request('L', dir), res, unkeyable);
	return rc;
}

static int rec_follow(void *self, fbc_tree_entry *out, const char *path, fbc_error *err)
{
	chk_rec *r = self;
	bool unkeyable = false;
	int rc = fbc_tree_follow(r->inner, out, path, err);
	char *res;

	if (rc == FBC_ENOMEM)
		return rc;
	res = entry_text('F', rc, out, &unkeyable); /* before note reads unkeyable */
	note(r, request('F', path), res, unkeyable);
	return rc;
}

static int rec_read(void *self, fbc_tree_blob *out, const char *path, size_t max, fbc_error *err)
{
	chk_rec *r = self;
	bool unkeyable = false;
	int rc = fbc_tree_read(r->inner, out, path, max, err);
	char *key = NULL, *res;

	if (rc == FBC_ENOMEM)
		return rc;
	/* the bound is part of the request: the same blob read with another bound may succeed
	 * where this one failed */
	if (asprintf(&key, "R %zu %s", max, path) < 0)
		key = NULL;
	res = read_text(r->inner, path, rc, &unkeyable); /* before note reads unkeyable */
	note(r, key, res, unkeyable);
	return rc;
}

static void rec_release(void *self, fbc_tree_blob *blob)
{
	chk_rec *r = self;

	fbc_tree_blob_release(r->inner, blob);
}

static void rec_free(void *self)
{
	(void)self; /* the record outlives its tree: chk_rec_free */
}

static const fbc_tree_ops rec_ops = {rec_list, rec_follow, rec_read, rec_release, rec_free};

int chk_rec_open(chk_rec **rec, fbc_tree **out, fbc_tree *inner, fbc_error *err)
{
	chk_rec *r = calloc(1, sizeof(*r));

	*rec = NULL;
	if (!r)
		return fbc_error_set(err, FBC_ENOMEM, "", "out of memory");
	r->inner = inner;
	pthread_mutex_init(&r->mu, NULL);
	fbc_strmap_init(&r->lines);
	if (fbc_tree_create(out, &rec_ops, r, fbc_tree_label(inner), err) != 0) {
		chk_rec_free(r);
		return FBC_ENOMEM;
	}
	*rec = r;
	return 0;
}

void chk_rec_free(chk_rec *r)
{
	const char *k;
	void *v;

	if (!r)
		return;
	for (size_t it = 0; fbc_strmap_next(&r->lines, &it, &k, &v);) {
		free((char *)k);
		free(v);
	}
	fbc_strmap_dispose(&r->lines);
	pthread_mutex_destroy(&r->mu);
	free(r);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

int chk_rec_text(fbc_buf *out, const chk_rec *r)
{
	const char **keys;
	const char *k;
	void *v;
	size_t n = 0;
	int rc = 0;

	if (r->failed)
		return FBC_ENOMEM;
	if (r->unkeyable)
		return FBC_EINVAL;
	if (!(keys = calloc(r->lines.count + 1, sizeof(*keys))))
		return FBC_ENOMEM;
	for (size_t it = 0; fbc_strmap_next(&r->lines, &it, &k, &v);)
		keys[n++] = k;
	qsort(keys, n, sizeof(*keys), cmp_str);
	/* "<len of request> <len of result>\n<request><result>" per request, in request order */
	for (size_t i = 0; i < n && rc == 0; i++) {
		const char *res = fbc_strmap_get(&r->lines, keys[i]);

		rc = fbc_buf_printf(out, "%zu %zu\n%s%s", strlen(keys[i]), strlen(res), keys[i],
				    res);
	}
	free(keys);
	return rc ? FBC_ENOMEM : 0;
}

/* Parse "<a> <b>\n" at *p (end e): the two lengths, *p past the newline, both in bounds. */
static bool lengths(const char **p, const char *e, size_t *a, size_t *b)
{
	return chk_parse_len(p, e, ' ', a) && chk_parse_len(p, e, '\n', b) &&
	       *a <= (size_t)(e - *p) && *b <= (size_t)(e - *p) - *a;
}

int chk_rec_verify(const char *text, size_t len, fbc_tree *t)
{
	const char *p = text, *e = text + len;
	int rc = 0;

	while (p < e && rc == 0) {
		size_t kl, vl;
		char *key, *got = NULL;
		bool unkeyable = false;

		if (!lengths(&p, e, &kl, &vl) || kl < 3 || memchr(p, '\0', kl + vl))
			return FBC_EINVAL;
		if (!(key = strndup(p, kl)))
			return FBC_ENOMEM;
		if (key[0] == 'L' && key[1] == ' ')
			got = list_text(t, key + 2, &unkeyable);
		else if (key[0] == 'F' && key[1] == ' ')
			got = follow_text(t, key + 2, &unkeyable);
		else if (key[0] == 'R' && key[1] == ' ') {
			const char *q = key + 2;
			char *sp = strchr(key + 2, ' ');
			size_t max = 0;

			if (!sp || !chk_parse_len(&q, sp + 1, ' ', &max)) {
				free(key);
				return FBC_EINVAL;
			}
			if (vl > 0 && p[kl] == 'E') {
				/* a failed read is replayed as a read: the answer is its error */
				fbc_tree_blob b = {0};
				fbc_error er;
				int r2;

				fbc_error_init(&er);
				r2 = fbc_tree_read(t, &b, sp + 1, max, &er);
				fbc_tree_blob_release(t, &b);
				got = read_text(t, sp + 1, r2, &unkeyable);
			} else {
				got = read_text(t, sp + 1, 0, &unkeyable);
			}
		} else {
			free(key);
			return FBC_EINVAL;
		}
		free(key);
		if (!got)
			return FBC_ENOMEM;
		if (unkeyable || strlen(got) != vl || memcmp(got, p + kl, vl) != 0)
			rc = FBC_ECONFLICT;
		free(got);
		p += kl + vl;
	}
	return rc;
}
