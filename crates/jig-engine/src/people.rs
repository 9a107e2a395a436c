//! People's state beside the audit: sign-ins under way, browser sessions and the desktop app's
//! grants. The store keeps the tables and changes them through its writer; surfaces reach them
//! only through [`People`] (tokens, whose changes are recorded in the chain, in `tokens.rs`).

use jig_audit::{AuditError, DesktopGrant, SignIn, Store, WebSession};

use crate::Engine;

/// People's state of one engine's store.
#[derive(Debug, Clone, Copy)]
pub struct People<'a> {
    store: &'a Store,
}

impl Engine {
    /// Sign-ins, sessions and the desktop's grants.
    pub fn people(&self) -> People<'_> {
        People { store: &self.store }
    }
}

impl People<'_> {
    /// Record a sign-in under way (those older than `since_us` dropped); `false` when `most`
    /// are under way already.
    pub async fn begin_sign_in(
        &self,
        sign_in: &SignIn,
        since_us: i64,
        most: i64,
    ) -> Result<bool, AuditError> {
        self.store.begin_sign_in(sign_in, since_us, most).await
    }

    /// Take the sign-in of `state` (once), if it began after `since_us`.
    pub async fn take_sign_in(
        &self,
        state: &str,
        since_us: i64,
    ) -> Result<Option<SignIn>, AuditError> {
        self.store.take_sign_in(state, since_us).await
    }

    /// Record a grant to the desktop app; `false` when `most` are outstanding.
    pub async fn grant_desktop(
        &self,
        grant: &DesktopGrant,
        since_us: i64,
        most: i64,
    ) -> Result<bool, AuditError> {
        self.store.grant_desktop(grant, since_us, most).await
    }

    /// Take the desktop grant of `code_hash` (once), if it was made after `since_us`.
    pub async fn take_desktop_grant(
        &self,
        code_hash: &str,
        since_us: i64,
    ) -> Result<Option<DesktopGrant>, AuditError> {
        self.store.take_desktop_grant(code_hash, since_us).await
    }

    /// Start a browser session.
    pub async fn create_web_session(&self, session: &WebSession) -> Result<(), AuditError> {
        self.store.create_web_session(session).await
    }

    /// The live session of `id_hash` at `now_us`.
    pub async fn web_session(
        &self,
        id_hash: &str,
        now_us: i64,
    ) -> Result<Option<WebSession>, AuditError> {
        self.store.web_session(id_hash, now_us).await
    }

    /// `principal`'s latest session not revoked, ended after `now_us`.
    pub async fn latest_web_session(
        &self,
        principal: &str,
        now_us: i64,
    ) -> Result<Option<WebSession>, AuditError> {
        self.store.latest_web_session(principal, now_us).await
    }

    /// End the session of `id_hash`; `true` when it was live.
    pub async fn revoke_web_session(&self, id_hash: &str, now_us: i64) -> Result<bool, AuditError> {
        self.store.revoke_web_session(id_hash, now_us).await
    }

    /// Use the personal token of `hash` at `now_us` (its last use recorded): its record when
    /// it is live.
    pub async fn use_api_token(
        &self,
        hash: &str,
        now_us: i64,
    ) -> Result<Option<jig_audit::ApiToken>, AuditError> {
        self.store.use_api_token(hash, now_us).await
    }
}
