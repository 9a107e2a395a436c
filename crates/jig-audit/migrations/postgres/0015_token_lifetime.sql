-- Personal tokens end: each has the time it stops working (a default and a maximum the team
-- sets), and says who revoked it (its owner, an admin, or the sign-in that refused its owner).
-- Tokens made before this had no end: they get the longest a team may allow by default (90
-- days from when they were made), so none lives for ever.
ALTER TABLE api_tokens ADD COLUMN expires_us BIGINT;
ALTER TABLE api_tokens ADD COLUMN revoked_by TEXT;
UPDATE api_tokens SET expires_us = created_us + 7776000000000 WHERE expires_us IS NULL;
