//! Seed 001's batch jobs in the store: what a later process needs to follow a job a call
//! submitted, and the queries that find them.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use sqlx::Row;
use sqlx::any::AnyRow;

use crate::RunRecord;
use crate::error::AuditError;
use crate::records::ReplayIdentity;
use crate::rows::json_column;
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

/// One job as a list shows it: the job and where its run stands.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct JobSummary {
    /// The call that submitted it.
    pub request_id: String,
    /// The scheduler (`slurm`).
    pub engine: String,
    /// The job's id there.
    pub handle: String,
    /// Not collected yet.
    pub open: bool,
    /// When it was submitted (µs since the epoch).
    pub created_us: i64,
    /// When it last changed.
    pub updated_us: i64,
    /// The tool.
    pub tool: String,
    /// The run's id (seed 001's identity).
    pub run_id: String,
    /// Where the run stands: `queued`, `running`, then `succeeded`, `failed` or `cancelled`.
    pub state: crate::RunState,
    /// Who made the call.
    pub principal: Option<String>,
    /// How long the run took, once final.
    pub duration_ms: Option<i64>,
}

/// A query of jobs joined to their runs, as [`JobSummary`] reads them, ending in `$tail`.
macro_rules! summaries {
    ($tail:literal) => {
        concat!(
            "SELECT j.request_id, j.engine, j.handle, j.open, j.created_us, j.updated_us, ",
            "r.tool, r.run_id, r.state, r.principal, r.duration_ms ",
            "FROM jobs j JOIN runs r ON r.request_id = j.request_id ",
            $tail
        )
    };
}

fn summary_from_row(row: &AnyRow) -> Result<JobSummary, AuditError> {
    let open: i64 = row.try_get("open")?;
    let state: String = row.try_get("state")?;
    Ok(JobSummary {
        request_id: row.try_get("request_id")?,
        engine: row.try_get("engine")?,
        handle: row.try_get("handle")?,
        open: open != 0,
        created_us: row.try_get("created_us")?,
        updated_us: row.try_get("updated_us")?,
        tool: row.try_get("tool")?,
        run_id: row.try_get("run_id")?,
        state: crate::RunState::parse(&state)
            .ok_or_else(|| AuditError::Corrupt(format!("run state `{state}`")))?,
        principal: row.try_get("principal")?,
        duration_ms: row.try_get("duration_ms")?,
    })
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

    /// The latest `limit` jobs with their runs, newest first (one query for a list to show).
    pub async fn job_summaries(&self, limit: i64) -> Result<Vec<JobSummary>, AuditError> {
        let rows = sqlx::query(summaries!("ORDER BY j.created_us DESC LIMIT $1"))
            .bind(limit)
            .fetch_all(&self.pool)
            .await?;
        rows.iter().map(summary_from_row).collect()
    }

    /// The job a call submitted, with its run, if it submitted one.
    pub async fn job_summary(&self, request_id: &str) -> Result<Option<JobSummary>, AuditError> {
        let row = sqlx::query(summaries!("WHERE j.request_id = $1"))
            .bind(request_id)
            .fetch_optional(&self.pool)
            .await?;
        row.as_ref().map(summary_from_row).transpose()
    }

    /// The job a call submitted, if it submitted one.
    pub async fn job(&self, request_id: &str) -> Result<Option<JobRecord>, AuditError> {
        let row = sqlx::query("SELECT * FROM jobs WHERE request_id = $1")
            .bind(request_id)
            .fetch_optional(&self.pool)
            .await?;
        row.as_ref().map(job_from_row).transpose()
    }

    /// Seed 001's replay rule for batch jobs: the latest run of `identity` that has a recorded
    /// answer and did not fail — queued, running or succeeded — so the same job is never
    /// submitted twice.
    pub async fn batch_replay_source(
        &self,
        identity: &ReplayIdentity<'_>,
    ) -> Result<Option<RunRecord>, AuditError> {
        self.latest_run_of(identity, "state IN ('queued', 'running', 'succeeded')").await
    }
}
