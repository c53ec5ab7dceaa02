/* Parsers of .fbcd.yaml, config.yaml, ci.yaml and CODEOWNERS, and look-ups over them. */
#include "pipeline/checks/settings.h"
#include "service/base/tree.h"
#include "service/load/load.h"

#include <jansson.h>
#include <fnmatch.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define MAX_LIST 10000

static int parse_yaml(json_t **out, const char *file, const char *data, size_t len, fbc_error *err)
{
	fbc_load_limits lim;
	int rc;

	if (len > FBC_SETTINGS_MAX_BYTES)
		return fbc_error_set(err, FBC_ELIMIT, file,
				     "file is %zu bytes, over the limit of %u", len,
				     FBC_SETTINGS_MAX_BYTES);
	fbc_load_limits_default(&lim);
	lim.max_depth = 32;
	lim.max_alias_nodes = 1000;
	lim.max_string_bytes = 64 * 1024;
	rc = fbc_yaml_to_json(out, data, len, &lim, err);
	if (rc) {
		char msg[FBC_ERROR_MESSAGE_MAX];

		snprintf(msg, sizeof(msg), "not valid YAML: %s", err->message);
		return fbc_error_set(err, FBC_EPARSE, file, "%s", msg);
	}
	if (json_is_null(*out)) { /* an empty file: no settings */
		json_decref(*out);
		*out = json_object();
		if (!*out)
			return fbc_error_set(err, FBC_ENOMEM, file, "out of memory");
	}
	if (!json_is_object(*out)) {
		json_decref(*out);
		*out = NULL;
		return fbc_error_set(err, FBC_EINVAL, file, "the document is not a mapping");
	}
	return 0;
}

/* A list of strings (NULL or absent: empty). */
static int str_list(const char ***out, size_t *n, fbc_arena *a, const char *file, const char *field,
		    json_t *v, fbc_error *err)
{
	size_t i;
	json_t *x;
	const char **items;

	*out = NULL;
	*n = 0;
	if (!v || json_is_null(v))
		return 0;
	if (!json_is_array(v))
		return fbc_error_set(err, FBC_EINVAL, file, "%s: must be a list of strings", field);
	if (json_array_size(v) > MAX_LIST)
		return fbc_error_set(err, FBC_ELIMIT, file, "%s: more than %d items", field,
				     MAX_LIST);
	if (!(items = fbc_arena_calloc(a, json_array_size(v) + 1, sizeof(char *))))
		return fbc_error_set(err, FBC_ENOMEM, file, "out of memory");
	json_array_foreach(v, i, x)
	{
		if (!json_is_string(x))
			return fbc_error_set(err, FBC_EINVAL, file, "%s[%zu]: must be a string",
					     field, i);
		if (!(items[i] = fbc_arena_strdup(a, json_string_value(x))))
			return fbc_error_set(err, FBC_ENOMEM, file, "out of memory");
	}
	*out = items;
	*n = json_array_size(v);
	return 0;
}

static int opt_str(const char **out, fbc_arena *a, const char *file, const char *field, json_t *v,
		   fbc_error *err)
{
	if (!v || json_is_null(v))
		return 0;
	if (!json_is_string(v))
		return fbc_error_set(err, FBC_EINVAL, file, "%s: must be a string", field);
	if (!(*out = fbc_arena_strdup(a, json_string_value(v))))
		return fbc_error_set(err, FBC_ENOMEM, file, "out of memory");
	return 0;
}

static int check_regexes(const char *file, const char *field, const char **res, size_t n,
			 fbc_error *err)
{
	for (size_t i = 0; i < n; i++) {
		regex_t re;

		if (regcomp(&re, res[i], REG_EXTENDED | REG_NOSUB) != 0)
			return fbc_error_set(err, FBC_EINVAL, file, "%s[%zu]: not a regex: %s",
					     field, i, res[i]);
		regfree(&re);
	}
	return 0;
}

static const char *const check_ids[] = {"changes",   "permissions", "bundles", "catalogs",
					"templates", "graph",	    "crds",    "resolve",
					"policy",    NULL};

static bool known_check(const char *id)
{
	for (size_t i = 0; check_ids[i]; i++)
		if (strcmp(check_ids[i], id) == 0)
			return true;
	return false;
}

int fbc_settings_parse_fbcd(fbc_settings *out, fbc_arena *a, const char *file, const char *data,
			    size_t len, fbc_error *err)
{
	json_t *doc = NULL, *v, *x;
	fbc_settings s = *out;
	const char *key;
	size_t i;
	int rc;

	if ((rc = parse_yaml(&doc, file, data, len, err)) != 0)
		return rc;
	s.layout = FBC_LAYOUT_FBCD;
	s.n_catalogs = 0;
	v = json_object_get(doc, "catalogs");
	if (v && !json_is_array(v)) {
		rc = fbc_error_set(err, FBC_EINVAL, file, "catalogs: must be a list");
		goto done;
	}
	if (v && json_array_size(v) > 1000) {
		rc = fbc_error_set(err, FBC_ELIMIT, file, "catalogs: more than 1000 entries");
		goto done;
	}
	if (v && json_array_size(v) &&
	    !(s.catalogs = fbc_arena_calloc(a, json_array_size(v), sizeof(*s.catalogs)))) {
		rc = fbc_error_set(err, FBC_ENOMEM, file, "out of memory");
		goto done;
	}
	if (v)
		json_array_foreach(v, i, x)
		{
			char field[64];

			snprintf(field, sizeof(field), "catalogs[%zu].path", i);
			if (!json_is_object(x) || !json_is_string(json_object_get(x, "path"))) {
				rc = fbc_error_set(err, FBC_EINVAL, file, "%s: must be a string",
						   field);
				goto done;
			}
			if ((rc = opt_str(&s.catalogs[i].path, a, file, field,
					  json_object_get(x, "path"), err)) != 0)
				goto done;
			snprintf(field, sizeof(field), "catalogs[%zu].name", i);
			if ((rc = opt_str(&s.catalogs[i].name, a, file, field,
					  json_object_get(x, "name"), err)) != 0)
				goto done;
			s.n_catalogs++;
		}
	if ((rc = opt_str(&s.bundles, a, file, "bundles", json_object_get(doc, "bundles"), err)) ||
	    (rc = opt_str(&s.templates, a, file, "templates", json_object_get(doc, "templates"),
			  err)) ||
	    (rc = opt_str(&s.owners, a, file, "owners", json_object_get(doc, "owners"), err)))
		goto done;
	if ((v = json_object_get(doc, "checks")) && !json_is_null(v)) {
		if (!json_is_object(v)) {
			rc = fbc_error_set(err, FBC_EINVAL, file, "checks: must be a mapping");
			goto done;
		}
		s.n_severities = 0;
		json_object_foreach(v, key, x)
		{
			const char *sv = json_string_value(x);
			fbc_severity sev;

			if (!known_check(key)) {
				rc = fbc_error_set(err, FBC_EINVAL, file,
						   "checks.%s: unknown check", key);
				goto done;
			}
			if (json_is_false(x))
				sv = "off";
			if (!sv || !(strcmp(sv, "fail") == 0 || strcmp(sv, "warn") == 0 ||
				     strcmp(sv, "off") == 0 || strcmp(sv, "strict") == 0)) {
				rc = fbc_error_set(err, FBC_EINVAL, file,
						   "checks.%s: must be fail, warn, off or strict",
						   key);
				goto done;
			}
			sev = sv[0] == 'f'   ? FBC_SEV_FAIL
			      : sv[0] == 'w' ? FBC_SEV_WARN
			      : sv[1] == 'f' ? FBC_SEV_OFF
					     : FBC_SEV_STRICT;
			if (sev == FBC_SEV_STRICT && strcmp(key, "crds") != 0) {
				rc = fbc_error_set(err, FBC_EINVAL, file,
						   "checks.%s: strict applies to crds only", key);
				goto done;
			}
			if (s.n_severities < sizeof(s.severities) / sizeof(s.severities[0])) {
				s.severities[s.n_severities].id = fbc_arena_strdup(a, key);
				s.severities[s.n_severities++].sev = sev;
			}
		}
	}
	if ((v = json_object_get(doc, "waivers")) && !json_is_null(v)) {
		if (!json_is_array(v) || json_array_size(v) > 1000) {
			rc = fbc_error_set(err, FBC_EINVAL, file, "waivers: must be a list");
			goto done;
		}
		s.n_waivers = 0;
		s.waivers = fbc_arena_calloc(a, json_array_size(v) + 1, sizeof(fbc_waiver));
		if (!s.waivers) {
			rc = fbc_error_set(err, FBC_ENOMEM, file, "out of memory");
			goto done;
		}
		json_array_foreach(v, i, x)
		{
			fbc_waiver *w = &s.waivers[s.n_waivers];
			char field[64];

			snprintf(field, sizeof(field), "waivers[%zu].check", i);
			if (!json_is_object(x) || !json_is_string(json_object_get(x, "check")) ||
			    !known_check(json_string_value(json_object_get(x, "check")))) {
				rc = fbc_error_set(err, FBC_EINVAL, file, "%s: must name a check",
						   field);
				goto done;
			}
			w->check =
				fbc_arena_strdup(a, json_string_value(json_object_get(x, "check")));
			snprintf(field, sizeof(field), "waivers[%zu].packages", i);
			if ((rc = str_list(&w->packages, &w->n_packages, a, file, field,
					   json_object_get(x, "packages"), err)) ||
			    (rc = check_regexes(file, field, w->packages, w->n_packages, err)))
				goto done;
			s.n_waivers++;
		}
	}
	if ((rc = str_list(&s.allowed_registries, &s.n_allowed_registries, a, file,
			   "allowedRegistries", json_object_get(doc, "allowedRegistries"), err)) ||
	    (rc = str_list(&s.csv_metadata_only, &s.n_csv_metadata_only, a, file, "csvMetadataOnly",
			   json_object_get(doc, "csvMetadataOnly"), err)))
		goto done;
	*out = s;
done:
	json_decref(doc);
	return rc;
}

/* config.yaml `tests` names of operator-pipelines mapped to the check that owns the rule. */
static const char *test_to_check(const char *test)
{
	static const char *const map[][2] = {
		{"check_dangling_bundles", "graph"},
		{"check_operator_name", "bundles"},
		{"check_upgrade_graph_loop", "graph"},
		{"check_replaces_availability", "graph"},
		{"check_api_version_constraints", "bundles"},
		{"check_required_fields", "bundles"},
		{"check_bundle_images_in_fbc", "policy"},
		{"check_olm_bundle_object_in_fbc", "policy"},
	};

	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (strcmp(map[i][0], test) == 0)
			return map[i][1];
	return NULL;
}

int fbc_settings_parse_config(fbc_settings *out, fbc_arena *a, const char *file, const char *data,
			      size_t len, fbc_error *err)
{
	json_t *doc = NULL, *v, *x;
	fbc_settings s = *out;
	size_t i;
	int rc;

	if ((rc = parse_yaml(&doc, file, data, len, err)) != 0)
		return rc;
	if ((rc = str_list(&s.maintainers, &s.n_maintainers, a, file, "maintainers",
			   json_object_get(doc, "maintainers"), err)) ||
	    (rc = str_list(&s.allowed_registries, &s.n_allowed_registries, a, file,
			   "allowed_bundle_registries",
			   json_object_get(doc, "allowed_bundle_registries"), err)))
		goto done;
	if ((v = json_object_get(doc, "tests")) && !json_is_null(v)) {
		fbc_waiver *ws;
		size_t n = s.n_waivers;

		if (!json_is_array(v) || json_array_size(v) > 1000) {
			rc = fbc_error_set(err, FBC_EINVAL, file, "tests: must be a list");
			goto done;
		}
		if (!(ws = fbc_arena_calloc(a, s.n_waivers + json_array_size(v) + 1,
					    sizeof(fbc_waiver)))) {
			rc = fbc_error_set(err, FBC_ENOMEM, file, "out of memory");
			goto done;
		}
		if (s.n_waivers)
			memcpy(ws, s.waivers, s.n_waivers * sizeof(fbc_waiver));
		json_array_foreach(v, i, x)
		{
			const char *name = json_string_value(json_object_get(x, "name"));
			const char *check;
			char field[64];

			if (!json_is_object(x) || !name) {
				rc = fbc_error_set(err, FBC_EINVAL, file,
						   "tests[%zu].name: must be a string", i);
				goto done;
			}
			snprintf(field, sizeof(field), "tests[%zu].ignore_operators", i);
			if ((rc = str_list(&ws[n].packages, &ws[n].n_packages, a, file, field,
					   json_object_get(x, "ignore_operators"), err)) ||
			    (rc = check_regexes(file, field, ws[n].packages, ws[n].n_packages,
						err)))
				goto done;
			if (!(check = test_to_check(name)))
				continue; /* a test fbcd does not run */
			ws[n++].check = check;
		}
		s.waivers = ws;
		s.n_waivers = n;
	}
	*out = s;
done:
	json_decref(doc);
	return rc;
}

int fbc_settings_parse_ci(fbc_ci_yaml *out, fbc_arena *a, const char *file, const char *data,
			  size_t len, fbc_error *err)
{
	json_t *doc = NULL, *v, *fbc, *x;
	fbc_ci_yaml c = {0};
	size_t i;
	int rc;

	c.merge = true;
	if ((rc = parse_yaml(&doc, file, data, len, err)) != 0)
		return rc;
	if ((rc = str_list(&c.reviewers, &c.n_reviewers, a, file, "reviewers",
			   json_object_get(doc, "reviewers"), err)) ||
	    (rc = opt_str(&c.update_graph, a, file, "updateGraph",
			  json_object_get(doc, "updateGraph"), err)))
		goto done;
	if ((v = json_object_get(doc, "merge")) && json_is_false(v))
		c.merge = false;
	if ((fbc = json_object_get(doc, "fbc")) && json_is_object(fbc)) {
		c.fbc_enabled = json_is_true(json_object_get(fbc, "enabled"));
		v = json_object_get(fbc, "catalog_mapping");
		if (v && json_is_array(v) && json_array_size(v) <= 1000) {
			c.mappings =
				fbc_arena_calloc(a, json_array_size(v) + 1, sizeof(*c.mappings));
			if (!c.mappings) {
				rc = fbc_error_set(err, FBC_ENOMEM, file, "out of memory");
				goto done;
			}
			json_array_foreach(v, i, x)
			{
				char field[64];

				if (!json_is_object(x))
					continue;
				snprintf(field, sizeof(field), "fbc.catalog_mapping[%zu]", i);
				if ((rc = opt_str(&c.mappings[c.n_mappings].template_name, a, file,
						  field, json_object_get(x, "template_name"),
						  err)) ||
				    (rc = opt_str(&c.mappings[c.n_mappings].type, a, file, field,
						  json_object_get(x, "type"), err)) ||
				    (rc = str_list(&c.mappings[c.n_mappings].catalogs,
						   &c.mappings[c.n_mappings].n_catalogs, a, file,
						   field, json_object_get(x, "catalog_names"),
						   err)))
					goto done;
				c.n_mappings++;
			}
		}
	}
	*out = c;
done:
	json_decref(doc);
	return rc;
}

/* ---------------------------------------------------------------- CODEOWNERS */

/* Glob over a whole path: `**` crosses '/', `*` and `?` do not. *budget bounds the work
 * (nested stars backtrack): a pattern that needs more steps does not match. */
static bool glob_steps(const char *p, const char *s, int depth, long *budget)
{
	if (depth > 64 || --*budget < 0)
		return false;
	for (; *p; p++, s++) {
		if (--*budget < 0)
			return false;
		if (p[0] == '*' && p[1] == '*') {
			const char *rest = p + 2;

			if (*rest == '/')
				rest++;
			for (const char *t = s;; t++) {
				if (glob_steps(rest, t, depth + 1, budget))
					return true;
				if (!*t || *budget < 0)
					return false;
			}
		}
		if (*p == '*') {
			for (const char *t = s;; t++) {
				if (glob_steps(p + 1, t, depth + 1, budget))
					return true;
				if (!*t || *t == '/' || *budget < 0)
					return false;
			}
		}
		if (!*s)
			return false;
		if (*p == '?') {
			if (*s == '/')
				return false;
			continue;
		}
		if (*p == '\\' && p[1])
			p++;
		if (*p != *s)
			return false;
	}
	return *s == '\0';
}

static bool glob_path(const char *p, const char *s, int depth)
{
	long budget = 200000;

	return glob_steps(p, s, depth, &budget);
}

bool fbc_codeowners_match(const char *pattern, const char *path)
{
	char pat[1024];
	size_t n = strlen(pattern);
	bool anchored, dir_only = false;
	const char *p = pattern;

	if (n == 0 || n >= sizeof(pat))
		return false;
	if (*p == '/') {
		p++;
		n--;
	}
	memcpy(pat, p, n + 1);
	if (n && pat[n - 1] == '/') {
		pat[--n] = '\0';
		dir_only = true;
	}
	if (n == 0)
		return strcmp(pattern, "/") == 0 ? true : false;
	anchored = pattern[0] == '/' || strchr(pat, '/') != NULL;
	/* GitHub: "docs/<star>" owns the files of docs, not those of its subdirectories */
	if (n >= 2 && strcmp(pat + n - 2, "/*") == 0)
		return glob_path(pat, path, 0);
	/* the pattern matches the path itself or a directory holding it */
	for (const char *start = path;;) {
		for (const char *end = start;; end++) {
			if (*end == '/' || *end == '\0') {
				char prefix[4096];
				size_t pl = (size_t)(end - start);

				if (pl < sizeof(prefix)) {
					memcpy(prefix, start, pl);
					prefix[pl] = '\0';
					if ((!dir_only || *end == '/') && glob_path(pat, prefix, 0))
						return true;
				}
				if (*end == '\0')
					break;
			}
		}
		if (anchored)
			return false;
		start = strchr(start, '/');
		if (!start)
			return false;
		start++;
	}
}

/* The next blank-separated word of *cur (cut in place), or NULL. */
static char *next_token(char **cur)
{
	char *p = *cur, *start;

	while (*p == ' ' || *p == '\t' || *p == '\r')
		p++;
	if (!*p)
		return NULL;
	start = p;
	while (*p && *p != ' ' && *p != '\t' && *p != '\r')
		p++;
	if (*p)
		*p++ = '\0';
	*cur = p;
	return start;
}

int fbc_settings_parse_codeowners(fbc_settings *out, fbc_arena *a, const char *file,
				  const char *data, size_t len, fbc_error *err)
{
	fbc_vec rules;
	size_t pos = 0;
	int line = 0, rc = 0;

	if (len > FBC_SETTINGS_MAX_BYTES)
		return fbc_error_set(err, FBC_ELIMIT, file, "file is %zu bytes, over the limit",
				     len);
	fbc_vec_init(&rules, sizeof(fbc_owner_rule));
	while (pos < len) {
		size_t end = pos;
		char buf[4096], *tok, *cur;
		fbc_owner_rule r = {0};
		const char *owners[64];

		while (end < len && data[end] != '\n')
			end++;
		line++;
		if (end - pos >= sizeof(buf)) {
			rc = fbc_error_set(err, FBC_ELIMIT, file, "line %d: longer than %zu bytes",
					   line, sizeof(buf) - 1);
			goto done;
		}
		memcpy(buf, data + pos, end - pos);
		buf[end - pos] = '\0';
		pos = end + 1;
		{
			char *hash = strchr(buf, '#');

			if (hash && (hash == buf || hash[-1] != '\\'))
				*hash = '\0';
		}
		cur = buf;
		if (!(tok = next_token(&cur)))
			continue;
		r.pattern = fbc_arena_strdup(a, tok);
		r.line = line;
		while ((tok = next_token(&cur)) != NULL) {
			if (r.n_owners >= 64) {
				rc = fbc_error_set(err, FBC_ELIMIT, file, "line %d: over 64 owners",
						   line);
				goto done;
			}
			owners[r.n_owners++] = fbc_arena_strdup(a, tok[0] == '@' ? tok + 1 : tok);
		}
		if (r.n_owners) {
			if (!(r.owners = fbc_arena_calloc(a, r.n_owners, sizeof(char *)))) {
				rc = fbc_error_set(err, FBC_ENOMEM, file, "out of memory");
				goto done;
			}
			memcpy(r.owners, owners, r.n_owners * sizeof(char *));
		}
		if (rules.len >= MAX_LIST) {
			rc = fbc_error_set(err, FBC_ELIMIT, file, "more than %d rules", MAX_LIST);
			goto done;
		}
		{
			fbc_owner_rule *slot = fbc_vec_push(&rules);

			if (!slot || !r.pattern) {
				rc = fbc_error_set(err, FBC_ENOMEM, file, "out of memory");
				goto done;
			}
			*slot = r;
		}
	}
	{
		fbc_owner_rule *copy = NULL;

		if (rules.len && !(copy = fbc_arena_calloc(a, rules.len, sizeof(fbc_owner_rule)))) {
			rc = fbc_error_set(err, FBC_ENOMEM, file, "out of memory");
			goto done;
		}
		if (rules.len)
			memcpy(copy, rules.items, rules.len * sizeof(fbc_owner_rule));
		out->owner_rules = copy;
		out->n_owner_rules = rules.len;
		out->owners_file = fbc_arena_strdup(a, file);
	}
done:
	fbc_vec_dispose(&rules);
	return rc;
}

/* ---------------------------------------------------------------- look-ups */

fbc_severity fbc_settings_severity(const fbc_settings *s, const char *check)
{
	for (size_t i = 0; i < s->n_severities; i++)
		if (s->severities[i].id && strcmp(s->severities[i].id, check) == 0)
			return s->severities[i].sev;
	return FBC_SEV_DEFAULT;
}

bool fbc_settings_waived(const fbc_settings *s, const char *check, const char *package)
{
	if (!package)
		return false;
	for (size_t i = 0; i < s->n_waivers; i++) {
		const fbc_waiver *w = &s->waivers[i];

		if (!w->check || strcmp(w->check, check) != 0)
			continue;
		for (size_t k = 0; k < w->n_packages; k++) {
			regex_t re;
			bool m;

			if (regcomp(&re, w->packages[k], REG_EXTENDED | REG_NOSUB) != 0)
				continue;
			m = regexec(&re, package, 0, NULL, 0) == 0;
			regfree(&re);
			if (m)
				return true;
		}
	}
	return false;
}

const fbc_owner_rule *fbc_settings_owners_of(const fbc_settings *s, const char *path)
{
	for (size_t i = s->n_owner_rules; i-- > 0;)
		if (fbc_codeowners_match(s->owner_rules[i].pattern, path))
			return &s->owner_rules[i];
	return NULL;
}

static bool glob_name(const char *p, const char *s)
{
	return fnmatch(p, s, 0) == 0;
}

bool fbc_settings_csv_metadata_only(const fbc_settings *s, const char *name)
{
	for (size_t i = 0; i < s->n_csv_metadata_only; i++)
		if (glob_name(s->csv_metadata_only[i], name))
			return true;
	if (s->csv_metadata_from_v417 && name[0] == 'v') {
		/* v<major>.<minor>: 4.17 and later */
		char *end;
		long major = strtol(name + 1, &end, 10), minor;

		if (end == name + 1 || *end != '.')
			return false;
		minor = strtol(end + 1, &end, 10);
		if (*end != '\0')
			return false;
		return major > 4 || (major == 4 && minor >= 17);
	}
	return false;
}

bool fbc_login_in(const char *login, const char *const *list, size_t n)
{
	if (!login || !*login)
		return false;
	for (size_t i = 0; i < n; i++)
		if (list[i] && strcasecmp(list[i], login) == 0)
			return true;
	return false;
}

/* "{dir}" in pattern replaced by dir (malloc'd). */
static char *catalog_name(const char *pattern, const char *dir)
{
	const char *at;
	char *out;
	size_t n;

	if (!pattern)
		return strdup(dir);
	at = strstr(pattern, "{dir}");
	if (!at)
		return strdup(pattern);
	n = strlen(pattern) - 5 + strlen(dir);
	if (!(out = malloc(n + 1)))
		return NULL;
	snprintf(out, n + 1, "%.*s%s%s", (int)(at - pattern), pattern, dir, at + 5);
	return out;
}

static int catalog_visit(const char *dir, const char *pattern, fbc_settings_catalog_fn fn,
			 void *ctx, fbc_error *err)
{
	const char *base = strrchr(dir, '/');
	char *name = catalog_name(pattern, base ? base + 1 : dir);
	int rc;

	if (!name)
		return fbc_error_set(err, FBC_ENOMEM, dir, "out of memory");
	rc = fn(dir, name, ctx, err);
	free(name);
	return rc;
}

int fbc_settings_catalog_dirs(const fbc_settings *s, fbc_tree *t, fbc_settings_catalog_fn fn,
			      void *ctx, fbc_error *err)
{
	int rc = 0;

	for (size_t i = 0; i < s->n_catalogs && rc == 0; i++) {
		const char *glob = s->catalogs[i].path;
		const char *star = strchr(glob, '*');
		fbc_vec v;
		char *parent;

		if (!star) {
			fbc_tree_entry e = {0};
			fbc_error e2;

			if (fbc_tree_stat(t, &e, glob, &e2) == 0 && e.kind == FBC_TREE_DIR)
				rc = catalog_visit(glob, s->catalogs[i].name, fn, ctx, err);
			fbc_tree_entry_dispose(&e);
			continue;
		}
		if (strcmp(star, "*") != 0 || (star != glob && star[-1] != '/'))
			continue; /* only a trailing "/<star>" component is supported */
		parent = strndup(glob, star == glob ? 0 : (size_t)(star - glob - 1));
		if (!parent)
			return fbc_error_set(err, FBC_ENOMEM, glob, "out of memory");
		fbc_vec_init(&v, sizeof(fbc_tree_entry));
		if (fbc_tree_list(t, &v, parent, err) == 0) {
			fbc_tree_entries_sort(&v);
			for (size_t k = 0; k < v.len && rc == 0; k++) {
				fbc_tree_entry *e = FBC_VEC_AT(&v, fbc_tree_entry, k);
				char *p;

				if (e->kind != FBC_TREE_DIR)
					continue;
				if (!(p = fbc_tree_join(parent, e->name)))
					rc = fbc_error_set(err, FBC_ENOMEM, glob, "out of memory");
				else
					rc = catalog_visit(p, s->catalogs[i].name, fn, ctx, err);
				free(p);
			}
		} else {
			fbc_error_init(err); /* no such directory: no catalog */
		}
		fbc_tree_entries_dispose(&v);
		free(parent);
	}
	return rc;
}
