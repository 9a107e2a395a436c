//! Where package files come from: the disk, or the `std` package compiled into the binary.
//!
//! The loader reads every file through [`Vfs`], so the built-in catalog is loaded, validated and
//! hashed exactly like a package on disk.

use std::collections::BTreeMap;
use std::io;
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

mod embedded {
    include!(concat!(env!("OUT_DIR"), "/std_files.rs"));
}

/// The virtual root of the embedded std package; shown in diagnostics as `<std>/…`.
pub const STD_ROOT: &str = "<std>";

/// Why a file could not be read.
#[derive(Debug)]
pub(crate) enum ReadError {
    /// No such file.
    NotFound,
    /// Larger than the cap (its size).
    TooLarge(u64),
    /// Not UTF-8.
    Encoding,
    /// Any other I/O failure.
    Io(String),
}

/// A read-only file system.
pub(crate) trait Vfs: Send + Sync + std::fmt::Debug {
    /// Read a UTF-8 file of at most `max_bytes`; the size is checked before reading.
    fn read(&self, path: &Path, max_bytes: u64) -> Result<Arc<str>, ReadError>;
    /// Every file beneath `dir` whose name ends with `suffix`, sorted. Hidden entries are skipped.
    fn walk(&self, dir: &Path, suffix: &str) -> Vec<PathBuf>;
    /// Whether `path` is a directory.
    fn is_dir(&self, path: &Path) -> bool;
    /// Whether `path` is a file.
    fn is_file(&self, path: &Path) -> bool;
    /// The path with symlinks resolved, when it exists.
    fn canonicalize(&self, path: &Path) -> Option<PathBuf>;
    /// Whether `path` itself is a symbolic link.
    fn is_symlink(&self, path: &Path) -> bool;

    /// Whether `path` resolves inside `root` (a symlink may lead elsewhere).
    fn stays_within(&self, path: &Path, root: &Path) -> bool {
        !self.is_symlink(path) || self.canonicalize(path).is_some_and(|c| c.starts_with(root))
    }
}

/// The real file system.
#[derive(Debug, Default)]
pub(crate) struct DiskFs;

impl Vfs for DiskFs {
    fn read(&self, path: &Path, max_bytes: u64) -> Result<Arc<str>, ReadError> {
        let metadata = match fs_err::metadata(path) {
            Ok(m) => m,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Err(ReadError::NotFound),
            Err(e) => return Err(ReadError::Io(e.to_string())),
        };
        if !metadata.is_file() {
            return Err(ReadError::Io(format!("{} is not a regular file", path.display())));
        }
        if metadata.len() > max_bytes {
            return Err(ReadError::TooLarge(metadata.len()));
        }
        let bytes = match fs_err::read(path) {
            Ok(b) => b,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Err(ReadError::NotFound),
            Err(e) => return Err(ReadError::Io(e.to_string())),
        };
        // The file may have grown between the size check and the read.
        if bytes.len() as u64 > max_bytes {
            return Err(ReadError::TooLarge(bytes.len() as u64));
        }
        String::from_utf8(bytes).map(Arc::from).map_err(|_| ReadError::Encoding)
    }

    fn walk(&self, dir: &Path, suffix: &str) -> Vec<PathBuf> {
        let mut out = Vec::new();
        walk_disk(dir, suffix, &mut out, 0);
        out.sort();
        out
    }

    fn is_dir(&self, path: &Path) -> bool {
        path.is_dir()
    }

    fn is_file(&self, path: &Path) -> bool {
        path.is_file()
    }

    fn canonicalize(&self, path: &Path) -> Option<PathBuf> {
        fs_err::canonicalize(path).ok()
    }

    fn is_symlink(&self, path: &Path) -> bool {
        fs_err::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink())
    }
}

/// Deep enough for any real layout; stops symlink loops.
const MAX_WALK_DEPTH: usize = 32;

fn walk_disk(dir: &Path, suffix: &str, out: &mut Vec<PathBuf>, depth: usize) {
    if depth > MAX_WALK_DEPTH {
        return;
    }
    let Ok(entries) = fs_err::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if name.starts_with('.') {
            continue;
        }
        let path = entry.path();
        // Follow the file type of the entry itself: a symlinked directory is not descended,
        // so a package cannot pull in a tree from outside itself by linking it.
        let Ok(file_type) = entry.file_type() else { continue };
        if file_type.is_dir() {
            walk_disk(&path, suffix, out, depth + 1);
        } else if name.ends_with(suffix) {
            out.push(path);
        }
    }
}

/// Files held in memory: the std package compiled into the binary, or a buffer being checked.
#[derive(Debug)]
pub(crate) struct MemoryFs {
    files: BTreeMap<PathBuf, Arc<str>>,
}

impl MemoryFs {
    /// The std package's files under [`STD_ROOT`].
    pub(crate) fn std() -> Self {
        Self::from_files(Path::new(STD_ROOT), embedded::STD_FILES.iter().copied())
    }

    /// `files` (path relative to `root`, contents) under `root`.
    pub(crate) fn from_files<'a>(
        root: &Path,
        files: impl IntoIterator<Item = (&'a str, &'a str)>,
    ) -> Self {
        let files = files
            .into_iter()
            .map(|(rel, text)| (normalize(&root.join(rel)), Arc::from(text)))
            .collect();
        Self { files }
    }
}

impl Vfs for MemoryFs {
    fn read(&self, path: &Path, max_bytes: u64) -> Result<Arc<str>, ReadError> {
        let text = self.files.get(&normalize(path)).ok_or(ReadError::NotFound)?;
        if text.len() as u64 > max_bytes {
            return Err(ReadError::TooLarge(text.len() as u64));
        }
        Ok(Arc::clone(text))
    }

    fn walk(&self, dir: &Path, suffix: &str) -> Vec<PathBuf> {
        let dir = normalize(dir);
        self.files
            .keys()
            .filter(|p| p.starts_with(&dir) && p.to_string_lossy().ends_with(suffix))
            .cloned()
            .collect()
    }

    fn is_dir(&self, path: &Path) -> bool {
        let path = normalize(path);
        self.files.keys().any(|p| p.starts_with(&path) && *p != path)
    }

    fn is_file(&self, path: &Path) -> bool {
        self.files.contains_key(&normalize(path))
    }

    fn canonicalize(&self, path: &Path) -> Option<PathBuf> {
        let path = normalize(path);
        (self.files.contains_key(&path) || self.is_dir(&path)).then_some(path)
    }

    fn is_symlink(&self, _path: &Path) -> bool {
        false
    }
}

/// Lexical normalisation: drops `.`, applies `..`. Never touches the disk.
pub(crate) fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    out.push("..");
                }
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}

/// `path` relative to `base`, with `..` where needed; `path` as is when they share nothing.
pub(crate) fn relative_to(path: &Path, base: &Path) -> PathBuf {
    let path_parts: Vec<_> = path.components().collect();
    let base_parts: Vec<_> = base.components().collect();
    let common = path_parts.iter().zip(&base_parts).take_while(|(a, b)| a == b).count();
    if common == 0 {
        return path.to_path_buf();
    }
    let mut out = PathBuf::new();
    for _ in common..base_parts.len() {
        out.push("..");
    }
    for part in &path_parts[common..] {
        out.push(part.as_os_str());
    }
    out
}
