/*
 * The semver template (`olm.semver`, templates.md §3): channels per
 * archetype and major/minor stream, edges with the v1.71 algorithm (§3.4)
 * or the v1.46 one (§3.5), default channel (§3.6), package blob (§3.7).
 */
#include "service/template/internal.h"
#include "service/semver/semver.h"

#include <stdarg.h>
#include <stdbool.h>
#include <yaml.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define NARCH 3
static const char *const arch_names[NARCH] = {"candidate", "fast", "stable"};
enum { KIND_NONE = 0, KIND_MAJOR = 1, KIND_MINOR = 2 };

typedef struct sbundle {
	const char *image;
	const char *name;
	char *vtext; /* owned copy the fbc_semver points into */
	fbc_semver v;
} sbundle;

typedef struct schan {
	char name[96];
	int arch, kind;
	uint64_t major, minor;
	json_t *entries; /* array of {name, replaces?, skips?} */
	sbundle **members;
	size_t n, cap;
} schan;

typedef struct tuple {
	int arch, kind;
	sbundle *b;
	schan *ch;
	size_t idx;
} tuple;

static int fail_at(fbc_error *err, const char *file, const char *text, size_t len,
		   const char *needle, const char *fmt, ...) __attribute__((format(printf, 6, 7)));

static int fail_at(fbc_error *err, const char *file, const char *text, size_t len,
		   const char *needle, const char *fmt, ...)
{
	char msg[FBC_ERROR_MESSAGE_MAX];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return tpl_fail(err, FBC_EINVAL, file, needle ? tpl_line_of(text, len, needle, 0) : 1, "%s",
			msg);
}

static int unknown_fields(const json_t *obj, const char *const *known, const char *file,
			  const char *text, size_t len, fbc_error *err)
{
	const char *k;
	json_t *v;
	json_object_foreach((json_t *)obj, k, v)
	{
		if (!tpl_fold_known(k, known))
			return fail_at(err, file, text, len, k, "json: unknown field \"%s\"", k);
	}
	return 0;
}

static int cmp_tuple(const void *a, const void *b)
{
	const tuple *x = a, *y = b;
	if (x->arch != y->arch)
		return x->arch - y->arch;
	if (x->kind != y->kind)
		return x->kind - y->kind;
	return fbc_semver_compare(&x->b->v, &y->b->v);
}

static int cmp_bundle_ptr(const void *a, const void *b)
{
	const sbundle *x = *(sbundle *const *)a, *y = *(sbundle *const *)b;
	return fbc_semver_compare(&x->v, &y->v);
}

static int cmp_cstr(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static void set_edges(json_t *entry, const char *replaces, const char **acc, size_t nacc)
{
	if (replaces != NULL && replaces[0] != '\0')
		json_object_set_new(entry, "replaces", json_string(replaces));
	const char **sk = malloc((nacc ? nacc : 1) * sizeof(*sk));
	size_t n = 0;
	if (sk == NULL)
		return;
	for (size_t i = 0; i < nacc; i++)
		if (replaces == NULL || strcmp(acc[i], replaces) != 0)
			sk[n++] = acc[i];
	qsort(sk, n, sizeof(*sk), cmp_cstr);
	if (n > 0) {
		json_t *a = json_array();
		for (size_t i = 0; i < n; i++)
			json_array_append_new(a, json_string(sk[i]));
		json_object_set_new(entry, "skips", a);
	}
	free(sk);
}

static bool same_major(const tuple *a, const tuple *b)
{
	return a->arch == b->arch && a->kind == b->kind && a->b->v.major == b->b->v.major;
}

/* §3.4 */
static int edges_v171(schan *chans, size_t nchans)
{
	size_t n = 0;
	for (size_t c = 0; c < nchans; c++)
		n += chans[c].n;
	tuple *t = calloc(n ? n : 1, sizeof(*t));
	const char **acc = calloc(n ? n : 1, sizeof(*acc));
	if (t == NULL || acc == NULL) {
		free(t);
		free(acc);
		return FBC_ENOMEM;
	}
	size_t k = 0;
	for (size_t c = 0; c < nchans; c++)
		for (size_t i = 0; i < chans[c].n; i++)
			t[k++] = (tuple){chans[c].arch, chans[c].kind, chans[c].members[i],
					 &chans[c], i};
	/* stable: insertion sort on (arch, kind, version) */
	for (size_t i = 1; i < n; i++) {
		tuple x = t[i];
		size_t j = i;
		while (j > 0 && cmp_tuple(&t[j - 1], &x) > 0) {
			t[j] = t[j - 1];
			j--;
		}
		t[j] = x;
	}
	size_t nacc = 0;
	const char *zmax = "";
	for (size_t i = 1; i < n; i++) {
		tuple *prev = &t[i - 1], *cur = &t[i];
		bool major_change = !same_major(prev, cur);
		bool minor_change = prev->b->v.minor != cur->b->v.minor;
		if (major_change || minor_change)
			set_edges(json_array_get(prev->ch->entries, prev->idx), zmax, acc, nacc);
		if (major_change) {
			nacc = 0;
			zmax = "";
		} else {
			if (minor_change)
				zmax = prev->b->name;
			acc[nacc++] = prev->b->name;
		}
	}
	if (n >= 2 && same_major(&t[n - 2], &t[n - 1]))
		set_edges(json_array_get(t[n - 1].ch->entries, t[n - 1].idx), zmax, acc, nacc);
	free(t);
	free(acc);
	return 0;
}

/* §3.5: per channel, runs of equal major.minor */
static void edges_v146(schan *ch)
{
	const char *zq = "";
	size_t start = 0;
	for (size_t i = 0; i < ch->n; i++) {
		bool last_of_run = i + 1 == ch->n ||
				   ch->members[i + 1]->v.major != ch->members[i]->v.major ||
				   ch->members[i + 1]->v.minor != ch->members[i]->v.minor;
		if (!last_of_run)
			continue;
		json_t *entry = json_array_get(ch->entries, i);
		json_t *skips = json_array();
		if (zq[0] != '\0') {
			json_array_append_new(skips, json_string(zq));
			json_object_set_new(entry, "replaces", json_string(zq));
		}
		for (size_t j = start; j < i; j++)
			json_array_append_new(skips, json_string(ch->members[j]->name));
		if (json_array_size(skips) > 0)
			json_object_set_new(entry, "skips", skips);
		else
			json_decref(skips);
		zq = ch->members[i]->name;
		start = i + 1;
	}
}

typedef struct mark {
	int arch, kind;
	fbc_semver v;
	const char *name;
} mark;

static void offer(mark *m, int arch, int kind, const fbc_semver *v, const char *name, int pref)
{
	bool take = false;
	if (arch > m->arch) {
		take = true;
	} else if (arch == m->arch) {
		int c = fbc_semver_compare(v, &m->v);
		if (c > 0)
			take = true;
		else if (c == 0) {
			if (kind == pref && m->kind != pref)
				take = true;
			else if (kind != pref && m->kind != pref && kind > m->kind)
				take = true;
		}
	}
	if (take) {
		m->arch = arch;
		m->kind = kind;
		m->v = *v;
		m->name = name;
	}
}

static int bool_field(bool *out, const json_t *doc, const char *name, const char *file,
		      const char *text, size_t len, fbc_error *err)
{
	json_t *v = tpl_fold_get(doc, name, NULL);
	*out = false;
	if (v == NULL || json_is_null(v))
		return 0;
	if (!json_is_boolean(v))
		return fail_at(err, file, text, len, name,
			       "json: cannot unmarshal value into Go struct field %s of type bool",
			       name);
	*out = json_is_true(v);
	return 0;
}

/* §3.7: icon and description of the default channel's head */
static void package_metadata(json_t *pkg, fbc_template_sources *src, const char *image)
{
	json_t *csv = tpl_sources_csv(src, image);
	if (csv == NULL)
		return;
	json_t *spec = json_object_get(csv, "spec");
	const char *desc = json_string_value(json_object_get(spec, "description"));
	json_t *icons = json_object_get(spec, "icon");
	if (json_is_array(icons) && json_array_size(icons) > 0) {
		json_t *ic = json_array_get(icons, 0);
		json_t *data = NULL;
		fbc_error e;
		fbc_error_init(&e);
		if (json_is_object(ic) &&
		    tpl_icon_canonical(&data, tpl_fold_get(ic, "base64data", NULL), &e) == 0) {
			const char *mt = json_string_value(tpl_fold_get(ic, "mediatype", NULL));
			json_object_set_new(pkg, "icon",
					    json_pack("{s:o,s:s}", "base64data", data, "mediatype",
						      mt ? mt : ""));
		}
	}
	if (desc != NULL && desc[0] != '\0')
		json_object_set_new(pkg, "description", json_string(desc));
	json_decref(csv);
}

/* §3.1: go-yaml v2's strict mode refuses a mapping that repeats an identical
 * key (any mapping of the first document, the YAML form of JSON too): one
 * event pass, the keys of each open mapping remembered. Merge keys and
 * non-scalar keys are not compared. */
#define DUP_DEPTH 64
typedef struct dup_frame {
	bool map, want_key;
	json_t *keys; /* scalar key -> true */
} dup_frame;

static int dup_keys(const char *text, size_t len, const char *file, fbc_error *err)
{
	yaml_parser_t p;
	yaml_event_t ev;
	dup_frame st[DUP_DEPTH];
	int depth = 0, rc = 0;
	bool done = false;

	if (!yaml_parser_initialize(&p))
		return fbc_error_set(err, FBC_ENOMEM, file, "out of memory");
	yaml_parser_set_input_string(&p, (const unsigned char *)text, len);
	while (!done && rc == 0) {
		if (!yaml_parser_parse(&p, &ev))
			break; /* a syntax error was reported by the decoder already */
		dup_frame *top = depth > 0 ? &st[depth - 1] : NULL;
		switch (ev.type) {
		case YAML_SCALAR_EVENT:
		case YAML_ALIAS_EVENT:
			if (top && top->map && top->want_key && ev.type == YAML_SCALAR_EVENT) {
				const char *k = (const char *)ev.data.scalar.value;
				if (strcmp(k, "<<") != 0 && json_object_get(top->keys, k))
					rc = tpl_fail(
						err, FBC_EINVAL, file, (int)ev.start_mark.line + 1,
						"render: unable to read file: error converting "
						"YAML to JSON: yaml: unmarshal errors: line %d: "
						"key \"%s\" already set in map",
						(int)ev.start_mark.line + 1, k);
				else
					json_object_set_new(top->keys, k, json_true());
			}
			if (top && top->map)
				top->want_key = !top->want_key;
			break;
		case YAML_MAPPING_START_EVENT:
		case YAML_SEQUENCE_START_EVENT:
			if (depth == DUP_DEPTH) {
				done = true; /* deeper than any template: the decoder's limits apply
					      */
				break;
			}
			st[depth].map = ev.type == YAML_MAPPING_START_EVENT;
			st[depth].want_key = true;
			st[depth].keys = st[depth].map ? json_object() : NULL;
			depth++;
			break;
		case YAML_MAPPING_END_EVENT:
		case YAML_SEQUENCE_END_EVENT:
			if (depth > 0) {
				json_decref(st[--depth].keys);
				if (depth > 0 && st[depth - 1].map)
					st[depth - 1].want_key = !st[depth - 1].want_key;
			}
			break;
		case YAML_DOCUMENT_END_EVENT:
		case YAML_STREAM_END_EVENT:
			done = true;
			break;
		default:
			break;
		}
		yaml_event_delete(&ev);
	}
	while (depth > 0)
		json_decref(st[--depth].keys);
	yaml_parser_delete(&p);
	return rc;
}

int tpl_render_semver(fbc_template_result *r, const json_t *doc, const char *text, size_t len,
		      const fbc_template_opts *o, fbc_template_sources *src, fbc_error *err)
{
	static const char *const top[] = {"schema",
					  "generateMajorChannels",
					  "generateMinorChannels",
					  "defaultChannelTypePreference",
					  "candidate",
					  "fast",
					  "stable",
					  NULL};
	static const char *const bundles_key[] = {"bundles", NULL};
	static const char *const image_key[] = {"image", NULL};
	const char *file = o->file;
	int rc = 0;
	sbundle *all = NULL;
	size_t nall = 0;
	schan *chans = NULL;
	size_t nchans = 0;
	json_t *rendered = json_object(); /* image -> blob */
	json_t *bundles_out = json_array(), *packages = json_array(), *channels = json_array();
	json_t *empty = json_array();
	const json_t *lists[NARCH] = {NULL, NULL, NULL};

	if (!json_is_object(doc)) {
		rc = tpl_fail(
			err, FBC_EINVAL, file, 1,
			"render: unable to read file: json: cannot unmarshal into Go value of "
			"type semver.semverTemplate");
		goto done;
	}
	if ((rc = dup_keys(text, len, file, err)) != 0 ||
	    (rc = unknown_fields(doc, top, file, text, len, err)) != 0)
		goto done;
	for (int a = 0; a < NARCH; a++) {
		json_t *arch = tpl_fold_get(doc, arch_names[a], NULL);
		if (arch == NULL || json_is_null(arch))
			continue;
		if (!json_is_object(arch)) {
			rc = fail_at(err, file, text, len, arch_names[a],
				     "json: cannot unmarshal value into Go struct field %s of type "
				     "semver.channelArchetype",
				     arch_names[a]);
			goto done;
		}
		if ((rc = unknown_fields(arch, bundles_key, file, text, len, err)) != 0)
			goto done;
		json_t *bl = tpl_fold_get(arch, "bundles", NULL);
		if (bl != NULL && !json_is_null(bl) && !json_is_array(bl)) {
			rc = fail_at(err, file, text, len, "undles",
				     "json: cannot unmarshal value into Go struct field bundles of "
				     "type []semver.semverTemplateBundleEntry");
			goto done;
		}
		size_t i;
		json_t *it;
		json_array_foreach(bl, i, it)
		{
			if (!json_is_object(it)) {
				rc = fail_at(err, file, text, len, "undles",
					     "json: cannot unmarshal value into Go struct of type "
					     "semver.semverTemplateBundleEntry");
				goto done;
			}
			if ((rc = unknown_fields(it, image_key, file, text, len, err)) != 0)
				goto done;
		}
		lists[a] = bl;
	}
	const char *schema = json_string_value(tpl_fold_get(doc, "schema", NULL));
	if (schema == NULL || strcmp(schema, "olm.semver") != 0) {
		rc = fail_at(err, file, text, len, "chema",
			     "readFile: input file has unknown schema, should be \"olm.semver\"");
		goto done;
	}
	bool gmaj, gmin;
	if ((rc = bool_field(&gmaj, doc, "generateMajorChannels", file, text, len, err)) != 0 ||
	    (rc = bool_field(&gmin, doc, "generateMinorChannels", file, text, len, err)) != 0)
		goto done;
	if (!gmaj && !gmin)
		gmin = true;
	json_t *prefv = tpl_fold_get(doc, "defaultChannelTypePreference", NULL);
	const char *pref_s = json_is_string(prefv) ? json_string_value(prefv) : "";
	int pref;
	if (pref_s[0] == '\0') {
		pref = gmin ? KIND_MINOR : KIND_MAJOR;
	} else if (strcmp(pref_s, "minor") == 0 || strcmp(pref_s, "major") == 0) {
		pref = pref_s[1] == 'i' ? KIND_MINOR : KIND_MAJOR;
		if ((pref == KIND_MINOR && !gmin) || (pref == KIND_MAJOR && !gmaj)) {
			rc = fail_at(
				err, file, text, len, "efaultChannelTypePreference",
				"schema attribute mismatch: DefaultChannelTypePreference set to "
				"'%s' doesn't make sense if not generating %s-version channels",
				pref_s, pref == KIND_MINOR ? "minor" : "major");
			goto done;
		}
	} else {
		rc = fail_at(err, file, text, len, "efaultChannelTypePreference",
			     "unknown DefaultChannelTypePreference: \"%s\"\nValid values are "
			     "'major' or 'minor'",
			     pref_s);
		goto done;
	}

	/* 1. render every distinct image */
	size_t total = 0;
	for (int a = 0; a < NARCH; a++)
		total += json_array_size(lists[a]);
	if (total == 0) {
		rc = tpl_fail(err, FBC_EINVAL, file, 1,
			      "render: no bundles specified or no bundles could be rendered");
		goto done;
	}
	all = calloc(total, sizeof(*all));
	if (all == NULL) {
		rc = fbc_error_set(err, FBC_ENOMEM, NULL, "out of memory");
		goto done;
	}
	for (int a = 0; a < NARCH; a++) {
		size_t i;
		json_t *it;
		json_array_foreach(lists[a], i, it)
		{
			const char *img = json_string_value(tpl_fold_get(it, "image", NULL));
			if (img == NULL)
				img = "";
			if (json_object_get(rendered, img) != NULL)
				continue;
			json_t *blob = NULL;
			int line = img[0] ? tpl_line_of(text, len, img, 0) : 1;
			if (img[0] == '\0') {
				rc = tpl_fail(err, FBC_EINVAL, file, line,
					      "render: render reference \"\": a bundle entry has "
					      "no image");
				goto done;
			}
			rc = tpl_sources_resolve(&blob, src, img, o->migrate, err);
			if (rc != 0) {
				char msg[FBC_ERROR_MESSAGE_MAX];
				snprintf(msg, sizeof(msg), "render: render reference \"%s\": %s",
					 img, err->message);
				rc = tpl_fail(err, rc, file, line, "%s", msg);
				goto done;
			}
			json_object_set_new(rendered, img, blob);
			json_array_append(bundles_out, blob);
		}
	}

	/* 2. versions, package, duplicates */
	const char *package = NULL;
	sbundle *per_arch[NARCH][1] = {{NULL}};
	(void)per_arch;
	size_t arch_start[NARCH + 1];
	for (int a = 0; a < NARCH; a++) {
		arch_start[a] = nall;
		size_t i;
		json_t *it;
		json_array_foreach(lists[a], i, it)
		{
			const char *img = json_string_value(tpl_fold_get(it, "image", NULL));
			json_t *blob = json_object_get(rendered, img);
			int line = tpl_line_of(text, len, img, 0);
			const char *bname = json_string_value(json_object_get(blob, "name"));
			if (bname == NULL)
				bname = "";
			json_t *pkgprop = NULL;
			size_t np = 0, k;
			json_t *p;
			json_array_foreach(json_object_get(blob, "properties"), k, p)
			{
				const char *t = json_string_value(json_object_get(p, "type"));
				if (t != NULL && strcmp(t, "olm.package") == 0) {
					np++;
					pkgprop = json_object_get(p, "value");
				}
			}
			if (np != 1) {
				rc = tpl_fail(err, FBC_EINVAL, file, line,
					      "render: unable to post-process bundle info: bundle "
					      "\"%s\" has multiple \"olm.package\" properties, "
					      "expected exactly 1",
					      bname);
				goto done;
			}
			const char *ver = json_string_value(json_object_get(pkgprop, "version"));
			const char *pn = json_string_value(json_object_get(pkgprop, "packageName"));
			sbundle *sb = &all[nall];
			sb->image = img;
			sb->name = bname;
			sb->vtext = strdup(ver ? ver : "");
			nall++;
			fbc_error verr;
			fbc_error_init(&verr);
			if (sb->vtext == NULL ||
			    fbc_semver_parse(&sb->v, sb->vtext, strlen(sb->vtext), &verr) != 0) {
				rc = tpl_fail(err, FBC_EINVAL, file, line,
					      "render: unable to post-process bundle info: bundle "
					      "\"%s\" has invalid version \"%s\": %s",
					      bname, ver ? ver : "", verr.message);
				goto done;
			}
			if (package == NULL) {
				package = pn ? pn : "";
			} else if (strcmp(package, pn ? pn : "") != 0) {
				rc = tpl_fail(err, FBC_EINVAL, file, line,
					      "render: unable to post-process bundle info: bundle "
					      "\"%s\" does not belong to this package: \"%s\"",
					      pn ? pn : "", package);
				goto done;
			}
			for (size_t j = arch_start[a]; j + 1 < nall; j++) {
				if (strcmp(all[j].name, bname) == 0) {
					rc = tpl_fail(err, FBC_EINVAL, file,
						      tpl_line_of(text, len, img, 1),
						      "render: unable to post-process bundle info: "
						      "duplicate bundle name \"%s\"",
						      bname);
					goto done;
				}
			}
		}
	}
	arch_start[NARCH] = nall;
	for (int a = 0; a < NARCH; a++) {
		for (size_t i = arch_start[a]; i < arch_start[a + 1]; i++)
			for (size_t j = i + 1; j < arch_start[a + 1]; j++)
				if (fbc_semver_compare(&all[i].v, &all[j].v) == 0) {
					rc = tpl_fail(
						err, FBC_EINVAL, file,
						tpl_line_of(text, len, all[j].image, 0),
						"encountered bundle versions which differ only "
						"by build metadata, which cannot be ordered: %s "
						"and %s (%s channel)",
						all[i].vtext, all[j].vtext, arch_names[a]);
					goto done;
				}
	}

	/* 3. channels */
	chans = calloc(nall * 2 + 1, sizeof(*chans));
	if (chans == NULL) {
		rc = fbc_error_set(err, FBC_ENOMEM, NULL, "out of memory");
		goto done;
	}
	mark m = {0, KIND_NONE, {0, 0, 0, NULL, 0, NULL, 0}, ""};
	for (int a = 0; a < NARCH; a++) {
		size_t n = arch_start[a + 1] - arch_start[a];
		sbundle **sorted = calloc(n ? n : 1, sizeof(*sorted));
		if (sorted == NULL) {
			rc = fbc_error_set(err, FBC_ENOMEM, NULL, "out of memory");
			goto done;
		}
		for (size_t i = 0; i < n; i++)
			sorted[i] = &all[arch_start[a] + i];
		qsort(sorted, n, sizeof(*sorted), cmp_bundle_ptr);
		for (size_t i = 0; i < n; i++) {
			sbundle *sb = sorted[i];
			for (int kind = KIND_MAJOR; kind <= KIND_MINOR; kind++) {
				if ((kind == KIND_MAJOR && !gmaj) || (kind == KIND_MINOR && !gmin))
					continue;
				char cname[96];
				if (kind == KIND_MAJOR)
					snprintf(cname, sizeof(cname), "%s-v%llu", arch_names[a],
						 (unsigned long long)sb->v.major);
				else
					snprintf(cname, sizeof(cname), "%s-v%llu.%llu",
						 arch_names[a], (unsigned long long)sb->v.major,
						 (unsigned long long)sb->v.minor);
				schan *ch = NULL;
				for (size_t c = 0; c < nchans; c++)
					if (strcmp(chans[c].name, cname) == 0)
						ch = &chans[c];
				if (ch == NULL) {
					ch = &chans[nchans++];
					snprintf(ch->name, sizeof(ch->name), "%s", cname);
					ch->arch = a;
					ch->kind = kind;
					ch->entries = json_array();
					ch->cap = n;
					ch->members = calloc(n, sizeof(*ch->members));
					if (ch->members == NULL) {
						free(sorted);
						rc = fbc_error_set(err, FBC_ENOMEM, NULL,
								   "out of memory");
						goto done;
					}
					offer(&m, a, kind, &sb->v, ch->name, pref);
				}
				ch->members[ch->n++] = sb;
				json_array_append_new(ch->entries,
						      json_pack("{s:s}", "name", sb->name));
			}
		}
		free(sorted);
	}
	if (o->semver_rules == FBC_SEMVER_RULES_V146) {
		for (size_t c = 0; c < nchans; c++)
			edges_v146(&chans[c]);
	} else if ((rc = edges_v171(chans, nchans)) != 0) {
		rc = fbc_error_set(err, rc, NULL, "out of memory");
		goto done;
	}
	json_t *pkg = json_object();
	json_object_set_new(pkg, "schema", json_string("olm.package"));
	json_object_set_new(pkg, "name", json_string(package ? package : ""));
	json_object_set_new(pkg, "defaultChannel", json_string(m.name));
	if (o->semver_rules == FBC_SEMVER_RULES_V171) {
		for (size_t c = 0; c < nchans; c++)
			if (strcmp(chans[c].name, m.name) == 0 && chans[c].n > 0)
				package_metadata(pkg, src, chans[c].members[chans[c].n - 1]->image);
	}
	json_array_append_new(packages, pkg);
	for (size_t c = 0; c < nchans; c++) {
		json_t *ch = json_object();
		json_object_set_new(ch, "schema", json_string("olm.channel"));
		json_object_set_new(ch, "name", json_string(chans[c].name));
		json_object_set_new(ch, "package", json_string(package ? package : ""));
		json_object_set(ch, "entries", chans[c].entries);
		json_array_append_new(channels, ch);
	}
	rc = tpl_order(&r->blobs, packages, channels, bundles_out, empty, empty, err);
done:
	if (all != NULL)
		for (size_t i = 0; i < nall; i++)
			free(all[i].vtext);
	free(all);
	for (size_t c = 0; c < nchans; c++) {
		json_decref(chans[c].entries);
		free(chans[c].members);
	}
	free(chans);
	json_decref(rendered);
	json_decref(bundles_out);
	json_decref(packages);
	json_decref(channels);
	json_decref(empty);
	return rc;
}
