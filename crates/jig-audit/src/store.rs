//! The store: SQLite (default, a file) or PostgreSQL (shared), one implementation.
//!
//! Both speak the same SQL through sqlx's `Any` driver (`$n` placeholders work in both); they
//! differ in how a write transaction starts — SQLite's `BEGIN IMMEDIATE` takes the database's
//! write lock, PostgreSQL locks the chain-head row — and in their migrations (triggers).
//!
//! Writes go through one writer task per store that groups the batches waiting at that moment
//! into one transaction (group commit): each caller still returns only after its own batch is
//! committed and synced, so durability per call is kept while concurrent calls share an fsync.
//! SQLite runs in WAL mode with `synchronous=FULL`; a busy database is waited for, and a write
//! that still finds it busy is retried, so `SQLITE_BUSY` never reaches a caller.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;
use sqlx::any::{AnyPoolOptions, AnyRow};
use sqlx::migrate::Migrator;
use sqlx::{AnyConnection, AnyPool, AssertSqlSafe, Executor, Row};
use tokio::sync::{mpsc, oneshot};

use crate::error::AuditError;
use crate::ops::{Op, Outcome, RunUpdate, TokenRefusal};
use crate::owner::{self, Liveness};
use crate::packet::{Body, GENESIS, Packet};
use crate::records::{
    ApprovalRecord, ApprovalState, KeyRecord, KeyState, RunRecord, RunState, SessionUsage,
};
use crate::time::now_us;

static SQLITE_MIGRATIONS: Migrator = sqlx::migrate!("migrations/sqlite");
static POSTGRES_MIGRATIONS: Migrator = sqlx::migrate!("migrations/postgres");

/// How long SQLite waits for another process's write lock before reporting busy.
const BUSY_TIMEOUT_MS: u64 = 30_000;
/// How many batches one transaction may group.
const GROUP_LIMIT: usize = 256;

/// Which database.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    /// An SQLite file.
    Sqlite,
    /// A PostgreSQL server.
    Postgres,
}

type Reply = oneshot::Sender<Result<Vec<Outcome>, AuditError>>;

/// The audit store.
#[derive(Debug, Clone)]
pub struct Store {
    pool: AnyPool,
    dialect: Dialect,
    writer: mpsc::UnboundedSender<(Vec<Op>, Reply)>,
}

/// What start-up recovery found left over from a process that died.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Recovery {
    /// Runs that were running (or queued) and are now marked failed.
    pub runs: usize,
    /// Idempotency keys left pending and now marked failed.
    pub keys: usize,
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
}

impl Store {
    /// Open (creating and migrating when needed) the store at `target`: a `postgres://` URL, an
    /// `sqlite:` URL, or a path to an SQLite file.
    pub async fn open(target: &str) -> Result<Self, AuditError> {
        sqlx::any::install_default_drivers();
        let (dialect, url, file) = parse_target(target);
        let pool = match dialect {
            Dialect::Sqlite => {
                let file = file.unwrap_or_default();
                if let Some(dir) = file.parent().filter(|d| !d.as_os_str().is_empty()) {
                    std::fs::create_dir_all(dir)
                        .map_err(|source| AuditError::Io { path: dir.to_path_buf(), source })?;
                }
                // Several `jig` processes may open a new database at once; only one migrates.
                let _lock = FileLock::acquire(&file.with_extension("db.lock"))?;
                let pool = AnyPoolOptions::new()
                    .max_connections(4)
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
        let (writer, jobs) = mpsc::unbounded_channel();
        tokio::spawn(write_loop(pool.clone(), dialect, jobs));
        Ok(Self { pool, dialect, writer })
    }

    /// Which database this is.
    pub fn dialect(&self) -> Dialect {
        self.dialect
    }

    /// The database's own consistency check: SQLite's `PRAGMA integrity_check` (`"ok"` when
    /// sound, else its first complaint); PostgreSQL keeps its own and answers `"ok"`.
    pub async fn integrity(&self) -> Result<String, AuditError> {
        match self.dialect {
            Dialect::Sqlite => {
                let row = sqlx::query("PRAGMA integrity_check").fetch_one(&self.pool).await?;
                Ok(row.try_get::<String, _>(0)?)
            }
            Dialect::Postgres => Ok("ok".to_owned()),
        }
    }

    /// Apply `ops` in one transaction; returns when they are durable.
    pub async fn apply(&self, ops: Vec<Op>) -> Result<Vec<Outcome>, AuditError> {
        let (reply, answer) = oneshot::channel();
        self.writer.send((ops, reply)).map_err(|_| AuditError::Closed)?;
        answer.await.map_err(|_| AuditError::Closed)?
    }

    /// Mark what a dead process left unfinished: its created, queued or running runs become
    /// failed (`incomplete`) with a `tool.call.failed` packet each, and the idempotency keys they
    /// held become failed so an identical call may run again. Runs of live processes (another
    /// `jig call` on the same store) are left alone; runs of another host are abandoned only
    /// once their deadline has passed.
    pub async fn recover(&self) -> Result<Recovery, AuditError> {
        let rows =
            sqlx::query("SELECT * FROM runs WHERE state IN ('created', 'queued', 'running')")
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
        let mut ops = Vec::new();
        for run in &stuck {
            ops.push(Op::Append(crate::NewPacket {
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
            }));
            ops.push(Op::SetRun(RunUpdate {
                request_id: run.request_id.clone(),
                state: Some(RunState::Failed),
                error: Some("incomplete: the process stopped before the call finished".to_owned()),
                ..RunUpdate::default()
            }));
        }
        if !ops.is_empty() {
            self.apply(ops).await?;
        }
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
        Ok(Recovery { runs: stuck.len(), keys: usize::try_from(keys).unwrap_or(usize::MAX) })
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
        Ok(Verification { checked, first_broken, head })
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

    /// The first succeeded, non-replayed run of `run_id` with a recorded response: what a
    /// deterministic tool replays.
    pub async fn replay_source(&self, run_id: &str) -> Result<Option<RunRecord>, AuditError> {
        let row = sqlx::query(
            "SELECT * FROM runs WHERE run_id = $1 AND state = 'succeeded' AND response IS NOT NULL \
             AND replayed_from IS NULL ORDER BY created_us LIMIT 1",
        )
        .bind(run_id)
        .fetch_optional(&self.pool)
        .await?;
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

/// The writer: group what is waiting, commit it, answer each caller.
async fn write_loop(
    pool: AnyPool,
    dialect: Dialect,
    mut jobs: mpsc::UnboundedReceiver<(Vec<Op>, Reply)>,
) {
    while let Some(first) = jobs.recv().await {
        let mut group = vec![first];
        while group.len() < GROUP_LIMIT {
            match jobs.try_recv() {
                Ok(job) => group.push(job),
                Err(_) => break,
            }
        }
        let batches: Vec<&Vec<Op>> = group.iter().map(|(ops, _)| ops).collect();
        let mut attempt = 0;
        let results = loop {
            attempt += 1;
            match commit_group(&pool, dialect, &batches).await {
                Err(error) if error.is_busy() && attempt < 100 => {
                    tokio::time::sleep(Duration::from_millis(5 * attempt)).await;
                }
                other => break other,
            }
        };
        match results {
            Ok(results) => {
                for ((_, reply), result) in group.into_iter().zip(results) {
                    let _ = reply.send(result);
                }
            }
            Err(error) => {
                tracing::error!(%error, "audit commit failed");
                for (_, reply) in group {
                    let _ = reply.send(Err(AuditError::Commit(error.to_string())));
                }
            }
        }
    }
}

/// One transaction for several batches. A batch that fails (a constraint) is rolled back to its
/// savepoint and reported to its caller alone.
async fn commit_group(
    pool: &AnyPool,
    dialect: Dialect,
    batches: &[&Vec<Op>],
) -> Result<Vec<Result<Vec<Outcome>, AuditError>>, AuditError> {
    let mut conn = pool.acquire().await?;
    let begin = match dialect {
        Dialect::Sqlite => "BEGIN IMMEDIATE",
        Dialect::Postgres => "BEGIN",
    };
    conn.execute(begin).await?;
    let result = async {
        let lock = match dialect {
            Dialect::Sqlite => "SELECT seq, hash FROM chain_head WHERE id = 1",
            Dialect::Postgres => "SELECT seq, hash FROM chain_head WHERE id = 1 FOR UPDATE",
        };
        let row = sqlx::query(lock).fetch_one(&mut *conn).await?;
        let mut head: (i64, String) = (row.try_get("seq")?, row.try_get("hash")?);
        let mut results = Vec::with_capacity(batches.len());
        for ops in batches {
            conn.execute("SAVEPOINT batch").await?;
            let before = head.clone();
            match apply_batch(&mut conn, ops, &mut head).await {
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
        sqlx::query("UPDATE chain_head SET seq = $1, hash = $2 WHERE id = 1")
            .bind(head.0)
            .bind(&head.1)
            .execute(&mut *conn)
            .await?;
        Ok::<_, AuditError>(results)
    }
    .await;
    match result {
        Ok(results) => {
            conn.execute("COMMIT").await?;
            Ok(results)
        }
        Err(error) => {
            let _ = conn.execute("ROLLBACK").await;
            Err(error)
        }
    }
}

async fn apply_batch(
    conn: &mut AnyConnection,
    ops: &[Op],
    head: &mut (i64, String),
) -> Result<Vec<Outcome>, AuditError> {
    let mut outcomes = Vec::with_capacity(ops.len());
    for op in ops {
        outcomes.push(apply_op(conn, op, head).await?);
    }
    Ok(outcomes)
}

async fn apply_op(
    conn: &mut AnyConnection,
    op: &Op,
    head: &mut (i64, String),
) -> Result<Outcome, AuditError> {
    let now = now_us();
    match op {
        Op::Append(packet) => {
            let seq = head.0 + 1;
            let payload = jig_model::canonical::canonical_json(&packet.data);
            let hash = Body {
                kind: packet.kind.as_str(),
                ts_us: now,
                session_id: packet.session_id.as_deref(),
                thread_id: packet.thread_id.as_deref(),
                principal: packet.principal.as_deref(),
                request_id: packet.request_id.as_deref(),
                run_id: packet.run_id.as_deref(),
                tool: packet.tool.as_deref(),
                args_hash: packet.args_hash.as_deref(),
                data: &packet.data,
            }
            .hash(seq, &head.1);
            sqlx::query(
                "INSERT INTO packets (seq, kind, ts_us, session_id, thread_id, principal, request_id, run_id, tool, \
                 args_hash, payload, prev_hash, hash) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)",
            )
            .bind(seq)
            .bind(packet.kind.as_str())
            .bind(now)
            .bind(packet.session_id.as_deref())
            .bind(packet.thread_id.as_deref())
            .bind(packet.principal.as_deref())
            .bind(packet.request_id.as_deref())
            .bind(packet.run_id.as_deref())
            .bind(packet.tool.as_deref())
            .bind(packet.args_hash.as_deref())
            .bind(payload)
            .bind(&head.1)
            .bind(&hash)
            .execute(&mut *conn)
            .await?;
            *head = (seq, hash.clone());
            Ok(Outcome::Appended { seq, hash })
        }
        Op::CreateRun(run) => {
            sqlx::query(
                "INSERT INTO runs (request_id, run_id, tool, version, session_id, thread_id, principal, params_hash, \
                 policy_hash, deterministic, state, rule, created_us, updated_us, duration_ms, response, error, \
                 replayed_from, owner, deadline_us) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, \
                 $16, $17, $18, $19, $20)",
            )
            .bind(&run.request_id)
            .bind(&run.run_id)
            .bind(&run.tool)
            .bind(&run.version)
            .bind(run.session_id.as_deref())
            .bind(run.thread_id.as_deref())
            .bind(run.principal.as_deref())
            .bind(&run.params_hash)
            .bind(&run.policy_hash)
            .bind(i64::from(run.deterministic))
            .bind(run.state.as_str())
            .bind(run.rule.as_deref())
            .bind(now)
            .bind(now)
            .bind(run.duration_ms)
            .bind(run.response.as_ref().map(Value::to_string))
            .bind(run.error.as_deref())
            .bind(run.replayed_from.as_deref())
            .bind(run.owner.as_deref())
            .bind(run.deadline_us)
            .execute(&mut *conn)
            .await?;
            Ok(Outcome::Done)
        }
        Op::SetRun(update) => {
            sqlx::query(
                "UPDATE runs SET state = COALESCE($1, state), rule = COALESCE($2, rule), \
                 duration_ms = COALESCE($3, duration_ms), response = COALESCE($4, response), \
                 error = COALESCE($5, error), replayed_from = COALESCE($6, replayed_from), updated_us = $7 \
                 WHERE request_id = $8",
            )
            .bind(update.state.map(RunState::as_str))
            .bind(update.rule.as_deref())
            .bind(update.duration_ms)
            .bind(update.response.as_ref().map(Value::to_string))
            .bind(update.error.as_deref())
            .bind(update.replayed_from.as_deref())
            .bind(now)
            .bind(&update.request_id)
            .execute(&mut *conn)
            .await?;
            Ok(Outcome::Done)
        }
        Op::ClaimKey { key, request_id } => {
            let inserted = sqlx::query(
                "INSERT INTO idempotency (key, state, request_id, response, created_us, updated_us) \
                 VALUES ($1, 'pending', $2, NULL, $3, $3) ON CONFLICT (key) DO NOTHING",
            )
            .bind(key)
            .bind(request_id)
            .bind(now)
            .execute(&mut *conn)
            .await?
            .rows_affected();
            if inserted == 1 {
                return Ok(Outcome::Claimed);
            }
            // A key whose holder died without a response may be taken over.
            let taken_over = sqlx::query(
                "UPDATE idempotency SET state = 'pending', request_id = $1, updated_us = $2 \
                 WHERE key = $3 AND state = 'failed' AND response IS NULL",
            )
            .bind(request_id)
            .bind(now)
            .bind(key)
            .execute(&mut *conn)
            .await?
            .rows_affected();
            if taken_over == 1 {
                return Ok(Outcome::Claimed);
            }
            let row = sqlx::query("SELECT * FROM idempotency WHERE key = $1")
                .bind(key)
                .fetch_one(&mut *conn)
                .await?;
            Ok(Outcome::KeyTaken(key_from_row(&row)?))
        }
        Op::SettleKey { key, request_id, state, response } => {
            sqlx::query(
                "UPDATE idempotency SET state = $1, response = $2, updated_us = $3 WHERE key = $4 AND request_id = $5",
            )
            .bind(state.as_str())
            .bind(response.as_ref().map(Value::to_string))
            .bind(now)
            .bind(key)
            .bind(request_id)
            .execute(&mut *conn)
            .await?;
            Ok(Outcome::Done)
        }
        Op::AddUsage { session_id, principal, calls, bytes, wall_ms } => {
            sqlx::query(
                "INSERT INTO sessions (id, principal, created_us, calls, bytes, wall_ms) VALUES ($1, $2, $3, $4, $5, $6) \
                 ON CONFLICT (id) DO UPDATE SET calls = sessions.calls + excluded.calls, \
                 bytes = sessions.bytes + excluded.bytes, wall_ms = sessions.wall_ms + excluded.wall_ms",
            )
            .bind(session_id)
            .bind(principal.as_deref())
            .bind(now)
            .bind(calls)
            .bind(bytes)
            .bind(wall_ms)
            .execute(&mut *conn)
            .await?;
            Ok(Outcome::Done)
        }
        Op::CreateApproval(approval) => {
            sqlx::query(
                "INSERT INTO approvals (id, request_hash, tool, session_id, principal, request, rule, reason, state, \
                 token_hash, expires_us, decided_by, created_us, decided_us, consumed_us) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 'pending', NULL, NULL, NULL, $9, NULL, NULL)",
            )
            .bind(&approval.id)
            .bind(&approval.request_hash)
            .bind(&approval.tool)
            .bind(approval.session_id.as_deref())
            .bind(approval.principal.as_deref())
            .bind(approval.request.to_string())
            .bind(&approval.rule)
            .bind(&approval.reason)
            .bind(now)
            .execute(&mut *conn)
            .await?;
            Ok(Outcome::Done)
        }
        Op::DecideApproval { id, approve, token_hash, expires_us, decided_by } => {
            let state = if *approve { ApprovalState::Approved } else { ApprovalState::Denied };
            let changed = sqlx::query(
                "UPDATE approvals SET state = $1, token_hash = $2, expires_us = $3, decided_by = $4, decided_us = $5 \
                 WHERE id = $6 AND state = 'pending'",
            )
            .bind(state.as_str())
            .bind(token_hash.as_deref())
            .bind(*expires_us)
            .bind(decided_by.as_deref())
            .bind(now)
            .bind(id)
            .execute(&mut *conn)
            .await?
            .rows_affected();
            Ok(Outcome::Decided(changed == 1))
        }
        Op::ConsumeApproval { token_hash, request_hash } => {
            let row = sqlx::query("SELECT * FROM approvals WHERE token_hash = $1")
                .bind(token_hash)
                .fetch_optional(&mut *conn)
                .await?;
            let Some(row) = row else { return Ok(Outcome::TokenRefused(TokenRefusal::Unknown)) };
            let approval = approval_from_row(&row)?;
            let refusal = match approval.state {
                ApprovalState::Consumed => Some(TokenRefusal::Used),
                ApprovalState::Approved if approval.expires_us.is_some_and(|t| t <= now) => {
                    Some(TokenRefusal::Expired)
                }
                ApprovalState::Approved if approval.request_hash != *request_hash => {
                    Some(TokenRefusal::Mismatch)
                }
                ApprovalState::Approved => None,
                ApprovalState::Pending | ApprovalState::Denied => Some(TokenRefusal::Unknown),
            };
            if let Some(refusal) = refusal {
                return Ok(Outcome::TokenRefused(refusal));
            }
            let used = sqlx::query(
                "UPDATE approvals SET state = 'consumed', consumed_us = $1 WHERE id = $2 AND state = 'approved'",
            )
            .bind(now)
            .bind(&approval.id)
            .execute(&mut *conn)
            .await?
            .rows_affected();
            Ok(if used == 1 {
                Outcome::Consumed(approval.id)
            } else {
                Outcome::TokenRefused(TokenRefusal::Used)
            })
        }
    }
}

fn json_column(row: &AnyRow, column: &str) -> Result<Option<Value>, AuditError> {
    let text: Option<String> = row.try_get(column)?;
    text.map(|t| {
        serde_json::from_str(&t).map_err(|e| AuditError::Corrupt(format!("{column}: {e}")))
    })
    .transpose()
}

fn packet_from_row(row: &AnyRow) -> Result<Packet, AuditError> {
    Ok(Packet {
        seq: row.try_get("seq")?,
        kind: row.try_get("kind")?,
        ts_us: row.try_get("ts_us")?,
        session_id: row.try_get("session_id")?,
        thread_id: row.try_get("thread_id")?,
        principal: row.try_get("principal")?,
        request_id: row.try_get("request_id")?,
        run_id: row.try_get("run_id")?,
        tool: row.try_get("tool")?,
        args_hash: row.try_get("args_hash")?,
        data: json_column(row, "payload")?.unwrap_or(Value::Null),
        prev_hash: row.try_get("prev_hash")?,
        hash: row.try_get("hash")?,
    })
}

fn run_from_row(row: &AnyRow) -> Result<RunRecord, AuditError> {
    let state: String = row.try_get("state")?;
    let deterministic: i64 = row.try_get("deterministic")?;
    Ok(RunRecord {
        request_id: row.try_get("request_id")?,
        run_id: row.try_get("run_id")?,
        tool: row.try_get("tool")?,
        version: row.try_get("version")?,
        session_id: row.try_get("session_id")?,
        thread_id: row.try_get("thread_id")?,
        principal: row.try_get("principal")?,
        params_hash: row.try_get("params_hash")?,
        policy_hash: row.try_get("policy_hash")?,
        deterministic: deterministic != 0,
        state: RunState::parse(&state)
            .ok_or_else(|| AuditError::Corrupt(format!("run state `{state}`")))?,
        rule: row.try_get("rule")?,
        created_us: row.try_get("created_us")?,
        updated_us: row.try_get("updated_us")?,
        duration_ms: row.try_get("duration_ms")?,
        response: json_column(row, "response")?,
        error: row.try_get("error")?,
        replayed_from: row.try_get("replayed_from")?,
        owner: row.try_get("owner")?,
        deadline_us: row.try_get("deadline_us")?,
    })
}

fn key_from_row(row: &AnyRow) -> Result<KeyRecord, AuditError> {
    let state: String = row.try_get("state")?;
    Ok(KeyRecord {
        key: row.try_get("key")?,
        state: KeyState::parse(&state)
            .ok_or_else(|| AuditError::Corrupt(format!("key state `{state}`")))?,
        request_id: row.try_get("request_id")?,
        response: json_column(row, "response")?,
    })
}

fn approval_from_row(row: &AnyRow) -> Result<ApprovalRecord, AuditError> {
    let state: String = row.try_get("state")?;
    Ok(ApprovalRecord {
        id: row.try_get("id")?,
        request_hash: row.try_get("request_hash")?,
        tool: row.try_get("tool")?,
        session_id: row.try_get("session_id")?,
        principal: row.try_get("principal")?,
        request: json_column(row, "request")?.unwrap_or(Value::Null),
        rule: row.try_get("rule")?,
        reason: row.try_get("reason")?,
        state: ApprovalState::parse(&state)
            .ok_or_else(|| AuditError::Corrupt(format!("approval state `{state}`")))?,
        expires_us: row.try_get("expires_us")?,
        decided_by: row.try_get("decided_by")?,
        created_us: row.try_get("created_us")?,
        decided_us: row.try_get("decided_us")?,
        consumed_us: row.try_get("consumed_us")?,
    })
}
