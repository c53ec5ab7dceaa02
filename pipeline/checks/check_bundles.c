/* `bundles`: every added bundle directory is a valid registry+v1 bundle (service/bundle). */
#include "pipeline/checks/internal.h"
#include "service/bundle/bundle.h"
#include "service/load/load.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int line_or_1(chk_ctx *c, const char *path, const char *needle)
{
	int l = path ? chk_line_of(c, path, 1, needle) : 0;

	return l ? l : 1;
}

/* CSV fields catalog users rely on (warnings, as community's check_required_fields). */
static int csv_fields(chk_ctx *c, chk_out *o, const json_t *csv, const char *path)
{
	const json_t *spec = json_object_get(csv, "spec");
	const char *dn = json_string_value(json_object_get(spec, "displayName"));
	const char *desc = json_string_value(json_object_get(spec, "description"));
	const json_t *icons = json_object_get(spec, "icon");
	const json_t *prov = json_object_get(spec, "provider");
	const char *pname = json_string_value(json_object_get(prov, "name"));
	int rc = 0;

	if ((!dn || strlen(dn) < 3 || strlen(dn) > 50) &&
	    (rc = chk_add(o, FBC_LEVEL_WARNING, path, line_or_1(c, path, "displayName"),
			  "csv-displayname", "spec.displayName should be 3 to 50 characters")))
		return rc;
	if ((!desc || strlen(desc) < 20) &&
	    (rc = chk_add(o, FBC_LEVEL_WARNING, path, line_or_1(c, path, "description:"),
			  "csv-description", "spec.description should be at least 20 characters")))
		return rc;
	if (!json_is_array(icons) || json_array_size(icons) == 0) {
		rc = chk_add(o, FBC_LEVEL_WARNING, path, line_or_1(c, path, "spec:"), "csv-icon",
			     "spec.icon is missing: catalog users see no icon");
	} else {
		const char *mt =
			json_string_value(json_object_get(json_array_get(icons, 0), "mediatype"));

		if (!mt || !(strcmp(mt, "image/png") == 0 || strcmp(mt, "image/jpeg") == 0 ||
			     strcmp(mt, "image/gif") == 0 || strcmp(mt, "image/svg+xml") == 0))
			rc = chk_add(o, FBC_LEVEL_WARNING, path, line_or_1(c, path, "mediatype"),
				     "csv-icon",
				     "spec.icon[0].mediatype %s is not image/png, image/jpeg, "
				     "image/gif or image/svg+xml",
				     mt ? mt : "(none)");
	}
	if (rc)
		return rc;
	if ((!json_is_array(json_object_get(spec, "maintainers")) ||
	     json_array_size(json_object_get(spec, "maintainers")) == 0) &&
	    (rc = chk_add(o, FBC_LEVEL_WARNING, path, line_or_1(c, path, "spec:"),
			  "csv-maintainers",
			  "spec.maintainers should name at least one maintainer")))
		return rc;
	if ((!pname || strlen(pname) < 3) &&
	    (rc = chk_add(o, FBC_LEVEL_WARNING, path, line_or_1(c, path, "provider"),
			  "csv-provider", "spec.provider.name should be at least 3 characters")))
		return rc;
	if ((!json_is_array(json_object_get(spec, "links")) ||
	     json_array_size(json_object_get(spec, "links")) == 0) &&
	    (rc = chk_add(o, FBC_LEVEL_WARNING, path, line_or_1(c, path, "spec:"), "csv-links",
			  "spec.links should have at least one entry")))
		return rc;
	return 0;
}

/* metadata/dependencies.yaml practices OLM's documentation advises against. */
static int dependencies(chk_ctx *c, chk_out *o, const char *dir)
{
	char *path = fbc_tree_join(dir, "metadata/dependencies.yaml"), *data = NULL;
	size_t len = 0;
	json_t *doc = NULL, *deps, *d;
	fbc_load_limits lim;
	fbc_error e2;
	bool gvk = false, pkg = false;
	size_t i;
	int rc = 0;

	if (!path)
		return FBC_ENOMEM;
	if (chk_read_head(&data, &len, c, path, 1u << 20, &e2) != 0)
		goto done;
	fbc_load_limits_default(&lim);
	if (fbc_yaml_to_json(&doc, data, len, &lim, &e2) != 0)
		goto done; /* the bundle validator reports files that do not decode */
	deps = json_object_get(doc, "dependencies");
	json_array_foreach(deps, i, d)
	{
		const char *type = json_string_value(json_object_get(d, "type"));
		const char *range =
			json_string_value(json_object_get(json_object_get(d, "value"), "version"));

		if (!type)
			continue;
		gvk |= strcmp(type, "olm.gvk") == 0;
		if (strcmp(type, "olm.package") == 0) {
			pkg = true;
			if (range && strchr(range, '<') &&
			    (rc = chk_add(o, FBC_LEVEL_WARNING, path, line_or_1(c, path, range),
					  "dep-upper-bound",
					  "olm.package dependency range %s has an upper bound: it "
					  "truncates the other operator's upgrade stream",
					  range)))
				goto done;
		}
	}
	if (gvk && pkg &&
	    (rc = chk_add(o, FBC_LEVEL_WARNING, path, line_or_1(c, path, "dependencies"),
			  "dep-mixed",
			  "olm.gvk and olm.package dependencies are mixed: OLM cannot AND them")))
		goto done;
done:
	json_decref(doc);
	free(data);
	free(path);
	return rc;
}

static int check_one(chk_ctx *c, chk_out *o, const chk_bundle *cb, fbc_error *err)
{
	fbc_tree *sub = NULL;
	fbc_bundle_dir *b = NULL;
	fbc_diags diags;
	fbc_error e2;
	const char *version = strrchr(cb->dir, '/');
	const char *csv = chk_csv_file(c, cb->dir);
	bool errors = false;
	int rc;

	version = version ? version + 1 : cb->dir;
	if ((rc = fbc_diags_init(&diags, 0)) != 0)
		return fbc_error_set(err, rc, cb->dir, "out of memory");
	if (fbc_tree_sub(&sub, c->head_tree, cb->dir, &e2) != 0 ||
	    fbc_bundle_read(&b, sub, NULL, &e2) != 0) {
		if (e2.code == FBC_ENOMEM) {
			rc = fbc_error_set(err, FBC_ENOMEM, cb->dir, "out of memory");
			goto done;
		}
		/* messages name the tree they read ("<repository>@<commit>/<dir>"):
		 * a finding names the repository-relative directory only, so the
		 * same change reads the same from any clone or mirror */
		const char *msg = e2.message, *label = sub ? fbc_tree_label(sub) : NULL;
		size_t ll = label ? strlen(label) : 0;
		bool relabel = ll && strncmp(msg, label, ll) == 0;
		rc = chk_add(o, FBC_LEVEL_FAILURE, cb->first_path, 0,
			     e2.code == FBC_ELIMIT ? "LIMIT" : "read",
			     "bundle %s cannot be read: %s%s", cb->dir, relabel ? cb->dir : "",
			     relabel ? msg + ll : msg);
		goto done;
	}
	if ((rc = fbc_bundle_validate(b, &diags, &e2)) != 0) {
		rc = fbc_error_set(err, rc, cb->dir, "%s", e2.message);
		goto done;
	}
	fbc_diags_sort(&diags);
	for (size_t i = 0; i < fbc_diags_count(&diags); i++) {
		const fbc_diag *d = fbc_diags_at(&diags, i);
		bool is_err = fbc_bundle_code_is_error(d->code);

		errors |= is_err;
		if ((rc = chk_add(o, is_err ? FBC_LEVEL_FAILURE : FBC_LEVEL_WARNING,
				  d->file ? fbc_arena_printf(c->arena, "%s/%s", cb->dir, d->file)
					  : cb->dir,
				  d->line, d->code, "%s", d->message)))
			goto done;
	}
	if (!errors) {
		fbc_buf out;
		bool written = false;

		fbc_buf_init(&out, 0);
		if (fbc_bundle_render(&out, &written, b, "", FBC_BUNDLE_MIGRATE_NONE, &e2) != 0)
			rc = chk_add(
				o, FBC_LEVEL_FAILURE,
				*e2.where ? fbc_arena_printf(c->arena, "%s/%s", cb->dir, e2.where)
					  : cb->dir,
				0, "render", "bundle %s does not render: %s", cb->dir, e2.message);
		fbc_buf_dispose(&out);
		if (rc)
			goto done;
	}
	if (fbc_bundle_csv(b)) {
		const char *v = fbc_bundle_version(b);

		if (strcmp(v, version) != 0 &&
		    !(version[0] == 'v' && strcmp(v, version + 1) == 0) &&
		    (rc = chk_add(o, FBC_LEVEL_FAILURE, csv, line_or_1(c, csv, "version:"),
				  "version-dir",
				  "the directory %s does not match the CSV's spec.version %s",
				  cb->dir, *v ? v : "(none)")))
			goto done;
		if ((rc = csv_fields(c, o, fbc_bundle_csv(b), csv)) != 0)
			goto done;
	}
	if (cb->package && *fbc_bundle_package(b) &&
	    strcmp(fbc_bundle_package(b), cb->package) != 0) {
		char *ann = fbc_tree_join(cb->dir, "metadata/annotations.yaml");

		rc = chk_add(o, FBC_LEVEL_FAILURE, ann,
			     line_or_1(c, ann, "operators.operatorframework.io.bundle.package.v1"),
			     "package-name",
			     "the bundle's package %s does not match its directory's package %s",
			     fbc_bundle_package(b), cb->package);
		free(ann);
		if (rc)
			goto done;
	}
	rc = dependencies(c, o, cb->dir);
done:
	fbc_bundle_free(b);
	fbc_tree_free(sub);
	fbc_diags_dispose(&diags);
	return rc;
}

int chk_run_bundles(chk_ctx *c, chk_out *o, fbc_error *err)
{
	size_t n = 0;
	int rc;

	for (size_t i = 0; i < c->bundles.len; i++) {
		const chk_bundle *b = FBC_VEC_AT(&c->bundles, chk_bundle, i);

		if (b->state != CHK_B_ADDED)
			continue; /* modified and deleted bundles are `changes` findings */
		n++;
		if ((rc = check_one(c, o, b, err)) != 0)
			return rc;
	}
	if (n == 0)
		return chk_summary(o, "no bundle directory is added");
	return chk_summary(o, "%zu bundle directories validated (registry+v1, bundles.md)", n);
}
