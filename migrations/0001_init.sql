-- 0001_init: catalogs, immutable revisions and their rows, API tokens.
--
-- Row tables of a revision carry revision_id but no foreign key: they are
-- filled by COPY at ingest and a per-row FK check would dominate its cost.
-- Integrity comes from the ingest transaction; deletion is explicit
-- (db/query.c removes a catalog's revision rows table by table).
-- Name columns use COLLATE "C": byte order is the canonical FBC order
-- (Go string comparison), and btree indexes then serve prefix searches.

CREATE TABLE catalogs (
	id                  bigserial PRIMARY KEY,
	name                text COLLATE "C" NOT NULL UNIQUE,
	priority            integer NOT NULL DEFAULT 0,
	display_name        text,
	source              text,
	current_revision_id bigint,
	next_revision       bigint NOT NULL DEFAULT 1,
	created_at          timestamptz NOT NULL DEFAULT now(),
	updated_at          timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE revisions (
	id              bigserial PRIMARY KEY,
	catalog_id      bigint NOT NULL REFERENCES catalogs (id) ON DELETE CASCADE,
	number          bigint NOT NULL,
	digest          text NOT NULL,
	created_at      timestamptz NOT NULL DEFAULT now(),
	n_packages      integer NOT NULL,
	n_channels      integer NOT NULL,
	n_bundles       integer NOT NULL,
	n_entries       integer NOT NULL,
	n_edges         integer NOT NULL,
	n_deprecations  integer NOT NULL,
	n_others        integer NOT NULL,
	n_blobs         integer NOT NULL,
	n_bytes         bigint NOT NULL,
	UNIQUE (catalog_id, number),
	UNIQUE (catalog_id, digest)
);

ALTER TABLE catalogs ADD CONSTRAINT catalogs_current_revision_fk
	FOREIGN KEY (current_revision_id) REFERENCES revisions (id) ON DELETE SET NULL;

-- The canonical JSON-lines render of the revision (catalogd /api/v1/all),
-- kept apart so that revision rows stay small.
CREATE TABLE revision_content (
	revision_id bigint PRIMARY KEY REFERENCES revisions (id) ON DELETE CASCADE,
	content     bytea NOT NULL
);

-- Every blob of the render, in canonical order, with where it came from.
CREATE TABLE blobs (
	revision_id bigint NOT NULL,
	seq         integer NOT NULL,
	schema      text COLLATE "C" NOT NULL,
	package     text COLLATE "C" NOT NULL,
	name        text COLLATE "C" NOT NULL,
	file        text,
	line        integer NOT NULL,
	blob        text NOT NULL,
	PRIMARY KEY (revision_id, seq)
);
CREATE INDEX blobs_package_idx ON blobs (revision_id, package, seq);
CREATE INDEX blobs_schema_idx ON blobs (revision_id, schema, seq);

CREATE TABLE packages (
	revision_id     bigint NOT NULL,
	name            text COLLATE "C" NOT NULL,
	default_channel text COLLATE "C" NOT NULL,
	description     text,
	properties      jsonb NOT NULL,
	deprecation     text,
	file            text,
	line            integer NOT NULL,
	PRIMARY KEY (revision_id, name)
);

CREATE TABLE package_icons (
	revision_id bigint NOT NULL,
	package     text COLLATE "C" NOT NULL,
	media_type  text NOT NULL,
	data        bytea NOT NULL,
	PRIMARY KEY (revision_id, package)
);

CREATE TABLE channels (
	revision_id bigint NOT NULL,
	package     text COLLATE "C" NOT NULL,
	name        text COLLATE "C" NOT NULL,
	head        text COLLATE "C",
	n_entries   integer NOT NULL,
	properties  jsonb NOT NULL,
	deprecation text,
	file        text,
	line        integer NOT NULL,
	PRIMARY KEY (revision_id, package, name)
);

CREATE TABLE channel_entries (
	revision_id bigint NOT NULL,
	package     text COLLATE "C" NOT NULL,
	channel     text COLLATE "C" NOT NULL,
	position    integer NOT NULL,
	bundle      text COLLATE "C" NOT NULL,
	replaces    text COLLATE "C",
	skips       jsonb NOT NULL,
	skip_range  text,
	PRIMARY KEY (revision_id, package, channel, position)
);
CREATE INDEX channel_entries_bundle_idx ON channel_entries (revision_id, bundle);
CREATE INDEX channel_entries_replaces_idx ON channel_entries (revision_id, replaces);

-- "to upgrades from": to replaces / skips from, or from's version is in
-- to's skipRange (materialised at ingest).
CREATE TABLE upgrade_edges (
	revision_id bigint NOT NULL,
	package     text COLLATE "C" NOT NULL,
	channel     text COLLATE "C" NOT NULL,
	from_bundle text COLLATE "C" NOT NULL,
	to_bundle   text COLLATE "C" NOT NULL,
	kind        text NOT NULL CHECK (kind IN ('replaces', 'skips', 'skipRange'))
);
CREATE INDEX upgrade_edges_channel_idx ON upgrade_edges (revision_id, package, channel);

CREATE TABLE bundles (
	revision_id bigint NOT NULL,
	package     text COLLATE "C" NOT NULL,
	name        text COLLATE "C" NOT NULL,
	image       text,
	version     text,
	release     text,
	csv_json    text,
	deprecation text,
	file        text,
	line        integer NOT NULL,
	PRIMARY KEY (revision_id, package, name)
);
CREATE INDEX bundles_name_idx ON bundles (revision_id, name);

CREATE TABLE bundle_properties (
	revision_id bigint NOT NULL,
	package     text COLLATE "C" NOT NULL,
	bundle      text COLLATE "C" NOT NULL,
	position    integer NOT NULL,
	type        text NOT NULL,
	value       jsonb,
	PRIMARY KEY (revision_id, package, bundle, position)
);

CREATE TABLE provided_gvks (
	revision_id bigint NOT NULL,
	package     text COLLATE "C" NOT NULL,
	bundle      text COLLATE "C" NOT NULL,
	grp         text COLLATE "C" NOT NULL,
	version     text COLLATE "C" NOT NULL,
	kind        text COLLATE "C" NOT NULL
);
CREATE INDEX provided_gvks_gvk_idx ON provided_gvks (revision_id, kind, grp, version);
CREATE INDEX provided_gvks_bundle_idx ON provided_gvks (revision_id, package, bundle);

CREATE TABLE required_gvks (
	revision_id bigint NOT NULL,
	package     text COLLATE "C" NOT NULL,
	bundle      text COLLATE "C" NOT NULL,
	grp         text COLLATE "C" NOT NULL,
	version     text COLLATE "C" NOT NULL,
	kind        text COLLATE "C" NOT NULL
);
CREATE INDEX required_gvks_gvk_idx ON required_gvks (revision_id, kind, grp, version);
CREATE INDEX required_gvks_bundle_idx ON required_gvks (revision_id, package, bundle);

CREATE TABLE package_requirements (
	revision_id      bigint NOT NULL,
	package          text COLLATE "C" NOT NULL,
	bundle           text COLLATE "C" NOT NULL,
	required_package text COLLATE "C" NOT NULL,
	version_range    text NOT NULL
);
CREATE INDEX package_requirements_idx ON package_requirements (revision_id, package, bundle);

CREATE TABLE related_images (
	revision_id bigint NOT NULL,
	package     text COLLATE "C" NOT NULL,
	bundle      text COLLATE "C" NOT NULL,
	position    integer NOT NULL,
	name        text NOT NULL,
	image       text NOT NULL,
	PRIMARY KEY (revision_id, package, bundle, position)
);

-- olm.deprecations entries: schema olm.package (name ''), olm.channel, olm.bundle.
CREATE TABLE deprecations (
	revision_id bigint NOT NULL,
	package     text COLLATE "C" NOT NULL,
	schema      text NOT NULL,
	name        text COLLATE "C" NOT NULL,
	message     text NOT NULL
);
CREATE INDEX deprecations_idx ON deprecations (revision_id, package);

CREATE TABLE others (
	revision_id bigint NOT NULL,
	package     text COLLATE "C" NOT NULL,
	schema      text COLLATE "C" NOT NULL,
	name        text COLLATE "C" NOT NULL,
	blob        jsonb NOT NULL,
	file        text,
	line        integer NOT NULL
);
CREATE INDEX others_idx ON others (revision_id, package, schema);

CREATE TABLE api_tokens (
	id          bigserial PRIMARY KEY,
	hash        bytea NOT NULL UNIQUE CHECK (length(hash) = 32),
	scope       text NOT NULL CHECK (scope IN ('read', 'write', 'admin')),
	description text,
	created_at  timestamptz NOT NULL DEFAULT now(),
	revoked_at  timestamptz
);
