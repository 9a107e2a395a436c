//! Starting a sandboxed command: the one spawner thread (restricted with Landlock's scopes,
//! living as long as Jig so `--die-with-parent` holds) and what bwrap inherits while it starts
//! (its options in a memory file, the grants' descriptors).

use std::ffi::OsString;
use std::os::fd::OwnedFd;
use std::sync::{Arc, OnceLock};

use landlock::{ABI, Access, CompatLevel, Compatible, Ruleset, RulesetAttr, Scope};

use crate::host;

/// Work for the spawner thread.
pub(super) type SpawnJob = Box<dyn FnOnce() + Send>;

/// The one thread that starts every tool process. It lives as long as Jig: a child's
/// parent-death signal (bwrap's `--die-with-parent`) fires when the *thread* that started it
/// ends, so a short-lived spawning thread would kill its children at once. It restricts itself
/// with Landlock's scopes first, which its children inherit; the rest of Jig stays unrestricted.
pub(super) fn spawner() -> &'static std::sync::Mutex<std::sync::mpsc::Sender<SpawnJob>> {
    static SPAWNER: OnceLock<std::sync::Mutex<std::sync::mpsc::Sender<SpawnJob>>> = OnceLock::new();
    SPAWNER.get_or_init(|| {
        let (jobs, queue) = std::sync::mpsc::channel::<SpawnJob>();
        std::thread::Builder::new()
            .name("jig-spawner".to_owned())
            .spawn(move || {
                restrict_scopes();
                for job in queue {
                    job();
                }
            })
            .unwrap_or_else(|e| panic!("cannot start the spawner thread: {e}"));
        std::sync::Mutex::new(jobs)
    })
}

/// Restrict the calling thread (and what it starts) with Landlock's scopes: no signal to, and
/// no abstract UNIX socket of, a process outside. Scopes handle no filesystem access, so the
/// sandbox can still mount. Best effort: the PID and network namespaces already isolate both.
pub(super) fn restrict_scopes() {
    let _ = Ruleset::default()
        .set_compatibility(CompatLevel::BestEffort)
        .scope(Scope::from_all(ABI::V6))
        .and_then(|ruleset| ruleset.create())
        .and_then(|ruleset| ruleset.restrict_self());
}

/// What starting a sandboxed command needs besides the command: the memory file bwrap reads
/// its options from, and the descriptors of the grants it binds, inheritable only while that
/// one process starts.
#[derive(Debug, Default)]
pub struct Launch {
    pub(super) options: Option<std::fs::File>,
    pub(super) fds: Vec<Arc<OwnedFd>>,
}

impl Launch {
    /// Run `start` (which spawns the command) with the options file and the grants handed to
    /// it: made inheritable under `host::spawning`, so no other process started meanwhile gets
    /// them. The options file is closed afterwards; a grant's descriptor is made close-on-exec
    /// again before the lock is released (the confinement may start another process with it,
    /// and bwrap passes on whatever it inherits: a descriptor of a workspace directory in a
    /// sandboxed process is a way out of its mount namespace).
    pub fn start<T>(self, start: impl FnOnce() -> std::io::Result<T>) -> std::io::Result<T> {
        let _held = host::spawning();
        if let Some(file) = &self.options {
            rustix::io::fcntl_setfd(file, rustix::io::FdFlags::empty())?;
        }
        let mut inheritable = Vec::with_capacity(self.fds.len());
        let mut result = Ok(());
        for fd in &self.fds {
            result = rustix::io::fcntl_setfd(fd, rustix::io::FdFlags::empty());
            if result.is_err() {
                break;
            }
            inheritable.push(fd);
        }
        let started = match result {
            Ok(()) => start(),
            Err(e) => Err(e.into()),
        };
        for fd in inheritable {
            // F_SETFD fails only on a descriptor that is not open, which nothing can inherit.
            let _ = rustix::io::fcntl_setfd(fd, rustix::io::FdFlags::CLOEXEC);
        }
        started
    }
}

/// `options`, NUL-separated, in a memory file (close-on-exec until [`Launch::start`]).
pub(super) fn options_file(options: &[OsString]) -> std::io::Result<std::fs::File> {
    use std::io::{Seek, Write};
    use std::os::unix::ffi::OsStrExt;
    let fd = rustix::fs::memfd_create("jig-sandbox-options", rustix::fs::MemfdFlags::CLOEXEC)?;
    let mut file = std::fs::File::from(fd);
    let mut bytes = Vec::with_capacity(options.iter().map(|o| o.len() + 1).sum());
    for option in options {
        bytes.extend_from_slice(option.as_bytes());
        bytes.push(0);
    }
    file.write_all(&bytes)?;
    file.rewind()?;
    Ok(file)
}
