//! Seed 003's metrics as a snapshot: latencies, error rate, registry size, counts, bytes and
//! files touched.

use jig_model::ApprovalId;
use std::collections::VecDeque;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde::Serialize;
use serde_json::{Map, Value, json};

/// How many recent latencies percentiles are computed over.
const WINDOW: usize = 4096;

/// How many recent calls rollups (by session, over a window) can see.
const RECENT_CALLS: usize = 16_384;

/// Running totals.
#[derive(Debug, Default)]
pub struct Metrics {
    inner: Mutex<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    dispatch: Latencies,
    select: Latencies,
    calls: u64,
    errors: u64,
    denied: u64,
    replayed: u64,
    /// Calls ever answered "waits for approval".
    waited_approval: u64,
    /// The approvals calls made here wait on now: a decision (here or heard from another
    /// process) takes its call out, and a denial counts it denied.
    waiting: std::collections::HashSet<ApprovalId>,
    bytes_in: u64,
    bytes_out: u64,
    files_touched: u64,
    recent: VecDeque<(Instant, String, CallRecord)>,
}

#[derive(Debug, Default)]
struct Latencies {
    recent: VecDeque<f64>,
    count: u64,
    total_ms: f64,
}

impl Latencies {
    fn record(&mut self, elapsed: Duration) {
        let ms = elapsed.as_secs_f64() * 1e3;
        if self.recent.len() == WINDOW {
            self.recent.pop_front();
        }
        self.recent.push_back(ms);
        self.count += 1;
        self.total_ms += ms;
    }

    fn summary(&self) -> LatencySummary {
        let mut sorted: Vec<f64> = self.recent.iter().copied().collect();
        sorted.sort_by(f64::total_cmp);
        let at = |q: f64| {
            sorted.get(((sorted.len() as f64 * q).ceil() as usize).saturating_sub(1)).copied()
        };
        LatencySummary {
            count: self.count,
            mean: if self.count == 0 { None } else { Some(self.total_ms / self.count as f64) },
            p50: at(0.5),
            p99: at(0.99),
        }
    }
}

/// One finished call, as metrics see it.
#[derive(Debug, Clone, Copy, Default)]
pub struct CallRecord {
    /// Wall time of dispatch.
    pub elapsed: Duration,
    /// `ok` of the response.
    pub ok: bool,
    /// Refused by policy.
    pub denied: bool,
    /// Answered from the audit record.
    pub replayed: bool,
    /// Waiting for approval.
    pub pending_approval: bool,
    /// Argument bytes.
    pub bytes_in: u64,
    /// Result bytes.
    pub bytes_out: u64,
    /// Files written.
    pub files_touched: u64,
}

impl Metrics {
    /// Record a dispatch made in `session`.
    pub fn record_call(&self, session: &str, call: CallRecord) {
        let Ok(mut inner) = self.inner.lock() else { return };
        if inner.recent.len() == RECENT_CALLS {
            inner.recent.pop_front();
        }
        inner.recent.push_back((Instant::now(), session.to_owned(), call));
        inner.dispatch.record(call.elapsed);
        inner.calls += 1;
        inner.errors += u64::from(!call.ok);
        inner.denied += u64::from(call.denied);
        inner.replayed += u64::from(call.replayed);
        inner.waited_approval += u64::from(call.pending_approval);
        inner.bytes_in += call.bytes_in;
        inner.bytes_out += call.bytes_out;
        inner.files_touched += call.files_touched;
    }

    /// A call made here waits on approval `id` (a repeat of the same call adds nothing).
    pub fn waiting(&self, id: ApprovalId) {
        if let Ok(mut inner) = self.inner.lock()
            && inner.waiting.len() < RECENT_CALLS
        {
            inner.waiting.insert(id);
        }
    }

    /// Approval `id` was decided as `verdict`: a call of this process that waited on it waits
    /// no more, and one a person denied is a denied call. Idempotent: a decision made here is
    /// also heard back.
    pub fn decided(&self, id: &ApprovalId, verdict: jig_model::Verdict) {
        if let Ok(mut inner) = self.inner.lock()
            && inner.waiting.remove(id)
            && verdict == jig_model::Verdict::Denied
        {
            inner.denied += 1;
        }
    }

    /// Record a selection.
    pub fn record_select(&self, elapsed: Duration) {
        if let Ok(mut inner) = self.inner.lock() {
            inner.select.record(elapsed);
        }
    }

    /// The current values.
    pub fn snapshot(&self, registry_size: usize) -> MetricsSnapshot {
        let Ok(inner) = self.inner.lock() else { return MetricsSnapshot::default() };
        MetricsSnapshot {
            select_latency_ms: inner.select.summary(),
            dispatch_latency_ms: inner.dispatch.summary(),
            dispatch_error_rate: if inner.calls == 0 {
                0.0
            } else {
                inner.errors as f64 / inner.calls as f64
            },
            registry_size: registry_size as u64,
            calls: inner.calls,
            errors: inner.errors,
            denied: inner.denied,
            replayed: inner.replayed,
            pending_approval: inner.waiting.len() as u64,
            waited_approval: inner.waited_approval,
            bytes_in: inner.bytes_in,
            bytes_out: inner.bytes_out,
            files_touched: inner.files_touched,
        }
    }
}

impl Metrics {
    /// Rollups of the recent calls (the last 16,384) of `session` (all when `None`) made within
    /// `window` (all when `None`): counts, error rate, bytes, files touched and latency.
    pub fn rollup(&self, session: Option<&str>, window: Option<Duration>) -> Map<String, Value> {
        let Ok(inner) = self.inner.lock() else { return Map::new() };
        let now = Instant::now();
        let calls: Vec<&CallRecord> = inner
            .recent
            .iter()
            .filter(|(at, s, _)| {
                session.is_none_or(|w| w == s)
                    && window.is_none_or(|w| now.duration_since(*at) <= w)
            })
            .map(|(_, _, call)| call)
            .collect();
        let mut latencies = Latencies::default();
        for call in &calls {
            latencies.record(call.elapsed);
        }
        let summary = latencies.summary();
        let count = |f: fn(&CallRecord) -> bool| calls.iter().filter(|c| f(c)).count() as f64;
        let sum = |f: fn(&CallRecord) -> u64| calls.iter().map(|c| f(c)).sum::<u64>() as f64;
        let total = calls.len() as f64;
        let errors = count(|c| !c.ok);
        let mut out = Map::new();
        for (name, value) in [
            ("calls", Some(total)),
            ("errors", Some(errors)),
            ("error_rate", Some(if total == 0.0 { 0.0 } else { errors / total })),
            ("denied", Some(count(|c| c.denied))),
            ("replayed", Some(count(|c| c.replayed))),
            ("pending_approval", Some(count(|c| c.pending_approval))),
            ("bytes_in", Some(sum(|c| c.bytes_in))),
            ("bytes_out", Some(sum(|c| c.bytes_out))),
            ("files_touched", Some(sum(|c| c.files_touched))),
            ("latency_mean_ms", summary.mean),
            ("latency_p50_ms", summary.p50),
            ("latency_p99_ms", summary.p99),
        ] {
            if let Some(value) = value {
                out.insert(name.to_owned(), json!(value));
            }
        }
        out
    }
}

/// Latency over the recent window, in milliseconds.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct LatencySummary {
    /// Samples ever recorded.
    pub count: u64,
    /// Mean over all samples.
    pub mean: Option<f64>,
    /// Median of the recent window.
    pub p50: Option<f64>,
    /// 99th percentile of the recent window.
    pub p99: Option<f64>,
}

/// Seed 003's metrics, named as it names them.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct MetricsSnapshot {
    /// `tools.select.latency_ms`.
    #[serde(rename = "tools.select.latency_ms")]
    pub select_latency_ms: LatencySummary,
    /// `tools.dispatch.latency_ms`.
    #[serde(rename = "tools.dispatch.latency_ms")]
    pub dispatch_latency_ms: LatencySummary,
    /// `tools.dispatch.error_rate`.
    #[serde(rename = "tools.dispatch.error_rate")]
    pub dispatch_error_rate: f64,
    /// `tools.registry.size`.
    #[serde(rename = "tools.registry.size")]
    pub registry_size: u64,
    /// Calls dispatched.
    #[serde(rename = "tools.dispatch.count")]
    pub calls: u64,
    /// Calls answered with `ok: false`.
    #[serde(rename = "tools.dispatch.errors")]
    pub errors: u64,
    /// Calls refused: by the policy, or by a person deciding their approval.
    #[serde(rename = "tools.dispatch.denied")]
    pub denied: u64,
    /// Calls answered from the audit record.
    #[serde(rename = "tools.dispatch.replayed")]
    pub replayed: u64,
    /// Calls waiting for approval now.
    #[serde(rename = "tools.dispatch.pending_approval")]
    pub pending_approval: u64,
    /// Calls ever answered "waits for approval" (Prometheus' counter).
    #[serde(skip)]
    pub waited_approval: u64,
    /// Argument bytes.
    #[serde(rename = "tools.dispatch.bytes_in")]
    pub bytes_in: u64,
    /// Result bytes.
    #[serde(rename = "tools.dispatch.bytes_out")]
    pub bytes_out: u64,
    /// Files written by calls.
    #[serde(rename = "tools.dispatch.files_touched")]
    pub files_touched: u64,
}
