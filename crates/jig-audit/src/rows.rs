//! Stored rows decoded into records.

use serde_json::Value;
use sqlx::Row;
use sqlx::any::AnyRow;

use crate::error::AuditError;
use crate::packet::Packet;
use crate::records::{
    ApiToken, ApprovalRecord, ApprovalState, DesktopGrant, KeyRecord, KeyState, RunRecord,
    RunState, SignIn, WebSession,
};

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
        id: jig_model::ApprovalId::new(row.try_get::<String, _>("id")?),
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

pub(crate) fn sign_in_from_row(row: &AnyRow) -> Result<SignIn, AuditError> {
    Ok(SignIn {
        state: row.try_get("state")?,
        browser: row.try_get("browser")?,
        verifier: row.try_get("verifier")?,
        nonce: row.try_get("nonce")?,
        return_to: row.try_get("return_to")?,
        created_us: row.try_get("created_us")?,
    })
}

pub(crate) fn grant_from_row(row: &AnyRow) -> Result<DesktopGrant, AuditError> {
    Ok(DesktopGrant {
        code_hash: row.try_get("code_hash")?,
        session_hash: row.try_get("session_hash")?,
        challenge: row.try_get("challenge")?,
        redirect_uri: row.try_get("redirect_uri")?,
        created_us: row.try_get("created_us")?,
    })
}

pub(crate) fn session_from_row(row: &AnyRow) -> Result<WebSession, AuditError> {
    Ok(WebSession {
        id_hash: row.try_get("id_hash")?,
        principal: row.try_get("principal")?,
        subject: row.try_get("subject")?,
        issuer: row.try_get("issuer")?,
        claims: json_column(row, "claims")?.unwrap_or(serde_json::Value::Null),
        created_us: row.try_get("created_us")?,
        expires_us: row.try_get("expires_us")?,
        revoked_us: row.try_get("revoked_us")?,
    })
}

pub(crate) fn token_from_row(row: &AnyRow) -> Result<ApiToken, AuditError> {
    Ok(ApiToken {
        id: row.try_get("id")?,
        owner: row.try_get("owner")?,
        name: row.try_get("name")?,
        role: row.try_get("role")?,
        token_hash: row.try_get("token_hash")?,
        created_us: row.try_get("created_us")?,
        last_used_us: row.try_get("last_used_us")?,
        expires_us: row.try_get("expires_us")?,
        revoked_us: row.try_get("revoked_us")?,
        revoked_by: row.try_get("revoked_by")?,
    })
}
