//! `fs_list`: files matching a glob, .gitignore-aware, sorted.

use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use ignore::WalkState;
use serde_json::json;

use super::call::Call;
use super::walk::{Batch, Scope};
use crate::executor::{Output, ToolError};

pub(super) fn list(call: &Call) -> Result<Output, ToolError> {
    let glob = call.str("glob")?;
    let max = call.count("max_results", 5000);
    let scope = Scope::new(call, Some(glob))?;
    let Some(start) = &scope.start else {
        return Ok(Output::data(json!({ "files": [], "truncated": false })));
    };
    let found = Mutex::new(Vec::new());
    let visited = AtomicUsize::new(0);
    scope.walker(start, call.bool("include_hidden", false), false).run(|| {
        let mut batch = Batch::new(&found);
        let (scope, visited) = (&scope, &visited);
        Box::new(move |entry| {
            // Checking the clock every 1024 entries keeps it off the hot path.
            if visited.fetch_add(1, Ordering::Relaxed) % 1024 == 0 && call.should_stop() {
                return WalkState::Quit;
            }
            if let Some(path) = entry.ok().and_then(|e| scope.selects(&e)) {
                batch.local.push(path);
            }
            WalkState::Continue
        })
    });
    call.check_time()?;
    let mut files = found.into_inner().unwrap_or_else(std::sync::PoisonError::into_inner);
    // Sorted first, so the cut at max_results is the same on every run.
    files.sort_unstable();
    let truncated = files.len() > max;
    files.truncate(max);
    Ok(Output::data(json!({ "files": files, "truncated": truncated })))
}
