/*
 * fbc_repo_catalogs_build: the catalogs of an operator repository
 * (catalogs.h).
 */
#include "pipeline/catalogs/internal.h"
#include "service/addmode/ocp.h"
#include "service/bundle/bundle.h"
#include "service/load/load.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int oom(fbc_error *err)
{
	return fbc_error_set(err, FBC_ENOMEM, NULL, "out of memory");
}

static int finding(fbc_repo_catalogs *rc, const char *path, const char *commit, const char *catalog,
		   const char *rule, const char *fmt, ...) __attribute__((format(printf, 6, 7)));

static int finding(fbc_repo_catalogs *rc, const char *path, const char *commit, const char *catalog,
		   const char *rule, const char *fmt, ...)
{
	fbc_repo_finding *f;
	char msg[FBC_ERROR_MESSAGE_MAX + 256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (rc->findings.len >= 100000)
		return 0;
	f = fbc_vec_push(&rc->findings);
	if (!f)
		return FBC_ENOMEM;
	f->path = fbc_arena_strdup(rc->arena, path ? path : "");
	f->commit = fbc_arena_strdup(rc->arena, commit ? commit : "");
	f->catalog = fbc_arena_strdup(rc->arena, catalog ? catalog : "");
	f->rule = fbc_arena_strdup(rc->arena, rule ? rule : "");
	f->message = fbc_arena_strdup(rc->arena, msg);
	if (!f->path || !f->commit || !f->catalog || !f->rule || !f->message) {
		rc->findings.len--;
		return FBC_ENOMEM;
	}
	return 0;
}

/* Read and decode a YAML file of the tree; *out NULL when absent. */
static int read_yaml(json_t **out, fbc_tree *t, const char *path, fbc_error *err)
{
	fbc_tree_blob blob = {0};
	fbc_load_limits lim;
	int rc;

	*out = NULL;
	rc = fbc_tree_read(t, &blob, path, FBC_REPO_MAX_FILE, err);
	if (rc == FBC_ENOTFOUND)
		return 0;
	if (rc != 0)
		return rc;
	fbc_load_limits_default(&lim);
	rc = fbc_yaml_to_json(out, blob.data ? blob.data : "", blob.len, &lim, err);
	fbc_tree_blob_release(t, &blob);
	return rc;
}

/* P-1, A33-A35: the package's ci.yaml. */
static int read_ci(fbc_repo_catalogs *rc, repo_pkg *p, fbc_tree *t, fbc_error *err)
{
	char path[FBC_ADDMODE_NAME_MAX + 32];
	json_t *ci = NULL, *fbc, *ug;
	fbc_error yerr;
	const char *mode;
	int r;

	snprintf(path, sizeof(path), "operators/%s/ci.yaml", p->name);
	p->addmode = true;
	p->mode = FBC_ADDMODE_REPLACES; /* no ci.yaml or no updateGraph: opm's default */
	fbc_error_init(&yerr);
	r = read_yaml(&ci, t, path, &yerr);
	if (r == FBC_ENOMEM)
		return oom(err);
	if (r != 0) {
		p->broken = true;
		return finding(rc, path, NULL, NULL, "CI", "ci.yaml does not parse: %s",
			       yerr.message)
			       ? oom(err)
			       : 0;
	}
	if (!ci)
		return 0;
	fbc = json_object_get(ci, "fbc");
	ug = json_object_get(ci, "updateGraph");
	if (json_is_true(json_object_get(fbc, "enabled"))) {
		p->addmode = false;
		if (ug && finding(rc, path, NULL, NULL, "A33",
				  "FBC is enabled, updateGraph cannot be defined.") != 0) {
			json_decref(ci);
			return oom(err);
		}
		json_decref(ci);
		return 0;
	}
	mode = json_string_value(ug);
	if (ug &&
	    (!mode || (strcmp(mode, "replaces-mode") != 0 && strcmp(mode, "semver-mode") != 0))) {
		p->broken = true;
		r = finding(rc, path, NULL, NULL,
			    mode && strcmp(mode, "semver-skippatch-mode") == 0 ? "A35" : "A34",
			    "The 'updateGraph' option in ci.yaml must be one of ['replaces-mode', "
			    "'semver-mode'] (found %s%s%s)",
			    mode ? "\"" : "", mode ? mode : "a non-string", mode ? "\"" : "");
	} else if (mode && strcmp(mode, "semver-mode") == 0) {
		p->mode = FBC_ADDMODE_SEMVER;
	}
	json_decref(ci);
	return r ? oom(err) : 0;
}

static repo_pkg *find_pkg(const fbc_repo_catalogs *rc, const char *name)
{
	size_t i;

	for (i = 0; i < rc->pkgs.len; i++) {
		repo_pkg *p = FBC_VEC_AT(&rc->pkgs, repo_pkg, i);

		if (strcmp(p->name, name) == 0)
			return p;
	}
	return NULL;
}

/* The committed files of catalog c, except add-mode package directories. */
static int collect_files(fbc_repo_catalogs *rc, repo_catalog *c, fbc_tree *t, const char *root,
			 const char *rel, fbc_error *err)
{
	fbc_vec ents;
	char *dir = rel[0] ? fbc_tree_join(root, rel) : strdup(root);
	size_t i;
	int r = 0;

	fbc_vec_init(&ents, sizeof(fbc_tree_entry));
	if (!dir)
		return oom(err);
	if ((r = fbc_tree_list(t, &ents, dir, err)) != 0)
		goto done;
	fbc_tree_entries_sort(&ents);
	for (i = 0; i < ents.len; i++) {
		fbc_tree_entry *e = FBC_VEC_AT(&ents, fbc_tree_entry, i);
		char *sub = fbc_tree_join(rel, e->name);

		if (!sub) {
			r = oom(err);
			goto done;
		}
		if (e->kind == FBC_TREE_DIR) {
			repo_pkg *p = rel[0] ? NULL : find_pkg(rc, e->name);

			if (!p || !p->addmode)
				r = collect_files(rc, c, t, root, sub, err);
		} else if (e->kind == FBC_TREE_FILE) {
			char *full = fbc_tree_join(root, sub);
			fbc_tree_blob blob = {0};
			repo_file *f;

			if (!full) {
				free(sub);
				r = oom(err);
				goto done;
			}
			r = fbc_tree_read(t, &blob, full, FBC_REPO_MAX_FILE, err);
			free(full);
			if (r == 0) {
				f = fbc_vec_push(&c->files);
				if (!f || !(f->data = malloc(blob.len + 1))) {
					if (f)
						c->files.len--;
					r = oom(err);
				} else {
					if (blob.len)
						memcpy(f->data, blob.data, blob.len);
					f->data[blob.len] = '\0';
					f->len = blob.len;
					f->path = sub;
					sub = NULL;
				}
				fbc_tree_blob_release(t, &blob);
			}
		} else if (finding(rc, sub, NULL, c->name, "LINK",
				   "not a regular file: left out of the catalog") != 0) {
			r = oom(err);
		}
		free(sub);
		if (r != 0)
			goto done;
	}
done:
	fbc_tree_entries_dispose(&ents);
	free(dir);
	return r;
}

/* ---- one bundle ---- */

typedef struct input {
	const char *path, *commit;
	repo_pkg *pkg;
	char *dir; /* the directory name (the version) */
	fbc_bundle_dir *b;
	const char **skips, **chans;
	fbc_semver sv;
	bool has_sv;
	json_t *blob[2]; /* rendered without / with the csv-metadata migration */
	fbc_addmode_bundle in;
} input;

static void input_dispose(input *x)
{
	fbc_bundle_free(x->b);
	free(x->skips);
	free(x->chans);
	free(x->dir);
	json_decref(x->blob[0]);
	json_decref(x->blob[1]);
	memset(x, 0, sizeof(*x));
}

/* Read the bundle and fill x->in; a content problem is a finding and
 * returns 1 (skip this bundle). */
static int input_read(fbc_repo_catalogs *rc, input *x, fbc_tree *t, fbc_error *err)
{
	fbc_tree *sub = NULL;
	fbc_buf buf;
	fbc_error berr;
	const json_t *csv;
	json_t *icons;
	char image[2 * FBC_ADDMODE_NAME_MAX + 8];
	size_t i, n;
	int r, m;

	fbc_buf_init(&buf, 0);
	fbc_error_init(&berr);
	r = fbc_tree_sub(&sub, t, x->path, &berr);
	if (r == 0)
		r = fbc_bundle_read(&x->b, sub, NULL, &berr);
	fbc_tree_free(sub);
	if (r == FBC_ENOMEM) {
		r = oom(err);
		goto done;
	}
	if (r != 0) {
		r = finding(rc, x->path, x->commit, NULL, "BUNDLE", "cannot read the bundle: %s",
			    berr.message)
			    ? oom(err)
			    : 1;
		goto done;
	}
	x->in.package = fbc_bundle_package(x->b);
	if (strcmp(x->in.package, x->pkg->name) != 0) {
		r = finding(rc, x->path, x->commit, NULL, "IN-3",
			    "the bundle's package annotation \"%s\" is not its directory's package "
			    "\"%s\"",
			    x->in.package, x->pkg->name)
			    ? oom(err)
			    : 1;
		goto done;
	}
	x->in.name = fbc_bundle_name(x->b);
	x->in.version = fbc_bundle_version(x->b);
	x->in.replaces = fbc_bundle_replaces(x->b);
	x->in.skip_range = fbc_bundle_skip_range(x->b);
	x->in.default_channel = fbc_bundle_default_channel(x->b);
	x->in.ocp_versions = fbc_bundle_annotation(x->b, "com.redhat.openshift.versions");
	n = fbc_bundle_skips_count(x->b);
	x->skips = calloc(n + 1, sizeof(char *));
	x->chans = calloc(fbc_bundle_channels_count(x->b) + 1, sizeof(char *));
	if (!x->skips || !x->chans) {
		r = oom(err);
		goto done;
	}
	for (i = 0; i < n; i++)
		x->skips[i] = fbc_bundle_skip(x->b, i);
	x->in.skips = x->skips;
	x->in.n_skips = n;
	n = fbc_bundle_channels_count(x->b);
	for (i = 0; i < n; i++)
		x->chans[i] = fbc_bundle_channel(x->b, i);
	x->in.channels = x->chans;
	x->in.n_channels = n;
	csv = fbc_bundle_csv(x->b);
	x->in.substitutes_for = json_string_value(
		json_object_get(json_object_get(json_object_get(csv, "metadata"), "annotations"),
				"olm.substitutesFor"));
	icons = json_object_get(json_object_get(csv, "spec"), "icon");
	if (json_array_size(icons) > 0) {
		x->in.icon_data =
			json_string_value(json_object_get(json_array_get(icons, 0), "base64data"));
		x->in.icon_mediatype =
			json_string_value(json_object_get(json_array_get(icons, 0), "mediatype"));
	}
	x->has_sv = x->in.version[0] &&
		    fbc_semver_parse(&x->sv, x->in.version, strlen(x->in.version), NULL) == 0;
	snprintf(image, sizeof(image), "%s%s:%s", rc->image_prefix, x->pkg->name, x->dir);
	x->in.image = NULL;
	for (m = 0; m < 2; m++) {
		bool written = false;

		fbc_buf_reset(&buf);
		r = fbc_bundle_render(&buf, &written, x->b, image,
				      m ? FBC_BUNDLE_MIGRATE_CSV_METADATA : FBC_BUNDLE_MIGRATE_NONE,
				      &berr);
		if (r == FBC_ENOMEM) {
			r = oom(err);
			goto done;
		}
		if (r != 0 || !written) {
			r = finding(rc, x->path, x->commit, NULL, "RENDER",
				    "opm would not render the bundle: %s%s%s", r ? berr.where : "",
				    r && berr.where[0] ? ": " : "",
				    r ? berr.message : "empty package name")
				    ? oom(err)
				    : 1;
			goto done;
		}
		x->blob[m] = json_loadb(buf.data, buf.len, 0, NULL);
		if (!x->blob[m]) {
			r = oom(err);
			goto done;
		}
	}
	x->in.image = json_string_value(json_object_get(x->blob[0], "image"));
	r = 0;
done:
	fbc_buf_dispose(&buf);
	return r;
}

static int cmp_input(const void *a, const void *b)
{
	const input *x = a, *y = b;
	int c = strcmp(x->pkg->name, y->pkg->name);

	if (c != 0)
		return c;
	if (x->has_sv && y->has_sv && (c = fbc_semver_compare(&x->sv, &y->sv)) != 0)
		return c;
	if (x->has_sv != y->has_sv)
		return x->has_sv ? 1 : -1;
	return strcmp(x->path, y->path);
}

/* Add one bundle to every catalog its label admits, all or none (P-6). */
static int add_bundle(fbc_repo_catalogs *rc, input *x, const fbc_repo_opts *o, fbc_error *err)
{
	fbc_addmode_index **next = NULL;
	fbc_addmode_opts ao = {.mode = x->pkg->mode,
			       .no_validate = o->no_validate,
			       .keep_bundle_objects = o->keep_bundle_objects};
	size_t i, k;
	int r = 0;
	bool failed = false;

	size_t seq = rc->seq++;

	next = calloc(rc->catalogs.len + 1, sizeof(*next));
	if (!next)
		return oom(err);
	for (i = 0; i < rc->catalogs.len && !failed; i++) {
		repo_catalog *c = FBC_VEC_AT(&rc->catalogs, repo_catalog, i);
		fbc_addmode_bundle in = x->in;
		const fbc_addmode_bundle *p = &in;
		bool admits = true;
		fbc_error aerr;
		char rule[8];

		fbc_error_init(&aerr);
		if (c->ocp && fbc_ocp_label_admits(&admits, x->in.ocp_versions, c->name,
						   o->label_flags, &aerr) != 0) {
			if (finding(rc, x->path, x->commit, NULL, "P-4", "%s: not added anywhere",
				    aerr.message) != 0)
				r = oom(err);
			failed = true;
			break;
		}
		if (!admits)
			continue;
		in.blob = x->blob[c->csv_meta ? 1 : 0];
		if ((r = fbc_addmode_index_clone(&next[i], c->ix, err)) != 0)
			goto done;
		if (fbc_addmode_add(next[i], &p, 1, &ao, &aerr) != 0) {
			if (aerr.code == FBC_ENOMEM) {
				r = oom(err);
				goto done;
			}
			fbc_addmode_error_rule(&aerr, rule);
			if (finding(rc, x->path, x->commit, c->name, rule[0] ? rule : "LIMIT",
				    "%s (IIB fails the release, A36: the bundle is added to no "
				    "catalog)",
				    aerr.message + (rule[0] ? strlen(rule) + 2 : 0)) != 0)
				r = oom(err);
			failed = true;
		}
	}
	if (!failed) {
		for (k = 0; k < rc->catalogs.len; k++) {
			repo_catalog *c = FBC_VEC_AT(&rc->catalogs, repo_catalog, k);

			size_t *slot;

			if (!next[k])
				continue;
			if (!(slot = fbc_vec_push(&c->adds))) {
				r = oom(err);
				goto done;
			}
			*slot = seq;
			fbc_addmode_index_free(c->ix);
			c->ix = next[k];
			next[k] = NULL;
		}
	}
done:
	for (k = 0; k < rc->catalogs.len; k++)
		fbc_addmode_index_free(next[k]);
	free(next);
	return r;
}

static int replay_step(fbc_repo_catalogs *rc, const fbc_repo_history_step *s, fbc_tree *t,
		       const fbc_repo_opts *o, fbc_error *err)
{
	input *xs = calloc(s->n_paths + 1, sizeof(*xs));
	size_t i, n = 0;
	int r = 0;

	if (!xs)
		return oom(err);
	for (i = 0; i < s->n_paths; i++) {
		const char *path = s->paths[i], *slash;
		char pkg[FBC_ADDMODE_NAME_MAX + 1];
		repo_pkg *p;
		input *x;
		size_t plen;

		if (strncmp(path, "operators/", 10) != 0 || !(slash = strchr(path + 10, '/')) ||
		    strchr(slash + 1, '/') || !slash[1] ||
		    (plen = (size_t)(slash - path - 10)) > FBC_ADDMODE_NAME_MAX) {
			if (finding(rc, path, s->commit, NULL, "LAYOUT",
				    "not a bundle directory operators/<package>/<version>") != 0) {
				r = oom(err);
				goto done;
			}
			continue;
		}
		memcpy(pkg, path + 10, plen);
		pkg[plen] = '\0';
		p = find_pkg(rc, pkg);
		if (!p || !p->addmode || p->broken)
			continue; /* template-managed, or its ci.yaml was reported */
		x = &xs[n++];
		x->path = path;
		x->commit = s->commit;
		x->pkg = p;
		if (!(x->dir = strdup(slash + 1))) {
			r = oom(err);
			goto done;
		}
		r = input_read(rc, x, t, err);
		if (r < 0)
			goto done;
		if (r > 0) {
			input_dispose(x);
			n--;
			r = 0;
		}
	}
	/* one commit adding several bundles of a package: lowest version first */
	qsort(xs, n, sizeof(*xs), cmp_input);
	for (i = 0; i < n && r == 0; i++)
		r = add_bundle(rc, &xs[i], o, err);
done:
	for (i = 0; i < s->n_paths; i++)
		input_dispose(&xs[i]);
	free(xs);
	return r;
}

/* ---- the build ---- */

static int read_config(fbc_repo_catalogs *rc, fbc_tree *t, fbc_error *err)
{
	json_t *cfg = NULL;
	fbc_error yerr;
	const char *prefix = NULL;
	int r;

	fbc_error_init(&yerr);
	r = read_yaml(&cfg, t, "config.yaml", &yerr);
	if (r == FBC_ENOMEM)
		return oom(err);
	if (r != 0 && finding(rc, "config.yaml", NULL, NULL, "CONFIG",
			      "config.yaml does not parse: %s", yerr.message) != 0)
		return oom(err);
	prefix = json_string_value(
		json_array_get(json_object_get(cfg, "allowed_bundle_registries"), 0));
	rc->image_prefix = strdup(prefix && strlen(prefix) < FBC_ADDMODE_NAME_MAX ? prefix : "");
	json_decref(cfg);
	return rc->image_prefix ? 0 : oom(err);
}

static _Atomic uint64_t replays; /* ids of replays (fbc_repo_catalogs_same) */

static bool ocp_at_least(const char *name, unsigned major, unsigned minor)
{
	bool yes = false;
	char label[32];

	snprintf(label, sizeof(label), "v%u.%u", major, minor);
	return fbc_ocp_catalog_name(name) &&
	       fbc_ocp_label_admits(&yes, label, name, 0, NULL) == 0 && yes;
}

/* A deep copy of rc as it is now (the state after some history steps). */
static int snapshot(fbc_repo_catalogs **out, const fbc_repo_catalogs *rc, fbc_error *err)
{
	fbc_repo_catalogs *s = calloc(1, sizeof(*s));
	size_t i, j;

	if (!s || fbc_arena_create(&s->arena, 0) != 0) {
		free(s);
		return oom(err);
	}
	fbc_vec_init(&s->catalogs, sizeof(repo_catalog));
	fbc_vec_init(&s->pkgs, sizeof(repo_pkg));
	fbc_vec_init(&s->findings, sizeof(fbc_repo_finding));
	if (!(s->image_prefix = strdup(rc->image_prefix)))
		goto oom;
	s->replay = rc->replay;
	s->seq = rc->seq;
	for (i = 0; i < rc->pkgs.len; i++) {
		const repo_pkg *p = FBC_VEC_AT(&rc->pkgs, repo_pkg, i);
		repo_pkg *q = fbc_vec_push(&s->pkgs);

		if (!q)
			goto oom;
		*q = *p;
		if (!(q->name = strdup(p->name))) {
			s->pkgs.len--;
			goto oom;
		}
	}
	for (i = 0; i < rc->findings.len; i++) {
		const fbc_repo_finding *f = FBC_VEC_AT(&rc->findings, fbc_repo_finding, i);

		if (finding(s, f->path, f->commit, f->catalog, f->rule, "%s", f->message) != 0)
			goto oom;
	}
	for (i = 0; i < rc->catalogs.len; i++) {
		const repo_catalog *c = FBC_VEC_AT(&rc->catalogs, repo_catalog, i);
		repo_catalog *d = fbc_vec_push(&s->catalogs);

		if (!d)
			goto oom;
		memset(d, 0, sizeof(*d));
		fbc_vec_init(&d->files, sizeof(repo_file));
		fbc_vec_init(&d->adds, sizeof(size_t));
		for (j = 0; j < c->adds.len; j++) {
			size_t *slot = fbc_vec_push(&d->adds);

			if (!slot)
				goto oom;
			*slot = *FBC_VEC_AT(&c->adds, size_t, j);
		}
		d->ocp = c->ocp;
		d->csv_meta = c->csv_meta;
		if (!(d->name = strdup(c->name)) ||
		    fbc_addmode_index_clone(&d->ix, c->ix, err) != 0)
			goto oom;
		for (j = 0; j < c->files.len; j++) {
			const repo_file *f = FBC_VEC_AT(&c->files, repo_file, j);
			repo_file *g = fbc_vec_push(&d->files);

			if (!g)
				goto oom;
			g->len = f->len;
			g->path = strdup(f->path);
			g->data = malloc(f->len + 1);
			if (!g->path || !g->data) {
				free(g->path);
				free(g->data);
				d->files.len--;
				goto oom;
			}
			memcpy(g->data, f->data, f->len + 1);
		}
	}
	*out = s;
	return 0;
oom:
	fbc_repo_catalogs_free(s);
	return oom(err);
}

int fbc_repo_catalogs_build(fbc_repo_catalogs **out, fbc_tree *tree, const fbc_repo_history *h,
			    const fbc_repo_opts *opts, fbc_error *err)
{
	return fbc_repo_catalogs_build_with(out, NULL, 0, tree, h, opts, err);
}

int fbc_repo_catalogs_build_with(fbc_repo_catalogs **out, fbc_repo_catalogs **before, size_t steps,
				 fbc_tree *tree, const fbc_repo_history *h,
				 const fbc_repo_opts *opts, fbc_error *err)
{
	fbc_repo_catalogs *rc = calloc(1, sizeof(*rc)), *snap = NULL;
	fbc_repo_opts dflt = {0};
	fbc_vec names;
	size_t i, k;
	int r;

	fbc_vec_init(&names, sizeof(char *));
	if (!opts)
		opts = &dflt;
	if (!rc || fbc_arena_create(&rc->arena, 0) != 0) {
		free(rc);
		return oom(err);
	}
	fbc_vec_init(&rc->catalogs, sizeof(repo_catalog));
	fbc_vec_init(&rc->pkgs, sizeof(repo_pkg));
	fbc_vec_init(&rc->findings, sizeof(fbc_repo_finding));
	rc->replay = atomic_fetch_add(&replays, 1) + 1;
	if ((r = read_config(rc, tree, err)) != 0)
		goto done;
	/* packages */
	r = am_repo_subdirs(&names, tree, "operators", err);
	if (r == FBC_ENOTFOUND) {
		r = fbc_error_set(err, FBC_ENOTFOUND, "operators",
				  "%s is not an operator repository (no operators/ directory)",
				  fbc_tree_label(tree));
		goto done;
	}
	if (r != 0)
		goto done;
	for (i = 0; i < names.len; i++) {
		repo_pkg *p;

		if (opts->n_packages && !am_repo_listed(*FBC_VEC_AT(&names, char *, i),
							opts->packages, opts->n_packages))
			continue;
		if (!(p = fbc_vec_push(&rc->pkgs)) ||
		    !(p->name = strdup(*FBC_VEC_AT(&names, char *, i)))) {
			if (p)
				rc->pkgs.len--;
			r = oom(err);
			goto done;
		}
		if ((r = read_ci(rc, p, tree, err)) != 0)
			goto done;
	}
	am_repo_names_dispose(&names);
	fbc_vec_init(&names, sizeof(char *));
	/* catalogs */
	r = am_repo_subdirs(&names, tree, "catalogs", err);
	if (r == FBC_ENOTFOUND)
		r = 0;
	if (r != 0)
		goto done;
	if (names.len > FBC_REPO_MAX_CATALOGS) {
		r = fbc_error_set(err, FBC_ELIMIT, "catalogs", "more than %d catalogs",
				  FBC_REPO_MAX_CATALOGS);
		goto done;
	}
	for (i = 0; i < names.len; i++) {
		repo_catalog *c = fbc_vec_push(&rc->catalogs);
		char *root;

		if (!c) {
			r = oom(err);
			goto done;
		}
		fbc_vec_init(&c->files, sizeof(repo_file));
		fbc_vec_init(&c->adds, sizeof(size_t));
		c->name = strdup(*FBC_VEC_AT(&names, char *, i));
		if (!c->name) {
			r = oom(err);
			goto done;
		}
		c->ocp = fbc_ocp_catalog_name(c->name);
		c->csv_meta = ocp_at_least(c->name, 4, 17);
		if ((r = fbc_addmode_index_create(&c->ix, err)) != 0)
			goto done;
		root = fbc_tree_join("catalogs", c->name);
		if (!root) {
			r = oom(err);
			goto done;
		}
		r = opts->n_packages ? 0 : collect_files(rc, c, tree, root, "", err);
		free(root);
		if (r != 0)
			goto done;
	}
	/* the add-mode replay */
	for (k = 0; h && k < fbc_repo_history_count(h); k++) {
		if (before && k == steps && (r = snapshot(&snap, rc, err)) != 0)
			goto done;
		r = replay_step(rc, fbc_repo_history_step_at(h, k), tree, opts, err);
		if (r != 0)
			goto done;
	}
	if (before && !snap && (r = snapshot(&snap, rc, err)) != 0)
		goto done;
	*out = rc;
	rc = NULL;
	if (before) {
		*before = snap;
		snap = NULL;
	}
done:
	fbc_repo_catalogs_free(snap);
	am_repo_names_dispose(&names);
	fbc_repo_catalogs_free(rc);
	return r;
}

void fbc_repo_catalogs_free(fbc_repo_catalogs *rc)
{
	size_t i, j;

	if (!rc)
		return;
	for (i = 0; i < rc->catalogs.len; i++) {
		repo_catalog *c = FBC_VEC_AT(&rc->catalogs, repo_catalog, i);

		for (j = 0; j < c->files.len; j++) {
			free(FBC_VEC_AT(&c->files, repo_file, j)->path);
			free(FBC_VEC_AT(&c->files, repo_file, j)->data);
		}
		fbc_vec_dispose(&c->files);
		fbc_vec_dispose(&c->adds);
		fbc_addmode_index_free(c->ix);
		free(c->name);
	}
	fbc_vec_dispose(&rc->catalogs);
	for (i = 0; i < rc->pkgs.len; i++)
		free(FBC_VEC_AT(&rc->pkgs, repo_pkg, i)->name);
	fbc_vec_dispose(&rc->pkgs);
	fbc_vec_dispose(&rc->findings);
	fbc_arena_free(rc->arena);
	free(rc->image_prefix);
	free(rc);
}

bool fbc_repo_catalogs_related(const fbc_repo_catalogs *a, const fbc_repo_catalogs *b)
{
	return a && b && a->replay == b->replay;
}

bool fbc_repo_catalogs_same(const fbc_repo_catalogs *a, size_t i, const fbc_repo_catalogs *b,
			    size_t j)
{
	const repo_catalog *x, *y;

	if (!a || !b || a->replay != b->replay || i >= a->catalogs.len || j >= b->catalogs.len)
		return false;
	x = FBC_VEC_AT(&a->catalogs, repo_catalog, i);
	y = FBC_VEC_AT(&b->catalogs, repo_catalog, j);
	if (x->csv_meta != y->csv_meta || x->adds.len != y->adds.len ||
	    x->files.len != y->files.len ||
	    (x->adds.len && memcmp(x->adds.items, y->adds.items, x->adds.len * sizeof(size_t))))
		return false;
	for (size_t k = 0; k < x->files.len; k++) {
		const repo_file *f = FBC_VEC_AT(&x->files, repo_file, k),
				*g = FBC_VEC_AT(&y->files, repo_file, k);

		if (f->len != g->len || strcmp(f->path, g->path) != 0 ||
		    (f->len && memcmp(f->data, g->data, f->len) != 0))
			return false;
	}
	return true;
}

size_t fbc_repo_catalogs_count(const fbc_repo_catalogs *rc)
{
	return rc->catalogs.len;
}

const char *fbc_repo_catalogs_name(const fbc_repo_catalogs *rc, size_t i)
{
	return i < rc->catalogs.len ? FBC_VEC_AT(&rc->catalogs, repo_catalog, i)->name : NULL;
}

const fbc_addmode_index *fbc_repo_catalogs_index(const fbc_repo_catalogs *rc, size_t i)
{
	return i < rc->catalogs.len ? FBC_VEC_AT(&rc->catalogs, repo_catalog, i)->ix : NULL;
}

size_t fbc_repo_catalogs_findings_count(const fbc_repo_catalogs *rc)
{
	return rc->findings.len;
}

const fbc_repo_finding *fbc_repo_catalogs_finding(const fbc_repo_catalogs *rc, size_t i)
{
	return i < rc->findings.len ? FBC_VEC_AT(&rc->findings, fbc_repo_finding, i) : NULL;
}

size_t fbc_repo_catalogs_addmode_count(const fbc_repo_catalogs *rc)
{
	size_t i, n = 0;

	for (i = 0; i < rc->pkgs.len; i++)
		n += FBC_VEC_AT(&rc->pkgs, repo_pkg, i)->addmode;
	return n;
}

const char *fbc_repo_catalogs_addmode_package(const fbc_repo_catalogs *rc, size_t i,
					      fbc_addmode_mode *mode)
{
	size_t k, n = 0;

	for (k = 0; k < rc->pkgs.len; k++) {
		repo_pkg *p = FBC_VEC_AT(&rc->pkgs, repo_pkg, k);

		if (!p->addmode)
			continue;
		if (n++ == i) {
			if (mode)
				*mode = p->mode;
			return p->name;
		}
	}
	return NULL;
}
