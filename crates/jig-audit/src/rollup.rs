//! Rollups of the recorded calls — what `emit_metrics` reports — from the packets and runs of a
//! session (or all) since a time. They come from the store, so they cover every process that
//! used it, not only the one asking.

use sqlx::Row;

use crate::error::AuditError;
use crate::store::Store;

/// Counts and latencies of recorded calls.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Rollup {
    /// Calls requested (`tool.call.request` packets).
    pub calls: u64,
    /// Calls that ended in failure (`tool.call.failed`: refusals, errors, timeouts).
    pub failed: u64,
    /// Calls that went to a reviewer.
    pub pending_approval: u64,
    /// Runs refused by policy.
    pub denied: u64,
    /// Runs answered from an earlier record.
    pub replayed: u64,
    /// Durations of finished runs, milliseconds, sorted.
    pub durations_ms: Vec<f64>,
}

impl Rollup {
    /// The `q` quantile of the durations.
    pub fn quantile(&self, q: f64) -> Option<f64> {
        crate::series::quantile(&self.durations_ms, q)
    }

    /// The mean duration.
    pub fn mean(&self) -> Option<f64> {
        (!self.durations_ms.is_empty())
            .then(|| self.durations_ms.iter().sum::<f64>() / self.durations_ms.len() as f64)
    }
}

const PACKETS: &str = "SELECT kind, COUNT(*) AS n FROM packets WHERE ts_us >= $1 \
     AND kind IN ('tool.call.request', 'tool.call.failed', 'tool.call.pending_approval') GROUP BY kind";
const PACKETS_OF_SESSION: &str = "SELECT kind, COUNT(*) AS n FROM packets WHERE ts_us >= $1 AND session_id = $2 \
     AND kind IN ('tool.call.request', 'tool.call.failed', 'tool.call.pending_approval') GROUP BY kind";
// The most recent 100,000 runs are enough for percentiles.
const RUNS: &str = "SELECT state, duration_ms, replayed_from FROM runs WHERE created_us >= $1 \
     ORDER BY created_us DESC LIMIT 100000";
const RUNS_OF_SESSION: &str = "SELECT state, duration_ms, replayed_from FROM runs WHERE created_us >= $1 \
     AND session_id = $2 ORDER BY created_us DESC LIMIT 100000";

impl Store {
    /// The rollup of calls since `since_us` (microseconds since the epoch), of `session` when
    /// given.
    pub async fn rollup(&self, session: Option<&str>, since_us: i64) -> Result<Rollup, AuditError> {
        let packets = match session {
            Some(session) => sqlx::query(PACKETS_OF_SESSION).bind(since_us).bind(session),
            None => sqlx::query(PACKETS).bind(since_us),
        };
        let mut rollup = Rollup::default();
        for row in packets.fetch_all(self.pool()).await? {
            let kind: String = row.try_get("kind")?;
            let n = u64::try_from(row.try_get::<i64, _>("n")?).unwrap_or(0);
            match kind.as_str() {
                "tool.call.request" => rollup.calls = n,
                "tool.call.failed" => rollup.failed = n,
                _ => rollup.pending_approval = n,
            }
        }
        let runs = match session {
            Some(session) => sqlx::query(RUNS_OF_SESSION).bind(since_us).bind(session),
            None => sqlx::query(RUNS).bind(since_us),
        };
        for row in runs.fetch_all(self.pool()).await? {
            let state: String = row.try_get("state")?;
            rollup.denied += u64::from(state == "denied");
            rollup.replayed +=
                u64::from(row.try_get::<Option<String>, _>("replayed_from")?.is_some());
            if let Some(ms) = row.try_get::<Option<i64>, _>("duration_ms")? {
                rollup.durations_ms.push(ms as f64);
            }
        }
        rollup.durations_ms.sort_by(f64::total_cmp);
        Ok(rollup)
    }
}
