//! Appending to the chain: packets in one INSERT, each hashed over the one before it. The one
//! place a packet's hash is made on the way in; every path that writes packets (a run of blind
//! writes, a conditional change, a runbook's journal) builds its INSERT here.

use crate::ops::Outcome;
use crate::packet::{Body, NewPacket};
use crate::statement::{Arg, Statement};

/// Packets in one INSERT, each chained to the one before.
pub(crate) fn append(
    packets: &[&NewPacket],
    head: &mut (i64, String),
    now: i64,
) -> (Statement, Vec<Outcome>) {
    let mut statement = Statement::new(
        "INSERT INTO packets (seq, kind, ts_us, session_id, thread_id, principal, request_id, run_id, tool, \
         args_hash, payload, prev_hash, hash) VALUES ",
    );
    let mut outcomes = Vec::with_capacity(packets.len());
    for (i, packet) in packets.iter().enumerate() {
        let seq = head.0 + 1;
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
        let row: [Arg; 13] = [
            seq.into(),
            packet.kind.as_str().into(),
            now.into(),
            packet.session_id.as_deref().into(),
            packet.thread_id.as_deref().into(),
            packet.principal.as_deref().into(),
            packet.request_id.as_deref().into(),
            packet.run_id.as_deref().into(),
            packet.tool.as_deref().into(),
            packet.args_hash.as_deref().into(),
            jig_model::canonical::canonical_json(&packet.data).into(),
            (&head.1).into(),
            (&hash).into(),
        ];
        let separator = if i == 0 { "" } else { ", " };
        statement.push(&format!("{separator}(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"), row);
        *head = (seq, hash.clone());
        outcomes.push(Outcome::Appended { seq, hash });
    }
    (statement, outcomes)
}
