//! Personal API tokens, made and revoked with a packet in the chain for each: who made which
//! token with what role until when, who revoked it and why. The store makes each change and its
//! packet in one commit (`jig_audit`'s people), so nothing mints or revokes a token unrecorded.

use jig_audit::ApiToken;

use crate::{Engine, EngineError};

/// Who revokes every token of a person whose sign-in the provider's claims refused.
pub const REFUSED_SIGN_IN: &str = "sign-in";

impl Engine {
    /// Make `token` (its hash and what it may do), as its owner.
    pub async fn mint_token(&self, token: &ApiToken) -> Result<(), EngineError> {
        Ok(self.store.mint_api_token(token).await?)
    }

    /// Revoke token `id` as `by`: only `owner`'s when given (an admin passes `None`). The token,
    /// or `None` when there is no live one.
    pub async fn revoke_token(
        &self,
        owner: Option<&str>,
        id: &str,
        by: &str,
    ) -> Result<Option<ApiToken>, EngineError> {
        let now = jig_audit::time::now_us();
        Ok(self.store.revoke_api_token(owner, id, by, now).await?)
    }

    /// `person`'s sign-in was refused (`why`): every token of theirs stops working and every
    /// session of theirs ends, at once, on every instance on the store.
    pub async fn refuse_person(&self, person: &str, why: &str) -> Result<usize, EngineError> {
        let now = jig_audit::time::now_us();
        self.store.revoke_web_sessions_of(person, now).await?;
        let revoked =
            self.store.revoke_api_tokens_of(person, REFUSED_SIGN_IN, Some(why), now).await?;
        Ok(revoked.len())
    }

    /// Every person's tokens (for admins), newest first.
    pub async fn all_tokens(&self) -> Result<Vec<ApiToken>, EngineError> {
        Ok(self.store.all_api_tokens().await?)
    }

    /// `owner`'s tokens, newest first.
    pub async fn tokens_of(&self, owner: &str) -> Result<Vec<ApiToken>, EngineError> {
        Ok(self.store.api_tokens(owner).await?)
    }
}
