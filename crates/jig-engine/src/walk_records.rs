//! What a runbook walk records, in the engine's words. `jig-runbook` says what happened (a
//! journal entry with the packet that seals it, the run's state, an attachment's bytes); the
//! engine turns that into the store's operations — the engine is the only code that builds
//! audit `Op`s — and refuses what a walk may not write: a walk's packets are `runbook.*` ones,
//! never a call's or an approval's, which only the call pipeline records.

use jig_audit::blob::Blob;
use jig_audit::{AuditError, NewPacket, Op, Outcome, RunbookRunRecord};
use serde_json::Value;

use crate::Engine;

/// One thing a walk records.
#[derive(Debug, Clone)]
#[expect(
    clippy::large_enum_variant,
    reason = "a few records per step, moved into the store's operations at once, as `Op` does"
)]
pub enum WalkRecord {
    /// Under `key` of run `run_id`, unless something is there already; `packet` seals it in
    /// the chain (or the packet after it does, for entries written with a call's outcome).
    Journal {
        /// The run.
        run_id: String,
        /// The entry's key.
        key: String,
        /// The entry.
        entry: Value,
        /// The packet that records it.
        packet: Option<NewPacket>,
    },
    /// The run's state as it is now.
    SaveRun(Box<RunbookRunRecord>),
    /// An attachment's bytes, kept by their hash before anything names them.
    Blob(Blob),
}

impl WalkRecord {
    /// The store's operation, once the record is one a walk may make.
    fn into_op(self) -> Result<Op, AuditError> {
        Ok(match self {
            Self::Journal { run_id, key, entry, packet } => {
                if let Some(packet) = &packet
                    && !packet.kind.as_str().starts_with("runbook.")
                {
                    return Err(AuditError::BadQuery(format!(
                        "a runbook walk records runbook packets, not `{}`",
                        packet.kind.as_str()
                    )));
                }
                Op::Journal { run_id, key, entry, packet }
            }
            Self::SaveRun(record) => Op::SaveRunbookRun(record),
            Self::Blob(blob) => Op::PutBlob(blob),
        })
    }
}

/// `records` as the store's operations, in order (a [`crate::CommitHook`]'s too).
pub(crate) fn ops_of(records: Vec<WalkRecord>) -> Result<Vec<Op>, AuditError> {
    records.into_iter().map(WalkRecord::into_op).collect()
}

impl Engine {
    /// Record what a walk did, in one transaction, in order; each record's outcome.
    pub async fn record_walk(&self, records: Vec<WalkRecord>) -> Result<Vec<Outcome>, AuditError> {
        self.store.apply(ops_of(records)?).await
    }
}

#[cfg(test)]
mod tests {
    use super::{WalkRecord, ops_of};
    use jig_audit::{NewPacket, PacketKind};
    use serde_json::json;

    fn journal(kind: PacketKind) -> WalkRecord {
        WalkRecord::Journal {
            run_id: "run".to_owned(),
            key: "step:1".to_owned(),
            entry: json!({}),
            packet: Some(NewPacket {
                kind,
                session_id: None,
                thread_id: None,
                principal: Some("alice".to_owned()),
                request_id: None,
                run_id: Some("run".to_owned()),
                tool: None,
                args_hash: None,
                data: json!({}),
            }),
        }
    }

    #[test]
    fn a_walk_records_its_own_packets_and_never_a_calls() {
        assert!(ops_of(vec![journal(PacketKind::RunbookStep)]).is_ok());
        for kind in [PacketKind::CallResult, PacketKind::ApprovalDecided, PacketKind::CallRequest] {
            let refused = ops_of(vec![journal(kind)]).expect_err("refused");
            assert!(refused.to_string().contains(kind.as_str()), "{refused}");
        }
    }
}
