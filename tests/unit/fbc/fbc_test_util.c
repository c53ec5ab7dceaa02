#include "fbc_test_util.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

void tcat_load(tcat *t, const char *jsonl)
{
	tcat_load_limits(t, jsonl, NULL);
}

void tcat_load_limits(tcat *t, const char *jsonl, const fbc_load_limits *lim)
{
	fbc_error err;
	const char *p = jsonl;
	int line = 0;

	fbc_error_init(&err);
	assert_int_equal(fbc_diags_init(&t->diags, 0), 0);
	assert_int_equal(fbc_catalog_create(&t->cat, lim, &err), 0);
	while (*p) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);
		json_error_t jerr;
		json_t *blob;
		fbc_meta m;

		line++;
		if (n == 0) {
			p += nl ? 1 : 0;
			continue;
		}
		blob = json_loadb(p, n, 0, &jerr);
		if (!blob)
			fail_msg("bad test JSON at line %d: %s: %.*s", line, jerr.text, (int)n, p);
		memset(&m, 0, sizeof(m));
		m.schema = json_string_value(json_object_get(blob, "schema"));
		m.package = json_string_value(json_object_get(blob, "package"));
		m.name = json_string_value(json_object_get(blob, "name"));
		m.schema = m.schema ? m.schema : "";
		m.package = m.package ? m.package : "";
		m.name = m.name ? m.name : "";
		m.blob = blob;
		m.loc.file = "t.json";
		m.loc.line = line;
		if (fbc_catalog_add_meta(t->cat, &m, &t->diags, &err) != 0)
			fail_msg("add_meta line %d: %s", line, err.message);
		json_decref(blob);
		p += n + (nl ? 1 : 0);
	}
	assert_int_equal(fbc_catalog_link(t->cat, &err), 0);
}

void tcat_validate(tcat *t, const char *jsonl, bool strict)
{
	fbc_validate_opts o = {.strict = strict};
	fbc_error err;

	tcat_load(t, jsonl);
	assert_int_equal(fbc_validate(t->cat, &o, &t->diags, &err), 0);
	fbc_diags_sort(&t->diags);
}

void tcat_dispose(tcat *t)
{
	fbc_catalog_free(t->cat);
	fbc_diags_dispose(&t->diags);
	t->cat = NULL;
}

size_t tcat_count(const tcat *t, const char *code)
{
	size_t i, n = 0;

	for (i = 0; i < fbc_diags_count(&t->diags); i++)
		n += strcmp(fbc_diags_at(&t->diags, i)->code, code) == 0;
	return n;
}

const fbc_diag *tcat_find(const tcat *t, const char *code)
{
	size_t i;

	for (i = 0; i < fbc_diags_count(&t->diags); i++) {
		if (strcmp(fbc_diags_at(&t->diags, i)->code, code) == 0)
			return fbc_diags_at(&t->diags, i);
	}
	return NULL;
}

void tcat_dump(const tcat *t)
{
	size_t i;

	for (i = 0; i < fbc_diags_count(&t->diags); i++) {
		const fbc_diag *d = fbc_diags_at(&t->diags, i);

		fprintf(stderr, "  %s %s:%d [%s/%s/%s] %s\n", d->code, d->file ? d->file : "-",
			d->line, d->package ? d->package : "", d->channel ? d->channel : "",
			d->bundle ? d->bundle : "", d->message);
	}
}

/* One line per record and finding, with everything decoding produces. */
void tcat_fingerprint(FILE *f, const fbc_catalog *cat, const fbc_diags *d)
{
	size_t i, k;

	for (i = 0; i < fbc_diags_count(d); i++) {
		const fbc_diag *g = fbc_diags_at(d, i);

		fprintf(f, "D %s %s:%d %s|%s|%s %s\n", g->code, g->file ? g->file : "-", g->line,
			g->package ? g->package : "-", g->channel ? g->channel : "-",
			g->bundle ? g->bundle : "-", g->message);
	}
	for (i = 0; i < cat->packages.len; i++) {
		const fbc_package *p = FBC_CATALOG_AT(cat->packages, fbc_package, i);

		fprintf(f, "P %s %s:%d %s %zu %s\n", p->name, p->loc.file, p->loc.line,
			p->default_channel, p->n_properties, p->icon_data ? p->icon_data : "-");
	}
	for (i = 0; i < cat->channels.len; i++) {
		const fbc_channel *c = FBC_CATALOG_AT(cat->channels, fbc_channel, i);

		fprintf(f, "C %s/%s %s:%d %zu\n", c->package, c->name, c->loc.file, c->loc.line,
			c->n_entries);
		for (k = 0; k < c->n_entries; k++)
			fprintf(f, " e %s %s %zu %s\n", c->entries[k].name, c->entries[k].replaces,
				c->entries[k].n_skips, c->entries[k].skip_range);
	}
	for (i = 0; i < cat->bundles.len; i++) {
		const fbc_bundle *b = FBC_CATALOG_AT(cat->bundles, fbc_bundle, i);

		fprintf(f, "B %s/%s %s:%d %s %s %d %zu %zu %zu %zu %s\n", b->package, b->name,
			b->loc.file, b->loc.line, b->version, b->release, b->has_semver,
			b->n_provided, b->n_required, b->n_package_reqs, b->n_bundle_objects,
			b->csv_json ? b->csv_json : "-");
		for (k = 0; k < b->n_properties; k++)
			fprintf(f, " p %s %s %d %s\n", b->properties[k].type,
				b->properties[k].value ? b->properties[k].value : "-",
				b->property_checks ? b->property_checks[k].state : 9,
				b->property_checks && b->property_checks[k].error
					? b->property_checks[k].error
					: "-");
		for (k = 0; k < b->n_provided; k++)
			fprintf(f, " g %s %s %s\n", b->provided[k].group, b->provided[k].version,
				b->provided[k].kind);
		for (k = 0; k < b->n_package_reqs; k++)
			fprintf(f, " r %s %s\n", b->package_reqs[k].package_name,
				b->package_reqs[k].version_range);
	}
	for (i = 0; i < cat->others.len; i++) {
		const fbc_other *o = FBC_CATALOG_AT(cat->others, fbc_other, i);

		fprintf(f, "O %s %s:%d %s\n", o->schema, o->loc.file, o->loc.line, o->blob);
	}
}

char *tcat_validate_print(fbc_catalog *cat, fbc_diags *diags)
{
	fbc_error err;
	char *text = NULL;
	size_t len = 0;
	FILE *f;

	fbc_error_init(&err);
	assert_int_equal(fbc_validate(cat, NULL, diags, &err), 0);
	f = open_memstream(&text, &len);
	assert_non_null(f);
	tcat_fingerprint(f, cat, diags);
	fclose(f);
	return text;
}
