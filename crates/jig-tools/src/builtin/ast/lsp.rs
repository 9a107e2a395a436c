//! `ast_external`: one request to a language server configured in the policy
//! (`ast.providers`), over LSP's stdio framing.
//!
//! The server is started in the workspace root with a minimal environment, initialized with
//! the root as its workspace, given the text of the document the request names (read through
//! the sandbox, so a `file://` URI outside the workspace is refused), asked, then shut down.
//! Requests the server makes of Jig are answered with empty results; in particular
//! `workspace/applyEdit` is declined, so a server never changes files through this bridge.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Stdio};
use std::sync::mpsc;
use std::time::Instant;

use jig_ast::Language;
use jig_model::ErrorCode;
use serde_json::{Value, json};

use crate::builtin::call::Call;
use jig_exec::confine::{Confinement, Scratch};
use jig_exec::{Output, ToolError};

pub(in crate::builtin) fn external(call: &Call) -> Result<Output, ToolError> {
    let provider = call.str("provider")?;
    let request = call.args.get("request").cloned().unwrap_or(Value::Null);
    let method = request.get("method").and_then(Value::as_str).unwrap_or_default().to_owned();
    let params = request.get("params").cloned().unwrap_or_else(|| json!({}));
    let argv = call
        .policy
        .config()
        .ast
        .as_ref()
        .and_then(|a| a.providers.get(provider))
        .filter(|argv| !argv.is_empty())
        .ok_or_else(|| {
            ToolError::new(
                ErrorCode::Policy,
                format!(
                    "no language server `{provider}` is configured in the policy's `ast.providers`"
                ),
            )
            .with_details(json!({ "provider": provider }))
        })?;
    let document = document(call, &params)?;
    let mut server = Server::start(call, argv)?;
    let root = call
        .workspace
        .root()
        .canonicalize()
        .unwrap_or_else(|_| call.workspace.root().to_path_buf());
    let root_uri = format!("file://{}", root.display());
    let result: Result<Value, ToolError> = (|| {
        server.request(
            1,
            "initialize",
            &json!({
                "processId": std::process::id(),
                "rootUri": root_uri,
                "workspaceFolders": [{ "uri": root_uri, "name": "workspace" }],
                "capabilities": {},
            }),
        )?;
        server.notify("initialized", &json!({}))?;
        if let Some((uri, language, text)) = &document {
            server.notify("textDocument/didOpen", &json!({
                "textDocument": { "uri": uri, "languageId": language, "version": 1, "text": text }
            }))?;
        }
        let answer = server.request(2, &method, &params)?;
        let _ = server.request(3, "shutdown", &Value::Null);
        let _ = server.notify("exit", &Value::Null);
        Ok(answer)
    })();
    server.stop();
    let answer = result?;
    if let Some(error) = answer.get("error") {
        return Err(ToolError::new(
            ErrorCode::ValidationFail,
            format!("`{provider}` answered `{method}` with an error"),
        )
        .with_details(json!({ "provider": provider, "error": error })));
    }
    Ok(Output::data(
        json!({ "provider": provider, "response": answer.get("result").cloned().unwrap_or(Value::Null) }),
    ))
}

/// The document a request names (`params.textDocument.uri`): its URI, language id and text,
/// read through the sandbox.
fn document(call: &Call, params: &Value) -> Result<Option<(String, String, String)>, ToolError> {
    let Some(uri) = params.pointer("/textDocument/uri").and_then(Value::as_str) else {
        return Ok(None);
    };
    let root = call
        .workspace
        .root()
        .canonicalize()
        .unwrap_or_else(|_| call.workspace.root().to_path_buf());
    let outside = || {
        ToolError::new(ErrorCode::Policy, format!("`{uri}` is not a file in the workspace"))
            .with_details(json!({ "rule": jig_policy::sandbox::RULE }))
    };
    // A real URL parse: `%20` and friends decode to the file's name.
    let path = url::Url::parse(uri)
        .ok()
        .filter(|u| u.scheme() == "file")
        .and_then(|u| u.to_file_path().ok())
        .ok_or_else(outside)?;
    let relative = path.strip_prefix(&root).map_err(|_| outside())?;
    let relative = relative.to_string_lossy().into_owned();
    let bytes = call.workspace.read(&relative, 16 * 1024 * 1024)?;
    let language = Language::of_path(&relative).map_or("plaintext", |l| l.name());
    Ok(Some((uri.to_owned(), language.to_owned(), String::from_utf8_lossy(&bytes).into_owned())))
}

/// A running language server.
struct Server<'c> {
    call: &'c Call,
    child: Child,
    stdin: ChildStdin,
    messages: mpsc::Receiver<Value>,
    name: String,
    _scratch: Scratch,
}

impl<'c> Server<'c> {
    fn start(call: &'c Call, argv: &[String]) -> Result<Self, ToolError> {
        let cannot = |e: String| {
            ToolError::new(
                ErrorCode::Shell,
                format!("cannot start language server `{}`: {e}", argv[0]),
            )
        };
        let resolved = jig_exec::process::find_program(&argv[0])
            .ok_or_else(|| cannot("not found on PATH".to_owned()))?;
        // Language servers run in the same sandbox as every tool process.
        let (scratch, confinement, env) = Confinement::helper(
            &call.workspace,
            &call.policy,
            &resolved,
            &["PATH", "LANG"],
            false,
        )?;
        let (mut command, launch) =
            confinement.command(&resolved, &argv[1..], call.workspace.root(), &env)?;
        command.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::null());
        let mut child =
            confinement.spawn(launch, move || command.spawn()).map_err(|e| cannot(e.message))?;
        let stdin =
            child.stdin.take().ok_or_else(|| ToolError::new(ErrorCode::Internal, "no stdin"))?;
        let stdout =
            child.stdout.take().ok_or_else(|| ToolError::new(ErrorCode::Internal, "no stdout"))?;
        let (sender, messages) = mpsc::channel();
        std::thread::spawn(move || {
            let mut reader = BufReader::new(stdout);
            while let Some(message) = read_message(&mut reader) {
                if sender.send(message).is_err() {
                    break;
                }
            }
        });
        Ok(Self { call, child, stdin, messages, name: argv[0].clone(), _scratch: scratch })
    }

    fn send(&mut self, message: &Value) -> Result<(), ToolError> {
        let body = message.to_string();
        let framed = format!("Content-Length: {}\r\n\r\n{body}", body.len());
        self.stdin.write_all(framed.as_bytes()).and_then(|()| self.stdin.flush()).map_err(|e| {
            ToolError::new(
                ErrorCode::Shell,
                format!("language server `{}` stopped reading: {e}", self.name),
            )
        })
    }

    fn notify(&mut self, method: &str, params: &Value) -> Result<(), ToolError> {
        self.send(&json!({ "jsonrpc": "2.0", "method": method, "params": params }))
    }

    /// Send a request and wait for its response, answering the server's own requests.
    fn request(&mut self, id: u64, method: &str, params: &Value) -> Result<Value, ToolError> {
        self.send(&json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }))?;
        loop {
            let remaining = self.call.deadline.saturating_duration_since(Instant::now());
            let message = self.messages.recv_timeout(remaining).map_err(|_| {
                ToolError::new(
                    ErrorCode::Timeout,
                    format!("language server `{}` did not answer `{method}` in time", self.name),
                )
            })?;
            if message.get("id") == Some(&json!(id)) && message.get("method").is_none() {
                return Ok(message);
            }
            if let (Some(their_id), Some(their_method)) =
                (message.get("id"), message.get("method").and_then(Value::as_str))
            {
                let result = if their_method == "workspace/applyEdit" {
                    json!({ "applied": false })
                } else {
                    Value::Null
                };
                self.send(&json!({ "jsonrpc": "2.0", "id": their_id, "result": result }))?;
            }
        }
    }

    fn stop(mut self) {
        let deadline = Instant::now() + std::time::Duration::from_millis(500);
        while Instant::now() < deadline {
            if matches!(self.child.try_wait(), Ok(Some(_))) {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        jig_exec::process::kill_group(self.child.id());
        let _ = self.child.wait();
    }
}

/// One framed message, or `None` at the end of the stream.
fn read_message(reader: &mut impl BufRead) -> Option<Value> {
    let mut length = None;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).ok()? == 0 {
            return None;
        }
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some(value) = line.strip_prefix("Content-Length:") {
            length = value.trim().parse::<usize>().ok();
        }
    }
    let mut body = vec![0; length?.min(64 * 1024 * 1024)];
    std::io::Read::read_exact(reader, &mut body).ok()?;
    serde_json::from_slice(&body).ok()
}
