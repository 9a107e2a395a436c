//! The registry snapshot: an immutable, fully valid view of a project.
//!
//! A snapshot only exists for a project without errors (fail-closed). It is deterministic: the
//! same files give the same entries and the same `registry_hash`, whatever order the directory
//! walk or the worker threads produced them in, because every collection is keyed and sorted.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use jig_model::policy::PolicyConfig;
use jig_model::runbook::Runbook;
use jig_model::scenario::{Scenario, ScenarioTest};
use jig_model::{Diagnostic, Sha256Hash, ToolDef};
use serde::Serialize;

use crate::package::PackageRole;

/// A package of the project, as shown to users.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PackageSummary {
    /// Its name.
    pub name: String,
    /// Root, required or std.
    pub role: PackageRole,
    /// Its root directory, relative to the project root (`<std>` for the built-ins).
    pub root: String,
    /// Its manifest file, when it has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub manifest: Option<String>,
}

/// A scenario of a runbook.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ScenarioEntry {
    /// The scenario's name (its directory).
    pub name: String,
    /// Its directory, relative to the project root.
    pub dir: String,
    /// `scenario.yaml`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scenario: Option<Scenario>,
    /// `test.yaml`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub test: Option<ScenarioTest>,
}

/// A runbook of the project.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunbookEntry {
    /// Its reference name: `group/name` locally, `pkg/group/name` from a required package.
    pub name: String,
    /// The package that defines it.
    pub package: String,
    /// Its file, relative to the project root.
    pub file: String,
    /// The runbook.
    pub runbook: Runbook,
    /// Its recorded scenarios.
    pub scenarios: Vec<ScenarioEntry>,
    /// SHA-256 of the runbook's canonical JSON.
    pub hash: String,
    /// What each tool reference of the runbook resolved to: reference → action → registry id
    /// (a toolpack answers to no action and to `run`).
    pub tools: BTreeMap<String, BTreeMap<String, String>>,
    /// What each outcome's `next_runbook` resolved to: reference as written → runbook name (a
    /// name, or a v0 path relative to this runbook's file).
    pub next_runbooks: BTreeMap<String, String>,
}

impl RunbookEntry {
    /// The registry id a step's `tool` (and `action`) calls.
    pub fn tool_id(&self, reference: &str, action: Option<&str>) -> Option<&str> {
        let actions = self.tools.get(reference)?;
        actions.get(action.unwrap_or("")).map(String::as_str)
    }
}

/// An immutable, valid registry.
#[derive(Debug, Clone)]
pub struct Snapshot {
    pub(crate) root: PathBuf,
    pub(crate) packages: Vec<PackageSummary>,
    pub(crate) tools: BTreeMap<String, Arc<ToolDef>>,
    pub(crate) runbooks: BTreeMap<String, Arc<RunbookEntry>>,
    pub(crate) warnings: Vec<Diagnostic>,
    pub(crate) registry_hash: String,
    pub(crate) policy: Option<PolicyConfig>,
    /// The root manifest's `config.extensions`: extension name → the tool that runs it.
    pub(crate) extensions: BTreeMap<String, String>,
    /// The root manifest's `config.auth`: how people sign in to `jig serve`.
    pub(crate) auth: Option<jig_model::manifest::AuthConfig>,
    /// The root manifest's `config.audit.forward`.
    pub(crate) forward: Vec<jig_model::manifest::AuditForward>,
    pub(crate) publish: Option<String>,
    /// The root manifest's `config.audit.origin`, else `jig/<project name>`: the chain's name.
    pub(crate) origin: String,
    /// The root manifest's `notifications:`.
    pub(crate) notifications: Option<jig_model::manifest::Notifications>,
    /// The root manifest's upstream MCP servers that are valid, by name.
    pub(crate) mcp_servers: BTreeMap<String, UpstreamServer>,
    /// The policy layers above the project this process is under, strongest first.
    pub(crate) layers: Vec<jig_model::policy::Layer>,
}

/// An upstream MCP server of the project (`mcp_servers:`): how Jig starts it, and the hash its
/// discovered tool list must carry.
#[derive(Debug, Clone)]
pub struct UpstreamServer {
    /// The definition Jig starts it by (its tools' entries share its file and command).
    pub def: Arc<ToolDef>,
    /// [`crate::upstream::config_hash`] of its configuration.
    pub config: String,
    /// Whether a person on this machine asked for its tools with this configuration
    /// ([`crate::consent`]), and what they found is in `.jig/mcp/NAME.json`.
    pub discovered: bool,
    /// Its configuration, as the manifest gives it.
    pub settings: jig_model::mcp_server::McpServer,
}

impl Snapshot {
    pub(crate) fn new(
        root: PathBuf,
        packages: Vec<PackageSummary>,
        tools: BTreeMap<String, Arc<ToolDef>>,
        runbooks: BTreeMap<String, Arc<RunbookEntry>>,
        warnings: Vec<Diagnostic>,
        policy: Option<PolicyConfig>,
    ) -> Self {
        let mut parts: Vec<&[u8]> = Vec::with_capacity(2 * (tools.len() + runbooks.len()) + 2);
        parts.push(b"jig.registry.v1");
        for (id, tool) in &tools {
            parts.push(id.as_bytes());
            parts.push(tool.hash.as_bytes());
        }
        parts.push(b"runbooks");
        for (name, entry) in &runbooks {
            parts.push(name.as_bytes());
            parts.push(entry.hash.as_bytes());
        }
        let registry_hash = Sha256Hash::of_parts(parts).to_hex();
        Self {
            root,
            packages,
            tools,
            runbooks,
            warnings,
            registry_hash,
            policy,
            extensions: BTreeMap::new(),
            auth: None,
            forward: Vec::new(),
            publish: None,
            origin: "jig/project".to_owned(),
            notifications: None,
            mcp_servers: BTreeMap::new(),
            layers: Vec::new(),
        }
    }

    /// The project's upstream MCP servers (the root manifest's `mcp_servers:`), by name.
    pub fn mcp_servers(&self) -> &BTreeMap<String, UpstreamServer> {
        &self.mcp_servers
    }

    /// Where the audit is forwarded live (the root manifest's `config.audit.forward`).
    pub fn audit_forward(&self) -> &[jig_model::manifest::AuditForward] {
        &self.forward
    }

    /// Where `jig audit publish` writes the checkpoint (`config.audit.publish`).
    pub fn audit_publish(&self) -> Option<&str> {
        self.publish.as_deref()
    }

    /// The chain's name: `config.audit.origin`, else `jig/<project name>` (the origin line of
    /// its checkpoints, the source of its exported events).
    pub fn audit_origin(&self) -> &str {
        &self.origin
    }

    /// How people sign in to `jig serve` (the root manifest's `config.auth`).
    pub fn auth(&self) -> Option<&jig_model::manifest::AuthConfig> {
        self.auth.as_ref()
    }

    /// Who hears when something waits for a person (the manifest's `notifications:`).
    pub fn notifications(&self) -> Option<&jig_model::manifest::Notifications> {
        self.notifications.as_ref()
    }

    /// The registry tool that runs kernel/v0 extension `name` (the manifest's
    /// `config.extensions`).
    pub fn extension_runner(&self, name: &str) -> Option<&str> {
        self.extensions.get(name).map(String::as_str)
    }

    /// The project root.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The packages: root first, then required ones, std last.
    pub fn packages(&self) -> &[PackageSummary] {
        &self.packages
    }

    /// Every tool, sorted by id.
    pub fn list(&self) -> impl Iterator<Item = &Arc<ToolDef>> {
        self.tools.values()
    }

    /// The tools carrying `tag`, sorted by id.
    pub fn list_tagged<'a>(&'a self, tag: &'a str) -> impl Iterator<Item = &'a Arc<ToolDef>> {
        self.tools.values().filter(move |tool| tool.tags.iter().any(|t| t == tag))
    }

    /// One tool by id.
    pub fn get(&self, id: &str) -> Option<&Arc<ToolDef>> {
        self.tools.get(id)
    }

    /// How many tools.
    pub fn len(&self) -> usize {
        self.tools.len()
    }

    /// Whether there are no tools at all.
    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }

    /// Every runbook, sorted by name.
    pub fn runbooks(&self) -> impl Iterator<Item = &Arc<RunbookEntry>> {
        self.runbooks.values()
    }

    /// One runbook by reference name.
    pub fn runbook(&self, name: &str) -> Option<&Arc<RunbookEntry>> {
        self.runbooks.get(name)
    }

    /// Warnings of the load (the snapshot has no errors).
    pub fn warnings(&self) -> &[Diagnostic] {
        &self.warnings
    }

    /// The project's policy (its own manifest's `policy:`; required packages' do not apply).
    pub fn policy(&self) -> Option<&PolicyConfig> {
        self.policy.as_ref()
    }

    /// The policy layers above the project (machine, person), strongest first, as read with it.
    pub fn layers(&self) -> &[jig_model::policy::Layer] {
        &self.layers
    }

    /// SHA-256 over every tool's and runbook's hash, in name order.
    pub fn registry_hash(&self) -> &str {
        &self.registry_hash
    }
}

/// A load that found errors: no snapshot, only what is wrong.
#[derive(Debug, Clone)]
pub struct LoadFailure {
    /// The project root (diagnostic files are relative to it).
    pub root: PathBuf,
    /// Every problem, errors and warnings, sorted by file and position.
    pub diagnostics: Vec<Diagnostic>,
}

impl LoadFailure {
    /// The errors only.
    pub fn errors(&self) -> impl Iterator<Item = &Diagnostic> {
        self.diagnostics.iter().filter(|d| d.is_error())
    }
}

impl std::fmt::Display for LoadFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let count = self.errors().count();
        write!(f, "the project has {count} error(s)")?;
        if let Some(first) = self.errors().next() {
            write!(f, "; first: {}: {}", first.file.as_deref().unwrap_or("-"), first.message)?;
        }
        Ok(())
    }
}

impl std::error::Error for LoadFailure {}
