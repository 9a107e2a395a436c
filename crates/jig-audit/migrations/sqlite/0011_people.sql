-- Who is signed in, across every instance on this store (issue #27).
-- A browser's sign-in in progress: the provider sends it back to any instance, which finds it
-- here by its `state`, once; `browser` is the hash of a cookie the browser that started it
-- holds, so a link cannot finish someone else's sign-in in your browser.
CREATE TABLE sign_ins (
  state TEXT PRIMARY KEY,
  browser TEXT NOT NULL,
  verifier TEXT NOT NULL,
  nonce TEXT NOT NULL,
  return_to TEXT NOT NULL,
  created_us BIGINT NOT NULL
);
-- A signed-in browser: only the hash of its cookie is kept; the role is worked out from the
-- claims on every request, so a change of the project's role mapping applies at once.
CREATE TABLE web_sessions (
  id_hash TEXT PRIMARY KEY,
  principal TEXT NOT NULL,
  subject TEXT NOT NULL,
  issuer TEXT NOT NULL,
  claims TEXT NOT NULL,
  created_us BIGINT NOT NULL,
  expires_us BIGINT NOT NULL,
  revoked_us BIGINT
);
CREATE INDEX web_sessions_by_principal ON web_sessions (principal, created_us);
-- Personal API tokens for scripts and agents: only their hashes; a role at most their owner's.
CREATE TABLE api_tokens (
  id TEXT PRIMARY KEY,
  owner TEXT NOT NULL,
  name TEXT NOT NULL,
  role TEXT NOT NULL,
  token_hash TEXT NOT NULL UNIQUE,
  created_us BIGINT NOT NULL,
  last_used_us BIGINT,
  revoked_us BIGINT
);
CREATE INDEX api_tokens_by_owner ON api_tokens (owner, created_us);
