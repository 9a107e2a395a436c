//! Operations turned into statements.
//!
//! Most operations are blind writes: their outcome is known without reading anything back
//! (append a packet, create or update a run, settle a key, add usage, create an approval). A run
//! of them becomes statements executed together, with two foldings that save statements:
//! consecutive packets go in one multi-row INSERT, and a run created in the run of writes is
//! inserted with the updates that follow it. Consecutive runbook journal entries are recorded
//! together ([`crate::journal_ops`]): as blind writes when the writer tries its one round
//! trip, and checked for keys already taken on the reading path. The rest (claiming a key,
//! deciding or consuming an approval) read before they write and are executed one by one.

mod blind;
mod interactive;
mod people;

use sqlx::AnyConnection;

use crate::dialect::Dialect;
use crate::error::AuditError;
use crate::ops::{Op, Outcome};
use crate::packet::NewPacket;
use crate::statement;
use crate::time::now_us;

pub(crate) use blind::blind;
use interactive::interactive;

/// Whether `op`'s outcome is known without reading, whatever the store holds.
pub(crate) fn is_blind(op: &Op) -> bool {
    matches!(
        op,
        Op::Append(_)
            | Op::PutBlob(_)
            | Op::CreateRun(_)
            | Op::SetRun(_)
            | Op::SettleKey { .. }
            | Op::AddUsage { .. }
            | Op::CreateApproval(_)
            | Op::SaveRunbookRun(_)
            | Op::CreateJob(_)
    )
}

/// Whether `op`'s outcome is known without reading in the common case: a blind write, or a
/// journal entry under a key nobody recorded yet. [`blind`] writes a journal entry as if it
/// were new; when the key was taken the statement fails and the caller rolls back and takes
/// the reading path (first writer wins there).
pub(crate) fn is_optimistic(op: &Op) -> bool {
    is_blind(op) || matches!(op, Op::Journal { .. })
}

/// Apply one caller's operations on an open transaction.
pub(crate) async fn apply_batch(
    conn: &mut AnyConnection,
    dialect: Dialect,
    ops: &[Op],
    head: &mut (i64, String),
) -> Result<Vec<Outcome>, AuditError> {
    let mut outcomes = Vec::with_capacity(ops.len());
    let mut i = 0;
    while i < ops.len() {
        let end = ops[i..].iter().position(|op| !is_blind(op)).map_or(ops.len(), |n| i + n);
        if end > i {
            let mut statements = Vec::new();
            outcomes.extend(blind(&mut statements, &ops[i..end], head, now_us()));
            statement::run(conn, dialect, &statements).await?;
            i = end;
        } else if matches!(ops[i], Op::Journal { .. }) {
            let end = ops[i..]
                .iter()
                .position(|op| !matches!(op, Op::Journal { .. }))
                .map_or(ops.len(), |n| i + n);
            outcomes.extend(crate::journal_ops::record(conn, dialect, &ops[i..end], head).await?);
            i = end;
        } else {
            outcomes.push(interactive(conn, dialect, &ops[i], head).await?);
            i += 1;
        }
    }
    Ok(outcomes)
}

/// Append `packet` when a conditional change happened (a change that lost its race leaves
/// nothing in the chain).
pub(super) async fn append_if(
    happened: bool,
    packet: &NewPacket,
    conn: &mut AnyConnection,
    dialect: Dialect,
    head: &mut (i64, String),
    now: i64,
) -> Result<(), AuditError> {
    if happened {
        append(packet, conn, dialect, head, now).await?;
    }
    Ok(())
}

/// Append `packet` on the open transaction, moving `head`.
async fn append(
    packet: &NewPacket,
    conn: &mut AnyConnection,
    dialect: Dialect,
    head: &mut (i64, String),
    now: i64,
) -> Result<(), AuditError> {
    let (statement, _) = crate::chain::append(&[packet], head, now);
    statement::run(conn, dialect, &[statement]).await
}
