//! The store: SQLite (default, a file) or PostgreSQL (shared), one implementation.
//!
//! Both speak the same SQL through sqlx's `Any` driver (`$n` placeholders work in both); they
//! differ in how a write transaction starts — SQLite's `BEGIN IMMEDIATE` takes the database's
//! write lock, PostgreSQL locks the chain-head row — and in their migrations (triggers).
//!
//! Writes go through one writer task per store (see `writer`) that groups the batches waiting
//! at that moment into one transaction (group commit): each caller still returns only after its
//! own batch is committed and synced, so durability per call is kept while concurrent calls
//! share an fsync. SQLite runs in WAL mode with `synchronous=FULL`; a busy database is waited for, and a write
//! that still finds it busy is retried, so `SQLITE_BUSY` never reaches a caller.

use std::path::{Path, PathBuf};

use sqlx::any::AnyPoolOptions;
use sqlx::migrate::Migrator;
use sqlx::{AnyPool, AssertSqlSafe, Executor, Row};
use tokio::sync::{mpsc, oneshot};

use crate::dialect::Dialect;
use crate::error::AuditError;
use crate::ops::{Op, Outcome};
use crate::owner::{self, Liveness};
use crate::records::RunRecord;
use crate::rows::run_from_row;
use crate::time::now_us;
pub use crate::writer::{Flush, SYNC_WINDOW};

static SQLITE_MIGRATIONS: Migrator = sqlx::migrate!("migrations/sqlite");
static POSTGRES_MIGRATIONS: Migrator = sqlx::migrate!("migrations/postgres");

/// How long SQLite waits for another process's write lock before reporting busy.
const BUSY_TIMEOUT_MS: u64 = 30_000;

/// The audit store.
#[derive(Debug, Clone)]
pub struct Store {
    pub(crate) pool: AnyPool,
    dialect: Dialect,
    writer: mpsc::UnboundedSender<crate::writer::Job>,
    /// Transactions this store's writer has committed (group commit puts several callers'
    /// operations in one), and how many of them read before writing.
    commits: std::sync::Arc<crate::writer::Commits>,
    /// Syncs deferred commits when the last handle goes.
    _last: std::sync::Arc<crate::writer::SyncOnDrop>,
    /// The key approvals are bound with (`crate::binding`).
    binding: crate::binding::BindingKey,
    /// What it was opened with (a PostgreSQL URL, for the feed's own connection).
    target: std::sync::Arc<str>,
    /// The SQLite file, for the feed to watch.
    file: Option<PathBuf>,
}

/// What start-up recovery found left over from a process that died.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Recovery {
    /// Runs that were running (or queued) and are now marked failed.
    pub runs: usize,
    /// Idempotency keys left pending and now marked failed.
    pub keys: usize,
}

/// What the database's own consistency check found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Integrity {
    /// Which check it is.
    pub check: &'static str,
    /// Whether Jig ran it.
    pub ran: bool,
    /// Its complaint, when it failed.
    pub problem: Option<String>,
}

impl Integrity {
    /// One line for people.
    pub fn summary(&self) -> String {
        match (&self.problem, self.ran) {
            (Some(problem), _) => format!("{} fails: {problem}", self.check),
            (None, true) => format!("{} ok", self.check),
            (None, false) => format!("{} not run by jig (run them in the database)", self.check),
        }
    }
}

impl Store {
    /// Open (creating and migrating when needed) the store at `target`: a `postgres://` URL, an
    /// `sqlite:` URL, or a path to an SQLite file.
    pub async fn open(target: &str) -> Result<Self, AuditError> {
        sqlx::any::install_default_drivers();
        let (dialect, url, file) = parse_target(target);
        let db_file = file.clone();
        // SQLite's log is `<file>-wal`.
        let wal = file.as_ref().map(|file| {
            let mut wal = file.clone().into_os_string();
            wal.push("-wal");
            PathBuf::from(wal)
        });
        let pool = match dialect {
            Dialect::Sqlite => {
                let file = file.unwrap_or_default();
                if let Some(dir) = file.parent().filter(|d| !d.as_os_str().is_empty()) {
                    std::fs::create_dir_all(dir)
                        .map_err(|source| AuditError::Io { path: dir.to_path_buf(), source })?;
                }
                // Several `jig` processes may open a new database at once; only one migrates.
                let _lock = FileLock::acquire(&file.with_extension("db.lock"))?;
                // A damaged file fails here at once: the pool would retry a failing connection
                // until its acquire timeout (30 s), logging each attempt. The probe stays open
                // until the pool is: closing the last connection to a database checkpoints its
                // write-ahead log and deletes it (four syncs), only for the pool to make it anew.
                let probe = if file.exists() {
                    use sqlx::Connection as _;
                    let mut probe = sqlx::AnyConnection::connect(&url).await.map_err(|source| {
                        AuditError::Connect { target: target.to_owned(), source }
                    })?;
                    probe.execute("PRAGMA schema_version").await.map_err(|source| {
                        AuditError::Connect { target: target.to_owned(), source }
                    })?;
                    Some(probe)
                } else {
                    None
                };
                // No ping before handing out a connection: to a local file it is a round trip
                // that finds nothing wrong.
                let pool = AnyPoolOptions::new()
                    .max_connections(4)
                    .test_before_acquire(false)
                    .after_connect(|conn, _| {
                        Box::pin(async move {
                            conn.execute(AssertSqlSafe(format!(
                                "PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}; PRAGMA journal_mode = WAL; \
                                 PRAGMA synchronous = FULL; PRAGMA foreign_keys = ON;"
                            )))
                            .await?;
                            Ok(())
                        })
                    })
                    .connect(&url)
                    .await
                    .map_err(|source| AuditError::Connect { target: target.to_owned(), source })?;
                SQLITE_MIGRATIONS.run(&pool).await.map_err(AuditError::Migrate)?;
                if let Some(probe) = probe {
                    use sqlx::Connection as _;
                    let _ = probe.close().await;
                }
                pool
            }
            Dialect::Postgres => {
                let pool =
                    AnyPoolOptions::new().max_connections(8).connect(&url).await.map_err(
                        |source| AuditError::Connect { target: target.to_owned(), source },
                    )?;
                // sqlx takes an advisory lock around PostgreSQL migrations.
                POSTGRES_MIGRATIONS.run(&pool).await.map_err(AuditError::Migrate)?;
                pool
            }
        };
        let binding = match (&db_file, dialect) {
            (Some(file), Dialect::Sqlite) if file.exists() => {
                crate::binding::load_or_create_local(file)?
            }
            _ => crate::binding::load_or_create(&pool).await?,
        };
        let bell = match (&db_file, dialect) {
            (Some(file), Dialect::Sqlite) => crate::bell::Bell::open(file),
            _ => None,
        };
        let commits = std::sync::Arc::new(crate::writer::Commits::new(bell));
        let (writer, last) =
            crate::writer::spawn(pool.clone(), dialect, wal, std::sync::Arc::clone(&commits));
        Ok(Self {
            pool,
            dialect,
            writer,
            commits,
            _last: last,
            binding,
            target: std::sync::Arc::from(target),
            file: db_file,
        })
    }

    /// What this process's writer appended and is appending.
    pub(crate) fn own(&self) -> &crate::own::Own {
        &self.commits.own
    }

    /// What the store was opened with, as a connection URL.
    pub(crate) fn target(&self) -> &str {
        &self.target
    }

    /// The SQLite file.
    pub(crate) fn file(&self) -> Option<PathBuf> {
        self.file.clone()
    }

    /// The key approvals are bound with: the same for every process on this store.
    pub fn binding_key(&self) -> &crate::binding::BindingKey {
        &self.binding
    }

    /// The connection pool, for reads defined in other modules.
    pub(crate) fn pool(&self) -> &AnyPool {
        &self.pool
    }

    /// Which database this is.
    pub fn dialect(&self) -> Dialect {
        self.dialect
    }

    /// The database's own consistency check, and which one it was: SQLite's `PRAGMA
    /// integrity_check`; PostgreSQL has no equivalent Jig can run without an extension, so it
    /// says so instead of claiming one.
    pub async fn integrity(&self) -> Result<Integrity, AuditError> {
        match self.dialect {
            Dialect::Sqlite => {
                let row = sqlx::query("PRAGMA integrity_check").fetch_one(&self.pool).await?;
                let answer = row.try_get::<String, _>(0)?;
                Ok(Integrity {
                    check: "SQLite's integrity_check",
                    ran: true,
                    problem: (answer != "ok").then_some(answer),
                })
            }
            Dialect::Postgres => Ok(Integrity {
                check: "PostgreSQL's page and index checks (amcheck)",
                ran: false,
                problem: None,
            }),
        }
    }

    /// The value a blob reference names (see [`crate::blob`]), checked against its hash.
    pub async fn blob(&self, hash: &str) -> Result<Option<serde_json::Value>, AuditError> {
        let row = sqlx::query("SELECT size, body FROM blobs WHERE hash = $1")
            .bind(hash)
            .fetch_optional(&self.pool)
            .await?;
        let Some(row) = row else { return Ok(None) };
        let size: i64 = row.try_get("size")?;
        let body: Vec<u8> = row.try_get("body")?;
        crate::blob::decode(hash, &body, size).map(Some)
    }

    /// `value` with a blob reference replaced by what it names.
    pub async fn inflate(&self, value: serde_json::Value) -> Result<serde_json::Value, AuditError> {
        match crate::blob::referenced(&value) {
            Some(hash) => self.blob(hash).await?.ok_or_else(|| {
                AuditError::Commit(format!("the result blob {hash} is missing from the store"))
            }),
            None => Ok(value),
        }
    }

    /// The hash of packet `seq`, if the chain holds it.
    pub async fn packet_hash(&self, seq: i64) -> Result<Option<String>, AuditError> {
        let row = sqlx::query("SELECT hash FROM packets WHERE seq = $1")
            .bind(seq)
            .fetch_optional(&self.pool)
            .await?;
        Ok(row.map(|row| row.try_get::<String, _>(0)).transpose()?)
    }

    /// How many transactions this store has committed so far.
    pub fn commits(&self) -> u64 {
        self.commits.all.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// How many of [`Store::commits`] read before writing: each statement of those is a
    /// round trip to the database, where a transaction of blind writes (packets, runs, usage,
    /// new journal entries) is one.
    pub fn reading_commits(&self) -> u64 {
        self.commits.reading.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Apply `ops` in one transaction; returns when they are durable.
    pub async fn apply(&self, ops: Vec<Op>) -> Result<Vec<Outcome>, AuditError> {
        self.apply_with(ops, Flush::Now).await
    }

    /// Apply `ops` in one transaction; returns when they are committed, and synced as `sync`
    /// asks.
    pub async fn apply_with(
        &self,
        mut ops: Vec<Op>,
        sync: Flush,
    ) -> Result<Vec<Outcome>, AuditError> {
        // Every record of how a call ended is vouched for here, whoever recorded it.
        for op in &mut ops {
            if let Some(packet) = op.result_packet_mut() {
                self.binding.vouch(packet);
            }
        }
        let (reply, answer) = oneshot::channel();
        self.writer.send((ops, reply, sync)).map_err(|_| AuditError::Closed)?;
        answer.await.map_err(|_| AuditError::Closed)?
    }

    /// Mark what a dead process left unfinished: its created, queued or running runs become
    /// failed (`incomplete`) with a `tool.call.failed` packet each, and the idempotency keys they
    /// held become failed so an identical call may run again. Runs of live processes (another
    /// `jig call` on the same store) are left alone; runs of another host are abandoned only
    /// once their deadline has passed.
    pub async fn recover(&self) -> Result<Recovery, AuditError> {
        let rows =
            // A run whose job a scheduler holds is not abandoned with its process: any later
            // process collects it (`jobs`).
            sqlx::query(
                "SELECT * FROM runs WHERE state IN ('created', 'queued', 'running') \
                 AND request_id NOT IN (SELECT request_id FROM jobs WHERE open = 1)",
            )
                .fetch_all(&self.pool)
                .await?;
        let now = now_us();
        let mut stuck = Vec::new();
        for row in &rows {
            let run = run_from_row(row)?;
            let abandoned = match run.owner.as_deref().map(owner::liveness) {
                None | Some(Liveness::Dead) => true,
                Some(Liveness::Alive) => false,
                Some(Liveness::Unknown) => run.deadline_us.is_none_or(|deadline| now > deadline),
            };
            if abandoned {
                stuck.push(run);
            }
        }
        let abandoned = self.abandon(&stuck).await?;
        // A pending key whose holder is no longer unfinished (just recovered above, or never
        // recorded) protects nothing.
        let keys = sqlx::query(
            "UPDATE idempotency SET state = 'failed', updated_us = $1 WHERE state = 'pending' \
             AND NOT EXISTS (SELECT 1 FROM runs r WHERE r.request_id = idempotency.request_id \
             AND r.state IN ('created', 'queued', 'running'))",
        )
        .bind(now_us())
        .execute(&self.pool)
        .await?
        .rows_affected();
        Ok(Recovery { runs: abandoned, keys: usize::try_from(keys).unwrap_or(usize::MAX) })
    }

    /// Mark `runs` (read as unfinished, their owners gone) failed with a `tool.call.failed`
    /// packet each; returns how many were. Each transition is conditional, in the writer's
    /// transaction: a run its owner finished since it was read stays as its owner left it, and
    /// gets no packet.
    pub async fn abandon(&self, runs: &[RunRecord]) -> Result<usize, AuditError> {
        let ops: Vec<Op> = runs
            .iter()
            .map(|run| Op::AbandonRun {
                request_id: run.request_id.clone(),
                error: "incomplete: the process stopped before the call finished".to_owned(),
                packet: crate::NewPacket {
                    kind: crate::PacketKind::CallFailed,
                    session_id: run.session_id.clone(),
                    thread_id: run.thread_id.clone(),
                    principal: Some("jig".to_owned()),
                    request_id: Some(run.request_id.clone()),
                    run_id: Some(run.run_id.clone()),
                    tool: Some(run.tool.clone()),
                    args_hash: Some(run.params_hash.clone()),
                    data: serde_json::json!({
                        "state": "failed",
                        "incomplete": true,
                        "reason": "the process running this call stopped before it finished",
                        "owner": run.owner,
                    }),
                },
            })
            .collect();
        let mut abandoned = 0;
        if !ops.is_empty() {
            abandoned = self
                .apply(ops)
                .await?
                .iter()
                .filter(|outcome| matches!(outcome, crate::Outcome::Abandoned(true)))
                .count();
        }
        Ok(abandoned)
    }

    /// The last (seq, hash) of the chain.
    pub async fn head(&self) -> Result<(i64, String), AuditError> {
        let row = sqlx::query("SELECT seq, hash FROM chain_head WHERE id = 1")
            .fetch_one(&self.pool)
            .await?;
        Ok((row.try_get("seq")?, row.try_get("hash")?))
    }

    /// Run a raw statement (tests use it to prove the triggers refuse tampering).
    pub async fn execute_raw(&self, sql: &str) -> Result<u64, AuditError> {
        Ok(sqlx::query(AssertSqlSafe(sql.to_owned())).execute(&self.pool).await?.rows_affected())
    }

    /// Close the pool (waits for the writer to drain).
    pub async fn close(self) {
        drop(self.writer);
        self.pool.close().await;
    }
}

fn parse_target(target: &str) -> (Dialect, String, Option<PathBuf>) {
    if target.starts_with("postgres://") || target.starts_with("postgresql://") {
        return (Dialect::Postgres, target.to_owned(), None);
    }
    let path = target
        .strip_prefix("sqlite://")
        .or_else(|| target.strip_prefix("sqlite:"))
        .unwrap_or(target);
    let path = path.split('?').next().unwrap_or(path);
    (Dialect::Sqlite, format!("sqlite://{path}?mode=rwc"), Some(PathBuf::from(path)))
}

/// An exclusive advisory lock on a file, released on drop.
struct FileLock(std::fs::File);

impl FileLock {
    fn acquire(path: &Path) -> Result<Self, AuditError> {
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(path)
            .map_err(|source| AuditError::Io { path: path.to_path_buf(), source })?;
        file.lock().map_err(|source| AuditError::Io { path: path.to_path_buf(), source })?;
        Ok(Self(file))
    }
}

impl Drop for FileLock {
    fn drop(&mut self) {
        let _ = self.0.unlock();
    }
}

/// The next item of a stream (sqlx streams are `futures` streams; one helper instead of a
/// dependency for a single call site).
pub(crate) async fn next<S: futures_core::Stream + Unpin>(stream: &mut S) -> Option<S::Item> {
    std::future::poll_fn(|cx| std::pin::Pin::new(&mut *stream).poll_next(cx)).await
}
