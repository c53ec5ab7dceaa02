/*
 * Ingest of a linked catalog as a new revision (see fbc_db_ingest in db.h).
 *
 * Everything that does not need the database (canonical render, digest,
 * the COPY text of every table) is built before the transaction opens, so
 * the catalog's row lock is held only for the COPY itself. The revision id
 * comes from the sequence first (a gap when the content turns out known).
 */
#include "db/internal.h"
#include "service/fbc/render.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define COPY_CHUNK (1u << 20)

enum {
	T_BLOBS,
	T_PACKAGES,
	T_ICONS,
	T_CHANNELS,
	T_ENTRIES,
	T_EDGES,
	T_BUNDLES,
	T_PROPS,
	T_PROVIDED,
	T_REQUIRED,
	T_PKGREQS,
	T_RELATED,
	T_DEPRECATIONS,
	T_OTHERS,
	T_COUNT
};

/* Constant COPY statements (no input in them). */
static const char *const copy_sql[T_COUNT] = {
	"COPY blobs (revision_id, seq, schema, package, name, file, line, blob) FROM STDIN",
	"COPY packages (revision_id, name, default_channel, description, properties, "
	"deprecation, file, line) FROM STDIN",
	"COPY package_icons (revision_id, package, media_type, data) FROM STDIN",
	"COPY channels (revision_id, package, name, head, n_entries, properties, deprecation, "
	"file, line) FROM STDIN",
	"COPY channel_entries (revision_id, package, channel, position, bundle, replaces, skips, "
	"skip_range) FROM STDIN",
	"COPY upgrade_edges (revision_id, package, channel, from_bundle, to_bundle, kind) FROM "
	"STDIN",
	"COPY bundles (revision_id, package, name, image, version, release, csv_json, "
	"deprecation, file, line) FROM STDIN",
	"COPY bundle_properties (revision_id, package, bundle, position, type, value) FROM STDIN",
	"COPY provided_gvks (revision_id, package, bundle, grp, version, kind) FROM STDIN",
	"COPY required_gvks (revision_id, package, bundle, grp, version, kind) FROM STDIN",
	"COPY package_requirements (revision_id, package, bundle, required_package, "
	"version_range) FROM STDIN",
	"COPY related_images (revision_id, package, bundle, position, name, image) FROM STDIN",
	"COPY deprecations (revision_id, package, schema, name, message) FROM STDIN",
	"COPY others (revision_id, package, schema, name, blob, file, line) FROM STDIN",
};

typedef struct ingest {
	const fbc_catalog *cat;
	char rev_id[24];
	fbc_buf content;
	fbc_buf t[T_COUNT];
	fbc_buf tmp; /* scratch JSON */
	long n_blobs, n_entries, n_edges, n_deprecations, n_others, n_channels, n_bundles,
		n_packages;
} ingest;

static int oom(fbc_error *err)
{
	return fbc_error_set(err, FBC_ENOMEM, "ingest", "out of memory building the revision");
}

/* Row helpers: start a row with the revision id, add columns, end it. */
static int row_start(ingest *g, int t)
{
	return fbc_buf_puts(&g->t[t], g->rev_id);
}

static int col(ingest *g, int t, const char *s)
{
	int rc = fbc_buf_putc(&g->t[t], '\t');

	return rc ? rc : db_copy_str(&g->t[t], s);
}

static int col_n(ingest *g, int t, const char *s, size_t n)
{
	int rc = fbc_buf_putc(&g->t[t], '\t');

	return rc ? rc : db_copy_text(&g->t[t], s, n);
}

static int col_opt(ingest *g, int t, const char *s) /* "" -> NULL */
{
	return col(g, t, s && *s ? s : NULL);
}

static int col_int(ingest *g, int t, long v)
{
	return fbc_buf_printf(&g->t[t], "\t%ld", v);
}

static int row_end(ingest *g, int t)
{
	return fbc_buf_putc(&g->t[t], '\n');
}

static int props_json(fbc_buf *b, const fbc_property *p, size_t n)
{
	int rc;

	fbc_buf_reset(b);
	if ((rc = fbc_buf_putc(b, '[')))
		return rc;
	for (size_t i = 0; i < n; i++) {
		if ((i && (rc = fbc_buf_putc(b, ','))) || (rc = fbc_buf_puts(b, "{\"type\":")) ||
		    (rc = fbc_buf_put_json_string(b, p[i].type, strlen(p[i].type))) ||
		    (rc = fbc_buf_puts(b, ",\"value\":")) ||
		    (rc = p[i].value ? fbc_buf_append(b, p[i].value, p[i].value_len)
				     : fbc_buf_puts(b, "null")) ||
		    (rc = fbc_buf_putc(b, '}')))
			return rc;
	}
	return fbc_buf_putc(b, ']');
}

static const char *deprecation_of(const fbc_package *pkg, const char *schema, const char *name)
{
	if (!pkg->deprecation)
		return NULL;
	for (size_t i = 0; i < pkg->deprecation->n_entries; i++) {
		const fbc_deprecation_entry *e = &pkg->deprecation->entries[i];

		if (strcmp(e->schema, schema) == 0 && strcmp(e->name ? e->name : "", name) == 0)
			return e->message;
	}
	return NULL;
}

/* ---- blobs, from the canonical render ---- */

static const fbc_loc *blob_loc(const fbc_catalog *cat, const char *schema, const char *package,
			       const char *name, const char *line, size_t len)
{
	const fbc_package *pkg = fbc_catalog_package(cat, *package ? package : name);

	if (strcmp(schema, "olm.package") == 0)
		return pkg ? &pkg->loc : NULL;
	if (strcmp(schema, "olm.channel") == 0) {
		const fbc_channel *ch = pkg ? fbc_package_channel(pkg, name) : NULL;

		return ch ? &ch->loc : NULL;
	}
	if (strcmp(schema, "olm.bundle") == 0) {
		const fbc_bundle *b = pkg ? fbc_package_bundle(pkg, name) : NULL;

		return b ? &b->loc : NULL;
	}
	if (strcmp(schema, "olm.deprecations") == 0)
		return pkg && pkg->deprecation ? &pkg->deprecation->loc : NULL;
	/* Other schemas: find the blob with these exact bytes. */
	for (size_t i = 0; i < cat->others.len; i++) {
		const fbc_other *o = FBC_CATALOG_AT(cat->others, fbc_other, i);

		if (o->blob_len == len && memcmp(o->blob, line, len) == 0)
			return &o->loc;
	}
	return NULL;
}

static int on_blob(void *ctx, const char *data, size_t len, fbc_error *err)
{
	ingest *g = ctx;
	json_t *j = NULL;
	json_error_t jerr;
	const char *schema, *package, *name;
	const fbc_loc *loc;
	int rc = 0;

	if ((rc = fbc_buf_append(&g->content, data, len)))
		return fbc_error_set(err, rc, "ingest", "catalog render exceeds the size limit");
	len--; /* the newline */
	if (!(j = json_loadb(data, len, 0, &jerr))) {
		rc = fbc_error_set(err, FBC_EINTERNAL, "ingest", "render produced bad JSON: %s",
				   jerr.text);
		goto done;
	}
	schema = json_string_value(json_object_get(j, "schema"));
	package = json_string_value(json_object_get(j, "package"));
	name = json_string_value(json_object_get(j, "name"));
	schema = schema ? schema : "";
	package = package ? package : "";
	name = name ? name : "";
	loc = blob_loc(g->cat, schema, package, name, data, len);
	/* catalogd indexes an olm.package blob under its own name. */
	if (!*package && strcmp(schema, "olm.package") == 0)
		package = name;
	if ((rc = row_start(g, T_BLOBS)) || (rc = col_int(g, T_BLOBS, g->n_blobs)) ||
	    (rc = col(g, T_BLOBS, schema)) || (rc = col(g, T_BLOBS, package)) ||
	    (rc = col(g, T_BLOBS, name)) || (rc = col(g, T_BLOBS, loc ? loc->file : NULL)) ||
	    (rc = col_int(g, T_BLOBS, loc ? loc->line : 0)) ||
	    (rc = col_n(g, T_BLOBS, data, len)) || (rc = row_end(g, T_BLOBS))) {
		rc = oom(err);
		goto done;
	}
	g->n_blobs++;
done:
	json_decref(j);
	return rc;
}

/* ---- typed rows ---- */

static const char *channel_head(const fbc_channel *ch)
{
	/* The entry no other entry replaces or skips (validated: exactly one). */
	for (size_t i = 0; i < ch->n_entries; i++) {
		const char *n = ch->entries[i].name;
		bool replaced = false;

		for (size_t k = 0; k < ch->n_entries && !replaced; k++) {
			const fbc_channel_entry *e = &ch->entries[k];

			if (strcmp(e->replaces, n) == 0)
				replaced = true;
			for (size_t s = 0; s < e->n_skips && !replaced; s++)
				if (strcmp(e->skips[s], n) == 0)
					replaced = true;
		}
		if (!replaced)
			return n;
	}
	return NULL;
}

static int edge(ingest *g, const fbc_channel *ch, const char *from, const char *to,
		const char *kind)
{
	int rc;

	if ((rc = row_start(g, T_EDGES)) || (rc = col(g, T_EDGES, ch->package)) ||
	    (rc = col(g, T_EDGES, ch->name)) || (rc = col(g, T_EDGES, from)) ||
	    (rc = col(g, T_EDGES, to)) || (rc = col(g, T_EDGES, kind)) ||
	    (rc = row_end(g, T_EDGES)))
		return rc;
	g->n_edges++;
	return 0;
}

static int add_channel(ingest *g, const fbc_package *pkg, const fbc_channel *ch, fbc_error *err)
{
	int rc = 0;

	if ((rc = props_json(&g->tmp, ch->properties, ch->n_properties)) ||
	    (rc = row_start(g, T_CHANNELS)) || (rc = col(g, T_CHANNELS, pkg->name)) ||
	    (rc = col(g, T_CHANNELS, ch->name)) || (rc = col(g, T_CHANNELS, channel_head(ch))) ||
	    (rc = col_int(g, T_CHANNELS, (long)ch->n_entries)) ||
	    (rc = col_n(g, T_CHANNELS, g->tmp.data, g->tmp.len)) ||
	    (rc = col(g, T_CHANNELS, deprecation_of(pkg, "olm.channel", ch->name))) ||
	    (rc = col(g, T_CHANNELS, ch->loc.file)) ||
	    (rc = col_int(g, T_CHANNELS, ch->loc.line)) || (rc = row_end(g, T_CHANNELS)))
		return oom(err);
	g->n_channels++;
	for (size_t i = 0; i < ch->n_entries; i++) {
		const fbc_channel_entry *e = &ch->entries[i];

		fbc_buf_reset(&g->tmp);
		rc = fbc_buf_putc(&g->tmp, '[');
		for (size_t s = 0; !rc && s < e->n_skips; s++)
			rc = (s ? fbc_buf_putc(&g->tmp, ',') : 0) ||
			     fbc_buf_put_json_string(&g->tmp, e->skips[s], strlen(e->skips[s]));
		if (rc || (rc = fbc_buf_putc(&g->tmp, ']')) || (rc = row_start(g, T_ENTRIES)) ||
		    (rc = col(g, T_ENTRIES, pkg->name)) || (rc = col(g, T_ENTRIES, ch->name)) ||
		    (rc = col_int(g, T_ENTRIES, (long)i)) || (rc = col(g, T_ENTRIES, e->name)) ||
		    (rc = col_opt(g, T_ENTRIES, e->replaces)) ||
		    (rc = col_n(g, T_ENTRIES, g->tmp.data, g->tmp.len)) ||
		    (rc = col_opt(g, T_ENTRIES, e->skip_range)) || (rc = row_end(g, T_ENTRIES)))
			return oom(err);
		g->n_entries++;
		if (*e->replaces && (rc = edge(g, ch, e->replaces, e->name, "replaces")))
			return oom(err);
		for (size_t s = 0; s < e->n_skips; s++)
			if (*e->skips[s] && (rc = edge(g, ch, e->skips[s], e->name, "skips")))
				return oom(err);
		if (*e->skip_range) {
			fbc_semver_range *r = NULL;
			fbc_error ignored;

			/* An unparsable range was reported by validation; no edges. */
			if (fbc_semver_range_parse_blang(&r, e->skip_range, &ignored) != 0)
				continue;
			for (size_t k = 0; k < ch->n_entries && !rc; k++) {
				const fbc_bundle *b = ch->entries[k].bundle;

				if (k != i && b && b->has_semver &&
				    fbc_semver_range_contains(r, &b->semver))
					rc = edge(g, ch, ch->entries[k].name, e->name, "skipRange");
			}
			fbc_semver_range_free(r);
			if (rc)
				return oom(err);
		}
	}
	return 0;
}

static int add_gvks(ingest *g, int t, const fbc_bundle *b, const fbc_gvk *v, size_t n)
{
	int rc = 0;

	for (size_t i = 0; i < n && !rc; i++)
		if ((rc = row_start(g, t)) || (rc = col(g, t, b->package)) ||
		    (rc = col(g, t, b->name)) || (rc = col(g, t, v[i].group)) ||
		    (rc = col(g, t, v[i].version)) || (rc = col(g, t, v[i].kind)))
			break;
		else
			rc = row_end(g, t);
	return rc;
}

static int add_bundle(ingest *g, const fbc_package *pkg, const fbc_bundle *b, fbc_error *err)
{
	int rc = 0;

	if ((rc = row_start(g, T_BUNDLES)) || (rc = col(g, T_BUNDLES, pkg->name)) ||
	    (rc = col(g, T_BUNDLES, b->name)) || (rc = col_opt(g, T_BUNDLES, b->image)) ||
	    (rc = col_opt(g, T_BUNDLES, b->version)) || (rc = col_opt(g, T_BUNDLES, b->release)) ||
	    (rc = col(g, T_BUNDLES, b->csv_json)) ||
	    (rc = col(g, T_BUNDLES, deprecation_of(pkg, "olm.bundle", b->name))) ||
	    (rc = col(g, T_BUNDLES, b->loc.file)) || (rc = col_int(g, T_BUNDLES, b->loc.line)) ||
	    (rc = row_end(g, T_BUNDLES)))
		return oom(err);
	g->n_bundles++;
	for (size_t i = 0; i < b->n_properties; i++) {
		const fbc_property *p = &b->properties[i];

		if ((rc = row_start(g, T_PROPS)) || (rc = col(g, T_PROPS, pkg->name)) ||
		    (rc = col(g, T_PROPS, b->name)) || (rc = col_int(g, T_PROPS, (long)i)) ||
		    (rc = col(g, T_PROPS, p->type)) ||
		    (rc = p->value ? col_n(g, T_PROPS, p->value, p->value_len)
				   : col(g, T_PROPS, NULL)) ||
		    (rc = row_end(g, T_PROPS)))
			return oom(err);
	}
	if (add_gvks(g, T_PROVIDED, b, b->provided, b->n_provided) ||
	    add_gvks(g, T_REQUIRED, b, b->required, b->n_required))
		return oom(err);
	for (size_t i = 0; i < b->n_package_reqs; i++)
		if ((rc = row_start(g, T_PKGREQS)) || (rc = col(g, T_PKGREQS, pkg->name)) ||
		    (rc = col(g, T_PKGREQS, b->name)) ||
		    (rc = col(g, T_PKGREQS, b->package_reqs[i].package_name)) ||
		    (rc = col(g, T_PKGREQS, b->package_reqs[i].version_range)) ||
		    (rc = row_end(g, T_PKGREQS)))
			return oom(err);
	for (size_t i = 0; i < b->n_related_images; i++)
		if ((rc = row_start(g, T_RELATED)) || (rc = col(g, T_RELATED, pkg->name)) ||
		    (rc = col(g, T_RELATED, b->name)) || (rc = col_int(g, T_RELATED, (long)i)) ||
		    (rc = col(g, T_RELATED, b->related_images[i].name)) ||
		    (rc = col(g, T_RELATED, b->related_images[i].image)) ||
		    (rc = row_end(g, T_RELATED)))
			return oom(err);
	return 0;
}

static int add_other(ingest *g, const fbc_other *o, fbc_error *err)
{
	int rc;

	if ((rc = row_start(g, T_OTHERS)) || (rc = col(g, T_OTHERS, o->package)) ||
	    (rc = col(g, T_OTHERS, o->schema)) || (rc = col(g, T_OTHERS, o->name)) ||
	    (rc = col_n(g, T_OTHERS, o->blob, o->blob_len)) ||
	    (rc = col(g, T_OTHERS, o->loc.file)) || (rc = col_int(g, T_OTHERS, o->loc.line)) ||
	    (rc = row_end(g, T_OTHERS)))
		return oom(err);
	g->n_others++;
	return 0;
}

static int add_package(ingest *g, const fbc_package *pkg, fbc_error *err)
{
	int rc = 0;

	if ((rc = props_json(&g->tmp, pkg->properties, pkg->n_properties)) ||
	    (rc = row_start(g, T_PACKAGES)) || (rc = col(g, T_PACKAGES, pkg->name)) ||
	    (rc = col(g, T_PACKAGES, pkg->default_channel)) ||
	    (rc = col_opt(g, T_PACKAGES, pkg->description)) ||
	    (rc = col_n(g, T_PACKAGES, g->tmp.data, g->tmp.len)) ||
	    (rc = col(g, T_PACKAGES, deprecation_of(pkg, "olm.package", ""))) ||
	    (rc = col(g, T_PACKAGES, pkg->loc.file)) ||
	    (rc = col_int(g, T_PACKAGES, pkg->loc.line)) || (rc = row_end(g, T_PACKAGES)))
		return oom(err);
	g->n_packages++;
	if (pkg->icon_data && pkg->icon_mediatype) {
		unsigned char *bin = NULL;
		size_t n = 0;

		/* Icons are stored decoded; one that is not base64 was reported by
		 * validation and is kept as its text. */
		if (db_base64_decode(&bin, &n, pkg->icon_data) == FBC_ENOMEM)
			return oom(err);
		const unsigned char *p = bin ? bin : (const unsigned char *)pkg->icon_data;
		size_t len = bin ? n : strlen(pkg->icon_data);

		rc = row_start(g, T_ICONS) || col(g, T_ICONS, pkg->name) ||
		     col(g, T_ICONS, pkg->icon_mediatype) ||
		     fbc_buf_puts(&g->t[T_ICONS], "\t\\\\x");
		for (size_t i = 0; !rc && i < len; i++)
			rc = fbc_buf_printf(&g->t[T_ICONS], "%02x", p[i]);
		free(bin);
		if (rc || row_end(g, T_ICONS))
			return oom(err);
	}
	for (size_t i = 0; i < pkg->n_channels; i++)
		if ((rc = add_channel(g, pkg, pkg->channels[i], err)))
			return rc;
	for (size_t i = 0; i < pkg->n_bundles; i++)
		if ((rc = add_bundle(g, pkg, pkg->bundles[i], err)))
			return rc;
	for (size_t i = 0; i < pkg->n_others; i++)
		if ((rc = add_other(g, pkg->others[i], err)))
			return rc;
	if (pkg->deprecation) {
		for (size_t i = 0; i < pkg->deprecation->n_entries; i++) {
			const fbc_deprecation_entry *e = &pkg->deprecation->entries[i];

			if ((rc = row_start(g, T_DEPRECATIONS)) ||
			    (rc = col(g, T_DEPRECATIONS, pkg->name)) ||
			    (rc = col(g, T_DEPRECATIONS, e->schema)) ||
			    (rc = col(g, T_DEPRECATIONS, e->name ? e->name : "")) ||
			    (rc = col(g, T_DEPRECATIONS, e->message)) ||
			    (rc = row_end(g, T_DEPRECATIONS)))
				return oom(err);
			g->n_deprecations++;
		}
	}
	return 0;
}

static int build_rows(ingest *g, fbc_error *err)
{
	int rc;

	for (size_t i = 0; i < g->cat->n_sorted_packages; i++)
		if ((rc = add_package(g, g->cat->sorted_packages[i], err)))
			return rc;
	for (size_t i = 0; i < g->cat->others.len; i++) {
		const fbc_other *o = FBC_CATALOG_AT(g->cat->others, fbc_other, i);

		if ((!o->package || !*o->package) && (rc = add_other(g, o, err)))
			return rc;
	}
	return 0;
}

static int copy_table(fbc_db_conn *c, int t, const fbc_buf *b, fbc_error *err)
{
	PGresult *res = NULL;
	int rc = 0;

	if (b->len == 0)
		return 0;
	res = PQexec(c->pg, copy_sql[t]);
	if (PQresultStatus(res) != PGRES_COPY_IN) {
		rc = db_pg_error(err, c->pg, res, "ingest");
		goto done;
	}
	PQclear(res);
	res = NULL;
	for (size_t off = 0; off < b->len; off += COPY_CHUNK) {
		size_t n = b->len - off < COPY_CHUNK ? b->len - off : COPY_CHUNK;

		if (PQputCopyData(c->pg, b->data + off, (int)n) != 1) {
			rc = db_pg_error(err, c->pg, NULL, "ingest");
			goto done;
		}
	}
	if (PQputCopyEnd(c->pg, NULL) != 1) {
		rc = db_pg_error(err, c->pg, NULL, "ingest");
		goto done;
	}
	res = PQgetResult(c->pg);
	if (PQresultStatus(res) != PGRES_COMMAND_OK)
		rc = db_pg_error(err, c->pg, res, "ingest");
	/* Drain: COPY yields exactly one result, then NULL. */
	for (PGresult *r; (r = PQgetResult(c->pg));)
		PQclear(r);
done:
	PQclear(res);
	return rc;
}

static const db_stmt st_nextval = {"ingest_nextval", "SELECT nextval('revisions_id_seq')", 0};
static const db_stmt st_lock = {"ingest_lock", "SELECT id FROM catalogs WHERE name = $1 FOR UPDATE",
				1};
static const db_stmt st_lookup = {
	"ingest_lookup",
	"SELECT r.id FROM catalogs c LEFT JOIN revisions r ON r.catalog_id = c.id AND "
	"r.digest = $2 WHERE c.name = $1",
	2};
static const db_stmt st_same = {
	"ingest_same", "SELECT id FROM revisions WHERE catalog_id = $1 AND digest = $2", 2};
static const db_stmt st_insert = {
	"ingest_insert",
	"INSERT INTO revisions (id, catalog_id, number, digest, n_packages, n_channels, "
	"n_bundles, n_entries, n_edges, n_deprecations, n_others, n_blobs, n_bytes) "
	"SELECT $1, c.id, c.next_revision, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12 "
	"FROM catalogs c WHERE c.id = $2",
	12};
static const db_stmt st_content = {
	"ingest_content", "INSERT INTO revision_content (revision_id, content) VALUES ($1, $2)", 2};
static const db_stmt st_current = {
	"ingest_current",
	"UPDATE catalogs SET current_revision_id = $2, updated_at = now(), "
	"next_revision = next_revision + $3 WHERE id = $1",
	3};
static const db_stmt st_revnum = {"ingest_revnum", "SELECT number FROM revisions WHERE id = $1", 1};

static int begin(fbc_db *db, fbc_db_conn *c, fbc_error *err)
{
	int rc = db_exec_simple(c, "BEGIN", err);

	/* A pooled connection may have died with the server: retry once. */
	if (rc == FBC_EUNAVAIL && PQstatus(c->pg) == CONNECTION_BAD &&
	    (rc = db_conn_reset(db, c, err)) == 0)
		rc = db_exec_simple(c, "BEGIN", err);
	return rc;
}

static void ingest_dispose(ingest *g)
{
	fbc_buf_dispose(&g->content);
	fbc_buf_dispose(&g->tmp);
	for (int t = 0; t < T_COUNT; t++)
		fbc_buf_dispose(&g->t[t]);
}

int fbc_db_ingest(json_t **out, bool *created, fbc_db *db, const char *catalog,
		  const fbc_catalog *cat, fbc_error *err)
{
	ingest g;
	fbc_db_conn *c = NULL;
	PGresult *res = NULL;
	char digest[80], hex[65], cat_id[24] = "", rev_id[24], number[24] = "";
	char counts[9][24];
	bool fresh = true;
	int rc = 0;

	memset(&g, 0, sizeof(g));
	g.cat = cat;
	fbc_buf_init(&g.content, 0);
	fbc_buf_init(&g.tmp, 0);
	for (int t = 0; t < T_COUNT; t++)
		fbc_buf_init(&g.t[t], 0);
	if (!cat->linked) {
		rc = fbc_error_set(err, FBC_EINVAL, catalog, "ingest needs a linked catalog");
		goto done;
	}
	if ((rc = db_checkout(&c, db, err)))
		goto done;
	/* Outside the transaction: a known digest needs no rows at all, and the
	 * revision id (a sequence value) lets the rows be built before the
	 * catalog is locked. Both are re-checked under the lock. */
	if ((rc = begin(db, c, err)) || (rc = db_exec_simple(c, "COMMIT", err)))
		goto done;
	if ((rc = db_exec(&res, c, &st_nextval, NULL, NULL, NULL, 0, err)))
		goto done;
	snprintf(rev_id, sizeof(rev_id), "%s", PQgetvalue(res, 0, 0));
	snprintf(g.rev_id, sizeof(g.rev_id), "%s", rev_id);
	PQclear(res);
	res = NULL;
	if ((rc = fbc_render_catalog(cat, on_blob, &g, err)))
		goto done;
	db_sha256_hex(hex, g.content.data ? g.content.data : "", g.content.len);
	snprintf(digest, sizeof(digest), "sha256:%s", hex);

	if ((rc = db_exec(&res, c, &st_lookup, (const char *[]){catalog, digest}, NULL, NULL, 0,
			  err)))
		goto done;
	if (PQntuples(res) == 0) {
		rc = fbc_error_set(err, FBC_ENOTFOUND, catalog, "catalog '%s' not found", catalog);
		goto done;
	}
	fresh = PQgetisnull(res, 0, 0);
	PQclear(res);
	res = NULL;
	if (fresh && (rc = build_rows(&g, err)))
		goto done;

	if ((rc = db_exec_simple(c, "BEGIN", err)))
		goto done;
	if ((rc = db_exec(&res, c, &st_lock, (const char *[]){catalog}, NULL, NULL, 0, err)))
		goto done;
	if (PQntuples(res) == 0) {
		rc = fbc_error_set(err, FBC_ENOTFOUND, catalog, "catalog '%s' not found", catalog);
		goto done;
	}
	snprintf(cat_id, sizeof(cat_id), "%s", PQgetvalue(res, 0, 0));
	PQclear(res);
	res = NULL;
	if ((rc = db_exec(&res, c, &st_same, (const char *[]){cat_id, digest}, NULL, NULL, 0, err)))
		goto done;
	if (PQntuples(res) > 0) {
		/* Same content as an existing revision (perhaps stored by a
		 * concurrent ingest meanwhile): make it current again. */
		fresh = false;
		snprintf(rev_id, sizeof(rev_id), "%s", PQgetvalue(res, 0, 0));
		PQclear(res);
		res = NULL;
		if ((rc = db_exec(&res, c, &st_current, (const char *[]){cat_id, rev_id, "0"}, NULL,
				  NULL, 0, err)))
			goto done;
	} else if (!fresh) {
		/* The revision seen before the lock was deleted meanwhile. */
		rc = fbc_error_set(err, FBC_ECONFLICT, catalog,
				   "catalog changed during ingest; retry");
		goto done;
	} else {
		PQclear(res);
		res = NULL;
		snprintf(counts[0], 24, "%ld", g.n_packages);
		snprintf(counts[1], 24, "%ld", g.n_channels);
		snprintf(counts[2], 24, "%ld", g.n_bundles);
		snprintf(counts[3], 24, "%ld", g.n_entries);
		snprintf(counts[4], 24, "%ld", g.n_edges);
		snprintf(counts[5], 24, "%ld", g.n_deprecations);
		snprintf(counts[6], 24, "%ld", g.n_others);
		snprintf(counts[7], 24, "%ld", g.n_blobs);
		snprintf(counts[8], 24, "%zu", g.content.len);
		const char *ins[12] = {rev_id,	  cat_id,    digest,	counts[0],
				       counts[1], counts[2], counts[3], counts[4],
				       counts[5], counts[6], counts[7], counts[8]};
		if ((rc = db_exec(&res, c, &st_insert, ins, NULL, NULL, 0, err)))
			goto done;
		PQclear(res);
		res = NULL;
		for (int t = 0; t < T_COUNT; t++)
			if ((rc = copy_table(c, t, &g.t[t], err)))
				goto done;
		{
			const char *vals[2] = {rev_id, g.content.data ? g.content.data : ""};
			int lens[2] = {0, (int)g.content.len}, fmts[2] = {0, 1};

			if (g.content.len > 0x3fffffff) {
				rc = fbc_error_set(err, FBC_ELIMIT, catalog,
						   "catalog render exceeds 1 GiB");
				goto done;
			}
			if ((rc = db_exec(&res, c, &st_content, vals, lens, fmts, 0, err)))
				goto done;
			PQclear(res);
			res = NULL;
		}
		if ((rc = db_exec(&res, c, &st_current, (const char *[]){cat_id, rev_id, "1"}, NULL,
				  NULL, 0, err)))
			goto done;
	}
	PQclear(res);
	res = NULL;
	if ((rc = db_exec(&res, c, &st_revnum, (const char *[]){rev_id}, NULL, NULL, 0, err)))
		goto done;
	snprintf(number, sizeof(number), "%s", PQgetvalue(res, 0, 0));
	if ((rc = db_exec_simple(c, "COMMIT", err)))
		goto done;
	db_release(db, c);
	c = NULL;
	if (out && (rc = fbc_db_revision_get(out, db, catalog, strtoll(number, NULL, 10), err)))
		goto done;
	if (created)
		*created = fresh;
done:
	PQclear(res);
	db_release(db, c); /* rolls back when still in the transaction */
	ingest_dispose(&g);
	return rc;
}
