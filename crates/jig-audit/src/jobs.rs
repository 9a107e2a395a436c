//! Seed 001's batch jobs in the store: what a later process needs to follow a job a call
//! submitted, and the queries that find them.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use sqlx::Row;
use sqlx::any::AnyRow;

use crate::RunRecord;
use crate::error::AuditError;
use crate::rows::{json_column, run_from_row};
use crate::store::Store;

/// A job handed to a scheduler.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct JobRecord {
    /// The call that submitted it.
    pub request_id: String,
    /// The scheduler (`slurm`).
    pub engine: String,
    /// The job's id there.
    pub handle: String,
    /// Its run directory.
    pub dir: String,
    /// The tool's definition when it was submitted (the outputs to collect).
    pub tool: Value,
    /// Not collected yet.
    pub open: bool,
    /// When it was submitted (µs since the epoch).
    pub created_us: i64,
    /// When it last changed.
    pub updated_us: i64,
}

fn job_from_row(row: &AnyRow) -> Result<JobRecord, AuditError> {
    let open: i64 = row.try_get("open")?;
    Ok(JobRecord {
        request_id: row.try_get("request_id")?,
        engine: row.try_get("engine")?,
        handle: row.try_get("handle")?,
        dir: row.try_get("dir")?,
        tool: json_column(row, "tool")?.unwrap_or(Value::Null),
        open: open != 0,
        created_us: row.try_get("created_us")?,
        updated_us: row.try_get("updated_us")?,
    })
}

impl Store {
    /// Jobs not collected yet, oldest first.
    pub async fn open_jobs(&self) -> Result<Vec<JobRecord>, AuditError> {
        let rows = sqlx::query("SELECT * FROM jobs WHERE open = 1 ORDER BY created_us")
            .fetch_all(&self.pool)
            .await?;
        rows.iter().map(job_from_row).collect()
    }

    /// The latest `limit` jobs, newest first.
    pub async fn recent_jobs(&self, limit: i64) -> Result<Vec<JobRecord>, AuditError> {
        let rows = sqlx::query("SELECT * FROM jobs ORDER BY created_us DESC LIMIT $1")
            .bind(limit)
            .fetch_all(&self.pool)
            .await?;
        rows.iter().map(job_from_row).collect()
    }

    /// The job a call submitted, if it submitted one.
    pub async fn job(&self, request_id: &str) -> Result<Option<JobRecord>, AuditError> {
        let row = sqlx::query("SELECT * FROM jobs WHERE request_id = $1")
            .bind(request_id)
            .fetch_optional(&self.pool)
            .await?;
        row.as_ref().map(job_from_row).transpose()
    }

    /// Seed 001's replay rule for batch jobs: the first run of `run_id` that has a recorded
    /// answer and did not fail — queued, running or succeeded — so the same job is never
    /// submitted twice.
    pub async fn batch_replay_source(&self, run_id: &str) -> Result<Option<RunRecord>, AuditError> {
        let row = sqlx::query(
            "SELECT * FROM runs WHERE run_id = $1 AND state IN ('queued', 'running', 'succeeded') \
             AND response IS NOT NULL AND replayed_from IS NULL ORDER BY created_us LIMIT 1",
        )
        .bind(run_id)
        .fetch_optional(&self.pool)
        .await?;
        row.as_ref().map(run_from_row).transpose()
    }
}
