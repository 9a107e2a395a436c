//! Changes to people's state, applied by the store's writer like every other write: in its
//! transaction, on its connection, so a token's change and the packet that records it commit
//! together or not at all, and a bounded table's count and its insert are not interleaved with
//! another caller's.

use sqlx::AnyConnection;

use super::append;
use crate::dialect::Dialect;
use crate::error::AuditError;
use crate::ops::{PeopleOp, PeopleOutcome};
use crate::packet::{NewPacket, PacketKind};
use crate::payload::TokenChanged;
use crate::records::{ApiToken, DesktopGrant, SignIn, WebSession};
use crate::rows::{grant_from_row, sign_in_from_row, token_from_row};

/// Apply `op` on the writer's open transaction; `head` moves with any packet appended.
pub(super) async fn apply(
    conn: &mut AnyConnection,
    dialect: Dialect,
    op: &PeopleOp,
    head: &mut (i64, String),
    now: i64,
) -> Result<PeopleOutcome, AuditError> {
    match op {
        PeopleOp::BeginSignIn { sign_in, since_us, most } => {
            begin_sign_in(conn, sign_in, *since_us, *most).await
        }
        PeopleOp::TakeSignIn { state, since_us } => {
            SIGN_INS.drop_older(conn, *since_us).await?;
            let row = sqlx::query("DELETE FROM sign_ins WHERE state = $1 RETURNING *")
                .bind(state)
                .fetch_optional(&mut *conn)
                .await?;
            Ok(PeopleOutcome::SignIn(row.as_ref().map(sign_in_from_row).transpose()?))
        }
        PeopleOp::GrantDesktop { grant, since_us, most } => {
            grant_desktop(conn, grant, *since_us, *most).await
        }
        PeopleOp::TakeDesktopGrant { code_hash, since_us } => {
            GRANTS.drop_older(conn, *since_us).await?;
            let row = sqlx::query("DELETE FROM desktop_grants WHERE code_hash = $1 RETURNING *")
                .bind(code_hash)
                .fetch_optional(&mut *conn)
                .await?;
            Ok(PeopleOutcome::Grant(row.as_ref().map(grant_from_row).transpose()?))
        }
        PeopleOp::CreateWebSession(session) => create_web_session(conn, session).await,
        PeopleOp::RevokeWebSession { id_hash, now_us } => {
            let changed = revoke_sessions(conn, SIGN_OUT_ONE, id_hash, *now_us).await?;
            Ok(PeopleOutcome::Changed(changed == 1))
        }
        PeopleOp::RevokeWebSessionsOf { principal, now_us } => {
            Ok(PeopleOutcome::Count(revoke_sessions(conn, SIGN_OUT_ALL, principal, *now_us).await?))
        }
        PeopleOp::MintToken(token) => {
            mint_token(conn, token).await?;
            let packet = token_packet(PacketKind::TokenMinted, token, &token.owner, None);
            append(&packet, conn, dialect, head, now).await?;
            Ok(PeopleOutcome::Changed(true))
        }
        PeopleOp::UseToken { token_hash, now_us } => {
            let changed = sqlx::query(
                "UPDATE api_tokens SET last_used_us = $1 WHERE token_hash = $2 \
                 AND revoked_us IS NULL",
            )
            .bind(now_us)
            .bind(token_hash)
            .execute(&mut *conn)
            .await?
            .rows_affected();
            Ok(PeopleOutcome::Changed(changed == 1))
        }
        PeopleOp::RevokeToken { owner, id, by, now_us } => {
            let token = revoke_token(conn, owner.as_deref(), id, by, *now_us).await?;
            let tokens: Vec<ApiToken> = token.into_iter().collect();
            record_revoked(conn, dialect, head, now, &tokens, by, None).await?;
            Ok(PeopleOutcome::Tokens(tokens))
        }
        PeopleOp::RevokeTokensOf { owner, by, reason, now_us } => {
            let rows = sqlx::query(
                "UPDATE api_tokens SET revoked_us = $1, revoked_by = $2 WHERE owner = $3 \
                 AND revoked_us IS NULL RETURNING *",
            )
            .bind(now_us)
            .bind(by)
            .bind(owner)
            .fetch_all(&mut *conn)
            .await?;
            let tokens = rows.iter().map(token_from_row).collect::<Result<Vec<_>, _>>()?;
            record_revoked(conn, dialect, head, now, &tokens, by, reason.as_deref()).await?;
            Ok(PeopleOutcome::Tokens(tokens))
        }
    }
}

/// Sign out the browser of a cookie's hash.
const SIGN_OUT_ONE: &str =
    "UPDATE web_sessions SET revoked_us = $1 WHERE id_hash = $2 AND revoked_us IS NULL";
/// Sign out every browser of a person.
const SIGN_OUT_ALL: &str =
    "UPDATE web_sessions SET revoked_us = $1 WHERE principal = $2 AND revoked_us IS NULL";

/// Sign browsers out, as `statement` (one of the two above) picks them by `key`.
async fn revoke_sessions(
    conn: &mut AnyConnection,
    statement: &'static str,
    key: &str,
    now_us: i64,
) -> Result<u64, AuditError> {
    let changed = sqlx::query(statement).bind(now_us).bind(key).execute(&mut *conn).await?;
    Ok(changed.rows_affected())
}

/// The sign-ins under way: made before a time, they have ended.
const SIGN_INS: OneTime = OneTime {
    old: "DELETE FROM sign_ins WHERE created_us < $1",
    count: "SELECT COUNT(*) FROM sign_ins",
};
/// The desktop grants outstanding: made before a time, they have ended.
const GRANTS: OneTime = OneTime {
    old: "DELETE FROM desktop_grants WHERE created_us < $1",
    count: "SELECT COUNT(*) FROM desktop_grants",
};

/// A table of one-time things (sign-ins, grants) that anyone may start, so bounded in number.
struct OneTime {
    old: &'static str,
    count: &'static str,
}

impl OneTime {
    /// Drop those made before `since_us`.
    async fn drop_older(&self, conn: &mut AnyConnection, since_us: i64) -> Result<(), AuditError> {
        sqlx::query(self.old).bind(since_us).execute(&mut *conn).await?;
        Ok(())
    }

    /// Whether one more fits beside those made since `since_us` (the older ones dropped).
    async fn has_room(
        &self,
        conn: &mut AnyConnection,
        since_us: i64,
        most: i64,
    ) -> Result<bool, AuditError> {
        self.drop_older(conn, since_us).await?;
        let live: i64 = sqlx::query_scalar(self.count).fetch_one(&mut *conn).await?;
        Ok(live < most)
    }
}

async fn begin_sign_in(
    conn: &mut AnyConnection,
    sign_in: &SignIn,
    since_us: i64,
    most: i64,
) -> Result<PeopleOutcome, AuditError> {
    if !SIGN_INS.has_room(conn, since_us, most).await? {
        return Ok(PeopleOutcome::Changed(false));
    }
    sqlx::query(
        "INSERT INTO sign_ins (state, browser, verifier, nonce, return_to, created_us) \
         VALUES ($1, $2, $3, $4, $5, $6)",
    )
    .bind(&sign_in.state)
    .bind(&sign_in.browser)
    .bind(&sign_in.verifier)
    .bind(&sign_in.nonce)
    .bind(&sign_in.return_to)
    .bind(sign_in.created_us)
    .execute(&mut *conn)
    .await?;
    Ok(PeopleOutcome::Changed(true))
}

async fn grant_desktop(
    conn: &mut AnyConnection,
    grant: &DesktopGrant,
    since_us: i64,
    most: i64,
) -> Result<PeopleOutcome, AuditError> {
    if !GRANTS.has_room(conn, since_us, most).await? {
        return Ok(PeopleOutcome::Changed(false));
    }
    sqlx::query(
        "INSERT INTO desktop_grants (code_hash, session_hash, challenge, redirect_uri, \
         created_us) VALUES ($1, $2, $3, $4, $5)",
    )
    .bind(&grant.code_hash)
    .bind(&grant.session_hash)
    .bind(&grant.challenge)
    .bind(&grant.redirect_uri)
    .bind(grant.created_us)
    .execute(&mut *conn)
    .await?;
    Ok(PeopleOutcome::Changed(true))
}

async fn create_web_session(
    conn: &mut AnyConnection,
    session: &WebSession,
) -> Result<PeopleOutcome, AuditError> {
    sqlx::query(
        "INSERT INTO web_sessions (id_hash, principal, subject, issuer, claims, created_us, \
         expires_us, revoked_us) VALUES ($1, $2, $3, $4, $5, $6, $7, NULL)",
    )
    .bind(&session.id_hash)
    .bind(&session.principal)
    .bind(&session.subject)
    .bind(&session.issuer)
    .bind(session.claims.to_string())
    .bind(session.created_us)
    .bind(session.expires_us)
    .execute(&mut *conn)
    .await?;
    Ok(PeopleOutcome::Changed(true))
}

async fn mint_token(conn: &mut AnyConnection, token: &ApiToken) -> Result<(), AuditError> {
    sqlx::query(
        "INSERT INTO api_tokens (id, owner, name, role, token_hash, created_us, last_used_us, \
         revoked_us, expires_us) VALUES ($1, $2, $3, $4, $5, $6, NULL, NULL, $7)",
    )
    .bind(&token.id)
    .bind(&token.owner)
    .bind(&token.name)
    .bind(&token.role)
    .bind(&token.token_hash)
    .bind(token.created_us)
    .bind(token.expires_us)
    .execute(&mut *conn)
    .await?;
    Ok(())
}

async fn revoke_token(
    conn: &mut AnyConnection,
    owner: Option<&str>,
    id: &str,
    by: &str,
    now_us: i64,
) -> Result<Option<ApiToken>, AuditError> {
    // Two statements rather than `$4 IS NULL OR owner = $4`: PostgreSQL cannot type a
    // parameter that is only ever compared with NULL.
    let row = match owner {
        Some(owner) => {
            sqlx::query(
                "UPDATE api_tokens SET revoked_us = $1, revoked_by = $2 WHERE id = $3 \
                 AND owner = $4 AND revoked_us IS NULL RETURNING *",
            )
            .bind(now_us)
            .bind(by)
            .bind(id)
            .bind(owner)
            .fetch_optional(&mut *conn)
            .await?
        }
        None => {
            sqlx::query(
                "UPDATE api_tokens SET revoked_us = $1, revoked_by = $2 WHERE id = $3 \
                 AND revoked_us IS NULL RETURNING *",
            )
            .bind(now_us)
            .bind(by)
            .bind(id)
            .fetch_optional(&mut *conn)
            .await?
        }
    };
    row.as_ref().map(token_from_row).transpose()
}

/// Append a `token.revoked` packet for each of `tokens`, by `by`.
async fn record_revoked(
    conn: &mut AnyConnection,
    dialect: Dialect,
    head: &mut (i64, String),
    now: i64,
    tokens: &[ApiToken],
    by: &str,
    reason: Option<&str>,
) -> Result<(), AuditError> {
    for token in tokens {
        let packet = token_packet(PacketKind::TokenRevoked, token, by, reason);
        append(&packet, conn, dialect, head, now).await?;
    }
    Ok(())
}

/// The packet of a token's `kind` of change, by `by` (never the token or its hash).
fn token_packet(kind: PacketKind, token: &ApiToken, by: &str, why: Option<&str>) -> NewPacket {
    let revoked = kind == PacketKind::TokenRevoked;
    let change = TokenChanged {
        token_id: token.id.clone(),
        name: token.name.clone(),
        owner: token.owner.clone(),
        role: token.role.clone(),
        expires_us: token.expires_us,
        by: revoked.then(|| by.to_owned()),
        reason: why.filter(|_| revoked).map(str::to_owned),
    };
    NewPacket {
        kind,
        session_id: None,
        thread_id: None,
        principal: Some(by.to_owned()),
        request_id: None,
        run_id: None,
        tool: None,
        args_hash: None,
        data: change.to_data(),
    }
}
