//! Grants: the workspace paths a tool's process may see (a toolpack's `caps.filesystem`, an
//! upstream server's `grants`), resolved by the kernel before the sandbox binds them.
//!
//! A grant is text in a file the repository ships, so it is resolved like every path a tool
//! names — beneath the root, by `openat2` — and more strictly: no symlink may lie anywhere on it
//! (`RESOLVE_NO_SYMLINKS`). The sandbox binds a grant *at its own path* and binds the
//! protections (`.jig/` hidden, manifests and git's code-loading configuration read-only) at
//! theirs. A link would put what it points to at another path: `vendor -> /` shows the machine
//! inside the workspace, `tree -> .` the whole workspace again with none of the protections over
//! it. What the kernel opened is handed to the sandbox as a descriptor (bwrap's `--bind-fd`), so
//! the name cannot be swapped for a link between this check and the mount.
//!
//! A grant never reaches Jig's state (`.jig`), for reading or writing, and never makes a
//! repository's internals (any `.git`) or a manifest writable, however it is spelled (`.jig`,
//! `./.jig/x`, `a/../.git/hooks`). Reading a `.git` may be granted — `git log` needs it, and
//! the sandbox binds it read-only — where the file tools never open one: a tool that declares
//! it says so in its definition, for the person who reads it.

use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};

use rustix::fs::{Mode, OFlags, ResolveFlags, openat2};
use rustix::io::Errno;

use super::{Access, SandboxError, Workspace, check_lexically, lexical};

/// How often a resolution is retried when the kernel says a rename raced it (`EAGAIN`).
const RACE_RETRIES: usize = 8;

/// A workspace path the kernel resolved for a sandbox: where to bind it, and what to bind.
#[derive(Debug)]
pub struct Grant {
    /// Where it is bound: the root as Jig names it, joined with the path as written (`.` and
    /// `..` resolved by name, which is exact because no link lies on the way).
    pub path: PathBuf,
    /// What the kernel opened there (`O_PATH`, close-on-exec).
    pub fd: OwnedFd,
}

impl Workspace {
    /// Resolve the grant `path` (relative to the root) for `access`. `Ok(None)`: a read grant of
    /// something that does not exist, which grants nothing. A write grant of a path that does
    /// not exist yet is granted through its nearest existing directory (a file the tool will
    /// create), which must itself lie plainly beneath the root.
    pub fn grant(&self, path: &str, access: Access) -> Result<Option<Grant>, SandboxError> {
        let escape = || SandboxError::Escape { path: path.to_owned() };
        if path.trim().is_empty() {
            return Err(escape());
        }
        check_lexically(path).map_err(|_| escape())?;
        // `.` dropped, `..` applied by name (it was checked not to climb out).
        let named = lexical(Path::new(""), path);
        // Judged by name before anything is opened, then by what was opened.
        self.check_grant(path, &lexical(&self.real_root, path), access)?;
        let mut at = named;
        loop {
            match self.open_path(path, &at)? {
                Some(fd) => {
                    self.check_grant(path, &self.real_root.join(&at), access)?;
                    return Ok(Some(Grant { path: self.root.join(&at), fd }));
                }
                None if access == Access::Read => return Ok(None),
                None => match at.parent() {
                    Some(parent) => at = parent.to_path_buf(),
                    None => return Err(SandboxError::NotFound { path: path.to_owned() }),
                },
            }
        }
    }

    /// Refuse a grant of `real` for `access`: `.jig` always, a `.git` or a manifest to write.
    fn check_grant(&self, shown: &str, real: &Path, access: Access) -> Result<(), SandboxError> {
        let protected = |why| Err(SandboxError::Protected { path: shown.to_owned(), why });
        if self.hidden_paths().iter().filter(|h| h.ends_with(".jig")).any(|h| real.starts_with(h)) {
            return protected("Jig's state is out of every sandbox's reach");
        }
        if access == Access::Write {
            // A `.git` (at any depth) or a manifest. A grant of a directory that holds one is
            // bound with the protections over it (`code_loading`), at their real paths.
            self.check_protected(shown, real, Access::Write)?;
        }
        Ok(())
    }

    /// `openat2(root, at, O_PATH, RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS)`; `None` when it does
    /// not exist.
    fn open_path(&self, shown: &str, at: &Path) -> Result<Option<OwnedFd>, SandboxError> {
        let flags = OFlags::PATH | OFlags::CLOEXEC;
        let resolve =
            ResolveFlags::BENEATH | ResolveFlags::NO_SYMLINKS | ResolveFlags::NO_MAGICLINKS;
        let target = if at.as_os_str().is_empty() { Path::new(".") } else { at };
        for _ in 0..RACE_RETRIES {
            match openat2(&self.dir, target, flags, Mode::empty(), resolve) {
                Ok(fd) => return Ok(Some(fd)),
                Err(Errno::AGAIN) => continue,
                Err(Errno::NOENT) => return Ok(None),
                Err(Errno::LOOP) => return Err(SandboxError::Link { path: shown.to_owned() }),
                Err(Errno::XDEV) => return Err(SandboxError::Escape { path: shown.to_owned() }),
                Err(Errno::NOSYS) => {
                    return Err(SandboxError::Io {
                        path: shown.to_owned(),
                        source: std::io::Error::other(
                            "this kernel has no openat2 (Linux 5.6 or later), which grants need",
                        ),
                    });
                }
                Err(e) => return Err(SandboxError::io(shown, e.into())),
            }
        }
        Err(SandboxError::Io {
            path: shown.to_owned(),
            source: std::io::Error::other("renamed repeatedly while it was being resolved"),
        })
    }
}

#[cfg(test)]
// Fixtures are written with std::fs: a failing test names the path in its message.
#[allow(clippy::disallowed_methods)]
mod tests {
    use std::os::unix::fs::symlink;

    use super::*;

    fn workspace() -> (tempfile::TempDir, Workspace) {
        let dir = tempfile::tempdir().expect("tmp");
        let root = dir.path();
        for sub in ["src", ".jig", ".git/hooks", "docs"] {
            std::fs::create_dir_all(root.join(sub)).expect("mkdir");
        }
        std::fs::write(root.join("jig.yaml"), "name: x\n").expect("write");
        let ws = Workspace::open(root).expect("open");
        (dir, ws)
    }

    #[test]
    fn a_plain_directory_is_granted_at_its_own_path() {
        let (dir, ws) = workspace();
        let grant = ws.grant("./src/../src", Access::Read).expect("grant").expect("exists");
        assert_eq!(grant.path, dir.path().join("src"));
        let whole = ws.grant(".", Access::Write).expect("grant").expect("exists");
        assert_eq!(whole.path, dir.path());
    }

    #[test]
    fn a_link_anywhere_on_a_grant_is_refused_whatever_it_points_to() {
        let (dir, ws) = workspace();
        let root = dir.path();
        symlink("/", root.join("vendor")).expect("symlink");
        symlink(".", root.join("tree")).expect("symlink");
        symlink("src", root.join("inside")).expect("symlink");
        for path in ["vendor", "vendor/etc", "tree", "tree/src", "inside"] {
            for access in [Access::Read, Access::Write] {
                let refused = ws.grant(path, access);
                assert!(matches!(refused, Err(SandboxError::Link { .. })), "{path}: {refused:?}");
            }
        }
        // A file yet to be created below a link is refused too, not granted through the link.
        assert!(matches!(ws.grant("vendor/new/x", Access::Write), Err(SandboxError::Link { .. })));
    }

    #[test]
    fn a_grant_never_reaches_the_store_the_repository_or_a_manifest_to_write() {
        let (_dir, ws) = workspace();
        for path in [".jig", "./.jig/x", "docs/../.jig"] {
            for access in [Access::Read, Access::Write] {
                let refused = ws.grant(path, access);
                assert!(
                    matches!(refused, Err(SandboxError::Protected { .. })),
                    "{path}: {refused:?}"
                );
            }
        }
        for path in [".git", ".git/hooks", "src/../.git/hooks", "jig.yaml"] {
            let refused = ws.grant(path, Access::Write);
            assert!(matches!(refused, Err(SandboxError::Protected { .. })), "{path}: {refused:?}");
        }
        // Read-only, the repository may be granted (`git log` needs it), and a manifest read.
        assert!(ws.grant(".git", Access::Read).expect("read").is_some());
        assert!(ws.grant("jig.yaml", Access::Read).expect("read").is_some());
    }

    #[test]
    fn a_grant_outside_the_root_or_missing_is_refused_or_grants_nothing() {
        let (dir, ws) = workspace();
        for path in ["/etc", "../x", "src/../../x", "", "~/x"] {
            assert!(
                matches!(ws.grant(path, Access::Read), Err(SandboxError::Escape { .. })),
                "{path}"
            );
        }
        assert!(ws.grant("missing", Access::Read).expect("read").is_none());
        let new = ws.grant("docs/new/report.txt", Access::Write).expect("write").expect("parent");
        assert_eq!(new.path, dir.path().join("docs"));
    }
}
