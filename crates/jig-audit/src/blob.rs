//! Results as content-addressed blobs. A result whose canonical JSON is over
//! [`INLINE_MAX`] bytes is stored once, zstd-compressed, in the `blobs` table; the packet, the
//! run and the idempotency key hold a reference `{"$blob": "<sha256>", "bytes": <size>}`
//! instead. The hash chain covers the reference, the reference names the content, so the record
//! stays verifiable; an identical result (a repeated grep) adds nothing to the store.

use jig_model::Sha256Hash;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::error::AuditError;

/// Results up to this many bytes of canonical JSON stay inline in their packet (a small result,
/// an artifact list, stay readable in an export). Larger ones are stored once: an agent reading
/// the same 4.5 KB file again and again cost 12.2 KB a call in the store at 16 KiB, 3.1 KB at this
/// size (measured by
/// `a_repeated_result_is_stored_once_and_costs_the_store_a_few_kilobytes_a_call`, docs/benchmarks.md).
pub const INLINE_MAX: usize = 2 * 1024;

/// zstd level: JSON compresses well at any level, so the fastest one (measured on a 4 MB grep
/// result with `zstd -b`: level 1 10.9× at 574 MB/s, level 3 11.0× at 409 MB/s).
const LEVEL: i32 = 1;

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
        Self::encode(value, false)
    }

    /// `value` as a blob whatever its size (a file a person attached), with its reference.
    pub fn of(value: &Value) -> Result<(Blob, Value), AuditError> {
        Self::encode(value, true)?
            .ok_or_else(|| AuditError::Commit("storing a value: nothing was encoded".to_owned()))
    }

    /// A result already written as canonical JSON (a built-in's prepared result) as a blob,
    /// with its reference: hashed and compressed as it is, never parsed.
    pub fn of_canonical(text: &str) -> Result<(Blob, Value), AuditError> {
        use std::io::Write as _;
        let failed = |e: std::io::Error| AuditError::Commit(format!("storing a result: {e}"));
        // Hashing and compressing are independent passes over the same bytes: one each on
        // the two cores.
        let (hash, body) = std::thread::scope(|scope| {
            let hash = scope.spawn(|| jig_model::Sha256Hash::of_bytes(text.as_bytes()).to_hex());
            let body = Sink::encoder(&[]).and_then(|mut encoder| {
                encoder.write_all(text.as_bytes())?;
                encoder.finish()
            });
            (hash.join(), body)
        });
        let hash =
            hash.map_err(|_| AuditError::Commit("storing a result: hashing failed".to_owned()))?;
        let size = i64::try_from(text.len()).unwrap_or(i64::MAX);
        let reference = reference(&hash, size);
        Ok((Blob { hash, size, body: body.map_err(failed)? }, reference))
    }

    fn encode(value: &Value, always: bool) -> Result<Option<(Blob, Value)>, AuditError> {
        // One pass: the canonical JSON is hashed and compressed as it is written, never held
        // whole (a grep result can be several megabytes).
        let mut sink = Sink::new();
        let failed = |e: std::io::Error| AuditError::Commit(format!("storing a result: {e}"));
        {
            // The canonical writer writes in small pieces; the compressor wants large ones.
            let mut buffered = std::io::BufWriter::with_capacity(64 * 1024, &mut sink);
            jig_model::canonical::write_canonical_to(value, &mut buffered).map_err(failed)?;
            std::io::Write::flush(&mut buffered).map_err(failed)?;
        }
        if sink.size <= INLINE_MAX && !always {
            return Ok(None);
        }
        Sink::finish(sink).map(Some)
    }
}

impl Sink {
    /// The blob of what was written, and its reference.
    fn finish(sink: Self) -> Result<(Blob, Value), AuditError> {
        let failed = |e: std::io::Error| AuditError::Commit(format!("storing a result: {e}"));
        let hash = jig_model::canonical::hex(&sink.hasher.finalize());
        let encoder = match sink.encoder {
            Some(encoder) => encoder,
            None => Sink::encoder(&sink.head).map_err(failed)?,
        };
        let body = encoder.finish().map_err(failed)?;
        let size = i64::try_from(sink.size).unwrap_or(i64::MAX);
        let reference = reference(&hash, size);
        Ok((Blob { hash, size, body }, reference))
    }
}

/// Where canonical JSON is written: counted, hashed, and compressed once it is too large to stay
/// inline (a zstd context is costly to set up: most results never need one).
struct Sink {
    size: usize,
    hasher: Sha256,
    /// What was written while it could still stay inline.
    head: Vec<u8>,
    encoder: Option<zstd::stream::Encoder<'static, Vec<u8>>>,
}

impl Sink {
    fn new() -> Self {
        Self { size: 0, hasher: Sha256::new(), head: Vec::new(), encoder: None }
    }

    fn encoder(head: &[u8]) -> std::io::Result<zstd::stream::Encoder<'static, Vec<u8>>> {
        use std::io::Write as _;
        let mut encoder = zstd::stream::Encoder::new(Vec::new(), LEVEL)?;
        encoder.write_all(head)?;
        Ok(encoder)
    }
}

impl std::io::Write for Sink {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.size += bytes.len();
        self.hasher.update(bytes);
        match &mut self.encoder {
            Some(encoder) => encoder.write_all(bytes)?,
            None if self.size <= INLINE_MAX => self.head.extend_from_slice(bytes),
            None => {
                let mut encoder = Self::encoder(&self.head)?;
                encoder.write_all(bytes)?;
                self.head = Vec::new();
                self.encoder = Some(encoder);
            }
        }
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
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
