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
    /// The path is a symbolic link (the read did not follow it).
    Symlink,
    /// A symbolic link that leads outside the package.
    Outside,
    /// Any other I/O failure.
    Io(String),
}

/// A read-only file system.
pub(crate) trait Vfs: Send + Sync + std::fmt::Debug {
    /// Read a UTF-8 file of at most `max_bytes`; the size is checked before reading. A symbolic
    /// link is not followed ([`ReadError::Symlink`]): callers decide whether its target is
    /// acceptable and read that instead (see [`Vfs::read_within`]).
    fn read(&self, path: &Path, max_bytes: u64) -> Result<Arc<str>, ReadError>;

    /// Read `path`, following a symbolic link only when it leads to a file inside `root`.
    fn read_within(&self, path: &Path, root: &Path, max_bytes: u64) -> Result<Arc<str>, ReadError> {
        match self.read(path, max_bytes) {
            Err(ReadError::Symlink) => match self.canonicalize(path) {
                Some(target) if target.starts_with(root) => self.read(&target, max_bytes),
                Some(_) => Err(ReadError::Outside),
                None => Err(ReadError::NotFound),
            },
            other => other,
        }
    }
    /// Every file beneath `dir` whose name ends with `suffix`, sorted. Hidden entries are skipped.
    fn walk(&self, dir: &Path, suffix: &str) -> Vec<PathBuf>;
    /// Whether `path` is a directory.
    fn is_dir(&self, path: &Path) -> bool;
    /// Whether `path` is a file.
    fn is_file(&self, path: &Path) -> bool;
    /// The path with symlinks resolved, when it exists.
    fn canonicalize(&self, path: &Path) -> Option<PathBuf>;
}

/// The real file system.
#[derive(Debug, Default)]
pub(crate) struct DiskFs;

impl Vfs for DiskFs {
    fn read(&self, path: &Path, max_bytes: u64) -> Result<Arc<str>, ReadError> {
        use std::io::Read as _;
        use std::os::unix::fs::OpenOptionsExt as _;
        // One open (not following a link) and one fstat: no separate lookups of the path.
        // Non-blocking: opening a FIFO put where a file is expected must not wait for a writer
        // (the fstat below then refuses it); a regular file reads as always.
        let file = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
            .open(path);
        let mut file = match file {
            Ok(file) => file,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Err(ReadError::NotFound),
            Err(e) if e.raw_os_error() == Some(libc::ELOOP) => return Err(ReadError::Symlink),
            Err(e) => return Err(ReadError::Io(format!("cannot open {}: {e}", path.display()))),
        };
        let metadata = file
            .metadata()
            .map_err(|e| ReadError::Io(format!("cannot stat {}: {e}", path.display())))?;
        if !metadata.is_file() {
            return Err(ReadError::Io(format!("{} is not a regular file", path.display())));
        }
        if metadata.len() > max_bytes {
            return Err(ReadError::TooLarge(metadata.len()));
        }
        // The file may grow between the size check and the read: read at most one byte more.
        let mut bytes = Vec::with_capacity(metadata.len() as usize);
        (&mut file)
            .take(max_bytes + 1)
            .read_to_end(&mut bytes)
            .map_err(|e| ReadError::Io(format!("cannot read {}: {e}", path.display())))?;
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
