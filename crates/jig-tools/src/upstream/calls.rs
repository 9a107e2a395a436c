//! What a tool asks of a persistent server: a `jsonrpc` method, an MCP `tools/call`, the MCP
//! `tools/list` of discovery. The pool ([`super::pool`]) finds or starts the server; the server
//! ([`super::server`]) carries one request; this is the protocol between them.

use std::sync::Arc;
use std::time::Instant;

use jig_model::ErrorCode;
use jig_model::tool_def::GertExecution;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

use super::pool::Servers;
use super::remote;
use super::server::Server;
use crate::redact::redact;
use jig_exec::{Invocation, Output, ToolError};

/// At most this many pages of `tools/list` (a server paging forever must not hold Jig).
const MOST_PAGES: usize = 50;

impl Servers {
    /// A `jsonrpc` action: `method` with the arguments as params.
    pub(crate) async fn jsonrpc(
        &self,
        invocation: &Invocation<'_>,
        gert: &GertExecution,
    ) -> Result<Output, ToolError> {
        let method = gert.method.clone().unwrap_or_default();
        let answer = if let Some(address) = &gert.connect {
            tcp_call(invocation, address, &method).await?
        } else {
            let server = self.session(invocation, gert, false).await?;
            server
                .request(&method, invocation.args.clone(), deadline(invocation), &invocation.events)
                .await?
        };
        if let Some(error) = answer.get("error") {
            return Err(ToolError::new(
                ErrorCode::Shell,
                format!(
                    "`{method}` failed: {}",
                    error.get("message").and_then(Value::as_str).unwrap_or("error")
                ),
            )
            .with_details(json!({ "error": error })));
        }
        let mut data = answer.get("result").cloned().unwrap_or(Value::Null);
        redact(gert, &mut data)?;
        Ok(Output::data(data))
    }

    /// An `mcp` action: `tools/call` of the server's tool.
    pub(crate) async fn mcp(
        &self,
        invocation: &Invocation<'_>,
        gert: &GertExecution,
    ) -> Result<Output, ToolError> {
        let name = gert.mcp_tool.clone().unwrap_or_default();
        let mut peer = self.peer(invocation, gert).await?;
        let mut params = json!({
            "name": name,
            "arguments": invocation.args,
            "_meta": { "progressToken": invocation.events.request_id() },
        });
        // The call's trace goes on into the server (W3C trace context in `_meta`, SEP-414).
        if let Some(traceparent) = &invocation.traceparent {
            params["_meta"]["traceparent"] = json!(traceparent);
        }
        let answer = peer.request(invocation, "tools/call", params).await?;
        drop(peer);
        if let Some(error) = answer.get("error") {
            return Err(ToolError::new(
                ErrorCode::Shell,
                format!(
                    "MCP tool `{name}` failed: {}",
                    error.get("message").and_then(Value::as_str).unwrap_or("error")
                ),
            )
            .with_details(json!({ "error": error })));
        }
        let result = answer.get("result").cloned().unwrap_or(Value::Null);
        let text: Vec<&str> = result
            .get("content")
            .and_then(Value::as_array)
            .map(|c| c.iter().filter_map(|part| part.get("text").and_then(Value::as_str)).collect())
            .unwrap_or_default();
        if result.get("isError") == Some(&Value::Bool(true)) {
            return Err(ToolError::new(
                ErrorCode::Shell,
                format!("MCP tool `{name}` reported an error: {}", text.join(" ")),
            ));
        }
        let mut data = match result.get("structuredContent") {
            Some(structured) => structured.clone(),
            None => match text.as_slice() {
                [single] => serde_json::from_str::<Value>(single)
                    .ok()
                    .filter(Value::is_object)
                    .unwrap_or_else(|| json!({ "content": result["content"] })),
                _ => json!({ "content": result.get("content").cloned().unwrap_or(Value::Null) }),
            },
        };
        redact(gert, &mut data)?;
        Ok(Output::data(data))
    }

    /// The server's tools, every page of `tools/list`, with what it said of itself:
    /// `{"tools": [...], "serverInfo": {...}}`. The process stays for the calls that follow.
    pub(crate) async fn list_tools(
        &self,
        invocation: &Invocation<'_>,
        gert: &GertExecution,
    ) -> Result<Output, ToolError> {
        let mut peer = self.peer(invocation, gert).await?;
        let mut tools = Vec::new();
        let mut cursor: Option<Value> = None;
        for _ in 0..MOST_PAGES {
            let params = match &cursor {
                Some(cursor) => json!({ "cursor": cursor }),
                None => json!({}),
            };
            let answer = peer.request(invocation, "tools/list", params).await?;
            if let Some(error) = answer.get("error") {
                return Err(ToolError::new(
                    ErrorCode::Shell,
                    format!(
                        "MCP server `{}` would not list its tools: {}",
                        invocation.tool.id,
                        error.get("message").and_then(Value::as_str).unwrap_or("error")
                    ),
                ));
            }
            let result = &answer["result"];
            tools.extend(result["tools"].as_array().cloned().unwrap_or_default());
            cursor = result.get("nextCursor").filter(|c| !c.is_null()).cloned();
            if cursor.is_none() {
                break;
            }
        }
        let info = peer.info();
        Ok(Output::data(json!({ "tools": tools, "serverInfo": info })))
    }
}

/// The server a call speaks to: one Jig started, or one at a URL.
enum Peer {
    Started(Arc<Server>),
    Remote(Box<remote::Remote>),
}

impl Peer {
    async fn request(
        &mut self,
        invocation: &Invocation<'_>,
        method: &str,
        params: Value,
    ) -> Result<Value, ToolError> {
        match self {
            Self::Started(server) => {
                server.request(method, params, deadline(invocation), &invocation.events).await
            }
            Self::Remote(remote) => remote.request(invocation, method, params).await,
        }
    }

    /// What the server said of itself in `initialize`.
    fn info(&self) -> Option<Value> {
        match self {
            Self::Started(server) => server.info.clone(),
            Self::Remote(remote) => remote.info(),
        }
    }
}

impl Servers {
    /// The MCP server `invocation`'s tool speaks to, ready for requests.
    async fn peer(
        &self,
        invocation: &Invocation<'_>,
        gert: &GertExecution,
    ) -> Result<Peer, ToolError> {
        if remote::is_remote(gert) {
            return Ok(Peer::Remote(Box::new(self.remote.open(invocation, gert).await?)));
        }
        Ok(Peer::Started(self.session(invocation, gert, true).await?))
    }
}

fn deadline(invocation: &Invocation<'_>) -> Instant {
    Instant::now() + invocation.timeout
}

/// A `jsonrpc` action on a server already listening at `address` (`host:port`), checked like any
/// URL against the policy.
async fn tcp_call(
    invocation: &Invocation<'_>,
    address: &str,
    method: &str,
) -> Result<Value, ToolError> {
    let network = &invocation.policy.config().network;
    jig_policy::network::check_url(&format!("http://{address}/"), network).map_err(|d| {
        ToolError::new(ErrorCode::Policy, format!("`{address}`: {}", d.reason))
            .with_details(json!({ "rule": d.rule }))
    })?;
    let addresses: Vec<std::net::SocketAddr> = tokio::net::lookup_host(address)
        .await
        .map_err(|e| ToolError::new(ErrorCode::Http, format!("cannot resolve `{address}`: {e}")))?
        .collect();
    for resolved in &addresses {
        jig_policy::network::check_resolved(resolved.ip(), network).map_err(|d| {
            ToolError::new(
                ErrorCode::Policy,
                format!("`{address}` resolves to {}: {}", resolved.ip(), d.reason),
            )
            .with_details(json!({ "rule": d.rule }))
        })?;
    }
    let connect = tokio::net::TcpStream::connect(addresses.as_slice());
    let stream = tokio::time::timeout(invocation.timeout, connect)
        .await
        .map_err(|_| {
            ToolError::new(ErrorCode::Timeout, format!("connecting to `{address}` timed out"))
        })?
        .map_err(|e| {
            ToolError::new(ErrorCode::Shell, format!("cannot connect to `{address}`: {e}"))
        })?;
    let (read, mut write) = stream.into_split();
    let mut line =
        json!({ "jsonrpc": "2.0", "id": 1, "method": method, "params": invocation.args })
            .to_string();
    line.push('\n');
    write
        .write_all(line.as_bytes())
        .await
        .map_err(|e| ToolError::new(ErrorCode::Shell, format!("`{address}`: {e}")))?;
    let mut lines = BufReader::new(read).lines();
    let answer = tokio::time::timeout(invocation.timeout, lines.next_line())
        .await
        .map_err(|_| {
            ToolError::new(ErrorCode::Timeout, format!("`{address}` did not answer in time"))
        })?
        .map_err(|e| ToolError::new(ErrorCode::Shell, format!("`{address}`: {e}")))?
        .ok_or_else(|| {
            ToolError::new(ErrorCode::Shell, format!("`{address}` closed the connection"))
        })?;
    serde_json::from_str(&answer).map_err(|e| {
        ToolError::new(ErrorCode::Shell, format!("`{address}` answered with bad JSON: {e}"))
    })
}
