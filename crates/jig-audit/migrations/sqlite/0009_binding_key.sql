-- The store's own secrets. `binding` keys the hash an approval is bound to (HMAC-SHA256 of the
-- exact request): the chain and its exports show arguments with secrets redacted, and a plain
-- hash of the clear arguments would let anyone holding an export test guesses of a secret
-- against it. Every process on the store reads the same key.
CREATE TABLE store_keys (
  name TEXT PRIMARY KEY,
  value TEXT NOT NULL
);
-- A pending approval's request in clear (arguments and argv as they will run), for the people
-- who may decide it; `request` keeps the redacted form that every viewer sees. Cleared when the
-- approval is decided or expires.
ALTER TABLE approvals ADD COLUMN clear_request TEXT;
