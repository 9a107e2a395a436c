//! Finding a program the way Jig (not the tool) would run it: on Jig's own PATH. A leaf, so the
//! sandbox, the host path and process management can each ask without depending on the others.

use std::path::{Path, PathBuf};

/// `program` itself when it names a path, else the first match in the absolute directories of
/// Jig's own PATH (never the tool's: its environment exists only inside the sandbox).
pub fn find_program(program: &str) -> Option<PathBuf> {
    if program.contains('/') {
        return Some(PathBuf::from(program));
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .filter(|dir| dir.is_absolute())
        .map(|dir| dir.join(program))
        .find(|candidate| is_executable(candidate))
}

pub(crate) fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    path.metadata().is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}
