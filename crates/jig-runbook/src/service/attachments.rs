//! Files people attach as evidence, kept content-addressed in the audit store: the journal and
//! the chain hold the file's name, size, SHA-256 and a reference to the stored bytes, never the
//! bytes themselves; an identical file is stored once.

use base64::Engine as _;
use jig_audit::blob::Blob;
use jig_engine::WalkRecord;
use jig_model::runbook::legacy::{EvidenceKind, EvidenceRequirement};
use serde_json::{Map, Value, json};

use super::{Runbooks, ServiceError};

/// The largest file one attachment may be (the store keeps it compressed, the request carries
/// it as base64).
pub const MAX_ATTACHMENT_BYTES: usize = 1024 * 1024;

impl Runbooks {
    /// `values` with each attachment stored and replaced by what the record keeps of it.
    /// An attachment is given as `{"name": …, "content_base64": …, "media_type"?: …}`.
    pub(super) async fn store_attachments(
        &self,
        required: &[EvidenceRequirement],
        values: &Map<String, Value>,
    ) -> Result<Map<String, Value>, ServiceError> {
        let mut kept = values.clone();
        let mut blobs = Vec::new();
        for requirement in required.iter().filter(|r| r.kind == EvidenceKind::Attachment) {
            let Some(given) = kept.get_mut(&requirement.name) else { continue };
            let (stored, blob) = attachment(&requirement.name, given)?;
            *given = stored;
            blobs.push(WalkRecord::Blob(blob));
        }
        if !blobs.is_empty() {
            // Stored before the evidence names them: a reference never dangles.
            self.engine.record_walk(blobs).await?;
        }
        Ok(kept)
    }

    /// The bytes of an attachment of run `id`, by the file's SHA-256, with its name.
    pub async fn attachment(
        &self,
        id: &str,
        sha256: &str,
    ) -> Result<(String, Option<String>, Vec<u8>), ServiceError> {
        let missing = || ServiceError::NotFound(format!("run `{id}` has no attachment {sha256}"));
        let journal = self.engine.walk_reads().journal_checked(id).await?;
        let found = journal
            .iter()
            .filter(|(key, _)| key.starts_with("evidence:"))
            .filter_map(|(_, entry)| entry.get("values").and_then(Value::as_object))
            .flat_map(|values| values.values())
            .find(|value| value["sha256"] == sha256 && value.get("stored").is_some())
            .cloned()
            .ok_or_else(missing)?;
        let blob = found["stored"]["$blob"].as_str().ok_or_else(missing)?;
        let content = self.engine.walk_reads().blob(blob).await?.ok_or_else(missing)?;
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(content.as_str().unwrap_or_default())
            .map_err(|e| ServiceError::Invalid(format!("attachment {sha256}: {e}")))?;
        let name = found["name"].as_str().unwrap_or("attachment").to_owned();
        let media_type = found["media_type"].as_str().map(str::to_owned);
        Ok((name, media_type, bytes))
    }
}

/// One attachment checked and made a blob: what the record keeps, and the blob.
fn attachment(name: &str, given: &Value) -> Result<(Value, Blob), ServiceError> {
    let invalid = |why: &str| {
        ServiceError::Invalid(format!(
            "evidence `{name}` is an attachment: {why} (give {{\"name\": FILE, \"content_base64\": …}})"
        ))
    };
    let file = given.get("name").and_then(Value::as_str).ok_or_else(|| invalid("no `name`"))?;
    let encoded = given
        .get("content_base64")
        .and_then(Value::as_str)
        .ok_or_else(|| invalid("no `content_base64`"))?;
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(encoded)
        .map_err(|_| invalid("`content_base64` is not base64"))?;
    if bytes.len() > MAX_ATTACHMENT_BYTES {
        return Err(invalid(&format!(
            "{} bytes is over the {} bytes an attachment may be",
            bytes.len(),
            MAX_ATTACHMENT_BYTES
        )));
    }
    let sha256 = jig_model::Sha256Hash::of_bytes(&bytes).to_hex();
    let (blob, reference) = Blob::of(&Value::String(encoded.to_owned()))
        .map_err(|e| ServiceError::Invalid(format!("evidence `{name}`: {e}")))?;
    let mut kept =
        json!({ "name": file, "bytes": bytes.len(), "sha256": sha256, "stored": reference });
    if let Some(media_type) = given.get("media_type").and_then(Value::as_str) {
        kept["media_type"] = json!(media_type);
    }
    Ok((kept, blob))
}
