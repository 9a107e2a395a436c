//! The store's binding key: approvals are bound to a keyed hash of the exact request.
//!
//! The record shows arguments with secrets redacted (by name and by value), so that a token
//! typed into a command never reaches an export or a screen; the approval must still fit only
//! the exact request, clear arguments and all. A plain SHA-256 of the clear request, kept in
//! the chain, would let anyone holding an export test guesses of a redacted secret against it;
//! an HMAC under a key only the store holds does not. The key is made once, by whichever
//! process opens the store first, and read by every other (`store_keys`).

use jig_model::canonical::canonical_json;
use ring::hmac;
use ring::rand::{SecureRandom, SystemRandom};
use sqlx::{AnyPool, Row};

use crate::error::AuditError;

/// The key's name in `store_keys`.
const NAME: &str = "binding";

/// HMAC-SHA256 under the store's binding key.
#[derive(Clone)]
pub struct BindingKey(hmac::Key);

impl std::fmt::Debug for BindingKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("BindingKey(…)")
    }
}

impl BindingKey {
    /// The keyed hash of `value`'s canonical JSON (RFC 8785), as hex.
    pub fn hash(&self, value: &serde_json::Value) -> String {
        let tag = hmac::sign(&self.0, canonical_json(value).as_bytes());
        tag.as_ref().iter().map(|b| format!("{b:02x}")).collect()
    }

    /// A key from its hex form.
    fn from_hex(hex: &str) -> Result<Self, AuditError> {
        let bytes: Option<Vec<u8>> = (0..hex.len())
            .step_by(2)
            .map(|i| hex.get(i..i + 2).and_then(|b| u8::from_str_radix(b, 16).ok()))
            .collect();
        match bytes {
            Some(bytes) if bytes.len() == 32 => Ok(Self(hmac::Key::new(hmac::HMAC_SHA256, &bytes))),
            _ => Err(AuditError::Corrupt("the store's binding key is malformed".to_owned())),
        }
    }
}

/// The store's key, made now if it has none (the first writer wins; everyone reads its key).
pub(crate) async fn load_or_create(pool: &AnyPool) -> Result<BindingKey, AuditError> {
    let mut fresh = [0u8; 32];
    SystemRandom::new()
        .fill(&mut fresh)
        .map_err(|_| AuditError::Commit("no randomness for the store's binding key".to_owned()))?;
    let hex: String = fresh.iter().map(|b| format!("{b:02x}")).collect();
    sqlx::query(
        "INSERT INTO store_keys (name, value) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING",
    )
    .bind(NAME)
    .bind(&hex)
    .execute(pool)
    .await?;
    let row = sqlx::query("SELECT value FROM store_keys WHERE name = $1")
        .bind(NAME)
        .fetch_one(pool)
        .await?;
    BindingKey::from_hex(&row.try_get::<String, _>("value")?)
}
