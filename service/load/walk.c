/*
 * The loader's walk of a tree (see walk.h).
 */
#include "service/load/walk.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int add_entry(fbc_load_walk *w, const char *rel, const char *path, size_t size,
		     const char *code, const char *fmt, ...) __attribute__((format(printf, 6, 7)));

static int add_entry(fbc_load_walk *w, const char *rel, const char *path, size_t size,
		     const char *code, const char *fmt, ...)
{
	fbc_load_entry *e = calloc(1, sizeof(*e)), **slot = e ? fbc_vec_push(&w->entries) : NULL;

	if (slot == NULL) {
		free(e);
		return fbc_error_set(w->err, FBC_ENOMEM, rel, "out of memory");
	}
	*slot = e;
	fbc_vec_init(&e->items, sizeof(fbc_load_item));
	e->decided = w->ig_pending == 0;
	e->size = size;
	e->rel = strdup(rel);
	e->path = strdup(path);
	if (e->rel == NULL || e->path == NULL)
		return fbc_error_set(w->err, FBC_ENOMEM, rel, "out of memory");
	if (fmt != NULL) {
		va_list ap;
		va_start(ap, fmt);
		if (vasprintf(&e->finding, fmt, ap) < 0)
			e->finding = NULL;
		va_end(ap);
		if (e->finding == NULL)
			return fbc_error_set(w->err, FBC_ENOMEM, rel, "out of memory");
		e->code = code;
	}
	return 0;
}

/* The content id of the entry just added (a plain file). */
static void set_last_id(fbc_load_walk *w, const char *id)
{
	fbc_load_entry *e = *FBC_VEC_AT(&w->entries, fbc_load_entry *, w->entries.len - 1);

	snprintf(e->id, sizeof(e->id), "%s", id);
}

static int add_ignore_file(fbc_load_walk *w, const fbc_load_source *src, const char *dir_rel,
			   const char *path)
{
	fbc_load_src_data d;
	char reason[256];
	int rc = fbc_load_src_read(src, &d, NULL, path, w->lim->max_file_bytes, reason,
				   sizeof(reason));

	if (rc == FBC_ENOMEM)
		return fbc_error_set(w->err, rc, path, "out of memory");
	if (rc != 0)
		return 0; /* an unreadable .indexignore adds no patterns */
	rc = fbc_ignore_add_file(w->ig, dir_rel, d.data != NULL ? d.data : "", d.len, w->err);
	fbc_load_src_release(src, &d);
	return rc;
}

/* Entries the walk may visit (files, directories, ignored files) before
 * it gives up: a generous multiple of max_files, without overflow. */
static size_t walk_cap(const fbc_load_limits *lim)
{
	return lim->max_files > SIZE_MAX / 8 ? SIZE_MAX / 2 : lim->max_files * 4 + 1024;
}

/* A symbolic link at crel: inside the root, to a file, it is read as that
 * file; anything else is L1 (never followed outside the root). */
static int walk_link(fbc_load_walk *w, const fbc_load_source *src, const char *rel,
		     const char *crel, const char *name)
{
	fbc_tree_entry fe;
	fbc_error ferr;
	int rc;

	memset(&fe, 0, sizeof(fe));
	fbc_error_init(&ferr);
	rc = fbc_tree_follow(w->t, &fe, crel, &ferr);
	if (rc == FBC_ENOMEM)
		return fbc_error_set(w->err, rc, crel, "out of memory");
	if (rc == FBC_EINVAL)
		return add_entry(w, crel, crel, 0, "L1",
				 "open %s: symlink resolves outside the catalog root", crel);
	if (rc != 0)
		return add_entry(w, crel, crel, 0, "L1", "open %s: %s", crel,
				 rc == FBC_ENOTFOUND ? strerror(ENOENT)
				 : rc == FBC_ELIMIT  ? strerror(ELOOP)
						     : fbc_load_tree_reason(&ferr));
	if (fe.kind == FBC_TREE_DIR)
		rc = add_entry(w, crel, crel, 0, "L1", "read %s: is a directory", crel);
	else if (strcmp(name, ".indexignore") == 0)
		rc = add_ignore_file(w, src, rel, fe.name);
	else if (fe.kind != FBC_TREE_FILE) /* a FIFO is never opened: it could block */
		rc = add_entry(w, crel, crel, 0, "L1", "read %s: not a regular file", crel);
	else if ((rc = add_entry(w, crel, fe.name, (size_t)fe.size, NULL, NULL)) == 0)
		set_last_id(w, fe.id);
	fbc_tree_entry_dispose(&fe);
	return rc;
}

int fbc_load_walk_dir(fbc_load_walk *w, const fbc_load_source *src, const char *rel)
{
	fbc_vec ents;
	fbc_error lerr;
	bool ig_here = false;
	int rc;

	fbc_vec_init(&ents, sizeof(fbc_tree_entry));
	fbc_error_init(&lerr);
	rc = fbc_tree_list(w->t, &ents, rel, &lerr);
	if (rc == FBC_ENOMEM) {
		rc = fbc_error_set(w->err, rc, rel, "out of memory");
		goto done;
	}
	if (rc != 0) {
		rc = add_entry(w, rel[0] ? rel : ".", rel, 0, "L1", "open %s: %s",
			       rel[0] ? rel : ".", fbc_load_tree_reason(&lerr));
		goto done;
	}
	fbc_tree_entries_sort(&ents);
	/* files before this directory's .indexignore (in walk order) wait for it */
	for (size_t i = 0; i < ents.len && !ig_here; i++)
		ig_here = strcmp(FBC_VEC_AT(&ents, fbc_tree_entry, i)->name, ".indexignore") == 0;
	w->ig_pending += ig_here;
	for (size_t i = 0; i < ents.len && rc == 0 && !w->stop; i++) {
		fbc_tree_entry *te = FBC_VEC_AT(&ents, fbc_tree_entry, i);
		char *crel = fbc_tree_join(rel, te->name);
		bool is_ig = strcmp(te->name, ".indexignore") == 0;

		if (crel == NULL) {
			rc = fbc_error_set(w->err, FBC_ENOMEM, rel, "out of memory");
		} else if (++w->seen > walk_cap(w->lim)) {
			/* a tree this large is refused before it exhausts memory */
			rc = add_entry(w, crel, crel, 0, "LIMIT",
				       "the tree has more than %zu entries (max_files limit)",
				       walk_cap(w->lim));
			w->seen = SIZE_MAX / 2;
			free(crel);
			break;
		} else if (te->kind == FBC_TREE_DIR) {
			rc = fbc_load_walk_dir(w, src, crel);
		} else if (te->kind == FBC_TREE_LINK) {
			rc = walk_link(w, src, rel, crel, te->name);
		} else if (is_ig) {
			if (te->kind == FBC_TREE_FILE)
				rc = add_ignore_file(w, src, rel, crel);
		} else if (te->kind != FBC_TREE_FILE) {
			rc = add_entry(w, crel, crel, 0, "L1", "read %s: not a regular file", crel);
		} else if ((rc = add_entry(w, crel, crel, (size_t)te->size, NULL, NULL)) == 0) {
			set_last_id(w, te->id);
		}
		free(crel);
		if (is_ig && ig_here) {
			w->ig_pending--;
			ig_here = false;
		}
	}
	if (ig_here)
		w->ig_pending--;
	if (rc == 0 && w->progress != NULL)
		rc = w->progress(w->progress_ctx);
done:
	fbc_tree_entries_dispose(&ents);
	return rc;
}

/* Keep or drop the walk's entries in order, as far as each is decided (all
 * of them: the walk is over): .indexignore, then max_files and
 * max_total_bytes; a LIMIT entry is the last one kept. */
int fbc_load_walk_select(fbc_load_walk *w, bool all)
{
	const fbc_load_limits *l = w->lim;

	while (!w->limited && w->selected < w->entries.len) {
		fbc_load_entry **slot = FBC_VEC_AT(&w->entries, fbc_load_entry *, w->selected),
			       *e = *slot, **k;

		if (!all && !e->decided)
			break;
		w->selected++;
		if (e->code == NULL || strcmp(e->code, "LIMIT") != 0) {
			if (fbc_ignore_match(w->ig, e->rel))
				continue;
		}
		if (w->kept.len >= l->max_files || w->total + e->size > l->max_total_bytes ||
		    e->size > l->max_total_bytes) {
			free(e->finding);
			e->code = "LIMIT";
			if (asprintf(&e->finding,
				     w->kept.len >= l->max_files ? "the catalog has more than %zu "
								   "files (max_files limit)"
								 : "the catalog is larger than %zu "
								   "bytes (max_total_bytes "
								   "limit)",
				     w->kept.len >= l->max_files ? l->max_files
								 : l->max_total_bytes) < 0) {
				e->finding = NULL;
				return fbc_error_set(w->err, FBC_ENOMEM, e->rel, "out of memory");
			}
		} else {
			w->total += e->size;
		}
		if ((k = fbc_vec_push(&w->kept)) == NULL)
			return fbc_error_set(w->err, FBC_ENOMEM, e->rel, "out of memory");
		*k = e;
		*slot = NULL;
		if (strcmp(e->code ? e->code : "", "LIMIT") == 0)
			w->limited = true;
	}
	return 0;
}

/* Entries (fbc_load_entry *; NULL slots skipped) and the vector. */
void fbc_load_entries_dispose(fbc_vec *v, const fbc_load_stage *stage)
{
	for (size_t i = 0; i < v->len; i++) {
		fbc_load_entry *e = *FBC_VEC_AT(v, fbc_load_entry *, i);

		if (e == NULL)
			continue;
		free(e->rel);
		free(e->path);
		free(e->finding);
		fbc_load_items_clear_staged(&e->items, stage);
		fbc_vec_dispose(&e->items);
		free(e);
	}
	fbc_vec_dispose(v);
}
