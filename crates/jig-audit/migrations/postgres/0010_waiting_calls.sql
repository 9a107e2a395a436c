-- A call that waited for approval ends in what happened to it (issue #27/#28): the approval
-- names its waiting request, and the waiting run records the run that executed it once
-- approved (`resumed_as`), which in turn names the run it resumed (`resumes`).
ALTER TABLE approvals ADD COLUMN request_id TEXT;
UPDATE approvals SET request_id = (request::json)->>'request_id';
CREATE INDEX approvals_by_waiting_request ON approvals (request_id);
CREATE INDEX approvals_pending_expiry ON approvals (expires_us) WHERE state = 'pending';
ALTER TABLE runs ADD COLUMN resumed_as TEXT;
ALTER TABLE runs ADD COLUMN resumes TEXT;
