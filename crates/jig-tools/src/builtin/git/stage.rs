//! `git_add` and `git_commit`.

use git2::IndexAddOption;
use jig_model::ErrorCode;
use serde_json::json;

use super::{JIG_DIR, git_error, open, require_clean, signature};
use crate::builtin::call::Call;
use crate::builtin::rules;
use jig_exec::{Output, ToolError};

pub(in crate::builtin) fn add(call: &Call) -> Result<Output, ToolError> {
    let repo = open(call)?;
    let paths = call.strings("paths");
    let mut index = repo.index().map_err(|e| git_error("git add", &e))?;
    let mut added = 0u64;
    let mut count = |path: &std::path::Path, _: &[u8]| -> i32 {
        if path.starts_with(JIG_DIR.trim_end_matches('/')) {
            return 1; // skip
        }
        added += 1;
        0
    };
    // New and changed files, then deletions: what `git add <paths>` stages.
    index
        .add_all(&paths, IndexAddOption::DEFAULT, Some(&mut count))
        .map_err(|e| git_error("git add", &e))?;
    index.update_all(&paths, Some(&mut count)).map_err(|e| git_error("git add", &e))?;
    index.write().map_err(|e| git_error("git add", &e))?;
    Ok(Output::data(json!({ "added": added })))
}

pub(in crate::builtin) fn commit(call: &Call) -> Result<Output, ToolError> {
    let repo = open(call)?;
    let policy = &call.policy.config().git;
    if policy.require_clean_tree_for_commit {
        require_clean(&repo, "`git_commit` (policy `git.require_clean_tree_for_commit`)", false)?;
    }
    let mut message = call.str("message")?.trim_end().to_owned();
    let signature = signature(&repo)?;
    if call.bool("signoff", false) {
        let line = format!(
            "Signed-off-by: {} <{}>",
            signature.name().unwrap_or_default(),
            signature.email().unwrap_or_default()
        );
        if !message.contains(&line) {
            message.push_str(if message.contains("\n\n") { "\n" } else { "\n\n" });
            message.push_str(&line);
        }
    }
    message.push('\n');
    let mut index = repo.index().map_err(|e| git_error("git commit", &e))?;
    if index.has_conflicts() {
        return Err(ToolError::new(ErrorCode::Git, "the index has unresolved conflicts"));
    }
    let tree_id = index.write_tree().map_err(|e| git_error("git commit", &e))?;
    let tree = repo.find_tree(tree_id).map_err(|e| git_error("git commit", &e))?;
    let parent = repo.head().ok().and_then(|h| h.peel_to_commit().ok());
    let unchanged = match &parent {
        Some(parent) => parent.tree_id() == tree_id,
        None => tree.is_empty(),
    };
    if unchanged && !call.bool("allow_empty", false) {
        return Err(ToolError::new(
            ErrorCode::Git,
            "nothing to commit: the index matches HEAD (pass `allow_empty: true` to commit anyway)",
        ));
    }
    // The policy's on-commit rules see exactly what is being committed; a blocking violation
    // refuses the commit before anything is written.
    let warnings = rules::on_commit(call, &repo, &message)?;
    let parents: Vec<&git2::Commit<'_>> = parent.iter().collect();
    let id = repo
        .commit(Some("HEAD"), &signature, &signature, &message, &tree, &parents)
        .map_err(|e| git_error("git commit", &e))?;
    let mut data = json!({ "commit": id.to_string() });
    if !warnings.is_empty() {
        data["violations"] = json!(warnings);
    }
    Ok(Output::data(data))
}
