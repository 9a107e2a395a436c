//! The ceiling: the rows one pipeline call commits — three packets, the chain head, the run,
//! the session's usage — inserted raw (no validation, policy, hashing or group commit), one
//! transaction per call in one round trip, with the store's durability settings (SQLite: WAL,
//! `synchronous=FULL`, `BEGIN IMMEDIATE`; PostgreSQL: its defaults, `fsync` on commit).

use std::time::{Duration, Instant};

use jig_audit::{Dialect, Packet, Store};
use sqlx::any::AnyPoolOptions;
use sqlx::{AnyPool, AssertSqlSafe, Executor};

use crate::stats::Figures;

pub async fn measure(
    db: &str,
    sample: &[Packet],
    calls: usize,
    callers: usize,
) -> anyhow::Result<Figures> {
    // The store creates the schema and is closed; the ceiling writes through its own pool.
    let store = Store::open(db).await?;
    let dialect = store.dialect();
    store.close().await;
    let pool = connect(db, dialect, callers).await?;
    for i in 0..200 {
        insert_call(&pool, dialect, sample, &format!("warm-{i}")).await?;
    }
    let per_caller = calls / callers;
    let started = Instant::now();
    let mut tasks = Vec::new();
    for caller in 0..callers {
        let pool = pool.clone();
        let sample = sample.to_vec();
        tasks.push(tokio::spawn(async move {
            let mut latencies = Vec::with_capacity(per_caller);
            for i in 0..per_caller {
                let t = Instant::now();
                insert_call(&pool, dialect, &sample, &format!("raw-{caller}-{i}")).await?;
                latencies.push(t.elapsed());
            }
            anyhow::Ok(latencies)
        }));
    }
    let mut latencies: Vec<Duration> = Vec::with_capacity(calls);
    for task in tasks {
        latencies.extend(task.await??);
    }
    Ok(Figures::of(latencies, started.elapsed()))
}

async fn connect(db: &str, dialect: Dialect, callers: usize) -> anyhow::Result<AnyPool> {
    sqlx::any::install_default_drivers();
    let max = u32::try_from(callers).unwrap_or(4);
    Ok(match dialect {
        Dialect::Sqlite => {
            AnyPoolOptions::new()
                .max_connections(max)
                .test_before_acquire(false)
                .after_connect(|conn, _| {
                    Box::pin(async move {
                        conn.execute("PRAGMA busy_timeout = 10000; PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL;")
                            .await?;
                        Ok(())
                    })
                })
                .connect(&format!("sqlite://{db}?mode=rwc"))
                .await?
        }
        Dialect::Postgres => {
            AnyPoolOptions::new().max_connections(max).test_before_acquire(false).connect(db).await?
        }
    })
}

/// One call's rows in one transaction, in one round trip: on SQLite one multi-statement text
/// with bound values (the same text every call, so SQLite prepares it once); on PostgreSQL,
/// whose prepared statements hold one command, one simple-protocol text with the values inline.
async fn insert_inline(
    pool: &AnyPool,
    dialect: Dialect,
    sample: &[Packet],
    request_id: &str,
) -> anyhow::Result<()> {
    let mut conn = pool.acquire().await?;
    let now = jig_audit::time::now_us();
    let text = |s: &str| format!("'{}'", s.replace('\'', "''"));
    let begin = match dialect {
        Dialect::Sqlite => "BEGIN IMMEDIATE;",
        Dialect::Postgres => "BEGIN; SELECT seq FROM chain_head WHERE id = 1 FOR UPDATE;",
    };
    let mut sql = String::from(begin);
    sql.push_str(&format!(
        "INSERT INTO runs (request_id, run_id, tool, version, session_id, principal, params_hash, policy_hash, \
         deterministic, state, created_us, updated_us, duration_ms, response) VALUES ({}, {}, 'file_read', '1.0.0', \
         'default', 'anonymous', {}, {}, 0, 'succeeded', {now}, {now}, 0, {});",
        text(request_id),
        text(&"0".repeat(64)),
        text(&"1".repeat(64)),
        text(&"2".repeat(64)),
        text(&sample.last().map(|p| p.data.to_string()).unwrap_or_default()),
    ));
    sql.push_str(
        "INSERT INTO packets (seq, kind, ts_us, session_id, principal, request_id, run_id, tool, args_hash, payload, \
         prev_hash, hash) VALUES ",
    );
    for (i, packet) in sample.iter().enumerate() {
        sql.push_str(&format!(
            "{}((SELECT seq + {} FROM chain_head WHERE id = 1), {}, {now}, 'default', 'anonymous', {}, {}, 'file_read', {}, {}, {}, {})",
            if i == 0 { "" } else { ", " },
            i + 1,
            text(&packet.kind),
            text(request_id),
            text(packet.run_id.as_deref().unwrap_or_default()),
            text(packet.args_hash.as_deref().unwrap_or_default()),
            text(&packet.data.to_string()),
            text(&packet.prev_hash),
            text(&packet.hash),
        ));
    }
    sql.push_str(&format!(
        "; UPDATE chain_head SET seq = seq + {}, hash = {} WHERE id = 1;\
         INSERT INTO sessions (id, principal, created_us, calls, bytes, wall_ms) VALUES ('default', 'anonymous', {now}, 1, 40, 1) \
         ON CONFLICT (id) DO UPDATE SET calls = sessions.calls + 1, bytes = sessions.bytes + 40, wall_ms = sessions.wall_ms + 1;\
         COMMIT;",
        sample.len(),
        text(&"3".repeat(64)),
    ));
    if let Err(error) = conn.execute(AssertSqlSafe(sql)).await {
        let _ = conn.execute("ROLLBACK").await;
        return Err(error.into());
    }
    Ok(())
}

/// The rows of one call; see [`insert_inline`] and [`insert_bound`].
async fn insert_call(
    pool: &AnyPool,
    dialect: Dialect,
    sample: &[Packet],
    request_id: &str,
) -> anyhow::Result<()> {
    match dialect {
        Dialect::Sqlite => insert_bound(pool, sample, request_id).await,
        Dialect::Postgres => insert_inline(pool, dialect, sample, request_id).await,
    }
}

/// SQLite: BEGIN IMMEDIATE, the run, three packets, the head, the session, COMMIT — one text,
/// values bound (`$n` numbered across its statements).
async fn insert_bound(pool: &AnyPool, sample: &[Packet], request_id: &str) -> anyhow::Result<()> {
    anyhow::ensure!(sample.len() == 3, "a call writes three packets, not {}", sample.len());
    const SQL: &str = "BEGIN IMMEDIATE;
        INSERT INTO runs (request_id, run_id, tool, version, session_id, principal, params_hash, policy_hash,
            deterministic, state, created_us, updated_us, duration_ms, response)
            VALUES ($1, $2, 'file_read', '1.0.0', 'default', 'anonymous', $3, $4, 0, 'succeeded', $5, $5, 0, $6);
        INSERT INTO packets (seq, kind, ts_us, session_id, principal, request_id, run_id, tool, args_hash, payload,
            prev_hash, hash) VALUES
            ((SELECT seq + 1 FROM chain_head WHERE id = 1), $7, $5, 'default', 'anonymous', $1, $2, 'file_read', $3, $8, $9, $10),
            ((SELECT seq + 2 FROM chain_head WHERE id = 1), $11, $5, 'default', 'anonymous', $1, $2, 'file_read', $3, $12, $13, $14),
            ((SELECT seq + 3 FROM chain_head WHERE id = 1), $15, $5, 'default', 'anonymous', $1, $2, 'file_read', $3, $16, $17, $18);
        UPDATE chain_head SET seq = seq + 3, hash = $18 WHERE id = 1;
        INSERT INTO sessions (id, principal, created_us, calls, bytes, wall_ms) VALUES ('default', 'anonymous', $5, 1, 40, 1)
            ON CONFLICT (id) DO UPDATE SET calls = sessions.calls + 1, bytes = sessions.bytes + 40, wall_ms = sessions.wall_ms + 1;
        COMMIT;";
    let mut conn = pool.acquire().await?;
    let mut query = sqlx::query(SQL)
        .bind(request_id.to_owned())
        .bind("0".repeat(64))
        .bind("1".repeat(64))
        .bind("2".repeat(64))
        .bind(jig_audit::time::now_us())
        .bind(sample[2].data.to_string());
    for packet in sample {
        query = query
            .bind(packet.kind.clone())
            .bind(packet.data.to_string())
            .bind(packet.prev_hash.clone())
            .bind(packet.hash.clone());
    }
    if let Err(error) = query.execute(&mut *conn).await {
        let _ = conn.execute("ROLLBACK").await;
        return Err(error.into());
    }
    Ok(())
}
