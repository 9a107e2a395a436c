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

use crate::error::AuditError;
use crate::ops::{Op, Outcome};
use crate::owner::{self, Liveness};
use crate::packet::{GENESIS, Packet};
use crate::records::{
    ApprovalRecord, ApprovalState, KeyRecord, ReplayIdentity, RunRecord, SessionUsage,
};
use crate::rows::{approval_from_row, key_from_row, packet_from_row, run_from_row};
use crate::time::now_us;
pub use crate::writer::{Flush, SYNC_WINDOW};

static SQLITE_MIGRATIONS: Migrator = sqlx::migrate!("migrations/sqlite");
static POSTGRES_MIGRATIONS: Migrator = sqlx::migrate!("migrations/postgres");

/// How long SQLite waits for another process's write lock before reporting busy.
const BUSY_TIMEOUT_MS: u64 = 30_000;

/// Which database.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    /// An SQLite file.
    Sqlite,
    /// A PostgreSQL server.
    Postgres,
}

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

/// The result of checking the chain.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verification {
    /// How many packets were checked.
    pub checked: i64,
    /// The first packet that does not verify, and why.
    pub first_broken: Option<(i64, String)>,
    /// The last seq and hash (the head), as stored.
    pub head: (i64, String),
    /// A side table (approvals, idempotency) that disagrees with the chain, and how.
    pub side_tables: Option<String>,
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

    /// A feed of what other processes append from now on ([`crate::feed`]).
    pub async fn feed(&self) -> Result<crate::feed::Feed, AuditError> {
        crate::feed::Feed::start(self).await
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

    /// Check every packet's hash and link, from the first; report the first that fails.
    pub async fn verify(&self) -> Result<Verification, AuditError> {
        let mut previous = GENESIS.to_owned();
        let mut expected_seq = 1;
        let mut checked = 0;
        loop {
            let page = self.packets(expected_seq - 1, 2000).await?;
            if page.is_empty() {
                break;
            }
            for packet in page {
                let problem = if packet.seq != expected_seq {
                    Some(format!(
                        "seq {} follows seq {} (a packet is missing)",
                        packet.seq,
                        expected_seq - 1
                    ))
                } else if packet.prev_hash != previous {
                    Some("its prev_hash is not the previous packet's hash".to_owned())
                } else if packet.expected_hash() != packet.hash {
                    Some("its content does not match its hash (it was altered)".to_owned())
                } else {
                    None
                };
                if let Some(reason) = problem {
                    return Ok(Verification {
                        checked,
                        first_broken: Some((packet.seq, reason)),
                        head: self.head().await?,
                        side_tables: None,
                    });
                }
                previous = packet.hash;
                expected_seq += 1;
                checked += 1;
            }
        }
        let head = self.head().await?;
        let first_broken = if head.0 != checked {
            Some((
                checked + 1,
                format!("the head says seq {} but the chain ends at {checked}", head.0),
            ))
        } else if head.1 != previous {
            Some((head.0, "the head's hash is not the last packet's".to_owned()))
        } else {
            None
        };
        let side_tables = if first_broken.is_none() { self.cross_check().await? } else { None };
        Ok(Verification { checked, first_broken, head, side_tables })
    }

    /// The side tables against the chain they come from: every approved (or used) approval has
    /// its intact `approval.decided` packet with the same token, and every recorded response
    /// that replays serve is the one its `tool.call.result` packet holds.
    async fn cross_check(&self) -> Result<Option<String>, AuditError> {
        let decided: Vec<Packet> =
            sqlx::query("SELECT * FROM packets WHERE kind = 'approval.decided'")
                .fetch_all(&self.pool)
                .await?
                .iter()
                .map(packet_from_row)
                .collect::<Result<_, _>>()?;
        let rows = sqlx::query(
            "SELECT id, state, request_hash, token_hash FROM approvals WHERE state IN ('approved', 'consumed')",
        )
        .fetch_all(&self.pool)
        .await?;
        for row in &rows {
            let id: String = row.try_get("id")?;
            let state: String = row.try_get("state")?;
            let request_hash: String = row.try_get("request_hash")?;
            let token_hash: Option<String> = row.try_get("token_hash")?;
            let in_chain = decided.iter().any(|p| {
                p.data["approval_id"] == id.as_str()
                    && p.data["verdict"] == "approved"
                    && token_hash.as_deref().is_some_and(|t| p.data["token_hash"] == t)
                    && p.data["request_hash"] == request_hash.as_str()
            });
            if !in_chain {
                return Ok(Some(format!(
                    "approval {id} is {state} in the approvals table, but no packet of the chain approved it with that token"
                )));
            }
        }
        if let Some(problem) = self.unsealed_journal_row().await? {
            return Ok(Some(problem));
        }
        // Every stored result still matches the hash its references name, and every reference
        // names a stored result.
        let mut stored = std::collections::HashSet::new();
        let mut blobs = sqlx::query("SELECT hash, size, body FROM blobs").fetch(&self.pool);
        while let Some(row) = next(&mut blobs).await {
            let row = row?;
            let hash: String = row.try_get("hash")?;
            let size: i64 = row.try_get("size")?;
            let body: Vec<u8> = row.try_get("body")?;
            if let Err(error) = crate::blob::decode(&hash, &body, size) {
                return Ok(Some(error.to_string()));
            }
            stored.insert(hash);
        }
        drop(blobs);
        let referencing =
            sqlx::query("SELECT seq, payload FROM packets WHERE payload LIKE '%\"$blob\"%'")
                .fetch_all(&self.pool)
                .await?;
        for row in &referencing {
            let seq: i64 = row.try_get("seq")?;
            let payload: String = row.try_get("payload")?;
            let payload: serde_json::Value = serde_json::from_str(&payload).unwrap_or_default();
            if let Some(hash) = payload.get("data").and_then(crate::blob::referenced)
                && !stored.contains(hash)
            {
                return Ok(Some(format!(
                    "packet {seq} names result blob {hash}, which is missing"
                )));
            }
        }
        let rows =
            sqlx::query("SELECT * FROM idempotency WHERE state = 'done' AND response IS NOT NULL")
                .fetch_all(&self.pool)
                .await?;
        for row in &rows {
            let key = key_from_row(row)?;
            let packets = self.packets_of(&key.request_id).await?;
            let response = key.response.unwrap_or(serde_json::Value::Null);
            let matches = packets.iter().any(|p| {
                matches!(p.kind.as_str(), "tool.call.result" | "tool.call.failed")
                    && p.data.get("replayed_from").is_none()
                    && p.data.get("data") == response.get("data")
            });
            if !matches {
                return Ok(Some(format!(
                    "the recorded response of request {} (idempotency key {}) is not the result its packet holds",
                    key.request_id, key.key
                )));
            }
        }
        Ok(None)
    }

    /// Packets after `after_seq`, at most `limit`, in order.
    pub async fn packets(&self, after_seq: i64, limit: i64) -> Result<Vec<Packet>, AuditError> {
        let rows = sqlx::query("SELECT * FROM packets WHERE seq > $1 ORDER BY seq LIMIT $2")
            .bind(after_seq)
            .bind(limit)
            .fetch_all(&self.pool)
            .await?;
        rows.iter().map(packet_from_row).collect()
    }

    /// The last `limit` packets (of one tool, if given), in order.
    pub async fn latest_packets(
        &self,
        limit: i64,
        tool: Option<&str>,
    ) -> Result<Vec<Packet>, AuditError> {
        let rows = match tool {
            Some(tool) => {
                sqlx::query(
                    "SELECT * FROM (SELECT * FROM packets WHERE tool = $1 ORDER BY seq DESC LIMIT $2) AS latest ORDER BY seq",
                )
                .bind(tool)
                .bind(limit)
                .fetch_all(&self.pool)
                .await?
            }
            None => {
                sqlx::query("SELECT * FROM (SELECT * FROM packets ORDER BY seq DESC LIMIT $1) AS latest ORDER BY seq")
                    .bind(limit)
                    .fetch_all(&self.pool)
                    .await?
            }
        };
        rows.iter().map(packet_from_row).collect()
    }

    /// The packets a runbook run appended (its trace, the people's acts), in order.
    pub async fn packets_of_run(&self, run_id: &str) -> Result<Vec<Packet>, AuditError> {
        let rows = sqlx::query("SELECT * FROM packets WHERE run_id = $1 ORDER BY seq")
            .bind(run_id)
            .fetch_all(&self.pool)
            .await?;
        rows.iter().map(packet_from_row).collect()
    }

    /// The packets of one request, in order.
    pub async fn packets_of(&self, request_id: &str) -> Result<Vec<Packet>, AuditError> {
        let rows = sqlx::query("SELECT * FROM packets WHERE request_id = $1 ORDER BY seq")
            .bind(request_id)
            .fetch_all(&self.pool)
            .await?;
        rows.iter().map(packet_from_row).collect()
    }

    /// The most recent runs first.
    pub async fn runs(&self, limit: i64) -> Result<Vec<RunRecord>, AuditError> {
        let rows = sqlx::query("SELECT * FROM runs ORDER BY created_us DESC, request_id LIMIT $1")
            .bind(limit)
            .fetch_all(&self.pool)
            .await?;
        rows.iter().map(run_from_row).collect()
    }

    /// A run by request id, or the latest run of a run id (a unique prefix of either works).
    pub async fn run(&self, id: &str) -> Result<Option<RunRecord>, AuditError> {
        let pattern = format!("{}%", id.replace(['%', '_'], ""));
        let row = sqlx::query(
            "SELECT * FROM runs WHERE request_id LIKE $1 OR run_id LIKE $1 ORDER BY created_us DESC LIMIT 1",
        )
        .bind(pattern)
        .fetch_optional(&self.pool)
        .await?;
        row.as_ref().map(run_from_row).transpose()
    }

    /// The run of exactly this request id.
    pub async fn run_of_request(&self, request_id: &str) -> Result<Option<RunRecord>, AuditError> {
        let row = sqlx::query("SELECT * FROM runs WHERE request_id = $1")
            .bind(request_id)
            .fetch_optional(&self.pool)
            .await?;
        row.as_ref().map(run_from_row).transpose()
    }

    /// The latest succeeded, non-replayed run of `identity` with a recorded response: what a
    /// deterministic tool replays (if this store vouched for it: the latest, so that a run
    /// this store recorded comes before one that came with the file).
    pub async fn replay_source(
        &self,
        identity: &ReplayIdentity<'_>,
    ) -> Result<Option<RunRecord>, AuditError> {
        self.latest_run_of(identity, "state = 'succeeded'").await
    }

    /// The latest run of `identity` in a state `states` (an SQL condition of this module's)
    /// with a recorded response, not itself a replay.
    pub(crate) async fn latest_run_of(
        &self,
        identity: &ReplayIdentity<'_>,
        states: &str,
    ) -> Result<Option<RunRecord>, AuditError> {
        let person = if identity.person.is_some() { "AND person = $3" } else { "" };
        // Put together from this module's constants only; every value is bound.
        let sql = AssertSqlSafe(format!(
            "SELECT * FROM runs WHERE run_id = $1 AND {states} AND response IS NOT NULL \
             AND replayed_from IS NULL AND definition = $2 {person} ORDER BY created_us DESC LIMIT 1"
        ));
        let mut query = sqlx::query(sql).bind(identity.run_id).bind(identity.definition);
        if let Some(person) = identity.person {
            query = query.bind(person);
        }
        let row = query.fetch_optional(&self.pool).await?;
        row.as_ref().map(run_from_row).transpose()
    }

    /// An idempotency key's record.
    pub async fn key(&self, key: &str) -> Result<Option<KeyRecord>, AuditError> {
        let row = sqlx::query("SELECT * FROM idempotency WHERE key = $1")
            .bind(key)
            .fetch_optional(&self.pool)
            .await?;
        row.as_ref().map(key_from_row).transpose()
    }

    /// Approvals, newest first; only those in `state` when given.
    pub async fn approvals(
        &self,
        state: Option<ApprovalState>,
    ) -> Result<Vec<ApprovalRecord>, AuditError> {
        let rows = match state {
            Some(state) => {
                sqlx::query("SELECT * FROM approvals WHERE state = $1 ORDER BY created_us DESC")
                    .bind(state.as_str())
                    .fetch_all(&self.pool)
                    .await?
            }
            None => {
                sqlx::query("SELECT * FROM approvals ORDER BY created_us DESC")
                    .fetch_all(&self.pool)
                    .await?
            }
        };
        rows.iter().map(approval_from_row).collect()
    }

    /// One approval (a unique prefix of its id works).
    pub async fn approval(&self, id: &str) -> Result<Option<ApprovalRecord>, AuditError> {
        let pattern = format!("{}%", id.replace(['%', '_'], ""));
        let rows = sqlx::query("SELECT * FROM approvals WHERE id LIKE $1 LIMIT 2")
            .bind(pattern)
            .fetch_all(&self.pool)
            .await?;
        match rows.as_slice() {
            [one] => approval_from_row(one).map(Some),
            _ => Ok(None),
        }
    }

    /// The latest approval asked for exactly this request (its hash), whatever its state.
    pub async fn approval_for_request(
        &self,
        request_hash: &str,
    ) -> Result<Option<ApprovalRecord>, AuditError> {
        let row = sqlx::query(
            "SELECT * FROM approvals WHERE request_hash = $1 ORDER BY created_us DESC LIMIT 1",
        )
        .bind(request_hash)
        .fetch_optional(&self.pool)
        .await?;
        row.as_ref().map(approval_from_row).transpose()
    }

    /// The approval the call `request_id` waits (or waited) for.
    pub async fn approval_waited_for(
        &self,
        request_id: &str,
    ) -> Result<Option<ApprovalRecord>, AuditError> {
        let row = sqlx::query(
            "SELECT * FROM approvals WHERE request_id = $1 ORDER BY created_us DESC LIMIT 1",
        )
        .bind(request_id)
        .fetch_optional(&self.pool)
        .await?;
        row.as_ref().map(approval_from_row).transpose()
    }

    /// Pending approvals whose time was over at `now`.
    pub async fn approvals_expired(&self, now: i64) -> Result<Vec<ApprovalRecord>, AuditError> {
        let rows = sqlx::query(
            "SELECT * FROM approvals WHERE state = 'pending' AND expires_us IS NOT NULL \
             AND expires_us <= $1 ORDER BY created_us LIMIT 500",
        )
        .bind(now)
        .fetch_all(&self.pool)
        .await?;
        rows.iter().map(approval_from_row).collect()
    }

    /// What a session has used.
    pub async fn usage(&self, session_id: &str) -> Result<SessionUsage, AuditError> {
        let row = sqlx::query("SELECT calls, bytes, wall_ms FROM sessions WHERE id = $1")
            .bind(session_id)
            .fetch_optional(&self.pool)
            .await?;
        Ok(match row {
            Some(row) => SessionUsage {
                calls: row.try_get("calls")?,
                bytes: row.try_get("bytes")?,
                wall_ms: row.try_get("wall_ms")?,
            },
            None => SessionUsage::default(),
        })
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
async fn next<S: futures_core::Stream + Unpin>(stream: &mut S) -> Option<S::Item> {
    std::future::poll_fn(|cx| std::pin::Pin::new(&mut *stream).poll_next(cx)).await
}
