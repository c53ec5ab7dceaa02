/*
 * `fbcd image build|push|pull|inspect`: catalog images without a container
 * engine (pipeline/image builds, pipeline/oci pushes and pulls). Exit
 * status: 0 done, 1 the catalog is invalid (build), 2 usage, I/O, registry
 * or network error — always with a message naming what failed.
 */
#include "api/cli/cli.h"
#include "api/cli/image.h"
#include "api/cli/util.h"
#include "pipeline/image/image.h"
#include "pipeline/publish/publish.h"
#include "pipeline/oci/client.h"
#include "db/db.h"
#include "pipeline/oci/oci.h"
#include "service/fbc/validate.h"
#include "service/load/load.h"

#include <archive.h>
#include <archive_entry.h>
#include <jansson.h>

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int fbc_cli_image_parse_layout(char *dir, size_t dir_size, char *name, size_t name_size,
			       const char *arg)
{
	const char *p, *slash, *colon;

	if (strncmp(arg, "oci:", 4) != 0)
		return -1;
	p = arg + 4;
	slash = strrchr(p, '/');
	colon = strrchr(slash ? slash : p, ':');
	name[0] = 0;
	if (colon) {
		if ((size_t)(colon - p) + 1 > dir_size || strlen(colon + 1) + 1 > name_size)
			return -1;
		memcpy(dir, p, (size_t)(colon - p));
		dir[colon - p] = 0;
		memcpy(name, colon + 1, strlen(colon + 1) + 1);
	} else {
		if (strlen(p) + 1 > dir_size)
			return -1;
		memcpy(dir, p, strlen(p) + 1);
	}
	return dir[0] ? 0 : -1;
}

/* ---- shared client options ---- */

typedef struct client_opts {
	fbc_oci_client_options o;
	int retries_set;
} client_opts;

enum {
	OPT_INSECURE = 1000,
	OPT_CA_FILE,
	OPT_CREDS_FILE,
	OPT_AUTHFILE,
	OPT_RETRIES,
	OPT_CHUNK,
	OPT_MOUNT_FROM,
	OPT_SINGLE,
	OPT_SOURCE,
	OPT_COMMIT,
	OPT_CREATED,
	OPT_LOG,
	OPT_NAME,
	OPT_DB,
};

#define CLIENT_LONGOPTS                                                  \
	{"insecure", no_argument, NULL, OPT_INSECURE},                   \
		{"ca-file", required_argument, NULL, OPT_CA_FILE},       \
		{"creds-file", required_argument, NULL, OPT_CREDS_FILE}, \
		{"authfile", required_argument, NULL, OPT_AUTHFILE},     \
		{"retries", required_argument, NULL, OPT_RETRIES},       \
	{                                                                \
		"request-log", required_argument, NULL, OPT_LOG          \
	}

#define CLIENT_HELP                                                                        \
	"  --insecure           plain HTTP (local test registries); default HTTPS\n"       \
	"  --ca-file FILE       trust the CAs in FILE instead of the system ones\n"        \
	"  --creds-file FILE    credentials: USER:PASSWORD, or a token alone\n"            \
	"  --authfile FILE      docker config.json (default $DOCKER_CONFIG/config.json,\n" \
	"                       then ~/.docker/config.json)\n"                             \
	"  --retries N          retries of 429/5xx/connection failures per request (4)\n"  \
	"  --request-log FILE   append every HTTP request (no credentials) as JSON lines\n"

static int parse_count(long *out, const char *arg, long max)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(arg, &end, 10);
	if (errno || *end || end == arg || v < 0 || v > max)
		return -1;
	*out = v;
	return 0;
}

/* 0 handled, 1 not a client option, 2 bad value (reported). */
static int client_option(client_opts *c, int ch, const char *arg, const char *sub)
{
	long v;

	switch (ch) {
	case OPT_INSECURE:
		c->o.insecure = true;
		return 0;
	case OPT_CA_FILE:
		c->o.ca_file = arg;
		return 0;
	case OPT_CREDS_FILE:
		c->o.creds_file = arg;
		return 0;
	case OPT_AUTHFILE:
		c->o.docker_config = arg;
		return 0;
	case OPT_LOG:
		c->o.log_path = arg;
		return 0;
	case OPT_RETRIES:
		if (parse_count(&v, arg, 20)) {
			fprintf(stderr,
				"fbcd image %s: --retries: not a number from 0 to 20: '%s'\n", sub,
				arg);
			return 2;
		}
		c->o.max_retries = (int)v;
		c->retries_set = 1;
		return 0;
	default:
		return 1;
	}
}

static void client_defaults(client_opts *c)
{
	memset(c, 0, sizeof(*c));
	c->o.max_retries = -1;
}

/* ---- build ---- */

static void build_usage(FILE *f)
{
	fputs("usage: fbcd image build --catalog DIR [--platform P]... [--base REF] [--label "
	      "K=V]...\n"
	      "                        --output oci:DIR[:NAME]\n"
	      "\n"
	      "Build a reproducible OCI image of a File-Based Catalog: one layer with\n"
	      "/configs/<package>/catalog.json (the canonical render of each package), one\n"
	      "config and manifest per platform, an OCI image index over them. The catalog\n"
	      "must be valid. Same catalog and options, same digests: every timestamp is\n"
	      "--created, else $SOURCE_DATE_EPOCH, else 0 (1970-01-01).\n"
	      "\n"
	      "Options:\n"
	      "  --catalog DIR        the catalog directory\n"
	      "  --revision CATALOG[@N]  a revision stored by `fbcd serve` (default the current\n"
	      "                       one; io.fbcd.revision is CATALOG@N)\n"
	      "  --database-url URL   its database (default $FBCD_DATABASE_URL)\n"
	      "  --platform OS/ARCH[/VARIANT]  repeated; default linux/amd64\n"
	      "  --single-manifest    one platform written as a plain manifest (no index)\n"
	      "  --base REF           a runnable image: REF's layers (oci:DIR[:NAME] or a\n"
	      "                       registry reference, pulled) under the catalog, with\n"
	      "                       Entrypoint /bin/opm and Cmd serve /configs\n"
	      "  --label KEY=VALUE    an extra image label (repeated)\n"
	      "  --source URL         org.opencontainers.image.source\n"
	      "  --commit SHA         org.opencontainers.image.revision\n"
	      "  --revision-label S   io.fbcd.revision (default: none)\n"
	      "  --created SECONDS    the image time (seconds since 1970)\n"
	      "  --output oci:DIR[:NAME]  the OCI image layout to write (NAME: its ref "
	      "name)\n" CLIENT_HELP "  -h, --help           show this help\n"
	      "\n"
	      "Prints the digest of the image (index or manifest). Exit status: 0 built,\n"
	      "1 the catalog is invalid (findings on stderr), 2 usage or I/O error.\n",
	      f);
}

/* A base REF as an OCI layout: oci:DIR[:NAME] as is, a registry reference
 * pulled into tmp (for the platforms asked for). */
static int base_layout(char *dir, size_t dsize, char *name, size_t nsize, char *tmp, size_t tsize,
		       const char *ref, const fbc_oci_platform *plats, size_t np,
		       const client_opts *co, fbc_error *err)
{
	fbc_oci_client *c = NULL;
	fbc_oci_ref r;
	fbc_oci_descriptor top;
	int rc;

	if (strncmp(ref, "oci:", 4) == 0) {
		if (fbc_cli_image_parse_layout(dir, dsize, name, nsize, ref))
			return fbc_error_set(err, FBC_EINVAL, ref, "malformed oci:DIR[:NAME]");
		return 0;
	}
	if ((rc = fbc_oci_ref_parse(&r, ref, err)))
		return rc;
	snprintf(tmp, tsize, "%s/fbcd-base.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(tmp)) {
		tmp[0] = 0;
		return fbc_error_set(err, FBC_EIO, "TMPDIR", "mkdtemp: %s", strerror(errno));
	}
	if ((rc = fbc_oci_client_create(&c, &co->o, err)))
		return rc;
	static const fbc_oci_platform amd64 = {"linux", "amd64", ""};
	rc = fbc_oci_pull(c, &top, &r, np ? plats : &amd64, np ? np : 1, tmp, NULL, err);
	fbc_oci_client_free(c);
	if (rc)
		return rc;
	snprintf(dir, dsize, "%s", tmp);
	name[0] = 0;
	return 0;
}

/* CATALOG[@N] from the service's database: its canonical stream (validated
 * at ingest), parsed and linked. label gets "CATALOG@N". */
static int load_revision(fbc_catalog **out, char *label, size_t label_size, const char *url,
			 const char *spec, fbc_diags *diags, fbc_error *err)
{
	fbc_db_options dbo = {.url = url, .pool_size = 1};
	fbc_db *db = NULL;
	fbc_db_rev rev;
	fbc_catalog *cat = NULL;
	char name[256];
	const char *at = strrchr(spec, '@');
	long n = 0;
	int rc;

	if (!at)
		at = spec + strlen(spec);
	if (at == spec || (size_t)(at - spec) >= sizeof(name) ||
	    (*at && (parse_count(&n, at + 1, LONG_MAX) || n < 1)))
		return fbc_error_set(err, FBC_EINVAL, "--revision",
				     "expected CATALOG or CATALOG@N (N >= 1), got '%.100s'", spec);
	memcpy(name, spec, (size_t)(at - spec));
	name[at - spec] = 0;
	if (!url || !*url)
		return fbc_error_set(err, FBC_EINVAL, "--revision",
				     "needs --database-url or $FBCD_DATABASE_URL");
	if ((rc = fbc_db_open(&db, &dbo, err)) ||
	    (rc = fbc_db_revision_resolve(&rev, db, name, n, err)) ||
	    (rc = fbc_publish_load_revision(&cat, db, &rev, diags, err)))
		goto done;
	snprintf(label, label_size, "%s@%lld", name, (long long)rev.number);
	*out = cat;
	cat = NULL;
done:
	fbc_catalog_free(cat);
	fbc_db_close(db);
	return rc;
}

static void rm_tree(const char *dir)
{
	char cmd[4200];

	if (!dir[0] || strchr(dir, '\''))
		return;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "fbcd image: could not remove %s\n", dir);
}

static int cmd_build(int argc, char **argv)
{
	static const struct option opts[] = {{"catalog", required_argument, NULL, 'c'},
					     {"revision", required_argument, NULL, 'r'},
					     {"platform", required_argument, NULL, 'p'},
					     {"base", required_argument, NULL, 'b'},
					     {"label", required_argument, NULL, 'l'},
					     {"output", required_argument, NULL, 'o'},
					     {"single-manifest", no_argument, NULL, OPT_SINGLE},
					     {"source", required_argument, NULL, OPT_SOURCE},
					     {"commit", required_argument, NULL, OPT_COMMIT},
					     {"revision-label", required_argument, NULL, OPT_NAME},
					     {"created", required_argument, NULL, OPT_CREATED},
					     {"database-url", required_argument, NULL, OPT_DB},
					     CLIENT_LONGOPTS,
					     {"help", no_argument, NULL, 'h'},
					     {NULL, 0, NULL, 0}};
	fbc_oci_platform plats[FBC_IMAGE_PLATFORMS_MAX];
	const char *labels[FBC_IMAGE_LABELS_MAX];
	fbc_image_build_options bo;
	fbc_image_result res;
	client_opts co;
	const char *catalog = NULL, *output = NULL, *base = NULL, *revision = NULL;
	const char *db_url = getenv("FBCD_DATABASE_URL");
	char rev_label[300] = "";
	char out_dir[4096], out_name[256], base_dir[4096], base_name[256], tmp[4200] = "";
	fbc_catalog *cat = NULL;
	fbc_diags diags = {0};
	fbc_error err;
	int status = FBC_CLI_USAGE, ch, created_set = 0;
	long created = 0;

	memset(&bo, 0, sizeof(bo));
	client_defaults(&co);
	fbc_error_init(&err);
	optind = 0;
	opterr = 0;
	while ((ch = getopt_long(argc, argv, ":hc:r:p:b:l:o:", opts, NULL)) != -1) {
		int r = client_option(&co, ch, optarg, "build");

		if (r == 2)
			return FBC_CLI_USAGE;
		if (r == 0)
			continue;
		switch (ch) {
		case 'h':
			build_usage(stdout);
			return FBC_CLI_OK;
		case 'c':
			catalog = optarg;
			break;
		case 'r':
			revision = optarg;
			break;
		case OPT_DB:
			db_url = optarg;
			break;
		case 'p':
			if (bo.n_platforms == FBC_IMAGE_PLATFORMS_MAX) {
				fprintf(stderr, "fbcd image build: more than %d platforms\n",
					FBC_IMAGE_PLATFORMS_MAX);
				return FBC_CLI_USAGE;
			}
			if (fbc_oci_platform_parse(&plats[bo.n_platforms], optarg, &err)) {
				fbc_cli_report("image build", &err, "--platform");
				return FBC_CLI_USAGE;
			}
			bo.n_platforms++;
			break;
		case 'b':
			base = optarg;
			break;
		case 'l':
			if (bo.n_labels == FBC_IMAGE_LABELS_MAX) {
				fprintf(stderr, "fbcd image build: more than %d labels\n",
					FBC_IMAGE_LABELS_MAX);
				return FBC_CLI_USAGE;
			}
			labels[bo.n_labels++] = optarg;
			break;
		case 'o':
			output = optarg;
			break;
		case OPT_SINGLE:
			bo.single_manifest = true;
			break;
		case OPT_SOURCE:
			bo.source = optarg;
			break;
		case OPT_COMMIT:
			bo.revision = optarg;
			break;
		case OPT_NAME:
			bo.fbcd_revision = optarg;
			break;
		case OPT_CREATED:
			if (parse_count(&created, optarg, LONG_MAX)) {
				fprintf(stderr,
					"fbcd image build: --created: not a number of "
					"seconds: '%s'\n",
					optarg);
				return FBC_CLI_USAGE;
			}
			created_set = 1;
			break;
		case ':':
			fprintf(stderr, "fbcd image build: option '%s' needs a value\n",
				argv[optind - 1]);
			build_usage(stderr);
			return FBC_CLI_USAGE;
		default:
			fprintf(stderr, "fbcd image build: unknown option '%s'\n",
				argv[optind - 1]);
			build_usage(stderr);
			return FBC_CLI_USAGE;
		}
	}
	if (optind != argc || !catalog == !revision || !output) {
		fprintf(stderr, "fbcd image build: %s\n",
			optind != argc ? "unexpected argument"
				       : "one of --catalog DIR or --revision CATALOG@N, and "
					 "--output oci:DIR, are required");
		build_usage(stderr);
		return FBC_CLI_USAGE;
	}
	if (fbc_cli_image_parse_layout(out_dir, sizeof(out_dir), out_name, sizeof(out_name),
				       output)) {
		fprintf(stderr, "fbcd image build: --output: expected oci:DIR[:NAME], got '%s'\n",
			output);
		return FBC_CLI_USAGE;
	}
	bo.platforms = plats;
	bo.labels = labels;
	if (created_set)
		bo.created = created;
	else if (fbc_image_created_from_env(&bo.created, 0, &err)) {
		fbc_cli_report("image build", &err, NULL);
		return FBC_CLI_USAGE;
	}
	if (revision) {
		if (fbc_diags_init(&diags, 0) || load_revision(&cat, rev_label, sizeof(rev_label),
							       db_url, revision, &diags, &err)) {
			fbc_cli_report("image build", &err, revision);
			status = FBC_CLI_USAGE;
			goto done;
		}
		catalog = revision;
		if (!bo.fbcd_revision)
			bo.fbcd_revision = rev_label;
	} else if ((status = fbc_cli_load(&cat, "image build", catalog, &diags))) {
		goto done;
	}
	if (fbc_validate(cat, NULL, &diags, &err)) {
		fbc_cli_report("image build", &err, catalog);
		status = FBC_CLI_USAGE;
		goto done;
	}
	if (fbc_diags_count(&diags)) {
		fbc_diags_sort(&diags);
		fbc_cli_print_diags_text(stderr, &diags);
		fprintf(stderr,
			"fbcd image build: %s: invalid catalog (%zu errors); no image built\n",
			catalog, fbc_diags_count(&diags) + diags.dropped);
		status = FBC_CLI_INVALID;
		goto done;
	}
	if (base) {
		if (base_layout(base_dir, sizeof(base_dir), base_name, sizeof(base_name), tmp,
				sizeof(tmp), base, plats, bo.n_platforms, &co, &err)) {
			fbc_cli_report("image build", &err, "--base");
			status = FBC_CLI_USAGE;
			goto done;
		}
		bo.base_layout = base_dir;
		bo.base_ref_name = base_name[0] ? base_name : NULL;
	}
	if (fbc_image_build(&res, cat, out_dir, out_name[0] ? out_name : NULL, &bo, &err)) {
		fbc_cli_report("image build", &err, out_dir);
		status = FBC_CLI_USAGE;
		goto done;
	}
	printf("%s\n", res.top.digest);
	fprintf(stderr, "%s: %zu packages, %zu platform%s, layer %s (%lld bytes)\n", out_dir,
		res.n_packages, res.n_platforms, res.n_platforms == 1 ? "" : "s", res.layer_digest,
		(long long)res.layer_size);
	status = fflush(stdout) ? FBC_CLI_USAGE : FBC_CLI_OK;
done:
	if (tmp[0])
		rm_tree(tmp);
	fbc_diags_dispose(&diags);
	fbc_catalog_free(cat);
	return status;
}

/* ---- push ---- */

static void push_usage(FILE *f)
{
	fputs("usage: fbcd image push oci:DIR[:NAME] REF [--tag T]... [--insecure] [--ca-file F]\n"
	      "\n"
	      "Push the image of an OCI layout to a registry (OCI distribution API): every\n"
	      "blob (HEAD first; mounted from --mount-from repositories; monolithic or\n"
	      "chunked), every manifest and the index by digest, and only then the tags\n"
	      "(REF's tag and each --tag), so that no tag names an incomplete image.\n"
	      "\n"
	      "Options:\n"
	      "  --tag T              also tag the image T (repeated)\n"
	      "  --mount-from REPO    a repository of the same registry that may hold the\n"
	      "                       blobs (cross-repository mount; repeated)\n"
	      "  --chunk-size BYTES   blobs larger than this go in PATCH chunks (8 "
	      "MiB)\n" CLIENT_HELP "  -h, --help           show this help\n"
	      "\n"
	      "Prints REF@DIGEST. Exit status: 0 pushed, 2 usage, registry or network error.\n",
	      f);
}

static int cmd_push(int argc, char **argv)
{
	static const struct option opts[] = {
		{"tag", required_argument, NULL, 't'},
		{"mount-from", required_argument, NULL, OPT_MOUNT_FROM},
		{"chunk-size", required_argument, NULL, OPT_CHUNK},
		CLIENT_LONGOPTS,
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0}};
	const char *tags[64], *mounts[16];
	size_t n_tags = 0, n_mounts = 0;
	char dir[4096], name[256];
	fbc_oci_client *c = NULL;
	fbc_oci_push_stats st;
	fbc_oci_ref ref;
	client_opts co;
	fbc_error err;
	int ch, status = FBC_CLI_USAGE;
	long v;

	client_defaults(&co);
	fbc_error_init(&err);
	optind = 0;
	opterr = 0;
	while ((ch = getopt_long(argc, argv, ":ht:", opts, NULL)) != -1) {
		int r = client_option(&co, ch, optarg, "push");

		if (r == 2)
			return FBC_CLI_USAGE;
		if (r == 0)
			continue;
		switch (ch) {
		case 'h':
			push_usage(stdout);
			return FBC_CLI_OK;
		case 't':
			if (n_tags == sizeof(tags) / sizeof(tags[0])) {
				fputs("fbcd image push: too many --tag\n", stderr);
				return FBC_CLI_USAGE;
			}
			tags[n_tags++] = optarg;
			break;
		case OPT_MOUNT_FROM:
			if (n_mounts == sizeof(mounts) / sizeof(mounts[0])) {
				fputs("fbcd image push: too many --mount-from\n", stderr);
				return FBC_CLI_USAGE;
			}
			mounts[n_mounts++] = optarg;
			break;
		case OPT_CHUNK:
			if (parse_count(&v, optarg, 1L << 30) || v < 1024) {
				fprintf(stderr,
					"fbcd image push: --chunk-size: a number of bytes "
					"from 1024 to 1 GiB, not '%s'\n",
					optarg);
				return FBC_CLI_USAGE;
			}
			co.o.chunk_size = (size_t)v;
			break;
		case ':':
			fprintf(stderr, "fbcd image push: option '%s' needs a value\n",
				argv[optind - 1]);
			return FBC_CLI_USAGE;
		default:
			fprintf(stderr, "fbcd image push: unknown option '%s'\n", argv[optind - 1]);
			push_usage(stderr);
			return FBC_CLI_USAGE;
		}
	}
	if (argc - optind != 2) {
		fputs("fbcd image push: expected oci:DIR and REF\n", stderr);
		push_usage(stderr);
		return FBC_CLI_USAGE;
	}
	if (fbc_cli_image_parse_layout(dir, sizeof(dir), name, sizeof(name), argv[optind])) {
		fprintf(stderr, "fbcd image push: expected oci:DIR[:NAME], got '%s'\n",
			argv[optind]);
		return FBC_CLI_USAGE;
	}
	if (fbc_oci_ref_parse(&ref, argv[optind + 1], &err)) {
		fbc_cli_report("image push", &err, argv[optind + 1]);
		return FBC_CLI_USAGE;
	}
	for (size_t i = 0; i < n_tags; i++)
		if (!fbc_oci_tag_valid(tags[i])) {
			fprintf(stderr, "fbcd image push: --tag: invalid tag '%s'\n", tags[i]);
			return FBC_CLI_USAGE;
		}
	co.o.mount_from = mounts;
	co.o.n_mount_from = n_mounts;
	if (fbc_oci_client_create(&c, &co.o, &err) ||
	    fbc_oci_push_layout(c, &st, dir, name[0] ? name : NULL, &ref, tags, n_tags, &err)) {
		fbc_cli_report("image push", &err, NULL);
		goto done;
	}
	printf("%s/%s@%s\n", ref.registry, ref.repository, st.digest);
	fprintf(stderr,
		"pushed %s: %zu blobs uploaded (%llu bytes), %zu mounted, %zu already there; "
		"%zu manifests, %zu tags\n",
		st.digest, st.blobs_uploaded, (unsigned long long)st.bytes_uploaded,
		st.blobs_mounted, st.blobs_existing, st.manifests, st.tags);
	status = fflush(stdout) ? FBC_CLI_USAGE : FBC_CLI_OK;
done:
	fbc_oci_client_free(c);
	return status;
}

/* ---- pull ---- */

static void pull_usage(FILE *f)
{
	fputs("usage: fbcd image pull REF --output oci:DIR[:NAME] [--platform P]...\n"
	      "\n"
	      "Pull an image (OCI manifest or index, Docker v2s2 manifest or manifest list)\n"
	      "into an OCI image layout, verifying every digest. With --platform, only\n"
	      "those platforms of an index (the index is then rewritten to list only them).\n"
	      "\n"
	      "Options:\n"
	      "  --output oci:DIR[:NAME]  the layout to write\n"
	      "  --platform OS/ARCH[/VARIANT]  repeated; default every platform\n" CLIENT_HELP
	      "  -h, --help           show this help\n"
	      "\n"
	      "Prints the digest of what was pulled. Exit status: 0 pulled, 2 usage,\n"
	      "registry or network error.\n",
	      f);
}

static int cmd_pull(int argc, char **argv)
{
	static const struct option opts[] = {{"output", required_argument, NULL, 'o'},
					     {"platform", required_argument, NULL, 'p'},
					     CLIENT_LONGOPTS,
					     {"help", no_argument, NULL, 'h'},
					     {NULL, 0, NULL, 0}};
	fbc_oci_platform plats[FBC_IMAGE_PLATFORMS_MAX];
	size_t np = 0;
	const char *output = NULL;
	char dir[4096], name[256];
	fbc_oci_client *c = NULL;
	fbc_oci_descriptor top;
	fbc_oci_ref ref;
	client_opts co;
	fbc_error err;
	int ch, status = FBC_CLI_USAGE;

	client_defaults(&co);
	fbc_error_init(&err);
	optind = 0;
	opterr = 0;
	while ((ch = getopt_long(argc, argv, ":ho:p:", opts, NULL)) != -1) {
		int r = client_option(&co, ch, optarg, "pull");

		if (r == 2)
			return FBC_CLI_USAGE;
		if (r == 0)
			continue;
		switch (ch) {
		case 'h':
			pull_usage(stdout);
			return FBC_CLI_OK;
		case 'o':
			output = optarg;
			break;
		case 'p':
			if (np == FBC_IMAGE_PLATFORMS_MAX ||
			    fbc_oci_platform_parse(&plats[np], optarg, &err)) {
				if (np == FBC_IMAGE_PLATFORMS_MAX)
					fbc_error_set(&err, FBC_ELIMIT, "--platform", "too many");
				fbc_cli_report("image pull", &err, "--platform");
				return FBC_CLI_USAGE;
			}
			np++;
			break;
		case ':':
			fprintf(stderr, "fbcd image pull: option '%s' needs a value\n",
				argv[optind - 1]);
			return FBC_CLI_USAGE;
		default:
			fprintf(stderr, "fbcd image pull: unknown option '%s'\n", argv[optind - 1]);
			pull_usage(stderr);
			return FBC_CLI_USAGE;
		}
	}
	if (argc - optind != 1 || !output) {
		fputs("fbcd image pull: expected REF and --output oci:DIR\n", stderr);
		pull_usage(stderr);
		return FBC_CLI_USAGE;
	}
	if (fbc_cli_image_parse_layout(dir, sizeof(dir), name, sizeof(name), output)) {
		fprintf(stderr, "fbcd image pull: --output: expected oci:DIR[:NAME], got '%s'\n",
			output);
		return FBC_CLI_USAGE;
	}
	if (fbc_oci_ref_parse(&ref, argv[optind], &err)) {
		fbc_cli_report("image pull", &err, argv[optind]);
		return FBC_CLI_USAGE;
	}
	if (fbc_oci_client_create(&c, &co.o, &err) ||
	    fbc_oci_pull(c, &top, &ref, plats, np, dir, name[0] ? name : NULL, &err)) {
		fbc_cli_report("image pull", &err, NULL);
		goto done;
	}
	printf("%s\n", top.digest);
	status = fflush(stdout) ? FBC_CLI_USAGE : FBC_CLI_OK;
done:
	fbc_oci_client_free(c);
	return status;
}

/* ---- dispatch ---- */

static void usage(FILE *f)
{
	fputs("usage: fbcd image COMMAND [OPTIONS]\n"
	      "\n"
	      "Catalog images without a container engine.\n"
	      "\n"
	      "Commands:\n"
	      "  build     build a reproducible OCI image of a catalog into an OCI layout\n"
	      "  push      push an OCI layout's image to a registry (tags last)\n"
	      "  pull      pull an image into an OCI layout (digests verified)\n"
	      "  inspect   digests, platforms, labels and packages of an image\n"
	      "\n"
	      "Run 'fbcd image COMMAND --help' for the options of a command.\n",
	      f);
}

int fbc_cmd_image(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return FBC_CLI_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return FBC_CLI_OK;
	}
	if (!strcmp(argv[1], "build"))
		return cmd_build(argc - 1, argv + 1);
	if (!strcmp(argv[1], "push"))
		return cmd_push(argc - 1, argv + 1);
	if (!strcmp(argv[1], "pull"))
		return cmd_pull(argc - 1, argv + 1);
	if (!strcmp(argv[1], "inspect"))
		return fbc_cli_image_inspect(argc - 1, argv + 1);
	fprintf(stderr, "fbcd image: unknown command '%s'\n\n", argv[1]);
	usage(stderr);
	return FBC_CLI_USAGE;
}
