//! What changed, as the rules see it: files and added lines, from git when the workspace is a
//! repository (the staged changes at commit time, everything since HEAD on demand), else every
//! file in scope.

use git2::{DiffOptions, Repository};

use crate::builtin::call::Call;
use crate::builtin::walk::Scope;
use jig_exec::ToolError;

/// An added line.
#[derive(Debug, Clone)]
pub(super) struct Line {
    pub file: String,
    pub number: usize,
    pub text: String,
}

/// The changes under review.
#[derive(Debug, Default)]
pub(super) struct Changes {
    /// Changed files (added, modified, deleted, renamed), relative to the root.
    pub files: Vec<String>,
    /// Added lines.
    pub lines: Vec<Line>,
    /// The current branch, when on one.
    pub branch: Option<String>,
}

/// The repository of the workspace, if it is one.
pub(super) fn repository(call: &Call) -> Option<Repository> {
    crate::builtin::repo::open(call).ok()
}

/// Changes in `repo`: staged ones only, or everything since HEAD including untracked files.
pub(super) fn from_git(repo: &Repository, staged_only: bool) -> Result<Changes, ToolError> {
    let git = |e: git2::Error| {
        ToolError::new(jig_model::ErrorCode::Git, format!("reading changes: {}", e.message()))
    };
    let head = repo.head().ok().and_then(|h| h.peel_to_tree().ok());
    let mut options = DiffOptions::new();
    let diff = if staged_only {
        let index = repo.index().map_err(git)?;
        repo.diff_tree_to_index(head.as_ref(), Some(&index), Some(&mut options))
    } else {
        options.include_untracked(true).recurse_untracked_dirs(true).show_untracked_content(true);
        repo.diff_tree_to_workdir_with_index(head.as_ref(), Some(&mut options))
    }
    .map_err(git)?;
    let mut changes = Changes::default();
    for delta in diff.deltas() {
        if let Some(path) = delta.new_file().path().or_else(|| delta.old_file().path()) {
            let path = path.to_string_lossy().into_owned();
            if !path.starts_with(".jig/") {
                changes.files.push(path);
            }
        }
    }
    diff.foreach(
        &mut |_, _| true,
        None,
        None,
        Some(&mut |delta, _hunk, line| {
            let added = (line.origin() == '+')
                .then(|| delta.new_file().path().zip(line.new_lineno()))
                .flatten();
            if let Some((path, number)) = added {
                let file = path.to_string_lossy().into_owned();
                if !file.starts_with(".jig/") {
                    let text = String::from_utf8_lossy(line.content())
                        .trim_end_matches(['\n', '\r'])
                        .to_owned();
                    changes.lines.push(Line { file, number: number as usize, text });
                }
            }
            true
        }),
    )
    .map_err(git)?;
    changes.branch = repo
        .head()
        .ok()
        .filter(git2::Reference::is_branch)
        .and_then(|h| h.shorthand().ok().map(str::to_owned));
    Ok(changes)
}

/// Without git: every file under `glob` counts as changed, every line as added.
pub(super) fn from_files(call: &Call, glob: Option<&str>) -> Result<Changes, ToolError> {
    let mut changes = Changes::default();
    let mut files = Scope::new(call, glob)?.collect(call, false, true, |_, path| Some(path))?;
    files.sort();
    for file in &files {
        call.check_time()?;
        let Ok(bytes) = call.workspace.read(file, 4 * 1024 * 1024) else { continue };
        if bytes.contains(&0) {
            continue;
        }
        for (index, text) in String::from_utf8_lossy(&bytes).lines().enumerate() {
            changes.lines.push(Line {
                file: file.clone(),
                number: index + 1,
                text: text.to_owned(),
            });
        }
    }
    changes.files = files;
    Ok(changes)
}
