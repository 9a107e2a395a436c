//! `file_read` and `file_write`, through the workspace sandbox.

use jig_model::ErrorCode;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::executor::{Invocation, Output, ToolError};

/// Default `max_bytes` of `file_read` (its schema's default).
const DEFAULT_MAX_READ: u64 = 1024 * 1024;

pub(super) fn read(invocation: &Invocation<'_>) -> Result<Value, ToolError> {
    let path = string_arg(invocation.args, "path")?;
    let max = invocation.args.get("max_bytes").and_then(Value::as_u64).unwrap_or(DEFAULT_MAX_READ);
    let bytes = invocation.workspace.read(path, max)?;
    let sha256 = hex(&Sha256::digest(&bytes));
    let content = String::from_utf8(bytes).map_err(|_| {
        ToolError::new(ErrorCode::FileIo, format!("`{path}` is not UTF-8 text"))
            .with_details(json!({ "path": path }))
    })?;
    Ok(json!({ "content": content, "sha256": sha256 }))
}

pub(super) fn write(invocation: &Invocation<'_>) -> Result<Output, ToolError> {
    let args = invocation.args;
    let path = string_arg(args, "path")?;
    let content = string_arg(args, "content")?;
    let create_dirs = args.get("create_dirs").and_then(Value::as_bool).unwrap_or(false);
    let mode = match args.get("mode_octal").and_then(Value::as_str) {
        Some(text) => Some(u32::from_str_radix(text, 8).map_err(|_| {
            ToolError::new(
                ErrorCode::ValidationFail,
                format!("`mode_octal` `{text}` is not an octal mode"),
            )
        })?),
        None => None,
    };
    let bytes = invocation.workspace.write_atomic(path, content.as_bytes(), create_dirs, mode)?;
    Ok(Output {
        data: json!({ "written": true, "bytes": bytes }),
        files_touched: vec![path.to_owned()],
    })
}

fn string_arg<'a>(args: &'a Value, name: &str) -> Result<&'a str, ToolError> {
    args.get(name).and_then(Value::as_str).ok_or_else(|| {
        ToolError::new(ErrorCode::ValidationFail, format!("`{name}` must be a string"))
    })
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
