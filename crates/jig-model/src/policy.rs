//! The `policy:` section of a manifest: seed 002's registry schema (§4) plus governance rules in
//! gert's shape, approvals and session budgets. jig-policy turns it into decisions.
//!
//! ```yaml
//! policy:
//!   network: { allowed_domains: [crates.io, "*.github.com"] }
//!   shell_allow: ["^cargo(\\s|$)"]
//!   git: { allow_push: false, require_clean_tree_for_commit: true }
//!   validators: [{ rule: secrets.scan, enforcement: blocking }]
//!   rules:
//!     - { tools: [fs_delete], action: deny }
//!     - { effects: [write], action: require-approval }
//!     - { default: allow }
//!   approvals: { self_approval: false, ttl_seconds: 900 }
//!   budgets: { max_calls: 500, max_bytes: 104857600, max_wall_ms: 3600000 }
//! ```

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::runbook::kernel::GovernanceRule;

mod layer;
mod mcp;
mod plans;

pub use layer::{LAYER_KEYS, Layer, LayerKind, PolicyLayerFile, ProjectLimits, ToolMatch};
pub use mcp::{McpPolicy, McpResource};
pub use plans::{DockerEngine, DockerTls, HybridRuntime, PlansPolicy, SlurmCluster};

/// The policy of a project.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PolicyConfig {
    /// Schema version of the policy; only 1 exists.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 1))]
    pub version: Option<u32>,
    /// Network egress.
    #[serde(default)]
    pub network: NetworkPolicy,
    /// Regular expressions a `shell_exec` command line must match (rule `sec.shell.allowlist`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub shell_allow: Vec<String>,
    /// Git guards.
    #[serde(default)]
    pub git: GitPolicy,
    /// AST settings for the AST tools.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ast: Option<AstPolicy>,
    /// Rules of seed 002 §7 and their enforcement.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub validators: Vec<ValidatorRule>,
    /// Governance: match on effects, risk, tools or contract; most restrictive match wins. Tools
    /// with side effects need approval unless a rule says otherwise (seed 003).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rules: Vec<GovernanceRule>,
    /// How approvals work.
    #[serde(default)]
    pub approvals: ApprovalPolicy,
    /// Limits per session.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budgets: Option<SessionBudgets>,
    /// How tools' `caps` are enforced on their processes.
    #[serde(default, skip_serializing_if = "SandboxPolicy::is_default")]
    pub sandbox: SandboxPolicy,
    /// What the MCP server shows agents (docs/mcp.md).
    #[serde(default, skip_serializing_if = "McpPolicy::is_default")]
    pub mcp: McpPolicy,
    /// How the audit record is kept.
    #[serde(default, skip_serializing_if = "AuditPolicy::is_default")]
    pub audit: AuditPolicy,
    /// Where seed 001's plans run: the Docker engine, the Slurm cluster (docs/runtime.md).
    #[serde(default, skip_serializing_if = "PlansPolicy::is_default")]
    pub plans: PlansPolicy,
    /// Whose recorded results a call may be answered with (docs/policy.md, "Replay").
    #[serde(default, skip_serializing_if = "ReplayPolicy::is_default")]
    pub replay: ReplayPolicy,
}

/// `replay`: by default a call is answered with a recorded result only of the same person's
/// identical call; `shared` names the tools (ids or `*` globs) whose results anyone's identical
/// call may be answered with — a batch job everyone may share instead of submitting it again.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReplayPolicy {
    /// Tools whose recorded results are shared between people.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub shared: Vec<String>,
}

impl ReplayPolicy {
    fn is_default(&self) -> bool {
        self.shared.is_empty()
    }
}

/// `audit`: how the record is kept (docs/policy.md, "Durability").
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AuditPolicy {
    /// When a call's record must be on disk before the call is answered.
    #[serde(default)]
    pub durability: Durability,
    /// The most one call's declared outputs may hold together, in bytes, whatever the tool's
    /// own `maxOutputBytes` (default 1 GiB): artifacts are stored with the record.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub max_artifact_bytes: Option<u64>,
}

/// The default of `audit.max_artifact_bytes`.
pub const MAX_ARTIFACT_BYTES: u64 = 1024 * 1024 * 1024;

impl AuditPolicy {
    fn is_default(&self) -> bool {
        *self == Self::default()
    }

    /// `max_artifact_bytes`, or its default.
    pub fn max_artifact_bytes(&self) -> u64 {
        self.max_artifact_bytes.unwrap_or(MAX_ARTIFACT_BYTES)
    }
}

/// `audit.durability`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Durability {
    /// Every call's record is synced to disk before it is answered.
    Full,
    /// Calls with side effects are synced before they are answered; read-only calls are
    /// committed in the same chain before they are answered (a crash of Jig loses nothing) and
    /// synced with the next synced commit or within 50 ms (a power loss or kernel crash in
    /// that window may lose the record of a call that changed nothing).
    #[default]
    Effects,
}

/// `sandbox`: how tools' processes are confined (docs/policy.md, "Processes").
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SandboxPolicy {
    /// `required` (the default): where the sandbox cannot be built, calls that start a process
    /// are refused. `best_effort`: they run unconfined.
    #[serde(default)]
    pub enforce: SandboxEnforcement,
    /// Whether a process that declares network gets the host's network (`unfiltered`) or none
    /// (`none`, the default: its call is refused).
    #[serde(default)]
    pub network: ProcessNetwork,
    /// Extra trees outside the workspace that workspace-wide processes (`shell_exec`,
    /// formatters, build commands) may read: caches such as `~/.cargo/registry`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub read: Vec<String>,
}

/// Levels of `sandbox.network`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ProcessNetwork {
    /// No network namespace is shared: nothing leaves, UDP included.
    #[default]
    None,
    /// The host's network, unfiltered: the kernel cannot filter a process's traffic by host.
    Unfiltered,
}

impl SandboxPolicy {
    fn is_default(&self) -> bool {
        *self == Self::default()
    }
}

/// Levels of `sandbox.enforce`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SandboxEnforcement {
    /// Refuse what cannot be confined.
    #[default]
    Required,
    /// Run it anyway.
    BestEffort,
}

/// `network`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NetworkPolicy {
    /// Hosts tools may reach: exact names, or `*.example.com` for its subdomains.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub allowed_domains: Vec<String>,
    /// Allow loopback, private and link-local addresses (off: refused even if allow-listed).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub allow_private: bool,
}

/// `git`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GitPolicy {
    /// Whether `git_push` may run at all.
    #[serde(default)]
    pub allow_push: bool,
    /// Whether commits need a clean tree (rule `sec.git.clean_tree`).
    #[serde(default = "yes")]
    pub require_clean_tree_for_commit: bool,
}

impl Default for GitPolicy {
    fn default() -> Self {
        Self { allow_push: false, require_clean_tree_for_commit: true }
    }
}

pub(crate) fn yes() -> bool {
    true
}

/// `ast`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AstPolicy {
    /// Default language.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub language: Option<String>,
    /// Format files after structural edits.
    #[serde(default)]
    pub format_on_save: bool,
    /// Re-parse after edits (rule `code.ast.parsed`).
    #[serde(default)]
    pub validate_on_edit: bool,
    /// Language servers `ast_external` may start, by name: the argv of a server speaking LSP
    /// over stdio, e.g. `pylsp: [pylsp]` or `rust-analyzer: [rust-analyzer]`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub providers: BTreeMap<String, Vec<String>>,
}

/// One entry of `validators`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ValidatorRule {
    /// A rule id of seed 002 §7, e.g. `secrets.scan`.
    pub rule: String,
    /// How a violation counts.
    pub enforcement: Enforcement,
    /// For the command rules (`build.must.pass`, `lint.must.pass`, `fmt.must.pass`): the argv
    /// to run in the workspace root; a non-zero exit is a violation.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub command: Vec<String>,
    /// For the rules that take one: a regular expression (e.g. the branch pattern of
    /// `branch.naming.convention`, the protected branches of `code.todo.blockers`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pattern: Option<String>,
    /// For `code.mod.import.rules`: which files may not import what.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub boundaries: Vec<ImportBoundary>,
}

/// One import boundary: files matching `from` must not have an import matching `deny`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ImportBoundary {
    /// A glob of files, e.g. `crates/jig-model/**`.
    pub from: String,
    /// A regular expression over the import's text, e.g. `jig_engine|tokio`.
    pub deny: String,
}

/// Enforcement levels of seed 002 §7.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Enforcement {
    /// The call fails.
    Blocking,
    /// Reported; the call goes on.
    Warning,
    /// Reported as advice.
    Suggestion,
}

/// `approvals`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ApprovalPolicy {
    /// Whether the principal who asked may approve their own request.
    #[serde(default = "yes")]
    pub self_approval: bool,
    /// Whether the CLI's `--as NAME` may name who acts (recorded with the OS user who asserted
    /// it). Off: the principal is always the OS user.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub allow_as: bool,
    /// How long an approval token stays valid, in seconds.
    #[serde(default = "default_ttl")]
    #[schemars(range(min = 1))]
    pub ttl_seconds: u64,
}

impl Default for ApprovalPolicy {
    fn default() -> Self {
        Self { self_approval: true, allow_as: false, ttl_seconds: default_ttl() }
    }
}

fn default_ttl() -> u64 {
    900
}

/// `budgets`: what one session may spend.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SessionBudgets {
    /// Calls.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_calls: Option<u64>,
    /// Bytes of arguments and results together.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_bytes: Option<u64>,
    /// Milliseconds of tool execution.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_wall_ms: Option<u64>,
}

/// The rules of seed 002 §7: one enum, so every place that acts on a rule (the loader's check,
/// the catalog of defaults and triggers, the checks themselves) matches them exhaustively and a
/// new rule cannot be forgotten in one of them. In files and on the wire a rule is its id.
// Not `#[non_exhaustive]`: a new rule must break every match until it is handled there.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum RuleId {
    /// `sec.network.allowlist`
    NetworkAllowlist,
    /// `sec.shell.allowlist`
    ShellAllowlist,
    /// `sec.paths.sandbox`
    PathsSandbox,
    /// `sec.git.clean_tree`
    GitCleanTree,
    /// `code.ast.parsed`
    AstParsed,
    /// `build.must.pass`
    BuildMustPass,
    /// `lint.must.pass`
    LintMustPass,
    /// `fmt.must.pass`
    FmtMustPass,
    /// `code.todo.blockers`
    TodoBlockers,
    /// `test.required.changed`
    TestRequiredChanged,
    /// `secrets.scan`
    SecretsScan,
    /// `code.fn.docs.exported`
    FnDocsExported,
    /// `code.no.panic.in.lib`
    NoPanicInLib,
    /// `code.no.unwrap`
    NoUnwrap,
    /// `code.mod.import.rules`
    ImportRules,
    /// `commit.message.conventional`
    CommitConventional,
    /// `branch.naming.convention`
    BranchNaming,
}

impl RuleId {
    /// Every rule, in the seed's order.
    pub const ALL: [RuleId; 17] = [
        Self::NetworkAllowlist,
        Self::ShellAllowlist,
        Self::PathsSandbox,
        Self::GitCleanTree,
        Self::AstParsed,
        Self::BuildMustPass,
        Self::LintMustPass,
        Self::FmtMustPass,
        Self::TodoBlockers,
        Self::TestRequiredChanged,
        Self::SecretsScan,
        Self::FnDocsExported,
        Self::NoPanicInLib,
        Self::NoUnwrap,
        Self::ImportRules,
        Self::CommitConventional,
        Self::BranchNaming,
    ];

    /// The rule's id.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::NetworkAllowlist => "sec.network.allowlist",
            Self::ShellAllowlist => "sec.shell.allowlist",
            Self::PathsSandbox => "sec.paths.sandbox",
            Self::GitCleanTree => "sec.git.clean_tree",
            Self::AstParsed => "code.ast.parsed",
            Self::BuildMustPass => "build.must.pass",
            Self::LintMustPass => "lint.must.pass",
            Self::FmtMustPass => "fmt.must.pass",
            Self::TodoBlockers => "code.todo.blockers",
            Self::TestRequiredChanged => "test.required.changed",
            Self::SecretsScan => "secrets.scan",
            Self::FnDocsExported => "code.fn.docs.exported",
            Self::NoPanicInLib => "code.no.panic.in.lib",
            Self::NoUnwrap => "code.no.unwrap",
            Self::ImportRules => "code.mod.import.rules",
            Self::CommitConventional => "commit.message.conventional",
            Self::BranchNaming => "branch.naming.convention",
        }
    }

    /// The rule with id `id`.
    pub fn parse(id: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|rule| rule.as_str() == id)
    }
}

impl std::fmt::Display for RuleId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The rule ids of seed 002 §7, as text.
pub const RULE_IDS: [&str; 17] = [
    "sec.network.allowlist",
    "sec.shell.allowlist",
    "sec.paths.sandbox",
    "sec.git.clean_tree",
    "code.ast.parsed",
    "build.must.pass",
    "lint.must.pass",
    "fmt.must.pass",
    "code.todo.blockers",
    "test.required.changed",
    "secrets.scan",
    "code.fn.docs.exported",
    "code.no.panic.in.lib",
    "code.no.unwrap",
    "code.mod.import.rules",
    "commit.message.conventional",
    "branch.naming.convention",
];

#[cfg(test)]
mod rule_tests {
    use super::*;

    #[test]
    fn rule_ids_and_their_text_agree() {
        let texts: Vec<&str> = RuleId::ALL.iter().map(|r| r.as_str()).collect();
        assert_eq!(texts, RULE_IDS);
        for rule in RuleId::ALL {
            assert_eq!(RuleId::parse(rule.as_str()), Some(rule));
        }
        assert_eq!(RuleId::parse("secrets.scans"), None);
    }
}

#[cfg(test)]
mod resource_tests {
    use super::McpResource;

    fn resource(uri: &str) -> McpResource {
        McpResource {
            uri: uri.to_owned(),
            tool: "t".to_owned(),
            arguments: Default::default(),
            name: None,
            description: None,
            mime_type: None,
        }
    }

    fn pairs(values: &[(&str, &str)]) -> Option<Vec<(String, String)>> {
        Some(values.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect())
    }

    #[test]
    fn a_template_matches_one_segment_per_part() {
        let template = resource("test://template/{id}/data");
        assert_eq!(template.parts(), ["id"]);
        assert_eq!(template.matches("test://template/123/data"), pairs(&[("id", "123")]));
        assert_eq!(template.matches("test://template/1/2/data"), None);
        assert_eq!(template.matches("test://template//data"), None);
        assert_eq!(template.matches("test://template/123/other"), None);
        let two = resource("t://{a}-{b}/x");
        assert_eq!(two.matches("t://1-2/x"), pairs(&[("a", "1"), ("b", "2")]));
        let tail = resource("t://runs/{id}");
        assert_eq!(tail.matches("t://runs/9"), pairs(&[("id", "9")]));
        assert_eq!(tail.matches("t://runs/9/more"), None);
    }

    #[test]
    fn a_plain_uri_matches_only_itself() {
        let plain = resource("test://static-text");
        assert!(plain.parts().is_empty());
        assert_eq!(plain.matches("test://static-text"), Some(Vec::new()));
        assert_eq!(plain.matches("test://static-text2"), None);
    }
}
