//! What other processes record: a feed of the packets appended to the store after a point,
//! for every process on one store to hear the others — a call asked in the terminal shows in
//! the workbench, an approval given on one `jig serve` instance reaches the instance holding
//! the call.
//!
//! A feed only learns *that* something changed; what changed is always read from the store,
//! from the last seq it delivered (`seq > cursor`, in order). So a lost or forged notification
//! loses or injects nothing: the worst it does is cause a read that finds nothing new, or
//! (naming a head this process reached itself) a skipped read that the next poll makes.
//! - **PostgreSQL**: every commit that appends packets notifies `CHANNEL` (`pg_notify`, in the
//!   transaction: delivered at commit, never for a rollback). The feed `LISTEN`s on a
//!   connection of its own; when it drops, the feed reconnects and reads from its cursor.
//! - **SQLite**: no server to notify through. Every commit that appends packets rings the
//!   store's doorbell (`crate::bell`, `<file>-bell`), which the feed watches (inotify). Where
//!   the bell cannot be opened, the feed watches the database's directory for changes to the
//!   log and the file, as it did before the bell.
//!
//! Either way it also reads every [`POLL`] on its own, so a missed wake-up costs at most that.
//! Packets this process appended itself are skipped (it announced them as it made them). Both
//! notifications name the head the commit reached: when every packet up to it is this
//! process's own, the feed moves past them without reading the store, so a process's own
//! stream of calls costs its feed nothing.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::Duration;

use tokio::sync::Notify;

use crate::dialect::Dialect;
use crate::error::AuditError;
use crate::own::{Cover, Whose};
use crate::packet::Packet;
use crate::store::Store;

/// The PostgreSQL channel commits notify (the writer sends on it).
pub use crate::writer::CHANNEL;

impl Store {
    /// A feed of what other processes append from now on.
    pub async fn feed(&self) -> Result<Feed, AuditError> {
        Feed::start(self).await
    }
}

/// How often a feed reads without being woken.
pub const POLL: Duration = Duration::from_secs(1);

/// How long a feed waits, at most, for this process's writer to record a commit it found.
const UNSETTLED_FOR: Duration = Duration::from_millis(200);

/// At most this many packets per read.
const BATCH: i64 = 500;

/// Packets appended to a store by other processes, from when the feed started.
#[derive(Debug)]
pub struct Feed {
    store: Store,
    cursor: i64,
    wake: Arc<Wake>,
    /// How many times it read the store.
    reads: u64,
    /// Keeps the watcher (SQLite) or the listening task (PostgreSQL) alive.
    _source: Source,
}

#[derive(Debug)]
enum Source {
    Watcher(#[allow(dead_code, reason = "held for its lifetime")] notify::RecommendedWatcher),
    Listener(tokio::task::JoinHandle<()>),
    None,
}

impl Drop for Source {
    fn drop(&mut self) {
        if let Self::Listener(task) = self {
            task.abort();
        }
    }
}

/// How a feed is woken, with the highest head the notifications since it last looked named.
#[derive(Debug, Default)]
struct Wake {
    notify: Notify,
    /// [`NOTHING`] when no notification came since the feed last looked; [`UNKNOWN`] when one
    /// came that named no head.
    heard: AtomicI64,
}

const NOTHING: i64 = i64::MIN;
const UNKNOWN: i64 = i64::MAX;

impl Wake {
    fn new() -> Self {
        Self { notify: Notify::new(), heard: AtomicI64::new(NOTHING) }
    }

    /// A commit reached `head` (`None`: some change, head unknown).
    fn heard(&self, head: Option<i64>) {
        self.heard.fetch_max(head.unwrap_or(UNKNOWN), Ordering::SeqCst);
        self.notify.notify_one();
    }

    /// The highest head heard since the last call.
    fn take(&self) -> i64 {
        self.heard.swap(NOTHING, Ordering::SeqCst)
    }
}

impl Feed {
    /// A feed of what is appended after the store's current head.
    pub async fn start(store: &Store) -> Result<Self, AuditError> {
        let cursor = store.head().await?.0;
        Self::from(store, cursor).await
    }

    /// A feed of what was appended after `cursor` (a seq this process has seen).
    pub async fn from(store: &Store, cursor: i64) -> Result<Self, AuditError> {
        let wake = Arc::new(Wake::new());
        let source = match (store.dialect(), store.file()) {
            (Dialect::Sqlite, Some(file)) => {
                let watched = match store.own().bell() {
                    Some(bell) => watch_bell(bell.path(), store.clone(), Arc::clone(&wake)),
                    None => watch(&file, Arc::clone(&wake)),
                };
                watched.map(Source::Watcher).unwrap_or_else(|error| {
                    tracing::warn!(%error, "cannot watch the store's files; reading every second");
                    Source::None
                })
            }
            (Dialect::Postgres, _) => {
                Source::Listener(tokio::spawn(listen(store.target().to_owned(), Arc::clone(&wake))))
            }
            _ => Source::None,
        };
        Ok(Self { store: store.clone(), cursor, wake, reads: 0, _source: source })
    }

    /// The last seq delivered.
    pub fn cursor(&self) -> i64 {
        self.cursor
    }

    /// How many times it read the store: for tests and benchmarks.
    pub fn reads(&self) -> u64 {
        self.reads
    }

    /// The next packets other processes appended, in order, waiting until there are some.
    pub async fn next(&mut self) -> Result<Vec<Packet>, AuditError> {
        let mut read = true;
        loop {
            if read {
                let found = self.read().await?;
                if !found.is_empty() {
                    return Ok(found);
                }
            }
            read = match tokio::time::timeout(POLL, self.wake.notify.notified()).await {
                Ok(()) => self.worth_reading().await,
                // On the clock: whatever was heard or missed.
                Err(_) => true,
            };
        }
    }

    /// After a wake: whether the store may hold something of another process's. Not when all
    /// that was heard of is at or before the cursor, or was appended by this process (then
    /// the cursor moves past it; a commit of its own still being recorded is waited for).
    async fn worth_reading(&mut self) -> bool {
        let heard = self.wake.take();
        if heard == UNKNOWN {
            return true;
        }
        if heard <= self.cursor {
            return false;
        }
        let mut waited = false;
        loop {
            match self.store.own().covers(self.cursor, heard) {
                Cover::Mine => {
                    self.cursor = heard;
                    return false;
                }
                Cover::Unsettled if !waited => {
                    self.store.own().until_settled(UNSETTLED_FOR).await;
                    waited = true;
                }
                Cover::Unsettled | Cover::No => return true,
            }
        }
    }

    /// What was appended since the cursor, this process's own packets left out. A packet
    /// this process's writer is still recording as its own ends the read there: with nothing
    /// read before it, it is read again once its writer has recorded it (as soon as its commit
    /// returns; at most [`UNSETTLED_FOR`] later).
    async fn read(&mut self) -> Result<Vec<Packet>, AuditError> {
        let mut out = Vec::new();
        let mut waited = false;
        'reading: loop {
            self.reads += 1;
            let packets = self.store.packets(self.cursor, BATCH).await?;
            let full = packets.len() as i64 == BATCH;
            for packet in packets {
                match self.store.own().whose(packet.seq) {
                    Whose::Mine => self.cursor = packet.seq,
                    Whose::Other => {
                        self.cursor = packet.seq;
                        out.push(packet);
                    }
                    Whose::Unsettled if out.is_empty() && !waited => {
                        self.store.own().until_settled(UNSETTLED_FOR).await;
                        waited = true;
                        continue 'reading;
                    }
                    Whose::Unsettled => return Ok(out),
                }
            }
            if !full {
                return Ok(out);
            }
        }
    }
}

/// Wake on each ring of the store's doorbell, with the head it names.
fn watch_bell(
    bell: &std::path::Path,
    store: Store,
    wake: Arc<Wake>,
) -> notify::Result<notify::RecommendedWatcher> {
    use notify::Watcher;
    let mut watcher = notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
        match event {
            Ok(event) if event.kind.is_modify() => {
                wake.heard(store.own().bell().and_then(crate::bell::Bell::heard));
            }
            Ok(_) => {}
            // Events may have been lost (the queue overflowed): read to be sure.
            Err(_) => wake.heard(None),
        }
    })?;
    watcher.watch(bell, notify::RecursiveMode::NonRecursive)?;
    Ok(watcher)
}

/// Wake on any change to the database file or its write-ahead log.
fn watch(file: &std::path::Path, wake: Arc<Wake>) -> notify::Result<notify::RecommendedWatcher> {
    use notify::Watcher;
    let dir = file.parent().map(PathBuf::from).unwrap_or_else(|| PathBuf::from("."));
    let name = file.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let mut watcher = notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
        let ours = event.is_ok_and(|event| {
            event.kind.is_modify()
                && event.paths.iter().any(|path| {
                    path.file_name().is_some_and(|n| n.to_string_lossy().starts_with(&name))
                })
        });
        if ours {
            wake.heard(None);
        }
    })?;
    watcher.watch(&dir, notify::RecursiveMode::NonRecursive)?;
    Ok(watcher)
}

/// `LISTEN` on a connection of its own, waking the feed on each notification with the head it
/// names; after a failure, reconnect with backoff and wake once, to read what was missed.
async fn listen(url: String, wake: Arc<Wake>) {
    let mut backoff = Duration::from_millis(100);
    loop {
        match sqlx::postgres::PgListener::connect(&url).await {
            Ok(mut listener) => {
                if listener.listen(CHANNEL).await.is_ok() {
                    backoff = Duration::from_millis(100);
                    wake.heard(None);
                    while let Ok(notification) = listener.recv().await {
                        wake.heard(notification.payload().parse().ok());
                    }
                }
            }
            Err(error) => tracing::warn!(%error, "listening for the store's changes"),
        }
        tokio::time::sleep(backoff).await;
        backoff = (backoff * 2).min(Duration::from_secs(5));
    }
}
