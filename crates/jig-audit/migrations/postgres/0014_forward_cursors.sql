-- Where each live forwarder of the audit (the manifest's config.audit.forward) has got to: the
-- last seq its receiver took, so a restart, an unreachable receiver or a full queue resends
-- from there and loses nothing. Whichever process holds the lease forwards; the others wait,
-- so two instances on one store do not both send.
CREATE TABLE forward_cursors (
  name TEXT PRIMARY KEY,
  seq BIGINT NOT NULL,
  holder TEXT NOT NULL,
  lease_until_us BIGINT NOT NULL
);
