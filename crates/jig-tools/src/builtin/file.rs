//! `file_read`, `file_write` and `file_patch`, through the workspace sandbox.

use jig_model::ErrorCode;
use jig_model::canonical::Sha256Hash;
use serde_json::json;

use super::ast;
use super::call::Call;
use jig_exec::{Output, ToolError};

/// Default `max_bytes` of `file_read` (its schema's default).
const DEFAULT_MAX_READ: usize = 1024 * 1024;

/// Largest file `file_patch` edits.
const MAX_PATCHED: u64 = 64 * 1024 * 1024;

pub(super) fn read(call: &Call) -> Result<Output, ToolError> {
    let path = call.str("path")?;
    let max = call.count("max_bytes", DEFAULT_MAX_READ) as u64;
    let bytes = call.workspace.read(path, max)?;
    let sha256 = Sha256Hash::of_bytes(&bytes).to_hex();
    let content = utf8(path, bytes)?;
    Ok(Output::data(json!({ "content": content, "sha256": sha256 })))
}

pub(super) fn write(call: &Call) -> Result<Output, ToolError> {
    let path = call.str("path")?;
    let content = call.str("content")?;
    let create_dirs = call.bool("create_dirs", false);
    let mode = match call.opt_str("mode_octal") {
        Some(text) => Some(u32::from_str_radix(text, 8).map_err(|_| {
            ToolError::new(
                ErrorCode::ValidationFail,
                format!("`mode_octal` `{text}` is not an octal mode"),
            )
        })?),
        None => None,
    };
    let warning = ast::check_write(call, path, content.as_bytes())?;
    let _held = call.locks.lock(&[path]);
    let bytes = call.workspace.write_atomic(path, content.as_bytes(), create_dirs, mode)?;
    let mut data = json!({ "written": true, "bytes": bytes });
    if let Some(violation) = warning {
        data["violations"] = json!([violation]);
    }
    Ok(Output { data, files_touched: vec![path.to_owned()], prepared: None })
}

pub(super) fn patch(call: &Call) -> Result<Output, ToolError> {
    let path = call.str("path")?;
    let diff = call.str("unified_diff")?;
    let refused = |error: jig_patch::PatchError| {
        ToolError::new(ErrorCode::ValidationFail, format!("`{path}`: {error}"))
            .with_details(json!({ "path": path }))
    };
    let hunks = jig_patch::parse(diff).map_err(refused)?;
    let _held = call.locks.lock(&[path]);
    let text = utf8(path, call.workspace.read(path, MAX_PATCHED)?)?;
    let patched = jig_patch::apply(&text, &hunks).map_err(refused)?;
    let warning = ast::check_write(call, path, patched.as_bytes())?;
    call.workspace.write_atomic(path, patched.as_bytes(), false, None)?;
    let mut data = json!({ "patched": true, "hunks_applied": hunks.len() });
    if let Some(violation) = warning {
        data["violations"] = json!([violation]);
    }
    Ok(Output { data, files_touched: vec![path.to_owned()], prepared: None })
}

fn utf8(path: &str, bytes: Vec<u8>) -> Result<String, ToolError> {
    String::from_utf8(bytes).map_err(|_| {
        ToolError::new(ErrorCode::FileIo, format!("`{path}` is not UTF-8 text"))
            .with_details(json!({ "path": path }))
    })
}
