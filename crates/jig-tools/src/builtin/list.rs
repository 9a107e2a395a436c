//! `fs_list`: files matching a glob, .gitignore-aware, sorted.

use serde_json::json;

use super::call::Call;
use super::walk::Scope;
use jig_exec::{Output, ToolError};

pub(super) fn list(call: &Call) -> Result<Output, ToolError> {
    let glob = call.str("glob")?;
    let max = call.count("max_results", 5000);
    let scope = Scope::new(call, Some(glob))?;
    let mut files =
        scope.collect(call, call.bool("include_hidden", false), false, |_, path| Some(path))?;
    // Sorted first, so the cut at max_results is the same on every run.
    files.sort_unstable();
    let truncated = files.len() > max;
    files.truncate(max);
    Ok(Output::data(json!({ "files": files, "truncated": truncated })))
}
