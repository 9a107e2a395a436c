//! `emit_metrics`: the built-in that answers from the engine's own metrics, so it is run here
//! rather than in jig-tools (which knows nothing of the engine).

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use jig_model::ErrorCode;
use jig_tools::{Execution, Executor, Invocation, Output, ToolError};
use serde_json::{Value, json};

use crate::metrics::Metrics;

/// Runs `emit_metrics`.
#[derive(Debug)]
pub(crate) struct MetricsExecutor(pub Arc<Metrics>);

#[async_trait]
impl Executor for MetricsExecutor {
    async fn execute(&self, invocation: Invocation<'_>) -> Result<Execution, ToolError> {
        let args = invocation.args;
        let window =
            args.get("interval").and_then(Value::as_str).map(parse_interval).transpose()?;
        let session = args.get("session_id").and_then(Value::as_str);
        let metrics = self.0.rollup(session, window);
        Ok(Execution::Done(Output::data(json!({ "status": "ok", "metrics": metrics }))))
    }
}

/// `30s`, `5m`, `2h`.
fn parse_interval(text: &str) -> Result<Duration, ToolError> {
    let invalid = || {
        ToolError::new(
            ErrorCode::ValidationFail,
            format!("argument `interval` `{text}` is not like `30s`, `5m` or `2h`"),
        )
    };
    let (digits, unit) = text.split_at(text.len().saturating_sub(1));
    let n: u64 = digits.parse().map_err(|_| invalid())?;
    let seconds = match unit {
        "s" => n,
        "m" => n.saturating_mul(60),
        "h" => n.saturating_mul(3600),
        _ => return Err(invalid()),
    };
    Ok(Duration::from_secs(seconds))
}
