//! Stored rows decoded into records.

use serde_json::Value;
use sqlx::Row;
use sqlx::any::AnyRow;

use crate::error::AuditError;
use crate::packet::Packet;
use crate::records::{ApprovalRecord, ApprovalState, KeyRecord, KeyState, RunRecord, RunState};

pub(crate) fn json_column(row: &AnyRow, column: &str) -> Result<Option<Value>, AuditError> {
    let text: Option<String> = row.try_get(column)?;
    text.map(|t| {
        serde_json::from_str(&t).map_err(|e| AuditError::Corrupt(format!("{column}: {e}")))
    })
    .transpose()
}

pub(crate) fn packet_from_row(row: &AnyRow) -> Result<Packet, AuditError> {
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

pub(crate) fn run_from_row(row: &AnyRow) -> Result<RunRecord, AuditError> {
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
        person: row.try_get("person")?,
        definition: row.try_get("definition")?,
        resumed_as: row.try_get("resumed_as")?,
        resumes: row.try_get("resumes")?,
    })
}

pub(crate) fn key_from_row(row: &AnyRow) -> Result<KeyRecord, AuditError> {
    let state: String = row.try_get("state")?;
    Ok(KeyRecord {
        key: row.try_get("key")?,
        state: KeyState::parse(&state)
            .ok_or_else(|| AuditError::Corrupt(format!("key state `{state}`")))?,
        request_id: row.try_get("request_id")?,
        response: json_column(row, "response")?,
    })
}

pub(crate) fn approval_from_row(row: &AnyRow) -> Result<ApprovalRecord, AuditError> {
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
        required: u32::try_from(row.try_get::<i64, _>("required")?).unwrap_or(1).max(1),
        approvers: json_column(row, "approvers")?
            .map(serde_json::from_value)
            .transpose()
            .map_err(|e| AuditError::Corrupt(format!("approvers: {e}")))?
            .unwrap_or_default(),
        created_us: row.try_get("created_us")?,
        decided_us: row.try_get("decided_us")?,
        consumed_us: row.try_get("consumed_us")?,
        clear_request: json_column(row, "clear_request")?,
        request_id: row.try_get("request_id")?,
        note: row.try_get("note")?,
    })
}
