//! Personal API tokens, made and revoked with a packet in the chain for each: who made which
//! token with what role until when, who revoked it and why. The tables are the store's; this is
//! the one place that changes them, so nothing mints or revokes a token unrecorded.
//!
//! The change and its packet are two writes, ordered so that a failure errs on the side of
//! less access: a token is made, then recorded, and revoked again if the record cannot be
//! written; a revocation is made first and recorded after (a revoked token with no packet is
//! a gap the chain's reader sees as one, never a live token nobody recorded).

use jig_audit::{ApiToken, NewPacket, Op, PacketKind};
use serde_json::json;

use crate::{Engine, EngineError};

/// Who revokes every token of a person whose sign-in the provider's claims refused.
pub const REFUSED_SIGN_IN: &str = "sign-in";

impl Engine {
    /// Make `token` (its hash and what it may do), as its owner.
    pub async fn mint_token(&self, token: &ApiToken) -> Result<(), EngineError> {
        self.store.create_api_token(token).await?;
        let packet = token_packet(PacketKind::TokenMinted, token, &token.owner, None);
        if let Err(error) = self.store.apply(vec![Op::Append(packet)]).await {
            let now = jig_audit::time::now_us();
            let _ = self.store.revoke_api_token(None, &token.id, "unrecorded", now).await;
            return Err(error.into());
        }
        Ok(())
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
        let Some(token) = self.store.revoke_api_token(owner, id, by, now).await? else {
            return Ok(None);
        };
        let packet = token_packet(PacketKind::TokenRevoked, &token, by, None);
        self.store.apply(vec![Op::Append(packet)]).await?;
        Ok(Some(token))
    }

    /// `person`'s sign-in was refused (`why`): every token of theirs stops working and every
    /// session of theirs ends, at once, on every instance on the store.
    pub async fn refuse_person(&self, person: &str, why: &str) -> Result<usize, EngineError> {
        let now = jig_audit::time::now_us();
        self.store.revoke_web_sessions_of(person, now).await?;
        let revoked = self.store.revoke_api_tokens_of(person, REFUSED_SIGN_IN, now).await?;
        let packets: Vec<Op> = revoked
            .iter()
            .map(|token| {
                Op::Append(token_packet(
                    PacketKind::TokenRevoked,
                    token,
                    REFUSED_SIGN_IN,
                    Some(why),
                ))
            })
            .collect();
        if !packets.is_empty() {
            self.store.apply(packets).await?;
        }
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

/// The packet of a token's `kind` of change, by `by` (never the token or its hash).
fn token_packet(kind: PacketKind, token: &ApiToken, by: &str, why: Option<&str>) -> NewPacket {
    let mut data = json!({
        "token_id": token.id,
        "name": token.name,
        "owner": token.owner,
        "role": token.role,
        "expires_us": token.expires_us,
    });
    if kind == PacketKind::TokenRevoked {
        data["by"] = json!(by);
        if let Some(why) = why {
            data["reason"] = json!(why);
        }
    }
    NewPacket {
        kind,
        session_id: None,
        thread_id: None,
        principal: Some(by.to_owned()),
        request_id: None,
        run_id: None,
        tool: None,
        args_hash: None,
        data,
    }
}
