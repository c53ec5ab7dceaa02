/* Shared helpers for the load tests: temp trees and a meta collector. */
#ifndef FBC_TEST_LOAD_COMMON_H
#define FBC_TEST_LOAD_COMMON_H

#include "service/load/load.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_SEEN 4096

typedef struct seen {
	size_t n;
	char *rows[MAX_SEEN]; /* "file:line schema package name" */
	size_t packages;
	int stop_after; /* return an error after this many metas (0 = never) */
} seen;

static inline int collect(void *ctx, const fbc_meta *m, fbc_error *err)
{
	seen *s = ctx;
	char *row = NULL;

	if (strcmp(m->schema, "olm.package") == 0)
		s->packages++;
	if (s->n < MAX_SEEN) {
		if (asprintf(&row, "%s:%d %s %s %s", m->loc.file ? m->loc.file : "-", m->loc.line,
			     m->schema, m->package, m->name) < 0)
			return fbc_error_set(err, FBC_ENOMEM, NULL, "oom");
		s->rows[s->n] = row;
	}
	s->n++;
	if (s->stop_after > 0 && s->n >= (size_t)s->stop_after)
		return fbc_error_set(err, FBC_ECONFLICT, NULL, "stop requested");
	return 0;
}

static inline void seen_dispose(seen *s)
{
	for (size_t i = 0; i < s->n && i < MAX_SEEN; i++)
		free(s->rows[i]);
	memset(s, 0, sizeof(*s));
}

static inline char *make_tree(void)
{
	char tmpl[] = "/tmp/fbc-load-XXXXXX";
	char *d = mkdtemp(tmpl);

	assert_non_null(d);
	return strdup(d);
}

/* Write root/rel (creating parent directories). */
static inline void put_file(const char *root, const char *rel, const char *content)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	for (char *p = path + strlen(root) + 1; *p; p++) {
		if (*p == '/') {
			*p = 0;
			mkdir(path, 0755);
			*p = '/';
		}
	}
	f = fopen(path, "wb");
	assert_non_null(f);
	fwrite(content, 1, strlen(content), f);
	fclose(f);
}

static inline int rm_one(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	chmod(p, 0755);
	return remove(p);
}

static inline void rm_tree(char *root)
{
	nftw(root, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	free(root);
}

/* Find a finding by code; returns its index or -1. */
static inline int find_diag(const fbc_diags *d, const char *code)
{
	for (size_t i = 0; i < fbc_diags_count(d); i++)
		if (strcmp(fbc_diags_at(d, i)->code, code) == 0)
			return (int)i;
	return -1;
}

#endif
