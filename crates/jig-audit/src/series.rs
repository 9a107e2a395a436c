//! Calls over time, from the runs table: what the workbench's metrics charts draw. A window is
//! cut into equal buckets; each tool gets its calls, failures, denials and latency percentiles
//! per bucket, and the window as a whole gets its denials by rule, its busiest sessions and its
//! approvals by outcome.

use std::collections::HashMap;

use serde::Serialize;
use sqlx::Row;

use crate::error::AuditError;
use crate::store::Store;

/// The most buckets a window may be cut into.
pub const MAX_BUCKETS: u32 = 240;

/// How many sessions the busiest list keeps.
const BUSIEST: usize = 10;

/// Which window, cut how.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SeriesQuery {
    /// The window's start (µs since the epoch), inclusive.
    pub since_us: i64,
    /// Its end, exclusive.
    pub until_us: i64,
    /// How many buckets (1 to [`MAX_BUCKETS`]).
    pub buckets: u32,
}

/// One line of charts: a value per bucket.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Line {
    /// Calls that got a run.
    pub calls: Vec<u64>,
    /// Runs that failed (tool errors, timeouts, crashes).
    pub failed: Vec<u64>,
    /// Runs the policy refused.
    pub denied: Vec<u64>,
    /// Median execution time (ms); `null` where the bucket has none.
    pub p50: Vec<Option<f64>>,
    /// 95th percentile (ms).
    pub p95: Vec<Option<f64>>,
    /// 99th percentile (ms).
    pub p99: Vec<Option<f64>>,
}

/// One tool's line and its totals over the window.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ToolLine {
    /// The tool.
    pub tool: String,
    /// Its calls in the window.
    pub calls: u64,
    /// Its failures in the window.
    pub failed: u64,
    /// Its calls the policy refused in the window.
    pub denied: u64,
    /// Median execution time (ms) over the whole window; `null` when nothing ran.
    pub p50: Option<f64>,
    /// 95th percentile over the window (ms).
    pub p95: Option<f64>,
    /// 99th percentile over the window (ms).
    pub p99: Option<f64>,
    /// Per bucket.
    pub line: Line,
}

/// Something counted over the window: a rule, a session.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Count {
    /// What is counted.
    pub name: String,
    /// How often.
    pub count: u64,
}

/// Calls over a window.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Series {
    /// Where the first bucket starts (µs since the epoch).
    pub start_us: i64,
    /// How long each bucket is (µs).
    pub bucket_us: i64,
    /// Every tool together.
    pub overall: Line,
    /// Each tool with calls in the window, busiest first.
    pub tools: Vec<ToolLine>,
    /// Denied runs by the rule that denied them, most first.
    pub denials: Vec<Count>,
    /// The sessions with the most calls, most first.
    pub sessions: Vec<Count>,
    /// The approvals asked in the window, by what became of them: `approved` (granted, or
    /// granted and used), `denied`, `pending`, `expired`, `withdrawn`.
    #[serde(default)]
    pub approvals: Vec<Count>,
}

/// A line being filled: durations kept per bucket until the percentiles are taken.
struct Accumulator {
    calls: Vec<u64>,
    failed: Vec<u64>,
    denied: Vec<u64>,
    durations: Vec<Vec<f64>>,
}

impl Accumulator {
    fn new(buckets: usize) -> Self {
        Self {
            calls: vec![0; buckets],
            failed: vec![0; buckets],
            denied: vec![0; buckets],
            durations: vec![Vec::new(); buckets],
        }
    }

    fn add(&mut self, bucket: usize, state: &str, duration_ms: Option<i64>) {
        self.calls[bucket] += 1;
        self.failed[bucket] += u64::from(state == "failed");
        self.denied[bucket] += u64::from(state == "denied");
        if let Some(ms) = duration_ms {
            self.durations[bucket].push(ms as f64);
        }
    }

    fn finish(self) -> Line {
        self.finish_with_window().0
    }

    /// The line, and the window's own percentiles (of every duration, not of the buckets'
    /// percentiles, which cannot be combined).
    fn finish_with_window(self) -> (Line, [Option<f64>; 3]) {
        let mut line =
            Line { calls: self.calls, failed: self.failed, denied: self.denied, ..Line::default() };
        let mut all = Vec::with_capacity(self.durations.iter().map(Vec::len).sum());
        for mut durations in self.durations {
            durations.sort_by(f64::total_cmp);
            line.p50.push(quantile(&durations, 0.50));
            line.p95.push(quantile(&durations, 0.95));
            line.p99.push(quantile(&durations, 0.99));
            all.extend(durations);
        }
        all.sort_by(f64::total_cmp);
        let window = [quantile(&all, 0.50), quantile(&all, 0.95), quantile(&all, 0.99)];
        (line, window)
    }
}

/// The nearest-rank quantile of sorted values.
pub(crate) fn quantile(sorted: &[f64], q: f64) -> Option<f64> {
    let at = ((sorted.len() as f64 * q).ceil() as usize).checked_sub(1)?;
    sorted.get(at).copied()
}

fn most_first(counts: HashMap<String, u64>, keep: usize) -> Vec<Count> {
    let mut counts: Vec<Count> =
        counts.into_iter().map(|(name, count)| Count { name, count }).collect();
    counts.sort_by(|a, b| b.count.cmp(&a.count).then_with(|| a.name.cmp(&b.name)));
    counts.truncate(keep);
    counts
}

const RUNS: &str = "SELECT tool, state, rule, session_id, created_us, duration_ms FROM runs \
     WHERE created_us >= $1 AND created_us < $2";

const APPROVALS: &str = "SELECT state, COUNT(*) AS n FROM approvals \
     WHERE created_us >= $1 AND created_us < $2 GROUP BY state";

impl Store {
    /// Calls over the window of `query`, per tool and bucket.
    pub async fn series(&self, query: SeriesQuery) -> Result<Series, AuditError> {
        if query.until_us <= query.since_us {
            return Err(AuditError::BadQuery("`until` must be after `since`".to_owned()));
        }
        if !(1..=MAX_BUCKETS).contains(&query.buckets) {
            return Err(AuditError::BadQuery(format!(
                "`buckets` must be from 1 to {MAX_BUCKETS}, not {}",
                query.buckets
            )));
        }
        let buckets = query.buckets as usize;
        // In i128: any two i64 instants are a valid span there.
        let span = i128::from(query.until_us) - i128::from(query.since_us);
        // Rounded up, so the last bucket ends at or after `until`.
        let bucket_us =
            i64::try_from((span + i128::from(query.buckets) - 1) / i128::from(query.buckets))
                .map_err(|_| {
                    AuditError::BadQuery(
                        "the window is too long: use more buckets or a later `since`".to_owned(),
                    )
                })?;
        let mut overall = Accumulator::new(buckets);
        let mut tools: HashMap<String, Accumulator> = HashMap::new();
        let mut denials: HashMap<String, u64> = HashMap::new();
        let mut sessions: HashMap<String, u64> = HashMap::new();
        let rows = sqlx::query(RUNS)
            .bind(query.since_us)
            .bind(query.until_us)
            .fetch_all(self.pool())
            .await?;
        for row in rows {
            let tool: String = row.try_get("tool")?;
            let state: String = row.try_get("state")?;
            let created: i64 = row.try_get("created_us")?;
            let duration: Option<i64> = row.try_get("duration_ms")?;
            let offset = (i128::from(created) - i128::from(query.since_us)) / i128::from(bucket_us);
            let bucket = usize::try_from(offset).unwrap_or(0).min(buckets - 1);
            overall.add(bucket, &state, duration);
            tools
                .entry(tool)
                .or_insert_with(|| Accumulator::new(buckets))
                .add(bucket, &state, duration);
            if state == "denied" {
                let rule: Option<String> = row.try_get("rule")?;
                *denials.entry(rule.unwrap_or_else(|| "(no rule)".to_owned())).or_default() += 1;
            }
            if let Some(session) = row.try_get::<Option<String>, _>("session_id")? {
                *sessions.entry(session).or_default() += 1;
            }
        }
        let mut tools: Vec<ToolLine> = tools
            .into_iter()
            .map(|(tool, acc)| {
                let (line, [p50, p95, p99]) = acc.finish_with_window();
                ToolLine {
                    tool,
                    calls: line.calls.iter().sum(),
                    failed: line.failed.iter().sum(),
                    denied: line.denied.iter().sum(),
                    p50,
                    p95,
                    p99,
                    line,
                }
            })
            .collect();
        tools.sort_by(|a, b| b.calls.cmp(&a.calls).then_with(|| a.tool.cmp(&b.tool)));
        let mut approvals: HashMap<String, u64> = HashMap::new();
        for row in sqlx::query(APPROVALS)
            .bind(query.since_us)
            .bind(query.until_us)
            .fetch_all(self.pool())
            .await?
        {
            let state: String = row.try_get("state")?;
            let n: i64 = row.try_get("n")?;
            // A granted approval that was then used is still one a person approved.
            let outcome = if state == "consumed" { "approved".to_owned() } else { state };
            *approvals.entry(outcome).or_default() += u64::try_from(n).unwrap_or(0);
        }
        Ok(Series {
            start_us: query.since_us,
            bucket_us,
            overall: overall.finish(),
            tools,
            denials: most_first(denials, usize::MAX),
            sessions: most_first(sessions, BUSIEST),
            approvals: most_first(approvals, usize::MAX),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::quantile;

    #[test]
    fn nearest_rank_quantiles() {
        let values: Vec<f64> = (1..=100).map(f64::from).collect();
        assert_eq!(quantile(&values, 0.50), Some(50.0));
        assert_eq!(quantile(&values, 0.95), Some(95.0));
        assert_eq!(quantile(&values, 0.99), Some(99.0));
        assert_eq!(quantile(&[7.0], 0.99), Some(7.0));
        assert_eq!(quantile(&[], 0.5), None);
    }
}
