//! `mcp_servers:` in the manifest: the upstream MCP servers a project uses, in the shape of the
//! `mcpServers` object of common MCP client configurations (`command`, `args`, `env`; or `url`
//! and `headers`), plus what Jig needs to govern them: the grants of the server's sandbox and
//! corrections of what its tools say about themselves. Each server's tools become registry
//! entries `NAME.TOOL`.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::toolpack::{ENV_NAME_PATTERN, SideEffect, loader_variable};

/// Pattern of a server's name: it becomes the first part of its tools' ids.
pub const SERVER_NAME_PATTERN: &str = r"^[a-z][a-z0-9_-]{0,39}$";

/// One upstream server.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct McpServer {
    /// The program that starts a stdio server (found on Jig's `PATH`, or a path).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    /// Its arguments.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<String>,
    /// Variables set for it (nothing of Jig's own environment is inherited).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    #[schemars(extend("propertyNames" = { "pattern": ENV_NAME_PATTERN }))]
    pub env: BTreeMap<String, String>,
    /// Variables copied from Jig's environment (a key kept out of the manifest).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(inner(pattern(ENV_NAME_PATTERN)))]
    pub env_from: Vec<String>,
    /// The address of a Streamable HTTP server (instead of `command`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// Headers sent to it.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub headers: BTreeMap<String, String>,
    /// What the server's sandbox may reach besides the system and its program.
    #[serde(default, skip_serializing_if = "Grants::is_empty")]
    pub grants: Grants,
    /// Corrections per tool (servers often describe their tools wrongly).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub tools: BTreeMap<String, ToolCorrection>,
    /// Tools of the server left out of the registry.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub exclude: Vec<String>,
}

/// `grants`: what a server's sandbox may reach.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Grants {
    /// Workspace paths it may read and write (relative; `.` is the whole workspace).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub paths: Vec<String>,
    /// Workspace paths it may only read.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub read: Vec<String>,
    /// Directories outside the workspace it may read: where the server itself is installed
    /// (an npm or Python environment), absolute or `~/`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub programs: Vec<String>,
    /// The network (the policy must still allow `sandbox.network: unfiltered`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub network: bool,
}

impl Grants {
    /// Nothing granted.
    pub fn is_empty(&self) -> bool {
        self.paths.is_empty() && self.read.is_empty() && self.programs.is_empty() && !self.network
    }
}

/// What Jig believes about one of a server's tools instead of its annotations.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ToolCorrection {
    /// Its side effects (instead of those its annotations imply).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub side_effects: Option<Vec<SideEffect>>,
}

impl McpServer {
    /// What is wrong with it, for the loader: `(field, message)`.
    pub fn problems(&self) -> Vec<(&'static str, String)> {
        let mut out = Vec::new();
        match (&self.command, &self.url) {
            (None, None) => {
                out.push(("command", "name a `command` (stdio) or a `url` (HTTP)".into()))
            }
            (Some(_), Some(_)) => {
                out.push(("url", "a server has a `command` or a `url`, not both".into()));
            }
            (Some(command), None) if command.trim().is_empty() => {
                out.push(("command", "is empty".into()));
            }
            (None, Some(url)) if !(url.starts_with("https://") || url.starts_with("http://")) => {
                out.push(("url", format!("`{url}` is not an http(s) address")));
            }
            _ => {}
        }
        if self.url.is_some() && !(self.args.is_empty() && self.env.is_empty()) {
            out.push(("args", "`args` and `env` are for a `command`".into()));
        }
        if self.command.is_some() && !self.headers.is_empty() {
            out.push(("headers", "`headers` are for a `url`".into()));
        }
        for name in self.env.keys().chain(&self.env_from) {
            if !env_name(name) {
                out.push(("env", format!("`{name}` is not a variable name")));
            } else if loader_variable(name) {
                out.push((
                    "env",
                    format!("`{name}` controls how programs are loaded; it is never passed"),
                ));
            }
        }
        let granted = self.grants.paths.iter().map(|p| (p, true));
        for (path, write) in granted.chain(self.grants.read.iter().map(|p| (p, false))) {
            if path.starts_with('/') || path.split('/').any(|part| part == "..") {
                out.push(("grants", format!("`{path}` is not a path inside the workspace")));
            } else if let Some(what) = crate::protected_path::protected_by_name(path, write) {
                out.push(("grants", format!("`{path}` is {what}: no grant reaches it")));
            }
        }
        for path in &self.grants.programs {
            if !(path.starts_with('/') || path.starts_with("~/"))
                || path.split('/').any(|p| p == "..")
            {
                out.push(("grants", format!("`{path}` is not an absolute directory (or `~/…`)")));
            } else if whole_machine_or_home(path) {
                out.push((
                    "grants",
                    format!(
                        "`{path}` is the whole machine or home directory, not where a server is installed"
                    ),
                ));
            }
        }
        out
    }
}

/// `/`, `~` or the home directory itself (or above it): `programs` names where a server is
/// installed, and one of these would hand it every key and history file of the person.
fn whole_machine_or_home(path: &str) -> bool {
    let trimmed = path.trim_end_matches('/');
    if trimmed.is_empty() || trimmed == "~" {
        return true;
    }
    let home = std::env::var("HOME").unwrap_or_default();
    let home = home.trim_end_matches('/');
    !home.is_empty() && (home == trimmed || home.starts_with(&format!("{trimmed}/")))
}

/// Whether `name` is a server name Jig accepts.
pub fn server_name(name: &str) -> bool {
    let mut chars = name.chars();
    matches!(chars.next(), Some('a'..='z'))
        && name.len() <= 40
        && chars.all(|c| matches!(c, 'a'..='z' | '0'..='9' | '_' | '-'))
}

fn env_name(name: &str) -> bool {
    let mut chars = name.chars();
    matches!(chars.next(), Some('A'..='Z' | 'a'..='z' | '_'))
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_server_is_a_command_or_a_url_and_nothing_loads_code() {
        let stdio = McpServer { command: Some("npx".into()), ..McpServer::default() };
        assert!(stdio.problems().is_empty());
        let http =
            McpServer { url: Some("https://mcp.example.com/mcp".into()), ..McpServer::default() };
        assert!(http.problems().is_empty());
        let fields = |s: &McpServer| s.problems().into_iter().map(|(f, _)| f).collect::<Vec<_>>();
        assert_eq!(fields(&McpServer::default()), ["command"]);
        let both = McpServer { url: Some("http://x".into()), ..stdio.clone() };
        assert_eq!(fields(&both), ["url"]);
        let preload = McpServer {
            env: [("LD_PRELOAD".to_owned(), "/tmp/x.so".to_owned())].into(),
            ..stdio.clone()
        };
        assert_eq!(fields(&preload), ["env"]);
        let outside = McpServer {
            grants: Grants { paths: vec!["../etc".into()], ..Grants::default() },
            ..stdio
        };
        assert_eq!(fields(&outside), ["grants"]);
        let home = std::env::var("HOME").expect("HOME");
        for too_wide in ["/".to_owned(), "~/".to_owned(), home.clone(), format!("{home}/")] {
            let wide = McpServer {
                command: Some("npx".into()),
                grants: Grants { programs: vec![too_wide.clone()], ..Grants::default() },
                ..McpServer::default()
            };
            assert_eq!(fields(&wide), ["grants"], "{too_wide}");
        }
        let installed = McpServer {
            command: Some("npx".into()),
            grants: Grants { programs: vec![format!("{home}/.cache/mcp")], ..Grants::default() },
            ..McpServer::default()
        };
        assert!(installed.problems().is_empty());
        assert!(
            server_name("fs") && server_name("git-2") && !server_name("Fs") && !server_name("a.b")
        );
    }
}
