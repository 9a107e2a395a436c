//! tool/v0's `governance.redact` rules, applied to every text a tool/v0 tool answers with,
//! whichever transport carried it (a process's output, a `jsonrpc` server's result).

use jig_exec::ToolError;
use jig_model::ErrorCode;
use jig_model::tool_def::GertExecution;
use regex::Regex;
use serde_json::Value;

/// Applied to every text output: governance `redact` rules.
pub(crate) fn redact(gert: &GertExecution, value: &mut Value) -> Result<(), ToolError> {
    if gert.redact.is_empty() {
        return Ok(());
    }
    let rules: Vec<(Regex, &str)> = gert
        .redact
        .iter()
        .map(|r| {
            Regex::new(&r.pattern).map(|re| (re, r.replace.as_str())).map_err(|e| {
                ToolError::new(ErrorCode::Internal, format!("redact pattern `{}`: {e}", r.pattern))
            })
        })
        .collect::<Result<_, _>>()?;
    walk(value, &rules);
    Ok(())
}

fn walk(value: &mut Value, rules: &[(Regex, &str)]) {
    match value {
        Value::String(text) => {
            for (pattern, replace) in rules {
                *text = pattern.replace_all(text, *replace).into_owned();
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|v| walk(v, rules)),
        Value::Object(map) => map.values_mut().for_each(|v| walk(v, rules)),
        _ => {}
    }
}
