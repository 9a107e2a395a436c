//! The repository's code-loading configuration: what git, run later by a person *outside* any
//! sandbox, would execute. A sandboxed process may write the workspace, but none of this: a hook
//! or a `core.fsmonitor` planted here would run unconfined at that person's next `git status` or
//! commit.
//!
//! Kept read-only in every sandbox (bound over the writable workspace):
//! - the repository's `config`, `config.worktree`, `hooks/` and `info/`; a missing `hooks/` or
//!   `info/` is created first (empty, as `git init` makes them), since a directory that does not
//!   exist cannot be bound and could then be created by the process;
//! - the same of every submodule's git directory under `.git/modules/` (a submodule's config is
//!   read when `git status` recurses into it), and of each checked-out submodule named in
//!   `.gitmodules` whose `.git` is a directory of its own;
//! - `.git/worktrees/` (its `commondir` and `gitdir` files say where a linked worktree's
//!   repository is), an in-progress rebase or sequencer (their to-do lists hold `exec` lines
//!   that `git rebase --continue` runs);
//! - a `.git` that is a file (a linked worktree's or a submodule's pointer to its repository),
//!   which would otherwise be redirected to a repository the process made.
//!
//! Objects, refs, the index and the logs stay writable, so `git add` and `git commit` work in the
//! sandbox. A repository the process creates itself is not covered; file tools cannot touch any
//! `.git` (`sec.paths.protected`).

use std::path::{Path, PathBuf};

/// How deep `.git/modules/` is searched for submodules' git directories (nested submodules
/// live at `modules/a/modules/b/…`).
const MODULE_DEPTH: usize = 6;

/// The paths under `root` to keep read-only (those that exist, after creating what must exist).
pub(crate) fn protected(root: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let git = root.join(".git");
    guard_dot_git(&git, &mut out);
    if git.is_dir() {
        for name in ["worktrees", "rebase-merge", "rebase-apply", "sequencer"] {
            out.push(git.join(name));
        }
        let mut stack = vec![(git.join("modules"), 0)];
        while let Some((dir, depth)) = stack.pop() {
            let Ok(entries) = fs_err::read_dir(&dir) else { continue };
            for entry in entries.flatten() {
                let path = entry.path();
                if !entry.file_type().is_ok_and(|t| t.is_dir()) {
                    continue;
                }
                if path.join("HEAD").is_file() {
                    guard_git_dir(&path, &mut out);
                    stack.push((path.join("modules"), depth + 1));
                } else if depth < MODULE_DEPTH {
                    // A submodule named with slashes (`libs/a`) nests plain directories.
                    stack.push((path, depth + 1));
                }
            }
        }
    }
    for path in submodule_paths(root) {
        guard_dot_git(&root.join(path).join(".git"), &mut out);
    }
    out.retain(|path| std::fs::symlink_metadata(path).is_ok());
    out
}

/// A `.git` entry: a file (a pointer to the repository) is itself kept; a directory is a
/// repository.
fn guard_dot_git(dot_git: &Path, out: &mut Vec<PathBuf>) {
    match std::fs::symlink_metadata(dot_git) {
        Ok(meta) if meta.is_dir() => guard_git_dir(dot_git, out),
        Ok(_) => out.push(dot_git.to_path_buf()),
        Err(_) => {}
    }
}

/// One repository's configuration and hooks.
fn guard_git_dir(git_dir: &Path, out: &mut Vec<PathBuf>) {
    for name in ["hooks", "info"] {
        let dir = git_dir.join(name);
        if std::fs::symlink_metadata(&dir).is_err() {
            // Best effort: a repository Jig cannot write is one the process cannot either.
            let _ = fs_err::create_dir(&dir);
        }
        out.push(dir);
    }
    out.push(git_dir.join("config"));
    out.push(git_dir.join("config.worktree"));
}

/// The `path = …` entries of the workspace's `.gitmodules`, those that stay inside it.
fn submodule_paths(root: &Path) -> Vec<PathBuf> {
    let Ok(text) = fs_err::read_to_string(root.join(".gitmodules")) else { return Vec::new() };
    text.lines()
        .filter_map(|line| {
            let (key, value) = line.split_once('=')?;
            (key.trim().eq_ignore_ascii_case("path")).then(|| value.trim().trim_matches('"'))
        })
        .map(PathBuf::from)
        .filter(|path| {
            path.components().all(|c| matches!(c, std::path::Component::Normal(_)))
                && !path.as_os_str().is_empty()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(root: &Path) -> Vec<String> {
        let mut names: Vec<String> = protected(root)
            .iter()
            .map(|p| p.strip_prefix(root).expect("inside").display().to_string())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn missing_hooks_and_info_are_made_so_that_they_can_be_kept() {
        let dir = tempfile::tempdir().expect("tmp");
        let root = dir.path();
        fs_err::create_dir_all(root.join(".git/objects")).expect("mkdir");
        fs_err::write(root.join(".git/config"), "[core]\n").expect("write");
        assert_eq!(names(root), [".git/config", ".git/hooks", ".git/info"]);
        assert!(root.join(".git/hooks").is_dir() && root.join(".git/info").is_dir());
    }

    #[test]
    fn submodules_worktrees_and_a_rebase_under_way_are_kept() {
        let dir = tempfile::tempdir().expect("tmp");
        let root = dir.path();
        for module in ["libs/a", "libs/a/modules/inner"] {
            let git_dir = root.join(".git/modules").join(module);
            fs_err::create_dir_all(git_dir.join("objects")).expect("mkdir");
            fs_err::write(git_dir.join("HEAD"), "ref: refs/heads/main\n").expect("write");
            fs_err::write(git_dir.join("config"), "[core]\n").expect("write");
        }
        fs_err::create_dir_all(root.join(".git/worktrees/w")).expect("mkdir");
        fs_err::create_dir_all(root.join(".git/rebase-merge")).expect("mkdir");
        fs_err::write(root.join(".git/config"), "[core]\n").expect("write");
        fs_err::write(
            root.join(".gitmodules"),
            "[submodule \"a\"]\n\tpath = libs/a\n[submodule \"b\"]\n\tpath = ../outside\n",
        )
        .expect("write");
        fs_err::create_dir_all(root.join("libs/a")).expect("mkdir");
        fs_err::write(root.join("libs/a/.git"), "gitdir: ../../.git/modules/libs/a\n")
            .expect("write");
        let kept = names(root);
        for want in [
            ".git/modules/libs/a/config",
            ".git/modules/libs/a/hooks",
            ".git/modules/libs/a/modules/inner/config",
            ".git/modules/libs/a/modules/inner/hooks",
            ".git/worktrees",
            ".git/rebase-merge",
            "libs/a/.git",
        ] {
            assert!(kept.contains(&want.to_owned()), "{want} in {kept:?}");
        }
        assert!(!kept.iter().any(|k| k.contains("outside")), "{kept:?}");
    }

    #[test]
    fn a_workspace_without_a_repository_keeps_nothing() {
        let dir = tempfile::tempdir().expect("tmp");
        assert!(protected(dir.path()).is_empty());
        assert!(!dir.path().join(".git").exists());
    }
}
