/* The fbc_tree backend over the tree of a git commit. */
#include "pipeline/git/internal.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_LINKS 40

typedef struct git_tree_state {
	fbc_git *g; /* referenced */
	git_tree *root;
} git_tree_state;

/* Under the lock: the tree at dir ("" = root); *owned is set when the caller
 * must free it. */
static int subtree_locked(git_tree **out, bool *owned, git_tree_state *s, const char *dir,
			  fbc_error *err)
{
	git_tree_entry *e = NULL;
	int lg;

	*owned = false;
	if (!*dir) {
		*out = s->root;
		return 0;
	}
	if ((lg = git_tree_entry_bypath(&e, s->root, dir)) < 0)
		return lg == GIT_ENOTFOUND
			       ? fbc_error_set(err, FBC_ENOTFOUND, dir, "no such directory")
			       : fbc_git_fail(err, lg, dir, "cannot read the tree");
	if (git_tree_entry_type(e) != GIT_OBJECT_TREE) {
		git_tree_entry_free(e);
		return fbc_error_set(err, FBC_EINVAL, dir, "not a directory");
	}
	lg = git_tree_lookup(out, s->g->repo, git_tree_entry_id(e));
	git_tree_entry_free(e);
	if (lg < 0)
		return fbc_git_fail(err, lg, dir, "cannot read the tree (corrupt repository?)");
	*owned = true;
	return 0;
}

static int blob_size_locked(uint64_t *size, fbc_git *g, const git_oid *id, const char *path,
			    fbc_error *err)
{
	git_odb *odb = NULL;
	size_t n = 0;
	git_object_t type;
	int lg;

	if ((lg = git_repository_odb(&odb, g->repo)) < 0)
		return fbc_git_fail(err, lg, path, "cannot open the object database");
	lg = git_odb_read_header(&n, &type, odb, id);
	git_odb_free(odb);
	if (lg < 0)
		return fbc_git_fail(err, GIT_ERROR, path,
				    "cannot read the object (corrupt or incomplete repository)");
	*size = n;
	return 0;
}

static int gt_list(void *self, fbc_vec *out, const char *dir, fbc_error *err)
{
	git_tree_state *s = self;
	git_tree *t = NULL;
	bool owned = false;
	int rc;

	fbc_git_lock(s->g);
	if ((rc = subtree_locked(&t, &owned, s, dir, err)) != 0)
		goto done;
	for (size_t i = 0; i < git_tree_entrycount(t); i++) {
		const git_tree_entry *te = git_tree_entry_byindex(t, i);
		fbc_tree_entry *e = fbc_vec_push(out);

		if (!e || !(e->name = strdup(git_tree_entry_name(te)))) {
			if (e)
				out->len--;
			rc = fbc_error_set(err, FBC_ENOMEM, dir, "out of memory");
			goto done;
		}
		e->kind = fbc_git_kind(git_tree_entry_filemode(te));
		fbc_git_hex(e->id, git_tree_entry_id(te));
		if (e->kind == FBC_TREE_FILE &&
		    (rc = blob_size_locked(&e->size, s->g, git_tree_entry_id(te), e->name, err)) !=
			    0)
			goto done;
	}
done:
	if (owned)
		git_tree_free(t);
	fbc_git_unlock(s->g);
	return rc;
}

/* Append the '/'-separated components of p to the front of todo. */
static char *prepend(const char *p, const char *rest)
{
	size_t a = strlen(p), b = rest ? strlen(rest) : 0;
	char *r = malloc(a + b + 2);

	if (!r)
		return NULL;
	memcpy(r, p, a);
	if (b) {
		r[a] = '/';
		memcpy(r + a + 1, rest, b + 1);
	} else {
		r[a] = '\0';
	}
	return r;
}

static int gt_follow(void *self, fbc_tree_entry *out, const char *path, fbc_error *err)
{
	git_tree_state *s = self;
	char *todo = strdup(path), *done = strdup(""), *cand = NULL;
	git_tree_entry *e = NULL;
	fbc_tree_kind kind = FBC_TREE_DIR;
	git_oid id;
	int links = 0, rc = 0, lg;

	git_oid_cpy(&id, git_tree_id(s->root));
	fbc_git_lock(s->g);
	if (!todo || !done) {
		rc = fbc_error_set(err, FBC_ENOMEM, path, "out of memory");
		goto done;
	}
	while (*todo) {
		char *slash = strchr(todo, '/');
		char *rest = slash ? slash + 1 : NULL, *next;

		if (slash)
			*slash = '\0';
		if (strcmp(todo, "") == 0 || strcmp(todo, ".") == 0) {
			/* nothing */
		} else if (strcmp(todo, "..") == 0) {
			char *cut;

			if (!*done) {
				rc = fbc_error_set(err, FBC_EINVAL, path,
						   "resolves outside the root");
				goto done;
			}
			cut = strrchr(done, '/');
			if (cut)
				*cut = '\0';
			else
				*done = '\0';
			kind = FBC_TREE_DIR;
		} else {
			if (kind != FBC_TREE_DIR) {
				rc = fbc_error_set(err, FBC_ENOTFOUND, path,
						   "%s is not a directory", done);
				goto done;
			}
			if (!(cand = fbc_tree_join(done, todo))) {
				rc = fbc_error_set(err, FBC_ENOMEM, path, "out of memory");
				goto done;
			}
			git_tree_entry_free(e);
			e = NULL;
			if ((lg = git_tree_entry_bypath(&e, s->root, cand)) < 0) {
				rc = lg == GIT_ENOTFOUND
					     ? fbc_error_set(err, FBC_ENOTFOUND, path,
							     "no such file or directory")
					     : fbc_git_fail(err, lg, path, "cannot read");
				goto done;
			}
			kind = fbc_git_kind(git_tree_entry_filemode(e));
			if (kind == FBC_TREE_LINK) {
				git_blob *b = NULL;
				char *target;

				if (++links > MAX_LINKS) {
					rc = fbc_error_set(err, FBC_ELIMIT, path,
							   "more than %d symbolic links (a loop?)",
							   MAX_LINKS);
					goto done;
				}
				if ((rc = fbc_git_blob_locked(&b, s->g, git_tree_entry_id(e), cand,
							      4096, err)) != 0)
					goto done;
				size_t tlen = (size_t)git_blob_rawsize(b);

				target = strndup(git_blob_rawcontent(b), tlen);
				git_blob_free(b);
				if (!target) {
					rc = fbc_error_set(err, FBC_ENOMEM, path, "out of memory");
					goto done;
				}
				if (target[0] == '/' || target[0] == '\0' ||
				    strlen(target) != tlen) {
					free(target);
					rc = fbc_error_set(err, FBC_EINVAL, path,
							   "link %s resolves outside the root",
							   cand);
					goto done;
				}
				next = prepend(target, rest);
				free(target);
				free(cand);
				cand = NULL;
				kind = FBC_TREE_DIR; /* done is unchanged: a directory */
				if (!next) {
					rc = fbc_error_set(err, FBC_ENOMEM, path, "out of memory");
					goto done;
				}
				free(todo);
				todo = next;
				continue;
			}
			git_oid_cpy(&id, git_tree_entry_id(e));
			free(done);
			done = cand;
			cand = NULL;
		}
		next = strdup(rest ? rest : "");
		if (!next) {
			rc = fbc_error_set(err, FBC_ENOMEM, path, "out of memory");
			goto done;
		}
		free(todo);
		todo = next;
	}
	memset(out, 0, sizeof(*out));
	out->kind = kind;
	if (!*done)
		git_oid_cpy(&id, git_tree_id(s->root));
	fbc_git_hex(out->id, &id);
	if (kind == FBC_TREE_FILE && (rc = blob_size_locked(&out->size, s->g, &id, path, err)) != 0)
		goto done;
	out->name = done;
	done = NULL;
done:
	git_tree_entry_free(e);
	fbc_git_unlock(s->g);
	free(todo);
	free(done);
	free(cand);
	return rc;
}

static int gt_read(void *self, fbc_tree_blob *out, const char *path, size_t max, fbc_error *err)
{
	git_tree_state *s = self;
	git_tree_entry *e = NULL;
	git_blob *b = NULL;
	int rc = 0, lg;

	fbc_git_lock(s->g);
	if ((lg = git_tree_entry_bypath(&e, s->root, path)) < 0) {
		rc = lg == GIT_ENOTFOUND ? fbc_error_set(err, FBC_ENOTFOUND, path, "no such file")
					 : fbc_git_fail(err, lg, path, "cannot read");
		goto done;
	}
	if (fbc_git_kind(git_tree_entry_filemode(e)) != FBC_TREE_FILE) {
		rc = fbc_error_set(err, FBC_EINVAL, path, "not a regular file");
		goto done;
	}
	if ((rc = fbc_git_blob_locked(&b, s->g, git_tree_entry_id(e), path, max, err)) != 0)
		goto done;
	out->len = (size_t)git_blob_rawsize(b);
	out->data = out->len ? git_blob_rawcontent(b) : NULL;
	out->priv = b;
done:
	git_tree_entry_free(e);
	fbc_git_unlock(s->g);
	return rc;
}

static void gt_release(void *self, fbc_tree_blob *blob)
{
	git_tree_state *s = self;

	fbc_git_lock(s->g);
	git_blob_free(blob->priv);
	fbc_git_unlock(s->g);
}

static void gt_free(void *self)
{
	git_tree_state *s = self;

	if (!s)
		return;
	if (s->root) {
		fbc_git_lock(s->g);
		git_tree_free(s->root);
		fbc_git_unlock(s->g);
	}
	fbc_git_free(s->g);
	free(s);
}

static const fbc_tree_ops git_tree_ops = {gt_list, gt_follow, gt_read, gt_release, gt_free};

int fbc_git_tree_open(fbc_tree **out, fbc_git *g, const char *rev, fbc_error *err)
{
	git_tree_state *s = calloc(1, sizeof(*s));
	git_commit *c = NULL;
	char label[1200], hex[FBC_GIT_ID_MAX];
	int rc, lg;

	if (!s)
		return fbc_error_set(err, FBC_ENOMEM, rev, "out of memory");
	fbc_git_lock(g);
	rc = fbc_git_commit_locked(&c, g, rev, err);
	if (rc == 0 && (lg = git_commit_tree(&s->root, c)) < 0)
		rc = fbc_git_fail(err, lg, rev, "cannot read the commit's tree");
	if (rc == 0)
		fbc_git_hex(hex, git_commit_id(c));
	git_commit_free(c);
	if (rc == 0)
		g->refs++;
	fbc_git_unlock(g);
	if (rc) {
		free(s);
		return rc;
	}
	s->g = g;
	snprintf(label, sizeof(label), "%s@%.12s", g->path, hex);
	return fbc_tree_create(out, &git_tree_ops, s, label, err);
}
