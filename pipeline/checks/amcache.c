/*
 * The add-mode builds of a pull request (addmode.c) in the check cache: the head's and the
 * merge base's builds of the touched packages as one byte entry, so that checking the same
 * change again — in the service, or in a later `fbcd pr check` with the on-disk cache —
 * replays nothing.
 *
 * An entry is found by the build's inputs that are known before it runs (chk_amc_key: this
 * executable's build id, how the builds are made, the packages, both histories step by step)
 * and is used only when every read the builds made through their trees (record.c) gives the
 * same answer on this change's trees: whatever else the replay reads (config.yaml, ci.yaml,
 * the catalog names, each bundle directory), a difference in it is a miss.
 *
 * The entry (format version 1) is a sequence of netstrings ("<length>:<bytes>,"): the magic,
 * the key, the reads of the head tree and of the merge base's tree, the distinct catalog
 * contents (fbc_repo_catalogs_content's serialisation), then per build (head, merge base):
 * built, error, the catalogs (name, content index), the add-mode packages (name, mode), the
 * findings (path, commit, catalog, rule, message). chk_amc_thaw checks every length, count and
 * index against the bytes it has; anything else is a malformed entry, never a crash.
 */
#include "pipeline/catalogs/catalogs.h"
#include "pipeline/checks/internal.h"

#include <elf.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define AMC_MAGIC "fbcd-am 1"
#define AMC_MAX_N 1000000

/* --------------------------------------------------------------- build id */

typedef struct build_id {
	char hex[2 * 64 + 1];
} build_id;

static int note_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	build_id *id = data;

	(void)size;
	if (info->dlpi_name && info->dlpi_name[0])
		return 0; /* the main program comes first, with an empty name */
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		const char *p, *e;

		if (ph->p_type != PT_NOTE)
			continue;
		p = (const char *)(info->dlpi_addr + ph->p_vaddr);
		e = p + ph->p_memsz;
		while (p + sizeof(ElfW(Nhdr)) <= e) {
			const ElfW(Nhdr) *nh = (const ElfW(Nhdr) *)(const void *)p;
			size_t name_sz = (nh->n_namesz + 3) & ~(size_t)3;
			size_t desc_sz = (nh->n_descsz + 3) & ~(size_t)3;
			const unsigned char *desc =
				(const unsigned char *)p + sizeof(ElfW(Nhdr)) + name_sz;

			if ((const char *)desc + desc_sz > e)
				break;
			if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 &&
			    memcmp(p + sizeof(ElfW(Nhdr)), "GNU", 4) == 0 && nh->n_descsz > 0 &&
			    nh->n_descsz <= 64) {
				for (size_t k = 0; k < nh->n_descsz; k++)
					sprintf(id->hex + 2 * k, "%02x", desc[k]);
				return 1;
			}
			p = (const char *)desc + desc_sz;
		}
	}
	return 1;
}

/* This executable's GNU build id (changes with any change to its code), "" when it has none:
 * then nothing is cached, since an entry of another build could be taken for ours. */
static const char *self_build_id(void)
{
	static build_id id;
	static bool done;

	if (!done) {
		dl_iterate_phdr(note_cb, &id);
		done = true;
	}
	return id.hex;
}

/* --------------------------------------------------------------- key */

int chk_amc_key(fbc_buf *key, char name[CHK_AMC_NAME_MAX], bool one_replay, size_t steps,
		const char *const *pkgs, size_t n, const fbc_repo_history *hh,
		const fbc_repo_history *hm)
{
	const fbc_repo_history *hs[2] = {hh, hm};
	const char *bid = self_build_id();
	int rc;

	if (!bid[0])
		return FBC_EINVAL;
	rc = fbc_buf_printf(key, "%s\nbuild %s\nreplay %s %zu\npackages %zu\n", AMC_MAGIC, bid,
			    one_replay ? "one" : "two", steps, n);
	for (size_t i = 0; i < n && rc == 0; i++)
		rc = fbc_buf_printf(key, "%zu %s\n", strlen(pkgs[i]), pkgs[i]);
	for (int k = 0; k < 2 && rc == 0; k++) {
		size_t ns = hs[k] ? fbc_repo_history_count(hs[k]) : 0;

		rc = fbc_buf_printf(key, "history %d %s %zu\n", k, hs[k] ? "yes" : "no", ns);
		for (size_t i = 0; i < ns && rc == 0; i++) {
			const fbc_repo_history_step *s = fbc_repo_history_step_at(hs[k], i);

			rc = fbc_buf_printf(key, "%zu %s %zu\n", strlen(s->commit), s->commit,
					    s->n_paths);
			for (size_t j = 0; j < s->n_paths && rc == 0; j++)
				rc = fbc_buf_printf(key, "%zu %s\n", strlen(s->paths[j]),
						    s->paths[j]);
		}
	}
	if (rc != 0)
		return FBC_ENOMEM;
	/* the file name only spreads keys: the entry holds the whole key, compared on use */
	snprintf(name, CHK_AMC_NAME_MAX, "am-%016llx",
		 (unsigned long long)fbc_hash_bytes(key->data, key->len));
	return 0;
}

/* --------------------------------------------------------------- freeze */

static int ns(fbc_buf *b, const char *s, size_t n)
{
	if (fbc_buf_printf(b, "%zu:", n) != 0 || fbc_buf_append(b, s, n) != 0 ||
	    fbc_buf_putc(b, ',') != 0)
		return FBC_ENOMEM;
	return 0;
}

static int ns_str(fbc_buf *b, const char *s)
{
	return ns(b, s ? s : "", s ? strlen(s) : 0);
}

static int ns_num(fbc_buf *b, size_t v)
{
	char t[32];
	int n = snprintf(t, sizeof(t), "%zu", v);

	return ns(b, t, (size_t)n);
}

typedef struct content_src {
	const fbc_repo_catalogs *rc;
	size_t i, idx; /* catalog i of rc has content idx */
} content_src;

typedef struct content_set {
	fbc_buf *items;
	size_t n, cap;
	content_src *src; /* catalogs frozen so far */
	size_t n_src;
} content_set;

/* The index of content c in the set (added when new; c is taken or freed). */
static int content_index(content_set *s, fbc_buf *c, size_t *idx)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->items[i].len == c->len &&
		    (c->len == 0 || memcmp(s->items[i].data, c->data, c->len) == 0)) {
			fbc_buf_dispose(c);
			*idx = i;
			return 0;
		}
	if (s->n == s->cap) {
		size_t nc = s->cap ? s->cap * 2 : 8;
		fbc_buf *ni = realloc(s->items, nc * sizeof(*ni));

		if (!ni) {
			fbc_buf_dispose(c);
			return FBC_ENOMEM;
		}
		s->items = ni;
		s->cap = nc;
	}
	s->items[s->n] = *c;
	*idx = s->n++;
	return 0;
}

static int freeze_build(fbc_buf *out, content_set *cs, const fbc_repo_catalogs *rc, const char *why,
			fbc_error *err)
{
	size_t n = rc ? fbc_repo_catalogs_count(rc) : 0;
	int r = ns_str(out, rc ? "1" : "0");

	if (r == 0)
		r = ns_str(out, why);
	if (r == 0)
		r = ns_num(out, n);
	if (n && !(cs->src = realloc(cs->src, (cs->n_src + n) * sizeof(*cs->src))))
		return fbc_error_set(err, FBC_ENOMEM, "", "out of memory");
	for (size_t i = 0; i < n && r == 0; i++) {
		fbc_buf c;
		size_t idx = 0;
		bool known = false;

		/* catalogs known to be the same (one replay, the same adds) are rendered once */
		for (size_t k = 0; k < cs->n_src && !known; k++)
			if (fbc_repo_catalogs_same(cs->src[k].rc, cs->src[k].i, rc, i)) {
				idx = cs->src[k].idx;
				known = true;
			}
		if (!known) {
			fbc_buf_init(&c, 0);
			if ((r = fbc_repo_catalogs_content(&c, rc, i, err)) != 0) {
				fbc_buf_dispose(&c);
				return r;
			}
			r = content_index(cs, &c, &idx);
		}
		cs->src[cs->n_src++] = (content_src){rc, i, idx};
		if (r == 0 && (r = ns_str(out, fbc_repo_catalogs_name(rc, i))) == 0)
			r = ns_num(out, idx);
	}
	n = rc ? fbc_repo_catalogs_addmode_count(rc) : 0;
	if (r == 0)
		r = ns_num(out, n);
	for (size_t i = 0; i < n && r == 0; i++) {
		fbc_addmode_mode m = FBC_ADDMODE_REPLACES;
		const char *p = fbc_repo_catalogs_addmode_package(rc, i, &m);

		if ((r = ns_str(out, p)) == 0)
			r = ns_str(out, fbc_addmode_mode_name(m));
	}
	n = rc ? fbc_repo_catalogs_findings_count(rc) : 0;
	if (r == 0)
		r = ns_num(out, n);
	for (size_t i = 0; i < n && r == 0; i++) {
		const fbc_repo_finding *f = fbc_repo_catalogs_finding(rc, i);

		if ((r = ns_str(out, f->path)) == 0 && (r = ns_str(out, f->commit)) == 0 &&
		    (r = ns_str(out, f->catalog)) == 0 && (r = ns_str(out, f->rule)) == 0)
			r = ns_str(out, f->message);
	}
	return r == FBC_ENOMEM ? fbc_error_set(err, r, "", "out of memory") : r;
}

int chk_amc_freeze(fbc_buf *out, const char *key, size_t key_len, const fbc_buf *reads_head,
		   const fbc_buf *reads_mb, const fbc_repo_catalogs *rh, const char *why_h,
		   const fbc_repo_catalogs *rm, const char *why_m, fbc_error *err)
{
	content_set cs = {0};
	fbc_buf builds;
	int r;

	fbc_buf_init(&builds, 0);
	r = freeze_build(&builds, &cs, rh, why_h, err);
	if (r == 0)
		r = freeze_build(&builds, &cs, rm, why_m, err);
	if (r == 0 &&
	    ((r = ns_str(out, AMC_MAGIC)) != 0 || (r = ns(out, key, key_len)) != 0 ||
	     (r = ns(out, reads_head->data ? reads_head->data : "", reads_head->len)) != 0 ||
	     (r = ns(out, reads_mb && reads_mb->data ? reads_mb->data : "",
		     reads_mb ? reads_mb->len : 0)) != 0 ||
	     (r = ns_num(out, cs.n)) != 0))
		r = fbc_error_set(err, FBC_ENOMEM, "", "out of memory");
	for (size_t i = 0; i < cs.n && r == 0; i++)
		if (ns(out, cs.items[i].data ? cs.items[i].data : "", cs.items[i].len) != 0)
			r = fbc_error_set(err, FBC_ENOMEM, "", "out of memory");
	if (r == 0 && fbc_buf_append(out, builds.data ? builds.data : "", builds.len) != 0)
		r = fbc_error_set(err, FBC_ENOMEM, "", "out of memory");
	for (size_t i = 0; i < cs.n; i++)
		fbc_buf_dispose(&cs.items[i]);
	free(cs.items);
	free(cs.src);
	fbc_buf_dispose(&builds);
	return r;
}

/* --------------------------------------------------------------- thaw */

typedef struct reader {
	const char *p, *e;
	bool bad;
} reader;

/* The next netstring (borrowed, not NUL-terminated); bad when there is none. */
static const char *rd(reader *r, size_t *len)
{
	size_t n = 0, k = 0;
	const char *s;

	*len = 0;
	if (r->bad)
		return NULL;
	while (r->p + k < r->e && r->p[k] >= '0' && r->p[k] <= '9' && k < 19)
		n = n * 10 + (size_t)(r->p[k++] - '0');
	if (k == 0 || r->p + k >= r->e || r->p[k] != ':' || (k > 1 && r->p[0] == '0') ||
	    n >= (size_t)(r->e - r->p - (ptrdiff_t)k - 1) || r->p[k + 1 + n] != ',') {
		r->bad = true;
		return NULL;
	}
	s = r->p + k + 1;
	r->p = s + n + 1;
	*len = n;
	return s;
}

static const char *rd_str(reader *r, fbc_arena *a)
{
	size_t n;
	const char *s = rd(r, &n);
	char *d;

	if (!s)
		return NULL;
	if (memchr(s, '\0', n) || !(d = fbc_arena_strndup(a, s, n))) {
		r->bad = true;
		return NULL;
	}
	return d;
}

static size_t rd_num(reader *r, size_t max)
{
	size_t n, v = 0;
	const char *s = rd(r, &n);

	if (!s || n == 0 || n > 9) {
		r->bad = true;
		return 0;
	}
	for (size_t i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9') {
			r->bad = true;
			return 0;
		}
		v = v * 10 + (size_t)(s[i] - '0');
	}
	if (v > max) {
		r->bad = true;
		return 0;
	}
	return v;
}

/* A count of items of at least `each` bytes that the rest of the input could hold. */
static size_t rd_count(reader *r, size_t each)
{
	return rd_num(r, (size_t)(r->e - r->p) / each);
}

static void thaw_build(reader *r, chk_amc_build *b, fbc_arena *a, size_t n_contents)
{
	const char *built = rd_str(r, a);

	b->built = built && strcmp(built, "1") == 0;
	if (built && !b->built && strcmp(built, "0") != 0)
		r->bad = true;
	b->error = rd_str(r, a);
	b->n_cats = rd_count(r, 6);
	if (r->bad)
		return;
	b->names = fbc_arena_calloc(a, b->n_cats + 1, sizeof(*b->names));
	b->content = fbc_arena_calloc(a, b->n_cats + 1, sizeof(*b->content));
	if (!b->names || !b->content) {
		r->bad = true;
		return;
	}
	for (size_t i = 0; i < b->n_cats && !r->bad; i++) {
		b->names[i] = rd_str(r, a);
		b->content[i] = rd_num(r, n_contents ? n_contents - 1 : 0);
		if (!n_contents)
			r->bad = true;
	}
	b->n_add = rd_count(r, 6);
	if (r->bad)
		return;
	b->add_pkg = fbc_arena_calloc(a, b->n_add + 1, sizeof(*b->add_pkg));
	b->add_mode = fbc_arena_calloc(a, b->n_add + 1, sizeof(*b->add_mode));
	if (!b->add_pkg || !b->add_mode) {
		r->bad = true;
		return;
	}
	for (size_t i = 0; i < b->n_add && !r->bad; i++) {
		fbc_addmode_mode m;
		fbc_error e;

		b->add_pkg[i] = rd_str(r, a);
		b->add_mode[i] = rd_str(r, a);
		fbc_error_init(&e);
		if (!r->bad && fbc_addmode_mode_parse(&m, b->add_mode[i], &e) != 0)
			r->bad = true;
	}
	b->n_find = rd_count(r, 15);
	if (r->bad)
		return;
	if (!(b->finds = fbc_arena_calloc(a, b->n_find + 1, sizeof(*b->finds)))) {
		r->bad = true;
		return;
	}
	for (size_t i = 0; i < b->n_find && !r->bad; i++) {
		chk_amc_finding *f = &b->finds[i];

		f->path = rd_str(r, a);
		f->commit = rd_str(r, a);
		f->catalog = rd_str(r, a);
		f->rule = rd_str(r, a);
		f->message = rd_str(r, a);
	}
}

void chk_amc_entry_free(chk_amc_entry *e)
{
	if (!e)
		return;
	fbc_arena_free(e->arena);
	free(e->data);
	free(e);
}

int chk_amc_thaw(chk_amc_entry **out, char *data, size_t len)
{
	chk_amc_entry *e = calloc(1, sizeof(*e));
	reader r = {data, data + len, false};
	size_t n;
	const char *magic;

	*out = NULL;
	if (!e || fbc_arena_create(&e->arena, 0) != 0) {
		free(e);
		free(data);
		return FBC_ENOMEM;
	}
	e->data = data;
	e->len = len;
	magic = rd(&r, &n);
	if (!magic || n != strlen(AMC_MAGIC) || memcmp(magic, AMC_MAGIC, n) != 0)
		r.bad = true;
	e->key = rd(&r, &e->key_len);
	for (int k = 0; k < 2; k++)
		e->reads[k] = rd(&r, &e->reads_len[k]);
	e->n_contents = rd_count(&r, 3);
	if (!r.bad) {
		e->contents = fbc_arena_calloc(e->arena, e->n_contents + 1, sizeof(*e->contents));
		e->content_len =
			fbc_arena_calloc(e->arena, e->n_contents + 1, sizeof(*e->content_len));
		if (!e->contents || !e->content_len)
			r.bad = true;
	}
	for (size_t i = 0; i < e->n_contents && !r.bad; i++)
		e->contents[i] = rd(&r, &e->content_len[i]);
	for (int k = 0; k < 2 && !r.bad; k++)
		thaw_build(&r, &e->b[k], e->arena, e->n_contents);
	if (r.bad || r.p != r.e) {
		chk_amc_entry_free(e);
		return FBC_EINVAL;
	}
	*out = e;
	return 0;
}

/* --------------------------------------------------------------- content */

bool chk_parse_len(const char **p, const char *e, char term, size_t *v)
{
	size_t k = 0, x = 0;

	while (*p + k < e && (*p)[k] >= '0' && (*p)[k] <= '9' && k < 19)
		x = x * 10 + (size_t)((*p)[k++] - '0');
	if (k == 0 || *p + k >= e || (*p)[k] != term)
		return false;
	*v = x;
	*p += k + 1;
	return true;
}

int chk_amc_content_tree(fbc_tree **out, const char *content, size_t len, const char *label,
			 fbc_error *err)
{
	const char *p = content, *e = content + len;
	const char **paths = NULL, **datas = NULL;
	size_t *lens = NULL, n = 0, cap = 0;
	char **owned = NULL;
	int rc = 0;

	while (p < e && rc == 0) {
		size_t pl, dl;

		if (!chk_parse_len(&p, e, ' ', &pl) || !chk_parse_len(&p, e, '\n', &dl) ||
		    pl > (size_t)(e - p) || dl > (size_t)(e - p) - pl) {
			rc = FBC_EINVAL;
			break;
		}
		if (n == cap) {
			size_t nc = cap ? cap * 2 : 8;
			const char **np = realloc(paths, nc * sizeof(*np));
			const char **nd = np ? realloc(datas, nc * sizeof(*nd)) : NULL;
			size_t *nl = nd ? realloc(lens, nc * sizeof(*nl)) : NULL;
			char **no = nl ? realloc(owned, nc * sizeof(*no)) : NULL;

			if (np)
				paths = np;
			if (nd)
				datas = nd;
			if (nl)
				lens = nl;
			if (no)
				owned = no;
			if (!no) {
				rc = FBC_ENOMEM;
				break;
			}
			cap = nc;
		}
		if (memchr(p, '\0', pl)) {
			rc = FBC_EINVAL;
			break;
		}
		if (!(owned[n] = strndup(p, pl))) {
			rc = FBC_ENOMEM;
			break;
		}
		paths[n] = owned[n];
		datas[n] = p + pl;
		lens[n] = dl;
		n++;
		p += pl + dl;
	}
	if (rc == 0)
		rc = fbc_tree_open_mem(out, paths, datas, lens, n, label, err);
	else if (rc == FBC_EINVAL)
		rc = fbc_error_set(err, rc, label, "a cached catalog is malformed");
	else
		rc = fbc_error_set(err, rc, label, "out of memory");
	for (size_t i = 0; i < n; i++)
		free(owned[i]);
	free(owned);
	free(paths);
	free(datas);
	free(lens);
	return rc;
}
