/* fbc_git: repositories, revisions, merge bases, diffs, blobs and history over libgit2. */
#include "pipeline/git/git.h"
#include "pipeline/git/internal.h"

#include <git2.h>
#include <stdlib.h>
#include <string.h>

int fbc_git_fail(fbc_error *err, int lgrc, const char *where, const char *what)
{
	const git_error *e = git_error_last();
	int code = FBC_EIO;

	if (lgrc == GIT_ENOTFOUND)
		code = FBC_ENOTFOUND;
	else if (lgrc == GIT_EAMBIGUOUS || lgrc == GIT_EINVALIDSPEC)
		code = FBC_EINVAL;
	else if (e && e->klass == GIT_ERROR_NOMEMORY)
		code = FBC_ENOMEM;
	return fbc_error_set(err, code, where, "%s: %s", what,
			     e && e->message ? e->message : "libgit2 error");
}

void fbc_git_lock(fbc_git *g)
{
	pthread_mutex_lock(&g->mu);
}

void fbc_git_unlock(fbc_git *g)
{
	pthread_mutex_unlock(&g->mu);
}

void fbc_git_ref(fbc_git *g)
{
	fbc_git_lock(g);
	g->refs++;
	fbc_git_unlock(g);
}

/* libgit2 is initialised once for the process and never shut down: its per-thread state
 * must outlive every thread that used it (the loader's pool), which a shutdown with the
 * last handle would not guarantee. */
static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static int init_rc;

static void init_libgit2(void)
{
	init_rc = git_libgit2_init();
	/* Objects are read by id, as git itself reads them: without re-hashing every object
	 * read (libgit2's default, which git does only in fsck). A damaged loose object or pack
	 * entry still fails to inflate (zlib's checksum); re-hashing cost up to a tenth of a
	 * pull-request check that renders templates. */
	if (init_rc >= 0)
		git_libgit2_opts(GIT_OPT_ENABLE_STRICT_HASH_VERIFICATION, 0);
}

int fbc_git_open(fbc_git **out, const char *path, fbc_error *err)
{
	fbc_git *g = NULL;
	int lg;

	pthread_once(&init_once, init_libgit2);
	if (init_rc < 0)
		return fbc_git_fail(err, -1, path, "cannot initialise libgit2");
	if (!(g = calloc(1, sizeof(*g))) || !(g->path = strdup(path))) {
		free(g);
		return fbc_error_set(err, FBC_ENOMEM, path, "out of memory");
	}
	pthread_mutex_init(&g->mu, NULL);
	g->refs = 1;
	lg = git_repository_open_ext(&g->repo, path, GIT_REPOSITORY_OPEN_NO_SEARCH, NULL);
	if (lg < 0) {
		int rc = fbc_git_fail(err, lg, path, "not a git repository");

		fbc_git_free(g);
		return rc;
	}
	*out = g;
	return 0;
}

void fbc_git_free(fbc_git *g)
{
	int last;

	if (!g)
		return;
	fbc_git_lock(g);
	last = --g->refs == 0;
	fbc_git_unlock(g);
	if (!last)
		return;
	git_repository_free(g->repo);
	pthread_mutex_destroy(&g->mu);
	free(g->path);
	free(g);
}

const char *fbc_git_path(const fbc_git *g)
{
	return g->path;
}

void fbc_git_hex(char out[FBC_GIT_ID_MAX], const git_oid *oid)
{
	git_oid_tostr(out, FBC_GIT_ID_MAX, oid);
}

/* Under the lock: rev -> commit. */
int fbc_git_commit_locked(git_commit **out, fbc_git *g, const char *rev, fbc_error *err)
{
	git_object *obj = NULL, *peeled = NULL;
	int lg;

	if (!rev || !*rev)
		return fbc_error_set(err, FBC_EINVAL, "revision", "empty revision");
	{
		/* a reference name first, by hand: libgit2 1.5's revparse leaks the reference
		 * when its target object is missing (a corrupt repository) */
		git_reference *ref = NULL;

		if (git_reference_dwim(&ref, g->repo, rev) == 0) {
			lg = git_reference_peel(&peeled, ref, GIT_OBJECT_COMMIT);
			git_reference_free(ref);
			if (lg == 0) {
				*out = (git_commit *)peeled;
				return 0;
			}
			if (lg == GIT_EPEEL || lg == GIT_EINVALIDSPEC)
				return fbc_error_set(err, FBC_EINVAL, rev, "not a commit");
			return fbc_git_fail(err, lg == GIT_ENOTFOUND ? GIT_ERROR : lg, rev,
					    "cannot read the commit (corrupt or incomplete "
					    "repository?)");
		}
		git_error_clear();
	}
	lg = git_revparse_single(&obj, g->repo, rev);
	if (lg < 0)
		return fbc_git_fail(err, lg, rev, "cannot resolve revision");
	lg = git_object_peel(&peeled, obj, GIT_OBJECT_COMMIT);
	git_object_free(obj);
	if (lg < 0) {
		if (lg == GIT_ENOTFOUND || lg == GIT_EINVALIDSPEC || lg == GIT_EPEEL)
			return fbc_error_set(err, FBC_EINVAL, rev, "not a commit");
		return fbc_git_fail(err, lg, rev, "cannot read commit");
	}
	*out = (git_commit *)peeled;
	return 0;
}

int fbc_git_resolve(char out[FBC_GIT_ID_MAX], fbc_git *g, const char *rev, fbc_error *err)
{
	git_commit *c = NULL;
	int rc;

	fbc_git_lock(g);
	rc = fbc_git_commit_locked(&c, g, rev, err);
	if (rc == 0)
		fbc_git_hex(out, git_commit_id(c));
	git_commit_free(c);
	fbc_git_unlock(g);
	return rc;
}

int fbc_git_commit_time(int64_t *out, fbc_git *g, const char *rev, fbc_error *err)
{
	git_commit *c = NULL;
	int rc;

	fbc_git_lock(g);
	rc = fbc_git_commit_locked(&c, g, rev, err);
	if (rc == 0)
		*out = (int64_t)git_commit_time(c);
	git_commit_free(c);
	fbc_git_unlock(g);
	return rc;
}

int fbc_git_merge_base(char out[FBC_GIT_ID_MAX], fbc_git *g, const char *a, const char *b,
		       fbc_error *err)
{
	git_commit *ca = NULL, *cb = NULL;
	git_oid base;
	int rc, lg;

	fbc_git_lock(g);
	if ((rc = fbc_git_commit_locked(&ca, g, a, err)) != 0 ||
	    (rc = fbc_git_commit_locked(&cb, g, b, err)) != 0)
		goto done;
	lg = git_merge_base(&base, g->repo, git_commit_id(ca), git_commit_id(cb));
	if (lg == GIT_ENOTFOUND) {
		rc = fbc_error_set(err, FBC_ENOTFOUND, b,
				   "%s and %s have no common ancestor (unrelated histories, or a "
				   "shallow clone that lacks it)",
				   a, b);
		goto done;
	}
	if (lg < 0) {
		rc = fbc_git_fail(err, lg, b, "cannot compute the merge base");
		goto done;
	}
	fbc_git_hex(out, &base);
done:
	git_commit_free(ca);
	git_commit_free(cb);
	fbc_git_unlock(g);
	return rc;
}

static fbc_tree_kind kind_of_mode(git_filemode_t m)
{
	switch (m) {
	case GIT_FILEMODE_TREE:
		return FBC_TREE_DIR;
	case GIT_FILEMODE_BLOB:
	case GIT_FILEMODE_BLOB_EXECUTABLE:
		return FBC_TREE_FILE;
	case GIT_FILEMODE_LINK:
		return FBC_TREE_LINK;
	default:
		return FBC_TREE_OTHER;
	}
}

fbc_tree_kind fbc_git_kind(unsigned mode)
{
	return kind_of_mode((git_filemode_t)mode);
}

int fbc_git_object_id(char out[FBC_GIT_ID_MAX], fbc_tree_kind *kind, fbc_git *g, const char *rev,
		      const char *path, fbc_error *err)
{
	git_commit *c = NULL;
	git_tree *t = NULL;
	git_tree_entry *e = NULL;
	int rc, lg;

	fbc_git_lock(g);
	if ((rc = fbc_git_commit_locked(&c, g, rev, err)) != 0)
		goto done;
	if ((lg = git_commit_tree(&t, c)) < 0) {
		rc = fbc_git_fail(err, lg, rev, "cannot read the commit's tree");
		goto done;
	}
	if (!path || !*path) {
		fbc_git_hex(out, git_tree_id(t));
		if (kind)
			*kind = FBC_TREE_DIR;
		goto done;
	}
	if ((lg = git_tree_entry_bypath(&e, t, path)) < 0) {
		rc = fbc_git_fail(err, lg, path, "not in the commit");
		goto done;
	}
	fbc_git_hex(out, git_tree_entry_id(e));
	if (kind)
		*kind = kind_of_mode(git_tree_entry_filemode(e));
done:
	git_tree_entry_free(e);
	git_tree_free(t);
	git_commit_free(c);
	fbc_git_unlock(g);
	return rc;
}

/* ------------------------------------------------------------------ diff */

void fbc_git_changes_dispose(fbc_vec *changes)
{
	for (size_t i = 0; i < changes->len; i++) {
		fbc_git_change *c = FBC_VEC_AT(changes, fbc_git_change, i);

		free(c->old_path);
		free(c->new_path);
	}
	fbc_vec_dispose(changes);
}

const char *fbc_git_change_path(const fbc_git_change *c)
{
	return c->new_path ? c->new_path : c->old_path;
}

static int cmp_change(const void *a, const void *b)
{
	return strcmp(fbc_git_change_path(a), fbc_git_change_path(b));
}

int fbc_git_diff(fbc_vec *out, fbc_git *g, const char *from, const char *to, fbc_error *err)
{
	git_commit *ca = NULL, *cb = NULL;
	git_tree *ta = NULL, *tb = NULL;
	git_diff *diff = NULL;
	git_diff_options opts;
	git_diff_find_options fopts;
	size_t start = out->len;
	int rc, lg;

	git_diff_options_init(&opts, GIT_DIFF_OPTIONS_VERSION);
	git_diff_find_options_init(&fopts, GIT_DIFF_FIND_OPTIONS_VERSION);
	fbc_git_lock(g);
	if ((rc = fbc_git_commit_locked(&ca, g, from, err)) != 0 ||
	    (rc = fbc_git_commit_locked(&cb, g, to, err)) != 0)
		goto done;
	if ((lg = git_commit_tree(&ta, ca)) < 0 || (lg = git_commit_tree(&tb, cb)) < 0) {
		rc = fbc_git_fail(err, lg, to, "cannot read the commit's tree");
		goto done;
	}
	opts.flags = GIT_DIFF_INCLUDE_TYPECHANGE | GIT_DIFF_SKIP_BINARY_CHECK;
	if ((lg = git_diff_tree_to_tree(&diff, g->repo, ta, tb, &opts)) < 0) {
		rc = fbc_git_fail(err, lg, to, "cannot diff the trees");
		goto done;
	}
	fopts.flags = GIT_DIFF_FIND_RENAMES;
	fopts.rename_limit = 1000;
	if ((lg = git_diff_find_similar(diff, &fopts)) < 0) {
		rc = fbc_git_fail(err, lg, to, "cannot detect renames");
		goto done;
	}
	for (size_t i = 0; i < git_diff_num_deltas(diff); i++) {
		const git_diff_delta *d = git_diff_get_delta(diff, i);
		fbc_git_change *c = fbc_vec_push(out);
		fbc_git_status st;

		if (!c) {
			rc = fbc_error_set(err, FBC_ENOMEM, to, "out of memory");
			goto done;
		}
		switch (d->status) {
		case GIT_DELTA_ADDED:
			st = FBC_GIT_ADDED;
			break;
		case GIT_DELTA_DELETED:
			st = FBC_GIT_DELETED;
			break;
		case GIT_DELTA_RENAMED:
			st = FBC_GIT_RENAMED;
			break;
		case GIT_DELTA_TYPECHANGE:
			st = FBC_GIT_TYPECHANGE;
			break;
		default:
			st = FBC_GIT_MODIFIED;
			break;
		}
		c->status = st;
		if (st != FBC_GIT_ADDED) {
			c->old_path = strdup(d->old_file.path);
			fbc_git_hex(c->old_id, &d->old_file.id);
			c->old_mode = d->old_file.mode;
		}
		if (st != FBC_GIT_DELETED) {
			c->new_path = strdup(d->new_file.path);
			fbc_git_hex(c->new_id, &d->new_file.id);
			c->new_mode = d->new_file.mode;
		}
		if ((st != FBC_GIT_ADDED && !c->old_path) ||
		    (st != FBC_GIT_DELETED && !c->new_path)) {
			rc = fbc_error_set(err, FBC_ENOMEM, to, "out of memory");
			goto done;
		}
	}
	if (out->len - start > 1)
		qsort(FBC_VEC_AT(out, fbc_git_change, start), out->len - start,
		      sizeof(fbc_git_change), cmp_change);
done:
	git_diff_free(diff);
	git_tree_free(ta);
	git_tree_free(tb);
	git_commit_free(ca);
	git_commit_free(cb);
	fbc_git_unlock(g);
	return rc;
}

/* ------------------------------------------------------------------ blobs */

int fbc_git_read(char **data, size_t *len, fbc_git *g, const char *rev, const char *path,
		 size_t max, fbc_error *err)
{
	git_commit *c = NULL;
	git_tree *t = NULL;
	git_tree_entry *e = NULL;
	git_blob *b = NULL;
	char *copy = NULL;
	int rc, lg;

	fbc_git_lock(g);
	if ((rc = fbc_git_commit_locked(&c, g, rev, err)) != 0)
		goto done;
	if ((lg = git_commit_tree(&t, c)) < 0 || (lg = git_tree_entry_bypath(&e, t, path)) < 0) {
		rc = fbc_git_fail(err, lg, path, "not in the commit");
		goto done;
	}
	if (kind_of_mode(git_tree_entry_filemode(e)) != FBC_TREE_FILE) {
		rc = fbc_error_set(err, FBC_EINVAL, path, "not a regular file");
		goto done;
	}
	if ((rc = fbc_git_blob_locked(&b, g, git_tree_entry_id(e), path, max, err)) != 0)
		goto done;
	{
		size_t n = (size_t)git_blob_rawsize(b);

		if (!(copy = malloc(n + 1))) {
			rc = fbc_error_set(err, FBC_ENOMEM, path, "out of memory");
			goto done;
		}
		if (n)
			memcpy(copy, git_blob_rawcontent(b), n);
		copy[n] = '\0';
		*data = copy;
		*len = n;
	}
done:
	git_blob_free(b);
	git_tree_entry_free(e);
	git_tree_free(t);
	git_commit_free(c);
	fbc_git_unlock(g);
	return rc;
}

int fbc_git_blob_locked(git_blob **out, fbc_git *g, const git_oid *id, const char *path, size_t max,
			fbc_error *err)
{
	git_odb *odb = NULL;
	size_t size = 0;
	git_object_t type;
	int lg;

	/* the header first: a 100 MB blob over the limit is never inflated */
	if ((lg = git_repository_odb(&odb, g->repo)) < 0)
		return fbc_git_fail(err, lg, path, "cannot open the object database");
	lg = git_odb_read_header(&size, &type, odb, id);
	git_odb_free(odb);
	if (lg < 0)
		return fbc_git_fail(err, lg == GIT_ENOTFOUND ? GIT_ERROR : lg, path,
				    "cannot read the object (corrupt or incomplete repository)");
	if (size > max)
		return fbc_error_set(err, FBC_ELIMIT, path,
				     "file is %zu bytes, over the limit of %zu", size, max);
	if ((lg = git_blob_lookup(out, g->repo, id)) < 0)
		return fbc_git_fail(err, lg == GIT_ENOTFOUND ? GIT_ERROR : lg, path,
				    "cannot read the blob (corrupt or incomplete repository)");
	return 0;
}

/* ---------------------------------------------------------------- history */

void fbc_git_commits_dispose(fbc_vec *commits)
{
	for (size_t i = 0; i < commits->len; i++) {
		fbc_git_commit *c = FBC_VEC_AT(commits, fbc_git_commit, i);

		free(c->summary);
		free(c->author);
	}
	fbc_vec_dispose(commits);
}

int fbc_git_log(fbc_vec *out, fbc_git *g, const char *rev, int first_parent, size_t max,
		fbc_error *err)
{
	git_commit *tip = NULL;
	git_revwalk *walk = NULL;
	git_oid oid;
	int rc, lg;

	fbc_git_lock(g);
	if ((rc = fbc_git_commit_locked(&tip, g, rev, err)) != 0)
		goto done;
	if ((lg = git_revwalk_new(&walk, g->repo)) < 0 ||
	    (lg = git_revwalk_sorting(walk, GIT_SORT_TOPOLOGICAL | GIT_SORT_REVERSE)) < 0 ||
	    (first_parent && (lg = git_revwalk_simplify_first_parent(walk)) < 0) ||
	    (lg = git_revwalk_push(walk, git_commit_id(tip))) < 0) {
		rc = fbc_git_fail(err, lg, rev, "cannot walk the history");
		goto done;
	}
	while ((lg = git_revwalk_next(&oid, walk)) == 0) {
		git_commit *c = NULL;
		fbc_git_commit *o;
		const char *sum, *au;

		if (max && out->len >= max) {
			rc = fbc_error_set(err, FBC_ELIMIT, rev, "more than %zu commits", max);
			goto done;
		}
		if ((lg = git_commit_lookup(&c, g->repo, &oid)) < 0) {
			rc = fbc_git_fail(err, lg, rev, "cannot read a commit of the history");
			goto done;
		}
		if (!(o = fbc_vec_push(out))) {
			git_commit_free(c);
			rc = fbc_error_set(err, FBC_ENOMEM, rev, "out of memory");
			goto done;
		}
		fbc_git_hex(o->id, &oid);
		o->time = (int64_t)git_commit_time(c);
		o->parents = git_commit_parentcount(c);
		sum = git_commit_summary(c);
		au = git_commit_author(c) ? git_commit_author(c)->name : NULL;
		o->summary = strdup(sum ? sum : "");
		o->author = strdup(au ? au : "");
		git_commit_free(c);
		if (!o->summary || !o->author) {
			rc = fbc_error_set(err, FBC_ENOMEM, rev, "out of memory");
			goto done;
		}
	}
	if (lg != GIT_ITEROVER)
		rc = fbc_git_fail(err, lg, rev, "cannot walk the history (incomplete repository?)");
done:
	git_revwalk_free(walk);
	git_commit_free(tip);
	fbc_git_unlock(g);
	return rc;
}

void fbc_git_added_dispose(fbc_vec *added)
{
	for (size_t i = 0; i < added->len; i++)
		free(FBC_VEC_AT(added, fbc_git_added, i)->path);
	fbc_vec_dispose(added);
}

/* Names of the directories directly under prefix in commit c (sorted, as git
 * trees are). Missing prefix: nothing. */
static int subdirs_locked(fbc_vec *names, fbc_git *g, git_commit *c, const char *prefix,
			  git_oid *prefix_id, fbc_error *err)
{
	git_tree *root = NULL, *sub = NULL;
	git_tree_entry *e = NULL;
	int rc = 0, lg;

	if ((lg = git_commit_tree(&root, c)) < 0)
		return fbc_git_fail(err, lg, prefix, "cannot read a commit's tree");
	if (*prefix) {
		if ((lg = git_tree_entry_bypath(&e, root, prefix)) < 0 ||
		    git_tree_entry_type(e) != GIT_OBJECT_TREE) {
			memset(prefix_id, 0, sizeof(*prefix_id));
			goto done; /* absent here */
		}
		git_oid_cpy(prefix_id, git_tree_entry_id(e));
		if ((lg = git_tree_lookup(&sub, g->repo, git_tree_entry_id(e))) < 0) {
			rc = fbc_git_fail(err, lg, prefix, "cannot read a tree");
			goto done;
		}
	} else {
		git_oid_cpy(prefix_id, git_tree_id(root));
	}
	for (size_t i = 0; i < git_tree_entrycount(sub ? sub : root); i++) {
		const git_tree_entry *te = git_tree_entry_byindex(sub ? sub : root, i);
		char **slot;

		if (git_tree_entry_type(te) != GIT_OBJECT_TREE)
			continue;
		if (!(slot = fbc_vec_push(names)) || !(*slot = strdup(git_tree_entry_name(te)))) {
			if (slot)
				names->len--;
			rc = fbc_error_set(err, FBC_ENOMEM, prefix, "out of memory");
			goto done;
		}
	}
done:
	git_tree_entry_free(e);
	git_tree_free(sub);
	git_tree_free(root);
	return rc;
}

static void names_dispose(fbc_vec *names)
{
	for (size_t i = 0; i < names->len; i++)
		free(*FBC_VEC_AT(names, char *, i));
	names->len = 0;
}

static int has_name(const fbc_vec *names, const char *name)
{
	for (size_t i = 0; i < names->len; i++)
		if (strcmp(*FBC_VEC_AT(names, char *, i), name) == 0)
			return 1;
	return 0;
}

int fbc_git_first_added(fbc_vec *out, fbc_git *g, const char *rev, const char *prefix,
			fbc_error *err)
{
	fbc_vec commits, names, final;
	git_oid last_id, cur_id;
	int rc;

	fbc_vec_init(&commits, sizeof(fbc_git_commit));
	fbc_vec_init(&names, sizeof(char *));
	fbc_vec_init(&final, sizeof(char *));
	memset(&last_id, 0, sizeof(last_id));
	if ((rc = fbc_git_log(&commits, g, rev, 1, 0, err)) != 0)
		goto done;
	fbc_git_lock(g);
	for (size_t i = 0; i < commits.len && rc == 0; i++) {
		const fbc_git_commit *ci = FBC_VEC_AT(&commits, fbc_git_commit, i);
		git_commit *c = NULL;
		git_oid oid;

		git_oid_fromstr(&oid, ci->id);
		if (git_commit_lookup(&c, g->repo, &oid) < 0) {
			rc = fbc_git_fail(err, -1, ci->id, "cannot read a commit");
			break;
		}
		names_dispose(&names);
		rc = subdirs_locked(&names, g, c, prefix, &cur_id, err);
		if (i + 1 == commits.len && rc == 0) {
			for (size_t k = 0; k < names.len && rc == 0; k++) {
				char **slot = fbc_vec_push(&final);

				if (!slot || !(*slot = strdup(*FBC_VEC_AT(&names, char *, k)))) {
					if (slot)
						final.len--;
					rc = fbc_error_set(err, FBC_ENOMEM, prefix,
							   "out of memory");
				}
			}
		}
		git_commit_free(c);
		if (rc || git_oid_equal(&cur_id, &last_id))
			continue; /* unchanged prefix: nothing new here */
		git_oid_cpy(&last_id, &cur_id);
		for (size_t k = 0; k < names.len && rc == 0; k++) {
			const char *n = *FBC_VEC_AT(&names, char *, k);
			char *p = fbc_tree_join(prefix, n);
			bool seen = false;
			fbc_git_added *a;

			for (size_t j = 0; p && j < out->len; j++)
				if (strcmp(FBC_VEC_AT(out, fbc_git_added, j)->path, p) == 0)
					seen = true;
			if (seen) {
				free(p);
				continue;
			}
			if (!p || !(a = fbc_vec_push(out))) {
				free(p);
				rc = fbc_error_set(err, FBC_ENOMEM, prefix, "out of memory");
				break;
			}
			a->path = p;
			memcpy(a->commit, ci->id, sizeof(a->commit));
			a->time = ci->time;
		}
	}
	fbc_git_unlock(g);
	/* drop directories gone at rev, keeping the order */
	if (rc == 0) {
		size_t w = 0;
		size_t plen = *prefix ? strlen(prefix) + 1 : 0;

		for (size_t i = 0; i < out->len; i++) {
			fbc_git_added *a = FBC_VEC_AT(out, fbc_git_added, i);

			if (has_name(&final, a->path + plen))
				*FBC_VEC_AT(out, fbc_git_added, w++) = *a;
			else
				free(a->path);
		}
		out->len = w;
	}
done:
	names_dispose(&names);
	fbc_vec_dispose(&names);
	names_dispose(&final);
	fbc_vec_dispose(&final);
	fbc_git_commits_dispose(&commits);
	return rc;
}
