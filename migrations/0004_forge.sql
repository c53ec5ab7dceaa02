-- Reporting to forges and merging (pipeline.md §6, §7).
-- (0003 is the images migration.)

-- merge: auto merges a pull request whose checks pass (§7); off by default.
ALTER TABLE repositories
	ADD COLUMN merge text NOT NULL DEFAULT 'off' CHECK (merge IN ('off', 'auto'));

-- GitHub check runs of the head being reported: {"sha": ..., "runs": {"<check id>": <run id>}},
-- so that the final report completes the runs the pending one created.
ALTER TABLE pulls
	ADD COLUMN check_runs jsonb,
	ADD COLUMN merge_error text;
