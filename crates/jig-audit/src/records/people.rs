//! People's state beside the chain: sign-ins under way, browser sessions, the desktop app's
//! grants and personal API tokens. Only hashes of cookies, codes and tokens are kept.

use serde::{Deserialize, Serialize};
use serde_json::Value;

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
