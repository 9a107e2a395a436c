//! Reading runbook runs and their journals back.

use serde_json::Value;
use sqlx::Row;
use sqlx::any::AnyRow;

use crate::error::AuditError;
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
