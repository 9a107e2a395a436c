//! Large results as content-addressed blobs. A result whose canonical JSON is over
//! [`INLINE_MAX`] bytes is stored once, zstd-compressed, in the `blobs` table; the packet, the
//! run and the idempotency key hold a reference `{"$blob": "<sha256>", "bytes": <size>}`
//! instead. The hash chain covers the reference, the reference names the content, so the record
//! stays verifiable; an identical result (a repeated grep) adds nothing to the store.

use jig_model::Sha256Hash;
use serde_json::{Value, json};

use crate::error::AuditError;

/// Results up to this many bytes of canonical JSON stay inline in their packet.
pub const INLINE_MAX: usize = 16 * 1024;

/// zstd level: fast enough to keep a 5 MB result's compression in the low milliseconds, and
/// JSON compresses well at any level (measured on grep output: level 3 ≈ 9×).
const LEVEL: i32 = 3;

/// A result to be stored as a blob.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Blob {
    /// SHA-256 of the canonical JSON, hex.
    pub hash: String,
    /// Bytes of canonical JSON.
    pub size: i64,
    /// The canonical JSON, zstd-compressed.
    pub body: Vec<u8>,
}

impl Blob {
    /// `value` as a blob when its canonical JSON is larger than [`INLINE_MAX`], with the
    /// reference that replaces it; `None` when it stays inline.
    pub fn of_large(value: &Value) -> Result<Option<(Blob, Value)>, AuditError> {
        let text = jig_model::canonical::canonical_json(value);
        if text.len() <= INLINE_MAX {
            return Ok(None);
        }
        let hash = Sha256Hash::of_bytes(text.as_bytes()).to_hex();
        let body = zstd::bulk::compress(text.as_bytes(), LEVEL)
            .map_err(|e| AuditError::Commit(format!("compressing a result: {e}")))?;
        let size = i64::try_from(text.len()).unwrap_or(i64::MAX);
        let reference = reference(&hash, size);
        Ok(Some((Blob { hash, size, body }, reference)))
    }
}

/// The reference that stands for a blob.
pub fn reference(hash: &str, size: i64) -> Value {
    json!({ "$blob": hash, "bytes": size })
}

/// The hash a reference names, if `value` is one.
pub fn referenced(value: &Value) -> Option<&str> {
    let map = value.as_object().filter(|m| m.len() == 2 && m.contains_key("bytes"))?;
    map.get("$blob")?.as_str()
}

/// The value of a stored body, checked against the hash it is stored under.
pub fn decode(hash: &str, body: &[u8], size: i64) -> Result<Value, AuditError> {
    let capacity = usize::try_from(size).unwrap_or(0);
    let text = zstd::bulk::decompress(body, capacity)
        .map_err(|e| AuditError::Commit(format!("blob {hash} cannot be decompressed: {e}")))?;
    if Sha256Hash::of_bytes(&text).to_hex() != hash {
        return Err(AuditError::Commit(format!(
            "blob {hash} does not match its hash (it was altered)"
        )));
    }
    serde_json::from_slice(&text)
        .map_err(|e| AuditError::Commit(format!("blob {hash} is not JSON: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_values_stay_inline_and_large_ones_round_trip() {
        assert!(Blob::of_large(&json!({ "a": 1 })).expect("ok").is_none());
        let large = json!({ "lines": vec!["the same line of text"; 5000] });
        let (blob, reference) = Blob::of_large(&large).expect("ok").expect("a blob");
        assert_eq!(referenced(&reference), Some(blob.hash.as_str()));
        assert!(blob.body.len() * 10 < usize::try_from(blob.size).expect("size"));
        assert_eq!(decode(&blob.hash, &blob.body, blob.size).expect("decode"), large);
        let mut altered = blob;
        altered.hash = "00".repeat(32);
        assert!(decode(&altered.hash, &altered.body, altered.size).is_err());
    }
}
