//! Persistent servers for the `jsonrpc` and `mcp` transports (kept in `pool.rs`), spoken to
//! with newline-delimited JSON-RPC 2.0 (the MCP stdio framing), several calls in flight on one
//! server (`wire.rs` routes the answers). What a server writes on stderr is kept (its last
//! lines), to say why it failed.

use std::collections::VecDeque;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use jig_model::ErrorCode;
use jig_model::tool_def::GertExecution;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStderr, ChildStdin, Command};

use super::wire;
use jig_exec::{Events, Invocation, ToolError};

/// How many of the last lines a server wrote on stderr are kept, and how long each may be.
const STDERR_LINES: usize = 20;
const STDERR_LINE_BYTES: usize = 500;

/// How long a server gets to start when its tool says nothing.
const DEFAULT_STARTUP: Duration = Duration::from_secs(10);

/// One running server. Calls share it: each request has its own id, and the server's answers
/// are routed back by it ([`wire`]), so a slow call holds no other.
#[derive(Debug)]
pub(super) struct Server {
    child: std::sync::Mutex<Child>,
    stdin: Arc<tokio::sync::Mutex<ChildStdin>>,
    routes: Arc<wire::Routes>,
    next_id: AtomicU64,
    name: String,
    /// Whether it speaks MCP (a call that times out is then cancelled by name).
    mcp: bool,
    /// The server's temporary directory, removed with it.
    _scratch: jig_exec::confine::Scratch,
    /// What it said of itself in `initialize` (`serverInfo`).
    pub(super) info: Option<Value>,
    /// The last lines it wrote on stderr.
    stderr: Arc<std::sync::Mutex<VecDeque<String>>>,
    /// The workspace it runs in (what its grants are relative to).
    root: std::path::PathBuf,
    reader: tokio::task::JoinHandle<()>,
}

impl Drop for Server {
    fn drop(&mut self) {
        self.reader.abort();
    }
}

/// Read the server's first lines until one holds `signal` (within `wait`): refused when it
/// exits first or says nothing in time.
async fn wait_until_ready(
    stdout: &mut BufReader<tokio::process::ChildStdout>,
    signal: &str,
    wait: Duration,
    program: &str,
) -> Result<(), ToolError> {
    let until = Instant::now() + wait;
    loop {
        let remaining = until.saturating_duration_since(Instant::now());
        let line =
            tokio::time::timeout(remaining, wire::bounded_line(stdout, wire::MOST_LINE_BYTES))
                .await;
        match line {
            Ok(Ok(Some(line))) if line.contains(signal) => break,
            Ok(Ok(Some(_))) => {}
            Err(_) => {
                return Err(ToolError::new(
                    ErrorCode::Timeout,
                    format!("server `{program}` did not say it was ready in time"),
                ));
            }
            Ok(Ok(None) | Err(_)) => {
                return Err(ToolError::new(
                    ErrorCode::Shell,
                    format!("server `{program}` exited before it was ready"),
                ));
            }
        }
    }
    Ok(())
}

impl Server {
    pub(super) async fn start(
        invocation: &Invocation<'_>,
        gert: &GertExecution,
        argv: &[String],
        mcp: bool,
    ) -> Result<Self, ToolError> {
        let (program, args) = argv.split_first().ok_or_else(|| {
            ToolError::new(
                ErrorCode::Internal,
                format!("`{}` has no server to start", invocation.tool.id),
            )
        })?;
        let resolved = jig_exec::process::find_program(program).ok_or_else(|| {
            ToolError::new(
                ErrorCode::Shell,
                format!("`{}` needs `{program}`, which was not found on PATH", invocation.tool.id),
            )
        })?;
        let mut env = jig_exec::host::inherited(&["PATH", "LANG"]);
        env.extend(crate::cli::environment(invocation.tool));
        let (scratch, confinement) =
            jig_exec::confine::prepare(invocation, program, None, &mut env)?;
        let (command, launch) =
            confinement.command(&resolved, args, invocation.workspace.root(), &env)?;
        let mut command = Command::from(command);
        command
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .kill_on_drop(true);
        let mut child = confinement.spawn(launch, move || command.spawn())?;
        let stdin =
            child.stdin.take().ok_or_else(|| ToolError::new(ErrorCode::Internal, "no stdin"))?;
        let stdout =
            child.stdout.take().ok_or_else(|| ToolError::new(ErrorCode::Internal, "no stdout"))?;
        let stderr = Arc::default();
        if let Some(pipe) = child.stderr.take() {
            keep_stderr(pipe, Arc::clone(&stderr));
        }
        let mut stdout = BufReader::new(stdout);
        let startup = gert.startup.as_ref();
        let wait = startup
            .and_then(|s| s.timeout.as_deref())
            .and_then(jig_model::duration::parse_duration)
            .unwrap_or(DEFAULT_STARTUP);
        // A ready signal is read before anything routes the server's lines.
        if let Some(signal) = startup.and_then(|s| s.ready_signal.as_deref()) {
            wait_until_ready(&mut stdout, signal, wait, program).await?;
        }
        let stdin = Arc::new(tokio::sync::Mutex::new(stdin));
        let routes = Arc::new(wire::Routes::default());
        let reader = wire::read(
            stdout,
            Arc::clone(&stdin),
            Arc::clone(&routes),
            invocation.tool.source.file.clone(),
        );
        let mut server = Self {
            child: std::sync::Mutex::new(child),
            stdin,
            routes,
            next_id: AtomicU64::new(1),
            name: program.clone(),
            mcp,
            _scratch: scratch,
            info: None,
            stderr,
            root: invocation.workspace.root().to_path_buf(),
            reader,
        };
        if mcp {
            let init = wire::initialize_params();
            let answer = server
                .request("initialize", init, Instant::now() + wait, &invocation.events)
                .await?;
            if let Some(error) = answer.get("error") {
                return Err(ToolError::new(
                    ErrorCode::Shell,
                    format!("MCP server `{program}` refused to initialize: {error}"),
                ));
            }
            server.info = answer.pointer("/result/serverInfo").cloned();
            server
                .send(&json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }))
                .await?;
        }
        Ok(server)
    }

    /// `error` with the server's last stderr lines: those that say what failed in the message
    /// (with the grant it lacked, when it could not read its own program), all of them in the
    /// details.
    fn with_stderr(&self, error: ToolError) -> ToolError {
        let tail: Vec<String> = self
            .stderr
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .iter()
            .cloned()
            .collect();
        let Some(said) = super::last_words::explain(&tail, &self.root) else { return error };
        let message = format!("{}; it said: {said}", error.message);
        ToolError { message, ..error }.with_details(json!({ "stderr": tail }))
    }

    async fn send(&self, message: &Value) -> Result<(), ToolError> {
        let mut line = message.to_string();
        line.push('\n');
        self.stdin.lock().await.write_all(line.as_bytes()).await.map_err(|e| {
            ToolError::new(ErrorCode::Shell, format!("server `{}` stopped reading: {e}", self.name))
        })
    }

    /// Whether it can take calls: running, and nothing ended its answers.
    pub(super) fn alive(&self) -> bool {
        let mut child = self.child.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        self.routes.ended().is_none() && matches!(child.try_wait(), Ok(None))
    }

    /// Stop it: its process is killed, and every call waiting on it is told.
    fn stop(&self, why: wire::Ended) {
        self.routes.end(why);
        let mut child = self.child.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let _ = child.start_kill();
    }

    /// Send a request and wait for its answer (other calls may be in flight meanwhile); its
    /// progress notifications become events. A server that sent too much is stopped; one that
    /// does not answer in time is stopped too — what it is stuck on may hold the calls after —
    /// and the next call starts it again.
    pub(super) async fn request(
        &self,
        method: &str,
        params: Value,
        until: Instant,
        events: &Events,
    ) -> Result<Value, ToolError> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let token =
            params.pointer("/_meta/progressToken").and_then(Value::as_str).map(str::to_owned);
        let answer = self.routes.expect(id, events, token).map_err(|why| self.ended(why))?;
        let message = json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params });
        if let Err(error) = self.send(&message).await {
            self.routes.forget(id);
            return Err(error);
        }
        let remaining = until.saturating_duration_since(Instant::now());
        match tokio::time::timeout(remaining, answer).await {
            Ok(Ok(Ok(message))) => Ok(message),
            Ok(Ok(Err(why))) => {
                if why == wire::Ended::TooLarge {
                    self.stop(why);
                }
                // Its last words, once the pipe has them.
                tokio::time::sleep(Duration::from_millis(50)).await;
                Err(self.ended(why))
            }
            Ok(Err(_)) => Err(self.ended(wire::Ended::Exited)),
            Err(_) => {
                self.routes.forget(id);
                if self.mcp {
                    let cancel = json!({ "jsonrpc": "2.0", "method": "notifications/cancelled", "params": { "requestId": id, "reason": "Jig's time limit for the call" } });
                    let _ = self.send(&cancel).await;
                }
                self.stop(wire::Ended::Stopped);
                Err(self.with_stderr(ToolError::new(
                    ErrorCode::Timeout,
                    format!("server `{}` did not answer in time", self.name),
                )))
            }
        }
    }

    /// The error of a call to a server that can answer no more.
    fn ended(&self, why: wire::Ended) -> ToolError {
        let error = why.error(&self.name);
        if why == wire::Ended::TooLarge { error } else { self.with_stderr(error) }
    }
}

/// Read what a server writes on stderr for as long as it does (so it never blocks on a full
/// pipe), keeping its last lines, each cut to a length.
fn keep_stderr(pipe: ChildStderr, tail: Arc<std::sync::Mutex<VecDeque<String>>>) {
    tokio::spawn(async move {
        let mut pipe = pipe;
        let mut chunk = [0u8; 8192];
        let mut line: Vec<u8> = Vec::new();
        let keep = |line: &mut Vec<u8>| {
            if line.is_empty() {
                return;
            }
            let text = String::from_utf8_lossy(line).trim_end().to_owned();
            line.clear();
            let mut tail = tail.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            if tail.len() == STDERR_LINES {
                tail.pop_front();
            }
            tail.push_back(text);
        };
        loop {
            let read = match pipe.read(&mut chunk).await {
                Ok(0) | Err(_) => break,
                Ok(read) => read,
            };
            for &byte in &chunk[..read] {
                if byte == b'\n' {
                    keep(&mut line);
                } else if line.len() < STDERR_LINE_BYTES {
                    line.push(byte);
                }
            }
        }
        keep(&mut line);
    });
}
