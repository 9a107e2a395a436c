//! `ast_edit` `rename_symbol`: the rename is computed and checked in memory, optionally
//! formatted, written under write locks, and rolled back as a whole if a write or the
//! policy's build command fails.

use std::time::Duration;

use jig_ast::{EditError, Language};
use jig_model::ErrorCode;
use serde_json::json;

use super::MAX_SOURCE;
use crate::builtin::call::Call;
use crate::builtin::command;
use jig_exec::{Output, ToolError};

/// Time a formatter gets per file.
const FORMAT_TIME: Duration = Duration::from_secs(20);

pub(in crate::builtin) fn edit(call: &Call) -> Result<Output, ToolError> {
    let operation = call.str("operation")?;
    if operation != "rename_symbol" {
        return Err(ToolError::new(ErrorCode::AstEdit, format!("unknown operation `{operation}`")));
    }
    let id = call.str("target_node_id")?;
    let new_name = call.str("new_name")?;
    // The call's choice, else the policy's `ast.format_on_save`, else on.
    let format = call
        .args
        .get("format_on_save")
        .and_then(serde_json::Value::as_bool)
        .or_else(|| call.policy.config().ast.as_ref().map(|a| a.format_on_save))
        .unwrap_or(true);
    let mut edits = {
        let index = super::fresh_index(call)?;
        jig_ast::rename(&index, id, new_name, &|path| {
            call.workspace.read(path, MAX_SOURCE).map_err(|e| std::io::Error::other(e.to_string()))
        })
        .map_err(|e| {
            let code = if matches!(e, EditError::NotFound(_)) {
                ErrorCode::NotFound
            } else {
                ErrorCode::AstEdit
            };
            ToolError::new(code, e.to_string()).with_details(json!({ "target_node_id": id }))
        })?
    };
    let mut formatted = Vec::new();
    if format {
        for edit in &mut edits {
            call.check_time()?;
            if let Some(text) = formatted_text(call, &edit.file, &edit.after) {
                edit.after = text;
                formatted.push(edit.file.clone());
            }
        }
    }
    let files: Vec<&str> = edits.iter().map(|e| e.file.as_str()).collect();
    let _held = call.locks.lock(&files);
    // Someone may have written a file since it was read: refuse rather than overwrite.
    for edit in &edits {
        let now = call.workspace.read(&edit.file, MAX_SOURCE)?;
        if now != edit.before.as_bytes() {
            return Err(ToolError::new(
                ErrorCode::AstEdit,
                format!("`{}` changed during the edit; nothing was written", edit.file),
            ));
        }
    }
    let mut written: Vec<&jig_ast::Edit> = Vec::new();
    for edit in &edits {
        if let Err(error) =
            call.workspace.write_atomic(&edit.file, edit.after.as_bytes(), false, None)
        {
            restore(call, &written);
            return Err(error.into());
        }
        written.push(edit);
    }
    if call.bool("validate_build", false)
        && let Err(error) = build(call)
    {
        restore(call, &written);
        return Err(error);
    }
    let touched: Vec<String> = edits.iter().map(|e| e.file.clone()).collect();
    let occurrences: usize = edits.iter().map(|e| e.occurrences).sum();
    Ok(Output {
        data: json!({ "edited": !edits.is_empty(), "files_touched": touched, "occurrences": occurrences, "formatted": formatted }),
        files_touched: touched,
        prepared: None,
    })
}

/// Put files back as they were.
fn restore(call: &Call, written: &[&jig_ast::Edit]) {
    for edit in written {
        let _ = call.workspace.write_atomic(&edit.file, edit.before.as_bytes(), false, None);
    }
}

/// `text` run through the language's formatter, when it is installed, succeeds, and leaves
/// code that parses.
fn formatted_text(call: &Call, file: &str, text: &str) -> Option<String> {
    let argv: Vec<String> =
        Language::of_path(file)?.formatter()?.iter().map(|s| (*s).to_owned()).collect();
    if !command::installed(&argv[0]) {
        return None;
    }
    let ran = command::run(call, &argv, Some(text.as_bytes()), FORMAT_TIME).ok()?;
    let out =
        String::from_utf8(ran.stdout).ok().filter(|o| ran.code == Some(0) && !o.is_empty())?;
    matches!(jig_ast::check_syntax(file, out.as_bytes()), Some(Ok(()))).then_some(out)
}

/// The policy's `build.must.pass` command, which must succeed.
fn build(call: &Call) -> Result<(), ToolError> {
    let rule = call
        .policy
        .config()
        .validators
        .iter()
        .find(|v| v.rule == "build.must.pass" && !v.command.is_empty());
    let Some(rule) = rule else {
        return Err(ToolError::new(
            ErrorCode::ValidationFail,
            "`validate_build` needs a build command: add `{ rule: build.must.pass, command: [...] }` to the policy's validators",
        ));
    };
    let remaining = call.deadline.saturating_duration_since(std::time::Instant::now());
    let ran = command::run(call, &rule.command, None, remaining).map_err(|e| {
        ToolError::new(ErrorCode::Shell, format!("cannot run the build command: {e}"))
    })?;
    if ran.code == Some(0) {
        return Ok(());
    }
    let stderr = String::from_utf8_lossy(&ran.stderr);
    let tail: String = stderr.chars().rev().take(2000).collect::<String>().chars().rev().collect();
    Err(ToolError::new(
        ErrorCode::AstEdit,
        "the build failed after the edit; every file was restored",
    )
    .with_details(json!({ "rule": "build.must.pass", "code": ran.code, "stderr": tail })))
}
