/*
 * `fbcd template render --pull`: the last bundle source of templates.md
 * §4.5 — an image that no --bundles-from catalog and no --bundle-root
 * holds is pulled with the registry client (pipeline/oci), its layers
 * extracted in order into a private temporary directory with the hardened
 * extractor of uploads (no links out, no device files, bounded), and read
 * as the bundle directory it carries (/manifests and /metadata at the
 * image's root, as opm unpacks it). Nothing is kept afterwards.
 */
#include "api/cli/template_pull.h"

#include "api/http/content.h"
#include "pipeline/oci/oci.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define MAX_LAYER (512u << 20) /* compressed bytes of one bundle layer */

void fbc_cli_puller_init(fbc_cli_puller *p)
{
	memset(p, 0, sizeof(*p));
	p->o.max_retries = -1;
	pthread_mutex_init(&p->lock, NULL);
}

void fbc_cli_puller_dispose(fbc_cli_puller *p)
{
	fbc_oci_client_free(p->client);
	p->client = NULL;
	pthread_mutex_destroy(&p->lock);
}

static bool is_gzip_or_tar(const char *mt)
{
	static const char *const ok[] = {
		"application/vnd.oci.image.layer.v1.tar",
		"application/vnd.oci.image.layer.v1.tar+gzip",
		"application/vnd.docker.image.rootfs.diff.tar.gzip",
		"application/vnd.oci.image.layer.nondistributable.v1.tar+gzip",
		"application/vnd.docker.image.rootfs.foreign.diff.tar.gzip",
	};
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
		if (!strcmp(mt, ok[i]))
			return true;
	return false;
}

/* The image manifest for linux/amd64 (else the first) of an index, or top. */
static int pick_manifest(fbc_oci_manifest *m, const char *layout, const fbc_oci_descriptor *top,
			 fbc_error *err)
{
	fbc_buf b;
	int rc;

	fbc_buf_init(&b, 0);
	if ((rc = fbc_oci_layout_read(&b, layout, top->digest, FBC_OCI_MANIFEST_MAX, err)) ||
	    (rc = fbc_oci_manifest_parse(m, b.data, b.len,
					 top->media_type[0] ? top->media_type : NULL, err)))
		goto done;
	if (m->kind == FBC_OCI_KIND_INDEX) {
		fbc_oci_descriptor d;
		size_t k = 0;

		if (m->n_items == 0) {
			rc = fbc_error_set(err, FBC_EINVAL, top->digest,
					   "an image index with no manifests");
			goto done;
		}
		for (size_t i = 0; i < m->n_items; i++)
			if (m->items[i].has_platform && !strcmp(m->items[i].platform.os, "linux") &&
			    !strcmp(m->items[i].platform.architecture, "amd64")) {
				k = i;
				break;
			}
		d = m->items[k];
		fbc_oci_manifest_dispose(m);
		memset(m, 0, sizeof(*m));
		fbc_buf_dispose(&b);
		fbc_buf_init(&b, 0);
		if ((rc = fbc_oci_layout_read(&b, layout, d.digest, FBC_OCI_MANIFEST_MAX, err)) ||
		    (rc = fbc_oci_manifest_parse(m, b.data, b.len,
						 d.media_type[0] ? d.media_type : NULL, err)))
			goto done;
		if (m->kind != FBC_OCI_KIND_MANIFEST)
			rc = fbc_error_set(err, FBC_EINVAL, d.digest,
					   "an index inside an index is not a bundle image");
	}
done:
	fbc_buf_dispose(&b);
	return rc;
}

static int pull_locked(fbc_bundle_dir **out, fbc_cli_puller *p, const char *image, const char *tmp,
		       fbc_error *err)
{
	char layout[PATH_MAX], root[PATH_MAX];
	fbc_oci_ref ref;
	fbc_oci_descriptor top;
	fbc_oci_manifest m;
	fbc_untar_limits lim;
	fbc_tree *t = NULL;
	int rc;

	memset(&m, 0, sizeof(m));
	snprintf(layout, sizeof(layout), "%s/layout", tmp);
	snprintf(root, sizeof(root), "%s/root", tmp);
	if (mkdir(root, 0700) != 0)
		return fbc_error_set(err, FBC_EIO, root, "mkdir: %s", strerror(errno));
	if ((rc = fbc_oci_ref_parse(&ref, image, err)))
		return rc == FBC_EPARSE ? FBC_EINVAL : rc;
	if (!p->client && (rc = fbc_oci_client_create(&p->client, &p->o, err)))
		return rc;
	if ((rc = fbc_oci_pull(p->client, &top, &ref, NULL, 0, layout, NULL, err)) ||
	    (rc = pick_manifest(&m, layout, &top, err)))
		goto done;
	fbc_untar_limits_default(&lim);
	for (size_t i = 0; i < m.n_items && rc == 0; i++) {
		const fbc_oci_descriptor *l = &m.items[i];
		fbc_buf b;

		if (!is_gzip_or_tar(l->media_type)) {
			rc = fbc_error_set(err, FBC_EINVAL, l->digest,
					   "layer media type %s is not supported (tar or tar+gzip)",
					   l->media_type);
			break;
		}
		fbc_buf_init(&b, 0);
		rc = fbc_oci_layout_read(&b, layout, l->digest, MAX_LAYER, err);
		/* later layers may add files, not replace them (bundle images
		 * are one layer FROM scratch; a replaced file is refused) */
		if (rc == 0 && (rc = fbc_http_untar(root, b.data, b.len, &lim, err)))
			fbc_error_prefix(err, "layer %zu (%.19s)", i + 1, l->digest);
		fbc_buf_dispose(&b);
	}
	if (rc == 0 && (rc = fbc_tree_open_dir(&t, root, err)) == 0) {
		rc = fbc_bundle_read(out, t, NULL, err);
		if (rc == FBC_ENOTFOUND)
			rc = fbc_error_set(err, FBC_EINVAL, image,
					   "not a bundle image: no /manifests and /metadata "
					   "directories at its root");
	}
done:
	fbc_tree_free(t);
	fbc_oci_manifest_dispose(&m);
	return rc;
}

int fbc_cli_template_pull(fbc_bundle_dir **out, const char *image, void *ctx, fbc_error *err)
{
	fbc_cli_puller *p = ctx;
	char tmp[PATH_MAX];
	int rc;

	snprintf(tmp, sizeof(tmp), "%s/fbcd-pull.XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(tmp))
		return fbc_error_set(err, FBC_EIO, "TMPDIR", "mkdtemp: %s", strerror(errno));
	pthread_mutex_lock(&p->lock); /* one client, one pull at a time */
	rc = pull_locked(out, p, image, tmp, err);
	pthread_mutex_unlock(&p->lock);
	fbc_http_rmtree(tmp);
	return rc;
}
