//! Blind operations — their outcome is known without reading anything back — turned into
//! statements executed together: consecutive packets in one multi-row INSERT, a run created in
//! the batch inserted with the updates that follow it, consecutive journal entries together.

use serde_json::Value;

use crate::chain::append;
use crate::ops::{Op, Outcome};
use crate::packet::NewPacket;
use crate::records::RunRecord;
use crate::statement::Statement;

/// Statements for blind operations, appended to `statements`; returns their outcomes.
pub(crate) fn blind(
    statements: &mut Vec<Statement>,
    ops: &[Op],
    head: &mut (i64, String),
    now: i64,
) -> Vec<Outcome> {
    let mut outcomes: Vec<Option<Outcome>> = vec![None; ops.len()];
    let mut i = 0;
    while i < ops.len() {
        if outcomes[i].is_some() {
            i += 1;
            continue;
        }
        match &ops[i] {
            Op::Append(_) => {
                let end = ops[i..]
                    .iter()
                    .position(|op| !matches!(op, Op::Append(_)))
                    .map_or(ops.len(), |n| i + n);
                let packets: Vec<&NewPacket> = ops[i..end]
                    .iter()
                    .filter_map(|op| if let Op::Append(p) = op { Some(p) } else { None })
                    .collect();
                let (statement, appended) = append(&packets, head, now);
                statements.push(statement);
                for (k, outcome) in appended.into_iter().enumerate() {
                    outcomes[i + k] = Some(outcome);
                }
                i = end;
                continue;
            }
            Op::Journal { .. } => {
                let end = ops[i..]
                    .iter()
                    .position(|op| !matches!(op, Op::Journal { .. }))
                    .map_or(ops.len(), |n| i + n);
                let (insert, seals, recorded) = crate::journal_ops::insert_new(&ops[i..end], now);
                statements.push(insert);
                let seals: Vec<&NewPacket> = seals.iter().collect();
                statements.push(append(&seals, head, now).0);
                for (k, outcome) in recorded.into_iter().enumerate() {
                    outcomes[i + k] = Some(outcome);
                }
                i = end;
                continue;
            }
            Op::CreateRun(run) => {
                let mut run = (**run).clone();
                for (k, later) in ops.iter().enumerate().skip(i + 1) {
                    if let Op::SetRun(update) = later
                        && update.request_id == run.request_id
                    {
                        run.apply(update);
                        outcomes[k] = Some(Outcome::Done);
                    }
                }
                statements.push(create_run(&run, now));
            }
            op => {
                if let Some(statement) = statement_of(op, now) {
                    statements.push(statement);
                }
            }
        }
        outcomes[i] = Some(Outcome::Done);
        i += 1;
    }
    outcomes.into_iter().map(|o| o.unwrap_or(Outcome::Done)).collect()
}

/// The one statement of a blind operation that needs no folding with its neighbours.
fn statement_of(op: &Op, now: i64) -> Option<Statement> {
    match op {
        Op::PutBlob(blob) => Some(
            Statement::new(
                "INSERT INTO blobs (hash, size, body) VALUES (?, ?, ?) ON CONFLICT (hash) DO NOTHING",
            )
            .arg(&blob.hash)
            .arg(blob.size)
            .arg(blob.body.as_slice()),
        ),
        Op::SetRun(update) => Some(
            Statement::new(
                "UPDATE runs SET state = COALESCE(?, state), rule = COALESCE(?, rule), \
                 duration_ms = COALESCE(?, duration_ms), response = COALESCE(?, response), \
                 error = COALESCE(?, error), replayed_from = COALESCE(?, replayed_from), \
                 resumes = COALESCE(?, resumes), updated_us = ? \
                 WHERE request_id = ?",
            )
            .arg(update.state.map(|s| s.as_str()))
            .arg(update.rule.as_deref())
            .arg(update.duration_ms)
            .arg(update.response.as_ref().map(Value::to_string))
            .arg(update.error.as_deref())
            .arg(update.replayed_from.as_deref())
            .arg(update.resumes.as_deref())
            .arg(now)
            .arg(&update.request_id),
        ),
        Op::SettleKey { key, request_id, state, response } => Some(
            Statement::new(
                "UPDATE idempotency SET state = ?, response = ?, updated_us = ? WHERE key = ? AND request_id = ?",
            )
            .arg(state.as_str())
            .arg(response.as_ref().map(Value::to_string))
            .arg(now)
            .arg(key)
            .arg(request_id),
        ),
        Op::AddUsage { session_id, principal, calls, bytes, wall_ms } => Some(
            Statement::new(
                "INSERT INTO sessions (id, principal, created_us, calls, bytes, wall_ms) VALUES (?, ?, ?, ?, ?, ?) \
                 ON CONFLICT (id) DO UPDATE SET calls = sessions.calls + excluded.calls, \
                 bytes = sessions.bytes + excluded.bytes, wall_ms = sessions.wall_ms + excluded.wall_ms",
            )
            .arg(session_id)
            .arg(principal.as_deref())
            .arg(now)
            .arg(*calls)
            .arg(*bytes)
            .arg(*wall_ms),
        ),
        Op::CreateApproval(approval) => Some(
            Statement::new(
                "INSERT INTO approvals (id, request_hash, tool, session_id, principal, request, rule, reason, state, \
                 token_hash, expires_us, decided_by, created_us, decided_us, consumed_us, required, approvers, \
                 clear_request, request_id) \
                 VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'pending', NULL, ?, NULL, ?, NULL, NULL, ?, '[]', ?, ?)",
            )
            .arg(approval.id.as_str())
            .arg(&approval.request_hash)
            .arg(&approval.tool)
            .arg(approval.session_id.as_deref())
            .arg(approval.principal.as_deref())
            .arg(approval.request.to_string())
            .arg(&approval.rule)
            .arg(&approval.reason)
            .arg(approval.expires_us)
            .arg(now)
            .arg(i64::from(approval.required.max(1)))
            .arg(approval.clear_request.as_ref().map(Value::to_string))
            .arg(approval.request_id.as_deref()),
        ),
        Op::SaveRunbookRun(run) => Some(save_runbook_run(run, now)),
        Op::CreateJob(job) => Some(
            Statement::new(
                "INSERT INTO jobs (request_id, engine, handle, dir, tool, open, created_us, updated_us) \
                 VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            )
            .arg(&job.request_id)
            .arg(&job.engine)
            .arg(&job.handle)
            .arg(&job.dir)
            .arg(job.tool.to_string())
            .arg(i64::from(job.open))
            .arg(now)
            .arg(now),
        ),
        // Folded by `blind`, or never passed here by `apply_batch`.
        _ => None,
    }
}

fn create_run(run: &RunRecord, now: i64) -> Statement {
    Statement::new(
        "INSERT INTO runs (request_id, run_id, tool, version, session_id, thread_id, principal, params_hash, \
         policy_hash, deterministic, state, rule, created_us, updated_us, duration_ms, response, error, \
         replayed_from, owner, deadline_us, person, definition) \
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
    )
    .arg(&run.request_id)
    .arg(&run.run_id)
    .arg(&run.tool)
    .arg(&run.version)
    .arg(run.session_id.as_deref())
    .arg(run.thread_id.as_deref())
    .arg(run.principal.as_deref())
    .arg(&run.params_hash)
    .arg(&run.policy_hash)
    .arg(i64::from(run.deterministic))
    .arg(run.state.as_str())
    .arg(run.rule.as_deref())
    .arg(now)
    .arg(now)
    .arg(run.duration_ms)
    .arg(run.response.as_ref().map(Value::to_string))
    .arg(run.error.as_deref())
    .arg(run.replayed_from.as_deref())
    .arg(run.owner.as_deref())
    .arg(run.deadline_us)
    .arg(run.person.as_deref())
    .arg(run.definition.as_deref())
}

/// Insert a runbook run's row, or move it on.
fn save_runbook_run(run: &crate::records::RunbookRunRecord, now: i64) -> Statement {
    Statement::new(
        "INSERT INTO runbook_runs (id, runbook, hash, status, started_by, created_us, updated_us, summary) \
         VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO UPDATE SET status = excluded.status, \
         updated_us = excluded.updated_us, summary = excluded.summary",
    )
    .arg(&run.id)
    .arg(&run.runbook)
    .arg(&run.hash)
    .arg(&run.status)
    .arg(run.started_by.as_deref())
    .arg(now)
    .arg(now)
    .arg(run.summary.as_ref().map(Value::to_string))
}
