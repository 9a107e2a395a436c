-- Large results, content-addressed: the packets name them by SHA-256 and size, so the chain
-- covers them; identical results are stored once. Bodies are zstd-compressed canonical JSON.
CREATE TABLE blobs (
    hash TEXT PRIMARY KEY,
    size INTEGER NOT NULL,
    body BLOB NOT NULL
);
