-- Runbook runs and their journals. A run's state is its journal: the entries the interpreter
-- replays (results, evidence, go-aheads) and the keys of trace events already appended. One row
-- per (run, key), first writer wins: two reviewers acting on one step cannot both succeed.
CREATE TABLE runbook_runs (
    id TEXT PRIMARY KEY,
    runbook TEXT NOT NULL,
    hash TEXT NOT NULL,
    status TEXT NOT NULL,
    started_by TEXT,
    created_us INTEGER NOT NULL,
    updated_us INTEGER NOT NULL,
    summary TEXT
);
CREATE INDEX runbook_runs_by_created ON runbook_runs (created_us);

CREATE TABLE runbook_journal (
    run_id TEXT NOT NULL,
    key TEXT NOT NULL,
    entry TEXT NOT NULL,
    created_us INTEGER NOT NULL,
    PRIMARY KEY (run_id, key)
);
