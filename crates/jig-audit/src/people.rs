//! Who is signed in, kept in the store so that every `jig serve` instance on it knows: sign-ins
//! under way, browser sessions, personal API tokens. They say who may act; what people do is
//! recorded as ever. Sessions and sign-ins are not the audit (no packets); a token's mint and
//! revocation are, each in the transaction that makes it. Every change is an operation of the
//! store's writer (`Op::People`, applied by `apply::people`); reads go to the pool.

use crate::error::AuditError;
use crate::ops::{Op, Outcome, PeopleOp, PeopleOutcome};
use crate::records::{ApiToken, DesktopGrant, SignIn, WebSession};
use crate::rows::{session_from_row, token_from_row};
use crate::store::{Flush, Store};

/// How often a token's last use is written: at most once this long (µs), so that a token
/// presented on every request does not make every request a write.
const LAST_USE_EVERY_US: i64 = 60_000_000;

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
        let sign_in = Box::new(sign_in.clone());
        changed(self.people(PeopleOp::BeginSignIn { sign_in, since_us, most }, Flush::Soon).await?)
    }

    /// Take the sign-in `state` (once: a second callback with the same state finds nothing),
    /// if it started after `since_us`; older ones are dropped on the way.
    pub async fn take_sign_in(
        &self,
        state: &str,
        since_us: i64,
    ) -> Result<Option<SignIn>, AuditError> {
        let op = PeopleOp::TakeSignIn { state: state.to_owned(), since_us };
        match self.people(op, Flush::Now).await? {
            PeopleOutcome::SignIn(sign_in) => Ok(sign_in),
            other => Err(unexpected(&other)),
        }
    }

    /// Record a desktop app's grant, dropping those made before `since_us`; `false` (nothing
    /// recorded) when `most` are outstanding.
    pub async fn grant_desktop(
        &self,
        grant: &DesktopGrant,
        since_us: i64,
        most: i64,
    ) -> Result<bool, AuditError> {
        let grant = Box::new(grant.clone());
        changed(self.people(PeopleOp::GrantDesktop { grant, since_us, most }, Flush::Now).await?)
    }

    /// Take the grant of the code whose hash is `code_hash` (once: a replayed code finds
    /// nothing), if it was made after `since_us`.
    pub async fn take_desktop_grant(
        &self,
        code_hash: &str,
        since_us: i64,
    ) -> Result<Option<DesktopGrant>, AuditError> {
        let op = PeopleOp::TakeDesktopGrant { code_hash: code_hash.to_owned(), since_us };
        match self.people(op, Flush::Now).await? {
            PeopleOutcome::Grant(grant) => Ok(grant),
            other => Err(unexpected(&other)),
        }
    }

    /// Record a signed-in browser.
    pub async fn create_web_session(&self, session: &WebSession) -> Result<(), AuditError> {
        let op = PeopleOp::CreateWebSession(Box::new(session.clone()));
        changed(self.people(op, Flush::Now).await?).map(drop)
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
        let op = PeopleOp::RevokeWebSession { id_hash: id_hash.to_owned(), now_us };
        changed(self.people(op, Flush::Now).await?)
    }

    /// Make a personal token, its `token.minted` packet (by its owner) in the same commit.
    pub async fn mint_api_token(&self, token: &ApiToken) -> Result<(), AuditError> {
        let op = PeopleOp::MintToken(Box::new(token.clone()));
        changed(self.people(op, Flush::Now).await?).map(drop)
    }

    /// The live token whose hash is `token_hash` (not revoked, not past its end), its use
    /// noted at `now_us` when the last noted use is older than a minute.
    pub async fn use_api_token(
        &self,
        token_hash: &str,
        now_us: i64,
    ) -> Result<Option<ApiToken>, AuditError> {
        let row = sqlx::query(
            "SELECT * FROM api_tokens WHERE token_hash = $1 AND revoked_us IS NULL \
             AND (expires_us IS NULL OR expires_us > $2)",
        )
        .bind(token_hash)
        .bind(now_us)
        .fetch_optional(self.pool())
        .await?;
        let Some(mut token) = row.as_ref().map(token_from_row).transpose()? else {
            return Ok(None);
        };
        if token.last_used_us.is_none_or(|last| now_us - last >= LAST_USE_EVERY_US) {
            let op = PeopleOp::UseToken { token_hash: token_hash.to_owned(), now_us };
            self.people(op, Flush::Soon).await?;
            token.last_used_us = Some(now_us);
        }
        Ok(Some(token))
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
    /// anyone's) — as `by`, its `token.revoked` packet in the same commit. The token as it
    /// was, or `None` when there is no live one.
    pub async fn revoke_api_token(
        &self,
        owner: Option<&str>,
        id: &str,
        by: &str,
        now_us: i64,
    ) -> Result<Option<ApiToken>, AuditError> {
        let owner = owner.map(str::to_owned);
        let op = PeopleOp::RevokeToken { owner, id: id.to_owned(), by: by.to_owned(), now_us };
        Ok(tokens(self.people(op, Flush::Now).await?)?.pop())
    }

    /// Revoke every live token of `owner` as `by` (their sign-in was refused, `reason`), a
    /// `token.revoked` packet each in the same commit: the tokens revoked.
    pub async fn revoke_api_tokens_of(
        &self,
        owner: &str,
        by: &str,
        reason: Option<&str>,
        now_us: i64,
    ) -> Result<Vec<ApiToken>, AuditError> {
        let op = PeopleOp::RevokeTokensOf {
            owner: owner.to_owned(),
            by: by.to_owned(),
            reason: reason.map(str::to_owned),
            now_us,
        };
        tokens(self.people(op, Flush::Now).await?)
    }

    /// Sign every live session of `principal` out (their sign-in was refused).
    pub async fn revoke_web_sessions_of(
        &self,
        principal: &str,
        now_us: i64,
    ) -> Result<u64, AuditError> {
        let op = PeopleOp::RevokeWebSessionsOf { principal: principal.to_owned(), now_us };
        match self.people(op, Flush::Now).await? {
            PeopleOutcome::Count(count) => Ok(count),
            other => Err(unexpected(&other)),
        }
    }

    /// Apply one change to people's state through the writer.
    async fn people(&self, op: PeopleOp, sync: Flush) -> Result<PeopleOutcome, AuditError> {
        match self.apply_with(vec![Op::People(op)], sync).await?.pop() {
            Some(Outcome::People(outcome)) => Ok(outcome),
            other => Err(AuditError::Commit(format!(
                "internal error: a change to people's state answered {other:?}"
            ))),
        }
    }
}

fn changed(outcome: PeopleOutcome) -> Result<bool, AuditError> {
    match outcome {
        PeopleOutcome::Changed(changed) => Ok(changed),
        other => Err(unexpected(&other)),
    }
}

fn tokens(outcome: PeopleOutcome) -> Result<Vec<ApiToken>, AuditError> {
    match outcome {
        PeopleOutcome::Tokens(tokens) => Ok(tokens),
        other => Err(unexpected(&other)),
    }
}

fn unexpected(outcome: &PeopleOutcome) -> AuditError {
    AuditError::Commit(format!("internal error: unexpected answer {outcome:?}"))
}
