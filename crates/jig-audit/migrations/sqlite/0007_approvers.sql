-- An approval a runbook's governance asks of several people (`min_approvers`): how many must
-- approve, and who has so far (a JSON array of principals, in order). The approval is granted —
-- state `approved`, its token issued — when the last of them approves.
ALTER TABLE approvals ADD COLUMN required INTEGER NOT NULL DEFAULT 1;
ALTER TABLE approvals ADD COLUMN approvers TEXT;
