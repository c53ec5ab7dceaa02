-- 0002_gitops: watched repositories, the durable job queue, webhook
-- deliveries, pull-request check results and revision provenance
-- (pipeline.md §2, §4, §6, §8, §9).
--
-- Secrets are never stored: a repository holds only references (a file path
-- or an environment variable name) read when used.
-- Repository rows are keyed by their immutable name; what hangs off a
-- repository (deliveries, pulls, commits) goes with it. Jobs keep the
-- repository as text without a foreign key: their history outlives it.

CREATE TABLE repositories (
	id                  bigserial PRIMARY KEY,
	name                text COLLATE "C" NOT NULL UNIQUE,
	url                 text NOT NULL,
	branch              text NOT NULL DEFAULT 'main',
	forge_kind          text NOT NULL DEFAULT 'none'
	                    CHECK (forge_kind IN ('github', 'gitlab', 'none')),
	forge_api           text,
	forge_project       text,
	forge_report        text NOT NULL DEFAULT 'checks'
	                    CHECK (forge_report IN ('checks', 'statuses')),
	token_file          text,
	token_env           text,
	ssh_key_file        text,
	webhook_secret_file text,
	webhook_secret_env  text,
	poll_seconds        integer NOT NULL DEFAULT 300 CHECK (poll_seconds >= 0),
	catalogs            jsonb,
	publish             jsonb,
	origin              text NOT NULL DEFAULT 'api' CHECK (origin IN ('api', 'config')),
	head_commit         text,
	fetched_at          timestamptz,
	created_at          timestamptz NOT NULL DEFAULT now(),
	updated_at          timestamptz NOT NULL DEFAULT now()
);

-- The queue. state: queued -> running -> succeeded | failed | cancelled
-- (running -> queued again on a transient failure or an expired lease).
-- `ordered` jobs (ingest, publish) of one repository run one at a time in id
-- order. Claims take the highest priority, then the lowest id.
CREATE TABLE jobs (
	id           bigserial PRIMARY KEY,
	kind         text NOT NULL,
	key          text NOT NULL,
	repository   text COLLATE "C",
	payload      jsonb NOT NULL DEFAULT '{}',
	state        text NOT NULL DEFAULT 'queued'
	             CHECK (state IN ('queued', 'running', 'succeeded', 'failed', 'cancelled')),
	priority     integer NOT NULL DEFAULT 0,
	ordered      boolean NOT NULL DEFAULT false,
	attempts     integer NOT NULL DEFAULT 0,
	max_attempts integer NOT NULL DEFAULT 5 CHECK (max_attempts >= 1),
	run_after    timestamptz NOT NULL DEFAULT now(),
	lease_until  timestamptz,
	worker       text,
	error        text,
	result       jsonb,
	created_at   timestamptz NOT NULL DEFAULT now(),
	updated_at   timestamptz NOT NULL DEFAULT now(),
	started_at   timestamptz,
	finished_at  timestamptz
);
-- At most one live job per dedup key.
CREATE UNIQUE INDEX jobs_live_key_idx ON jobs (kind, key) WHERE state IN ('queued', 'running');
CREATE INDEX jobs_claim_idx ON jobs (priority DESC, id) WHERE state = 'queued';
CREATE INDEX jobs_lease_idx ON jobs (lease_until) WHERE state = 'running';
CREATE INDEX jobs_ordered_idx ON jobs (repository, id)
	WHERE ordered AND state IN ('queued', 'running');
CREATE INDEX jobs_list_idx ON jobs (repository, kind, state, id);
CREATE INDEX jobs_key_idx ON jobs (key, id);

-- Every transition of a job, with its reason (IIB's state_history).
CREATE TABLE job_events (
	id         bigserial PRIMARY KEY,
	job_id     bigint NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
	at         timestamptz NOT NULL DEFAULT clock_timestamp(),
	from_state text,
	to_state   text NOT NULL,
	attempt    integer NOT NULL DEFAULT 0,
	worker     text,
	reason     text
);
CREATE INDEX job_events_job_idx ON job_events (job_id, id);

-- Effects of jobs, recorded under the job's key in the transaction that
-- completes it: a second run of the same key finds its effect and does
-- nothing again.
CREATE TABLE job_effects (
	key        text PRIMARY KEY,
	kind       text NOT NULL,
	job_id     bigint NOT NULL,
	result     jsonb,
	created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE webhook_deliveries (
	id           bigserial PRIMARY KEY,
	forge        text NOT NULL CHECK (forge IN ('github', 'gitlab')),
	delivery_id  text NOT NULL,
	event        text NOT NULL,
	action       text,
	repository   text COLLATE "C" NOT NULL REFERENCES repositories (name) ON DELETE CASCADE,
	pull_request integer,
	head_sha     text,
	job_id       bigint,
	received_at  timestamptz NOT NULL DEFAULT now(),
	UNIQUE (forge, delivery_id)
);

-- The pipeline's view of each pull request (merge request) it heard of.
CREATE TABLE pulls (
	repository  text COLLATE "C" NOT NULL REFERENCES repositories (name) ON DELETE CASCADE,
	number      integer NOT NULL,
	state       text NOT NULL DEFAULT 'open' CHECK (state IN ('open', 'closed', 'merged')),
	head_sha    text,
	base_ref    text,
	author      text,
	title       text,
	approvals   jsonb NOT NULL DEFAULT '[]',
	comment_id  text,
	merge_sha   text,
	updated_at  timestamptz NOT NULL DEFAULT now(),
	PRIMARY KEY (repository, number)
);

-- One row per pr.check run (its job): the engine's JSON result.
CREATE TABLE pull_checks (
	id          bigserial PRIMARY KEY,
	repository  text COLLATE "C" NOT NULL REFERENCES repositories (name) ON DELETE CASCADE,
	number      integer NOT NULL,
	head_sha    text NOT NULL,
	base_sha    text,
	conclusion  text NOT NULL,
	result      jsonb NOT NULL,
	job_id      bigint NOT NULL UNIQUE,
	created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX pull_checks_pull_idx ON pull_checks (repository, number, id);
CREATE INDEX pull_checks_head_idx ON pull_checks (repository, head_sha);

-- Commits fbcd has fetched and looked at (ingest or check).
CREATE TABLE repo_commits (
	repository   text COLLATE "C" NOT NULL REFERENCES repositories (name) ON DELETE CASCADE,
	sha          text NOT NULL,
	pull_request integer,
	author       text,
	committed_at timestamptz,
	seen_at      timestamptz NOT NULL DEFAULT now(),
	PRIMARY KEY (repository, sha)
);

-- Provenance of a revision built from a repository (NULL for uploads).
ALTER TABLE revisions
	ADD COLUMN repository   text,
	ADD COLUMN commit       text,
	ADD COLUMN pull_request integer,
	ADD COLUMN author       text,
	ADD COLUMN committed_at timestamptz;
CREATE INDEX revisions_commit_idx ON revisions (repository, commit);
