//! Who is signed in, kept in the store so that every `jig serve` instance on it knows: sign-ins
//! under way, browser sessions, personal API tokens. These are not the audit (no packets):
//! they say who may act; what they do is recorded as ever. Only hashes of cookies and tokens
//! are stored.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use sqlx::Row;
use sqlx::any::AnyRow;

use crate::error::AuditError;
use crate::rows::json_column;
use crate::store::Store;

/// A sign-in under way (the provider sends the browser back with `state`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SignIn {
    /// The OAuth `state`.
    pub state: String,
    /// SHA-256 of the cookie of the browser that started it.
    pub browser: String,
    /// The PKCE verifier.
    pub verifier: String,
    /// The OpenID nonce.
    pub nonce: String,
    /// Where to go once signed in (a path of this server).
    pub return_to: String,
    /// When it started (µs).
    pub created_us: i64,
}

/// A signed-in browser.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WebSession {
    /// SHA-256 of its cookie.
    pub id_hash: String,
    /// The principal recorded for what it does.
    pub principal: String,
    /// The provider's subject.
    pub subject: String,
    /// The provider.
    pub issuer: String,
    /// The verified ID token's claims (the role is worked out from them).
    pub claims: Value,
    /// When it was made (µs).
    pub created_us: i64,
    /// When it ends (µs).
    pub expires_us: i64,
    /// When it was signed out, if it was.
    pub revoked_us: Option<i64>,
}

/// A desktop app allowed to sign in (its one-time code not yet traded for a session).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DesktopGrant {
    /// SHA-256 of the one-time code.
    pub code_hash: String,
    /// The browser session that allowed it (the app's session is its person's).
    pub session_hash: String,
    /// The PKCE challenge (S256) the app sent: only the holder of its verifier trades the code.
    pub challenge: String,
    /// The app's loopback address the code was sent to.
    pub redirect_uri: String,
    /// When it was allowed (µs).
    pub created_us: i64,
}

/// A personal API token.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ApiToken {
    /// Its id (shown; the token itself never is, after it is made).
    pub id: String,
    /// Whose it is.
    pub owner: String,
    /// What its owner calls it.
    pub name: String,
    /// What it may do (`viewer`, `runner`, `approver`, `admin`): at most its owner's role.
    pub role: String,
    /// SHA-256 of the token.
    #[serde(skip)]
    pub token_hash: String,
    /// When it was made (µs).
    pub created_us: i64,
    /// When it was last used (µs).
    pub last_used_us: Option<i64>,
    /// When it stops working (µs).
    pub expires_us: Option<i64>,
    /// When it was revoked.
    pub revoked_us: Option<i64>,
    /// Who revoked it: its owner, an admin, or `sign-in` (its owner's sign-in was refused).
    pub revoked_by: Option<String>,
}

impl Store {
    /// Record a sign-in under way, dropping those started before `since_us`; `false` (nothing
    /// recorded) when `most` are under way already — anyone may start one, so their number is
    /// bounded.
    pub async fn begin_sign_in(
        &self,
        sign_in: &SignIn,
        since_us: i64,
        most: i64,
    ) -> Result<bool, AuditError> {
        sqlx::query("DELETE FROM sign_ins WHERE created_us < $1")
            .bind(since_us)
            .execute(self.pool())
            .await?;
        let under_way: i64 =
            sqlx::query_scalar("SELECT COUNT(*) FROM sign_ins").fetch_one(self.pool()).await?;
        if under_way >= most {
            return Ok(false);
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
        .execute(self.pool())
        .await?;
        Ok(true)
    }

    /// Take the sign-in `state` (once: a second callback with the same state finds nothing),
    /// if it started after `since_us`; older ones are dropped on the way.
    pub async fn take_sign_in(
        &self,
        state: &str,
        since_us: i64,
    ) -> Result<Option<SignIn>, AuditError> {
        sqlx::query("DELETE FROM sign_ins WHERE created_us < $1")
            .bind(since_us)
            .execute(self.pool())
            .await?;
        let row = sqlx::query("DELETE FROM sign_ins WHERE state = $1 RETURNING *")
            .bind(state)
            .fetch_optional(self.pool())
            .await?;
        row.map(|row| {
            Ok(SignIn {
                state: row.try_get("state")?,
                browser: row.try_get("browser")?,
                verifier: row.try_get("verifier")?,
                nonce: row.try_get("nonce")?,
                return_to: row.try_get("return_to")?,
                created_us: row.try_get("created_us")?,
            })
        })
        .transpose()
    }

    /// Record a desktop app's grant, dropping those made before `since_us`; `false` (nothing
    /// recorded) when `most` are outstanding.
    pub async fn grant_desktop(
        &self,
        grant: &DesktopGrant,
        since_us: i64,
        most: i64,
    ) -> Result<bool, AuditError> {
        sqlx::query("DELETE FROM desktop_grants WHERE created_us < $1")
            .bind(since_us)
            .execute(self.pool())
            .await?;
        let outstanding: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM desktop_grants")
            .fetch_one(self.pool())
            .await?;
        if outstanding >= most {
            return Ok(false);
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
        .execute(self.pool())
        .await?;
        Ok(true)
    }

    /// Take the grant of the code whose hash is `code_hash` (once: a replayed code finds
    /// nothing), if it was made after `since_us`.
    pub async fn take_desktop_grant(
        &self,
        code_hash: &str,
        since_us: i64,
    ) -> Result<Option<DesktopGrant>, AuditError> {
        sqlx::query("DELETE FROM desktop_grants WHERE created_us < $1")
            .bind(since_us)
            .execute(self.pool())
            .await?;
        let row = sqlx::query("DELETE FROM desktop_grants WHERE code_hash = $1 RETURNING *")
            .bind(code_hash)
            .fetch_optional(self.pool())
            .await?;
        row.map(|row| {
            Ok(DesktopGrant {
                code_hash: row.try_get("code_hash")?,
                session_hash: row.try_get("session_hash")?,
                challenge: row.try_get("challenge")?,
                redirect_uri: row.try_get("redirect_uri")?,
                created_us: row.try_get("created_us")?,
            })
        })
        .transpose()
    }

    /// Record a signed-in browser.
    pub async fn create_web_session(&self, session: &WebSession) -> Result<(), AuditError> {
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
        .execute(self.pool())
        .await?;
        Ok(())
    }

    /// The session of the cookie whose hash is `id_hash`, if it is live at `now_us`.
    pub async fn web_session(
        &self,
        id_hash: &str,
        now_us: i64,
    ) -> Result<Option<WebSession>, AuditError> {
        let row = sqlx::query(
            "SELECT * FROM web_sessions WHERE id_hash = $1 AND revoked_us IS NULL AND expires_us > $2",
        )
        .bind(id_hash)
        .bind(now_us)
        .fetch_optional(self.pool())
        .await?;
        row.as_ref().map(session_from_row).transpose()
    }

    /// The latest live session of `principal` (whose claims bound their tokens' roles).
    pub async fn latest_web_session(
        &self,
        principal: &str,
        now_us: i64,
    ) -> Result<Option<WebSession>, AuditError> {
        let row = sqlx::query(
            "SELECT * FROM web_sessions WHERE principal = $1 AND revoked_us IS NULL \
             AND expires_us > $2 ORDER BY created_us DESC LIMIT 1",
        )
        .bind(principal)
        .bind(now_us)
        .fetch_optional(self.pool())
        .await?;
        row.as_ref().map(session_from_row).transpose()
    }

    /// Sign the session out, everywhere. `false` when it was not live.
    pub async fn revoke_web_session(&self, id_hash: &str, now_us: i64) -> Result<bool, AuditError> {
        let changed = sqlx::query(
            "UPDATE web_sessions SET revoked_us = $1 WHERE id_hash = $2 AND revoked_us IS NULL",
        )
        .bind(now_us)
        .bind(id_hash)
        .execute(self.pool())
        .await?
        .rows_affected();
        Ok(changed == 1)
    }

    /// Record a personal token.
    pub async fn create_api_token(&self, token: &ApiToken) -> Result<(), AuditError> {
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
        .execute(self.pool())
        .await?;
        Ok(())
    }

    /// The live token whose hash is `token_hash` (not revoked, not past its end), marked used
    /// at `now_us`.
    pub async fn use_api_token(
        &self,
        token_hash: &str,
        now_us: i64,
    ) -> Result<Option<ApiToken>, AuditError> {
        let row = sqlx::query(
            "UPDATE api_tokens SET last_used_us = $1 WHERE token_hash = $2 AND revoked_us IS NULL \
             AND (expires_us IS NULL OR expires_us > $1) RETURNING *",
        )
        .bind(now_us)
        .bind(token_hash)
        .fetch_optional(self.pool())
        .await?;
        row.as_ref().map(token_from_row).transpose()
    }

    /// `owner`'s tokens, newest first (revoked ones too).
    pub async fn api_tokens(&self, owner: &str) -> Result<Vec<ApiToken>, AuditError> {
        let rows =
            sqlx::query("SELECT * FROM api_tokens WHERE owner = $1 ORDER BY created_us DESC")
                .bind(owner)
                .fetch_all(self.pool())
                .await?;
        rows.iter().map(token_from_row).collect()
    }

    /// Every person's tokens, newest first (revoked and expired ones too): for admins.
    pub async fn all_api_tokens(&self) -> Result<Vec<ApiToken>, AuditError> {
        let rows = sqlx::query("SELECT * FROM api_tokens ORDER BY created_us DESC")
            .fetch_all(self.pool())
            .await?;
        rows.iter().map(token_from_row).collect()
    }

    /// Revoke token `id` — only if it is `owner`'s, when `owner` is given (an admin revokes
    /// anyone's) — as `by`. The token as it was, or `None` when there is no live one.
    pub async fn revoke_api_token(
        &self,
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
                .fetch_optional(self.pool())
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
                .fetch_optional(self.pool())
                .await?
            }
        };
        row.as_ref().map(token_from_row).transpose()
    }

    /// Revoke every live token of `owner` as `by` (their sign-in was refused): the tokens
    /// revoked.
    pub async fn revoke_api_tokens_of(
        &self,
        owner: &str,
        by: &str,
        now_us: i64,
    ) -> Result<Vec<ApiToken>, AuditError> {
        let rows = sqlx::query(
            "UPDATE api_tokens SET revoked_us = $1, revoked_by = $2 WHERE owner = $3 \
             AND revoked_us IS NULL RETURNING *",
        )
        .bind(now_us)
        .bind(by)
        .bind(owner)
        .fetch_all(self.pool())
        .await?;
        rows.iter().map(token_from_row).collect()
    }

    /// Sign every live session of `principal` out (their sign-in was refused).
    pub async fn revoke_web_sessions_of(
        &self,
        principal: &str,
        now_us: i64,
    ) -> Result<u64, AuditError> {
        Ok(sqlx::query(
            "UPDATE web_sessions SET revoked_us = $1 WHERE principal = $2 AND revoked_us IS NULL",
        )
        .bind(now_us)
        .bind(principal)
        .execute(self.pool())
        .await?
        .rows_affected())
    }
}

fn session_from_row(row: &AnyRow) -> Result<WebSession, AuditError> {
    Ok(WebSession {
        id_hash: row.try_get("id_hash")?,
        principal: row.try_get("principal")?,
        subject: row.try_get("subject")?,
        issuer: row.try_get("issuer")?,
        claims: json_column(row, "claims")?.unwrap_or(Value::Null),
        created_us: row.try_get("created_us")?,
        expires_us: row.try_get("expires_us")?,
        revoked_us: row.try_get("revoked_us")?,
    })
}

fn token_from_row(row: &AnyRow) -> Result<ApiToken, AuditError> {
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
