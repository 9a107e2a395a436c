-- The audit store (SQLite). Packets are append-only; every other table is state.

-- The last link of the packet chain. One row; appending a packet updates it in the same
-- transaction, which serialises appenders.
CREATE TABLE chain_head (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    seq INTEGER NOT NULL,
    hash TEXT NOT NULL
);
INSERT INTO chain_head (id, seq, hash)
VALUES (1, 0, '0000000000000000000000000000000000000000000000000000000000000000');

CREATE TABLE packets (
    seq INTEGER PRIMARY KEY,
    kind TEXT NOT NULL,
    ts_us INTEGER NOT NULL,
    session_id TEXT,
    thread_id TEXT,
    principal TEXT,
    request_id TEXT,
    run_id TEXT,
    tool TEXT,
    args_hash TEXT,
    payload TEXT NOT NULL,
    prev_hash TEXT NOT NULL,
    hash TEXT NOT NULL
);
-- Every index is written on every commit: only those queries use are kept.
CREATE INDEX packets_request ON packets (request_id);

CREATE TRIGGER packets_no_update BEFORE UPDATE ON packets
BEGIN
    SELECT RAISE(ABORT, 'audit packets are append-only: UPDATE refused');
END;
CREATE TRIGGER packets_no_delete BEFORE DELETE ON packets
BEGIN
    SELECT RAISE(ABORT, 'audit packets are append-only: DELETE refused');
END;

CREATE TABLE runs (
    request_id TEXT PRIMARY KEY,
    run_id TEXT NOT NULL,
    tool TEXT NOT NULL,
    version TEXT NOT NULL,
    session_id TEXT,
    thread_id TEXT,
    principal TEXT,
    params_hash TEXT NOT NULL,
    policy_hash TEXT NOT NULL,
    deterministic INTEGER NOT NULL,
    state TEXT NOT NULL,
    rule TEXT,
    created_us INTEGER NOT NULL,
    updated_us INTEGER NOT NULL,
    duration_ms INTEGER,
    response TEXT,
    error TEXT,
    replayed_from TEXT,
    -- host/pid/start time of the process running the call: recovery leaves live owners alone
    owner TEXT,
    -- when an unfinished run is certainly abandoned, whoever owned it
    deadline_us INTEGER
);
CREATE INDEX runs_by_run_id ON runs (run_id, state);
CREATE INDEX runs_by_created ON runs (created_us);
-- Start-up recovery looks for unfinished runs; most runs are never in the index at all.
CREATE INDEX runs_unfinished ON runs (state) WHERE state IN ('created', 'queued', 'running');

CREATE TABLE idempotency (
    key TEXT PRIMARY KEY,
    state TEXT NOT NULL,
    request_id TEXT NOT NULL,
    response TEXT,
    created_us INTEGER NOT NULL,
    updated_us INTEGER NOT NULL
);

CREATE TABLE approvals (
    id TEXT PRIMARY KEY,
    request_hash TEXT NOT NULL,
    tool TEXT NOT NULL,
    session_id TEXT,
    principal TEXT,
    request TEXT NOT NULL,
    rule TEXT NOT NULL,
    reason TEXT NOT NULL,
    state TEXT NOT NULL,
    token_hash TEXT,
    expires_us INTEGER,
    decided_by TEXT,
    created_us INTEGER NOT NULL,
    decided_us INTEGER,
    consumed_us INTEGER
);
CREATE INDEX approvals_by_state ON approvals (state, created_us);

CREATE TABLE sessions (
    id TEXT PRIMARY KEY,
    principal TEXT,
    created_us INTEGER NOT NULL,
    calls INTEGER NOT NULL DEFAULT 0,
    bytes INTEGER NOT NULL DEFAULT 0,
    wall_ms INTEGER NOT NULL DEFAULT 0
);
