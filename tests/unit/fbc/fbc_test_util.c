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
