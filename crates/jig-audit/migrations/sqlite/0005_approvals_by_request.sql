-- A runbook step waiting on a person looks its approval up by the exact request's hash on every
-- walk: keep that lookup off a scan of every approval.
CREATE INDEX approvals_by_request ON approvals (request_hash, created_us);
