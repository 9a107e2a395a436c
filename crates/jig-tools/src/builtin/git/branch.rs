//! `git_checkout`: switch to a branch (creating it, or tracking a remote one) or detach at a
//! commit. A tree with changes to tracked files is refused, so nothing can be lost.

use git2::build::CheckoutBuilder;
use git2::{BranchType, Repository};
use jig_model::ErrorCode;
use serde_json::json;

use super::{git_error, open, require_clean, revision};
use crate::builtin::call::Call;
use crate::builtin::rules;
use jig_exec::{Output, ToolError};

pub(in crate::builtin) fn checkout(call: &Call) -> Result<Output, ToolError> {
    let repo = open(call)?;
    let target = revision(call, "target")?;
    require_clean(&repo, "`git_checkout`", true)?;
    // Switching to (or creating) a branch runs `branch.naming.convention`; a commit does not.
    let is_branch = call.bool("create", false)
        || repo.find_branch(target, BranchType::Local).is_ok()
        || (call.bool("track", true) && tracking_candidate(&repo, target).is_some());
    let warnings = if is_branch { rules::on_checkout(call, target)? } else { Vec::new() };
    let switched = if call.bool("create", false) {
        let head = repo
            .head()
            .and_then(|h| h.peel_to_commit())
            .map_err(|e| git_error("`create` needs a commit to branch from", &e))?;
        repo.branch(target, &head, false)
            .map_err(|e| git_error(&format!("branch `{target}`"), &e))?;
        switch_to_branch(&repo, target)?
    } else if repo.find_branch(target, BranchType::Local).is_ok() {
        switch_to_branch(&repo, target)?
    } else if let Some(remote) =
        call.bool("track", true).then(|| tracking_candidate(&repo, target)).flatten()
    {
        let commit = remote.get().peel_to_commit().map_err(|e| git_error("git checkout", &e))?;
        let upstream = remote.name().ok().flatten().unwrap_or_default().to_owned();
        let mut local = repo
            .branch(target, &commit, false)
            .map_err(|e| git_error(&format!("branch `{target}`"), &e))?;
        local.set_upstream(Some(&upstream)).map_err(|e| git_error("set upstream", &e))?;
        switch_to_branch(&repo, target)?
    } else {
        let object = repo.revparse_single(target).map_err(|_| {
            ToolError::new(ErrorCode::Git, format!("`{target}` is neither a branch nor a commit"))
        })?;
        let commit = object.peel_to_commit().map_err(|e| git_error(&format!("`{target}`"), &e))?;
        repo.checkout_tree(commit.as_object(), Some(CheckoutBuilder::new().safe()))
            .map_err(|e| git_error("git checkout", &e))?;
        repo.set_head_detached(commit.id()).map_err(|e| git_error("git checkout", &e))?;
        json!({ "checked_out": true, "detached": true, "commit": commit.id().to_string() })
    };
    let mut switched = switched;
    if !warnings.is_empty() {
        switched["violations"] = json!(warnings);
    }
    Ok(Output::data(switched))
}

/// The one remote branch named `<remote>/<target>`, if exactly one remote has it.
fn tracking_candidate<'r>(repo: &'r Repository, target: &str) -> Option<git2::Branch<'r>> {
    let remotes = repo.remotes().ok()?;
    let mut found: Vec<git2::Branch<'r>> = remotes
        .iter()
        .flatten()
        .flatten()
        .filter_map(|remote| {
            repo.find_branch(&format!("{remote}/{target}"), BranchType::Remote).ok()
        })
        .collect();
    if found.len() == 1 { found.pop() } else { None }
}

fn switch_to_branch(repo: &Repository, name: &str) -> Result<serde_json::Value, ToolError> {
    let refname = format!("refs/heads/{name}");
    let commit = repo
        .find_reference(&refname)
        .and_then(|r| r.peel_to_commit())
        .map_err(|e| git_error(&format!("branch `{name}`"), &e))?;
    repo.checkout_tree(commit.as_object(), Some(CheckoutBuilder::new().safe()))
        .map_err(|e| git_error("git checkout", &e))?;
    repo.set_head(&refname).map_err(|e| git_error("git checkout", &e))?;
    Ok(json!({ "checked_out": true, "branch": name, "commit": commit.id().to_string() }))
}
