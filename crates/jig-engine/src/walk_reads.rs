//! What the runbook service reads back of a run: its record, its journal, the packets it
//! appended, the approvals its steps wait on and the evidence it keeps. The writes go through
//! [`crate::WalkRecord`]; the reads through [`WalkReads`], so the service never holds the
//! store itself.

use jig_audit::{ApprovalRecord, AuditError, Packet, RunbookRunRecord, Store};
use serde_json::Value;

use crate::Engine;

/// Reads of runbook runs from one engine's store.
#[derive(Debug, Clone, Copy)]
pub struct WalkReads<'a> {
    store: &'a Store,
}

impl Engine {
    /// What the runbook service reads back of its runs.
    pub fn walk_reads(&self) -> WalkReads<'_> {
        WalkReads { store: &self.store }
    }
}

impl WalkReads<'_> {
    /// Run `id`'s record.
    pub async fn run(&self, id: &str) -> Result<Option<RunbookRunRecord>, AuditError> {
        self.store.runbook_run(id).await
    }

    /// The latest runs, newest first.
    pub async fn runs(&self, limit: i64) -> Result<Vec<RunbookRunRecord>, AuditError> {
        self.store.runbook_runs(limit).await
    }

    /// Run `id`'s journal, by key.
    pub async fn journal(&self, id: &str) -> Result<Vec<(String, Value)>, AuditError> {
        self.store.runbook_journal(id).await
    }

    /// Run `id`'s journal, each entry checked against the packet recorded with it.
    pub async fn journal_checked(&self, id: &str) -> Result<Vec<(String, Value)>, AuditError> {
        self.store.runbook_journal_checked(id).await
    }

    /// How many of run `id`'s journal keys start with `prefix`.
    pub async fn journal_count(&self, id: &str, prefix: &str) -> Result<usize, AuditError> {
        self.store.runbook_journal_count(id, prefix).await
    }

    /// The packets run `id` appended, in order.
    pub async fn packets(&self, id: &str) -> Result<Vec<Packet>, AuditError> {
        self.store.packets_of_run(id).await
    }

    /// Approval `id`.
    pub async fn approval(&self, id: &str) -> Result<Option<ApprovalRecord>, AuditError> {
        self.store.approval(id).await
    }

    /// The approval of the request whose hash is `request_hash`.
    pub async fn approval_for_request(
        &self,
        request_hash: &str,
    ) -> Result<Option<ApprovalRecord>, AuditError> {
        self.store.approval_for_request(request_hash).await
    }

    /// A kept blob (an attachment's bytes, a large result), by its hash.
    pub async fn blob(&self, hash: &str) -> Result<Option<Value>, AuditError> {
        self.store.blob(hash).await
    }
}
