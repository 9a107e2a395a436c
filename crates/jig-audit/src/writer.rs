//! The writer: one task per store that commits what callers send, several callers per
//! transaction when they arrive together (group commit). A caller's operations are answered
//! only once their transaction is durable.
//!
//! Each statement is a round trip to the database (for SQLite, to the thread that owns the
//! connection), which on a small machine costs more than the statement itself. So, on SQLite,
//! when every operation waiting is a blind write (or a runbook journal entry, written as if
//! its key were new) and the chain head is known from the last commit, the whole transaction
//! is one multi-statement round trip: it opens, checks that the head is still the one known
//! (another process may have appended since; then it fails and the general path below runs,
//! as it does when a journal key was taken), writes, moves the head and commits. The general path reads
//! the head, applies each caller's operations in a savepoint of its own (a failing caller is
//! rolled back alone), then writes the head and commits.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use sqlx::pool::PoolConnection;
use sqlx::{Any, AnyConnection, AnyPool, AssertSqlSafe, Executor, Row};
use tokio::sync::{mpsc, oneshot};

use crate::apply::{apply_batch, blind, is_optimistic};
use crate::bell::Bell;
use crate::dialect::Dialect;
use crate::error::AuditError;
use crate::ops::{Op, Outcome};
use crate::own::Own;
use crate::statement::{self, Statement};
use crate::time::now_us;

/// At most this many callers share a transaction.
const GROUP_LIMIT: usize = 256;

/// The PostgreSQL channel every commit that appends packets notifies (feeds `LISTEN` on it).
pub const CHANNEL: &str = "jig_packets";

/// How long a deferred commit may stay unsynced (SQLite): when no synced commit came along to
/// carry it to disk by then, the writer syncs the write-ahead log itself.
pub const SYNC_WINDOW: Duration = Duration::from_millis(50);

/// What the writer has committed: for tests and benchmarks, and for this process's feeds.
#[derive(Debug, Default)]
pub(crate) struct Commits {
    /// Transactions committed.
    pub all: AtomicU64,
    /// Of those, the ones that took the general path: they read before writing (a key
    /// claimed, an approval decided, a journal key already taken) and cost a round trip per
    /// statement.
    pub reading: AtomicU64,
    /// What this store's writer appended and is appending: a feed of the store's changes
    /// (`crate::feed`) skips it, since this process announced it itself.
    pub own: Own,
}

impl Commits {
    /// Commits announced on `bell`, when there is one.
    pub fn new(bell: Option<Bell>) -> Self {
        Self { own: Own::new(bell), ..Self::default() }
    }
}

/// How a caller learns what its operations did.
pub(crate) type Reply = oneshot::Sender<Result<Vec<Outcome>, AuditError>>;

/// One caller's operations, with when they must be on disk.
pub(crate) type Job = (Vec<Op>, Reply, Flush);

/// When a caller's commit must be on disk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flush {
    /// Synced before the caller is answered (`synchronous=FULL`; PostgreSQL's
    /// `synchronous_commit`).
    Now,
    /// Committed before the caller is answered — in the chain, and safe from a crash of the
    /// process — and synced with the next synced commit or within [`SYNC_WINDOW`] (SQLite; on
    /// PostgreSQL within the WAL writer's delay): only a power loss or a kernel crash in that
    /// window can lose it.
    Soon,
}

type Results = Vec<Result<Vec<Outcome>, AuditError>>;

/// Start the writer of `pool`; `wal` is an SQLite database's write-ahead log (synced by the
/// writer when a deferred commit would otherwise stay unsynced too long).
pub(crate) fn spawn(
    pool: AnyPool,
    dialect: Dialect,
    wal: Option<PathBuf>,
    commits: Arc<Commits>,
) -> (mpsc::UnboundedSender<Job>, Arc<SyncOnDrop>) {
    let (sender, jobs) = mpsc::unbounded_channel();
    let last = Arc::new(SyncOnDrop { wal: wal.clone(), unsynced: AtomicBool::new(false) });
    tokio::spawn(write_loop(pool, dialect, wal, jobs, commits, Arc::clone(&last)));
    (sender, last)
}

/// Held by every handle of a store: when the last one goes (a `jig call` finishing, a server
/// stopping), deferred commits still unsynced are synced then, by the thread that drops it —
/// a process that exits right after answering does not leave them to the kernel's writeback.
/// Every caller was answered before its handle could go, so every answered commit is in the
/// log by then.
#[derive(Debug)]
pub(crate) struct SyncOnDrop {
    wal: Option<PathBuf>,
    unsynced: AtomicBool,
}

impl Drop for SyncOnDrop {
    fn drop(&mut self) {
        if let Some(wal) = &self.wal
            && self.unsynced.load(Ordering::SeqCst)
            && let Err(error) = std::fs::File::open(wal).and_then(|file| file.sync_data())
        {
            tracing::warn!(%error, "syncing the audit's write-ahead log failed");
        }
    }
}

async fn write_loop(
    pool: AnyPool,
    dialect: Dialect,
    wal: Option<PathBuf>,
    mut jobs: mpsc::UnboundedReceiver<Job>,
    commits: Arc<Commits>,
    last: Arc<SyncOnDrop>,
) {
    // The head after this writer's last commit; `None` when unknown.
    let mut known_head: Option<(i64, String)> = None;
    // The writer keeps its connection between commits (taking one from the pool costs a round
    // trip); after a failure it takes a fresh one. With it, how it syncs (`None`: as the pool
    // set it up, synced).
    let mut held: Option<(PoolConnection<Any>, Flush)> = None;
    // Since when a deferred commit waits for a sync. The window is kept under a steady stream of
    // deferred commits too: the sync comes due by the clock, not by a pause.
    let mut unsynced: Option<tokio::time::Instant> = None;
    loop {
        if let Some(since) = unsynced
            && since.elapsed() >= SYNC_WINDOW
        {
            sync_log(wal.as_deref()).await;
            unsynced = None;
            last.unsynced.store(false, Ordering::SeqCst);
        }
        let first = match unsynced {
            Some(since) => match tokio::time::timeout_at(since + SYNC_WINDOW, jobs.recv()).await {
                Ok(job) => job,
                Err(_) => continue,
            },
            None => jobs.recv().await,
        };
        let Some(first) = first else { break };
        let mut group = vec![first];
        while group.len() < GROUP_LIMIT {
            match jobs.try_recv() {
                Ok(job) => group.push(job),
                Err(_) => break,
            }
        }
        let sync = if group.iter().any(|(_, _, sync)| *sync == Flush::Now) {
            Flush::Now
        } else {
            Flush::Soon
        };
        let batches: Vec<&[Op]> = group.iter().map(|(ops, _, _)| ops.as_slice()).collect();
        let mut attempt = 0;
        let results = loop {
            attempt += 1;
            let conn = match held.take() {
                Some((conn, mode)) => Ok((conn, mode)),
                None => {
                    pool.acquire().await.map(|conn| (conn, Flush::Now)).map_err(AuditError::from)
                }
            };
            let result = match conn {
                Ok((mut conn, mode)) => {
                    let result = match set_sync(&mut conn, dialect, mode, sync).await {
                        Ok(()) => {
                            let committed = commit_group(
                                &mut conn,
                                dialect,
                                &batches,
                                &mut known_head,
                                &commits,
                            )
                            .await;
                            // Recorded as this process's already when it succeeded.
                            commits.own.settled();
                            committed
                        }
                        Err(error) => Err(error),
                    };
                    if result.is_ok() {
                        held = Some((conn, sync));
                    }
                    result
                }
                Err(error) => Err(error),
            };
            match result {
                Err(error) if error.is_busy() && attempt < 100 => {
                    tokio::time::sleep(Duration::from_millis(5 * attempt)).await;
                }
                other => break other,
            }
        };
        match results {
            Ok(results) => {
                commits.all.fetch_add(1, Ordering::Relaxed);
                // A synced commit carries every deferred one before it to disk.
                unsynced = match (sync, wal.is_some()) {
                    (Flush::Soon, true) => unsynced.or_else(|| Some(tokio::time::Instant::now())),
                    _ => None,
                };
                last.unsynced.store(unsynced.is_some(), Ordering::SeqCst);
                for ((_, reply, _), result) in group.into_iter().zip(results) {
                    let _ = reply.send(result);
                }
            }
            Err(error) => {
                tracing::error!(%error, "audit commit failed");
                for (_, reply, _) in group {
                    let _ = reply.send(Err(AuditError::Commit(error.to_string())));
                }
            }
        }
    }
    if unsynced.is_some() {
        sync_log(wal.as_deref()).await;
    }
}

/// Make the writer's connection commit as `want` asks, when it does not already.
async fn set_sync(
    conn: &mut AnyConnection,
    dialect: Dialect,
    have: Flush,
    want: Flush,
) -> Result<(), AuditError> {
    if have == want {
        return Ok(());
    }
    let statement = match (dialect, want) {
        (Dialect::Sqlite, Flush::Now) => "PRAGMA synchronous = FULL",
        (Dialect::Sqlite, Flush::Soon) => "PRAGMA synchronous = NORMAL",
        (Dialect::Postgres, Flush::Now) => "SET synchronous_commit = on",
        (Dialect::Postgres, Flush::Soon) => "SET synchronous_commit = off",
    };
    conn.execute(statement).await?;
    Ok(())
}

/// Sync SQLite's write-ahead log: the deferred commits in it are on disk afterwards.
async fn sync_log(wal: Option<&Path>) {
    let Some(wal) = wal.map(Path::to_path_buf) else { return };
    let synced = tokio::task::spawn_blocking(move || std::fs::File::open(&wal)?.sync_data()).await;
    if let Ok(Err(error)) = synced {
        tracing::warn!(%error, "syncing the audit's write-ahead log failed");
    }
}

async fn commit_group(
    conn: &mut AnyConnection,
    dialect: Dialect,
    batches: &[&[Op]],
    known_head: &mut Option<(i64, String)>,
    commits: &Commits,
) -> Result<Results, AuditError> {
    let known = known_head.take();
    if batches.iter().all(|ops| ops.iter().all(is_optimistic)) {
        match commit_blind(conn, dialect, batches, known, &commits.own).await {
            Ok((results, start, head)) => {
                commits.own.committed(start + 1, head.0);
                if dialect == Dialect::Sqlite {
                    *known_head = Some(head);
                }
                return Ok(results);
            }
            Err(error) => {
                // Rolled back; busy is retried by the caller, anything else (the head moved,
                // a journal key taken, a constraint) takes the general path, which isolates a
                // failing caller and lets the first journal writer win.
                let _ = conn.execute("ROLLBACK").await;
                if error.is_busy() {
                    return Err(error);
                }
            }
        }
    }
    let (results, start, head) = commit_general(conn, dialect, batches, &commits.own).await?;
    commits.reading.fetch_add(1, Ordering::Relaxed);
    if let Some(head) = &head {
        commits.own.committed(start + 1, head.0);
    }
    if dialect == Dialect::Sqlite {
        *known_head = head;
    }
    Ok(results)
}

/// Blind writes of every caller in one transaction without savepoints (any failure fails all
/// of it). With the head known (SQLite), one round trip that fails if the head moved; without,
/// the head is read first.
async fn commit_blind(
    conn: &mut AnyConnection,
    dialect: Dialect,
    batches: &[&[Op]],
    known: Option<(i64, String)>,
    own: &Own,
) -> Result<(Results, i64, (i64, String)), AuditError> {
    let (mut statements, mut head) = match known {
        Some(head) => {
            // Fails (chain_head's CHECK allows only the row with id 1) when the head moved.
            let guard = Statement::new(
                "INSERT INTO chain_head (id, seq, hash) SELECT 2, 0, 'stale' \
                 WHERE NOT EXISTS (SELECT 1 FROM chain_head WHERE id = 1 AND seq = ? AND hash = ?)",
            )
            .arg(head.0)
            .arg(head.1.clone());
            (vec![Statement::new("BEGIN IMMEDIATE"), guard], head)
        }
        None => (Vec::new(), begin(conn, dialect).await?),
    };
    let start = head.0;
    let now = now_us();
    let mut results = Vec::with_capacity(batches.len());
    for ops in batches {
        results.push(Ok(blind(&mut statements, ops, &mut head, now)));
    }
    finish(&mut statements, dialect, start, &head);
    own.committing(start + 1, head.0);
    statement::run(conn, dialect, &statements).await?;
    Ok((results, start, head))
}

/// Move the head (when packets were appended since `start`) and commit. On PostgreSQL the
/// commit also notifies the store's listeners (`crate::feed`): a notification names the new
/// head and is delivered when, and only if, the transaction commits.
fn finish(statements: &mut Vec<Statement>, dialect: Dialect, start: i64, head: &(i64, String)) {
    if head.0 != start {
        statements.push(
            Statement::new("UPDATE chain_head SET seq = ?, hash = ? WHERE id = 1")
                .arg(head.0)
                .arg(head.1.clone()),
        );
        if dialect == Dialect::Postgres {
            statements.push(
                Statement::new("SELECT pg_notify(?, ?)").arg(CHANNEL).arg(head.0.to_string()),
            );
        }
    }
    statements.push(Statement::new("COMMIT"));
}

/// Open a write transaction and read the chain head under its lock.
async fn begin(conn: &mut AnyConnection, dialect: Dialect) -> Result<(i64, String), AuditError> {
    let begin = match dialect {
        Dialect::Sqlite => "BEGIN IMMEDIATE; SELECT seq, hash FROM chain_head WHERE id = 1",
        Dialect::Postgres => "BEGIN; SELECT seq, hash FROM chain_head WHERE id = 1 FOR UPDATE",
    };
    let rows = match conn.fetch_all(begin).await {
        Ok(rows) => rows,
        Err(error) => {
            let _ = conn.execute("ROLLBACK").await;
            return Err(error.into());
        }
    };
    let head =
        rows.first().map(|row| Ok::<_, sqlx::Error>((row.try_get("seq")?, row.try_get("hash")?)));
    match head {
        Some(Ok(head)) => Ok(head),
        other => {
            let _ = conn.execute("ROLLBACK").await;
            Err(match other {
                Some(Err(error)) => error.into(),
                _ => AuditError::Corrupt("the chain head is missing".into()),
            })
        }
    }
}

/// Read the head, apply each caller in a savepoint (one caller needs none), write the head,
/// commit. Returns the head after the commit.
async fn commit_general(
    conn: &mut AnyConnection,
    dialect: Dialect,
    batches: &[&[Op]],
    own: &Own,
) -> Result<(Results, i64, Option<(i64, String)>), AuditError> {
    let mut head = begin(conn, dialect).await?;
    let start = head.0;
    let outcome = async {
        let mut results = Vec::with_capacity(batches.len());
        if let [ops] = batches {
            match apply_batch(conn, dialect, ops, &mut head).await {
                Ok(outcomes) => results.push(Ok(outcomes)),
                Err(error) if error.is_busy() => return Err(error),
                // Alone in the transaction: roll all of it back.
                Err(error) => return Ok(Err(error)),
            }
        } else {
            for ops in batches {
                conn.execute("SAVEPOINT batch").await?;
                let before = head.clone();
                match apply_batch(conn, dialect, ops, &mut head).await {
                    Ok(outcomes) => {
                        conn.execute("RELEASE SAVEPOINT batch").await?;
                        results.push(Ok(outcomes));
                    }
                    Err(error) if error.is_busy() => return Err(error),
                    Err(error) => {
                        conn.execute("ROLLBACK TO SAVEPOINT batch").await?;
                        conn.execute("RELEASE SAVEPOINT batch").await?;
                        head = before;
                        results.push(Err(error));
                    }
                }
            }
        }
        let mut statements = Vec::new();
        finish(&mut statements, dialect, start, &head);
        own.committing(start + 1, head.0);
        statement::run(conn, dialect, &statements).await?;
        Ok(Ok((results, head)))
    }
    .await;
    match outcome {
        Ok(Ok((results, head))) => Ok((results, start, Some(head))),
        Ok(Err(alone)) => {
            conn.execute(AssertSqlSafe("ROLLBACK".to_owned())).await?;
            Ok((vec![Err(alone)], start, None))
        }
        Err(error) => {
            // Never hand the connection back inside a transaction.
            let _ = conn.execute("ROLLBACK").await;
            Err(error)
        }
    }
}
