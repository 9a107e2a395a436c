//! Runbook journal entries (`Op::Journal`): first writer wins per `(run_id, key)`, and each
//! entry recorded is sealed by a packet in the chain. Consecutive entries — a step's trace
//! events — take two statements together instead of two each: one multi-row INSERT, then one
//! INSERT of the packets sealing the rows it recorded.
//!
//! Nearly every entry is new, so the writer first tries them as blind writes ([`insert_new`],
//! inside its one-round-trip transaction); a key already taken fails that transaction, and
//! [`record`] then asks which rows went in (`RETURNING`) and answers the rest with what is
//! recorded.

use std::collections::HashSet;

use serde_json::Value;
use sqlx::{AnyConnection, AssertSqlSafe, Row};

use crate::chain::append;
use crate::dialect::Dialect;
use crate::error::AuditError;
use crate::ops::{Op, Outcome};
use crate::packet::NewPacket;
use crate::payload::JournalSeal;
use crate::statement::{self, Arg, Statement};
use crate::time::now_us;

/// Record `ops` (all `Op::Journal`), in order; one outcome each.
pub(crate) async fn record(
    conn: &mut AnyConnection,
    dialect: Dialect,
    ops: &[Op],
    head: &mut (i64, String),
) -> Result<Vec<Outcome>, AuditError> {
    let entries = entries(ops);
    let now = now_us();
    let mut insert = rows(&entries, now);
    insert.push(" ON CONFLICT (run_id, key) DO NOTHING RETURNING run_id, key", []);
    let (text, args) = statement::render(&[insert]);
    let rows = sqlx::query_with(AssertSqlSafe(text), args).fetch_all(&mut *conn).await?;
    let mut inserted = HashSet::new();
    for row in &rows {
        inserted.insert((row.try_get::<String, _>("run_id")?, row.try_get::<String, _>("key")?));
    }
    // The same key twice in one batch: the first is the one recorded.
    let mut sealed = HashSet::new();
    let mut packets = Vec::new();
    let mut outcomes = Vec::with_capacity(entries.len());
    for (run_id, key, entry, packet) in &entries {
        let id = ((*run_id).clone(), (*key).clone());
        if inserted.contains(&id) && sealed.insert(id) {
            packets.push(seal(run_id, key, entry, packet.as_ref()));
            outcomes.push(Some(Outcome::Journaled { inserted: true, entry: (*entry).clone() }));
        } else {
            outcomes.push(None);
        }
    }
    if !packets.is_empty() {
        let packets: Vec<&NewPacket> = packets.iter().collect();
        let (statement, _) = append(&packets, head, now);
        statement::run(conn, dialect, &[statement]).await?;
    }
    // Entries someone else recorded first: what is recorded under their keys.
    let mut answered = Vec::with_capacity(entries.len());
    for ((run_id, key, _, _), outcome) in entries.iter().zip(outcomes) {
        match outcome {
            Some(outcome) => answered.push(outcome),
            None => answered.push(Outcome::Journaled {
                inserted: false,
                entry: kept(conn, run_id, key).await?,
            }),
        }
    }
    Ok(answered)
}

/// Record `ops` (all `Op::Journal`) as new entries: the INSERT (which fails when a key is
/// taken, the same key twice included), the packets sealing them, and their outcomes.
pub(crate) fn insert_new(ops: &[Op], now: i64) -> (Statement, Vec<NewPacket>, Vec<Outcome>) {
    let entries = entries(ops);
    let insert = rows(&entries, now);
    let seals = entries
        .iter()
        .map(|(run_id, key, entry, packet)| seal(run_id, key, entry, packet.as_ref()))
        .collect();
    let outcomes = entries
        .iter()
        .map(|(_, _, entry, _)| Outcome::Journaled { inserted: true, entry: (*entry).clone() })
        .collect();
    (insert, seals, outcomes)
}

type Entry<'a> = (&'a String, &'a String, &'a Value, &'a Option<NewPacket>);

fn entries(ops: &[Op]) -> Vec<Entry<'_>> {
    ops.iter()
        .filter_map(|op| match op {
            Op::Journal { run_id, key, entry, packet } => Some((run_id, key, entry, packet)),
            _ => None,
        })
        .collect()
}

/// One multi-row INSERT of `entries`, open for a conflict clause.
fn rows(entries: &[Entry<'_>], now: i64) -> Statement {
    let mut insert =
        Statement::new("INSERT INTO runbook_journal (run_id, key, entry, created_us) VALUES ");
    for (i, (run_id, key, entry, _)) in entries.iter().enumerate() {
        let row: [Arg; 4] =
            [run_id.as_str().into(), key.as_str().into(), entry.to_string().into(), now.into()];
        insert.push(if i == 0 { "(?, ?, ?, ?)" } else { ", (?, ?, ?, ?)" }, row);
    }
    insert
}

/// The packet that puts a journal row in the chain: it names the row and its hash, so that
/// `verify` finds a row changed behind the chain's back (the journal decides what a resumed
/// run does next).
fn seal(run_id: &str, key: &str, entry: &Value, packet: Option<&NewPacket>) -> NewPacket {
    let mut packet = packet.cloned().unwrap_or_else(|| NewPacket {
        kind: crate::packet::PacketKind::RunbookStep,
        session_id: Some(run_id.to_owned()),
        thread_id: None,
        principal: None,
        request_id: None,
        run_id: Some(run_id.to_owned()),
        tool: None,
        args_hash: None,
        data: Value::Object(serde_json::Map::new()),
    });
    if let Value::Object(data) = &mut packet.data {
        let seal = JournalSeal::of(key, entry);
        data.insert(JournalSeal::FIELD.to_owned(), serde_json::to_value(seal).unwrap_or_default());
    }
    packet
}

async fn kept(conn: &mut AnyConnection, run_id: &str, key: &str) -> Result<Value, AuditError> {
    let kept: String =
        sqlx::query_scalar("SELECT entry FROM runbook_journal WHERE run_id = $1 AND key = $2")
            .bind(run_id)
            .bind(key)
            .fetch_one(&mut *conn)
            .await?;
    serde_json::from_str(&kept)
        .map_err(|e| AuditError::Corrupt(format!("journal entry {key}: {e}")))
}
