/*
 * Bundle sources for templates (templates.md §4.5): olm.bundle blobs of FBC
 * directories by exact image string and form, then bundle directories
 * `<root>/<package>/<version>/` rendered by service/bundle.
 */
#include "service/template/internal.h"
#include "service/base/base64.h"
#include "service/base/strmap.h"
#include "service/load/load.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

typedef struct img_entry {
	char *image;
	json_t *obj_form; /* blob without olm.csv.metadata (olm.bundle.object) */
	json_t *csv_form; /* blob with olm.csv.metadata */
} img_entry;

#define MAX_ROOTS 32

struct fbc_template_sources {
	fbc_strmap images; /* image -> img_entry */
	fbc_tree *roots[MAX_ROOTS];
	size_t nroots;
	bool pull;
	fbc_template_puller puller;
	void *puller_ctx;
	pthread_mutex_t lock; /* guards the render cache */
	fbc_strmap cache;     /* "<migrate>\n<image>" -> json_t blob rendered from a directory */
	fbc_strmap files;     /* content ids of the tree files indexed (keys owned) */
};

int fbc_template_sources_create(fbc_template_sources **out, fbc_error *err)
{
	fbc_template_sources *s = calloc(1, sizeof(*s));
	if (s == NULL)
		return fbc_error_set(err, FBC_ENOMEM, NULL, "out of memory");
	fbc_strmap_init(&s->images);
	fbc_strmap_init(&s->cache);
	fbc_strmap_init(&s->files);
	pthread_mutex_init(&s->lock, NULL);
	*out = s;
	return 0;
}

void fbc_template_sources_free(fbc_template_sources *s)
{
	if (s == NULL)
		return;
	const char *k;
	void *v;
	for (size_t it = 0; fbc_strmap_next(&s->images, &it, &k, &v);) {
		img_entry *e = v;
		json_decref(e->obj_form);
		json_decref(e->csv_form);
		free(e->image);
		free(e);
	}
	for (size_t it = 0; fbc_strmap_next(&s->cache, &it, &k, &v);) {
		json_decref(v);
		free((char *)k);
	}
	for (size_t it = 0; fbc_strmap_next(&s->files, &it, &k, &v);)
		free((char *)k);
	fbc_strmap_dispose(&s->images);
	fbc_strmap_dispose(&s->cache);
	fbc_strmap_dispose(&s->files);
	pthread_mutex_destroy(&s->lock);
	free(s);
}

void fbc_template_sources_set_pull(fbc_template_sources *s, bool pull)
{
	s->pull = pull;
}

void fbc_template_sources_set_puller(fbc_template_sources *s, fbc_template_puller pull, void *ctx)
{
	s->puller = pull;
	s->puller_ctx = ctx;
	s->pull = pull != NULL;
}

size_t fbc_template_sources_images(const fbc_template_sources *s)
{
	return s->images.count;
}

static bool has_property(const json_t *blob, const char *type)
{
	json_t *props = json_object_get(blob, "properties");
	size_t i;
	json_t *p;
	json_array_foreach(props, i, p)
	{
		const char *t = json_string_value(json_object_get(p, "type"));
		if (t != NULL && strcmp(t, type) == 0)
			return true;
	}
	return false;
}

static int index_blob(fbc_template_sources *s, json_t *blob, fbc_error *err)
{
	const char *image = json_string_value(json_object_get(blob, "image"));
	if (image == NULL || image[0] == '\0')
		return 0;
	img_entry *e = fbc_strmap_get(&s->images, image);
	if (e == NULL) {
		e = calloc(1, sizeof(*e));
		if (e == NULL || (e->image = strdup(image)) == NULL) {
			free(e);
			return fbc_error_set(err, FBC_ENOMEM, NULL, "out of memory");
		}
		if (fbc_strmap_put(&s->images, e->image, e, NULL) != 0) {
			free(e->image);
			free(e);
			return fbc_error_set(err, FBC_ENOMEM, NULL, "out of memory");
		}
	}
	json_t **slot = has_property(blob, "olm.csv.metadata") ? &e->csv_form : &e->obj_form;
	if (*slot == NULL)
		*slot = json_incref(blob); /* the first catalog that has it wins */
	return 0;
}

static int on_meta(void *ctx, const fbc_meta *meta, fbc_error *err)
{
	if (strcmp(meta->schema, "olm.bundle") != 0)
		return 0;
	return index_blob(ctx, meta->blob, err);
}

int fbc_template_sources_add_fbc(fbc_template_sources *s, const char *dir, fbc_diags *diags,
				 fbc_error *err)
{
	fbc_diags local;
	int rc;
	if (diags == NULL) {
		fbc_diags_init(&local, 1000);
		diags = &local;
	}
	rc = fbc_load_dir(dir, NULL, on_meta, s, diags, err);
	if (diags == &local)
		fbc_diags_dispose(&local);
	if (rc != 0)
		fbc_error_prefix(err, "--bundles-from %s", dir);
	return rc;
}

/* Walk a tree and load each .yaml/.yml/.json file as a buffer. */
static int add_tree_dir(fbc_template_sources *s, fbc_tree *t, const char *dir, int depth,
			fbc_error *err)
{
	fbc_vec ents;
	int rc = 0;
	if (depth > 32)
		return fbc_error_set(err, FBC_ELIMIT, dir, "directory nesting deeper than 32");
	fbc_vec_init(&ents, sizeof(fbc_tree_entry));
	rc = fbc_tree_list(t, &ents, dir, err);
	if (rc != 0)
		goto done;
	for (size_t i = 0; i < ents.len && rc == 0; i++) {
		fbc_tree_entry *e = (fbc_tree_entry *)((char *)ents.items + i * sizeof(*e));
		char path[4096];
		size_t dl = strlen(dir);
		if (dl + strlen(e->name) + 2 > sizeof(path))
			continue;
		if (dl > 0)
			snprintf(path, sizeof(path), "%s/%s", dir, e->name);
		else
			snprintf(path, sizeof(path), "%s", e->name);
		if (e->kind == FBC_TREE_DIR) {
			rc = add_tree_dir(s, t, path, depth + 1, err);
			continue;
		}
		if (e->kind != FBC_TREE_FILE)
			continue;
		size_t nl = strlen(e->name);
		bool yaml = (nl > 5 && strcmp(e->name + nl - 5, ".yaml") == 0) ||
			    (nl > 4 && strcmp(e->name + nl - 4, ".yml") == 0) ||
			    (nl > 5 && strcmp(e->name + nl - 5, ".json") == 0);
		if (!yaml)
			continue;
		/* the same content already indexed (catalogs of several versions often hold the
		 * same file) adds nothing: the first blob of an image wins */
		if (e->id[0]) {
			char *id;

			if (fbc_strmap_has(&s->files, e->id))
				continue;
			if (!(id = strdup(e->id)) ||
			    fbc_strmap_put(&s->files, id, NULL, NULL) != 0) {
				free(id);
				rc = fbc_error_set(err, FBC_ENOMEM, path, "out of memory");
				break;
			}
		}
		fbc_tree_blob b;
		rc = fbc_tree_read(t, &b, path, 256u << 20, err);
		if (rc != 0)
			break;
		fbc_diags diags;
		fbc_diags_init(&diags, 100);
		rc = fbc_load_buffer(path, b.data ? b.data : "", b.len, NULL, on_meta, s, &diags,
				     err);
		fbc_diags_dispose(&diags);
		fbc_tree_blob_release(t, &b);
	}
done:
	fbc_tree_entries_dispose(&ents);
	return rc;
}

int fbc_template_sources_add_fbc_tree(fbc_template_sources *s, fbc_tree *t, const char *dir,
				      fbc_error *err)
{
	return add_tree_dir(s, t, dir, 0, err);
}

int fbc_template_sources_add_bundle_root(fbc_template_sources *s, fbc_tree *root, fbc_error *err)
{
	if (s->nroots >= MAX_ROOTS)
		return fbc_error_set(err, FBC_ELIMIT, NULL, "more than %d bundle roots", MAX_ROOTS);
	s->roots[s->nroots++] = root;
	return 0;
}

/* The CSV object among a blob's olm.bundle.object properties (new ref). */
static json_t *csv_of_blob(const json_t *blob)
{
	json_t *props = json_object_get(blob, "properties");
	size_t i;
	json_t *p;
	json_array_foreach(props, i, p)
	{
		const char *t = json_string_value(json_object_get(p, "type"));
		if (t == NULL || strcmp(t, "olm.bundle.object") != 0)
			continue;
		const char *data =
			json_string_value(json_object_get(json_object_get(p, "value"), "data"));
		if (data == NULL)
			continue;
		unsigned char *raw = NULL;
		size_t rawlen = 0, bad = 0;
		if (fbc_base64_decode(&raw, &rawlen, &bad, data, strlen(data)) != 0)
			continue;
		json_error_t jerr;
		json_t *obj = json_loadb((const char *)raw, rawlen, 0, &jerr);
		free(raw);
		const char *kind = json_string_value(json_object_get(obj, "kind"));
		if (kind != NULL && strcmp(kind, "ClusterServiceVersion") == 0)
			return obj;
		json_decref(obj);
	}
	return NULL;
}

/* bundle-object-to-csv-metadata on a blob from a catalog (§4.4). */
static int migrate_blob(json_t **out, json_t *blob, fbc_error *err)
{
	json_t *csv = csv_of_blob(blob);
	if (csv == NULL) {
		*out = json_incref(blob); /* no CSV: left as it is */
		return 0;
	}
	fbc_buf b;
	fbc_buf_init(&b, 0);
	int rc = fbc_bundle_csv_metadata_value(&b, csv, err);
	json_decref(csv);
	if (rc != 0) {
		fbc_buf_dispose(&b);
		fbc_error_prefix(err, "migrate");
		return rc;
	}
	json_error_t jerr;
	json_t *meta = json_loadb(b.data, b.len, 0, &jerr);
	fbc_buf_dispose(&b);
	json_t *copy = json_deep_copy(blob);
	json_t *props = json_array();
	if (meta == NULL || copy == NULL || props == NULL) {
		json_decref(meta);
		json_decref(copy);
		json_decref(props);
		return fbc_error_set(err, FBC_ENOMEM, NULL, "out of memory");
	}
	size_t i;
	json_t *p;
	json_array_foreach(json_object_get(copy, "properties"), i, p)
	{
		const char *t = json_string_value(json_object_get(p, "type"));
		if (t != NULL && strcmp(t, "olm.bundle.object") == 0)
			continue;
		json_array_append(props, p);
	}
	json_array_append_new(props,
			      json_pack("{s:s,s:o}", "type", "olm.csv.metadata", "value", meta));
	json_object_set_new(copy, "properties", props);
	*out = copy;
	return 0;
}

/* <package> and <version> candidates from ".../<package>:<tag>". */
static bool split_image(const char *image, char *pkg, size_t pcap, char *tag, size_t tcap)
{
	if (strchr(image, '@') != NULL)
		return false;
	const char *slash = strrchr(image, '/');
	const char *last = slash ? slash + 1 : image;
	const char *colon = strrchr(last, ':');
	if (colon == NULL || colon == last || colon[1] == '\0')
		return false;
	size_t pl = (size_t)(colon - last), tl = strlen(colon + 1);
	if (pl >= pcap || tl >= tcap)
		return false;
	memcpy(pkg, last, pl);
	pkg[pl] = '\0';
	memcpy(tag, colon + 1, tl + 1);
	return strchr(pkg, '/') == NULL && strstr(tag, "..") == NULL && strchr(tag, '/') == NULL;
}

/* Read the bundle directory of image under one of the roots. */
static int find_bundle(fbc_bundle_dir **out, fbc_template_sources *s, const char *image,
		       fbc_error *err)
{
	char pkg[256], tag[256], dir[600];
	if (!split_image(image, pkg, sizeof(pkg), tag, sizeof(tag)))
		return FBC_ENOTFOUND;
	for (size_t r = 0; r < s->nroots; r++) {
		for (int variant = 0; variant < 2; variant++) {
			const char *ver = tag;
			if (variant == 1) {
				if (tag[0] != 'v')
					continue;
				ver = tag + 1;
			}
			snprintf(dir, sizeof(dir), "%s/%s", pkg, ver);
			fbc_tree_entry st;
			fbc_error e2;
			fbc_error_init(&e2);
			if (fbc_tree_stat(s->roots[r], &st, dir, &e2) != 0)
				continue;
			bool is_dir = st.kind == FBC_TREE_DIR;
			fbc_tree_entry_dispose(&st);
			if (!is_dir)
				continue;
			fbc_tree *sub = NULL;
			int rc = fbc_tree_sub(&sub, s->roots[r], dir, err);
			if (rc != 0)
				return rc;
			rc = fbc_bundle_read(out, sub, NULL, err);
			fbc_tree_free(sub);
			if (rc != 0)
				fbc_error_prefix(err, "bundle directory %s/%s",
						 fbc_tree_label(s->roots[r]), dir);
			return rc;
		}
	}
	if (s->puller != NULL) {
		int rc = s->puller(out, image, s->puller_ctx, err);
		if (rc != 0)
			fbc_error_prefix(err, "pulling %s", image);
		/* not in the registry either: the puller's words, not the
		 * generic "cannot resolve" of the caller */
		return rc == FBC_ENOTFOUND ? FBC_EINVAL : rc;
	}
	return FBC_ENOTFOUND;
}

static int render_dir(json_t **out, fbc_template_sources *s, const char *image,
		      fbc_bundle_migrate migrate, fbc_error *err)
{
	char key[4200];
	snprintf(key, sizeof(key), "%d\n%s", (int)migrate, image);
	pthread_mutex_lock(&s->lock);
	json_t *hit = fbc_strmap_get(&s->cache, key);
	if (hit != NULL)
		json_incref(hit);
	pthread_mutex_unlock(&s->lock);
	if (hit != NULL) {
		*out = hit;
		return 0;
	}
	fbc_bundle_dir *b = NULL;
	int rc = find_bundle(&b, s, image, err);
	if (rc != 0)
		return rc;
	fbc_buf buf;
	fbc_buf_init(&buf, 0);
	bool written = false;
	rc = fbc_bundle_render(&buf, &written, b, image, migrate, err);
	fbc_bundle_free(b);
	if (rc == 0 && !written)
		rc = fbc_error_set(err, FBC_EINVAL, NULL,
				   "bundle for %s has an empty package name: opm writes nothing",
				   image);
	json_t *blob = NULL;
	if (rc == 0) {
		json_error_t jerr;
		blob = json_loadb(buf.data, buf.len, 0, &jerr);
		if (blob == NULL)
			rc = fbc_error_set(err, FBC_EINTERNAL, NULL,
					   "rendered bundle is not JSON: %s", jerr.text);
	}
	fbc_buf_dispose(&buf);
	if (rc != 0)
		return rc;
	char *k = strdup(key);
	pthread_mutex_lock(&s->lock);
	if (k != NULL && !fbc_strmap_has(&s->cache, k) &&
	    fbc_strmap_put(&s->cache, k, json_incref(blob), NULL) == 0)
		k = NULL;
	else if (k != NULL && !fbc_strmap_has(&s->cache, k))
		json_decref(blob); /* put failed: undo the incref */
	pthread_mutex_unlock(&s->lock);
	free(k);
	*out = blob;
	return 0;
}

int tpl_sources_resolve(json_t **out, fbc_template_sources *s, const char *image,
			fbc_bundle_migrate migrate, fbc_error *err)
{
	img_entry *e = fbc_strmap_get(&s->images, image);
	if (e != NULL) {
		if (migrate == FBC_BUNDLE_MIGRATE_CSV_METADATA) {
			if (e->csv_form != NULL) {
				*out = json_incref(e->csv_form);
				return 0;
			}
			return migrate_blob(out, e->obj_form, err);
		}
		if (e->obj_form != NULL) {
			*out = json_incref(e->obj_form);
			return 0;
		}
	}
	int rc = render_dir(out, s, image, migrate, err);
	if (rc != FBC_ENOTFOUND)
		return rc;
	if (e != NULL)
		return fbc_error_set(
			err, FBC_ENOTFOUND, NULL,
			"cannot resolve image %s without migration: the bundle sources "
			"hold it only in olm.csv.metadata form and no bundle directory "
			"has it",
			image);
	if (s->pull)
		return fbc_error_set(err, FBC_ENOTFOUND, NULL,
				     "cannot resolve image %s (pulling is not available yet)",
				     image);
	return fbc_error_set(err, FBC_ENOTFOUND, NULL,
			     "cannot resolve image %s: not in any --bundles-from catalog and no "
			     "bundle directory under --bundle-root",
			     image);
}

json_t *tpl_sources_csv(fbc_template_sources *s, const char *image)
{
	img_entry *e = fbc_strmap_get(&s->images, image);
	if (e != NULL && e->obj_form != NULL) {
		json_t *csv = csv_of_blob(e->obj_form);
		if (csv != NULL)
			return csv;
	}
	fbc_bundle_dir *b = NULL;
	fbc_error err;
	fbc_error_init(&err);
	if (find_bundle(&b, s, image, &err) != 0)
		return NULL;
	const json_t *csv = fbc_bundle_csv(b);
	json_t *copy = csv ? json_deep_copy(csv) : NULL;
	fbc_bundle_free(b);
	return copy;
}
