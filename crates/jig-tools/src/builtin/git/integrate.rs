//! `git_merge` and `git_rebase`, computed in memory: the new commits are built from trees
//! first, and only when every step applied cleanly are the working tree and the branch moved.
//! A conflict reports its paths and changes nothing.

use git2::build::CheckoutBuilder;
use git2::{Commit, Oid, Repository, Sort};
use jig_model::ErrorCode;
use serde_json::{Value, json};

use super::{git_error, open, require_clean, revision, signature};
use crate::builtin::call::Call;
use jig_exec::{Output, ToolError};

pub(in crate::builtin) fn merge(call: &Call) -> Result<Output, ToolError> {
    let repo = open(call)?;
    let branch = revision(call, "branch")?;
    require_clean(&repo, "`git_merge`", true)?;
    let theirs = commit_of(&repo, branch)?;
    let outcome = merge_into_head(call, &repo, &theirs, branch, call.bool("no_ff", false))?;
    Ok(Output::data(outcome))
}

pub(in crate::builtin) fn rebase(call: &Call) -> Result<Output, ToolError> {
    let repo = open(call)?;
    let onto = revision(call, "onto")?;
    require_clean(&repo, "`git_rebase`", true)?;
    let onto = commit_of(&repo, onto)?;
    let outcome = rebase_head(call, &repo, &onto, call.bool("autosquash", false))?;
    Ok(Output::data(outcome))
}

pub(super) fn commit_of<'r>(repo: &'r Repository, spec: &str) -> Result<Commit<'r>, ToolError> {
    repo.revparse_single(spec)
        .and_then(|o| o.peel_to_commit())
        .map_err(|e| git_error(&format!("`{spec}`"), &e))
}

/// Merge `theirs` into HEAD: nothing to do, a fast-forward, or a merge commit.
pub(super) fn merge_into_head(
    call: &Call,
    repo: &Repository,
    theirs: &Commit<'_>,
    label: &str,
    no_ff: bool,
) -> Result<Value, ToolError> {
    let ours = head_commit(repo)?;
    let base = repo.merge_base(ours.id(), theirs.id()).map_err(|e| git_error("merge base", &e))?;
    if base == theirs.id() {
        return Ok(
            json!({ "merged": true, "conflicts": [], "up_to_date": true, "commit": ours.id().to_string() }),
        );
    }
    if base == ours.id() && !no_ff {
        move_head(repo, theirs)?;
        return Ok(
            json!({ "merged": true, "conflicts": [], "fast_forward": true, "commit": theirs.id().to_string() }),
        );
    }
    call.check_time()?;
    let mut index =
        repo.merge_commits(&ours, theirs, None).map_err(|e| git_error("git merge", &e))?;
    if index.has_conflicts() {
        let conflicts = conflict_paths(&index)?;
        return Ok(json!({ "merged": false, "conflicts": conflicts }));
    }
    let tree = index
        .write_tree_to(repo)
        .and_then(|id| repo.find_tree(id))
        .map_err(|e| git_error("git merge", &e))?;
    let signature = signature(repo)?;
    let message = format!("Merge branch '{label}'\n");
    let id = repo
        .commit(None, &signature, &signature, &message, &tree, &[&ours, theirs])
        .map_err(|e| git_error("git merge", &e))?;
    let merged = repo.find_commit(id).map_err(|e| git_error("git merge", &e))?;
    move_head(repo, &merged)?;
    Ok(json!({ "merged": true, "conflicts": [], "commit": id.to_string() }))
}

/// Replay HEAD's commits since its merge base with `onto` on top of `onto`.
pub(super) fn rebase_head(
    call: &Call,
    repo: &Repository,
    onto: &Commit<'_>,
    autosquash: bool,
) -> Result<Value, ToolError> {
    let head = head_commit(repo)?;
    let base = repo.merge_base(head.id(), onto.id()).map_err(|e| git_error("merge base", &e))?;
    let mut walk = repo.revwalk().map_err(|e| git_error("git rebase", &e))?;
    walk.set_sorting(Sort::TOPOLOGICAL | Sort::REVERSE).map_err(|e| git_error("git rebase", &e))?;
    walk.push(head.id()).map_err(|e| git_error("git rebase", &e))?;
    walk.hide(base).map_err(|e| git_error("git rebase", &e))?;
    let mut commits = Vec::new();
    for id in walk {
        let commit =
            id.and_then(|id| repo.find_commit(id)).map_err(|e| git_error("git rebase", &e))?;
        if commit.parent_count() > 1 {
            return Err(ToolError::new(
                ErrorCode::Git,
                format!(
                    "commit {} is a merge; `git_rebase` replays linear history only",
                    short(commit.id())
                ),
            ));
        }
        commits.push(commit);
    }
    if base == onto.id() && !autosquash {
        return Ok(json!({ "rebased": true, "up_to_date": true, "commit": head.id().to_string() }));
    }
    let plan = plan(commits, autosquash);
    let committer = signature(repo)?;
    let mut current = onto.clone();
    let mut applied = 0;
    for (commit, fold) in &plan {
        call.check_time()?;
        let mut index = repo
            .cherrypick_commit(commit, &current, 0, None)
            .map_err(|e| git_error("git rebase", &e))?;
        if index.has_conflicts() {
            return Err(ToolError::new(
                ErrorCode::Git,
                format!(
                    "commit {} does not apply on the new base; nothing was changed",
                    short(commit.id())
                ),
            )
            .with_details(
                json!({ "commit": commit.id().to_string(), "conflicts": conflict_paths(&index)? }),
            ));
        }
        let tree = index
            .write_tree_to(repo)
            .and_then(|id| repo.find_tree(id))
            .map_err(|e| git_error("git rebase", &e))?;
        let id = match fold {
            Fold::Keep if tree.id() == current.tree_id() => continue, // became empty: dropped, as git does
            Fold::Keep => repo.commit(
                None,
                &commit.author(),
                &committer,
                commit.message().unwrap_or_default(),
                &tree,
                &[&current],
            ),
            Fold::Fixup | Fold::Squash => {
                let mut message = current.message().unwrap_or_default().to_owned();
                if *fold == Fold::Squash {
                    let extra: Vec<&str> =
                        commit.message().unwrap_or_default().lines().skip(1).collect();
                    let extra = extra.join("\n");
                    if !extra.trim().is_empty() {
                        message = format!("{}\n\n{}\n", message.trim_end(), extra.trim());
                    }
                }
                let parents: Vec<Commit<'_>> = current.parents().collect();
                let parents: Vec<&Commit<'_>> = parents.iter().collect();
                repo.commit(None, &current.author(), &committer, &message, &tree, &parents)
            }
        }
        .map_err(|e| git_error("git rebase", &e))?;
        current = repo.find_commit(id).map_err(|e| git_error("git rebase", &e))?;
        applied += 1;
    }
    move_head(repo, &current)?;
    Ok(json!({ "rebased": true, "applied": applied, "commit": current.id().to_string() }))
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fold {
    Keep,
    Fixup,
    Squash,
}

/// The order to replay commits in: with autosquash, each `fixup! X` / `squash! X` moves right
/// after the commit whose subject is X (and folds into it).
fn plan(commits: Vec<Commit<'_>>, autosquash: bool) -> Vec<(Commit<'_>, Fold)> {
    if !autosquash {
        return commits.into_iter().map(|c| (c, Fold::Keep)).collect();
    }
    let mut plan: Vec<(Commit<'_>, Fold)> = Vec::new();
    for commit in commits {
        let subject = summary(&commit);
        let (fold, target) = if let Some(rest) = subject.strip_prefix("fixup! ") {
            (Fold::Fixup, Some(rest.to_owned()))
        } else if let Some(rest) = subject.strip_prefix("squash! ") {
            (Fold::Squash, Some(rest.to_owned()))
        } else {
            (Fold::Keep, None)
        };
        let position = target.and_then(|target| {
            let at = plan.iter().position(|(c, f)| *f == Fold::Keep && summary(c) == target)?;
            // After the target and any fixups already attached to it.
            let mut end = at + 1;
            while end < plan.len() && plan[end].1 != Fold::Keep {
                end += 1;
            }
            Some(end)
        });
        match position {
            Some(at) => plan.insert(at, (commit, fold)),
            None => plan.push((commit, Fold::Keep)),
        }
    }
    plan
}

fn summary(commit: &Commit<'_>) -> String {
    commit.summary().ok().flatten().unwrap_or_default().to_owned()
}

fn head_commit(repo: &Repository) -> Result<Commit<'_>, ToolError> {
    repo.head().and_then(|h| h.peel_to_commit()).map_err(|e| git_error("HEAD", &e))
}

/// Update the working tree to `commit`, then point HEAD (its branch, or HEAD itself when
/// detached) at it.
fn move_head(repo: &Repository, commit: &Commit<'_>) -> Result<(), ToolError> {
    repo.checkout_tree(commit.as_object(), Some(CheckoutBuilder::new().safe()))
        .map_err(|e| git_error("update the working tree", &e))?;
    let head = repo.head().map_err(|e| git_error("HEAD", &e))?;
    if head.is_branch() {
        let mut branch = head.resolve().map_err(|e| git_error("HEAD", &e))?;
        branch
            .set_target(commit.id(), "jig: move branch")
            .map_err(|e| git_error("move the branch", &e))?;
    } else {
        repo.set_head_detached(commit.id()).map_err(|e| git_error("move HEAD", &e))?;
    }
    Ok(())
}

fn conflict_paths(index: &git2::Index) -> Result<Vec<String>, ToolError> {
    let conflicts = index.conflicts().map_err(|e| git_error("conflicts", &e))?;
    let mut paths: Vec<String> = conflicts
        .flatten()
        .filter_map(|c| c.our.or(c.their).or(c.ancestor))
        .map(|entry| String::from_utf8_lossy(&entry.path).into_owned())
        .collect();
    paths.sort();
    paths.dedup();
    Ok(paths)
}

fn short(id: Oid) -> String {
    id.to_string()[..10].to_owned()
}
