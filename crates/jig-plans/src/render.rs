//! What every plan kind renders the same way: the command line from the arguments, the time
//! limit, and the text of what the plan's program printed.

use std::time::Duration;

use jig_exec::template::{check_positional, render_all};
use jig_exec::{Invocation, ToolError};
use jig_model::ErrorCode;
use jig_model::duration::parse_duration;
use jig_model::plan::Resources;
use serde_json::Value;

/// Most of a plan's output kept as its `log` (the rest is cut, and the cut said).
pub const LOG_MAX: usize = 5 * 1024 * 1024;

/// `command` followed by `args` rendered with `args_value` (the arguments with inputs rewritten
/// to where the plan's program sees them). An argument may not become an option of the
/// program unless the plan put `--` before it.
pub fn argv(
    invocation: &Invocation<'_>,
    command: &[String],
    args: &[String],
    args_value: &Value,
) -> Result<Vec<String>, ToolError> {
    let rendered = render_all(args, args_value, invocation.tool.templating.as_ref())?;
    let mut sources = command.to_vec();
    sources.extend(args.iter().cloned());
    let mut argv = command.to_vec();
    argv.extend(rendered);
    check_positional(&sources, &argv)?;
    Ok(argv)
}

/// The plan's wall-clock limit: `resources.timeLimit`, else the tool's `timeoutMs`.
pub fn time_limit(resources: &Resources, timeout: Duration) -> Duration {
    resources.time_limit.as_deref().and_then(parse_duration).unwrap_or(timeout)
}

/// `bytes` as text for the log, cut at [`LOG_MAX`].
pub fn log_text(bytes: &[u8]) -> String {
    if bytes.len() <= LOG_MAX {
        return String::from_utf8_lossy(bytes).into_owned();
    }
    let mut text = String::from_utf8_lossy(&bytes[..LOG_MAX]).into_owned();
    text.push_str(&format!("\n[jig: the log was cut at {LOG_MAX} of {} bytes]\n", bytes.len()));
    text
}

/// The last lines of `log`, for an error's details.
pub fn tail(log: &str) -> String {
    const TAIL: usize = 2048;
    if log.len() <= TAIL {
        return log.to_owned();
    }
    let mut start = log.len() - TAIL;
    while !log.is_char_boundary(start) {
        start += 1;
    }
    log[start..].to_owned()
}

/// A plan's variables as its process gets them: the plan's own, and `TRACEPARENT` naming the
/// span Jig made for it when Jig exports traces (Jig's, over any the plan sets: the process's
/// trace is where Jig says it is).
pub fn environment(
    plan: &std::collections::BTreeMap<String, String>,
    traceparent: Option<&str>,
) -> std::collections::BTreeMap<String, String> {
    let mut env = plan.clone();
    if let Some(traceparent) = traceparent {
        env.insert("TRACEPARENT".to_owned(), traceparent.to_owned());
    }
    env
}

/// A failure of the engine itself (unreachable, refusing a request).
pub fn engine_error(engine: &str, what: &str, error: &dyn std::error::Error) -> ToolError {
    // The causes too: a client's own message is often only "client error (Connect)".
    let mut message = format!("{engine}: {what}: {error}");
    let mut cause = error.source();
    while let Some(inner) = cause {
        let text = inner.to_string();
        if !message.ends_with(&text) {
            message.push_str(": ");
            message.push_str(&text);
        }
        cause = inner.source();
    }
    ToolError::new(ErrorCode::Internal, message)
        .with_details(serde_json::json!({ "engine": engine }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits() {
        let timeout = Duration::from_secs(60);
        assert_eq!(time_limit(&Resources::default(), timeout), timeout);
        let resources = Resources { time_limit: Some("5m".into()), ..Resources::default() };
        assert_eq!(time_limit(&resources, timeout), Duration::from_secs(300));
    }

    #[test]
    fn logs_are_cut_and_tails_keep_whole_characters() {
        let big = vec![b'x'; LOG_MAX + 10];
        let text = log_text(&big);
        assert!(text.ends_with(&format!("of {} bytes]\n", LOG_MAX + 10)));
        let long = "é".repeat(3000);
        let end = tail(&long);
        assert!(end.len() <= 2048 && end.chars().all(|c| c == 'é'));
    }
}
