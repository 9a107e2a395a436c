//! `emit_metrics`: the built-in that answers from the engine's records, so it is run here rather
//! than in jig-tools (which knows nothing of the engine).
//!
//! Calls, failures, approvals, denials, replays and latencies come from the audit store — every
//! process that used it, not only this one; argument and result bytes and files touched are
//! counted in memory and cover this process (`process_*`).

use std::sync::Arc;

use async_trait::async_trait;
use jig_exec::{Execution, Executor, Invocation, Output, ToolError};
use jig_model::ErrorCode;
use jig_model::duration::parse_duration;
use serde_json::{Value, json};

use crate::metrics::Metrics;

/// Runs `emit_metrics`.
#[derive(Debug)]
pub(crate) struct MetricsExecutor {
    pub metrics: Arc<Metrics>,
    pub store: jig_audit::Store,
}

#[async_trait]
impl Executor for MetricsExecutor {
    async fn execute(&self, invocation: Invocation<'_>) -> Result<Execution, ToolError> {
        let args = invocation.args;
        let window = args
            .get("interval")
            .and_then(Value::as_str)
            .map(|text| {
                parse_duration(text).ok_or_else(|| {
                    ToolError::new(
                        ErrorCode::ValidationFail,
                        format!("argument `interval` `{text}` is not like `30s`, `5m` or `2h`"),
                    )
                })
            })
            .transpose()?;
        let session = args.get("session_id").and_then(Value::as_str);
        let since_us = window.map_or(0, |w| {
            jig_audit::time::now_us()
                .saturating_sub(i64::try_from(w.as_micros()).unwrap_or(i64::MAX))
        });
        let recorded = self.store.rollup(session, since_us).await.map_err(|e| {
            ToolError::new(ErrorCode::Internal, format!("reading the audit store: {e}"))
        })?;
        let calls = recorded.calls as f64;
        let failed = recorded.failed as f64;
        let mut metrics = serde_json::Map::new();
        for (name, value) in [
            ("calls", Some(calls)),
            ("errors", Some(failed)),
            ("error_rate", Some(if calls == 0.0 { 0.0 } else { failed / calls })),
            ("pending_approval", Some(recorded.pending_approval as f64)),
            ("denied", Some(recorded.denied as f64)),
            ("replayed", Some(recorded.replayed as f64)),
            ("latency_mean_ms", recorded.mean()),
            ("latency_p50_ms", recorded.quantile(0.5)),
            ("latency_p99_ms", recorded.quantile(0.99)),
        ] {
            if let Some(value) = value {
                metrics.insert(name.to_owned(), json!(value));
            }
        }
        let process = self.metrics.rollup(session, window);
        for name in ["bytes_in", "bytes_out", "files_touched"] {
            if let Some(value) = process.get(name) {
                metrics.insert(format!("process_{name}"), value.clone());
            }
        }
        Ok(Execution::Done(Output::data(json!({ "status": "ok", "metrics": metrics }))))
    }
}
