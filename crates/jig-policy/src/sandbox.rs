//! Rule `sec.paths.sandbox`: tools touch files beneath the workspace root only.
//!
//! Paths are resolved by the kernel, not by comparing strings: the workspace is a directory handle
//! (cap-std), and every open is relative to it, done by `openat2(RESOLVE_BENEATH)` where Linux
//! has it (cap-std's own checked walk elsewhere). So `..`, an absolute path, a symlink inside the
//! workspace pointing out, a symlink swapped in after a check, and a sibling directory whose name
//! merely starts like the root's are all refused at the moment of the open, where no race can
//! slip between check and use.

use std::io::{Read, Write};
use std::path::{Component, Path, PathBuf};

use cap_std::ambient_authority;
use cap_std::fs::{Dir, OpenOptions};

use crate::decision::Denial;

/// The rule id.
pub const RULE: &str = "sec.paths.sandbox";

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

/// The workspace: the one directory tools may touch.
#[derive(Debug)]
pub struct Workspace {
    root: PathBuf,
    dir: Dir,
}

impl Workspace {
    /// Open the workspace at `root`.
    pub fn open(root: &Path) -> Result<Self, SandboxError> {
        let dir = Dir::open_ambient_dir(root, ambient_authority())
            .map_err(|e| SandboxError::io(&root.display().to_string(), e))?;
        Ok(Self { root: root.to_path_buf(), dir })
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
    pub fn parent_of(&self, path: &str) -> Result<(Dir, String), SandboxError> {
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
        Ok((dir, name))
    }

    /// Open an existing file for reading, beneath the root.
    pub fn open_file(&self, path: &str) -> Result<std::fs::File, SandboxError> {
        check_lexically(path).map_err(|_| SandboxError::Escape { path: path.to_owned() })?;
        self.dir.open(path).map(cap_std::fs::File::into_std).map_err(|e| SandboxError::io(path, e))
    }

    /// Read a file of at most `max_bytes`.
    pub fn read(&self, path: &str, max_bytes: u64) -> Result<Vec<u8>, SandboxError> {
        check_lexically(path).map_err(|_| SandboxError::Escape { path: path.to_owned() })?;
        let mut file = self.dir.open(path).map_err(|e| SandboxError::io(path, e))?;
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
                    self.dir.create_dir_all(parent).map_err(|e| SandboxError::io(path, e))?;
                }
                self.dir.open_dir(parent).map_err(|e| SandboxError::io(path, e))?
            }
        };
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
