/*
 * gen_catalog: write a large, valid File-Based Catalog tree for benchmarks
 * and scale tests. Deterministic: the same options and seed give the same
 * bytes.
 *
 *   gen_catalog [--packages N] [--bundles M] [--seed S] [--format json|yaml]
 *               [--object-bytes B] OUTDIR
 *
 * Each package gets OUTDIR/<package>/catalog.{json,yaml} with an olm.package
 * (icon, description), three channels (stable: every bundle in a replaces
 * chain with skipRanges; candidate: every bundle, with skips; fast: the
 * highest patch of each minor), M bundles (olm.package, olm.gvk,
 * olm.gvk.required, olm.package.required, olm.csv.metadata, and an
 * olm.bundle.object of about B bytes, base64), for some packages an
 * olm.deprecations and a custom-schema blob. The result is valid under opm's
 * rules (spec fbc-validation.md): one head per channel, nothing stranded,
 * unique versions, DNS-1123 package names, valid image references.
 */
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

typedef struct gen {
	unsigned long packages, bundles, object_bytes;
	uint64_t rng;
	int yaml;
	const char *out;
} gen;

static uint64_t rnd(gen *g)
{
	/* xorshift64*: small, fast and identical on every platform. */
	g->rng ^= g->rng >> 12;
	g->rng ^= g->rng << 25;
	g->rng ^= g->rng >> 27;
	return g->rng * 2685821657736338717ULL;
}

static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

static char *base64(const unsigned char *p, size_t n)
{
	char *out = malloc(4 * ((n + 2) / 3) + 1), *o = out;

	if (!out)
		return NULL;
	for (size_t i = 0; i < n; i += 3) {
		uint32_t v = (uint32_t)p[i] << 16;
		if (i + 1 < n)
			v |= (uint32_t)p[i + 1] << 8;
		if (i + 2 < n)
			v |= p[i + 2];
		*o++ = b64[(v >> 18) & 63];
		*o++ = b64[(v >> 12) & 63];
		*o++ = i + 1 < n ? b64[(v >> 6) & 63] : '=';
		*o++ = i + 2 < n ? b64[v & 63] : '=';
	}
	*o = 0;
	return out;
}

static void digest(gen *g, char out[65])
{
	static const char hex[] = "0123456789abcdef";

	for (int i = 0; i < 64; i++)
		out[i] = hex[rnd(g) & 15];
	out[64] = 0;
}

static const char *words[] = {"operator", "cluster",  "managed",    "database", "backup",
			      "storage",  "network",  "monitoring", "secure",	"scalable",
			      "kafka",	  "postgres", "redis",	    "metrics",	"automation",
			      "upgrade",  "install",  "resource",   "custom",	"controller"};

static void lorem(gen *g, char *buf, size_t n)
{
	size_t len = 0;

	while (len + 12 < n) {
		const char *w = words[rnd(g) % (sizeof(words) / sizeof(words[0]))];
		size_t wl = strlen(w);

		memcpy(buf + len, w, wl);
		len += wl;
		buf[len++] = ' ';
	}
	buf[len] = 0;
}

/* ---- output: JSON (opm style, 4-space indent) or block YAML ---- */

static void yaml_scalar(FILE *f, json_t *v)
{
	char *s;

	switch (json_typeof(v)) {
	case JSON_STRING:
		/* A JSON string literal is a valid YAML double-quoted scalar. */
		s = json_dumps(v, JSON_ENCODE_ANY);
		fputs(s ? s : "\"\"", f);
		free(s);
		break;
	case JSON_INTEGER:
		fprintf(f, "%lld", (long long)json_integer_value(v));
		break;
	case JSON_TRUE:
		fputs("true", f);
		break;
	case JSON_FALSE:
		fputs("false", f);
		break;
	case JSON_NULL:
		fputs("null", f);
		break;
	default:
		s = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
		fputs(s ? s : "null", f);
		free(s);
		break;
	}
}

static int is_container(json_t *v)
{
	return (json_is_object(v) && json_object_size(v)) ||
	       (json_is_array(v) && json_array_size(v));
}

static void yaml_node(FILE *f, json_t *v, int indent);

static void yaml_object(FILE *f, json_t *obj, int indent, int first_inline)
{
	const char **keys;
	size_t n = json_object_size(obj), i = 0;
	const char *k;
	json_t *val;

	keys = calloc(n ? n : 1, sizeof(*keys));
	if (!keys)
		abort();
	json_object_foreach(obj, k, val) keys[i++] = k;
	for (i = 0; i < n; i++) /* insertion sort: objects are small */
		for (size_t j = i; j > 0 && strcmp(keys[j - 1], keys[j]) > 0; j--) {
			const char *t = keys[j];
			keys[j] = keys[j - 1];
			keys[j - 1] = t;
		}
	for (i = 0; i < n; i++) {
		val = json_object_get(obj, keys[i]);
		if (!(i == 0 && first_inline))
			fprintf(f, "%*s", indent, "");
		fprintf(f, "%s:", keys[i]);
		if (is_container(val)) {
			fputc('\n', f);
			yaml_node(f, val, json_is_array(val) ? indent : indent + 2);
		} else {
			fputc(' ', f);
			yaml_scalar(f, val);
			fputc('\n', f);
		}
	}
	free(keys);
}

static void yaml_node(FILE *f, json_t *v, int indent)
{
	if (json_is_object(v) && json_object_size(v)) {
		yaml_object(f, v, indent, 0);
	} else if (json_is_array(v) && json_array_size(v)) {
		size_t i;
		json_t *e;

		json_array_foreach(v, i, e)
		{
			fprintf(f, "%*s- ", indent, "");
			if (json_is_object(e) && json_object_size(e)) {
				yaml_object(f, e, indent + 2, 1);
			} else if (is_container(e)) {
				fputc('\n', f);
				yaml_node(f, e, indent + 2);
			} else {
				yaml_scalar(f, e);
				fputc('\n', f);
			}
		}
	} else {
		fprintf(f, "%*s", indent, "");
		yaml_scalar(f, v);
		fputc('\n', f);
	}
}

static int emit(gen *g, FILE *f, json_t *obj)
{
	int rc = 0;

	if (g->yaml) {
		fputs("---\n", f);
		yaml_node(f, obj, 0);
	} else {
		rc = json_dumpf(obj, f, JSON_INDENT(4) | JSON_SORT_KEYS);
		fputc('\n', f);
	}
	json_decref(obj);
	return rc;
}

static json_t *prop(const char *type, json_t *value)
{
	return json_pack("{s:s, s:o}", "type", type, "value", value);
}

static void pkg_name(char *out, size_t n, unsigned long i)
{
	snprintf(out, n, "gen-operator-%05lu", i);
}

static void version_of(char *out, size_t n, unsigned long j)
{
	/* 1.<minor>.<patch>, five patches per minor: strictly increasing, unique. */
	snprintf(out, n, "1.%lu.%lu", j / 5, j % 5);
}

static void bundle_name(char *out, size_t n, const char *pkg, unsigned long j)
{
	char v[64];

	version_of(v, sizeof(v), j);
	snprintf(out, n, "%s.v%s", pkg, v);
}

static json_t *bundle_object(gen *g, const char *pkg, unsigned long j)
{
	char name[128], *text = NULL, *desc = NULL, *data = NULL;
	json_t *crd, *out = NULL;
	size_t want = g->object_bytes;

	desc = malloc(want + 1);
	if (!desc)
		goto done;
	lorem(g, desc, want);
	snprintf(name, sizeof(name), "widgets%lu.%s.example.com", j % 3, pkg);
	crd = json_pack("{s:s, s:s, s:{s:s}, s:{s:s, s:{s:s, s:s, s:s}, s:s, s:[{s:s, s:b, s:b, "
			"s:{s:{s:s, s:s}}}]}}",
			"apiVersion", "apiextensions.k8s.io/v1", "kind", "CustomResourceDefinition",
			"metadata", "name", name, "spec", "group", "example.com", "names", "kind",
			"Widget", "plural", "widgets", "singular", "widget", "scope", "Namespaced",
			"versions", "name", "v1", "served", 1, "storage", 1, "schema",
			"openAPIV3Schema", "type", "object", "description", desc);
	if (!crd)
		goto done;
	text = json_dumps(crd, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(crd);
	if (!text || !(data = base64((const unsigned char *)text, strlen(text))))
		goto done;
	out = prop("olm.bundle.object", json_pack("{s:s}", "data", data));
done:
	free(desc);
	free(text);
	free(data);
	return out;
}

static json_t *csv_metadata(gen *g, const char *pkg)
{
	char desc[600], disp[128];

	lorem(g, desc, sizeof(desc));
	snprintf(disp, sizeof(disp), "Generated %s", pkg);
	return prop("olm.csv.metadata",
		    json_pack("{s:{s:s, s:s}, s:s, s:s, s:[{s:s, s:b}, {s:s, s:b}, {s:s, s:b}, "
			      "{s:s, s:b}], s:[s, s], s:[{s:s, s:s}], s:[{s:s, s:s}], s:s, s:s, "
			      "s:{s:s}}",
			      "annotations", "capabilities", "Basic Install", "categories",
			      "Database", "description", desc, "displayName", disp, "installModes",
			      "type", "OwnNamespace", "supported", 1, "type", "SingleNamespace",
			      "supported", 1, "type", "MultiNamespace", "supported", 0, "type",
			      "AllNamespaces", "supported", 1, "keywords", "generated", pkg,
			      "links", "name", "Source", "url", "https://example.com/src",
			      "maintainers", "name", "Gen Maintainer", "email", "gen@example.com",
			      "maturity", "stable", "minKubeVersion", "1.25.0", "provider", "name",
			      "Example Inc"));
}

static json_t *make_bundle(gen *g, unsigned long p, unsigned long j)
{
	char pkg[64], name[128], ver[64], dig[65], img[256], other[64], grp[128];
	json_t *props, *b;

	pkg_name(pkg, sizeof(pkg), p);
	bundle_name(name, sizeof(name), pkg, j);
	version_of(ver, sizeof(ver), j);
	snprintf(grp, sizeof(grp), "%s.example.com", pkg);
	props = json_array();
	json_array_append_new(props, prop("olm.package", json_pack("{s:s, s:s}", "packageName", pkg,
								   "version", ver)));
	for (unsigned long k = 0; k < 2; k++) {
		char kind[32];

		snprintf(kind, sizeof(kind), "Widget%lu", k);
		json_array_append_new(props,
				      prop("olm.gvk", json_pack("{s:s, s:s, s:s}", "group", grp,
								"kind", kind, "version", "v1")));
	}
	if (g->packages > 1 && j % 3 == 0) {
		char ogrp[128];

		pkg_name(other, sizeof(other), (p + 1 + rnd(g) % (g->packages - 1)) % g->packages);
		snprintf(ogrp, sizeof(ogrp), "%s.example.com", other);
		json_array_append_new(props, prop("olm.gvk.required",
						  json_pack("{s:s, s:s, s:s}", "group", ogrp,
							    "kind", "Widget0", "version", "v1")));
		json_array_append_new(props, prop("olm.package.required",
						  json_pack("{s:s, s:s}", "packageName", other,
							    "versionRange", ">=1.0.0 <2.0.0")));
	}
	json_array_append_new(props, csv_metadata(g, pkg));
	json_array_append_new(props, bundle_object(g, pkg, j));

	digest(g, dig);
	snprintf(img, sizeof(img), "quay.io/gen/%s-bundle@sha256:%s", pkg, dig);
	b = json_pack("{s:s, s:s, s:s, s:s, s:o, s:[]}", "schema", "olm.bundle", "name", name,
		      "package", pkg, "image", img, "properties", props, "relatedImages");
	for (int k = 0; k < 2; k++) {
		char ri[256];

		digest(g, dig);
		snprintf(ri, sizeof(ri), "quay.io/gen/%s%s@sha256:%s", pkg, k ? "-operand" : "",
			 dig);
		json_array_append_new(
			json_object_get(b, "relatedImages"),
			json_pack("{s:s, s:s}", "name", k ? "operand" : "operator", "image", ri));
	}
	return b;
}

static json_t *entry(const char *pkg, unsigned long j, long replaces, long skip, const char *range)
{
	char name[128], rep[128];
	json_t *e;

	bundle_name(name, sizeof(name), pkg, j);
	e = json_pack("{s:s}", "name", name);
	if (replaces >= 0) {
		bundle_name(rep, sizeof(rep), pkg, (unsigned long)replaces);
		json_object_set_new(e, "replaces", json_string(rep));
	}
	if (skip >= 0) {
		bundle_name(rep, sizeof(rep), pkg, (unsigned long)skip);
		json_object_set_new(e, "skips", json_pack("[s]", rep));
	}
	if (range)
		json_object_set_new(e, "skipRange", json_string(range));
	return e;
}

static int write_package(gen *g, unsigned long p)
{
	char pkg[64], path[PATH_MAX], desc[400], range[64];
	unsigned char icon[300];
	unsigned long m = g->bundles;
	json_t *stable, *cand, *fast;
	char *icon64;
	FILE *f;
	int rc = 0;

	pkg_name(pkg, sizeof(pkg), p);
	snprintf(path, sizeof(path), "%s/%s", g->out, pkg);
	if (mkdir(path, 0755) && errno != EEXIST) {
		fprintf(stderr, "gen_catalog: mkdir %s: %s\n", path, strerror(errno));
		return -1;
	}
	snprintf(path, sizeof(path), "%s/%s/catalog.%s", g->out, pkg, g->yaml ? "yaml" : "json");
	if (!(f = fopen(path, "w"))) {
		fprintf(stderr, "gen_catalog: %s: %s\n", path, strerror(errno));
		return -1;
	}
	for (size_t i = 0; i < sizeof(icon); i++)
		icon[i] = (unsigned char)rnd(g);
	icon64 = base64(icon, sizeof(icon));
	lorem(g, desc, sizeof(desc));
	rc |= emit(g, f,
		   json_pack("{s:s, s:s, s:s, s:s, s:{s:s, s:s}}", "schema", "olm.package", "name",
			     pkg, "defaultChannel", "stable", "description", desc, "icon",
			     "base64data", icon64 ? icon64 : "", "mediatype", "image/png"));
	free(icon64);

	/* stable: a plain replaces chain; the top patch of each minor also
	 * carries a skipRange over the lower patches (no graph edge). */
	stable = json_array();
	/* candidate: entry j (j % 4 == 3) replaces j-2 and skips j-1, so j-1
	 * is skipped, not stranded, and no chain link is ever skipped. */
	cand = json_array();
	/* fast: the top patch of each minor, replacing the previous one and
	 * skipping the lower patches' predecessor (names outside the channel
	 * are allowed). */
	fast = json_array();
	for (unsigned long j = 0; j < m; j++) {
		int top = j % 5 == 4 || j == m - 1;
		const char *r = NULL;

		if (top && j % 5) {
			snprintf(range, sizeof(range), ">=1.%lu.0 <1.%lu.%lu", j / 5, j / 5, j % 5);
			r = range;
		}
		json_array_append_new(stable, entry(pkg, j, j ? (long)j - 1 : -1, -1, r));
		if (j % 4 == 3)
			json_array_append_new(cand, entry(pkg, j, (long)j - 2, (long)j - 1, NULL));
		else
			json_array_append_new(cand, entry(pkg, j, j ? (long)j - 1 : -1, -1, NULL));
	}
	{
		long prev = -1;

		for (unsigned long j = 0; j < m; j++) {
			if (!(j % 5 == 4 || j == m - 1))
				continue;
			json_array_append_new(fast,
					      entry(pkg, j, prev, j % 5 ? (long)j - 1 : -1, NULL));
			prev = (long)j;
		}
	}
	rc |= emit(g, f,
		   json_pack("{s:s, s:s, s:s, s:o}", "schema", "olm.channel", "name", "candidate",
			     "package", pkg, "entries", cand));
	rc |= emit(g, f,
		   json_pack("{s:s, s:s, s:s, s:o}", "schema", "olm.channel", "name", "fast",
			     "package", pkg, "entries", fast));
	rc |= emit(g, f,
		   json_pack("{s:s, s:s, s:s, s:o}", "schema", "olm.channel", "name", "stable",
			     "package", pkg, "entries", stable));
	for (unsigned long j = 0; j < m; j++)
		rc |= emit(g, f, make_bundle(g, p, j));
	if (p % 10 == 3) {
		char first[128];

		bundle_name(first, sizeof(first), pkg, 0);
		rc |= emit(g, f,
			   json_pack("{s:s, s:s, s:[{s:{s:s, s:s}, s:s}, {s:{s:s, s:s}, s:s}]}",
				     "schema", "olm.deprecations", "package", pkg, "entries",
				     "reference", "schema", "olm.channel", "name", "candidate",
				     "message", "candidate is no longer maintained", "reference",
				     "schema", "olm.bundle", "name", first, "message",
				     "this version has a known CVE"));
	}
	if (p % 7 == 0)
		rc |= emit(g, f,
			   json_pack("{s:s, s:s, s:s, s:{s:s, s:i}}", "schema",
				     "io.example.gen.metadata", "package", pkg, "name", "support",
				     "support", "tier", "community", "slaHours", (int)(p % 72)));
	if (fclose(f) || rc) {
		fprintf(stderr, "gen_catalog: writing %s failed\n", path);
		return -1;
	}
	return 0;
}

static void usage(FILE *f)
{
	fputs("usage: gen_catalog [--packages N] [--bundles M] [--seed S] [--format json|yaml]\n"
	      "                   [--object-bytes B] OUTDIR\n"
	      "Writes a valid File-Based Catalog of N packages x M bundles (defaults 2000 x 25)\n"
	      "under OUTDIR, deterministically for a given seed.\n",
	      f);
}

static int parse_ulong(const char *s, unsigned long max, unsigned long *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || end == s || *end || s[0] == '-' || v > max)
		return -1;
	*out = v;
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {{"packages", required_argument, NULL, 'p'},
					     {"bundles", required_argument, NULL, 'b'},
					     {"seed", required_argument, NULL, 's'},
					     {"format", required_argument, NULL, 'f'},
					     {"object-bytes", required_argument, NULL, 'o'},
					     {"help", no_argument, NULL, 'h'},
					     {NULL, 0, NULL, 0}};
	gen g = {.packages = 2000, .bundles = 25, .object_bytes = 3000, .rng = 1};
	unsigned long seed = 1;
	int c;

	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		int bad = 0;

		switch (c) {
		case 'p':
			bad = parse_ulong(optarg, 99999, &g.packages) || g.packages == 0;
			break;
		case 'b':
			bad = parse_ulong(optarg, 100000, &g.bundles) || g.bundles == 0;
			break;
		case 's':
			bad = parse_ulong(optarg, ULONG_MAX, &seed);
			break;
		case 'o':
			bad = parse_ulong(optarg, 16UL << 20, &g.object_bytes);
			break;
		case 'f':
			if (strcmp(optarg, "yaml") == 0)
				g.yaml = 1;
			else if (strcmp(optarg, "json") != 0)
				bad = 1;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
		if (bad) {
			fprintf(stderr, "gen_catalog: invalid option value '%s'\n", optarg);
			return 2;
		}
	}
	if (optind != argc - 1) {
		usage(stderr);
		return 2;
	}
	g.out = argv[optind];
	g.rng = 0x9E3779B97F4A7C15ULL ^ ((uint64_t)seed * 0xBF58476D1CE4E5B9ULL);
	if (g.rng == 0)
		g.rng = 1;
	if (mkdir(g.out, 0755) && errno != EEXIST) {
		fprintf(stderr, "gen_catalog: mkdir %s: %s\n", g.out, strerror(errno));
		return 2;
	}
	for (unsigned long p = 0; p < g.packages; p++)
		if (write_package(&g, p))
			return 1;
	return 0;
}
