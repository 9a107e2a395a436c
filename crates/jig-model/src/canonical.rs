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
    let mut out = Vec::with_capacity(128);
    write_canonical(value, &mut out);
    // Only whole UTF-8 strings and ASCII were written.
    String::from_utf8(out).unwrap_or_default()
}

/// Append the RFC 8785 canonical serialisation of `value` to `out`.
///
/// Every packet and call is hashed over this form, so it is written directly rather than
/// through a general serializer (which copies each key into a sorted set first). The escaping
/// of strings is serde_json's, which is JCS's; keys are sorted by UTF-16 code units; numbers
/// that are not small integers are written by `serde_json_canonicalizer` (ECMAScript's
/// number formatting), and a property test holds the whole to that library's output.
pub fn write_canonical(value: &serde_json::Value, out: &mut Vec<u8>) {
    // Writing to a Vec cannot fail.
    let _ = write_canonical_to(value, out);
}

/// Write the RFC 8785 canonical serialisation of `value` to `out` as it goes (a large result
/// is hashed and compressed without being held whole). Many small writes: buffer `out`.
pub fn write_canonical_to<W: std::io::Write + ?Sized>(
    value: &serde_json::Value,
    out: &mut W,
) -> std::io::Result<()> {
    use serde_json::Value;
    match value {
        Value::Null => out.write_all(b"null"),
        Value::Bool(true) => out.write_all(b"true"),
        Value::Bool(false) => out.write_all(b"false"),
        Value::Number(number) => write_number(number, out),
        Value::String(text) => write_str(text, out),
        Value::Array(items) => {
            out.write_all(b"[")?;
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.write_all(b",")?;
                }
                write_canonical_to(item, out)?;
            }
            out.write_all(b"]")
        }
        Value::Object(map) => {
            out.write_all(b"{")?;
            let mut write_entry = |i: usize, key: &str, value: &Value| {
                if i > 0 {
                    out.write_all(b",")?;
                }
                write_str(key, out)?;
                out.write_all(b":")?;
                write_canonical_to(value, out)
            };
            if map.keys().is_sorted_by(|a, b| utf16_order(a, b).is_le()) {
                for (i, (key, value)) in map.iter().enumerate() {
                    write_entry(i, key, value)?;
                }
            } else {
                let mut entries: Vec<(&String, &Value)> = map.iter().collect();
                entries.sort_unstable_by(|a, b| utf16_order(a.0, b.0));
                for (i, (key, value)) in entries.into_iter().enumerate() {
                    write_entry(i, key, value)?;
                }
            }
            out.write_all(b"}")
        }
    }
}

/// RFC 8785 §3.2.3: keys are ordered by their UTF-16 code units (which differs from UTF-8's
/// order only between characters above U+FFFF and those in U+E000..U+FFFF).
fn utf16_order(a: &str, b: &str) -> std::cmp::Ordering {
    if a.is_ascii() && b.is_ascii() {
        return a.cmp(b);
    }
    a.encode_utf16().cmp(b.encode_utf16())
}

/// The largest integer a double holds exactly: below it, ECMAScript prints the digits.
const EXACT: u64 = 1 << 53;

fn write_number<W: std::io::Write + ?Sized>(
    number: &serde_json::Number,
    out: &mut W,
) -> std::io::Result<()> {
    if let Some(n) = number.as_u64().filter(|n| *n <= EXACT) {
        write!(out, "{n}")
    } else if let Some(n) = number.as_i64().filter(|n| n.unsigned_abs() <= EXACT) {
        write!(out, "{n}")
    } else {
        let text = serde_json_canonicalizer::to_vec(number).map_err(std::io::Error::other)?;
        out.write_all(&text)
    }
}

/// Append `text` as an RFC 8785 JSON string.
pub fn write_canonical_str(text: &str, out: &mut Vec<u8>) {
    // Writing to a Vec cannot fail.
    let _ = write_str(text, out);
}

fn write_str<W: std::io::Write + ?Sized>(text: &str, out: &mut W) -> std::io::Result<()> {
    // serde_json escapes `"`, `\\` and the C0 controls (as \b \t \n \f \r or \u00xx in
    // lowercase) and nothing else: RFC 8785 §3.2.2.2 exactly.
    serde_json::to_writer(out, text).map_err(std::io::Error::other)
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
        hex(&self.0)
    }
}

/// Lowercase hex of any bytes: digests, MACs, keys. The one encoder, so every hash Jig writes
/// (a run id, a token's digest, a checkpoint's root) reads the same way.
pub fn hex(bytes: &[u8]) -> String {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for byte in bytes {
        out.push(HEX[usize::from(byte >> 4)] as char);
        out.push(HEX[usize::from(byte & 0x0f)] as char);
    }
    out
}

/// The bytes of lowercase or uppercase hex, surrounding whitespace ignored; `None` for anything
/// else (an odd length, a non-hex digit).
pub fn unhex(text: &str) -> Option<Vec<u8>> {
    let text = text.trim();
    if !text.len().is_multiple_of(2) {
        return None;
    }
    (0..text.len()).step_by(2).map(|i| u8::from_str_radix(text.get(i..i + 2)?, 16).ok()).collect()
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
