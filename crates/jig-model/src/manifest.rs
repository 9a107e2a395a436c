//! The package manifest: `jig.yaml`, or gert's `gert.yaml` read the same way (seed 004 and
//! `shared/reference/gert/schemas/gert-project.json`).

use std::collections::BTreeMap;

use crate::policy::PolicyConfig;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The file names a manifest may have, in the order they are looked for.
pub const MANIFEST_FILE_NAMES: [&str; 2] = ["jig.yaml", "gert.yaml"];

/// Pattern of a package name (gert-project.json).
pub const PACKAGE_NAME_PATTERN: &str = r"^[a-zA-Z][a-zA-Z0-9_-]*$";

/// A package manifest.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(title = "Jig package manifest (jig.yaml / gert.yaml)")]
#[schemars(extend("$id" = "https://jig.dev/schemas/manifest.schema.json"))]
pub struct Manifest {
    /// The package's identity; other packages use it as the prefix of qualified references.
    #[schemars(pattern(PACKAGE_NAME_PATTERN))]
    pub name: String,
    /// What the package is for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Overrides of the convention directories.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paths: Option<PathsConfig>,
    /// Packages this one uses: name → path relative to this manifest, pointing at a package root
    /// or straight at a `tools/` folder.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    #[schemars(extend("propertyNames" = { "pattern": PACKAGE_NAME_PATTERN }))]
    pub require: BTreeMap<String, String>,
    /// Names this package offers to its consumers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exports: Option<Exports>,
    /// Runtime settings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config: Option<RuntimeConfig>,
    /// Policy: allowlists, guards, validators, governance rules, approvals, budgets.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub policy: Option<PolicyConfig>,
    /// Upstream MCP servers whose tools become registry entries `NAME.TOOL` (docs/mcp.md,
    /// "Upstream servers").
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    #[schemars(extend("propertyNames" = { "pattern": crate::mcp_server::SERVER_NAME_PATTERN }))]
    pub mcp_servers: BTreeMap<String, crate::mcp_server::McpServer>,
    /// Who hears when something waits for a person and when it is decided.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub notifications: Option<Notifications>,
}

/// `paths`: where tools and runbooks live, relative to the package root.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PathsConfig {
    /// Tool definitions (default `tools`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<String>,
    /// Runbooks (default `runbooks`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runbooks: Option<String>,
}

/// `exports`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Exports {
    /// Virtual name → path inside the tools directory, without `.tool.yaml`. When present, only
    /// these names are visible to consumers; when absent, every tool is, by file name.
    #[serde(default)]
    pub tools: BTreeMap<String, String>,
}

/// `config`: runtime settings.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RuntimeConfig {
    /// External providers (gert).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub providers: BTreeMap<String, ProviderConfig>,
    /// The audit record.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub audit: Option<AuditConfig>,
    /// Runners of kernel/v0 `extension` steps: extension name → the registry tool that runs
    /// it. The step's inputs become that tool's arguments, and the call is governed and
    /// audited like any tool step.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub extensions: BTreeMap<String, String>,
    /// How people sign in to `jig serve` (docs/teams.md, "Single sign-on").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auth: Option<AuthConfig>,
}

/// `notifications:`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Notifications {
    /// Endpoints that get a signed JSON POST for each notice.
    #[serde(default)]
    pub webhooks: Vec<Webhook>,
    /// The workbench's address (`https://jig.acme.example`), for the link in each notice;
    /// without it a notice carries the path only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workbench_url: Option<String>,
}

/// One webhook.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Webhook {
    /// Where to POST.
    pub url: String,
    /// The key of the body's HMAC-SHA256 signature (the `X-Jig-Signature` header, hex).
    pub secret: String,
    /// `jig` (the default: the notice as JSON) or `slack` (a Slack-compatible `{"text": …}`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format: Option<String>,
    /// A PEM file of the certificate authorities trusted for the receiver (relative to the
    /// project), as a forwarder's `ca`; by default the system's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ca: Option<String>,
}

/// `config.auth`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AuthConfig {
    /// Single sign-on with an OpenID Connect provider.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub oidc: Option<OidcConfig>,
    /// How long a browser stays signed in, in hours (default 8).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 720))]
    pub session_hours: Option<u32>,
    /// How long a personal API token works when its maker names no end, in days (default 30).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 365))]
    pub token_days: Option<u32>,
    /// The longest a personal API token may work, in days (default 90): a token asked for
    /// longer is refused.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 365))]
    pub token_max_days: Option<u32>,
}

impl AuthConfig {
    /// A token's days when its maker names none.
    pub fn default_token_days(&self) -> u32 {
        self.token_days.unwrap_or(30).min(self.max_token_days())
    }

    /// The most days a token may work.
    pub fn max_token_days(&self) -> u32 {
        self.token_max_days.unwrap_or(90)
    }
}

/// `config.auth.oidc`: authorization code with PKCE against one provider.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OidcConfig {
    /// The issuer (its discovery document is `ISSUER/.well-known/openid-configuration`).
    pub issuer: String,
    /// Jig's client id at the provider.
    pub client_id: String,
    /// The environment variable holding the client's secret (a confidential client); without
    /// one Jig is a public client (PKCE alone).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(pattern(r"^[A-Z][A-Z0-9_]*$"))]
    pub client_secret_env: Option<String>,
    /// The claim naming a person in the audit: `email` (the default), `preferred_username`,
    /// or `sub`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name_claim: Option<NameClaim>,
    /// Scopes asked for besides `openid` (default `email`, `profile`, `groups`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scopes: Option<Vec<String>>,
    /// Which claim's values give which role.
    #[serde(default)]
    pub roles: RoleMapping,
}

/// The claim naming a person.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum NameClaim {
    /// `email` (verified).
    #[default]
    Email,
    /// `preferred_username`.
    PreferredUsername,
    /// `sub`, the provider's stable id.
    Sub,
}

/// `roles`: a person's role is the highest whose values their claim holds.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RoleMapping {
    /// The claim holding group names (default `groups`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub claim: Option<String>,
    /// Values giving `admin`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub admin: Vec<String>,
    /// Values giving `approver`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub approver: Vec<String>,
    /// Values giving `runner`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub runner: Vec<String>,
    /// Values giving `viewer`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub viewer: Vec<String>,
    /// The role of someone signed in whose claim holds none of these (default: none — they
    /// are refused).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<RoleName>,
}

/// A role, as configuration names it.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum RoleName {
    /// Reads.
    Viewer,
    /// Also runs.
    Runner,
    /// Also approves.
    Approver,
    /// Everything.
    Admin,
}

/// `config.audit`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AuditConfig {
    /// The Ed25519 public key (64 hexadecimal digits) whose signed chain heads
    /// `jig audit verify --expect` trusts (`jig audit keygen` makes a key pair).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub head_key: Option<String>,
    /// The chain's name in its signed checkpoints (the C2SP `tlog-checkpoint` origin line): a
    /// schema-less URL without spaces or `+`, e.g. `jig.acme.example/ops`. Default
    /// `jig/<project name>`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub origin: Option<String>,
    /// Where `jig audit publish` writes the signed checkpoint: a file path (relative to the
    /// project) or an `http(s)://` URL it PUTs to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub publish: Option<String>,
    /// Live forwarders: every packet of the chain, in order and at least once, to a receiver
    /// (docs/forwarding.md).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub forward: Vec<AuditForward>,
}

/// One live forwarder of the audit (`config.audit.forward[]`).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AuditForward {
    /// Its name, which keeps its place in the store (lowercase letters, digits, `-`, `_`):
    /// renaming a forwarder starts it again from the first packet.
    pub name: String,
    /// `syslog+tls://HOST:PORT` (RFC 5424 messages over TLS, framed as RFC 5425 says) or an
    /// `http(s)://` URL taking batches in `shape`.
    pub url: String,
    /// What an HTTP receiver takes: `hec` (Splunk's HTTP Event Collector) or `elastic` (the
    /// bulk API).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shape: Option<String>,
    /// Each packet as `cloudevents` (the default), `ocsf` (OCSF API Activity inside a
    /// CloudEvent) or `jsonl` (the packet as stored), as `jig audit export` writes them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format: Option<String>,
    /// A PEM file of the certificate authorities trusted for the receiver (relative to the
    /// project); by default the system's (`/etc/ssl/certs/ca-certificates.crt`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ca: Option<String>,
    /// The environment variable holding an HTTP receiver's token (sent as `Authorization:
    /// Splunk …` to `hec`, `Authorization: ApiKey …` to `elastic`); never the token itself.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_env: Option<String>,
}

impl AuditForward {
    /// What is wrong with it, as `(field, message)`.
    pub fn problems(&self) -> Vec<(&'static str, String)> {
        let mut out = Vec::new();
        let name_ok = !self.name.is_empty()
            && self.name.len() <= 64
            && self
                .name
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'_');
        if !name_ok {
            out.push((
                "name",
                format!("`{}` is not 1–64 lowercase letters, digits, `-` and `_`", self.name),
            ));
        }
        let http = self.url.starts_with("http://") || self.url.starts_with("https://");
        if let Some(address) = self.url.strip_prefix("syslog+tls://") {
            if self.shape.is_some() {
                out.push(("shape", "a syslog receiver takes no `shape`".to_owned()));
            }
            if self.token_env.is_some() {
                out.push(("token_env", "a syslog receiver takes no token".to_owned()));
            }
            let port = address.rsplit_once(':').and_then(|(_, port)| port.parse::<u16>().ok());
            if port.is_none() || address.contains('/') {
                out.push(("url", format!("`{}` is not `syslog+tls://HOST:PORT`", self.url)));
            }
        } else if http {
            match self.shape.as_deref() {
                Some("hec" | "elastic") => {}
                Some(other) => {
                    out.push(("shape", format!("unknown shape `{other}` (hec, elastic)")))
                }
                None => out
                    .push(("shape", "an HTTP receiver needs a `shape`: hec or elastic".to_owned())),
            }
        } else {
            out.push((
                "url",
                format!("`{}` is neither `syslog+tls://HOST:PORT` nor an http(s) URL", self.url),
            ));
        }
        if let Some(format) =
            self.format.as_deref().filter(|f| !matches!(*f, "cloudevents" | "ocsf" | "jsonl"))
        {
            out.push(("format", format!("unknown format `{format}` (cloudevents, ocsf, jsonl)")));
        }
        out
    }
}

/// One external provider.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ProviderConfig {
    /// Provider binary name or path.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub binary: Option<String>,
    /// Path to the provider's configuration file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// Path to a provider-specific configuration file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config: Option<String>,
}

impl Manifest {
    /// The tools directory, relative to the package root.
    pub fn tools_dir(&self) -> &str {
        self.paths.as_ref().and_then(|p| p.tools.as_deref()).unwrap_or("tools")
    }

    /// The runbooks directory, relative to the package root.
    pub fn runbooks_dir(&self) -> &str {
        self.paths.as_ref().and_then(|p| p.runbooks.as_deref()).unwrap_or("runbooks")
    }
}
