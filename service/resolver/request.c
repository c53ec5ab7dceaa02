/* Request parsing (issue 4 input format), inline catalogs and result JSON. */
#include "service/resolver/resolver.h"
#include "service/resolver/internal.h"

#include "service/base/arena.h"

#include <stdlib.h>
#include <string.h>

struct fbc_resolve_request_priv {
	fbc_arena *arena;
	json_t *body; /* kept alive: inline catalogs borrow from it */
	size_t cap_catalogs, cap_installed, cap_requests;
	fbc_resolve_limits lim;
};

void fbc_resolve_limits_default(fbc_resolve_limits *lim)
{
	lim->max_catalogs = 64;
	lim->max_requests = 256;
	lim->max_installed = 1024;
	lim->max_blobs = 200000;
	lim->max_string = 4096;
	lim->max_variables = 2000000;
}

const char *fbc_resolve_semantics_name(fbc_resolve_semantics s)
{
	switch (s) {
	case FBC_RESOLVE_CLASSIC:
		return "classic";
	case FBC_RESOLVE_V1:
		return "v1";
	case FBC_RESOLVE_V1_DEPS:
		return "v1-deps";
	}
	return "?";
}

int fbc_resolve_semantics_parse(fbc_resolve_semantics *out, const char *s)
{
	if (strcmp(s, "classic") == 0)
		*out = FBC_RESOLVE_CLASSIC;
	else if (strcmp(s, "v1") == 0)
		*out = FBC_RESOLVE_V1;
	else if (strcmp(s, "v1-deps") == 0)
		*out = FBC_RESOLVE_V1_DEPS;
	else
		return FBC_EINVAL;
	return 0;
}

int fbc_resolve_request_create(fbc_resolve_request **out, fbc_resolve_semantics semantics,
			       fbc_error *err)
{
	fbc_resolve_request *req = calloc(1, sizeof(*req));
	int rc;

	if (!req)
		return fbc_error_set(err, FBC_ENOMEM, NULL, "out of memory");
	req->priv = calloc(1, sizeof(*req->priv));
	if (!req->priv) {
		free(req);
		return fbc_error_set(err, FBC_ENOMEM, NULL, "out of memory");
	}
	rc = fbc_arena_create(&req->priv->arena, 0);
	if (rc < 0) {
		fbc_resolve_request_free(req);
		return fbc_error_set(err, rc, NULL, "out of memory");
	}
	fbc_resolve_limits_default(&req->priv->lim);
	req->semantics = semantics;
	*out = req;
	return 0;
}

void fbc_resolve_request_free(fbc_resolve_request *req)
{
	if (!req)
		return;
	if (req->priv) {
		free(req->catalogs);
		free(req->installed);
		free(req->requests);
		if (req->priv->body)
			json_decref(req->priv->body);
		fbc_arena_free(req->priv->arena);
		free(req->priv);
	}
	free(req);
}

static int grow(void **items, size_t *cap, size_t len, size_t elem, size_t max, const char *what,
		fbc_error *err)
{
	void *p;
	size_t ncap;

	if (len >= max)
		return fbc_error_set(err, FBC_ELIMIT, what, "more than %zu %s", max, what);
	if (len < *cap)
		return 0;
	ncap = *cap ? *cap * 2 : 8;
	p = realloc(*items, ncap * elem);
	if (!p)
		return fbc_error_set(err, FBC_ENOMEM, NULL, "out of memory");
	memset((char *)p + *cap * elem, 0, (ncap - *cap) * elem);
	*items = p;
	*cap = ncap;
	return 0;
}

static const char *dup_opt(fbc_resolve_request *req, const char *s)
{
	return s ? fbc_arena_strdup(req->priv->arena, s) : NULL;
}

int fbc_resolve_request_add_catalog(fbc_resolve_request *req, const char *name, int priority,
				    const char *path, fbc_error *err)
{
	fbc_resolve_catalog *c;
	int rc;

	for (size_t i = 0; i < req->n_catalogs; i++)
		if (strcmp(req->catalogs[i].name, name) == 0)
			return fbc_error_set(err, FBC_EINVAL, "catalogs",
					     "catalog name \"%s\" is given twice", name);
	rc = grow((void **)&req->catalogs, &req->priv->cap_catalogs, req->n_catalogs,
		  sizeof(*req->catalogs), req->priv->lim.max_catalogs, "catalogs", err);
	if (rc < 0)
		return rc;
	c = &req->catalogs[req->n_catalogs];
	memset(c, 0, sizeof(*c));
	c->name = dup_opt(req, name);
	c->path = dup_opt(req, path);
	c->priority = priority;
	if (!c->name || (path && !c->path))
		return fbc_error_set(err, FBC_ENOMEM, NULL, "out of memory");
	req->n_catalogs++;
	return 0;
}

int fbc_resolve_request_add_installed(fbc_resolve_request *req, const char *package,
				      const char *bundle, const char *version, fbc_error *err)
{
	fbc_resolve_installed *in;
	int rc;

	rc = grow((void **)&req->installed, &req->priv->cap_installed, req->n_installed,
		  sizeof(*req->installed), req->priv->lim.max_installed, "installed", err);
	if (rc < 0)
		return rc;
	in = &req->installed[req->n_installed];
	in->package = dup_opt(req, package ? package : "");
	in->bundle = dup_opt(req, bundle);
	in->version = dup_opt(req, version);
	if (!in->package || !in->bundle || !in->version)
		return fbc_error_set(err, FBC_ENOMEM, NULL, "out of memory");
	req->n_installed++;
	return 0;
}

int fbc_resolve_request_add(fbc_resolve_request *req, const fbc_resolve_req *r, fbc_error *err)
{
	fbc_resolve_req *d;
	int rc;

	rc = grow((void **)&req->requests, &req->priv->cap_requests, req->n_requests,
		  sizeof(*req->requests), req->priv->lim.max_requests, "requests", err);
	if (rc < 0)
		return rc;
	d = &req->requests[req->n_requests];
	d->package = dup_opt(req, r->package);
	d->channel = dup_opt(req, r->channel);
	d->catalog = dup_opt(req, r->catalog);
	d->starting_csv = dup_opt(req, r->starting_csv);
	d->version_range = dup_opt(req, r->version_range);
	d->policy = r->policy;
	if (!d->package)
		return fbc_error_set(err, FBC_ENOMEM, NULL, "out of memory");
	req->n_requests++;
	return 0;
}

/* A string member: absent/null -> *out = NULL; otherwise a bounded, non-empty string. */
static int get_str(const char **out, json_t *obj, const char *key, bool required, size_t max,
		   const char *where, fbc_error *err)
{
	json_t *v = json_object_get(obj, key);

	*out = NULL;
	if (!v || json_is_null(v)) {
		if (required)
			return fbc_error_set(err, FBC_EINVAL, where, "missing field \"%s\"", key);
		return 0;
	}
	if (!json_is_string(v))
		return fbc_error_set(err, FBC_EINVAL, where, "field \"%s\" must be a string", key);
	if (json_string_length(v) > max)
		return fbc_error_set(err, FBC_ELIMIT, where,
				     "field \"%s\" is longer than %zu bytes", key, max);
	if (strlen(json_string_value(v)) != json_string_length(v))
		return fbc_error_set(err, FBC_EINVAL, where, "field \"%s\" contains a NUL byte",
				     key);
	if (json_string_length(v) == 0) {
		if (required)
			return fbc_error_set(err, FBC_EINVAL, where, "field \"%s\" is empty", key);
		return 0;
	}
	*out = json_string_value(v);
	return 0;
}

static int check_keys(json_t *obj, const char *const *allowed, const char *where, fbc_error *err)
{
	const char *key;
	json_t *v;

	json_object_foreach(obj, key, v)
	{
		size_t i;

		(void)v;
		for (i = 0; allowed[i]; i++)
			if (strcmp(allowed[i], key) == 0)
				break;
		if (!allowed[i])
			return fbc_error_set(err, FBC_EINVAL, where, "unknown field \"%s\"", key);
	}
	return 0;
}

static int parse_catalog(fbc_resolve_request *req, json_t *c, size_t i, size_t *blobs,
			 fbc_error *err)
{
	static const char *const keys[] = {"name", "priority", "path", "fbc", NULL};
	char where[64];
	const char *name, *path;
	json_t *prio, *fbc;
	json_int_t p = 0;
	int rc;

	snprintf(where, sizeof(where), "catalogs[%zu]", i);
	if (!json_is_object(c))
		return fbc_error_set(err, FBC_EINVAL, where, "must be an object");
	if ((rc = check_keys(c, keys, where, err)) < 0)
		return rc;
	if ((rc = get_str(&name, c, "name", true, req->priv->lim.max_string, where, err)) < 0)
		return rc;
	if ((rc = get_str(&path, c, "path", false, req->priv->lim.max_string, where, err)) < 0)
		return rc;
	prio = json_object_get(c, "priority");
	if (prio && !json_is_null(prio)) {
		if (!json_is_integer(prio))
			return fbc_error_set(err, FBC_EINVAL, where, "priority must be an integer");
		p = json_integer_value(prio);
		if (p < -2147483647 - 1 || p > 2147483647)
			return fbc_error_set(err, FBC_EINVAL, where,
					     "priority is out of the int32 range");
	}
	fbc = json_object_get(c, "fbc");
	if (fbc && json_is_null(fbc))
		fbc = NULL;
	if (!!fbc == !!path)
		return fbc_error_set(err, FBC_EINVAL, where,
				     "exactly one of \"path\" and \"fbc\" must be given");
	if (fbc) {
		if (!json_is_array(fbc))
			return fbc_error_set(err, FBC_EINVAL, where,
					     "\"fbc\" must be an array of FBC blobs");
		*blobs += json_array_size(fbc);
		if (*blobs > req->priv->lim.max_blobs)
			return fbc_error_set(err, FBC_ELIMIT, where,
					     "more than %zu inline FBC blobs in the request",
					     req->priv->lim.max_blobs);
	}
	if ((rc = fbc_resolve_request_add_catalog(req, name, (int)p, path, err)) < 0)
		return rc;
	req->catalogs[req->n_catalogs - 1].fbc = fbc;
	return 0;
}

static int parse_installed(fbc_resolve_request *req, json_t *o, size_t i, fbc_error *err)
{
	static const char *const keys[] = {"package", "bundle", "version", NULL};
	char where[64];
	const char *pkg, *bundle, *version;
	size_t max = req->priv->lim.max_string;
	int rc;

	snprintf(where, sizeof(where), "installed[%zu]", i);
	if (!json_is_object(o))
		return fbc_error_set(err, FBC_EINVAL, where, "must be an object");
	if ((rc = check_keys(o, keys, where, err)) < 0 ||
	    (rc = get_str(&pkg, o, "package", true, max, where, err)) < 0 ||
	    (rc = get_str(&bundle, o, "bundle", true, max, where, err)) < 0 ||
	    (rc = get_str(&version, o, "version", true, max, where, err)) < 0)
		return rc;
	return fbc_resolve_request_add_installed(req, pkg, bundle, version, err);
}

static int parse_req(fbc_resolve_request *req, json_t *o, size_t i, fbc_error *err)
{
	static const char *const keys[] = {"package",	  "channel",	  "catalog",
					   "startingCSV", "versionRange", "upgradeConstraintPolicy",
					   NULL};
	char where[64];
	fbc_resolve_req r;
	const char *policy;
	size_t max = req->priv->lim.max_string;
	int rc;

	memset(&r, 0, sizeof(r));
	snprintf(where, sizeof(where), "requests[%zu]", i);
	if (!json_is_object(o))
		return fbc_error_set(err, FBC_EINVAL, where, "must be an object");
	if ((rc = check_keys(o, keys, where, err)) < 0 ||
	    (rc = get_str(&r.package, o, "package", true, max, where, err)) < 0 ||
	    (rc = get_str(&r.channel, o, "channel", false, max, where, err)) < 0 ||
	    (rc = get_str(&r.catalog, o, "catalog", false, max, where, err)) < 0 ||
	    (rc = get_str(&r.starting_csv, o, "startingCSV", false, max, where, err)) < 0 ||
	    (rc = get_str(&r.version_range, o, "versionRange", false, max, where, err)) < 0 ||
	    (rc = get_str(&policy, o, "upgradeConstraintPolicy", false, max, where, err)) < 0)
		return rc;
	if (policy) {
		if (strcmp(policy, "CatalogProvided") == 0)
			r.policy = FBC_RESOLVE_CATALOG_PROVIDED;
		else if (strcmp(policy, "SelfCertified") == 0)
			r.policy = FBC_RESOLVE_SELF_CERTIFIED;
		else
			return fbc_error_set(err, FBC_EINVAL, where,
					     "upgradeConstraintPolicy must be \"CatalogProvided\" "
					     "or \"SelfCertified\", not \"%s\"",
					     policy);
	}
	return fbc_resolve_request_add(req, &r, err);
}

int fbc_resolve_request_parse(fbc_resolve_request **out, json_t *body,
			      const fbc_resolve_limits *lim, fbc_error *err)
{
	static const char *const keys[] = {"semantics", "catalogs", "installed", "requests", NULL};
	fbc_resolve_request *req = NULL;
	fbc_resolve_semantics sem = FBC_RESOLVE_CLASSIC;
	json_t *a;
	const char *s;
	size_t i, blobs = 0;
	int rc;

	if (!json_is_object(body))
		return fbc_error_set(err, FBC_EINVAL, NULL, "the request must be a JSON object");
	if ((rc = check_keys(body, keys, "", err)) < 0)
		return rc;
	if ((rc = get_str(&s, body, "semantics", false, 64, "semantics", err)) < 0)
		return rc;
	if (s && fbc_resolve_semantics_parse(&sem, s) < 0)
		return fbc_error_set(err, FBC_EINVAL, "semantics",
				     "semantics must be \"classic\", \"v1\" or \"v1-deps\", not "
				     "\"%s\"",
				     s);
	if ((rc = fbc_resolve_request_create(&req, sem, err)) < 0)
		return rc;
	if (lim)
		req->priv->lim = *lim;
	req->priv->body = json_incref(body);

	a = json_object_get(body, "catalogs");
	if (!json_is_array(a) || json_array_size(a) == 0) {
		rc = fbc_error_set(err, FBC_EINVAL, "catalogs",
				   "\"catalogs\" must be a non-empty array");
		goto done;
	}
	for (i = 0; i < json_array_size(a); i++)
		if ((rc = parse_catalog(req, json_array_get(a, i), i, &blobs, err)) < 0)
			goto done;
	a = json_object_get(body, "installed");
	if (a && !json_is_null(a)) {
		if (!json_is_array(a)) {
			rc = fbc_error_set(err, FBC_EINVAL, "installed",
					   "\"installed\" must be an array");
			goto done;
		}
		for (i = 0; i < json_array_size(a); i++)
			if ((rc = parse_installed(req, json_array_get(a, i), i, err)) < 0)
				goto done;
	}
	a = json_object_get(body, "requests");
	if (!json_is_array(a)) {
		rc = fbc_error_set(err, FBC_EINVAL, "requests", "\"requests\" must be an array");
		goto done;
	}
	for (i = 0; i < json_array_size(a); i++)
		if ((rc = parse_req(req, json_array_get(a, i), i, err)) < 0)
			goto done;
	*out = req;
	req = NULL;
	rc = 0;
done:
	fbc_resolve_request_free(req);
	return rc;
}

int fbc_resolve_catalog_from_blobs(fbc_catalog **out, const json_t *blobs, const char *name,
				   fbc_diags *diags, fbc_error *err)
{
	fbc_catalog *cat = NULL;
	fbc_diags local;
	bool own_diags = false;
	char file[256];
	size_t i;
	int rc;

	if (!json_is_array(blobs))
		return fbc_error_set(err, FBC_EINVAL, name, "\"fbc\" must be an array");
	if (!diags) {
		if ((rc = fbc_diags_init(&local, 0)) < 0)
			return fbc_error_set(err, rc, NULL, "out of memory");
		diags = &local;
		own_diags = true;
	}
	if ((rc = fbc_catalog_create(&cat, NULL, err)) < 0)
		goto done;
	snprintf(file, sizeof(file), "%s.fbc", name ? name : "inline");
	for (i = 0; i < json_array_size(blobs); i++) {
		json_t *b = json_array_get(blobs, i);
		fbc_meta m;
		json_t *v;

		if (!json_is_object(b)) {
			rc = fbc_error_set(err, FBC_EINVAL, name, "fbc[%zu] is not a JSON object",
					   i);
			goto done;
		}
		v = json_object_get(b, "schema");
		if (!json_is_string(v) || json_string_length(v) == 0) {
			rc = fbc_error_set(err, FBC_EINVAL, name,
					   "fbc[%zu] has no \"schema\" string", i);
			goto done;
		}
		memset(&m, 0, sizeof(m));
		m.schema = json_string_value(v);
		v = json_object_get(b, "package");
		m.package = json_is_string(v) ? json_string_value(v) : "";
		v = json_object_get(b, "name");
		m.name = json_is_string(v) ? json_string_value(v) : "";
		m.blob = b;
		m.loc.file = file;
		m.loc.line = (int)i + 1; /* blob number, 1-based */
		if ((rc = fbc_catalog_add_meta(cat, &m, diags, err)) < 0)
			goto done;
	}
	if ((rc = fbc_catalog_link(cat, err)) < 0)
		goto done;
	*out = cat;
	cat = NULL;
	rc = 0;
done:
	fbc_catalog_free(cat);
	if (own_diags)
		fbc_diags_dispose(&local);
	return rc;
}

static int put_str(json_t *o, const char *k, const char *v)
{
	if (!v)
		return 0;
	return json_object_set_new(o, k, json_string(v)) == 0 ? 0 : FBC_ENOMEM;
}

int fbc_resolve_result_to_json(json_t **out, const fbc_resolve_result *res, bool stats,
			       fbc_error *err)
{
	json_t *o = json_object(), *a = NULL, *e = NULL;
	int rc = FBC_ENOMEM;
	size_t i;

	if (!o)
		goto done;
	if (json_object_set_new(o, "satisfiable", json_boolean(res->satisfiable)) < 0)
		goto done;
	if (res->satisfiable) {
		if (!(a = json_array()))
			goto done;
		for (i = 0; i < res->n_selected; i++) {
			const fbc_resolve_selected *s = &res->selected[i];

			if (!(e = json_object()))
				goto done;
			if (put_str(e, "bundle", s->bundle) || put_str(e, "package", s->package) ||
			    put_str(e, "version", s->version) ||
			    put_str(e, "catalog", s->catalog) ||
			    put_str(e, "channel", s->channel) ||
			    json_object_set_new(e, "installed", json_boolean(s->installed)) ||
			    json_array_append_new(a, e)) {
				e = NULL;
				goto done;
			}
			e = NULL;
		}
		if (json_object_set_new(o, "selected", a) < 0) {
			a = NULL;
			goto done;
		}
		if (!(a = json_array()))
			goto done;
		for (i = 0; i < res->n_steps; i++) {
			const fbc_resolve_step *s = &res->steps[i];

			if (!(e = json_object()))
				goto done;
			if (put_str(e, "bundle", s->bundle) || put_str(e, "package", s->package) ||
			    put_str(e, "version", s->version) ||
			    put_str(e, "catalog", s->catalog) ||
			    put_str(e, "channel", s->channel) ||
			    put_str(e, "replaces", s->replaces) ||
			    put_str(e, "reason", s->reason) || json_array_append_new(a, e)) {
				e = NULL;
				goto done;
			}
			e = NULL;
		}
		if (json_object_set_new(o, "steps", a) < 0) {
			a = NULL;
			goto done;
		}
		a = NULL;
	} else {
		if (put_str(o, "kind", res->kind) || put_str(o, "explanation", res->explanation))
			goto done;
		if (!(a = json_array()))
			goto done;
		for (i = 0; i < res->n_constraints; i++)
			if (json_array_append_new(a, json_string(res->constraints[i])) < 0)
				goto done;
		if (json_object_set_new(o, "constraints", a) < 0) {
			a = NULL;
			goto done;
		}
		a = NULL;
	}
	if (stats) {
		json_t *st = json_pack("{s:I,s:I,s:I}", "satCalls", (json_int_t)res->sat_calls,
				       "variables", (json_int_t)res->n_variables, "constraints",
				       (json_int_t)res->n_clauses_constraints);
		if (!st || json_object_set_new(o, "stats", st) < 0)
			goto done;
	}
	*out = o;
	o = NULL;
	rc = 0;
done:
	json_decref(e);
	json_decref(a);
	json_decref(o);
	if (rc < 0)
		fbc_error_set(err, rc, NULL, "out of memory");
	return rc;
}
