//! A server's side of the pipe: one task reads everything it writes on stdout and routes it —
//! an answer to the request with its id (so several calls can be in flight on one server), a
//! progress notification to the call whose token it names, `notifications/tools/list_changed`
//! to whoever listens ([`tools_changed`]), and a request of the server's own declined. When the
//! server exits or sends a message over the limit, every waiting call is told at once.

use std::collections::HashMap;
use std::sync::{Arc, LazyLock, Mutex, PoisonError};

use jig_exec::Events;
use jig_model::ErrorCode;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{ChildStdin, ChildStdout};
use tokio::sync::oneshot;

/// The longest message a server may send (a line of JSON-RPC): a server answering more is
/// stopped, not read into memory whole.
pub(super) const MOST_LINE_BYTES: usize = 16 * 1024 * 1024;

/// MCP protocol revision Jig speaks to servers, over stdio and over HTTP.
pub(super) const MCP_VERSION: &str = "2025-06-18";

/// The params of Jig's `initialize`: the revision, no capabilities, and who it is.
pub(super) fn initialize_params() -> Value {
    json!({
        "protocolVersion": MCP_VERSION,
        "capabilities": {},
        "clientInfo": { "name": "jig", "version": env!("CARGO_PKG_VERSION") },
    })
}

/// Tool files whose server said its tools changed.
static CHANGED: LazyLock<tokio::sync::broadcast::Sender<String>> =
    LazyLock::new(|| tokio::sync::broadcast::channel(64).0);

/// Hear the tool file (`ToolDef::source.file`) of each server that sends
/// `notifications/tools/list_changed`, to ask it for its tools again.
pub fn tools_changed() -> tokio::sync::broadcast::Receiver<String> {
    CHANGED.subscribe()
}

/// Why a server can answer no more.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Ended {
    /// Its stdout closed: it exited.
    Exited,
    /// It sent a message over [`MOST_LINE_BYTES`].
    TooLarge,
    /// A call to it went unanswered until its deadline, and it was stopped.
    Stopped,
}

/// A call waiting for its answer.
struct Waiting {
    answer: oneshot::Sender<Result<Value, Ended>>,
    events: Events,
    /// The progress token it sent, if any.
    token: Option<String>,
}

/// The calls waiting on one server, and whether it ended.
#[derive(Default)]
pub(super) struct Routes {
    waiting: Mutex<HashMap<u64, Waiting>>,
    ended: Mutex<Option<Ended>>,
}

impl std::fmt::Debug for Routes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Routes").field("ended", &self.ended()).finish_non_exhaustive()
    }
}

impl Routes {
    /// Wait for the answer to request `id`; why not, when the server has ended already.
    pub(super) fn expect(
        &self,
        id: u64,
        events: &Events,
        token: Option<String>,
    ) -> Result<oneshot::Receiver<Result<Value, Ended>>, Ended> {
        // Checked under the table's lock, as `end` drains it under that lock: a call is
        // either drained or refused, never left waiting.
        let mut waiting = self.waiting.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(ended) = self.ended() {
            return Err(ended);
        }
        let (answer, receiver) = oneshot::channel();
        waiting.insert(id, Waiting { answer, events: events.clone(), token });
        Ok(receiver)
    }

    /// Stop waiting for `id` (it timed out, or could not be sent).
    pub(super) fn forget(&self, id: u64) {
        self.waiting.lock().unwrap_or_else(PoisonError::into_inner).remove(&id);
    }

    pub(super) fn ended(&self) -> Option<Ended> {
        *self.ended.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The server can answer no more: tell every waiting call why.
    pub(super) fn end(&self, why: Ended) {
        let mut waiting = self.waiting.lock().unwrap_or_else(PoisonError::into_inner);
        self.ended.lock().unwrap_or_else(PoisonError::into_inner).get_or_insert(why);
        for (_, call) in waiting.drain() {
            let _ = call.answer.send(Err(why));
        }
    }

    /// Route one message the server wrote.
    fn route(&self, message: &Value, tool_file: &str) -> Option<Value> {
        let method = message.get("method").and_then(Value::as_str);
        match (message.get("id"), method) {
            (Some(id), None) => {
                let waiting = id.as_u64().and_then(|id| {
                    self.waiting.lock().unwrap_or_else(PoisonError::into_inner).remove(&id)
                });
                if let Some(call) = waiting {
                    let _ = call.answer.send(Ok(message.clone()));
                }
                None
            }
            // The server asks something of Jig (sampling, roots, elicitation): Jig serves it
            // nothing, and says so.
            (Some(id), Some(_)) => Some(
                json!({ "jsonrpc": "2.0", "id": id, "error": { "code": -32601, "message": "Jig serves no requests" } }),
            ),
            (None, Some("notifications/progress")) => {
                let token = message["params"]["progressToken"].as_str()?;
                let waiting = self.waiting.lock().unwrap_or_else(PoisonError::into_inner);
                let call = waiting.values().find(|c| c.token.as_deref() == Some(token))?;
                notice(message, Some(&call.events), tool_file);
                None
            }
            (None, Some(_)) => {
                notice(message, None, tool_file);
                None
            }
            _ => None,
        }
    }
}

/// What a notification of the server's tells: progress of the call `events` reports for, or
/// that its tools changed (heard through [`tools_changed`]); other notifications are dropped.
pub(super) fn notice(message: &Value, events: Option<&Events>, tool_file: &str) {
    let params = &message["params"];
    match message.get("method").and_then(Value::as_str) {
        Some("notifications/progress") => {
            let Some(events) = events else { return };
            let pct = params["progress"]
                .as_f64()
                .zip(params["total"].as_f64())
                .map(|(p, t)| if t > 0.0 { p / t * 100.0 } else { p });
            events.progress(pct, params["message"].as_str().unwrap_or_default());
        }
        Some("notifications/tools/list_changed") => {
            let _ = CHANGED.send(tool_file.to_owned());
        }
        _ => {}
    }
}

/// Read the server's stdout until it ends, routing each message; what the server must be
/// answered (its own requests) is written to `stdin`.
pub(super) fn read(
    mut stdout: BufReader<ChildStdout>,
    stdin: Arc<tokio::sync::Mutex<ChildStdin>>,
    routes: Arc<Routes>,
    tool_file: String,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let why = loop {
            match bounded_line(&mut stdout, MOST_LINE_BYTES).await {
                Ok(Some(line)) => {
                    let Ok(message) = serde_json::from_str::<Value>(&line) else { continue };
                    if let Some(reply) = routes.route(&message, &tool_file) {
                        let mut line = reply.to_string();
                        line.push('\n');
                        let _ = stdin.lock().await.write_all(line.as_bytes()).await;
                    }
                }
                Err(error) if error.kind() == std::io::ErrorKind::InvalidData => {
                    break Ended::TooLarge;
                }
                Ok(None) | Err(_) => break Ended::Exited,
            }
        };
        routes.end(why);
    })
}

impl Ended {
    /// The error a call waiting on server `name` gets.
    pub(super) fn error(self, name: &str) -> jig_exec::ToolError {
        match self {
            Self::Exited => {
                jig_exec::ToolError::new(ErrorCode::Shell, format!("server `{name}` exited"))
            }
            Self::TooLarge => jig_exec::ToolError::new(
                ErrorCode::Limit,
                format!(
                    "server `{name}` sent a message over {} MiB; it was stopped",
                    MOST_LINE_BYTES / (1024 * 1024)
                ),
            ),
            Self::Stopped => jig_exec::ToolError::new(
                ErrorCode::Shell,
                format!("server `{name}` was stopped: a call to it went unanswered"),
            ),
        }
    }
}

/// The next line of `reader` without its newline; `None` at the end; `InvalidData` once a line
/// grows past `most` bytes (what was read of it is dropped).
pub(super) async fn bounded_line(
    reader: &mut BufReader<ChildStdout>,
    most: usize,
) -> std::io::Result<Option<String>> {
    let mut line = Vec::new();
    loop {
        let available = reader.fill_buf().await?;
        if available.is_empty() {
            return Ok((!line.is_empty()).then(|| String::from_utf8_lossy(&line).into_owned()));
        }
        if let Some(end) = available.iter().position(|&b| b == b'\n') {
            line.extend_from_slice(&available[..end]);
            reader.consume(end + 1);
            return Ok(Some(String::from_utf8_lossy(&line).into_owned()));
        }
        let taken = available.len();
        line.extend_from_slice(available);
        reader.consume(taken);
        if line.len() > most {
            return Err(std::io::Error::new(std::io::ErrorKind::InvalidData, "line too long"));
        }
    }
}
