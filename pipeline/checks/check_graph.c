/* `graph` (§5.3): each touched package's channels at the merge base and at head, classic semantics.
 */
#include "pipeline/checks/internal.h"
#include "service/fbc/graph.h"

#include <stdio.h>
#include <string.h>

static const char *repo_path(chk_ctx *c, const chk_catalog *k, const char *file)
{
	if (!file || !*file)
		return k->dir;
	return *k->dir ? fbc_arena_printf(c->arena, "%s/%s", k->dir, file) : file;
}

/* The line of an entry's name inside its channel blob (head). */
static int entry_line(chk_ctx *c, const chk_catalog *k, const fbc_channel *ch, const char *name)
{
	const char *path = repo_path(c, k, ch->loc.file);
	char needle[1024];
	int line;

	snprintf(needle, sizeof(needle), "name: %s", name);
	line = chk_line_of(c, path, ch->loc.line, needle);
	if (!line) {
		snprintf(needle, sizeof(needle), "\"name\":\"%s\"", name);
		line = chk_line_of(c, path, ch->loc.line, needle);
	}
	if (!line)
		line = chk_line_of(c, path, ch->loc.line, name);
	return line ? line : ch->loc.line;
}

/* Can `name` reach the channel head (classic)? */
static bool reaches_head(const fbc_graph *g, const char *name)
{
	fbc_graph_list l = {0};
	fbc_error e2;
	bool ok;

	if (g->head == FBC_GRAPH_NONE)
		return false;
	if (strcmp(g->nodes[g->head].name, name) == 0)
		return true;
	ok = fbc_graph_upgrade_path(&l, g, FBC_UPGRADE_CLASSIC, name, NULL, &e2) == 0;
	fbc_graph_list_dispose(&l);
	return ok;
}

static bool has_successor(const fbc_graph *g, const char *name)
{
	fbc_graph_list l = {0};
	fbc_error e2;
	bool ok = fbc_graph_successors(&l, g, FBC_UPGRADE_CLASSIC, name, NULL, &e2) == 0 && l.n > 0;

	fbc_graph_list_dispose(&l);
	return ok;
}

static bool upgraded_to(const fbc_graph *g, size_t node)
{
	for (size_t i = 0; i < g->n_edges; i++)
		if (g->edges[i].to == node)
			return true;
	return false;
}

static bool bundle_in_package(const fbc_package *p, const char *name)
{
	return p && fbc_package_bundle(p, name) != NULL;
}

/* Compare one channel; gb may be NULL (a new channel). */
/* gref is gb, or for a package new in this catalog the same channel in another catalog at
 * the merge base (a new catalog copies the package's existing state: what was already
 * dangling there is not new). pb likewise. */
static int compare_channel(chk_ctx *c, chk_out *o, const chk_catalog *k, const fbc_package *pb,
			   const fbc_channel *ch, const fbc_graph *gb, const fbc_graph *gref,
			   const fbc_graph *gh)
{
	const char *path = repo_path(c, k, ch->loc.file);
	int rc;

	if (gb) {
		for (size_t i = 0; i < gb->n_entries; i++) {
			const fbc_graph_node *n = &gb->nodes[i];
			bool at_head = fbc_graph_find(gh, n->name) != FBC_GRAPH_NONE &&
				       !gh->nodes[fbc_graph_find(gh, n->name)].external;

			if (!at_head) {
				/* G2: removed and not deprecated at base */
				if (!n->deprecated && !gb->channel_deprecated &&
				    !gb->package_deprecated &&
				    (rc = chk_add(o, FBC_LEVEL_WARNING, path, ch->loc.line, "G2",
						  "channel %s of %s: entry %s was removed without "
						  "being deprecated first",
						  ch->name, ch->package, n->name)))
					return rc;
				continue;
			}
			/* G1: could reach the head at base, cannot at head */
			if (reaches_head(gb, n->name) && !reaches_head(gh, n->name) &&
			    (rc = chk_add(
				     o, FBC_LEVEL_FAILURE, path, entry_line(c, k, ch, n->name),
				     "G1",
				     "channel %s of %s: %s could reach the channel head at the "
				     "merge base but cannot at head: users on it would never be "
				     "upgraded (check replaces/skips around it)",
				     ch->name, ch->package, n->name)))
				return rc;
		}
		/* G4: the head went back */
		if (gb->head != FBC_GRAPH_NONE && gh->head != FBC_GRAPH_NONE) {
			const fbc_bundle *ob = gb->nodes[gb->head].bundle,
					 *nb = gh->nodes[gh->head].bundle;

			if (ob && nb && ob->has_semver && nb->has_semver &&
			    fbc_semver_compare(&nb->semver, &ob->semver) < 0 &&
			    (rc = chk_add(o, FBC_LEVEL_FAILURE, path,
					  entry_line(c, k, ch, gh->nodes[gh->head].name), "G4",
					  "channel %s of %s: the head went back from %s (%s) to %s "
					  "(%s)",
					  ch->name, ch->package, ob->name, ob->version, nb->name,
					  nb->version)))
				return rc;
		}
	}
	/* G3: dangling non-head entries; G6: unreachable new bundles */
	for (size_t i = 0; i < gh->n_entries; i++) {
		const fbc_graph_node *n = &gh->nodes[i];
		bool existed = gref && fbc_graph_find(gref, n->name) != FBC_GRAPH_NONE &&
			       !gref->nodes[fbc_graph_find(gref, n->name)].external;
		bool was_dangling = existed && !gref->nodes[fbc_graph_find(gref, n->name)].head &&
				    !has_successor(gref, n->name);

		if (!n->head && !has_successor(gh, n->name) &&
		    (rc = chk_add(
			     o, existed && was_dangling ? FBC_LEVEL_WARNING : FBC_LEVEL_FAILURE,
			     path, entry_line(c, k, ch, n->name), "G3",
			     "channel %s of %s: %s is not the head and nothing upgrades from it "
			     "(dangling)%s",
			     ch->name, ch->package, n->name,
			     existed && was_dangling ? "; it was already dangling at the merge base"
						     : "")))
			return rc;
		if (!bundle_in_package(pb, n->name) && !n->head && !upgraded_to(gh, i) &&
		    (rc = chk_add(
			     o, FBC_LEVEL_WARNING, path, entry_line(c, k, ch, n->name), "G6",
			     "channel %s of %s: new bundle %s is not a head and replaces, skips "
			     "or covers nothing: no install can reach it",
			     ch->name, ch->package, n->name)))
			return rc;
	}
	return 0;
}

/* Does every blob of package p (head) come from its own directory "<pkg>/" of the catalog? */
static bool in_own_dir(const fbc_package *p)
{
	size_t n = strlen(p->name);
	bool ok = p->loc.file && strncmp(p->loc.file, p->name, n) == 0 && p->loc.file[n] == '/';

	for (size_t i = 0; ok && i < p->n_channels; i++)
		ok = p->channels[i]->loc.file &&
		     strncmp(p->channels[i]->loc.file, p->name, n) == 0 &&
		     p->channels[i]->loc.file[n] == '/';
	for (size_t i = 0; ok && i < p->n_bundles; i++)
		ok = p->bundles[i]->loc.file && strncmp(p->bundles[i]->loc.file, p->name, n) == 0 &&
		     p->bundles[i]->loc.file[n] == '/';
	return ok;
}

/* Does path lie in directory dir ("a/b" in "a")? */
static bool under(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	return path && strncmp(path, dir, n) == 0 && path[n] == '/';
}

/* 1 when the blobs of pkg in catalog dir at the merge base can only be in <dir>/<pkg>/ (which
 * the caller found without the package), so the package is not in that catalog there: the
 * change touches nothing of dir outside <dir>/<pkg>/, and at head every blob of pkg in dir
 * lives in <dir>/<pkg>/ (or there is none) — every other file of dir is the same at both
 * commits and holds none of its blobs. 0 when that cannot be shown (load the whole catalog),
 * -rc on an error. A package new in a catalog (pull requests that add it to v4.18 ... v4.22)
 * then costs no load of whole catalogs at the merge base. */
static int absent_at_base(chk_ctx *c, const char *dir, const char *pkg, fbc_error *err)
{
	const char *own = fbc_arena_printf(c->arena, "%s/%s", dir, pkg);
	chk_catalog *kh = NULL;
	const fbc_package *ph;
	int rc;

	if (!own)
		return -fbc_error_set(err, FBC_ENOMEM, dir, "out of memory");
	for (size_t i = 0; i < c->changes.len; i++) {
		const fbc_git_change *ch = FBC_VEC_AT(&c->changes, fbc_git_change, i);

		if ((under(ch->old_path, dir) && !under(ch->old_path, own)) ||
		    (under(ch->new_path, dir) && !under(ch->new_path, own)))
			return 0;
	}
	if ((rc = chk_catalog_get(&kh, c, true, dir, err)) != 0)
		return -rc;
	if (!kh || !kh->cat)
		return 0;
	ph = fbc_catalog_package(kh->cat, pkg);
	return !ph || in_own_dir(ph) ? 1 : 0;
}

/* The merge base's side of catalog dir for package pkg. In the operator layout a package's
 * blobs live in its own directory <dir>/<pkg>/ (checked at head by in_own_dir): only that
 * directory is loaded at the merge base, so a change to one package of a big catalog loads
 * the whole catalog once (at head, where `catalogs` validates it), not twice. Otherwise, or
 * when the package is not found there, the whole catalog. */
static int base_side(chk_catalog **out, chk_ctx *c, const char *dir, const char *pkg, bool own_dir,
		     fbc_error *err)
{
	int rc;

	*out = NULL;
	if (c->settings.layout == FBC_LAYOUT_OPERATORS && own_dir && *dir) {
		const char *sub = fbc_arena_printf(c->arena, "%s/%s", dir, pkg);

		if (!sub)
			return fbc_error_set(err, FBC_ENOMEM, dir, "out of memory");
		if ((rc = chk_catalog_get(out, c, false, sub, err)) != 0)
			return rc;
		if (*out && (*out)->cat && fbc_catalog_package((*out)->cat, pkg))
			return 0;
		if ((rc = absent_at_base(c, dir, pkg, err)) < 0)
			return -rc;
		if (rc == 1)
			return 0; /* not in <dir>/<pkg>/, so nowhere in the catalog at the merge
				     base */
	}
	return chk_catalog_get(out, c, false, dir, err);
}

/* The package in the last catalog at the merge base that has it (NULL if none). */
static int reference_package(const fbc_package **out, chk_ctx *c, const char *pkg, bool own_dir,
			     fbc_error *err)
{
	fbc_vec dirs;
	int rc;

	*out = NULL;
	fbc_vec_init(&dirs, sizeof(char *));
	if ((rc = chk_catalog_dirs(&dirs, c, c->mb_tree, err)) != 0)
		goto done;
	for (size_t i = dirs.len; i-- > 0 && !*out;) {
		chk_catalog *k = NULL;

		if ((rc = base_side(&k, c, *FBC_VEC_AT(&dirs, const char *, i), pkg, own_dir, err)))
			goto done;
		if (k && k->cat)
			*out = fbc_catalog_package(k->cat, pkg);
	}
done:
	fbc_vec_dispose(&dirs);
	return rc;
}

/* The same for an add-mode package: the last catalog of the merge base's build that has it. */
static int reference_built(const fbc_package **out, const chk_am_build *ab, const char *pkg,
			   fbc_error *err)
{
	*out = NULL;
	for (size_t i = chk_am_catalogs(ab); i-- > 0 && !*out;) {
		const chk_catalog *k = NULL;
		int rc = chk_am_catalog(&k, ab, chk_am_catalog_name(ab, i), err);

		if (rc != 0)
			return rc;
		if (k && k->cat)
			*out = fbc_catalog_package(k->cat, pkg);
	}
	return 0;
}

/* ab: for an add-mode package, the merge base's build (where a package new in a catalog finds
 * its reference); NULL for committed catalogs. */
static int compare_package(chk_ctx *c, chk_out *o, const chk_catalog *kb, const chk_catalog *kh,
			   const char *pkg, const chk_am_build *ab, size_t *n_channels,
			   fbc_error *err)
{
	const fbc_package *pb = kb && kb->cat ? fbc_catalog_package(kb->cat, pkg) : NULL;
	const fbc_package *ph = kh->cat ? fbc_catalog_package(kh->cat, pkg) : NULL;
	const fbc_package *pref = pb;
	int rc = 0;

	if (!ph)
		return 0; /* removed from this catalog: G5 below for its channels */
	if (!pref && ab && (rc = reference_built(&pref, ab, pkg, err)) != 0)
		return rc;
	if (!pref && !ab && c->settings.layout != FBC_LAYOUT_PLAIN &&
	    (rc = reference_package(&pref, c, pkg, in_own_dir(ph), err)) != 0)
		return rc;
	for (size_t i = 0; i < ph->n_channels && rc == 0; i++) {
		const fbc_channel *ch = ph->channels[i];
		const fbc_channel *cb = pb ? fbc_package_channel(pb, ch->name) : NULL;
		const fbc_channel *cref = pref ? fbc_package_channel(pref, ch->name) : NULL;
		fbc_graph *gh = NULL, *gb = NULL, *gref = NULL;
		fbc_error e2;

		(*n_channels)++;
		if (fbc_graph_build(&gh, ch, FBC_GRAPH_EDGES, &e2) != 0 ||
		    (cb && fbc_graph_build(&gb, cb, FBC_GRAPH_EDGES, &e2) != 0) ||
		    (!cb && cref && fbc_graph_build(&gref, cref, FBC_GRAPH_EDGES, &e2) != 0)) {
			rc = e2.code == FBC_ENOMEM
				     ? fbc_error_set(err, FBC_ENOMEM, pkg, "out of memory")
				     : chk_add(o, FBC_LEVEL_FAILURE, repo_path(c, kh, ch->loc.file),
					       ch->loc.line, "graph", "channel %s of %s: %s",
					       ch->name, pkg, e2.message);
		} else if (gh->status == FBC_GRAPH_OK || gh->status == FBC_GRAPH_STRANDED) {
			rc = compare_channel(c, o, kh, pref, ch, gb, gb ? gb : gref, gh);
		} /* else: no unique head or a cycle (V3-V5), a finding of `catalogs` */
		fbc_graph_free(gh);
		fbc_graph_free(gb);
		fbc_graph_free(gref);
	}
	/* G5: removed channels, default channel changes */
	for (size_t i = 0; pb && i < pb->n_channels && rc == 0; i++) {
		const fbc_channel *cb = pb->channels[i];

		if (cb->n_entries && !fbc_package_channel(ph, cb->name))
			rc = chk_add(
				o, FBC_LEVEL_FAILURE, repo_path(c, kh, ph->loc.file), ph->loc.line,
				"G5",
				"package %s: channel %s (%zu entries at the merge base) is gone: "
				"subscriptions to it would break",
				pkg, cb->name, cb->n_entries);
	}
	if (rc == 0 && pb && strcmp(pb->default_channel, ph->default_channel) != 0) {
		const fbc_channel *ob = fbc_package_channel(pb, pb->default_channel);
		const fbc_channel *nh = fbc_package_channel(ph, ph->default_channel);
		fbc_graph *g_old = NULL, *g_new = NULL;
		fbc_error e2;

		if (ob && nh && fbc_graph_build(&g_old, ob, FBC_GRAPH_EDGES, &e2) == 0 &&
		    fbc_graph_build(&g_new, nh, FBC_GRAPH_EDGES, &e2) == 0 &&
		    g_old->head != FBC_GRAPH_NONE) {
			const char *old_head = g_old->nodes[g_old->head].name;

			if (!reaches_head(g_new, old_head) &&
			    fbc_graph_find(g_new, old_head) == FBC_GRAPH_NONE) {
				fbc_graph_list l = {0};
				bool any = fbc_graph_successors(
						   &l, g_new, FBC_UPGRADE_CLASSIC, old_head,
						   g_old->nodes[g_old->head].version, &e2) == 0 &&
					   l.n > 0;

				fbc_graph_list_dispose(&l);
				if (!any)
					rc = chk_add(
						o, FBC_LEVEL_FAILURE,
						repo_path(c, kh, ph->loc.file),
						chk_line_of(c, repo_path(c, kh, ph->loc.file),
							    ph->loc.line, "defaultChannel"),
						"G5",
						"package %s: the default channel changed from %s "
						"to "
						"%s, which has no upgrade from the old head %s",
						pkg, pb->default_channel, ph->default_channel,
						old_head);
			}
		}
		fbc_graph_free(g_old);
		fbc_graph_free(g_new);
	}
	(void)kb;
	return rc;
}

/* The touched add-mode packages: their channels in each catalog of the merge base's build
 * against the head's (addmode.c). */
static int graph_addmode(chk_ctx *c, chk_out *o, size_t *n_channels, size_t *n_built,
			 fbc_error *err)
{
	const chk_am_build *ah = NULL, *ab = NULL;
	int rc;

	if ((rc = chk_am_get(&ah, c, true, err)) != 0 || (rc = chk_am_get(&ab, c, false, err)))
		return rc;
	if (!ah || chk_am_error(ah) || chk_am_addmode_count(ah) == 0)
		return 0; /* `templates` says why a build failed */
	if (chk_am_error(ab))
		ab = NULL;
	for (size_t i = 0; i < chk_am_catalogs(ah); i++) {
		const char *name = chk_am_catalog_name(ah, i);
		const chk_catalog *kh = NULL, *kb = NULL;
		bool any = false;

		if ((rc = chk_am_catalog(&kh, ah, name, err)) != 0 ||
		    (ab && (rc = chk_am_catalog(&kb, ab, name, err)) != 0))
			return rc;
		for (size_t p = 0; p < chk_am_addmode_count(ah); p++) {
			const char *pkg = chk_am_addmode_package(ah, p, NULL);
			size_t from = o->findings.len;

			if (kh && kh->cat && fbc_catalog_package(kh->cat, pkg)) {
				any = true;
				rc = compare_package(c, o, kb, kh, pkg, ab, n_channels, err);
			} else if (kb && kb->cat && fbc_catalog_package(kb->cat, pkg)) {
				rc = chk_add(o, FBC_LEVEL_FAILURE, "", 0, "G5",
					     "package %s is no longer added to catalog %s: every "
					     "channel of it is gone",
					     pkg, name);
			}
			if (rc == 0)
				rc = chk_am_relocate(c, o, from, name, pkg);
			if (rc != 0)
				return rc;
		}
		*n_built += any;
	}
	return 0;
}

int chk_run_graph(chk_ctx *c, chk_out *o, fbc_error *err)
{
	size_t n_channels = 0, n_am_channels = 0, n_built = 0;
	int rc;

	for (size_t i = 0; i < c->affected.len; i++) {
		const char *dir = *FBC_VEC_AT(&c->affected, const char *, i);
		chk_catalog *kh = NULL, *kb = NULL;

		if ((rc = chk_catalog_get(&kh, c, true, dir, err)) != 0)
			return rc;
		if (!kh || !kh->cat)
			continue;
		if (c->settings.layout == FBC_LAYOUT_PLAIN) {
			/* every package: the whole catalog at the merge base */
			if ((rc = chk_catalog_get(&kb, c, false, dir, err)) != 0)
				return rc;
			for (size_t p = 0; p < kh->cat->n_sorted_packages; p++) {
				if (kb && kb->cat && strcmp(kb->id, kh->id) == 0)
					break;
				if ((rc = compare_package(c, o, kb, kh,
							  kh->cat->sorted_packages[p]->name, NULL,
							  &n_channels, err)) != 0)
					return rc;
			}
		} else {
			/* the touched packages, each from its own side at the merge base */
			for (size_t p = 0; p < c->packages.len; p++) {
				const char *pkg = *FBC_VEC_AT(&c->packages, const char *, p);
				const fbc_package *ph = fbc_catalog_package(kh->cat, pkg);

				if (!ph)
					continue;
				if ((rc = base_side(&kb, c, dir, pkg, in_own_dir(ph), err)) != 0 ||
				    (rc = compare_package(c, o, kb, kh, pkg, NULL, &n_channels,
							  err)) != 0)
					return rc;
			}
		}
		/* packages removed from the catalog */
		for (size_t p = 0; p < c->packages.len && c->settings.layout != FBC_LAYOUT_PLAIN;
		     p++) {
			const char *pkg = *FBC_VEC_AT(&c->packages, const char *, p);

			if (fbc_catalog_package(kh->cat, pkg))
				continue;
			if ((rc = base_side(&kb, c, dir, pkg, true, err)) != 0)
				return rc;
			if (kb && kb->cat && fbc_catalog_package(kb->cat, pkg) &&
			    (rc = chk_add(o, FBC_LEVEL_FAILURE, kh->dir, 0, "G5",
					  "package %s was removed from catalog %s: every channel "
					  "of it is gone",
					  pkg, kh->name)))
				return rc;
		}
		if (c->settings.layout == FBC_LAYOUT_PLAIN) {
			for (size_t p = 0; kb && kb->cat && p < kb->cat->n_sorted_packages; p++) {
				const fbc_package *pb = kb->cat->sorted_packages[p];

				if (!fbc_catalog_package(kh->cat, pb->name) &&
				    (rc = chk_add(o, FBC_LEVEL_FAILURE, kh->dir, 0, "G5",
						  "package %s was removed from catalog %s: every "
						  "channel of it is gone",
						  pb->name, kh->name)))
					return rc;
			}
		}
	}
	if ((rc = graph_addmode(c, o, &n_am_channels, &n_built, err)) != 0)
		return rc;
	if (c->affected.len == 0 && n_built == 0)
		return chk_summary(o, "no catalog is affected by this change");
	if (n_built)
		return chk_summary(o,
				   "%zu channels compared with the merge base (classic semantics), "
				   "%zu more of add-mode packages in %zu catalog(s) built as the "
				   "ingest builds them",
				   n_channels, n_am_channels, n_built);
	return chk_summary(o, "%zu channels compared with the merge base (classic semantics)",
			   n_channels);
}
