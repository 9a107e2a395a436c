//! The git built-ins, on libgit2 (git2): status, diff, add, commit, checkout, merge, rebase,
//! push and pull.
//!
//! libgit2 runs no hooks, no fsmonitor and no external filter drivers, so a repository's own
//! configuration never runs code here. Operations that rewrite history are computed in memory
//! (trees and commits first) and only then move the branch and update the working tree: a
//! conflict leaves the repository exactly as it was. Jig's own `.jig/` directory is never
//! reported, staged or counted as a change.

mod branch;
pub(crate) mod config_guard;
mod integrate;
mod remote;
mod stage;
mod status;

pub(super) use branch::checkout;
pub(super) use integrate::{merge, rebase};
pub(super) use remote::{pull, push};
pub(super) use stage::{add, commit};
pub(super) use status::{diff, status};

use git2::{Repository, Status, StatusOptions};
use jig_model::ErrorCode;
use serde_json::json;

use super::call::Call;
use jig_exec::ToolError;

/// The rule that guards history-changing operations (seed 002 §7).
const CLEAN_TREE: &str = "sec.git.clean_tree";

/// Jig's state directory, invisible to the git tools.
const JIG_DIR: &str = ".jig/";

use super::repo::open;

fn git_error(what: &str, error: &git2::Error) -> ToolError {
    ToolError::new(ErrorCode::Git, format!("{what}: {}", error.message()))
}

/// Tracked files that differ from HEAD, in the index (`staged`) or the working tree.
fn changed_tracked(repo: &Repository, include_staged: bool) -> Result<Vec<String>, ToolError> {
    let mut options = StatusOptions::new();
    options.include_untracked(false).include_ignored(false);
    let statuses = repo.statuses(Some(&mut options)).map_err(|e| git_error("git status", &e))?;
    let worktree =
        Status::WT_MODIFIED | Status::WT_DELETED | Status::WT_RENAMED | Status::WT_TYPECHANGE;
    let index = Status::INDEX_NEW
        | Status::INDEX_MODIFIED
        | Status::INDEX_DELETED
        | Status::INDEX_RENAMED
        | Status::INDEX_TYPECHANGE;
    let mask = if include_staged { worktree | index } else { worktree };
    Ok(statuses
        .iter()
        .filter(|entry| entry.status().intersects(mask) || entry.status().is_conflicted())
        .filter_map(|entry| entry.path().ok().map(str::to_owned))
        .filter(|path| !path.starts_with(JIG_DIR))
        .collect())
}

/// Refuse `what` while tracked files have changes (untracked files do not count).
fn require_clean(repo: &Repository, what: &str, include_staged: bool) -> Result<(), ToolError> {
    let dirty = changed_tracked(repo, include_staged)?;
    if dirty.is_empty() {
        return Ok(());
    }
    let shown: Vec<&str> = dirty.iter().take(20).map(String::as_str).collect();
    Err(ToolError::new(
        ErrorCode::Git,
        format!("{what} needs a clean working tree; changed: {}", shown.join(", ")),
    )
    .with_details(json!({ "rule": CLEAN_TREE, "changed": dirty })))
}

/// Refuse a revision that could be read as an option.
fn revision<'a>(call: &'a Call, name: &str) -> Result<&'a str, ToolError> {
    let value = call.str(name)?;
    if value.starts_with('-') {
        return Err(ToolError::new(
            ErrorCode::ValidationFail,
            format!("argument `{name}` `{value}` looks like an option"),
        ));
    }
    Ok(value)
}

/// The committer: the repository's configured identity.
fn signature(repo: &Repository) -> Result<git2::Signature<'static>, ToolError> {
    repo.signature().map_err(|e| {
        ToolError::new(
            ErrorCode::Git,
            format!(
                "no committer identity: set `user.name` and `user.email` in git config ({})",
                e.message()
            ),
        )
    })
}
