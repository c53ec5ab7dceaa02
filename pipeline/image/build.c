/* Configs, manifests, index and layout of a catalog image; see image.h. */
#include "pipeline/image/image.h"

#include <jansson.h>

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

int fbc_image_created_from_env(int64_t *out, int64_t dflt, fbc_error *err)
{
	const char *s = getenv("SOURCE_DATE_EPOCH");
	char *end;
	long long v;

	if (!s || !*s) {
		*out = dflt;
		return 0;
	}
	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno || *end || end == s || v < 0 || v > 253402300799LL)
		return fbc_error_set(err, FBC_EINVAL, "SOURCE_DATE_EPOCH",
				     "not a number of seconds since 1970: '%.40s'", s);
	*out = v;
	return 0;
}

static int oom(fbc_error *err)
{
	return fbc_error_set(err, FBC_ENOMEM, NULL, "out of memory");
}

/* Serialise j (compact, sorted keys), store it as a blob, describe it. */
static int put_json(fbc_oci_descriptor *d, const char *dir, json_t *j, const char *media_type,
		    fbc_error *err)
{
	char *text = json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS);
	int rc;

	if (!text)
		return oom(err);
	memset(d, 0, sizeof(*d));
	rc = fbc_oci_layout_put(dir, d->digest, text, strlen(text), err);
	d->size = (int64_t)strlen(text);
	snprintf(d->media_type, sizeof(d->media_type), "%s", media_type);
	free(text);
	return rc;
}

static json_t *descriptor_json(const fbc_oci_descriptor *d)
{
	json_t *j = json_pack("{s:s, s:s, s:I}", "mediaType", d->media_type, "digest", d->digest,
			      "size", (json_int_t)d->size);

	if (j && d->has_platform) {
		json_t *p = json_pack("{s:s, s:s}", "architecture", d->platform.architecture, "os",
				      d->platform.os);

		if (p && d->platform.variant[0] &&
		    json_object_set_new(p, "variant", json_string(d->platform.variant)))
			p = NULL;
		if (!p || json_object_set_new(j, "platform", p)) {
			json_decref(j);
			return NULL;
		}
	}
	return j;
}

/* Labels and annotations every manifest, config and the index carry. */
static json_t *our_annotations(const fbc_image_build_options *o, const char *created)
{
	json_t *a = json_pack("{s:s}", "org.opencontainers.image.created", created);

	if (!a)
		return NULL;
	if ((o->source &&
	     json_object_set_new(a, "org.opencontainers.image.source", json_string(o->source))) ||
	    (o->revision && json_object_set_new(a, "org.opencontainers.image.revision",
						json_string(o->revision))) ||
	    (o->fbcd_revision &&
	     json_object_set_new(a, "io.fbcd.revision", json_string(o->fbcd_revision)))) {
		json_decref(a);
		return NULL;
	}
	return a;
}

static int merge_labels(json_t *labels, const fbc_image_build_options *o, json_t *ann,
			fbc_error *err)
{
	if (json_object_update(labels, ann) ||
	    json_object_set_new(labels, FBC_OCI_LABEL_CONFIGS, json_string("/configs")))
		return oom(err);
	for (size_t i = 0; i < o->n_labels; i++) {
		const char *eq = strchr(o->labels[i], '=');
		char *k;

		if (!eq || eq == o->labels[i])
			return fbc_error_set(err, FBC_EINVAL, o->labels[i],
					     "a label is KEY=VALUE with a non-empty KEY");
		if (!(k = strndup(o->labels[i], (size_t)(eq - o->labels[i]))))
			return oom(err);
		if (json_object_set_new(labels, k, json_string(eq + 1))) {
			free(k);
			return fbc_error_set(err, FBC_EINVAL, o->labels[i],
					     "label is not valid UTF-8");
		}
		free(k);
	}
	return 0;
}

/* The base image's manifest and config for platform p, read from its layout. */
typedef struct base_image {
	fbc_oci_manifest manifest;
	json_t *config;
} base_image;

static void base_dispose(base_image *b)
{
	fbc_oci_manifest_dispose(&b->manifest);
	json_decref(b->config);
	memset(b, 0, sizeof(*b));
}

static int load_json_blob(json_t **out, const char *dir, const char *digest, size_t max,
			  fbc_error *err)
{
	fbc_buf b;
	json_error_t je;
	int rc;

	if ((rc = fbc_oci_layout_read(&b, dir, digest, max, err)))
		return rc;
	*out = json_loadb(b.data ? b.data : "", b.len, 0, &je);
	fbc_buf_dispose(&b);
	if (!*out || !json_is_object(*out)) {
		json_decref(*out);
		*out = NULL;
		return fbc_error_set(err, FBC_EPARSE, digest, "not a JSON object: %s", je.text);
	}
	return 0;
}

static int read_manifest(fbc_oci_manifest *m, const char *dir, const fbc_oci_descriptor *d,
			 fbc_error *err)
{
	fbc_buf b;
	int rc;

	if ((rc = fbc_oci_layout_read(&b, dir, d->digest, FBC_OCI_MANIFEST_MAX, err)))
		return rc;
	rc = fbc_oci_manifest_parse(m, b.data ? b.data : "", b.len,
				    d->media_type[0] ? d->media_type : NULL, err);
	fbc_buf_dispose(&b);
	return rc;
}

static int load_base(base_image *out, const fbc_image_build_options *o, const fbc_oci_platform *p,
		     fbc_error *err)
{
	fbc_oci_descriptor root, pick;
	fbc_oci_manifest idx;
	char want[100];
	fbc_buf have;
	json_t *arch, *os;
	int rc;

	memset(&idx, 0, sizeof(idx));
	memset(out, 0, sizeof(*out));
	fbc_buf_init(&have, 4096);
	fbc_oci_platform_format(p, want, sizeof(want));
	if ((rc = fbc_oci_layout_root(&root, o->base_layout, o->base_ref_name, err)))
		goto done;
	pick = root;
	if ((rc = read_manifest(&idx, o->base_layout, &root, err)))
		goto done;
	if (idx.kind == FBC_OCI_KIND_INDEX) {
		bool found = false;

		for (size_t i = 0; i < idx.n_items && !found; i++) {
			char one[100];

			if (!idx.items[i].has_platform)
				continue;
			if (fbc_oci_platform_equal(&idx.items[i].platform, p)) {
				pick = idx.items[i];
				found = true;
			}
			fbc_oci_platform_format(&idx.items[i].platform, one, sizeof(one));
			/* the list is only for the message: a full buffer just stops it */
			(void)fbc_buf_printf(&have, "%s%s", have.len ? ", " : "", one);
		}
		if (!found) {
			rc = fbc_error_set(err, FBC_EINVAL, "--platform",
					   "the base image has no %s (it has: %s)", want,
					   have.len ? have.data : "none");
			goto done;
		}
		if ((rc = read_manifest(&out->manifest, o->base_layout, &pick, err)))
			goto done;
		if (out->manifest.kind != FBC_OCI_KIND_MANIFEST) {
			rc = fbc_error_set(err, FBC_EINVAL, pick.digest,
					   "the base index lists a nested index");
			goto done;
		}
	} else {
		out->manifest = idx;
		memset(&idx, 0, sizeof(idx));
	}
	if ((rc = load_json_blob(&out->config, o->base_layout, out->manifest.config.digest,
				 FBC_OCI_CONFIG_MAX, err)))
		goto done;
	arch = json_object_get(out->config, "architecture");
	os = json_object_get(out->config, "os");
	if (!json_is_string(arch) || !json_is_string(os) ||
	    strcmp(json_string_value(arch), p->architecture) ||
	    strcmp(json_string_value(os), p->os)) {
		rc = fbc_error_set(err, FBC_EINVAL, "--platform", "the base image is %s/%s, not %s",
				   json_is_string(os) ? json_string_value(os) : "?",
				   json_is_string(arch) ? json_string_value(arch) : "?", want);
		goto done;
	}
done:
	fbc_buf_dispose(&have);
	fbc_oci_manifest_dispose(&idx);
	if (rc)
		base_dispose(out);
	return rc;
}

static const char *layer_media_type(const char *mt)
{
	if (!strcmp(mt, FBC_OCI_MT_DOCKER_LAYER))
		return FBC_OCI_MT_LAYER_GZIP;
	if (!strcmp(mt, "application/vnd.docker.image.rootfs.diff.tar"))
		return FBC_OCI_MT_LAYER_TAR;
	return mt;
}

/* One platform's config and manifest. */
static int build_platform(fbc_oci_descriptor *out, const char *dir, const fbc_oci_platform *p,
			  const fbc_image_build_options *o, const fbc_oci_descriptor *layer,
			  const char *diff_id, const char *created, fbc_error *err)
{
	base_image base;
	json_t *cfg = NULL, *inner, *labels, *rootfs, *diff_ids, *history, *layers = NULL;
	json_t *manifest = NULL, *ann = NULL, *hist;
	fbc_oci_descriptor cfg_d, man_d;
	int rc = 0;

	memset(&base, 0, sizeof(base));
	if (!(ann = our_annotations(o, created))) {
		rc = oom(err);
		goto done;
	}
	if (o->base_layout) {
		if ((rc = load_base(&base, o, p, err)))
			goto done;
		cfg = json_deep_copy(base.config);
	} else {
		cfg = json_pack("{s:s, s:s}", "architecture", p->architecture, "os", p->os);
		if (cfg && p->variant[0])
			json_object_set_new(cfg, "variant", json_string(p->variant));
	}
	if (!cfg || !(layers = json_array())) {
		rc = oom(err);
		goto done;
	}
	json_object_set_new(cfg, "created", json_string(created));
	inner = json_object_get(cfg, "config");
	if (!json_is_object(inner)) {
		inner = json_object();
		if (!inner || json_object_set_new(cfg, "config", inner)) {
			rc = oom(err);
			goto done;
		}
	}
	labels = json_object_get(inner, "Labels");
	if (!json_is_object(labels)) {
		labels = json_object();
		if (!labels || json_object_set_new(inner, "Labels", labels)) {
			rc = oom(err);
			goto done;
		}
	}
	if ((rc = merge_labels(labels, o, ann, err)))
		goto done;
	if (o->base_layout &&
	    (json_object_set_new(inner, "Entrypoint", json_pack("[s]", "/bin/opm")) ||
	     json_object_set_new(
		     inner, "Cmd",
		     json_pack("[s,s,s]", "serve", "/configs", "--cache-dir=/tmp/cache")))) {
		rc = oom(err);
		goto done;
	}
	rootfs = json_object_get(cfg, "rootfs");
	diff_ids = json_is_object(rootfs) ? json_object_get(rootfs, "diff_ids") : NULL;
	if (o->base_layout &&
	    (!json_is_array(diff_ids) || json_array_size(diff_ids) != base.manifest.n_items)) {
		rc = fbc_error_set(err, FBC_EINVAL, base.manifest.config.digest,
				   "the base config's rootfs.diff_ids do not match its layers");
		goto done;
	}
	if (!o->base_layout) {
		rootfs = json_pack("{s:s, s:[]}", "type", "layers", "diff_ids");
		if (!rootfs || json_object_set_new(cfg, "rootfs", rootfs)) {
			rc = oom(err);
			goto done;
		}
		diff_ids = json_object_get(rootfs, "diff_ids");
	}
	if (json_array_append_new(diff_ids, json_string(diff_id))) {
		rc = oom(err);
		goto done;
	}
	history = json_object_get(cfg, "history");
	if (!json_is_array(history)) {
		history = json_array();
		if (!history || json_object_set_new(cfg, "history", history)) {
			rc = oom(err);
			goto done;
		}
	}
	hist = json_pack("{s:s, s:s}", "created", created, "created_by",
			 "fbcd image build: COPY configs /configs");
	if (!hist || json_array_append_new(history, hist)) {
		rc = oom(err);
		goto done;
	}
	if ((rc = put_json(&cfg_d, dir, cfg, FBC_OCI_MT_CONFIG, err)))
		goto done;

	for (size_t i = 0; i < base.manifest.n_items; i++) {
		fbc_oci_descriptor d = base.manifest.items[i];
		char src[4200];

		d.has_platform = false;
		snprintf(d.media_type, sizeof(d.media_type), "%s",
			 layer_media_type(base.manifest.items[i].media_type));
		if ((rc = fbc_oci_layout_blob_path(src, sizeof(src), o->base_layout, d.digest,
						   err)) ||
		    (rc = fbc_oci_layout_put_file(dir, d.digest, src, err)))
			goto done;
		if (json_array_append_new(layers, descriptor_json(&d))) {
			rc = oom(err);
			goto done;
		}
	}
	if (json_array_append_new(layers, descriptor_json(layer))) {
		rc = oom(err);
		goto done;
	}
	manifest = json_pack("{s:i, s:s, s:o, s:O, s:O}", "schemaVersion", 2, "mediaType",
			     FBC_OCI_MT_MANIFEST, "config", descriptor_json(&cfg_d), "layers",
			     layers, "annotations", ann);
	if (!manifest) {
		rc = oom(err);
		goto done;
	}
	if ((rc = put_json(&man_d, dir, manifest, FBC_OCI_MT_MANIFEST, err)))
		goto done;
	man_d.has_platform = true;
	man_d.platform = *p;
	*out = man_d;
done:
	base_dispose(&base);
	json_decref(cfg);
	json_decref(layers);
	json_decref(manifest);
	json_decref(ann);
	return rc;
}

int fbc_image_build(fbc_image_result *out, const fbc_catalog *cat, const char *out_dir,
		    const char *ref_name, const fbc_image_build_options *opts, fbc_error *err)
{
	static const fbc_oci_platform amd64 = {"linux", "amd64", ""};
	fbc_image_result res;
	fbc_buf gz;
	fbc_oci_descriptor layer;
	json_t *manifests = NULL, *index = NULL, *ann = NULL;
	const fbc_oci_platform *plats = opts->n_platforms ? opts->platforms : &amd64;
	size_t np = opts->n_platforms ? opts->n_platforms : 1;
	char created[32];
	int rc;

	memset(&res, 0, sizeof(res));
	memset(&layer, 0, sizeof(layer));
	fbc_buf_init(&gz, 0);
	if (np > FBC_IMAGE_PLATFORMS_MAX)
		return fbc_error_set(err, FBC_ELIMIT, "--platform", "more than %d platforms",
				     FBC_IMAGE_PLATFORMS_MAX);
	if (opts->n_labels > FBC_IMAGE_LABELS_MAX)
		return fbc_error_set(err, FBC_ELIMIT, "--label", "more than %d labels",
				     FBC_IMAGE_LABELS_MAX);
	for (size_t i = 0; i < np; i++)
		for (size_t j = 0; j < i; j++)
			if (fbc_oci_platform_equal(&plats[i], &plats[j])) {
				char s[100];

				fbc_oci_platform_format(&plats[i], s, sizeof(s));
				return fbc_error_set(err, FBC_EINVAL, "--platform",
						     "%s is given twice", s);
			}
	if (opts->single_manifest && np != 1)
		return fbc_error_set(err, FBC_EINVAL, "--single-manifest",
				     "a plain manifest holds one platform, not %zu", np);
	fbc_oci_format_time(created, opts->created);
	if ((rc = fbc_image_layer(NULL, &gz, res.diff_id, cat, opts->created, opts->gzip_level,
				  &res.n_packages, err)))
		goto done;
	if ((rc = fbc_oci_layout_init(out_dir, err)) ||
	    (rc = fbc_oci_layout_put(out_dir, layer.digest, gz.data, gz.len, err)))
		goto done;
	memcpy(res.layer_digest, layer.digest, sizeof(layer.digest));
	layer.size = res.layer_size = (int64_t)gz.len;
	snprintf(layer.media_type, sizeof(layer.media_type), "%s", FBC_OCI_MT_LAYER_GZIP);
	fbc_buf_dispose(&gz);

	for (size_t i = 0; i < np; i++) {
		if ((rc = build_platform(&res.manifests[i], out_dir, &plats[i], opts, &layer,
					 res.diff_id, created, err)))
			goto done;
		res.n_platforms++;
	}
	if (opts->single_manifest) {
		res.top = res.manifests[0];
	} else {
		if (!(manifests = json_array()) || !(ann = our_annotations(opts, created))) {
			rc = oom(err);
			goto done;
		}
		for (size_t i = 0; i < np; i++)
			if (json_array_append_new(manifests, descriptor_json(&res.manifests[i]))) {
				rc = oom(err);
				goto done;
			}
		index = json_pack("{s:i, s:s, s:O, s:O}", "schemaVersion", 2, "mediaType",
				  FBC_OCI_MT_INDEX, "manifests", manifests, "annotations", ann);
		if (!index) {
			rc = oom(err);
			goto done;
		}
		if ((rc = put_json(&res.top, out_dir, index, FBC_OCI_MT_INDEX, err)))
			goto done;
	}
	if ((rc = fbc_oci_layout_write_index(out_dir, &res.top, ref_name, err)))
		goto done;
	*out = res;
done:
	fbc_buf_dispose(&gz);
	json_decref(manifests);
	json_decref(index);
	json_decref(ann);
	return rc;
}
