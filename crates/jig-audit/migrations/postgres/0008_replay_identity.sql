-- What a replay must match besides the run id: who asked (the principal as compared —
-- trimmed, lower-cased, an agent as its person) and the tool's definition hash when it was
-- called. A recorded result is served again only to the same person (unless the policy shares
-- the tool's results, `replay.shared`) and only under the same definition. Older rows have
-- neither and are never replayed into new calls.
ALTER TABLE runs ADD COLUMN person TEXT;
ALTER TABLE runs ADD COLUMN definition TEXT;
