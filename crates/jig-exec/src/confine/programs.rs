//! Where a program is installed, for its sandbox to read.

use std::path::{Path, PathBuf};

/// Where a program is installed: its directory's parent (`/usr` for `/usr/bin/node`,
/// `~/.pyenv` for a pyenv shim), for the path as found and as resolved; a rustup proxy also
/// needs its toolchains (`RUSTUP_HOME`).
pub(super) fn prefixes(program: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    // A relative program (`./bin/report.sh`) is the workspace's, started from the sandbox's
    // working directory and visible through the workspace's grants. Resolving it here would
    // resolve it against Jig's own working directory, and its empty "prefix" would cover every
    // other grant.
    if !program.is_absolute() {
        return out;
    }
    let resolved = program.canonicalize().ok();
    for path in [Some(program.to_path_buf()), resolved.clone()].into_iter().flatten() {
        let Some(dir) = path.parent() else { continue };
        match dir.parent() {
            None => {}
            Some(prefix) if prefix == Path::new("/") => {}
            // `~/bin/tool`: its prefix would be the person's home, every key and history file
            // in it; the program's own directory is what it needs.
            Some(prefix) if holds_home(prefix) => out.push(dir.to_path_buf()),
            Some(prefix) => out.push(prefix.to_path_buf()),
        }
    }
    if resolved.as_deref().and_then(Path::file_name) == Some("rustup".as_ref()) {
        let home = std::env::var_os("RUSTUP_HOME")
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".rustup")));
        out.extend(home);
    }
    out
}

/// Whether `dir` is a home directory or holds one (`/home`, `/root`, `$HOME` and above).
fn holds_home(dir: &Path) -> bool {
    let home = std::env::var_os("HOME").map(PathBuf::from);
    home.is_some_and(|home| home.starts_with(dir))
        || [Path::new("/home"), Path::new("/root")].iter().any(|h| h.starts_with(dir))
}

/// `~/x` with the user's home directory.
pub(super) fn expand_home(path: &str) -> PathBuf {
    match (path.strip_prefix("~/"), std::env::var_os("HOME")) {
        (Some(rest), Some(home)) => PathBuf::from(home).join(rest),
        _ => PathBuf::from(path),
    }
}
