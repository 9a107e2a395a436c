//! Reading runbook runs and their journals back.

use serde_json::Value;
use sqlx::Row;
use sqlx::any::AnyRow;

use crate::error::AuditError;
use crate::payload::JournalSeal;
use crate::records::RunbookRunRecord;
use crate::rows::json_column;
use crate::store::Store;

impl Store {
    /// A run's journal entries, by key.
    pub async fn runbook_journal(&self, run_id: &str) -> Result<Vec<(String, Value)>, AuditError> {
        let rows =
            sqlx::query("SELECT key, entry FROM runbook_journal WHERE run_id = $1 ORDER BY key")
                .bind(run_id)
                .fetch_all(&self.pool)
                .await?;
        rows.iter()
            .map(|row| {
                let key: String = row.try_get("key")?;
                let entry: String = row.try_get("entry")?;
                let entry = serde_json::from_str(&entry)
                    .map_err(|e| AuditError::Corrupt(format!("journal entry {key}: {e}")))?;
                Ok((key, entry))
            })
            .collect()
    }

    /// How many of a run's journal entries have keys beginning with `prefix` (a constant of
    /// the journal's, without `%` or `_`): a walk under way asks whether someone paused the run
    /// meanwhile.
    pub async fn runbook_journal_count(
        &self,
        run_id: &str,
        prefix: &str,
    ) -> Result<usize, AuditError> {
        debug_assert!(!prefix.contains(['%', '_']), "a LIKE pattern: {prefix}");
        let count: i64 = sqlx::query_scalar(
            "SELECT COUNT(*) FROM runbook_journal WHERE run_id = $1 AND key LIKE $2",
        )
        .bind(run_id)
        .bind(format!("{prefix}%"))
        .fetch_one(&self.pool)
        .await?;
        Ok(usize::try_from(count).unwrap_or(0))
    }

    /// A run's journal entries, by key, each vouched for by the chain — what a resumed run does
    /// rests on them, so a row changed behind the chain is refused here rather than found by a
    /// later `verify`. Every row must be sealed, as it is, by one of the run's packets; each
    /// sealing packet must match its own hash; and the packet after it must link to it.
    pub async fn runbook_journal_checked(
        &self,
        run_id: &str,
    ) -> Result<Vec<(String, Value)>, AuditError> {
        // The rows first, then the packets: a row and its packet are committed together and
        // packets are only ever appended, so every row read here has its seal among the
        // packets read after. (The other order takes a row another process recorded between
        // the two reads — a pause from another instance — for one changed behind the chain.)
        let journal = self.runbook_journal(run_id).await?;
        let rows = sqlx::query(
            "SELECT p.*, n.prev_hash AS next_prev_hash FROM packets p \
             LEFT JOIN packets n ON n.seq = p.seq + 1 \
             WHERE p.run_id = $1 AND p.kind LIKE 'runbook.%'",
        )
        .bind(run_id)
        .fetch_all(&self.pool)
        .await?;
        let mut sealed = std::collections::HashMap::new();
        for row in &rows {
            let packet = crate::rows::packet_from_row(row)?;
            let Some(JournalSeal { key, hash }) = packet.journal_seal() else { continue };
            let next: Option<String> = row.try_get("next_prev_hash")?;
            let linked = next.as_deref().is_none_or(|next| next == packet.hash);
            if packet.expected_hash() != packet.hash || !linked {
                return Err(AuditError::Tampered(format!(
                    "runbook run {run_id}: packet {} that records `{key}` was altered",
                    packet.seq
                )));
            }
            sealed.insert(key, hash);
        }
        for (key, entry) in &journal {
            if sealed.get(key) != Some(&JournalSeal::of(key, entry).hash) {
                return Err(AuditError::Tampered(format!(
                    "runbook run {run_id}: journal entry `{key}` does not match the packet that recorded it (changed outside Jig); the run will not go on"
                )));
            }
        }
        Ok(journal)
    }

    /// The latest runbook runs, newest first.
    pub async fn runbook_runs(&self, limit: i64) -> Result<Vec<RunbookRunRecord>, AuditError> {
        let rows =
            sqlx::query("SELECT * FROM runbook_runs ORDER BY created_us DESC, id DESC LIMIT $1")
                .bind(limit)
                .fetch_all(&self.pool)
                .await?;
        rows.iter().map(runbook_run_from_row).collect()
    }

    /// One runbook run.
    pub async fn runbook_run(&self, id: &str) -> Result<Option<RunbookRunRecord>, AuditError> {
        let row = sqlx::query("SELECT * FROM runbook_runs WHERE id = $1")
            .bind(id)
            .fetch_optional(&self.pool)
            .await?;
        row.as_ref().map(runbook_run_from_row).transpose()
    }
}

impl Store {
    /// The first runbook journal row that no packet of the chain seals as it is, if any.
    pub(crate) async fn unsealed_journal_row(&self) -> Result<Option<String>, AuditError> {
        // The rows before the packets, for the reason `runbook_journal_checked` gives.
        let rows = sqlx::query("SELECT run_id, key, entry FROM runbook_journal")
            .fetch_all(&self.pool)
            .await?;
        let packets =
            sqlx::query("SELECT run_id, payload FROM packets WHERE kind LIKE 'runbook.%'")
                .fetch_all(&self.pool)
                .await?;
        let mut sealed = std::collections::HashSet::new();
        for row in &packets {
            let run_id: Option<String> = row.try_get("run_id")?;
            let payload: String = row.try_get("payload")?;
            let payload: Value = serde_json::from_str(&payload).unwrap_or_default();
            if let (Some(run_id), Some(seal)) = (run_id, JournalSeal::in_data(&payload)) {
                sealed.insert((run_id, seal.key, seal.hash));
            }
        }
        for row in &rows {
            let run_id: String = row.try_get("run_id")?;
            let key: String = row.try_get("key")?;
            let entry: String = row.try_get("entry")?;
            let entry: Value = serde_json::from_str(&entry).unwrap_or(Value::Null);
            let hash = JournalSeal::of(&key, &entry).hash;
            if !sealed.contains(&(run_id.clone(), key.clone(), hash)) {
                return Ok(Some(format!(
                    "runbook run {run_id}: journal entry `{key}` does not match the packet that recorded it (changed outside Jig)"
                )));
            }
        }
        Ok(None)
    }
}

fn runbook_run_from_row(row: &AnyRow) -> Result<RunbookRunRecord, AuditError> {
    Ok(RunbookRunRecord {
        id: row.try_get("id")?,
        runbook: row.try_get("runbook")?,
        hash: row.try_get("hash")?,
        status: row.try_get("status")?,
        started_by: row.try_get("started_by")?,
        created_us: row.try_get("created_us")?,
        updated_us: row.try_get("updated_us")?,
        summary: json_column(row, "summary")?,
    })
}
