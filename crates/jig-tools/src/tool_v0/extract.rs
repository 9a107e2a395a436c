//! From what a stdio action printed to its declared outputs: `extract` rules (kernel
//! generation: a regex's first group, a JSON pointer, or the whole stream) or `capture` rules
//! (schema generation: a stream as text or JSON). Values are converted to the type the output
//! schema declares (`int` outputs become numbers).

use jig_model::ErrorCode;
use jig_model::gert_tool::{CaptureFormat, StreamName};
use jig_model::tool_def::GertExecution;
use regex::Regex;
use serde_json::{Map, Value, json};

use jig_exec::ToolError;
use jig_exec::process::Finished;

pub(super) fn outputs(
    gert: &GertExecution,
    finished: &Finished,
    schema: &Value,
) -> Result<Value, ToolError> {
    let stream = |from: StreamName| -> String {
        match from {
            StreamName::Stdout | StreamName::Json => finished.stdout.clone(),
            StreamName::Stderr => finished.stderr.clone(),
            StreamName::ExitCode => finished.code.map(|c| c.to_string()).unwrap_or_default(),
        }
    };
    let mut out = Map::new();
    if !gert.extract.is_empty() {
        for (name, rule) in &gert.extract {
            let text = stream(rule.from);
            let value = if rule.from == StreamName::Json {
                let parsed: Value = serde_json::from_str(text.trim())
                    .map_err(|e| mismatch(name, &format!("output is not JSON ({e})")))?;
                // gert's dot path: a missing key leaves the output unset, not an error.
                let found =
                    rule.path.as_deref().filter(|p| !p.is_empty()).map_or(Some(&parsed), |path| {
                        path.split('.').try_fold(&parsed, |at, key| at.get(key))
                    });
                match found {
                    Some(value) => value.clone(),
                    None => continue,
                }
            } else if let Some(pointer) = &rule.json_pointer {
                let parsed: Value = serde_json::from_str(text.trim())
                    .map_err(|e| mismatch(name, &format!("output is not JSON ({e})")))?;
                parsed
                    .pointer(pointer)
                    .cloned()
                    .ok_or_else(|| mismatch(name, &format!("no value at `{pointer}`")))?
            } else if let Some(pattern) = &rule.pattern {
                let regex = Regex::new(pattern)
                    .map_err(|e| mismatch(name, &format!("bad pattern: {e}")))?;
                // gert matches the trimmed stream.
                let captures = regex
                    .captures(text.trim())
                    .ok_or_else(|| mismatch(name, &format!("`{pattern}` does not match")))?;
                let found = captures.get(1).or_else(|| captures.get(0)).map_or("", |m| m.as_str());
                Value::String(found.to_owned())
            } else {
                Value::String(text.trim_end().to_owned())
            };
            out.insert(
                name.clone(),
                typed(value, schema.pointer(&format!("/properties/{name}/type"))),
            );
        }
        return Ok(Value::Object(out));
    }
    if !gert.capture.is_empty() {
        for (name, rule) in &gert.capture {
            let text = stream(rule.from.unwrap_or(StreamName::Stdout));
            let value = match rule.format {
                Some(CaptureFormat::Json) => serde_json::from_str(text.trim())
                    .map_err(|e| mismatch(name, &format!("output is not JSON ({e})")))?,
                _ => Value::String(text.trim_end().to_owned()),
            };
            out.insert(
                name.clone(),
                typed(value, schema.pointer(&format!("/properties/{name}/type"))),
            );
        }
        return Ok(Value::Object(out));
    }
    Ok(json!({ "stdout": finished.stdout, "stderr": finished.stderr, "exit_code": finished.code }))
}

/// A string made the declared scalar type, when it reads as one.
fn typed(value: Value, declared: Option<&Value>) -> Value {
    let Value::String(text) = &value else { return value };
    let text = text.trim();
    match declared.and_then(Value::as_str) {
        Some("integer") => text.parse::<i64>().map_or(value.clone(), Value::from),
        Some("number") => text
            .parse::<f64>()
            .ok()
            .and_then(serde_json::Number::from_f64)
            .map_or(value.clone(), Value::Number),
        Some("boolean") => text.parse::<bool>().map_or(value.clone(), Value::Bool),
        _ => value,
    }
}

fn mismatch(name: &str, why: &str) -> ToolError {
    ToolError::new(
        ErrorCode::ValidationFail,
        format!("output `{name}` could not be extracted: {why}"),
    )
    .with_details(json!({ "output": name }))
}
