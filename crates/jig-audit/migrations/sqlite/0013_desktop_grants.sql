-- The desktop app signing in to a team server (RFC 8252: the system browser, a loopback
-- redirect). A person signed in in their browser allows the app; the app is sent a one-time
-- code on its loopback address and trades it, with the PKCE verifier only it knows, for a
-- session of its own. Only the code's hash is kept, with the browser session that allowed it
-- (whose person and claims the app's session gets), for two minutes at most.
CREATE TABLE desktop_grants (
  code_hash TEXT PRIMARY KEY,
  session_hash TEXT NOT NULL,
  challenge TEXT NOT NULL,
  redirect_uri TEXT NOT NULL,
  created_us BIGINT NOT NULL
);
