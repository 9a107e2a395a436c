//! Upstream MCP servers over Streamable HTTP (`mcp_servers: {NAME: {url, headers}}`): each
//! request a POST through Jig's HTTP client — the policy's network allow-list checked on every
//! hop and every resolved address, like `curl` — answered with JSON or a stream of events, in
//! one MCP session per URL (`Mcp-Session-Id`), initialized on first use and again when the
//! server forgets it (404). What the server says besides the answer is routed as over stdio:
//! progress to the call, `notifications/tools/list_changed` to whoever listens.

use std::collections::HashMap;
use std::sync::Arc;

use jig_exec::{Invocation, ToolError};
use jig_model::ErrorCode;
use jig_model::tool_def::GertExecution;
use reqwest::Method;
use reqwest::header::HeaderMap;
use serde_json::{Value, json};

use super::wire::{self, MCP_VERSION};
use crate::http_client::{self, Request};

/// One MCP session per server URL.
#[derive(Debug, Default)]
pub(super) struct Sessions {
    by_url: std::sync::Mutex<HashMap<String, Arc<tokio::sync::Mutex<Option<Session>>>>>,
}

/// What initializing a session gave.
#[derive(Debug, Clone)]
struct Session {
    id: Option<String>,
    info: Option<Value>,
}

/// A server at a URL, ready for requests.
pub(super) struct Remote {
    url: String,
    headers: HeaderMap,
    session: Session,
    slot: Arc<tokio::sync::Mutex<Option<Session>>>,
}

impl Sessions {
    /// The server `gert.connect` names, with a session (initialized now if it has none).
    pub(super) async fn open(
        &self,
        invocation: &Invocation<'_>,
        gert: &GertExecution,
    ) -> Result<Remote, ToolError> {
        let url = gert.connect.clone().unwrap_or_default();
        let passed =
            invocation.tool.env.as_ref().map(|e| e.passthrough.clone()).unwrap_or_default();
        let headers = headers(gert, &passed)?;
        let slot = {
            let mut by_url = self.by_url.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            Arc::clone(by_url.entry(url.clone()).or_default())
        };
        let mut held = slot.lock().await;
        let session = match held.as_ref() {
            Some(session) => session.clone(),
            None => {
                let session = initialize(invocation, &url, &headers).await?;
                *held = Some(session.clone());
                session
            }
        };
        drop(held);
        Ok(Remote { url, headers, session, slot })
    }
}

impl Remote {
    /// What the server said of itself when the session began.
    pub(super) fn info(&self) -> Option<Value> {
        self.session.info.clone()
    }

    /// `method` with `params`, answered; a session the server forgot is begun again once.
    pub(super) async fn request(
        &mut self,
        invocation: &Invocation<'_>,
        method: &str,
        params: Value,
    ) -> Result<Value, ToolError> {
        match self.send(invocation, method, &params).await {
            Err(Gone) => {
                let session = initialize(invocation, &self.url, &self.headers).await?;
                *self.slot.lock().await = Some(session.clone());
                self.session = session;
                self.send(invocation, method, &params).await.map_err(|Gone| {
                    ToolError::new(
                        ErrorCode::Http,
                        format!("`{}` forgot a session it had just begun", self.url),
                    )
                })?
            }
            Ok(answer) => answer,
        }
    }

    async fn send(
        &self,
        invocation: &Invocation<'_>,
        method: &str,
        params: &Value,
    ) -> Result<Result<Value, ToolError>, Gone> {
        let id = next_id();
        let body = json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params });
        let posted =
            post(invocation, &self.url, &self.headers, self.session.id.as_deref(), &body).await;
        let posted = match posted {
            Ok(posted) => posted,
            Err(error) => return Ok(Err(error)),
        };
        if posted.status == 404 && self.session.id.is_some() {
            return Err(Gone);
        }
        Ok(answer_of(invocation, &self.url, posted.status, &posted.messages, id))
    }
}

/// The server no longer knows the session.
struct Gone;

/// Request ids, unique in this process.
fn next_id() -> u64 {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
    NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

/// Begin a session: `initialize`, then `notifications/initialized`.
async fn initialize(
    invocation: &Invocation<'_>,
    url: &str,
    headers: &HeaderMap,
) -> Result<Session, ToolError> {
    let id = next_id();
    let body = json!({ "jsonrpc": "2.0", "id": id, "method": "initialize", "params": wire::initialize_params() });
    let posted = post(invocation, url, headers, None, &body).await?;
    let answer = answer_of(invocation, url, posted.status, &posted.messages, id)?;
    if let Some(error) = answer.get("error") {
        return Err(ToolError::new(
            ErrorCode::Shell,
            format!("MCP server `{url}` refused to initialize: {error}"),
        ));
    }
    let info = answer.pointer("/result/serverInfo").cloned();
    let session = Session { id: posted.session, info };
    let initialized = json!({ "jsonrpc": "2.0", "method": "notifications/initialized" });
    post(invocation, url, headers, session.id.as_deref(), &initialized).await?;
    Ok(session)
}

/// What the server answered a POST with.
struct Posted {
    status: u16,
    /// The session it gave (`Mcp-Session-Id`), if any.
    session: Option<String>,
    messages: Vec<Value>,
}

/// POST one message; what the server answered.
async fn post(
    invocation: &Invocation<'_>,
    url: &str,
    headers: &HeaderMap,
    session: Option<&str>,
    body: &Value,
) -> Result<Posted, ToolError> {
    let request = request(invocation, url, headers, session, body);
    let response =
        http_client::fetch(request, &invocation.policy.config().network, &invocation.cancel)
            .await?;
    let given = response.headers.get("mcp-session-id").and_then(Value::as_str).map(str::to_owned);
    Ok(Posted { status: response.status, session: given, messages: messages(&response)? })
}

fn request(
    invocation: &Invocation<'_>,
    url: &str,
    headers: &HeaderMap,
    session: Option<&str>,
    body: &Value,
) -> Request {
    let mut headers = headers.clone();
    let mut set = |name: &'static str, value: &str| {
        if let Ok(value) = value.parse() {
            headers.insert(name, value);
        }
    };
    set("content-type", "application/json");
    set("accept", "application/json, text/event-stream");
    // The revision is agreed by `initialize`; every request after it names it.
    if body.get("method").and_then(Value::as_str) != Some("initialize") {
        set("mcp-protocol-version", MCP_VERSION);
    }
    if let Some(session) = session {
        set("mcp-session-id", session);
    }
    Request {
        method: Method::POST,
        url: url.to_owned(),
        headers,
        body: Some(body.to_string()),
        max_bytes: wire::MOST_LINE_BYTES,
        timeout: invocation.timeout,
    }
}

/// The JSON-RPC messages of a response: its JSON body (one message or a batch), or the `data`
/// of each event of its event stream.
fn messages(response: &http_client::Response) -> Result<Vec<Value>, ToolError> {
    if response.truncated {
        return Err(ToolError::new(
            ErrorCode::Limit,
            format!(
                "`{}` answered with over {} MiB",
                response.url,
                wire::MOST_LINE_BYTES / (1024 * 1024)
            ),
        ));
    }
    let text = String::from_utf8_lossy(&response.body);
    let kind = response.headers.get("content-type").and_then(Value::as_str).unwrap_or_default();
    if kind.starts_with("text/event-stream") {
        return Ok(events(&text));
    }
    Ok(match serde_json::from_str::<Value>(&text) {
        Ok(Value::Array(batch)) => batch,
        Ok(message) => vec![message],
        Err(_) => Vec::new(),
    })
}

/// The `data` of each event of a server-sent event stream, as JSON.
fn events(text: &str) -> Vec<Value> {
    let mut out = Vec::new();
    let mut data = String::new();
    for line in text.lines().chain(std::iter::once("")) {
        if line.is_empty() {
            if let Ok(message) = serde_json::from_str(&data) {
                out.push(message);
            }
            data.clear();
        } else if let Some(value) = line.strip_prefix("data:") {
            if !data.is_empty() {
                data.push('\n');
            }
            data.push_str(value.strip_prefix(' ').unwrap_or(value));
        }
    }
    out
}

/// The answer to request `id` among `messages`; the others routed (progress to the call, a
/// change of tools to whoever listens).
fn answer_of(
    invocation: &Invocation<'_>,
    url: &str,
    status: u16,
    messages: &[Value],
    id: u64,
) -> Result<Value, ToolError> {
    for message in messages {
        wire::notice(message, Some(&invocation.events), &invocation.tool.source.file);
    }
    if let Some(answer) =
        messages.iter().find(|m| m.get("id") == Some(&json!(id)) && m.get("method").is_none())
    {
        return Ok(answer.clone());
    }
    Err(ToolError::new(
        ErrorCode::Http,
        if (200..300).contains(&status) {
            format!("`{url}` answered {status} without an answer to the request")
        } else {
            format!("`{url}` answered {status}")
        },
    )
    .with_details(json!({ "status": status })))
}

/// The server's headers, each `${NAME}` in a value taken from Jig's environment — only a
/// variable the server's `env_from` names (a token kept out of the manifest).
fn headers(gert: &GertExecution, passed: &[String]) -> Result<HeaderMap, ToolError> {
    let mut out = HeaderMap::new();
    for (name, value) in &gert.headers {
        let mut text = String::new();
        let mut rest = value.as_str();
        while let Some(start) = rest.find("${") {
            let end = rest[start..]
                .find('}')
                .map(|e| start + e)
                .ok_or_else(|| header_error(name, "has a `${` without its `}`"))?;
            let variable = &rest[start + 2..end];
            if !passed.iter().any(|p| p == variable) {
                return Err(header_error(
                    name,
                    &format!(
                        "names `${{{variable}}}`, which the server's `env_from` does not pass"
                    ),
                ));
            }
            let found = std::env::var(variable).map_err(|_| {
                header_error(name, &format!("names `${{{variable}}}`, which is not set"))
            })?;
            text.push_str(&rest[..start]);
            text.push_str(&found);
            rest = &rest[end + 1..];
        }
        text.push_str(rest);
        http_client::add_header(&mut out, name, &text)?;
    }
    Ok(out)
}

fn header_error(name: &str, why: &str) -> ToolError {
    ToolError::new(ErrorCode::ValidationFail, format!("the server's header `{name}` {why}"))
        .with_details(json!({ "header": name }))
}

/// Whether `gert` speaks to a server over HTTP rather than one Jig starts.
pub(super) fn is_remote(gert: &GertExecution) -> bool {
    gert.connect.as_deref().is_some_and(|c| c.starts_with("http://") || c.starts_with("https://"))
}

#[cfg(test)]
mod tests {
    use super::events;

    #[test]
    fn each_event_of_a_stream_is_one_message() {
        let stream = "event: message\nid: 1\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\"}\n\n: a comment\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":7,\ndata: \"result\":{}}\n";
        let found = events(stream);
        assert_eq!(found.len(), 2, "{found:?}");
        assert_eq!(found[0]["method"], "notifications/progress");
        assert_eq!(found[1]["id"], 7);
    }
}
