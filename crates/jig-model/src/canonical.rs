//! Canonical JSON (RFC 8785, "JCS") and the SHA-256 hashes Jig derives from it.
//!
//! Every identity in Jig — `params_hash`, `run_id`, `policy_hash`, a tool's hash, the
//! `registry_hash` — is a SHA-256 over the canonical form of a JSON value, so two values that
//! differ only in key order or number spelling (`1.0` vs `1`, `1e2` vs `100`) hash the same.

use serde::Serialize;
use sha2::{Digest, Sha256};

/// A canonicalisation failure: the value cannot be expressed as RFC 8785 JSON.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CanonicalError {
    /// The value could not be serialised (a non-string map key, a non-finite float, …).
    #[error("value cannot be written as canonical JSON: {0}")]
    Serialize(String),
}

/// The RFC 8785 canonical serialisation of `value`.
pub fn to_canonical_string<T: Serialize>(value: &T) -> Result<String, CanonicalError> {
    serde_json_canonicalizer::to_string(value).map_err(|e| CanonicalError::Serialize(e.to_string()))
}

/// The RFC 8785 canonical serialisation of a [`serde_json::Value`].
///
/// A `Value` always canonicalises: its keys are strings and its numbers finite.
pub fn canonical_json(value: &serde_json::Value) -> String {
    // serde_json::Value cannot hold NaN/inf or non-string keys, the only failure cases.
    serde_json_canonicalizer::to_string(value).unwrap_or_default()
}

/// A SHA-256 digest, shown as 64 lowercase hex digits.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Sha256Hash(pub [u8; 32]);

impl Sha256Hash {
    /// SHA-256 of raw bytes.
    pub fn of_bytes(bytes: &[u8]) -> Self {
        Self(Sha256::digest(bytes).into())
    }

    /// SHA-256 over the canonical JSON form of `value`.
    pub fn of_json(value: &serde_json::Value) -> Self {
        Self::of_bytes(canonical_json(value).as_bytes())
    }

    /// SHA-256 over the canonical JSON form of any serialisable value.
    pub fn of_serializable<T: Serialize>(value: &T) -> Result<Self, CanonicalError> {
        Ok(Self::of_bytes(to_canonical_string(value)?.as_bytes()))
    }

    /// SHA-256 over several byte strings, each prefixed by its length so that
    /// `["ab", "c"]` and `["a", "bc"]` never collide.
    pub fn of_parts<'a>(parts: impl IntoIterator<Item = &'a [u8]>) -> Self {
        let mut hasher = Sha256::new();
        for part in parts {
            hasher.update((part.len() as u64).to_be_bytes());
            hasher.update(part);
        }
        Self(hasher.finalize().into())
    }

    /// Lowercase hex.
    pub fn to_hex(&self) -> String {
        const HEX: &[u8; 16] = b"0123456789abcdef";
        let mut out = String::with_capacity(64);
        for byte in self.0 {
            out.push(HEX[usize::from(byte >> 4)] as char);
            out.push(HEX[usize::from(byte & 0x0f)] as char);
        }
        out
    }
}

impl std::fmt::Display for Sha256Hash {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.to_hex())
    }
}

impl std::fmt::Debug for Sha256Hash {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Sha256Hash({})", self.to_hex())
    }
}

/// `params_hash = sha256(JCS(args))` (DESIGN.md §5), as hex.
pub fn params_hash(args: &serde_json::Value) -> String {
    Sha256Hash::of_json(args).to_hex()
}

/// `run_id = sha256(JCS({tool, version, policy_hash, params_hash}))` (DESIGN.md §5), as hex.
pub fn run_id(tool: &str, version: &str, policy_hash: &str, params_hash: &str) -> String {
    let identity = serde_json::json!({
        "tool": tool,
        "version": version,
        "policy_hash": policy_hash,
        "params_hash": params_hash,
    });
    Sha256Hash::of_json(&identity).to_hex()
}
