//! Rule `sec.paths.sandbox`: tools touch files beneath the workspace root only.
//!
//! Paths are resolved by the kernel, not by comparing strings: the workspace is a directory handle
//! (cap-std), and every open is relative to it, done by `openat2(RESOLVE_BENEATH)` where Linux
//! has it (cap-std's own checked walk elsewhere). So `..`, an absolute path, a symlink inside the
//! workspace pointing out, a symlink swapped in after a check, and a sibling directory whose name
//! merely starts like the root's are all refused at the moment of the open, where no race can
//! slip between check and use.
//!
//! Rule `sec.paths.protected`: Jig's own state (`.jig/`) and the internals of any repository
//! (a `.git` at any depth: a nested repository, a submodule's pointer) are out of every file
//! tool's reach, and the manifests (`jig.yaml`, `gert.yaml`) are read-only:
//! a tool that could rewrite them could widen its own policy or erase its audit. The check is
//! made on what the kernel opened (the real path of the open directory or file, read back from
//! `/proc/self/fd`), so a symlink or a `..` detour to `.jig` is caught like the plain name.
//!
//! Only regular files are read: a FIFO or a device is opened non-blocking and refused, so no read
//! can hang past its timeout.

use std::io::{Read, Write};
use std::os::fd::AsFd;
use std::path::{Component, Path, PathBuf};

use cap_std::ambient_authority;
use cap_std::fs::{Dir, OpenOptions, OpenOptionsExt as _};

use crate::decision::Denial;

mod grant;
pub use grant::Grant;

/// The rule id.
pub const RULE: &str = "sec.paths.sandbox";

/// The rule id of protected paths.
pub const PROTECTED_RULE: &str = "sec.paths.protected";

/// Workspace entries no tool may open: Jig's state and the repository's internals.
pub const HIDDEN: [&str; 2] = [".jig", ".git"];

/// Workspace files tools may read but never change: the manifests.
pub const READ_ONLY: [&str; 2] = ["jig.yaml", "gert.yaml"];

/// What an operation does to a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// Reads it.
    Read,
    /// Creates, changes, moves or removes it.
    Write,
}

/// Why a file operation in the workspace failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SandboxError {
    /// The path leads outside the workspace.
    #[error("`{path}` is outside the workspace")]
    Escape {
        /// The path as given.
        path: String,
    },
    /// A symlink lies on a path that may not pass one (a sandbox's grant).
    #[error(
        "`{path}` is a symbolic link or passes through one; a grant names a file or directory beneath the workspace itself"
    )]
    Link {
        /// The path as given.
        path: String,
    },
    /// The file does not exist.
    #[error("`{path}` does not exist")]
    NotFound {
        /// The path as given.
        path: String,
    },
    /// The file is larger than allowed.
    #[error("`{path}` is {size} bytes, more than the {max} allowed")]
    TooLarge {
        /// The path as given.
        path: String,
        /// Its size.
        size: u64,
        /// The limit.
        max: u64,
    },
    /// The path is Jig's own state, the repository's internals, or a manifest being changed.
    #[error("`{path}` is protected: {why}")]
    Protected {
        /// The path as given.
        path: String,
        /// What it is.
        why: &'static str,
    },
    /// Not a regular file (a FIFO, a device, a socket).
    #[error("`{path}` is not a regular file")]
    NotRegular {
        /// The path as given.
        path: String,
    },
    /// Any other I/O failure, with its path.
    #[error("`{path}`: {source}")]
    Io {
        /// The path as given.
        path: String,
        /// The cause.
        source: std::io::Error,
    },
}

impl SandboxError {
    /// Classify an I/O error on `path`: escapes and missing files get their own variants.
    pub fn io(path: &str, source: std::io::Error) -> Self {
        // cap-std reports an escape as PermissionDenied with this message, or ELOOP/EXDEV from
        // openat2's RESOLVE_BENEATH.
        let escape = source.to_string().contains("outside of the filesystem")
            || matches!(source.raw_os_error(), Some(code) if code == 18 /* EXDEV */);
        if escape {
            Self::Escape { path: path.to_owned() }
        } else if source.kind() == std::io::ErrorKind::NotFound {
            Self::NotFound { path: path.to_owned() }
        } else {
            Self::Io { path: path.to_owned(), source }
        }
    }
}

/// A lexical check, for deciding before anything is opened: absolute paths and `..` that
/// climbs above the root are refused. The kernel check at open time is what enforces the rule.
pub fn check_lexically(path: &str) -> Result<(), Denial> {
    let as_path = Path::new(path);
    if as_path.is_absolute() || path.starts_with('~') {
        return Err(Denial::new(RULE, format!("`{path}` is not a path inside the workspace")));
    }
    let mut depth: i32 = 0;
    for component in as_path.components() {
        match component {
            Component::ParentDir => depth -= 1,
            Component::Normal(_) => depth += 1,
            _ => {}
        }
        if depth < 0 {
            return Err(Denial::new(RULE, format!("`{path}` climbs out of the workspace")));
        }
    }
    Ok(())
}

/// `root` joined with `path` (already checked not to climb out), `.` and `..` resolved by name:
/// the real path of what `path` names when no symlink lies on it.
fn lexical(root: &Path, path: &str) -> PathBuf {
    let mut out = root.to_path_buf();
    for component in Path::new(path).components() {
        match component {
            Component::Normal(name) => out.push(name),
            Component::ParentDir => {
                out.pop();
            }
            _ => {}
        }
    }
    out
}

/// The workspace: the one directory tools may touch.
#[derive(Debug)]
pub struct Workspace {
    root: PathBuf,
    /// `root` as the kernel names it (symlinks resolved): what real paths are compared with.
    real_root: PathBuf,
    dir: Dir,
    /// Real paths of entries no tool opens.
    hidden: Vec<PathBuf>,
    /// Real paths of files tools only read.
    read_only: Vec<PathBuf>,
}

impl Workspace {
    /// Open the workspace at `root`.
    pub fn open(root: &Path) -> Result<Self, SandboxError> {
        let shown = root.display().to_string();
        let dir = Dir::open_ambient_dir(root, ambient_authority())
            .map_err(|e| SandboxError::io(&shown, e))?;
        let real_root = root.canonicalize().map_err(|e| SandboxError::io(&shown, e))?;
        Ok(Self {
            root: root.to_path_buf(),
            hidden: HIDDEN.iter().map(|name| real_root.join(name)).collect(),
            read_only: READ_ONLY.iter().map(|name| real_root.join(name)).collect(),
            real_root,
            dir,
        })
    }

    /// Also keep `paths` (relative to the root: the manifests of packages inside the workspace)
    /// read-only.
    #[must_use]
    pub fn with_read_only(mut self, paths: impl IntoIterator<Item = PathBuf>) -> Self {
        self.read_only.extend(paths.into_iter().map(|p| self.real_root.join(p)));
        self
    }

    /// Paths (absolute, as the kernel names them) that a tool's process must not see.
    pub fn hidden_paths(&self) -> &[PathBuf] {
        &self.hidden
    }

    /// Paths (absolute) that a tool's process may read but not change.
    pub fn read_only_paths(&self) -> &[PathBuf] {
        &self.read_only
    }

    /// Refuse `real` (an absolute path as the kernel resolved it) for `access`.
    fn check_protected(
        &self,
        shown: &str,
        real: &Path,
        access: Access,
    ) -> Result<(), SandboxError> {
        let protected = |why| Err(SandboxError::Protected { path: shown.to_owned(), why });
        if self.hidden.iter().any(|hidden| real.starts_with(hidden)) {
            return protected("Jig's state and the repository's internals are out of tools' reach");
        }
        // Any `.git`, not only the root's: a nested repository's config or a submodule's
        // pointer to its repository is code that git outside the sandbox would load.
        if real
            .strip_prefix(&self.real_root)
            .is_ok_and(|inside| inside.components().any(|c| c.as_os_str() == ".git"))
        {
            return protected("a repository's internals are out of tools' reach");
        }
        if access == Access::Write && self.read_only.iter().any(|file| real == file) {
            return protected("manifests are read-only for tools");
        }
        Ok(())
    }

    /// The real path of an open file or directory.
    fn real_path(&self, shown: &str, handle: impl AsFd) -> Result<PathBuf, SandboxError> {
        let fd = std::os::fd::AsRawFd::as_raw_fd(&handle.as_fd());
        std::fs::read_link(format!("/proc/self/fd/{fd}")).map_err(|e| SandboxError::io(shown, e))
    }

    /// Refuse an opened file or directory (`handle`, reached by `shown`) if what the kernel
    /// opened is protected for `access` — for callers that open through a symlink.
    pub fn check_opened(
        &self,
        shown: &str,
        handle: impl AsFd,
        access: Access,
    ) -> Result<(), SandboxError> {
        let real = self.real_path(shown, handle)?;
        self.check_protected(shown, &real, access)
    }

    /// Check `name` inside the opened directory `dir` (`shown` is the path as given).
    fn check_entry(
        &self,
        shown: &str,
        dir: &Dir,
        name: &str,
        access: Access,
    ) -> Result<(), SandboxError> {
        let real = self.real_path(shown, dir)?.join(name);
        self.check_protected(shown, &real, access)
    }

    /// Check the directories `create_dir_all(parent)` would make: the nearest existing ancestor
    /// as the kernel resolves it, plus the names still to be created.
    fn check_before_creating(&self, shown: &str, parent: &Path) -> Result<(), SandboxError> {
        let mut existing = parent;
        while !existing.as_os_str().is_empty() && self.dir.metadata(existing).is_err() {
            existing = existing.parent().unwrap_or(Path::new(""));
        }
        let opened = if existing.as_os_str().is_empty() {
            self.dir.try_clone()
        } else {
            self.dir.open_dir(existing)
        }
        .map_err(|e| SandboxError::io(shown, e))?;
        let rest = parent.strip_prefix(existing).unwrap_or(parent);
        let real = self.real_path(shown, &opened)?.join(rest);
        self.check_protected(shown, &real, Access::Write)
    }

    /// Whether `path` (relative to the root) names a protected entry for `access`, judged by
    /// its name alone: for listings and walks, which skip what the open-time check refuses.
    pub fn is_protected(&self, path: &Path, access: Access) -> bool {
        let real = self.real_root.join(path);
        self.check_protected("", &real, access).is_err()
    }

    /// The root directory.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The root as a directory handle: every open through it stays beneath the root.
    pub fn dir(&self) -> &Dir {
        &self.dir
    }

    /// The directory holding `path` (opened beneath the root) and the last component's name.
    /// A path whose last component is not a plain name (`.`, `..`, the root itself) is refused,
    /// so callers can rename or remove the name inside that directory without following it.
    /// Protected paths are refused for `access`.
    pub fn parent_of(&self, path: &str, access: Access) -> Result<(Dir, String), SandboxError> {
        check_lexically(path).map_err(|_| SandboxError::Escape { path: path.to_owned() })?;
        let target = Path::new(path);
        let Some(Component::Normal(name)) = target.components().next_back() else {
            return Err(SandboxError::Io {
                path: path.to_owned(),
                source: std::io::Error::new(
                    std::io::ErrorKind::InvalidInput,
                    "the path does not end in a file or directory name",
                ),
            });
        };
        let name = name.to_string_lossy().into_owned();
        let dir = match target.parent().filter(|p| !p.as_os_str().is_empty()) {
            None => self.dir.try_clone(),
            Some(parent) => self.dir.open_dir(parent),
        }
        .map_err(|e| SandboxError::io(path, e))?;
        self.check_entry(path, &dir, &name, access)?;
        Ok((dir, name))
    }

    /// Open an existing regular file for reading beneath the root: non-blocking, so a FIFO
    /// cannot hang the open, then refused unless it is a regular file outside protected paths.
    fn open_regular(&self, path: &str) -> Result<cap_std::fs::File, SandboxError> {
        check_lexically(path).map_err(|_| SandboxError::Escape { path: path.to_owned() })?;
        match self.open_plain(path)? {
            Some(file) => Ok(file),
            None => self.open_regular_in(&self.dir, path, path),
        }
    }

    /// Open `path` if no symlink lies anywhere on it (the kernel refuses one: `openat2` with
    /// `RESOLVE_NO_SYMLINKS`, beneath the root). What it opened is then exactly the root joined
    /// with the path as written, so the protection check needs no `/proc` lookup of the real
    /// path — a `grep` opens thousands of files, and that lookup was a sixth of its time.
    /// `None`: a symlink is on the way (or the kernel cannot tell): the general open decides.
    fn open_plain(&self, path: &str) -> Result<Option<cap_std::fs::File>, SandboxError> {
        use rustix::fs::{Mode, OFlags, ResolveFlags, openat2};
        use rustix::io::Errno;
        let flags = OFlags::RDONLY | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::CLOEXEC;
        let resolve =
            ResolveFlags::BENEATH | ResolveFlags::NO_SYMLINKS | ResolveFlags::NO_MAGICLINKS;
        let fd = match openat2(&self.dir, path, flags, Mode::empty(), resolve) {
            Ok(fd) => fd,
            Err(Errno::LOOP | Errno::NOSYS | Errno::AGAIN | Errno::XDEV | Errno::PERM) => {
                return Ok(None);
            }
            Err(e) => return Err(SandboxError::io(path, e.into())),
        };
        let real = lexical(&self.real_root, path);
        self.check_protected(path, &real, Access::Read)?;
        let file = cap_std::fs::File::from_std(std::fs::File::from(fd));
        let meta = file.metadata().map_err(|e| SandboxError::io(path, e))?;
        if !meta.is_file() {
            return Err(SandboxError::NotRegular { path: path.to_owned() });
        }
        Ok(Some(file))
    }

    /// Open `name` inside `dir` (a directory of this workspace; `shown` is the path as given)
    /// as [`Workspace::open_file`] does: non-blocking, a regular file, not protected — judged
    /// by what the kernel opened, so a symlink to a protected file is refused too.
    pub fn open_regular_in(
        &self,
        dir: &Dir,
        name: &str,
        shown: &str,
    ) -> Result<cap_std::fs::File, SandboxError> {
        let mut options = OpenOptions::new();
        options.read(true).custom_flags(libc_flags::NONBLOCK_NOCTTY);
        let file = dir.open_with(name, &options).map_err(|e| SandboxError::io(shown, e))?;
        let real = self.real_path(shown, &file)?;
        self.check_protected(shown, &real, Access::Read)?;
        let meta = file.metadata().map_err(|e| SandboxError::io(shown, e))?;
        if !meta.is_file() {
            return Err(SandboxError::NotRegular { path: shown.to_owned() });
        }
        Ok(file)
    }

    /// Open an existing regular file for reading, beneath the root.
    pub fn open_file(&self, path: &str) -> Result<std::fs::File, SandboxError> {
        self.open_regular(path).map(cap_std::fs::File::into_std)
    }

    /// Read a regular file of at most `max_bytes`.
    pub fn read(&self, path: &str, max_bytes: u64) -> Result<Vec<u8>, SandboxError> {
        let mut file = self.open_regular(path)?;
        let size = file.metadata().map_err(|e| SandboxError::io(path, e))?.len();
        if size > max_bytes {
            return Err(SandboxError::TooLarge { path: path.to_owned(), size, max: max_bytes });
        }
        let mut bytes = Vec::with_capacity(size as usize);
        (&mut file)
            .take(max_bytes + 1)
            .read_to_end(&mut bytes)
            .map_err(|e| SandboxError::io(path, e))?;
        if bytes.len() as u64 > max_bytes {
            return Err(SandboxError::TooLarge {
                path: path.to_owned(),
                size: bytes.len() as u64,
                max: max_bytes,
            });
        }
        Ok(bytes)
    }

    /// Write `bytes` to `path` atomically: a temporary file in the same directory, flushed to
    /// disk, then renamed over the target, so readers see the old content or the new, never a
    /// part. `mode` applies to a new file (an existing one keeps its permissions).
    pub fn write_atomic(
        &self,
        path: &str,
        bytes: &[u8],
        create_dirs: bool,
        mode: Option<u32>,
    ) -> Result<u64, SandboxError> {
        check_lexically(path).map_err(|_| SandboxError::Escape { path: path.to_owned() })?;
        let target = Path::new(path);
        let name = target.file_name().ok_or_else(|| SandboxError::Io {
            path: path.to_owned(),
            source: std::io::Error::new(std::io::ErrorKind::InvalidInput, "not a file name"),
        })?;
        let parent = target.parent().filter(|p| !p.as_os_str().is_empty());
        let dir = match parent {
            None => self.dir.try_clone().map_err(|e| SandboxError::io(path, e))?,
            Some(parent) => {
                if create_dirs {
                    self.check_before_creating(path, parent)?;
                    self.dir.create_dir_all(parent).map_err(|e| SandboxError::io(path, e))?;
                }
                self.dir.open_dir(parent).map_err(|e| SandboxError::io(path, e))?
            }
        };
        self.check_entry(path, &dir, &name.to_string_lossy(), Access::Write)?;
        let existing_mode = dir.metadata(name).ok().map(|m| m.permissions());
        static COUNTER: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let unique = COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let temp = format!(".{}.jig-{}-{unique}.tmp", name.to_string_lossy(), std::process::id());
        let mut options = OpenOptions::new();
        options.write(true).create_new(true);
        let result = (|| {
            let mut file = dir.open_with(&temp, &options)?;
            file.write_all(bytes)?;
            if let Some(permissions) = existing_mode {
                file.set_permissions(permissions)?;
            } else if let Some(mode) = mode {
                use cap_std::fs::PermissionsExt as _;
                file.set_permissions(cap_std::fs::Permissions::from_mode(mode))?;
            }
            file.sync_all()?;
            dir.rename(&temp, &dir, name)?;
            // The rename itself must reach the disk too.
            dir.open(".").and_then(|d| d.sync_all())
        })();
        if let Err(e) = result {
            let _ = dir.remove_file(&temp);
            return Err(SandboxError::io(path, e));
        }
        Ok(bytes.len() as u64)
    }
}

/// `open(2)` flags for reads: never block on a FIFO, never become a controlling terminal.
mod libc_flags {
    pub const NONBLOCK_NOCTTY: i32 =
        rustix::fs::OFlags::NONBLOCK.bits() as i32 | rustix::fs::OFlags::NOCTTY.bits() as i32;
}
