/*
 * fbc_bundle_read: the tree -> the entries of manifests/ and metadata/,
 * each decoded once (bundles.md §2.1, §2.2), then the CSV choice (§2.6) and
 * the metadata targets (§2.8).
 */
#include "service/bundle/internal.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_MAX_FILE  (16u << 20)
#define DEFAULT_MAX_TOTAL (256u << 20)
#define DEFAULT_MAX_FILES 10000u

static void entry_dispose(bentry *e)
{
	free(e->file);
	free(e->text);
	json_decref(e->doc);
	free(e->why);
}

void fbc_bundle_free(fbc_bundle_dir *b)
{
	if (b == NULL)
		return;
	for (size_t i = 0; i < b->manifests.len; i++)
		entry_dispose(FBC_VEC_AT(&b->manifests, bentry, i));
	for (size_t i = 0; i < b->metadata.len; i++)
		entry_dispose(FBC_VEC_AT(&b->metadata, bentry, i));
	fbc_vec_dispose(&b->manifests);
	fbc_vec_dispose(&b->metadata);
	free(b->objects);
	free(b->extra_csv);
	free(b->package);
	free(b->channels_raw);
	free(b->default_channel);
	for (size_t i = 0; i < b->nchannels; i++)
		free(b->channels[i]);
	free(b->channels);
	fbc_bundle_rawprops_free(b->deps, b->ndeps);
	fbc_bundle_rawprops_free(b->props, b->nprops);
	free(b->skips);
	free(b);
}

int fbc_bundle_detect(bool *out, fbc_tree *t, const char *dir, fbc_error *err)
{
	fbc_vec v;
	bool man = false, meta = false;
	int rc;

	fbc_vec_init(&v, sizeof(fbc_tree_entry));
	rc = fbc_tree_list(t, &v, dir ? dir : "", err);
	if (rc == 0) {
		for (size_t i = 0; i < v.len; i++) {
			fbc_tree_entry *e = FBC_VEC_AT(&v, fbc_tree_entry, i);
			if (e->kind != FBC_TREE_DIR)
				continue;
			man |= strcmp(e->name, "manifests") == 0;
			meta |= strcmp(e->name, "metadata") == 0;
		}
		*out = man && meta;
	}
	fbc_tree_entries_dispose(&v);
	return rc;
}

typedef struct reader {
	fbc_tree *t;
	fbc_bundle_limits lim;
	size_t total, files;
	fbc_error *err;
} reader;

static int oom(fbc_error *err)
{
	return fbc_error_set(err, FBC_ENOMEM, NULL, "out of memory");
}

static int set_why(bentry *e, int line, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int set_why(bentry *e, int line, const char *fmt, ...)
{
	char tmp[FBC_ERROR_MESSAGE_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	free(e->why);
	e->why = strdup(tmp);
	e->why_line = line;
	return e->why ? 0 : FBC_ENOMEM;
}

/* Read and decode one entry of dir. */
static int read_entry(reader *r, bentry *e, const char *dir, const fbc_tree_entry *te)
{
	fbc_tree_entry target = {0};
	fbc_tree_blob blob = {0};
	fbc_error lerr;
	const char *path;
	int rc = 0;

	fbc_error_init(&lerr);
	e->file = fbc_tree_join(dir, te->name);
	if (e->file == NULL)
		return oom(r->err);
	e->hidden = te->name[0] == '.';
	e->line = 1;
	path = e->file;
	if (te->kind == FBC_TREE_LINK) {
		rc = fbc_tree_follow(r->t, &target, e->file, &lerr);
		if (rc == FBC_ENOMEM)
			return oom(r->err);
		if (rc != 0) {
			e->unreadable = true;
			rc = set_why(e, 0, "open %s: %s", e->file, lerr.message);
			goto done;
		}
		path = target.name;
		if (target.kind == FBC_TREE_DIR) {
			e->is_dir = true;
			rc = set_why(e, 0, "read %s: is a directory", e->file);
			goto done;
		}
	} else if (te->kind == FBC_TREE_DIR) {
		e->is_dir = true;
		rc = set_why(e, 0, "read %s: is a directory", e->file);
		goto done;
	}
	if (te->kind == FBC_TREE_OTHER ||
	    (te->kind == FBC_TREE_LINK && target.kind != FBC_TREE_FILE)) {
		e->unreadable = true;
		rc = set_why(e, 0, "read %s: not a regular file", e->file);
		goto done;
	}
	rc = fbc_tree_read(r->t, &blob, path, r->lim.max_file_bytes, &lerr);
	if (rc == FBC_ELIMIT) {
		rc = fbc_error_set(
			r->err, FBC_ELIMIT, e->file,
			"file of %llu bytes exceeds the %zu-byte limit for a bundle file "
			"(max_file_bytes)",
			(unsigned long long)(te->kind == FBC_TREE_LINK ? target.size : te->size),
			r->lim.max_file_bytes);
		goto done;
	}
	if (rc != 0) {
		if (rc == FBC_ENOMEM)
			goto done;
		e->unreadable = true;
		rc = set_why(e, 0, "read %s: %s", e->file, lerr.message);
		goto done;
	}
	r->total += blob.len;
	if (r->total > r->lim.max_total_bytes) {
		rc = fbc_error_set(r->err, FBC_ELIMIT, e->file,
				   "the bundle's files exceed the %zu-byte limit (max_total_bytes)",
				   r->lim.max_total_bytes);
		goto done;
	}
	e->text = malloc(blob.len + 1);
	if (e->text == NULL) {
		rc = oom(r->err);
		goto done;
	}
	if (blob.len)
		memcpy(e->text, blob.data, blob.len);
	e->text[blob.len] = 0;
	e->len = blob.len;
	rc = fbc_bundle_decode_first(&e->doc, &e->is_json, &e->line, &e->why, &e->why_line, e->text,
				     e->len, r->err);
done:
	if (rc == FBC_ENOMEM && r->err->code == 0)
		oom(r->err);
	fbc_tree_blob_release(r->t, &blob);
	fbc_tree_entry_dispose(&target);
	return rc;
}

static int read_dir(reader *r, fbc_vec *out, const char *dir)
{
	fbc_vec v;
	int rc;

	fbc_vec_init(&v, sizeof(fbc_tree_entry));
	rc = fbc_tree_list(r->t, &v, dir, r->err);
	if (rc != 0)
		goto done;
	fbc_tree_entries_sort(&v);
	r->files += v.len;
	if (r->files > r->lim.max_files) {
		rc = fbc_error_set(r->err, FBC_ELIMIT, dir, "%s: more than %zu files in the bundle",
				   dir, r->lim.max_files);
		goto done;
	}
	for (size_t i = 0; i < v.len; i++) {
		bentry *e = fbc_vec_push(out);
		if (e == NULL) {
			rc = oom(r->err);
			goto done;
		}
		if ((rc = read_entry(r, e, dir, FBC_VEC_AT(&v, fbc_tree_entry, i))))
			goto done;
	}
done:
	fbc_tree_entries_dispose(&v);
	return rc;
}

/* Object check (§2.2 step 5): an object with a non-empty string kind. */
static int check_kind(bentry *e)
{
	json_t *k;

	if (e->doc == NULL)
		return 0;
	k = json_object_get(e->doc, "kind");
	if (json_is_object(e->doc) && json_is_string(k) && json_string_length(k) > 0) {
		e->kind = json_string_value(k);
		return 0;
	}
	if (!json_is_object(e->doc))
		return set_why(e, e->line, "%s does not decode into an object (%s)", e->file,
			       json_is_null(e->doc)    ? "empty document"
			       : json_is_array(e->doc) ? "a list"
						       : "a scalar");
	return set_why(e, e->line, "Object 'Kind' is missing in '%s'", e->file);
}

/* strconv.FormatFloat(f, 'g', -1, 32) */
static void float32_string(char *buf, size_t size, double f)
{
	float want = (float)f;
	char tmp[64];
	int prec, exp10;
	char *e;

	for (prec = 1; prec < 17; prec++) {
		snprintf(tmp, sizeof(tmp), "%.*e", prec - 1, (double)want);
		if (strtof(tmp, NULL) == want)
			break;
	}
	e = strchr(tmp, 'e');
	exp10 = e != NULL ? (int)strtol(e + 1, NULL, 10) : 0;
	if (exp10 < -4 || exp10 >= 6) {
		snprintf(buf, size, "%s", tmp);
	} else {
		int frac = prec - 1 - exp10;
		snprintf(buf, size, "%.*f", frac > 0 ? frac : 0, (double)want);
	}
}

/* A string field of a typed struct: 1 ok (*out malloc'd), 0 type error.
 * From YAML, sigs.k8s.io/yaml turns scalars into strings for string
 * targets; from JSON a non-string is a type error. */
static int string_field(char **out, const json_t *v, bool from_yaml)
{
	char tmp[64];
	const char *s = NULL;

	if (v == NULL || json_is_null(v))
		s = "";
	else if (json_is_string(v))
		s = json_string_value(v);
	else if (from_yaml && json_is_integer(v)) {
		snprintf(tmp, sizeof(tmp), "%" JSON_INTEGER_FORMAT, json_integer_value(v));
		s = tmp;
	} else if (from_yaml && json_is_real(v)) {
		float32_string(tmp, sizeof(tmp), json_real_value(v));
		s = tmp;
	} else if (from_yaml && json_is_boolean(v)) {
		s = json_is_true(v) ? "true" : "false";
	} else {
		return 0;
	}
	*out = strdup(s);
	return 1;
}

#define KEY_PACKAGE  "operators.operatorframework.io.bundle.package.v1"
#define KEY_CHANNELS "operators.operatorframework.io.bundle.channels.v1"
#define KEY_DEFAULT  "operators.operatorframework.io.bundle.channel.default.v1"

static int try_annotations(fbc_bundle_dir *b, size_t idx)
{
	bentry *e = FBC_VEC_AT(&b->metadata, bentry, idx);
	json_t *ann;
	char *v[3] = {NULL, NULL, NULL};
	static const char *const keys[3] = {KEY_PACKAGE, KEY_CHANNELS, KEY_DEFAULT};
	int ok = 1;

	if (e->doc == NULL || !json_is_object(e->doc))
		return 0;
	ann = fbc_bundle_fold_get(e->doc, "annotations");
	if (ann == NULL || json_is_null(ann) || !json_is_object(ann))
		return 0;
	for (int i = 0; i < 3 && ok; i++) {
		ok = string_field(&v[i], fbc_bundle_fold_get(ann, keys[i]), !e->is_json);
		if (ok && v[i] == NULL) {
			for (int j = 0; j < 3; j++)
				free(v[j]);
			return FBC_ENOMEM;
		}
	}
	if (!ok || (!*v[0] && !*v[1] && !*v[2])) {
		for (int j = 0; j < 3; j++)
			free(v[j]);
		return 0;
	}
	b->ann_file = idx;
	b->annotations = ann;
	b->package = v[0];
	b->channels_raw = v[1];
	b->default_channel = v[2];
	return 1;
}

/* The dependencies / properties target: a non-empty {type, value} list. */
static int try_list(fbc_bundle_dir *b, size_t idx, const char *member, rawprop **out, size_t *nout)
{
	bentry *e = FBC_VEC_AT(&b->metadata, bentry, idx);
	rawprop *list = NULL;
	size_t n = 0;
	json_t *arr;
	int rc;

	if (e->doc == NULL || !json_is_object(e->doc))
		return 0;
	if (e->is_json) {
		bool type_error = false;
		rc = fbc_bundle_raw_list(&list, &n, &type_error, e->text, e->len, member);
		if (rc == FBC_ENOMEM)
			return rc;
		if (rc != 0 || type_error || n == 0) {
			fbc_bundle_rawprops_free(list, n);
			return 0;
		}
		*out = list;
		*nout = n;
		return 1;
	}
	arr = fbc_bundle_fold_get(e->doc, member);
	if (!json_is_array(arr) || json_array_size(arr) == 0)
		return 0;
	list = calloc(json_array_size(arr), sizeof(*list));
	if (list == NULL)
		return FBC_ENOMEM;
	for (n = 0; n < json_array_size(arr); n++) {
		json_t *it = json_array_get(arr, n), *val;
		rawprop *p = &list[n];
		if (!json_is_object(it) && !json_is_null(it))
			goto type_error;
		if (!string_field(&p->type, fbc_bundle_fold_get(it, "type"), true))
			goto type_error;
		val = fbc_bundle_fold_get(it, "value");
		if (val == NULL) {
			p->value = strdup("null");
			p->len = 4;
		} else {
			p->value = fbc_bundle_gojson(val, true, &p->len);
		}
		if (p->type == NULL || p->value == NULL) {
			fbc_bundle_rawprops_free(list, n + 1);
			return FBC_ENOMEM;
		}
	}
	*out = list;
	*nout = n;
	return 1;
type_error:
	fbc_bundle_rawprops_free(list, n + 1);
	return 0;
}

static const char *str_or_empty(const json_t *v)
{
	return json_is_string(v) ? json_string_value(v) : "";
}

static int csv_fields(fbc_bundle_dir *b)
{
	const json_t *csv = fbc_bundle_csv(b);
	json_t *meta, *spec, *ann, *skips;

	b->name = b->version = b->replaces = b->skip_range = "";
	if (csv == NULL)
		return 0;
	meta = fbc_bundle_fold_get(csv, "metadata");
	spec = fbc_bundle_fold_get(csv, "spec");
	b->name = str_or_empty(fbc_bundle_fold_get(meta, "name"));
	b->version = str_or_empty(json_object_get(spec, "version"));
	b->replaces = str_or_empty(json_object_get(spec, "replaces"));
	ann = fbc_bundle_fold_get(meta, "annotations");
	b->skip_range = str_or_empty(json_object_get(ann, "olm.skipRange"));
	skips = json_object_get(spec, "skips");
	if (json_is_array(skips) && json_array_size(skips) > 0) {
		b->skips = calloc(json_array_size(skips), sizeof(*b->skips));
		if (b->skips == NULL)
			return FBC_ENOMEM;
		for (size_t i = 0; i < json_array_size(skips); i++)
			if (json_is_string(json_array_get(skips, i)))
				b->skips[b->nskips++] = json_string_value(json_array_get(skips, i));
	}
	return 0;
}

static int split_channels(fbc_bundle_dir *b)
{
	const char *s = b->channels_raw;
	size_t n = 1;

	if (s == NULL || *s == 0)
		return 0;
	for (const char *p = s; *p; p++)
		n += *p == ',';
	b->channels = calloc(n, sizeof(char *));
	if (b->channels == NULL)
		return FBC_ENOMEM;
	for (;;) {
		const char *c = strchr(s, ',');
		size_t l = c ? (size_t)(c - s) : strlen(s);
		b->channels[b->nchannels] = strndup(s, l);
		if (b->channels[b->nchannels] == NULL)
			return FBC_ENOMEM;
		b->nchannels++;
		if (!c)
			break;
		s = c + 1;
	}
	return 0;
}

int fbc_bundle_read(fbc_bundle_dir **out, fbc_tree *t, const fbc_bundle_limits *lim, fbc_error *err)
{
	fbc_bundle_dir *b = calloc(1, sizeof(*b));
	reader r;
	bool is_bundle = false;
	int rc = 0;

	if (b == NULL)
		return oom(err);
	memset(&r, 0, sizeof(r));
	r.t = t;
	r.err = err;
	r.lim.max_file_bytes = lim && lim->max_file_bytes ? lim->max_file_bytes : DEFAULT_MAX_FILE;
	r.lim.max_total_bytes =
		lim && lim->max_total_bytes ? lim->max_total_bytes : DEFAULT_MAX_TOTAL;
	r.lim.max_files = lim && lim->max_files ? lim->max_files : DEFAULT_MAX_FILES;
	fbc_vec_init(&b->manifests, sizeof(bentry));
	fbc_vec_init(&b->metadata, sizeof(bentry));
	b->csv = b->ann_file = b->dep_file = b->prop_file = SIZE_MAX;
	if ((rc = fbc_bundle_detect(&is_bundle, t, "", err)))
		goto done;
	if (!is_bundle) {
		rc = fbc_error_set(
			err, FBC_ENOTFOUND, fbc_tree_label(t),
			"%s is not a bundle directory: it needs manifests/ and metadata/ "
			"sub-directories",
			fbc_tree_label(t));
		goto done;
	}
	b->has_manifests = b->has_metadata = true;
	if ((rc = read_dir(&r, &b->manifests, "manifests")) ||
	    (rc = read_dir(&r, &b->metadata, "metadata")))
		goto done;
	b->objects = calloc(b->manifests.len + 1, sizeof(size_t));
	b->extra_csv = calloc(b->manifests.len + 1, sizeof(size_t));
	if (b->objects == NULL || b->extra_csv == NULL) {
		rc = oom(err);
		goto done;
	}
	for (size_t i = 0; i < b->manifests.len; i++) {
		bentry *e = FBC_VEC_AT(&b->manifests, bentry, i);
		if ((rc = check_kind(e))) {
			oom(err);
			goto done;
		}
		if (e->hidden || e->is_dir || e->kind == NULL)
			continue;
		if (strcmp(e->kind, "ClusterServiceVersion") == 0) {
			if (b->csv != SIZE_MAX) {
				b->extra_csv[b->nextra_csv++] = i;
				continue;
			}
			b->csv = i;
		}
		b->objects[b->nobjects++] = i;
	}
	for (size_t i = 0; i < b->metadata.len; i++) {
		if (b->ann_file == SIZE_MAX && (rc = try_annotations(b, i)) < 0)
			goto oom;
		if (b->dep_file == SIZE_MAX &&
		    (rc = try_list(b, i, "dependencies", &b->deps, &b->ndeps)) != 0) {
			if (rc < 0)
				goto oom;
			b->dep_file = i;
		}
		if (b->prop_file == SIZE_MAX &&
		    (rc = try_list(b, i, "properties", &b->props, &b->nprops)) != 0) {
			if (rc < 0)
				goto oom;
			b->prop_file = i;
		}
	}
	rc = 0;
	if ((rc = split_channels(b)) || (rc = csv_fields(b)))
		goto oom;
	*out = b;
	return 0;
oom:
	rc = oom(err);
done:
	fbc_bundle_free(b);
	return rc;
}

/* ---- accessors ---- */

const char *fbc_bundle_package(const fbc_bundle_dir *b)
{
	return b->package ? b->package : "";
}
const char *fbc_bundle_name(const fbc_bundle_dir *b)
{
	return b->name;
}
const char *fbc_bundle_version(const fbc_bundle_dir *b)
{
	return b->version;
}
const char *fbc_bundle_replaces(const fbc_bundle_dir *b)
{
	return b->replaces;
}
const char *fbc_bundle_skip_range(const fbc_bundle_dir *b)
{
	return b->skip_range;
}
size_t fbc_bundle_skips_count(const fbc_bundle_dir *b)
{
	return b->nskips;
}
const char *fbc_bundle_skip(const fbc_bundle_dir *b, size_t i)
{
	return i < b->nskips ? b->skips[i] : NULL;
}
size_t fbc_bundle_channels_count(const fbc_bundle_dir *b)
{
	return b->nchannels;
}
const char *fbc_bundle_channel(const fbc_bundle_dir *b, size_t i)
{
	return i < b->nchannels ? b->channels[i] : NULL;
}
const char *fbc_bundle_default_channel(const fbc_bundle_dir *b)
{
	return b->default_channel ? b->default_channel : "";
}
const char *fbc_bundle_annotation(const fbc_bundle_dir *b, const char *key)
{
	json_t *v = json_object_get(b->annotations, key);
	return json_is_string(v) ? json_string_value(v) : NULL;
}
const json_t *fbc_bundle_csv(const fbc_bundle_dir *b)
{
	return b->csv == SIZE_MAX ? NULL : FBC_VEC_AT(&b->manifests, bentry, b->csv)->doc;
}
