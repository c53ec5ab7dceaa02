/* The change set mapped to the layout (§3), and the `changes` check (§5). */
#include "pipeline/checks/internal.h"

#include <stdlib.h>
#include <string.h>

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

int chk_strvec_add(fbc_vec *v, const char *s)
{
	const char **slot;

	if (!s || !(slot = fbc_vec_push(v)))
		return FBC_ENOMEM;
	*slot = s;
	return 0;
}

void chk_strvec_sort_unique(fbc_vec *v)
{
	size_t w = 0;

	if (v->len < 2)
		return;
	qsort(v->items, v->len, sizeof(char *), cmp_str);
	for (size_t i = 0; i < v->len; i++)
		if (w == 0 || strcmp(*FBC_VEC_AT(v, const char *, w - 1),
				     *FBC_VEC_AT(v, const char *, i)) != 0)
			*FBC_VEC_AT(v, const char *, w++) = *FBC_VEC_AT(v, const char *, i);
	v->len = w;
}

bool chk_strvec_has(const fbc_vec *v, const char *s)
{
	for (size_t i = 0; i < v->len; i++)
		if (strcmp(*FBC_VEC_AT(v, const char *, i), s) == 0)
			return true;
	return false;
}

/* The i-th '/'-separated component of path (arena copy), or NULL. */
static const char *component(fbc_arena *a, const char *path, int i)
{
	const char *p = path, *end;

	for (; i > 0; i--) {
		p = strchr(p, '/');
		if (!p)
			return NULL;
		p++;
	}
	end = strchr(p, '/');
	return fbc_arena_strndup(a, p, end ? (size_t)(end - p) : strlen(p));
}

static int n_components(const char *path)
{
	int n = 1;

	for (const char *p = path; *p; p++)
		n += *p == '/';
	return n;
}

/* The first n components of path (arena copy). */
static const char *prefix(fbc_arena *a, const char *path, int n)
{
	const char *p = path;

	for (; n > 0 && p; n--) {
		p = strchr(p, '/');
		if (p && n > 1)
			p++;
	}
	return p ? fbc_arena_strndup(a, path, (size_t)(p - path)) : fbc_arena_strdup(a, path);
}

/* Does dir match a catalog glob ("catalogs/ *", "x/y"), component by component? */
static bool dir_glob(const char *glob, const char *path, size_t *consumed)
{
	const char *g = glob, *p = path;

	while (*g) {
		const char *ge = strchr(g, '/'), *pe = strchr(p, '/');
		size_t gl = ge ? (size_t)(ge - g) : strlen(g);
		size_t pl = pe ? (size_t)(pe - p) : strlen(p);

		if (!*p)
			return false;
		if (!(gl == 1 && g[0] == '*') && (gl != pl || strncmp(g, p, gl) != 0))
			return false;
		g += gl + (ge ? 1 : 0);
		p += pl;
		if (*g && *p != '/')
			return false;
		if (*p == '/' && *g)
			p++;
	}
	*consumed = (size_t)(p - path);
	return true;
}

static bool is_settings_file(const char *path)
{
	return strcmp(path, "config.yaml") == 0 || strcmp(path, ".fbcd.yaml") == 0 ||
	       strcmp(path, "CODEOWNERS") == 0 || strcmp(path, ".github/CODEOWNERS") == 0 ||
	       strcmp(path, "docs/CODEOWNERS") == 0;
}

static void map_operators(chk_ctx *c, chk_file *f)
{
	int n = n_components(f->path);
	const char *first = component(c->arena, f->path, 0);

	if (is_settings_file(f->path)) {
		f->kind = CHK_SETTINGS;
	} else if (strcmp(first, "operators") == 0 && n >= 3) {
		f->package = component(c->arena, f->path, 1);
		if (n == 3) {
			f->kind = CHK_PACKAGE; /* ci.yaml, Makefile, README */
		} else if (strcmp(component(c->arena, f->path, 2), "catalog-templates") == 0) {
			f->kind = CHK_TEMPLATE;
		} else {
			f->kind = CHK_BUNDLE;
			f->unit = prefix(c->arena, f->path, 3);
		}
	} else if (strcmp(first, "catalogs") == 0 && n >= 3) {
		f->kind = CHK_CATALOG;
		f->unit = prefix(c->arena, f->path, 2);
		if (n >= 4)
			f->package = component(c->arena, f->path, 2);
	} else {
		f->kind = CHK_OTHER;
	}
}

static void map_fbcd(chk_ctx *c, chk_file *f)
{
	const fbc_settings *s = &c->settings;
	size_t used;

	f->kind = CHK_OTHER;
	if (is_settings_file(f->path)) {
		f->kind = CHK_SETTINGS;
		return;
	}
	for (size_t i = 0; i < s->n_catalogs; i++)
		if (dir_glob(s->catalogs[i].path, f->path, &used) && f->path[used] == '/') {
			const char *rest = f->path + used + 1;

			f->kind = CHK_CATALOG;
			f->unit = fbc_arena_strndup(c->arena, f->path, used);
			if (strchr(rest, '/'))
				f->package = component(c->arena, rest, 0);
			return;
		}
	if (s->templates && fbc_codeowners_match(s->templates, f->path)) {
		f->kind = CHK_TEMPLATE;
		if (strncmp(f->path, "operators/", 10) == 0)
			f->package = component(c->arena, f->path, 1);
		return;
	}
	if (s->bundles && dir_glob(s->bundles, f->path, &used) && f->path[used] == '/') {
		const char *unit = fbc_arena_strndup(c->arena, f->path, used);
		const char *slash = strrchr(unit, '/');

		f->kind = CHK_BUNDLE;
		f->unit = unit;
		if (slash && slash != unit) { /* the bundle directory's parent names the package */
			const char *ps = slash - 1;

			while (ps > unit && ps[-1] != '/')
				ps--;
			f->package = fbc_arena_strndup(c->arena, ps, (size_t)(slash - ps));
		}
	}
}

static void map_plain(chk_ctx *c, chk_file *f)
{
	if (is_settings_file(f->path) || f->path[0] == '.') {
		f->kind = is_settings_file(f->path) ? CHK_SETTINGS : CHK_OTHER;
		return;
	}
	f->kind = CHK_CATALOG;
	f->unit = "";
	if (strchr(f->path, '/'))
		f->package = component(c->arena, f->path, 0);
}

const char *chk_package_of(const chk_ctx *c, const char *path)
{
	chk_file f = {.path = path};

	switch (c->settings.layout) {
	case FBC_LAYOUT_OPERATORS:
		map_operators((chk_ctx *)c, &f);
		break;
	case FBC_LAYOUT_FBCD:
		map_fbcd((chk_ctx *)c, &f);
		break;
	default:
		map_plain((chk_ctx *)c, &f);
		break;
	}
	return f.package;
}

static bool exists(chk_ctx *c, fbc_tree *t, const char *dir)
{
	fbc_tree_entry e = {0};
	fbc_error e2;
	bool ok = fbc_tree_stat(t, &e, dir, &e2) == 0 && e.kind == FBC_TREE_DIR;

	fbc_tree_entry_dispose(&e);
	return ok;
}

int chk_changes_map(chk_ctx *c, fbc_error *err)
{
	for (size_t i = 0; i < c->changes.len; i++) {
		const fbc_git_change *ch = FBC_VEC_AT(&c->changes, fbc_git_change, i);
		chk_file *f = fbc_vec_push(&c->files);

		if (!f)
			return fbc_error_set(err, FBC_ENOMEM, "", "out of memory");
		f->change = ch;
		f->path = fbc_git_change_path(ch);
		switch (c->settings.layout) {
		case FBC_LAYOUT_OPERATORS:
			map_operators(c, f);
			break;
		case FBC_LAYOUT_FBCD:
			map_fbcd(c, f);
			break;
		default:
			map_plain(c, f);
			break;
		}
		/* a rename out of a package touches the old one too */
		if (ch->status == FBC_GIT_RENAMED) {
			const char *op = chk_package_of(c, ch->old_path);

			if (op && chk_strvec_add(&c->packages, op))
				return fbc_error_set(err, FBC_ENOMEM, "", "out of memory");
		}
		if (f->package && chk_strvec_add(&c->packages, f->package))
			return fbc_error_set(err, FBC_ENOMEM, "", "out of memory");
		if ((f->kind == CHK_CATALOG && chk_strvec_add(&c->catalog_dirs, f->unit)) ||
		    (f->kind == CHK_TEMPLATE && chk_strvec_add(&c->templates, f->path)) ||
		    ((f->kind == CHK_OTHER || f->kind == CHK_SETTINGS) &&
		     chk_strvec_add(&c->other, f->path)))
			return fbc_error_set(err, FBC_ENOMEM, "", "out of memory");
		if (f->kind == CHK_BUNDLE) {
			chk_bundle *b = NULL;

			for (size_t k = 0; k < c->bundles.len; k++)
				if (strcmp(FBC_VEC_AT(&c->bundles, chk_bundle, k)->dir, f->unit) ==
				    0)
					b = FBC_VEC_AT(&c->bundles, chk_bundle, k);
			if (!b) {
				bool at_mb = exists(c, c->mb_tree, f->unit);
				bool at_head = exists(c, c->head_tree, f->unit);

				if (!(b = fbc_vec_push(&c->bundles)))
					return fbc_error_set(err, FBC_ENOMEM, "", "out of memory");
				b->dir = f->unit;
				b->package = f->package;
				b->first_path = f->path;
				b->state = !at_mb     ? CHK_B_ADDED
					   : !at_head ? CHK_B_DELETED
						      : CHK_B_MODIFIED;
			}
		}
	}
	chk_strvec_sort_unique(&c->packages);
	chk_strvec_sort_unique(&c->catalog_dirs);
	chk_strvec_sort_unique(&c->templates);
	chk_strvec_sort_unique(&c->other);
	for (size_t i = 0; i < c->catalog_dirs.len; i++)
		if (chk_strvec_add(&c->affected, *FBC_VEC_AT(&c->catalog_dirs, const char *, i)))
			return fbc_error_set(err, FBC_ENOMEM, "", "out of memory");
	return 0;
}

/* ------------------------------------------------------------ the check */

static const char *first_file_of_package(const chk_ctx *c, const char *pkg)
{
	for (size_t i = 0; i < c->files.len; i++) {
		const chk_file *f = FBC_VEC_AT(&c->files, chk_file, i);

		if (f->package && strcmp(f->package, pkg) == 0)
			return f->path;
	}
	return "";
}

/* Does some catalog at head still list a bundle whose image or name comes from dir? */
static int bundle_referenced(const char **where, int *line, chk_ctx *c, const chk_bundle *b,
			     fbc_error *err)
{
	fbc_vec dirs;
	const char *version = strrchr(b->dir, '/');
	int rc = 0;

	*where = NULL;
	if (!version || !b->package)
		return 0;
	version++;
	fbc_vec_init(&dirs, sizeof(char *));
	if ((rc = chk_catalog_dirs(&dirs, c, c->head_tree, err)) != 0)
		goto done;
	for (size_t i = 0; i < dirs.len && !*where; i++) {
		chk_catalog *k = NULL;
		fbc_package *p;

		if ((rc = chk_catalog_get(&k, c, true, *FBC_VEC_AT(&dirs, const char *, i), err)))
			goto done;
		if (!k || !k->cat || !(p = fbc_catalog_package(k->cat, b->package)))
			continue;
		for (size_t j = 0; j < p->n_bundles; j++)
			if (strcmp(p->bundles[j]->version, version) == 0) {
				*where = fbc_arena_printf(c->arena, "%s%s%s", k->dir,
							  *k->dir ? "/" : "",
							  p->bundles[j]->loc.file);
				*line = p->bundles[j]->loc.line;
				break;
			}
	}
done:
	fbc_vec_dispose(&dirs);
	return rc;
}

int chk_run_changes(chk_ctx *c, chk_out *o, fbc_error *err)
{
	size_t n_added = 0, n_bundle_files = 0, n_catalog_files = 0;
	const char *first_bundle = NULL, *first_catalog = NULL;
	int rc;

	for (size_t i = 0; i < c->files.len; i++) {
		const chk_file *f = FBC_VEC_AT(&c->files, chk_file, i);

		if (f->kind == CHK_OTHER &&
		    (rc = chk_add(
			     o, FBC_LEVEL_FAILURE, f->path, 0, "outside-layout",
			     "%s is outside the paths of the repository's layout (%s); move it "
			     "or change it in a separate pull request",
			     f->path,
			     c->settings.layout == FBC_LAYOUT_OPERATORS
				     ? "operators/<package>/..., catalogs/<catalog>/<package>/..."
			     : c->settings.layout == FBC_LAYOUT_FBCD
				     ? "the catalogs, bundles and templates of .fbcd.yaml"
				     : "the catalog")))
			return rc;
		if (f->kind == CHK_BUNDLE) {
			n_bundle_files++;
			if (!first_bundle)
				first_bundle = f->path;
		}
		if (f->kind == CHK_CATALOG) {
			n_catalog_files++;
			if (!first_catalog)
				first_catalog = f->path;
		}
	}
	if (c->bundles.len > 0 && c->packages.len > 1) {
		/* the package of the first bundle is the one the change is about */
		const char *main_pkg = FBC_VEC_AT(&c->bundles, chk_bundle, 0)->package;

		for (size_t i = 0; i < c->packages.len; i++) {
			const char *p = *FBC_VEC_AT(&c->packages, const char *, i);

			if (main_pkg && strcmp(p, main_pkg) == 0)
				continue;
			if ((rc = chk_add(
				     o, FBC_LEVEL_FAILURE, first_file_of_package(c, p), 0,
				     "many-packages",
				     "a pull request that changes bundles must touch one package; "
				     "this one changes bundles of %s and also touches %s",
				     main_pkg ? main_pkg : "?", p)))
				return rc;
		}
	}
	for (size_t i = 0; i < c->bundles.len; i++) {
		const chk_bundle *b = FBC_VEC_AT(&c->bundles, chk_bundle, i);

		if (b->state == CHK_B_ADDED && ++n_added == 2 &&
		    (rc = chk_add(o, FBC_LEVEL_FAILURE, b->first_path, 0, "many-bundles",
				  "a pull request adds at most one bundle; %s is the second",
				  b->dir)))
			return rc;
		if (b->state == CHK_B_MODIFIED) {
			for (size_t k = 0; k < c->files.len; k++) {
				const chk_file *f = FBC_VEC_AT(&c->files, chk_file, k);

				if (f->kind != CHK_BUNDLE || strcmp(f->unit, b->dir) != 0)
					continue;
				if ((rc = chk_add(
					     o, FBC_LEVEL_FAILURE, f->path, 0, "bundle-modified",
					     "%s belongs to the existing bundle %s, which must "
					     "never change; publish a new version instead",
					     f->path, b->dir)))
					return rc;
			}
		}
		if (b->state == CHK_B_DELETED) {
			const char *where = NULL;
			int line = 0;

			if ((rc = bundle_referenced(&where, &line, c, b, err)) != 0)
				return rc;
			if (where &&
			    (rc = chk_add(o, FBC_LEVEL_FAILURE, where, line, "bundle-referenced",
					  "bundle %s is deleted but this catalog still lists "
					  "it; remove it from the catalogs first",
					  b->dir)))
				return rc;
		}
	}
	if (n_bundle_files && n_catalog_files &&
	    (rc = chk_add(o, FBC_LEVEL_FAILURE, first_catalog, 0, "mixed",
			  "bundle and catalog changes are mixed (bundle file %s, catalog file %s): "
			  "add the bundle first, then update the catalogs in a second pull request",
			  first_bundle, first_catalog)))
		return rc;
	return chk_summary(o,
			   "%zu files: %zu packages, %zu bundles, %zu catalogs, %zu templates, "
			   "%zu other",
			   c->files.len, c->packages.len, c->bundles.len, c->catalog_dirs.len,
			   c->templates.len, c->other.len);
}
