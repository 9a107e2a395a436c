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

use serde_json::Value;
use sqlx::{AnyConnection, Row};

use crate::error::AuditError;
use crate::ops::{Op, Outcome, TokenRefusal};
use crate::packet::{Body, NewPacket};
use crate::records::{ApprovalState, RunRecord, RunState};
use crate::rows::{approval_from_row, key_from_row};
use crate::statement::{self, Arg, Statement};
use crate::store::Dialect;
use crate::time::now_us;

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
                let end = ops[i..].iter().position(|op| !matches!(op, Op::Append(_))).map_or(ops.len(), |n| i + n);
                let packets: Vec<&NewPacket> =
                    ops[i..end].iter().filter_map(|op| if let Op::Append(p) = op { Some(p) } else { None }).collect();
                let (statement, appended) = append(&packets, head, now);
                statements.push(statement);
                for (k, outcome) in appended.into_iter().enumerate() {
                    outcomes[i + k] = Some(outcome);
                }
                i = end;
                continue;
            }
            Op::Journal { .. } => {
                let end = ops[i..].iter().position(|op| !matches!(op, Op::Journal { .. })).map_or(ops.len(), |n| i + n);
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
            Op::PutBlob(blob) => statements.push(
                Statement::new(
                    "INSERT INTO blobs (hash, size, body) VALUES (?, ?, ?) ON CONFLICT (hash) DO NOTHING",
                )
                .arg(&blob.hash)
                .arg(blob.size)
                .arg(blob.body.as_slice()),
            ),
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
            Op::SetRun(update) => statements.push(
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
            Op::SettleKey { key, request_id, state, response } => statements.push(
                Statement::new(
                    "UPDATE idempotency SET state = ?, response = ?, updated_us = ? WHERE key = ? AND request_id = ?",
                )
                .arg(state.as_str())
                .arg(response.as_ref().map(Value::to_string))
                .arg(now)
                .arg(key)
                .arg(request_id),
            ),
            Op::AddUsage { session_id, principal, calls, bytes, wall_ms } => statements.push(
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
            Op::CreateApproval(approval) => statements.push(
                Statement::new(
                    "INSERT INTO approvals (id, request_hash, tool, session_id, principal, request, rule, reason, state, \
                     token_hash, expires_us, decided_by, created_us, decided_us, consumed_us, required, approvers, \
                     clear_request, request_id) \
                     VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'pending', NULL, ?, NULL, ?, NULL, NULL, ?, '[]', ?, ?)",
                )
                .arg(&approval.id)
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
            Op::SaveRunbookRun(run) => statements.push(save_runbook_run(run, now)),
            Op::CreateJob(job) => statements.push(
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
            // `apply_batch` never passes these here.
            Op::ClaimKey { .. }
            | Op::DecideApproval { .. }
            | Op::CloseApproval { .. }
            | Op::SecondApproval { .. }
            | Op::ConsumeApproval { .. }
            | Op::ConsumeApprovedRequest { .. }
            | Op::AbandonRun { .. }
            | Op::MoveJobRun { .. } => {}
        }
        outcomes[i] = Some(Outcome::Done);
        i += 1;
    }
    outcomes.into_iter().map(|o| o.unwrap_or(Outcome::Done)).collect()
}

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

/// Append `packet` when a conditional change happened (a change that lost its race leaves
/// nothing in the chain).
async fn append_if(
    happened: bool,
    packet: &NewPacket,
    conn: &mut AnyConnection,
    dialect: Dialect,
    head: &mut (i64, String),
    now: i64,
) -> Result<(), AuditError> {
    if happened {
        let (statement, _) = append(&[packet], head, now);
        statement::run(conn, dialect, &[statement]).await?;
    }
    Ok(())
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

/// An operation that reads before it writes.
async fn interactive(
    conn: &mut AnyConnection,
    dialect: Dialect,
    op: &Op,
    head: &mut (i64, String),
) -> Result<Outcome, AuditError> {
    let now = now_us();
    match op {
        Op::AbandonRun { request_id, error, packet } => {
            let changed = sqlx::query(
                "UPDATE runs SET state = 'failed', error = $1, updated_us = $2 \
                 WHERE request_id = $3 AND state IN ('created', 'queued', 'running')",
            )
            .bind(error)
            .bind(now)
            .bind(request_id)
            .execute(&mut *conn)
            .await?
            .rows_affected();
            append_if(changed == 1, packet, conn, dialect, head, now).await?;
            Ok(Outcome::Abandoned(changed == 1))
        }
        Op::Journal { .. } => {
            let mut outcomes =
                crate::journal_ops::record(conn, dialect, std::slice::from_ref(op), head).await?;
            Ok(outcomes.pop().unwrap_or(Outcome::Done))
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
        Op::DecideApproval {
            id,
            approve,
            token_hash,
            expires_us,
            decided_by,
            approvers,
            reason,
            packet,
        } => {
            let state = if *approve { ApprovalState::Approved } else { ApprovalState::Denied };
            let approvers = serde_json::to_string(approvers).unwrap_or_else(|_| "[]".to_owned());
            let changed = sqlx::query(
                "UPDATE approvals SET state = $1, token_hash = $2, expires_us = $3, decided_by = $4, decided_us = $5, \
                 approvers = $6, clear_request = NULL, note = $7 WHERE id = $8 AND state = 'pending'",
            )
            .bind(state.as_str())
            .bind(token_hash.as_deref())
            .bind(*expires_us)
            .bind(decided_by.as_deref())
            .bind(now)
            .bind(approvers)
            .bind(reason.as_deref())
            .bind(id)
            .execute(&mut *conn)
            .await?
            .rows_affected();
            if changed == 1 {
                let who = decided_by.as_deref().unwrap_or("a reviewer");
                let (run_state, error) = if *approve {
                    (RunState::Approved, format!("approved by {who}; runs when its caller runs it"))
                } else {
                    let why = reason.as_deref().map(|r| format!(": {r}")).unwrap_or_default();
                    (RunState::Denied, format!("E_POLICY: denied by {who}{why}"))
                };
                end_waiting_run(conn, id, run_state, &error, now).await?;
            }
            append_if(changed == 1, packet.as_ref(), conn, dialect, head, now).await?;
            Ok(Outcome::Decided(changed == 1))
        }
        Op::CloseApproval { id, withdrawn, packet } => {
            let (state, run_state, error) = if *withdrawn {
                (ApprovalState::Withdrawn, RunState::Withdrawn, "withdrawn by its caller")
            } else {
                (ApprovalState::Expired, RunState::Expired, "E_POLICY: nobody decided in time")
            };
            let changed = sqlx::query(
                "UPDATE approvals SET state = $1, decided_us = $2, clear_request = NULL \
                 WHERE id = $3 AND state = 'pending'",
            )
            .bind(state.as_str())
            .bind(now)
            .bind(id)
            .execute(&mut *conn)
            .await?
            .rows_affected();
            if changed == 1 {
                end_waiting_run(conn, id, run_state, error, now).await?;
            }
            append_if(changed == 1, packet.as_ref(), conn, dialect, head, now).await?;
            Ok(Outcome::Closed(changed == 1))
        }
        Op::SecondApproval { id, before, after, packet } => {
            let before = serde_json::to_string(before).unwrap_or_else(|_| "[]".to_owned());
            let after = serde_json::to_string(after).unwrap_or_else(|_| "[]".to_owned());
            let changed = sqlx::query(
                "UPDATE approvals SET approvers = $1 \
                 WHERE id = $2 AND state = 'pending' AND COALESCE(approvers, '[]') = $3",
            )
            .bind(after)
            .bind(id)
            .bind(before)
            .execute(&mut *conn)
            .await?
            .rows_affected();
            append_if(changed == 1, packet.as_ref(), conn, dialect, head, now).await?;
            Ok(Outcome::Decided(changed == 1))
        }
        Op::ConsumeApproval { token_hash, request_hash, by_request } => {
            let row = sqlx::query("SELECT * FROM approvals WHERE token_hash = $1")
                .bind(token_hash)
                .fetch_optional(&mut *conn)
                .await?;
            let Some(row) = row else { return Ok(Outcome::TokenRefused(TokenRefusal::Unknown)) };
            consume(conn, approval_from_row(&row)?, token_hash, request_hash, by_request, now).await
        }
        Op::ConsumeApprovedRequest { request_hash, by_request } => {
            let row = sqlx::query(
                "SELECT * FROM approvals WHERE request_hash = $1 AND state = 'approved' \
                 ORDER BY created_us DESC LIMIT 1",
            )
            .bind(request_hash)
            .fetch_optional(&mut *conn)
            .await?;
            let Some(row) = row else { return Ok(Outcome::TokenRefused(TokenRefusal::Unknown)) };
            let approval = approval_from_row(&row)?;
            let token_hash: Option<String> = row.try_get("token_hash")?;
            let Some(token_hash) = token_hash else {
                return Ok(Outcome::TokenRefused(TokenRefusal::NotInChain));
            };
            consume(conn, approval, &token_hash, request_hash, by_request, now).await
        }
        Op::MoveJobRun { update, packet } => {
            let finishing = update.state.is_some_and(crate::RunState::is_final);
            let response = update.response.as_ref().map(Value::to_string);
            let sql = if finishing {
                "UPDATE runs SET state = COALESCE($1, state), duration_ms = COALESCE($2, duration_ms), \
                 response = COALESCE($3, response), error = COALESCE($4, error), updated_us = $5 \
                 WHERE request_id = $6 AND state IN ('created', 'queued', 'running')"
            } else {
                "UPDATE runs SET state = COALESCE($1, state), duration_ms = COALESCE($2, duration_ms), \
                 response = COALESCE($3, response), error = COALESCE($4, error), updated_us = $5 \
                 WHERE request_id = $6 AND state IN ('created', 'queued')"
            };
            let changed = sqlx::query(sql)
                .bind(update.state.map(|s| s.as_str()))
                .bind(update.duration_ms)
                .bind(response.clone())
                .bind(update.error.clone())
                .bind(now)
                .bind(&update.request_id)
                .execute(&mut *conn)
                .await?
                .rows_affected();
            if changed == 1 {
                let (statement, _) = append(&[packet], head, now);
                statement::run(conn, dialect, &[statement]).await?;
                if finishing {
                    sqlx::query("UPDATE jobs SET open = 0, updated_us = $1 WHERE request_id = $2")
                        .bind(now)
                        .bind(&update.request_id)
                        .execute(&mut *conn)
                        .await?;
                    if let Some(response) = response {
                        sqlx::query(
                            "UPDATE idempotency SET response = $1, updated_us = $2 WHERE request_id = $3",
                        )
                        .bind(response)
                        .bind(now)
                        .bind(&update.request_id)
                        .execute(&mut *conn)
                        .await?;
                    }
                }
            }
            Ok(Outcome::Moved(changed == 1))
        }
        other => Err(AuditError::Commit(format!(
            "internal error: {other:?} is a blind write, not a read-write operation"
        ))),
    }
}

/// Mark `approval` used for the request `request_hash`, when it may be: approved, unexpired,
/// for this request, and decided so in the chain (a forged approvals row has no packet).
async fn consume(
    conn: &mut AnyConnection,
    approval: crate::records::ApprovalRecord,
    token_hash: &str,
    request_hash: &str,
    by_request: &str,
    now: i64,
) -> Result<Outcome, AuditError> {
    let refusal = match approval.state {
        ApprovalState::Consumed => Some(TokenRefusal::Used),
        ApprovalState::Approved if approval.expires_us.is_some_and(|t| t <= now) => {
            Some(TokenRefusal::Expired)
        }
        ApprovalState::Approved if approval.request_hash != *request_hash => {
            Some(TokenRefusal::Mismatch)
        }
        ApprovalState::Approved => None,
        ApprovalState::Pending
        | ApprovalState::Denied
        | ApprovalState::Expired
        | ApprovalState::Withdrawn => Some(TokenRefusal::Unknown),
    };
    if let Some(refusal) = refusal {
        return Ok(Outcome::TokenRefused(refusal));
    }
    if !decided_in_chain(conn, &approval.id, token_hash, request_hash).await? {
        return Ok(Outcome::TokenRefused(TokenRefusal::NotInChain));
    }
    let used = sqlx::query("UPDATE approvals SET state = 'consumed', consumed_us = $1 WHERE id = $2 AND state = 'approved'")
        .bind(now)
        .bind(&approval.id)
        .execute(&mut *conn)
        .await?
        .rows_affected();
    if used != 1 {
        return Ok(Outcome::TokenRefused(TokenRefusal::Used));
    }
    // The waiting run now follows the run that executes it.
    if let Some(waiting) = approval.request_id.as_deref().filter(|w| *w != by_request) {
        sqlx::query(
            "UPDATE runs SET state = 'running', resumed_as = $1, updated_us = $2 \
             WHERE request_id = $3 AND state IN ('pending_approval', 'approved')",
        )
        .bind(by_request)
        .bind(now)
        .bind(waiting)
        .execute(&mut *conn)
        .await?;
    }
    Ok(Outcome::Consumed { approval: approval.id, waiting: approval.request_id })
}

/// End the run waiting for approval `id` as `state`, with `error` saying why — only while it
/// still waits (pending, or approved and not yet run).
async fn end_waiting_run(
    conn: &mut AnyConnection,
    id: &str,
    state: RunState,
    error: &str,
    now: i64,
) -> Result<(), AuditError> {
    sqlx::query(
        "UPDATE runs SET state = $1, error = $2, updated_us = $3 \
         WHERE request_id = (SELECT request_id FROM approvals WHERE id = $4) \
         AND state IN ('pending_approval', 'approved')",
    )
    .bind(state.as_str())
    .bind(error)
    .bind(now)
    .bind(id)
    .execute(&mut *conn)
    .await?;
    Ok(())
}

/// Whether the chain holds an intact `approval.decided` packet approving `id` with this token
/// and request: the approvals table alone is not trusted.
async fn decided_in_chain(
    conn: &mut AnyConnection,
    id: &str,
    token_hash: &str,
    request_hash: &str,
) -> Result<bool, AuditError> {
    // Payloads are canonical JSON (sorted keys, no spaces), so the id appears literally.
    let needle = format!("%\"approval_id\":{}%", serde_json::to_string(id).unwrap_or_default());
    let rows =
        sqlx::query("SELECT * FROM packets WHERE kind = 'approval.decided' AND payload LIKE $1")
            .bind(needle)
            .fetch_all(&mut *conn)
            .await?;
    for row in &rows {
        let packet = crate::rows::packet_from_row(row)?;
        let data = &packet.data;
        if packet.expected_hash() == packet.hash
            && data["approval_id"] == id
            && data["verdict"] == "approved"
            && data["token_hash"] == token_hash
            && data["request_hash"] == request_hash
        {
            return Ok(true);
        }
    }
    Ok(false)
}
