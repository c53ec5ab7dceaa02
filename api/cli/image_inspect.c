/*
 * `fbcd image inspect REF|oci:DIR[:NAME]`: the image's digest and media
 * type, and per platform its manifest and config digests, labels, layers
 * and the catalog packages under /configs (read from the top layer). A
 * registry reference is pulled into a temporary layout first (all
 * platforms, every digest verified).
 */
#include "api/cli/cli.h"
#include "api/cli/image.h"
#include "api/cli/util.h"
#include "pipeline/oci/client.h"
#include "pipeline/oci/oci.h"

#include <archive.h>
#include <archive_entry.h>
#include <jansson.h>

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void usage(FILE *f)
{
	fputs("usage: fbcd image inspect [--insecure] [--ca-file F] REF|oci:DIR[:NAME]\n"
	      "\n"
	      "Print, as JSON, the image's digest and media type and, for each platform,\n"
	      "its manifest and config digests, labels, layers and the catalog packages\n"
	      "under /configs (from the top layer). A registry reference is pulled into a\n"
	      "temporary directory first.\n"
	      "\n"
	      "Options:\n"
	      "  --insecure           plain HTTP\n"
	      "  --ca-file FILE       trust the CAs in FILE\n"
	      "  --creds-file FILE    credentials: USER:PASSWORD, or a token alone\n"
	      "  --authfile FILE      docker config.json\n"
	      "  -h, --help           show this help\n"
	      "\n"
	      "Exit status: 0 printed, 2 usage, I/O, registry or network error.\n",
	      f);
}

/* Packages: the directories configs/<p>/ of a gzip'd tar layer. */
static int layer_packages(json_t *out, const char *dir, const fbc_oci_descriptor *layer,
			  fbc_error *err)
{
	struct archive *a = archive_read_new();
	struct archive_entry *e;
	char path[4200];
	int rc = 0, r;

	if (!a)
		return fbc_error_set(err, FBC_ENOMEM, NULL, "out of memory");
	if ((rc = fbc_oci_layout_blob_path(path, sizeof(path), dir, layer->digest, err)))
		goto done;
	archive_read_support_filter_gzip(a);
	archive_read_support_filter_none(a);
	archive_read_support_format_tar(a);
	if (archive_read_open_filename(a, path, 65536) != ARCHIVE_OK) {
		rc = fbc_error_set(err, FBC_EPARSE, path, "%s", archive_error_string(a));
		goto done;
	}
	while ((r = archive_read_next_header(a, &e)) == ARCHIVE_OK) {
		const char *p = archive_entry_pathname(e);
		const char *rest, *slash;

		if (!p)
			continue;
		if (p[0] == '/')
			p++;
		if (!strncmp(p, "./", 2))
			p += 2;
		if (strncmp(p, "configs/", 8) != 0)
			continue;
		rest = p + 8;
		slash = strchr(rest, '/');
		if (!slash || slash == rest || strcmp(slash + 1, "catalog.json") != 0)
			continue;
		if (json_array_size(out) >= 100000) {
			rc = fbc_error_set(err, FBC_ELIMIT, path, "more than 100000 packages");
			goto done;
		}
		json_array_append_new(out, json_stringn(rest, (size_t)(slash - rest)));
	}
	if (r != ARCHIVE_EOF)
		rc = fbc_error_set(err, FBC_EPARSE, path, "%s", archive_error_string(a));
done:
	archive_read_free(a);
	return rc;
}

static int describe_manifest(json_t *out, const char *dir, const fbc_oci_descriptor *d,
			     fbc_error *err)
{
	fbc_buf mb, cb;
	fbc_oci_manifest m;
	json_t *cfg = NULL, *layers, *pk, *inner;
	json_error_t je;
	int rc;

	memset(&m, 0, sizeof(m));
	fbc_buf_init(&cb, 0);
	if ((rc = fbc_oci_layout_read(&mb, dir, d->digest, FBC_OCI_MANIFEST_MAX, err)))
		return rc;
	rc = fbc_oci_manifest_parse(&m, mb.data, mb.len, d->media_type[0] ? d->media_type : NULL,
				    err);
	fbc_buf_dispose(&mb);
	if (rc)
		goto done;
	if (m.kind != FBC_OCI_KIND_MANIFEST) {
		rc = fbc_error_set(err, FBC_EINVAL, d->digest, "nested indexes are not supported");
		goto done;
	}
	if ((rc = fbc_oci_layout_read(&cb, dir, m.config.digest, FBC_OCI_CONFIG_MAX, err)))
		goto done;
	cfg = json_loadb(cb.data ? cb.data : "", cb.len, 0, &je);
	if (!json_is_object(cfg)) {
		rc = fbc_error_set(err, FBC_EPARSE, m.config.digest, "config is not a JSON object");
		goto done;
	}
	json_object_set_new(out, "manifest", json_string(d->digest));
	json_object_set_new(out, "mediaType", json_string(m.media_type));
	json_object_set_new(out, "config", json_string(m.config.digest));
	{
		char plat[100];
		fbc_oci_platform p;

		memset(&p, 0, sizeof(p));
		snprintf(p.os, sizeof(p.os), "%s",
			 json_is_string(json_object_get(cfg, "os"))
				 ? json_string_value(json_object_get(cfg, "os"))
				 : "?");
		snprintf(p.architecture, sizeof(p.architecture), "%s",
			 json_is_string(json_object_get(cfg, "architecture"))
				 ? json_string_value(json_object_get(cfg, "architecture"))
				 : "?");
		if (json_is_string(json_object_get(cfg, "variant")))
			snprintf(p.variant, sizeof(p.variant), "%s",
				 json_string_value(json_object_get(cfg, "variant")));
		fbc_oci_platform_format(&p, plat, sizeof(plat));
		json_object_set_new(out, "platform", json_string(plat));
	}
	inner = json_object_get(cfg, "config");
	json_object_set(out, "labels",
			json_is_object(json_object_get(inner, "Labels"))
				? json_object_get(inner, "Labels")
				: json_object());
	if (json_object_get(inner, "Entrypoint"))
		json_object_set(out, "entrypoint", json_object_get(inner, "Entrypoint"));
	if (json_object_get(inner, "Cmd"))
		json_object_set(out, "cmd", json_object_get(inner, "Cmd"));
	layers = json_array();
	for (size_t i = 0; i < m.n_items; i++)
		json_array_append_new(layers,
				      json_pack("{s:s, s:s, s:I}", "digest", m.items[i].digest,
						"mediaType", m.items[i].media_type, "size",
						(json_int_t)m.items[i].size));
	json_object_set_new(out, "layers", layers);
	pk = json_array();
	json_object_set_new(out, "packages", pk);
	if (m.n_items && (rc = layer_packages(pk, dir, &m.items[m.n_items - 1], err)))
		goto done;
done:
	fbc_buf_dispose(&cb);
	json_decref(cfg);
	fbc_oci_manifest_dispose(&m);
	return rc;
}

static int inspect_layout(json_t **out, const char *dir, const char *name, fbc_error *err)
{
	fbc_oci_descriptor top;
	fbc_oci_manifest m;
	fbc_buf b;
	json_t *res = NULL, *plats;
	int rc;

	memset(&m, 0, sizeof(m));
	if ((rc = fbc_oci_layout_root(&top, dir, name, err)) ||
	    (rc = fbc_oci_layout_read(&b, dir, top.digest, FBC_OCI_MANIFEST_MAX, err)))
		return rc;
	rc = fbc_oci_manifest_parse(&m, b.data, b.len, top.media_type[0] ? top.media_type : NULL,
				    err);
	fbc_buf_dispose(&b);
	if (rc)
		return rc;
	res = json_pack("{s:s, s:s, s:I}", "digest", top.digest, "mediaType", m.media_type, "size",
			(json_int_t)top.size);
	plats = json_array();
	json_object_set_new(res, "manifests", plats);
	if (m.kind == FBC_OCI_KIND_MANIFEST) {
		json_t *one = json_object();

		json_array_append_new(plats, one);
		if ((rc = describe_manifest(one, dir, &top, err)))
			goto done;
	} else {
		for (size_t i = 0; i < m.n_items; i++) {
			json_t *one = json_object();

			json_array_append_new(plats, one);
			if ((rc = describe_manifest(one, dir, &m.items[i], err)))
				goto done;
		}
	}
	*out = res;
	res = NULL;
done:
	json_decref(res);
	fbc_oci_manifest_dispose(&m);
	return rc;
}

int fbc_cli_image_inspect(int argc, char **argv)
{
	static const struct option opts[] = {{"insecure", no_argument, NULL, 'k'},
					     {"ca-file", required_argument, NULL, 'c'},
					     {"creds-file", required_argument, NULL, 'C'},
					     {"authfile", required_argument, NULL, 'a'},
					     {"help", no_argument, NULL, 'h'},
					     {NULL, 0, NULL, 0}};
	fbc_oci_client_options co = {.max_retries = -1};
	fbc_oci_client *c = NULL;
	char dir[4096], name[256], tmp[4200] = "";
	json_t *res = NULL;
	fbc_error err;
	int ch, status = FBC_CLI_USAGE;

	fbc_error_init(&err);
	optind = 0;
	opterr = 0;
	while ((ch = getopt_long(argc, argv, ":hkc:C:a:", opts, NULL)) != -1) {
		switch (ch) {
		case 'h':
			usage(stdout);
			return FBC_CLI_OK;
		case 'k':
			co.insecure = true;
			break;
		case 'c':
			co.ca_file = optarg;
			break;
		case 'C':
			co.creds_file = optarg;
			break;
		case 'a':
			co.docker_config = optarg;
			break;
		default:
			fprintf(stderr, "fbcd image inspect: bad option '%s'\n", argv[optind - 1]);
			usage(stderr);
			return FBC_CLI_USAGE;
		}
	}
	if (argc - optind != 1) {
		usage(stderr);
		return FBC_CLI_USAGE;
	}
	if (!strncmp(argv[optind], "oci:", 4)) {
		if (fbc_cli_image_parse_layout(dir, sizeof(dir), name, sizeof(name),
					       argv[optind])) {
			fprintf(stderr, "fbcd image inspect: expected oci:DIR[:NAME], got '%s'\n",
				argv[optind]);
			return FBC_CLI_USAGE;
		}
	} else {
		fbc_oci_ref ref;
		fbc_oci_descriptor top;

		if (fbc_oci_ref_parse(&ref, argv[optind], &err)) {
			fbc_cli_report("image inspect", &err, NULL);
			return FBC_CLI_USAGE;
		}
		snprintf(tmp, sizeof(tmp), "%s/fbcd-inspect.XXXXXX",
			 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
		if (!mkdtemp(tmp)) {
			fprintf(stderr, "fbcd image inspect: mkdtemp: %s\n", strerror(errno));
			return FBC_CLI_USAGE;
		}
		snprintf(dir, sizeof(dir), "%s", tmp);
		name[0] = 0;
		if (fbc_oci_client_create(&c, &co, &err) ||
		    fbc_oci_pull(c, &top, &ref, NULL, 0, dir, NULL, &err)) {
			fbc_cli_report("image inspect", &err, NULL);
			goto done;
		}
	}
	if (inspect_layout(&res, dir, name[0] ? name : NULL, &err)) {
		fbc_cli_report("image inspect", &err, dir);
		goto done;
	}
	if (json_dumpf(res, stdout, JSON_INDENT(2) | JSON_SORT_KEYS) ||
	    fputc('\n', stdout) == EOF || fflush(stdout)) {
		fputs("fbcd image inspect: write failed\n", stderr);
		goto done;
	}
	status = FBC_CLI_OK;
done:
	if (tmp[0]) {
		char cmd[4300];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
		if (system(cmd) != 0)
			fprintf(stderr, "fbcd image inspect: could not remove %s\n", tmp);
	}
	json_decref(res);
	fbc_oci_client_free(c);
	return status;
}
