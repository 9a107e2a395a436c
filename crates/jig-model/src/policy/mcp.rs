//! `policy.mcp`: what `jig mcp` shows its clients — which tools, which resources, and how long
//! an agent's call waits for a person's approval.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// `mcp`: what `jig mcp` shows its clients.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct McpPolicy {
    /// List the tools the policy denies outright too (for debugging a policy; an agent is
    /// otherwise not shown what it can never call).
    #[serde(default)]
    pub list_denied: bool,
    /// Ask the person at the client to approve a call through MCP elicitation when the client
    /// supports it (default on); off, a call needing approval answers with the approval's id.
    #[serde(default = "super::yes")]
    pub elicit_approvals: bool,
    /// How long a call that waits for approval holds the agent's request open for a decision
    /// made elsewhere (the workbench, the CLI, another instance), in seconds (default 300; 0
    /// answers at once with the approval's id). Approved, it runs and answers with its result;
    /// denied, it answers with the reviewer's reason. The client's cancellation ends the wait.
    #[serde(default = "wait_for_approval")]
    #[schemars(range(max = 86400))]
    pub wait_for_approval_seconds: u64,
    /// Names the MCP clients see, by tool id (default: the id). For clients whose own rules
    /// refuse dots in tool names, or to keep a name agents already use.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub names: std::collections::BTreeMap<String, String>,
    /// Resources served besides the audit's own (`jig://runs/…`), each read by calling a tool
    /// with no side effects: through the policy and into the audit like any call. A `uri` with
    /// `{name}` parts is a template; each part becomes the tool's argument of that name.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub resources: Vec<McpResource>,
    /// How long one request's event stream over Streamable HTTP stays open (a duration such as
    /// `30s`; default: until the answer). Past it, Jig closes the stream and the client reads
    /// the rest by reconnecting with `Last-Event-ID` (MCP's SSE polling), so a call that waits
    /// long (for an approval, a job) holds no connection through proxies that cut idle ones.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stream_hold: Option<String>,
}

/// One entry of `mcp.resources`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct McpResource {
    /// The resource's URI (`scheme://…`), or a template whose `{name}` parts match one path
    /// segment each (`tickets://{id}/summary`).
    pub uri: String,
    /// The tool that reads it (its id). It must declare no side effects but `read` or `none`.
    pub tool: String,
    /// Arguments the tool always gets, besides the template's parts.
    #[serde(default, skip_serializing_if = "serde_json::Map::is_empty")]
    pub arguments: serde_json::Map<String, serde_json::Value>,
    /// A short name (default: the URI).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// What it holds, for the agent choosing what to read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The media type of its text (default: `application/json` for a tool's JSON result,
    /// `text/plain` for text it returns as content); binary content keeps its own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
}

impl McpResource {
    /// The names of the template's `{name}` parts, in order (none for a plain URI).
    pub fn parts(&self) -> Vec<&str> {
        self.uri
            .split('{')
            .skip(1)
            .filter_map(|rest| rest.split_once('}').map(|(name, _)| name))
            .collect()
    }

    /// The values of the template's parts if `uri` is one of its URIs (a plain URI: itself,
    /// with no parts). A part matches one non-empty path segment.
    pub fn matches(&self, uri: &str) -> Option<Vec<(String, String)>> {
        let mut values = Vec::new();
        let mut rest = uri;
        let mut template = self.uri.as_str();
        loop {
            let Some(open) = template.find('{') else {
                return (rest == template).then_some(values);
            };
            rest = rest.strip_prefix(&template[..open])?;
            let close = open + template[open..].find('}')?;
            let name = &template[open + 1..close];
            template = &template[close + 1..];
            // A part ends where the template's next fixed text starts (or at the next `/`).
            let literal_end = template.find('{').unwrap_or(template.len());
            let next = &template[..literal_end];
            let end = match next.chars().next() {
                Some(c) => rest.find(c)?,
                None => rest.find('/').unwrap_or(rest.len()),
            };
            let value = &rest[..end];
            if value.is_empty() || value.contains('/') {
                return None;
            }
            values.push((name.to_owned(), value.to_owned()));
            rest = &rest[end..];
        }
    }
}

impl Default for McpPolicy {
    fn default() -> Self {
        Self {
            list_denied: false,
            elicit_approvals: true,
            wait_for_approval_seconds: wait_for_approval(),
            names: Default::default(),
            resources: Vec::new(),
            stream_hold: None,
        }
    }
}

impl McpPolicy {
    pub(crate) fn is_default(&self) -> bool {
        !self.list_denied
            && self.elicit_approvals
            && self.wait_for_approval_seconds == wait_for_approval()
            && self.names.is_empty()
            && self.resources.is_empty()
            && self.stream_hold.is_none()
    }

    /// `stream_hold` as a duration, when set and valid (the loader refuses an invalid one).
    pub fn stream_hold(&self) -> Option<std::time::Duration> {
        self.stream_hold.as_deref().and_then(crate::duration::parse_duration)
    }
}

fn wait_for_approval() -> u64 {
    300
}
