//! An SQLite store's doorbell: `<file>-bell`, a 16-byte file beside the database that every
//! process's writer rewrites after a commit that appended packets, with the head it reached.
//!
//! Why not watch the write-ahead log itself: a commit writes it in a few dozen pieces (a header
//! and a page per changed page), and inotify reports each. A feed watching the log's directory
//! woke, and read the store, several times for every commit, its own process's included; under
//! a stream of calls that was most of a call's cost. The bell is written once per commit, and
//! names the head, so a feed tells its own process's commits (whose seqs its writer knows)
//! from another's without a read.
//!
//! Nothing in it is trusted: a forged or torn value makes a feed read (and find nothing new),
//! or skip a wake that its poll ([`crate::feed::POLL`]) then catches. It holds the head and
//! its complement, so a torn write reads as unknown, which makes a feed read.

use std::fs::File;
use std::os::unix::fs::{FileExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// The doorbell of the SQLite database at `file`: `<file>-bell`.
pub(crate) fn path_of(file: &Path) -> PathBuf {
    let mut bell = file.as_os_str().to_owned();
    bell.push("-bell");
    PathBuf::from(bell)
}

/// An open doorbell.
#[derive(Debug)]
pub(crate) struct Bell {
    file: File,
    path: PathBuf,
}

impl Bell {
    /// Open (creating it when missing) the doorbell of the database at `file`, with the
    /// database's permissions. `None` when it cannot be: a read-only directory, or something
    /// other than a regular file by that name (a link is never followed, so a planted one
    /// cannot turn a ring into a write elsewhere).
    pub(crate) fn open(file: &Path) -> Option<Self> {
        let path = path_of(file);
        let mode = fs_err::metadata(file).map_or(0o600, |meta| meta.permissions().mode() & 0o666);
        let opened = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .mode(mode)
            .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
            .open(&path);
        match opened {
            Ok(bell) if bell.metadata().is_ok_and(|meta| meta.is_file()) => {
                Some(Self { file: bell, path })
            }
            Ok(_) => {
                tracing::warn!(path = %path.display(), "the store's doorbell is not a regular file; not used");
                None
            }
            Err(error) => {
                tracing::debug!(path = %path.display(), %error, "the store's doorbell cannot be opened");
                None
            }
        }
    }

    /// Where it is.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// Say that the store's head is now `head`.
    pub(crate) fn ring(&self, head: i64) {
        let mut bytes = [0u8; 16];
        bytes[..8].copy_from_slice(&head.to_le_bytes());
        bytes[8..].copy_from_slice(&(!head).to_le_bytes());
        if let Err(error) = self.file.write_all_at(&bytes, 0) {
            tracing::debug!(path = %self.path.display(), %error, "ringing the store's doorbell");
        }
    }

    /// The head the last ring named; `None` when it cannot be read or does not check out.
    pub(crate) fn heard(&self) -> Option<i64> {
        let mut bytes = [0u8; 16];
        self.file.read_exact_at(&mut bytes, 0).ok()?;
        let head = i64::from_le_bytes(bytes[..8].try_into().ok()?);
        let check = i64::from_le_bytes(bytes[8..].try_into().ok()?);
        (check == !head).then_some(head)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_ring_is_heard_and_a_torn_or_foreign_value_is_not() {
        let dir = tempfile::tempdir().expect("tmp");
        let db = dir.path().join("audit.db");
        fs_err::write(&db, b"").expect("db");
        let bell = Bell::open(&db).expect("bell");
        assert_eq!(bell.heard(), None, "an empty bell names no head");
        bell.ring(41);
        bell.ring(42);
        assert_eq!(bell.heard(), Some(42));
        fs_err::write(bell.path(), 7_i64.to_le_bytes().repeat(2)).expect("forge");
        assert_eq!(bell.heard(), None, "a value without its complement is unknown");
    }

    #[test]
    fn a_link_in_the_bells_place_is_not_followed() {
        let dir = tempfile::tempdir().expect("tmp");
        let db = dir.path().join("audit.db");
        fs_err::write(&db, b"").expect("db");
        let target = dir.path().join("elsewhere");
        fs_err::write(&target, b"keep me").expect("target");
        std::os::unix::fs::symlink(&target, path_of(&db)).expect("link");
        assert!(Bell::open(&db).is_none());
        assert_eq!(fs_err::read(&target).expect("target"), b"keep me");
    }
}
