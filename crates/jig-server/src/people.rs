//! Who a request is, beyond the `--users` file: a browser signed in with the project's OpenID
//! provider (a session cookie, made by the sign-in routes), or a script with a personal API token. Both are
//! kept in the audit store, so every instance on it knows them — a sign-out or a revoked token
//! on one instance holds on all at once.
//!
//! A session's role is worked out on every request from the verified claims it was made with
//! and the project's role mapping as it is now (`config.auth.oidc.roles`): a change of the
//! mapping applies at once; a change at the provider, at the person's next sign-in. A personal
//! token acts with its own role, never above its owner's current one.

use std::sync::Arc;

use axum::http::HeaderMap;
use jig_engine::Engine;
use jig_model::manifest::{RoleMapping, RoleName};
use serde_json::Value;

use crate::identity::{Person, Role, Users};

/// The cookie of a signed-in browser.
pub const SESSION_COOKIE: &str = "jig_session";

/// What every personal API token starts with (so a leaked one is recognisable, and so that it
/// is told from a `--users` token without a lookup).
pub const TOKEN_PREFIX: &str = "jig_pat_";

/// The store of sessions and tokens, and the project's role mapping.
#[derive(Clone)]
pub struct People {
    engine: Arc<Engine>,
}

impl std::fmt::Debug for People {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("People")
    }
}

impl People {
    /// People known to `engine`'s store.
    pub fn new(engine: Arc<Engine>) -> Self {
        Self { engine }
    }

    /// The engine (its store and project).
    pub fn engine(&self) -> &Arc<Engine> {
        &self.engine
    }

    /// The role mapping of the project now, when it signs people in with a provider.
    pub fn mapping(&self) -> Option<RoleMapping> {
        let snapshot = self.engine.snapshot();
        snapshot.auth()?.oidc.as_ref().map(|oidc| oidc.roles.clone())
    }

    /// The person of the session cookie in `headers`, if it is live and its claims give a role.
    pub async fn by_session(&self, headers: &HeaderMap) -> Option<Person> {
        let cookie = crate::identity::cookie_value(headers, SESSION_COOKIE)?;
        let now = jig_audit::time::now_us();
        let session = self.engine.people().web_session(&hash(&cookie), now).await.ok()??;
        let role = role_of(&self.mapping()?, &session.claims)?;
        Some(Person { name: session.principal, role })
    }

    /// The person of personal token `token`: its owner, with its role capped by the owner's
    /// current one (from `users`, else their latest sign-in).
    pub async fn by_token(&self, token: &str, users: &Users) -> Option<Person> {
        if !token.starts_with(TOKEN_PREFIX) {
            return None;
        }
        let now = jig_audit::time::now_us();
        let record = self.engine.people().use_api_token(&hash(token), now).await.ok()??;
        let role = role_named(&record.role)?;
        let cap = self.current_role(&record.owner, users).await?;
        Some(Person { name: record.owner, role: role.min(cap) })
    }

    /// The role `person` has now: from the `--users` file, else from their latest sign-in's
    /// claims under the current mapping (`None`: none any more).
    pub async fn current_role(&self, person: &str, users: &Users) -> Option<Role> {
        if let Some(role) = users.role_of(person) {
            return Some(role);
        }
        let session = self.engine.people().latest_web_session(person, 0).await.ok()??;
        role_of(&self.mapping()?, &session.claims)
    }
}

pub use crate::identity::hash;

/// The highest role whose values `claims[mapping.claim]` holds (a list or one string), else
/// the mapping's default.
pub fn role_of(mapping: &RoleMapping, claims: &Value) -> Option<Role> {
    let claim = mapping.claim.as_deref().unwrap_or("groups");
    let held: Vec<&str> = match &claims[claim] {
        Value::Array(values) => values.iter().filter_map(Value::as_str).collect(),
        Value::String(one) => vec![one.as_str()],
        _ => Vec::new(),
    };
    let has = |wanted: &[String]| wanted.iter().any(|w| held.contains(&w.as_str()));
    if has(&mapping.admin) {
        Some(Role::Admin)
    } else if has(&mapping.approver) {
        Some(Role::Approver)
    } else if has(&mapping.runner) {
        Some(Role::Runner)
    } else if has(&mapping.viewer) {
        Some(Role::Viewer)
    } else {
        mapping.default.map(Role::from)
    }
}

/// The role spelt `name`.
pub fn role_named(name: &str) -> Option<Role> {
    match name {
        "viewer" => Some(Role::Viewer),
        "runner" => Some(Role::Runner),
        "approver" => Some(Role::Approver),
        "admin" => Some(Role::Admin),
        _ => None,
    }
}

impl From<RoleName> for Role {
    fn from(name: RoleName) -> Self {
        match name {
            RoleName::Viewer => Self::Viewer,
            RoleName::Runner => Self::Runner,
            RoleName::Approver => Self::Approver,
            RoleName::Admin => Self::Admin,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_highest_mapped_role_wins_and_unknown_groups_get_the_default() {
        let mapping = RoleMapping {
            claim: None,
            admin: vec!["admins".into()],
            approver: vec!["approvers".into()],
            runner: vec!["runners".into()],
            viewer: vec!["viewers".into()],
            default: None,
        };
        assert_eq!(
            role_of(&mapping, &json!({ "groups": ["runners", "approvers"] })),
            Some(Role::Approver)
        );
        assert_eq!(role_of(&mapping, &json!({ "groups": "viewers" })), Some(Role::Viewer));
        assert_eq!(role_of(&mapping, &json!({ "groups": ["strangers"] })), None);
        assert_eq!(role_of(&mapping, &json!({})), None);
        let open = RoleMapping { default: Some(RoleName::Viewer), ..mapping };
        assert_eq!(role_of(&open, &json!({ "groups": ["strangers"] })), Some(Role::Viewer));
    }
}
