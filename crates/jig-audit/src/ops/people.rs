//! Changes to people's state, as operations of the store's writer (applied by
//! `apply::people`).

use crate::records::{ApiToken, DesktopGrant, SignIn, WebSession};

/// One change to people's state.
#[derive(Debug, Clone)]
pub enum PeopleOp {
    /// Record a sign-in under way unless `most` are (those before `since_us` dropped first).
    BeginSignIn {
        /// The sign-in.
        sign_in: Box<SignIn>,
        /// Older ones are dropped.
        since_us: i64,
        /// At most this many under way.
        most: i64,
    },
    /// Take a sign-in by its `state`, once (those before `since_us` dropped first).
    TakeSignIn {
        /// The OAuth state.
        state: String,
        /// Older ones are dropped.
        since_us: i64,
    },
    /// Record a desktop app's grant unless `most` are outstanding.
    GrantDesktop {
        /// The grant.
        grant: Box<DesktopGrant>,
        /// Older ones are dropped.
        since_us: i64,
        /// At most this many outstanding.
        most: i64,
    },
    /// Take a desktop grant by its code's hash, once.
    TakeDesktopGrant {
        /// SHA-256 of the one-time code.
        code_hash: String,
        /// Older ones are dropped.
        since_us: i64,
    },
    /// Record a signed-in browser.
    CreateWebSession(Box<WebSession>),
    /// Sign one browser out.
    RevokeWebSession {
        /// SHA-256 of its cookie.
        id_hash: String,
        /// When.
        now_us: i64,
    },
    /// Sign every browser of a person out.
    RevokeWebSessionsOf {
        /// The person.
        principal: String,
        /// When.
        now_us: i64,
    },
    /// Make a personal token, with its `token.minted` packet.
    MintToken(Box<ApiToken>),
    /// Note that a live token was used.
    UseToken {
        /// SHA-256 of the token.
        token_hash: String,
        /// When.
        now_us: i64,
    },
    /// Revoke one live token (only `owner`'s, when given), with its `token.revoked` packet.
    RevokeToken {
        /// Whose it must be (`None`: anyone's, for an admin).
        owner: Option<String>,
        /// The token.
        id: String,
        /// Who revokes it.
        by: String,
        /// When.
        now_us: i64,
    },
    /// Revoke every live token of `owner`, a `token.revoked` packet each.
    RevokeTokensOf {
        /// The person.
        owner: String,
        /// Who revokes them.
        by: String,
        /// Why, recorded in the packets.
        reason: Option<String>,
        /// When.
        now_us: i64,
    },
}

/// What a change to people's state did.
#[derive(Debug, Clone, PartialEq)]
pub enum PeopleOutcome {
    /// Recorded (`false`: a bound was reached, or nothing was live to change).
    Changed(bool),
    /// The sign-in taken, if there was one.
    SignIn(Option<SignIn>),
    /// The grant taken, if there was one.
    Grant(Option<DesktopGrant>),
    /// The tokens changed, as they now are.
    Tokens(Vec<ApiToken>),
    /// How many rows changed.
    Count(u64),
}
