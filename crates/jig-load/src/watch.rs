//! Live reload: watch every package root and rebuild the snapshot when files change.
//!
//! Events are debounced (editors save in bursts: a temp file and a rename, or a truncate and a
//! write) and handed to [`Loader::reload`] as the list of changed paths, so only those files
//! are parsed again. Each batch yields a new snapshot or a failure, delivered to the callback on
//! the watcher's own thread. Dropping the [`WatchHandle`] stops watching.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::mpsc;
use std::thread;
use std::time::Duration;

use notify::{RecommendedWatcher, RecursiveMode};
use notify_debouncer_full::{DebounceEventResult, Debouncer, RecommendedCache, new_debouncer};

use crate::loader::Loader;
use crate::snapshot::{LoadFailure, Snapshot};

/// A failure to start watching.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum WatchError {
    /// The OS watcher could not be created or could not watch a directory.
    #[error("cannot watch {path}: {source}")]
    Watch {
        /// The directory.
        path: PathBuf,
        /// The cause.
        source: notify::Error,
    },
}

/// One reload: what changed and what the project looks like now.
#[derive(Debug)]
pub struct WatchUpdate {
    /// The paths that changed.
    pub changed: Vec<PathBuf>,
    /// The new snapshot, or why there is none.
    pub result: Result<Arc<Snapshot>, LoadFailure>,
}

/// Keeps the watcher alive; drop it to stop.
pub struct WatchHandle {
    stop: Option<mpsc::Sender<Batch>>,
    thread: Option<thread::JoinHandle<()>>,
}

impl std::fmt::Debug for WatchHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WatchHandle").finish_non_exhaustive()
    }
}

impl Drop for WatchHandle {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(Batch::Stop);
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

enum Batch {
    Changed(Vec<PathBuf>),
    /// `.jig/` or `.git/` appeared in this directory after the watch began: leave it out too.
    StateAppeared(PathBuf),
    Stop,
}

/// The directories holding a `.jig/` or `.git/` that these events created.
fn state_appeared(events: &[notify_debouncer_full::DebouncedEvent]) -> Vec<PathBuf> {
    events
        .iter()
        .filter(|event| matches!(event.event.kind, notify::EventKind::Create(_)))
        .flat_map(|event| &event.event.paths)
        .filter(|path| path.file_name().is_some_and(|name| name == ".jig" || name == ".git"))
        .filter(|path| path.is_dir())
        .filter_map(|path| path.parent().map(Path::to_path_buf))
        .collect()
}

/// Whether `path` lies in Jig's state directory (`.jig/`, the audit store written on every call)
/// or a repository's `.git/`: changes there never change the registry — except what discovery
/// found of the upstream MCP servers (`.jig/mcp/`), which another process may have written.
fn is_state(path: &std::path::Path) -> bool {
    let discovered = path.parent().is_some_and(|dir| dir.ends_with(crate::upstream::CACHE_DIR))
        && path.extension().is_some_and(|e| e == "json");
    !discovered
        && path.components().any(
            |c| matches!(c, std::path::Component::Normal(name) if name == ".jig" || name == ".git"),
        )
}

/// Whether an event can change what a file says. Opening, reading and closing a file are
/// events too (inotify reports them); reacting to them would make every reload, which reads
/// the files, trigger the next one, and every tool that reads the project trigger one.
fn changes_content(kind: &notify::EventKind) -> bool {
    use notify::EventKind;
    use notify::event::{AccessKind, AccessMode};
    match kind {
        EventKind::Create(_) | EventKind::Modify(_) | EventKind::Remove(_) | EventKind::Any => true,
        // A close after writing ends a save some editors make without a separate modify event.
        EventKind::Access(AccessKind::Close(AccessMode::Write)) => true,
        EventKind::Access(_) | EventKind::Other => false,
    }
}

/// Stop watching what changes all the time and never needs a reload — Jig's own state (`.jig/`:
/// every audited call writes its log) and git's — so those writes wake nobody. Directories that
/// appear after the watch started (a new project's first store, `git init`) are left out when
/// their creation is seen; their events are filtered out until then.
fn ignore_state<T: notify::Watcher, C: notify_debouncer_full::FileIdCache>(
    debouncer: &mut notify_debouncer_full::Debouncer<T, C>,
    root: &Path,
) {
    for name in [".jig", ".git"] {
        let state = root.join(name);
        if state.is_dir() {
            let _ = debouncer.unwatch(&state);
        }
    }
    // What discovery found, written by this process or another.
    let discovered = root.join(crate::upstream::CACHE_DIR);
    if discovered.is_dir() {
        let _ = debouncer.watch(&discovered, RecursiveMode::NonRecursive);
    }
}

/// How long to wait for a burst of events to settle.
pub const DEFAULT_DEBOUNCE: Duration = Duration::from_millis(100);

/// Watch the project `loader` has loaded (call [`Loader::load`] first) and call `on_update`
/// after every settled batch of changes.
pub fn watch(
    loader: Loader,
    debounce: Duration,
    on_update: impl FnMut(WatchUpdate) + Send + 'static,
) -> Result<WatchHandle, WatchError> {
    Ok(start(loader, debounce)?.deliver(on_update))
}

/// A watch that has begun but delivers nothing yet: what changes from now on waits, in order,
/// until [`Watching::deliver`] names who hears it. A project opened by a surface that stays open
/// starts watching right after its one load, before anything else (the audit store opens, the
/// surface starts), so no change in between is missed and nothing is loaded twice.
pub struct Watching {
    loader: Loader,
    debouncer: Debouncer<RecommendedWatcher, RecommendedCache>,
    roots: Vec<PathBuf>,
    sender: mpsc::Sender<Batch>,
    receiver: mpsc::Receiver<Batch>,
}

impl std::fmt::Debug for Watching {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Watching").field("roots", &self.roots).finish_non_exhaustive()
    }
}

/// Begin watching every package root of the project `loader` has loaded.
pub fn start(loader: Loader, debounce: Duration) -> Result<Watching, WatchError> {
    let (sender, receiver) = mpsc::channel::<Batch>();
    let events_out = sender.clone();
    let mut debouncer = new_debouncer(debounce, None, move |result: DebounceEventResult| {
        let paths: Vec<PathBuf> = match result {
            Ok(events) => {
                for dir in state_appeared(&events) {
                    let _ = events_out.send(Batch::StateAppeared(dir));
                }
                let paths: Vec<PathBuf> = events
                    .into_iter()
                    .filter(|event| changes_content(&event.event.kind))
                    .flat_map(|event| event.event.paths)
                    .filter(|path| !is_state(path))
                    .collect();
                // Only Jig's own state (the audit store) or git's changed: nothing to reload.
                if paths.is_empty() {
                    return;
                }
                paths
            }
            // The OS dropped events (queue overflow): reload everything we know.
            Err(_) => Vec::new(),
        };
        let _ = events_out.send(Batch::Changed(paths));
    })
    .map_err(|source| WatchError::Watch { path: PathBuf::new(), source })?;
    let roots = loader.watch_roots();
    for root in &roots {
        debouncer
            .watch(root, RecursiveMode::Recursive)
            .map_err(|source| WatchError::Watch { path: root.clone(), source })?;
        ignore_state(&mut debouncer, root);
    }
    Ok(Watching { loader, debouncer, roots, sender, receiver })
}

impl Watching {
    /// From now on, call `on_update` after every settled batch of changes (those since
    /// [`start`] first).
    pub fn deliver(self, mut on_update: impl FnMut(WatchUpdate) + Send + 'static) -> WatchHandle {
        let Self { mut loader, mut debouncer, mut roots, sender, receiver } = self;
        let thread = thread::spawn(move || {
            while let Ok(batch) = receiver.recv() {
                let mut changed = match batch {
                    Batch::Changed(paths) => paths,
                    Batch::StateAppeared(dir) => {
                        ignore_state(&mut debouncer, &dir);
                        continue;
                    }
                    Batch::Stop => break,
                };
                // Fold in whatever else is already queued.
                while let Ok(more) = receiver.try_recv() {
                    match more {
                        Batch::Changed(paths) => changed.extend(paths),
                        Batch::StateAppeared(dir) => ignore_state(&mut debouncer, &dir),
                        Batch::Stop => return,
                    }
                }
                changed.sort();
                changed.dedup();
                let result =
                    if changed.is_empty() { loader.load() } else { loader.reload(&changed) };
                // A new `require` may have brought a new package root into the project.
                let now = loader.watch_roots();
                for root in now.iter().filter(|r| !roots.contains(r)) {
                    let _ = debouncer.watch(root, RecursiveMode::Recursive);
                    ignore_state(&mut debouncer, root);
                }
                roots = now;
                on_update(WatchUpdate { changed, result });
            }
            drop(debouncer);
        });
        WatchHandle { stop: Some(sender), thread: Some(thread) }
    }
}
