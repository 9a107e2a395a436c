//! What other processes record: a feed of the packets appended to the store after a point,
//! for every process on one store to hear the others — a call asked in the terminal shows in
//! the workbench, an approval given on one `jig serve` instance reaches the instance holding
//! the call.
//!
//! A feed only learns *that* something changed; what changed is always read from the store,
//! from the last seq it delivered (`seq > cursor`, in order). So a lost or forged notification
//! loses or injects nothing: the worst it does is cause a read that finds nothing new.
//! - **PostgreSQL**: every commit that appends packets notifies `CHANNEL` (`pg_notify`, in the
//!   transaction: delivered at commit, never for a rollback). The feed `LISTEN`s on a
//!   connection of its own; when it drops, the feed reconnects and reads from its cursor.
//! - **SQLite**: no server to notify through. Every commit writes the database's write-ahead
//!   log, so the feed watches the database's directory (inotify) for changes to the log and
//!   the file.
//!
//! Either way it also reads every [`POLL`] on its own, so a missed wake-up costs at most that.
//! Packets this process appended itself are skipped (it announced them as it made them).

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::Notify;

use crate::error::AuditError;
use crate::packet::Packet;
use crate::store::{Dialect, Store};

/// The PostgreSQL channel commits notify.
pub const CHANNEL: &str = "jig_packets";

/// How often a feed reads without being woken.
pub const POLL: Duration = Duration::from_secs(1);

/// At most this many packets per read.
const BATCH: i64 = 500;

/// Packets appended to a store by other processes, from when the feed started.
#[derive(Debug)]
pub struct Feed {
    store: Store,
    cursor: i64,
    wake: Arc<Notify>,
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

impl Feed {
    /// A feed of what is appended after the store's current head.
    pub async fn start(store: &Store) -> Result<Self, AuditError> {
        let cursor = store.head().await?.0;
        Self::from(store, cursor).await
    }

    /// A feed of what was appended after `cursor` (a seq this process has seen).
    pub async fn from(store: &Store, cursor: i64) -> Result<Self, AuditError> {
        let wake = Arc::new(Notify::new());
        let source = match (store.dialect(), store.file()) {
            (Dialect::Sqlite, Some(file)) => {
                watch(&file, Arc::clone(&wake)).map(Source::Watcher).unwrap_or_else(|error| {
                    tracing::warn!(%error, "cannot watch the store's files; reading every second");
                    Source::None
                })
            }
            (Dialect::Postgres, _) => {
                Source::Listener(tokio::spawn(listen(store.target().to_owned(), Arc::clone(&wake))))
            }
            _ => Source::None,
        };
        Ok(Self { store: store.clone(), cursor, wake, _source: source })
    }

    /// The last seq delivered.
    pub fn cursor(&self) -> i64 {
        self.cursor
    }

    /// The next packets other processes appended, in order, waiting until there are some.
    pub async fn next(&mut self) -> Result<Vec<Packet>, AuditError> {
        loop {
            let found = self.read().await?;
            if !found.is_empty() {
                return Ok(found);
            }
            // Woken, or read on the clock anyway.
            let _ = tokio::time::timeout(POLL, self.wake.notified()).await;
        }
    }

    /// What was appended since the cursor, this process's own packets left out.
    async fn read(&mut self) -> Result<Vec<Packet>, AuditError> {
        let mut out = Vec::new();
        loop {
            let packets = self.store.packets(self.cursor, BATCH).await?;
            let full = packets.len() as i64 == BATCH;
            for packet in packets {
                self.cursor = packet.seq;
                if !self.store.appended_here(packet.seq) {
                    out.push(packet);
                }
            }
            if !full {
                return Ok(out);
            }
        }
    }
}

/// Wake on any change to the database file or its write-ahead log.
fn watch(file: &std::path::Path, wake: Arc<Notify>) -> notify::Result<notify::RecommendedWatcher> {
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
            wake.notify_one();
        }
    })?;
    watcher.watch(&dir, notify::RecursiveMode::NonRecursive)?;
    Ok(watcher)
}

/// `LISTEN` on a connection of its own, waking the feed on each notification (whatever it
/// says); after a failure, reconnect with backoff and wake once, to read what was missed.
async fn listen(url: String, wake: Arc<Notify>) {
    let mut backoff = Duration::from_millis(100);
    loop {
        match sqlx::postgres::PgListener::connect(&url).await {
            Ok(mut listener) => {
                if listener.listen(CHANNEL).await.is_ok() {
                    backoff = Duration::from_millis(100);
                    wake.notify_one();
                    while listener.recv().await.is_ok() {
                        wake.notify_one();
                    }
                }
            }
            Err(error) => tracing::warn!(%error, "listening for the store's changes"),
        }
        tokio::time::sleep(backoff).await;
        backoff = (backoff * 2).min(Duration::from_secs(5));
    }
}
