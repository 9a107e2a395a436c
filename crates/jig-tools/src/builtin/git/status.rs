//! `git_status` and `git_diff`.

use git2::{DiffFormat, DiffOptions, Status, StatusOptions};
use serde_json::json;

use super::{JIG_DIR, git_error, open};
use crate::builtin::call::Call;
use jig_exec::{Output, ToolError};

pub(in crate::builtin) fn status(call: &Call) -> Result<Output, ToolError> {
    let repo = open(call)?;
    let head = repo.head().ok();
    let branch = match &head {
        Some(head) if head.is_branch() => head.shorthand().ok().map(str::to_owned),
        Some(_) => None,
        // An unborn branch: HEAD names it but it has no commit yet.
        None => repo.find_reference("HEAD").ok().and_then(|h| {
            h.symbolic_target()
                .ok()
                .flatten()
                .map(|t| t.trim_start_matches("refs/heads/").to_owned())
        }),
    };
    let (mut ahead, mut behind) = (0, 0);
    let local = head.as_ref().and_then(|h| h.target());
    let upstream = head
        .as_ref()
        .and_then(|h| h.name().ok())
        .and_then(|name| repo.branch_upstream_name(name).ok())
        .and_then(|u| u.as_str().ok().and_then(|u| repo.refname_to_id(u).ok()));
    if let (Some(local), Some(upstream)) = (local, upstream) {
        (ahead, behind) =
            repo.graph_ahead_behind(local, upstream).map_err(|e| git_error("git status", &e))?;
    }
    let mut options = StatusOptions::new();
    options
        .include_untracked(true)
        .recurse_untracked_dirs(false)
        .include_ignored(false)
        .renames_head_to_index(true);
    let statuses = repo.statuses(Some(&mut options)).map_err(|e| git_error("git status", &e))?;
    let mut changes = Vec::new();
    for entry in statuses.iter() {
        call.check_time()?;
        let Ok(path) = entry.path() else { continue };
        if path.starts_with(JIG_DIR) {
            continue;
        }
        changes.push(json!({ "path": path, "status": porcelain(entry.status()) }));
    }
    Ok(Output::data(
        json!({ "branch": branch, "ahead": ahead, "behind": behind, "changes": changes }),
    ))
}

/// The two-letter code of `git status --porcelain` (index, then working tree).
fn porcelain(status: Status) -> String {
    if status.is_wt_new() {
        return "??".to_owned();
    }
    if status.is_conflicted() {
        return "UU".to_owned();
    }
    let index = if status.is_index_new() {
        'A'
    } else if status.is_index_modified() {
        'M'
    } else if status.is_index_deleted() {
        'D'
    } else if status.is_index_renamed() {
        'R'
    } else if status.is_index_typechange() {
        'T'
    } else {
        ' '
    };
    let worktree = if status.is_wt_modified() {
        'M'
    } else if status.is_wt_deleted() {
        'D'
    } else if status.is_wt_typechange() {
        'T'
    } else if status.is_wt_renamed() {
        'R'
    } else {
        ' '
    };
    format!("{index}{worktree}")
}

pub(in crate::builtin) fn diff(call: &Call) -> Result<Output, ToolError> {
    let repo = open(call)?;
    let mut options = DiffOptions::new();
    for path in call.strings("paths") {
        options.pathspec(path);
    }
    let diff = match call.opt_str("rev") {
        Some(rev) => {
            let rev = super::revision(call, "rev").map(|_| rev)?;
            let tree = repo
                .revparse_single(rev)
                .and_then(|o| o.peel_to_tree())
                .map_err(|e| git_error(&format!("revision `{rev}`"), &e))?;
            repo.diff_tree_to_workdir_with_index(Some(&tree), Some(&mut options))
        }
        None => repo.diff_index_to_workdir(None, Some(&mut options)),
    }
    .map_err(|e| git_error("git diff", &e))?;
    let mut patch = Vec::new();
    let mut files = 0;
    diff.print(DiffFormat::Patch, |delta, _hunk, line| {
        let jig = delta.new_file().path().is_some_and(|p| p.starts_with(".jig"));
        if jig {
            return true;
        }
        if line.origin() == 'F' {
            files += 1;
        }
        if matches!(line.origin(), '+' | '-' | ' ') {
            patch.push(line.origin() as u8);
        }
        patch.extend_from_slice(line.content());
        true
    })
    .map_err(|e| git_error("git diff", &e))?;
    Ok(Output::data(json!({ "patch": String::from_utf8_lossy(&patch), "files": files })))
}
