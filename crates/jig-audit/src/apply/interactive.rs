//! Operations that read before they write, executed one by one: claiming a key, deciding,
//! closing, seconding or consuming an approval, abandoning a run, moving a job's run. Each
//! change is conditional on what it reads, and its packet is appended only when it happened.

use serde_json::Value;
use sqlx::{AnyConnection, Row};

use super::append_if;
use crate::chain::append;
use crate::dialect::Dialect;
use crate::error::AuditError;
use crate::ops::{Op, Outcome, RunUpdate, TokenRefusal};
use crate::packet::NewPacket;
use crate::records::{ApprovalState, RunState};
use crate::rows::{approval_from_row, key_from_row};
use crate::statement;
use crate::time::now_us;

/// An operation that reads before it writes.
pub(super) async fn interactive(
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
        Op::ClaimKey { key, request_id } => claim_key(conn, key, request_id, now).await,
        Op::DecideApproval { .. } => decide_approval(conn, dialect, op, head, now).await,
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
            move_job_run(conn, dialect, update, packet, head, now).await
        }
        Op::People(op) => {
            super::people::apply(conn, dialect, op, head, now).await.map(Outcome::People)
        }
        other => Err(AuditError::Commit(format!(
            "internal error: {other:?} is a blind write, not a read-write operation"
        ))),
    }
}

/// Claim idempotency key `key` for `request_id`: taken when free, or when its holder died
/// without a response; else the key as it stands.
async fn claim_key(
    conn: &mut AnyConnection,
    key: &str,
    request_id: &str,
    now: i64,
) -> Result<Outcome, AuditError> {
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

/// Decide a pending approval (conditional on it still pending), ending the run that waits for
/// it when denied, and record the decision's packet only when it happened.
async fn decide_approval(
    conn: &mut AnyConnection,
    dialect: Dialect,
    op: &Op,
    head: &mut (i64, String),
    now: i64,
) -> Result<Outcome, AuditError> {
    let Op::DecideApproval {
        id,
        approve,
        token_hash,
        expires_us,
        decided_by,
        approvers,
        reason,
        packet,
    } = op
    else {
        return Err(AuditError::Commit(format!("internal error: {op:?} is not a decision")));
    };
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

/// Move a scheduler job's run on (conditional on where it stands), with its packet; a run
/// that finishes closes its job and gives its idempotency key the response.
async fn move_job_run(
    conn: &mut AnyConnection,
    dialect: Dialect,
    update: &RunUpdate,
    packet: &NewPacket,
    head: &mut (i64, String),
    now: i64,
) -> Result<Outcome, AuditError> {
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
    if !decided_in_chain(conn, approval.id.as_str(), token_hash, request_hash).await? {
        return Ok(Outcome::TokenRefused(TokenRefusal::NotInChain));
    }
    let used = sqlx::query("UPDATE approvals SET state = 'consumed', consumed_us = $1 WHERE id = $2 AND state = 'approved'")
        .bind(now)
        .bind(approval.id.as_str())
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
        if packet.expected_hash() == packet.hash
            && packet.approval_decided().is_some_and(|d| d.grants(id, token_hash, request_hash))
        {
            return Ok(true);
        }
    }
    Ok(false)
}
