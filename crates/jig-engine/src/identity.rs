//! Identities of a call: request hash (what an approval is bound to), idempotency key, tokens.

use jig_model::canonical::Sha256Hash;
use serde_json::{Value, json};

/// SHA-256 of the exact request an approval is for: tool, canonical arguments, session.
pub fn request_hash(tool: &str, args: &Value, session: &str, principal: &str) -> String {
    Sha256Hash::of_json(&json!({
        "tool": tool,
        "args": args,
        "session": session,
        "principal": canonical_principal(principal),
    }))
    .to_hex()
}

/// A principal as compared: trimmed and lower-cased (Unicode), so `Alice` and `alice` are one
/// person to self-approval and token checks.
pub fn canonical_principal(principal: &str) -> String {
    principal.trim().to_lowercase()
}

/// Seed 003's primary idempotency key: `thread + tool + params_hash`.
pub fn idempotency_key(thread: &str, tool: &str, params_hash: &str) -> String {
    format!("{thread}:{tool}:{params_hash}")
}

/// A fresh random id (UUID v4, 32 hex digits).
pub fn new_id() -> String {
    uuid::Uuid::new_v4().simple().to_string()
}

/// A one-time token: 244 random bits as 64 hex digits (two UUIDs v4).
pub fn new_token() -> String {
    format!("{}{}", uuid::Uuid::new_v4().simple(), uuid::Uuid::new_v4().simple())
}

/// SHA-256 as hex.
pub fn sha256_hex(bytes: &[u8]) -> String {
    Sha256Hash::of_bytes(bytes).to_hex()
}
