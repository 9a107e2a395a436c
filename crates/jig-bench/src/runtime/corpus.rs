//! The trees the benchmarks work on.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::Context;

/// Copy the first `files` files of the crates in Cargo's registry (crates in name order) into
/// `into`: a large real tree that exists wherever Jig was built.
pub fn registry_sample(into: &Path, files: usize) -> anyhow::Result<PathBuf> {
    let home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo")))
        .context("no CARGO_HOME or HOME")?;
    let registry = home.join("registry/src");
    let index = fs_err::read_dir(&registry)?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .next()
        .context("no registry sources")?;
    let mut crates: Vec<PathBuf> =
        fs_err::read_dir(&index)?.filter_map(Result::ok).map(|e| e.path()).collect();
    crates.sort();
    let target = into.join("corpus");
    let mut copied = 0;
    for krate in crates {
        if copied >= files {
            break;
        }
        copied += copy_tree(&krate, &target.join(krate.file_name().context("name")?))?;
    }
    Ok(target)
}

fn copy_tree(from: &Path, to: &Path) -> anyhow::Result<usize> {
    fs_err::create_dir_all(to)?;
    let mut count = 0;
    for entry in fs_err::read_dir(from)? {
        let entry = entry?;
        let kind = entry.file_type()?;
        let target = to.join(entry.file_name());
        if kind.is_dir() {
            count += copy_tree(&entry.path(), &target)?;
        } else if kind.is_file() {
            fs_err::copy(entry.path(), &target)?;
            count += 1;
        }
    }
    Ok(count)
}

/// `.rs` files of `tree` (sorted) until they hold at least `lines` lines, copied into `into`.
pub fn rust_lines(
    tree: &Path,
    into: &Path,
    lines: usize,
) -> anyhow::Result<(PathBuf, usize, usize)> {
    let mut files = Vec::new();
    collect_rs(tree, &mut files)?;
    files.sort();
    let target = into.join("rust");
    let (mut total, mut count) = (0, 0);
    for file in files {
        if total >= lines {
            break;
        }
        let text = fs_err::read_to_string(&file).unwrap_or_default();
        let relative = file.strip_prefix(tree)?;
        let dest = target.join(relative);
        fs_err::create_dir_all(dest.parent().context("parent")?)?;
        fs_err::write(&dest, &text)?;
        total += text.lines().count();
        count += 1;
    }
    Ok((target, count, total))
}

fn collect_rs(dir: &Path, out: &mut Vec<PathBuf>) -> anyhow::Result<()> {
    for entry in fs_err::read_dir(dir)? {
        let entry = entry?;
        let kind = entry.file_type()?;
        if kind.is_dir() {
            collect_rs(&entry.path(), out)?;
        } else if entry.path().extension().is_some_and(|e| e == "rs") {
            out.push(entry.path());
        }
    }
    Ok(())
}

/// A git repository of `files` small committed files, with some changed and some new.
pub fn git_repo(into: &Path, files: usize) -> anyhow::Result<PathBuf> {
    let root = into.join("repo");
    for i in 0..files {
        let path = root.join(format!("d{:02}/f{i:05}.txt", i % 100));
        fs_err::create_dir_all(path.parent().context("parent")?)?;
        fs_err::write(&path, format!("file {i}\n"))?;
    }
    git(&root, &["init", "-q", "-b", "main"])?;
    git(&root, &["add", "-A"])?;
    git(
        &root,
        &["-c", "user.name=b", "-c", "user.email=b@example.invalid", "commit", "-q", "-m", "files"],
    )?;
    for i in 0..10 {
        fs_err::write(root.join(format!("d{:02}/f{i:05}.txt", i % 100)), "changed\n")?;
    }
    for i in 0..5 {
        fs_err::write(root.join(format!("new{i}.txt")), "new\n")?;
    }
    Ok(root)
}

fn git(dir: &Path, args: &[&str]) -> anyhow::Result<()> {
    let status = Command::new("git").args(args).current_dir(dir).status()?;
    anyhow::ensure!(status.success(), "git {args:?} failed");
    Ok(())
}
