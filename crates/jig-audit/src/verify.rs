//! Verifying the chain: every packet's hash and link from the first, then the side tables
//! (approvals, recorded responses, result blobs) against the packets that vouch for them.

use sqlx::Row;

use crate::error::AuditError;
use crate::packet::{GENESIS, Packet};
use crate::rows::{key_from_row, packet_from_row};
use crate::store::{Store, next};

/// The result of checking the chain.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verification {
    /// How many packets were checked.
    pub checked: i64,
    /// The first packet that does not verify, and why.
    pub first_broken: Option<(i64, String)>,
    /// The last seq and hash (the head), as stored.
    pub head: (i64, String),
    /// A side table (approvals, idempotency) that disagrees with the chain, and how.
    pub side_tables: Option<String>,
}

impl Store {
    /// Check every packet's hash and link, from the first; report the first that fails.
    pub async fn verify(&self) -> Result<Verification, AuditError> {
        let mut previous = GENESIS.to_owned();
        let mut expected_seq = 1;
        let mut checked = 0;
        loop {
            let page = self.packets(expected_seq - 1, 2000).await?;
            if page.is_empty() {
                break;
            }
            for packet in page {
                let problem = if packet.seq != expected_seq {
                    Some(format!(
                        "seq {} follows seq {} (a packet is missing)",
                        packet.seq,
                        expected_seq - 1
                    ))
                } else if packet.prev_hash != previous {
                    Some("its prev_hash is not the previous packet's hash".to_owned())
                } else if packet.expected_hash() != packet.hash {
                    Some("its content does not match its hash (it was altered)".to_owned())
                } else {
                    None
                };
                if let Some(reason) = problem {
                    return Ok(Verification {
                        checked,
                        first_broken: Some((packet.seq, reason)),
                        head: self.head().await?,
                        side_tables: None,
                    });
                }
                previous = packet.hash;
                expected_seq += 1;
                checked += 1;
            }
        }
        let head = self.head().await?;
        let first_broken = if head.0 != checked {
            Some((
                checked + 1,
                format!("the head says seq {} but the chain ends at {checked}", head.0),
            ))
        } else if head.1 != previous {
            Some((head.0, "the head's hash is not the last packet's".to_owned()))
        } else {
            None
        };
        let side_tables = if first_broken.is_none() { self.cross_check().await? } else { None };
        Ok(Verification { checked, first_broken, head, side_tables })
    }

    /// The side tables against the chain they come from: every approved (or used) approval has
    /// its intact `approval.decided` packet with the same token, and every recorded response
    /// that replays serve is the one its `tool.call.result` packet holds.
    async fn cross_check(&self) -> Result<Option<String>, AuditError> {
        let decided: Vec<Packet> =
            sqlx::query("SELECT * FROM packets WHERE kind = 'approval.decided'")
                .fetch_all(&self.pool)
                .await?
                .iter()
                .map(packet_from_row)
                .collect::<Result<_, _>>()?;
        let rows = sqlx::query(
            "SELECT id, state, request_hash, token_hash FROM approvals WHERE state IN ('approved', 'consumed')",
        )
        .fetch_all(&self.pool)
        .await?;
        for row in &rows {
            let id: String = row.try_get("id")?;
            let state: String = row.try_get("state")?;
            let request_hash: String = row.try_get("request_hash")?;
            let token_hash: Option<String> = row.try_get("token_hash")?;
            let in_chain = decided
                .iter()
                .filter_map(Packet::approval_decided)
                .any(|d| token_hash.as_deref().is_some_and(|t| d.grants(&id, t, &request_hash)));
            if !in_chain {
                return Ok(Some(format!(
                    "approval {id} is {state} in the approvals table, but no packet of the chain approved it with that token"
                )));
            }
        }
        if let Some(problem) = self.unsealed_journal_row().await? {
            return Ok(Some(problem));
        }
        // Every stored result still matches the hash its references name, and every reference
        // names a stored result.
        let mut stored = std::collections::HashSet::new();
        let mut blobs = sqlx::query("SELECT hash, size, body FROM blobs").fetch(&self.pool);
        while let Some(row) = next(&mut blobs).await {
            let row = row?;
            let hash: String = row.try_get("hash")?;
            let size: i64 = row.try_get("size")?;
            let body: Vec<u8> = row.try_get("body")?;
            if let Err(error) = crate::blob::decode(&hash, &body, size) {
                return Ok(Some(error.to_string()));
            }
            stored.insert(hash);
        }
        drop(blobs);
        let referencing =
            sqlx::query("SELECT seq, payload FROM packets WHERE payload LIKE '%\"$blob\"%'")
                .fetch_all(&self.pool)
                .await?;
        for row in &referencing {
            let seq: i64 = row.try_get("seq")?;
            let payload: String = row.try_get("payload")?;
            let payload: serde_json::Value = serde_json::from_str(&payload).unwrap_or_default();
            if let Some(hash) = payload.get("data").and_then(crate::blob::referenced)
                && !stored.contains(hash)
            {
                return Ok(Some(format!(
                    "packet {seq} names result blob {hash}, which is missing"
                )));
            }
        }
        let rows =
            sqlx::query("SELECT * FROM idempotency WHERE state = 'done' AND response IS NOT NULL")
                .fetch_all(&self.pool)
                .await?;
        for row in &rows {
            let key = key_from_row(row)?;
            let packets = self.packets_of(&key.request_id).await?;
            let response = key.response.unwrap_or(serde_json::Value::Null);
            let matches = packets.iter().any(|p| {
                matches!(p.kind.as_str(), "tool.call.result" | "tool.call.failed")
                    && p.data.get("replayed_from").is_none()
                    && p.data.get("data") == response.get("data")
            });
            if !matches {
                return Ok(Some(format!(
                    "the recorded response of request {} (idempotency key {}) is not the result its packet holds",
                    key.request_id, key.key
                )));
            }
        }
        Ok(None)
    }
}
