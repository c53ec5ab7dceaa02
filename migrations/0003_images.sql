-- Catalog images pushed by catalog.publish (pipeline.md §8, §9).
CREATE TABLE images (
	id          bigserial PRIMARY KEY,
	catalog_id  bigint NOT NULL REFERENCES catalogs (id) ON DELETE CASCADE,
	revision    bigint NOT NULL,
	digest      text NOT NULL,          -- what the tags name: the index, or the one manifest
	media_type  text NOT NULL,
	platforms   text[] NOT NULL,
	repository  text NOT NULL,          -- registry/repository, without tag
	tags        text[] NOT NULL DEFAULT '{}',
	job_id      bigint,
	pushed_at   timestamptz NOT NULL DEFAULT now(),
	UNIQUE (catalog_id, revision, repository, digest)
);
CREATE INDEX images_digest_idx ON images (digest);
CREATE INDEX images_revision_idx ON images (catalog_id, revision);
