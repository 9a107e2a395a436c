//! What a manifest sends off the machine or writes outside the project, and whether a person
//! consented to it (`jig trust`).
//!
//! A cloned repository's manifest is the repository's word, not the person's: it can name a
//! receiver for the audit, a webhook, a sign-in provider (which decides who is an admin, and
//! is handed the client secret), a place to publish checkpoints, and the environment
//! variables each is given. None of these takes effect until a person consented to its present
//! configuration, the way an upstream MCP server waits for `jig mcp discover`: the consent is
//! kept outside the project (`crate::consent`), one per item, holding the hash of exactly what
//! the person saw — the URL, the variables' names, the CA, the format — so any change to the
//! item voids it. Another person, another machine or another copy of the repository asks again.

use std::path::Path;

use jig_model::Sha256Hash;
use jig_model::manifest::{AuditForward, AuthConfig, Notifications, OidcConfig, Webhook};
use serde::Serialize;
use serde_json::json;

/// What kind of thing a manifest names to send or write.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum OutboundKind {
    /// `config.audit.forward[]`: every packet, to a receiver.
    Forwarder,
    /// `notifications.webhooks[]`: who asked for what, to a URL.
    Webhook,
    /// `config.auth.oidc`: the sign-in provider (and the client secret it is handed).
    Oidc,
    /// `config.audit.publish`: where the signed checkpoint is written.
    Publish,
}

impl OutboundKind {
    /// Its name in consents and on screens.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Forwarder => "forwarder",
            Self::Webhook => "webhook",
            Self::Oidc => "oidc",
            Self::Publish => "publish",
        }
    }
}

/// One thing the manifest names that sends data off the machine or writes outside the project.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Outbound {
    /// What it is.
    pub kind: OutboundKind,
    /// Its name: a forwarder's, `webhooks[N]`, `sign-in`, `checkpoint`.
    pub name: String,
    /// Where it goes, as a person should read it: a URL without credentials, query or
    /// fragment, or a path.
    pub target: String,
    /// The environment variables it is handed (their values go where `target` says).
    pub env: Vec<String>,
    /// Whether it goes over plain `http://` to another machine.
    pub plain_http: bool,
    /// SHA-256 of its whole configuration: what a consent is bound to.
    #[serde(skip)]
    pub hash: String,
}

/// Where a person's consent stands for one item.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TrustState {
    /// Consented to as it is now.
    Trusted,
    /// Never consented to here.
    Waiting,
    /// Consented to once, and changed since: it waits again.
    Changed,
}

impl Outbound {
    /// A forwarder of the audit.
    pub fn forwarder(config: &AuditForward) -> Self {
        Self::new(
            OutboundKind::Forwarder,
            config.name.clone(),
            &config.url,
            config.token_env.iter().cloned().collect(),
            &json!(config),
        )
    }

    /// Webhook `index` of `notifications:` (its secret is part of the hash, never shown).
    pub fn webhook(index: usize, hook: &Webhook) -> Self {
        Self::new(
            OutboundKind::Webhook,
            format!("webhooks[{index}]"),
            &hook.url,
            Vec::new(),
            &json!(hook),
        )
    }

    /// The sign-in provider: who it is, Jig's client there, the variable its secret is read
    /// from and what names a person. The role mapping is not part of it: like the policy, it
    /// is the project's to change (a change applies at once), and a team's layer above the
    /// project is where it is governed.
    pub fn oidc(config: &OidcConfig) -> Self {
        let provider = json!({
            "issuer": config.issuer,
            "client_id": config.client_id,
            "client_secret_env": config.client_secret_env,
            "name_claim": config.name_claim,
            "scopes": config.scopes,
        });
        Self::new(
            OutboundKind::Oidc,
            "sign-in".to_owned(),
            &config.issuer,
            config.client_secret_env.iter().cloned().collect(),
            &provider,
        )
    }

    /// Where checkpoints are published.
    pub fn publish(target: &str) -> Self {
        Self::new(
            OutboundKind::Publish,
            "checkpoint".to_owned(),
            target,
            Vec::new(),
            &json!(target),
        )
    }

    fn new(
        kind: OutboundKind,
        name: String,
        target: &str,
        env: Vec<String>,
        config: &serde_json::Value,
    ) -> Self {
        let hash =
            Sha256Hash::of_json(&json!({ "kind": kind.as_str(), "config": config })).to_hex();
        Self { kind, name, target: shown(target), env, plain_http: plain_http(target), hash }
    }

    /// Where the consent to it stands for the project at `root`.
    pub fn state(&self, root: &Path) -> TrustState {
        match crate::consent::kept(root, self.kind.as_str(), &self.name) {
            Some(hash) if hash == self.hash => TrustState::Trusted,
            Some(_) => TrustState::Changed,
            None => TrustState::Waiting,
        }
    }

    /// Whether a person consented to it as it is now.
    pub fn trusted(&self, root: &Path) -> bool {
        self.state(root) == TrustState::Trusted
    }

    /// A person consents to it as it is now; `Ok(true)` when they had not.
    pub fn trust(&self, root: &Path) -> Result<bool, String> {
        let about = format!("{} {} -> {}", self.kind.as_str(), self.name, self.target);
        crate::consent::keep(root, self.kind.as_str(), &self.name, &self.hash, &about)
    }

    /// A person takes their consent back; `Ok(true)` when one was kept.
    pub fn revoke(&self, root: &Path) -> Result<bool, String> {
        crate::consent::forget(root, self.kind.as_str(), &self.name)
    }

    /// What a person reads before consenting: what goes where, with what.
    pub fn describe(&self) -> String {
        let what = match self.kind {
            OutboundKind::Forwarder => {
                "sends every packet of the audit (arguments and results as recorded) to"
            }
            OutboundKind::Webhook => "sends who asked for which tool, and each decision, to",
            OutboundKind::Oidc => "signs people in (and decides their roles) with the provider",
            OutboundKind::Publish => "writes the signed checkpoint to",
        };
        let mut text = format!("{} `{}` {what} {}", self.kind.as_str(), self.name, self.target);
        if !self.env.is_empty() {
            text.push_str(&format!(", handing it the value of ${}", self.env.join(", $")));
        }
        if self.plain_http {
            text.push_str(", in clear text (plain http:// to another machine)");
        }
        text
    }
}

/// Everything the manifest's parts name, in a stable order.
pub fn outbound(
    forward: &[AuditForward],
    notifications: Option<&Notifications>,
    auth: Option<&AuthConfig>,
    publish: Option<&str>,
) -> Vec<Outbound> {
    let mut out: Vec<Outbound> = forward.iter().map(Outbound::forwarder).collect();
    if let Some(notifications) = notifications {
        out.extend(notifications.webhooks.iter().enumerate().map(|(i, h)| Outbound::webhook(i, h)));
    }
    if let Some(oidc) = auth.and_then(|a| a.oidc.as_ref()) {
        out.push(Outbound::oidc(oidc));
    }
    // A relative path stays inside the project: only one outside it (or a URL) needs consent.
    if let Some(target) = publish.filter(|t| leaves_the_project(t)) {
        out.push(Outbound::publish(target));
    }
    out
}

/// What the snapshot's manifest names.
pub fn of_snapshot(snapshot: &crate::Snapshot) -> Vec<Outbound> {
    outbound(
        snapshot.audit_forward(),
        snapshot.notifications(),
        snapshot.auth(),
        snapshot.audit_publish(),
    )
}

/// What a manifest names.
pub fn of_manifest(manifest: &jig_model::manifest::Manifest) -> Vec<Outbound> {
    let config = manifest.config.as_ref();
    let audit = config.and_then(|c| c.audit.as_ref());
    outbound(
        audit.map(|a| a.forward.as_slice()).unwrap_or_default(),
        manifest.notifications.as_ref(),
        config.and_then(|c| c.auth.as_ref()),
        audit.and_then(|a| a.publish.as_deref()),
    )
}

/// Whether a publish target leaves the project: a URL, an absolute path, or one that climbs
/// out with `..`.
pub fn leaves_the_project(target: &str) -> bool {
    target.contains("://") || Path::new(target).is_absolute() || target.starts_with('~') || {
        let mut depth = 0i32;
        Path::new(target).components().any(|c| {
            match c {
                std::path::Component::ParentDir => depth -= 1,
                std::path::Component::Normal(_) => depth += 1,
                _ => {}
            }
            depth < 0
        })
    }
}

/// `url` without credentials, query or fragment (a path as it is).
fn shown(target: &str) -> String {
    match url::Url::parse(target) {
        Ok(mut url) if url.has_host() => {
            let _ = url.set_username("");
            let _ = url.set_password(None);
            url.set_query(None);
            url.set_fragment(None);
            url.to_string()
        }
        _ => target.to_owned(),
    }
}

/// Plain `http://` to a host that is not this machine.
fn plain_http(target: &str) -> bool {
    let Ok(url) = url::Url::parse(target) else { return false };
    url.scheme() == "http"
        && !match url.host() {
            Some(url::Host::Domain(name)) => name.eq_ignore_ascii_case("localhost"),
            Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
            Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
            None => false,
        }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn forwarder(url: &str, token_env: Option<&str>) -> AuditForward {
        AuditForward {
            name: "siem".into(),
            url: url.into(),
            shape: Some("hec".into()),
            token_env: token_env.map(str::to_owned),
            ..AuditForward::default()
        }
    }

    #[test]
    fn what_a_person_reads_names_the_target_the_variables_and_clear_text() {
        let item = Outbound::forwarder(&forwarder(
            "http://user:pw@siem.example:8088/c?k=1",
            Some("SIEM_TOKEN"),
        ));
        assert_eq!(item.target, "http://siem.example:8088/c");
        let text = item.describe();
        assert!(text.contains("$SIEM_TOKEN") && text.contains("clear text"), "{text}");
        assert!(!Outbound::forwarder(&forwarder("http://127.0.0.1:9/c", None)).plain_http);
        assert!(leaves_the_project("../../.bashrc") && leaves_the_project("/etc/x"));
        assert!(leaves_the_project("https://witness.example/x"));
        assert!(!leaves_the_project("witness/checkpoint") && !leaves_the_project("a/../b"));
    }
}
