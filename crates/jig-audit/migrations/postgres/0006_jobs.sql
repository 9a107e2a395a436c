-- Seed 001's batch jobs: a call handed to a scheduler (Slurm) finishes after the process that
-- submitted it may be gone. The row holds what any later process needs to follow and collect
-- it: the scheduler, the job's id there, the run directory, and the tool's definition as it
-- was submitted (the outputs to collect). `open` is 1 until the run reaches a final state.
CREATE TABLE jobs (
    request_id TEXT PRIMARY KEY,
    engine TEXT NOT NULL,
    handle TEXT NOT NULL,
    dir TEXT NOT NULL,
    tool TEXT NOT NULL,
    open BIGINT NOT NULL,
    created_us BIGINT NOT NULL,
    updated_us BIGINT NOT NULL
);
CREATE INDEX jobs_open ON jobs (open, created_us);
