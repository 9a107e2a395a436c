//! Integration tests of the engine: real projects on disk, real SQLite files, real subprocesses.

// Fixtures are written with std::fs (a failing test names the path in its message), and the
// tests start reference programs beside the engine.
#![allow(clippy::disallowed_methods)]

mod acceptance;
mod approvals;
mod ast_tools;
mod caps;
mod fs_tools;
mod git_tools;
mod hostile;
mod kinds;
mod network;
mod pipeline;
mod proc_shell;
mod reload;
mod replay;
mod results;
mod rules;
mod select;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use jig_audit::Packet;
use jig_engine::{CallContext, Engine, EngineOptions, ToolRequest, ToolResponse};
use serde_json::Value;
use tempfile::TempDir;

/// Tools the tests drive; each runs a real program.
const TOOLS: &[(&str, &str)] = &[
    (
        "echo",
        r#"
id: t.echo
version: 1.0.0
description: Print a text back, unchanged.
tags: [text, demo]
deterministic: true
sideEffects: [none]
risk: low
timeoutMs: 10000
limits: { maxInputBytes: 4096, maxOutputBytes: 65536 }
inputSchema:
  type: object
  properties: { text: { type: string, maxLength: 1000 } }
  required: [text]
  additionalProperties: false
outputSchema:
  type: object
  properties: { stdout: { type: string } }
  required: [stdout]
templating: { engine: jinja2 }
execution: { kind: cli, cmd: [printf, "%s", "{{ text }}"] }
caps: { subprocess: true }
"#,
    ),
    (
        "count",
        r#"
id: t.count
version: 1.0.0
description: Append a line to runs.log and print how many lines it has (counts executions).
tags: [demo, write]
deterministic: false
sideEffects: [write]
risk: medium
timeoutMs: 10000
limits: { maxInputBytes: 4096, maxOutputBytes: 65536 }
inputSchema:
  type: object
  properties: { label: { type: string } }
  required: [label]
outputSchema:
  type: object
  properties: { stdout: { type: string } }
  required: [stdout]
templating: { engine: jinja2 }
execution: { kind: cli, cmd: [sh, -c, "echo \"$0\" >> runs.log && wc -l < runs.log", "{{ label }}"] }
caps: { subprocess: true, filesystem: { write: [runs.log] } }
"#,
    ),
    (
        "cat",
        r#"
id: t.cat
version: 1.0.0
description: Print a file of the workspace.
tags: [read]
deterministic: true
sideEffects: [read]
risk: low
timeoutMs: 10000
limits: { maxInputBytes: 4096, maxOutputBytes: 65536 }
inputSchema:
  type: object
  properties: { file: { type: string } }
  required: [file]
outputSchema:
  type: object
  properties: { stdout: { type: string } }
  required: [stdout]
templating: { engine: jinja2 }
execution: { kind: cli, cmd: [cat, "--", "{{ file }}"] }
caps: { subprocess: true }
"#,
    ),
    (
        "sleep",
        r#"
id: t.sleep
version: 1.0.0
description: Sleep, printing a line first.
tags: [demo]
deterministic: false
sideEffects: [none]
risk: low
timeoutMs: 700
limits: { maxInputBytes: 4096, maxOutputBytes: 65536 }
inputSchema:
  type: object
  properties: { secs: { type: string } }
  required: [secs]
outputSchema: { type: object }
templating: { engine: jinja2 }
execution: { kind: cli, cmd: [sh, -c, "echo started; sleep \"$0\"; echo done > slept.txt", "{{ secs }}"] }
caps: { subprocess: true, filesystem: { write: [slept.txt] } }
"#,
    ),
    (
        "leak",
        r#"
id: t.leak
version: 1.0.0
description: Print a line holding a secret.
tags: [demo]
deterministic: false
sideEffects: [none]
risk: low
timeoutMs: 10000
limits: { maxInputBytes: 4096, maxOutputBytes: 65536 }
inputSchema:
  type: object
  properties: { password: { type: string } }
outputSchema: { type: object }
execution: { kind: cli, cmd: [printf, "%s", "export GITHUB_TOKEN=ghp_abcdefghijklmnopqrstuvwxyz0123456789"] }
caps: { subprocess: true }
"#,
    ),
];

/// A project in a temporary directory: `jig.yaml` with the given policy block and the test
/// tools; the audit store is `<root>/.jig/audit.db`.
pub struct Project {
    _dir: TempDir,
    /// The project directory.
    pub root: PathBuf,
}

impl Project {
    /// A project whose manifest has `policy` (YAML, indented under `policy:`; empty for none).
    pub fn new(policy: &str) -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path().join("project");
        std::fs::create_dir_all(root.join("tools")).expect("mkdir");
        for (name, text) in TOOLS {
            std::fs::write(root.join("tools").join(format!("{name}.tool.yaml")), text)
                .expect("write tool");
        }
        let project = Self { _dir: dir, root };
        project.set_policy(policy);
        project
    }

    /// Rewrite the manifest with another policy.
    pub fn set_policy(&self, policy: &str) {
        let mut manifest = String::from("name: engine-test\n");
        if !policy.trim().is_empty() {
            manifest.push_str("policy:\n");
            for line in policy.trim_matches('\n').lines() {
                manifest.push_str("  ");
                manifest.push_str(line);
                manifest.push('\n');
            }
        }
        std::fs::write(self.root.join("jig.yaml"), manifest).expect("write manifest");
    }

    /// A fresh engine on this project (another process would see the same).
    pub async fn engine(&self) -> Arc<Engine> {
        Engine::open(EngineOptions { project: self.root.clone(), ..EngineOptions::default() })
            .await
            .unwrap_or_else(|e| panic!("open the engine: {e}"))
    }

    /// Write `text` to `relative`, creating its directories.
    pub fn write(&self, relative: &str, text: &str) {
        let full = self.path(relative);
        std::fs::create_dir_all(full.parent().expect("parent")).expect("mkdir");
        std::fs::write(full, text).unwrap_or_else(|e| panic!("write {relative}: {e}"));
    }

    /// A path inside the project.
    pub fn path(&self, relative: &str) -> PathBuf {
        self.root.join(relative)
    }

    /// How many times `t.count` really ran.
    pub fn executions(&self) -> usize {
        std::fs::read_to_string(self.path("runs.log")).map_or(0, |text| text.lines().count())
    }
}

/// A request with a fresh id.
pub fn request(tool: &str, args: Value) -> ToolRequest {
    ToolRequest {
        kind: Default::default(),
        tool: tool.to_owned(),
        args,
        request_id: uuid(),
        session_id: None,
        timestamp: None,
    }
}

/// A fresh request id.
pub fn uuid() -> String {
    format!("req-{}", uuid::Uuid::new_v4().simple())
}

/// A caller in `session` as `principal`.
pub fn caller(session: &str, principal: &str) -> CallContext {
    CallContext {
        session_id: session.to_owned(),
        principal: principal.to_owned(),
        ..CallContext::default()
    }
}

/// Dispatch as `alice` in session `s1`.
pub async fn call(engine: &Engine, tool: &str, args: Value) -> ToolResponse {
    engine.dispatch(request(tool, args), caller("s1", "alice")).await
}

/// Dispatch in a session of its own, so an identical earlier call is not answered from the
/// idempotency record (tests of what a tool does, not of replay).
pub async fn call_once(engine: &Engine, tool: &str, args: Value) -> ToolResponse {
    engine.dispatch(request(tool, args), caller(&uuid(), "alice")).await
}

/// The kinds of the packets of one request, in order.
pub async fn kinds(engine: &Engine, request_id: &str) -> Vec<String> {
    packets(engine, request_id).await.into_iter().map(|p| p.kind).collect()
}

/// The packets of one request, in order.
pub async fn packets(engine: &Engine, request_id: &str) -> Vec<Packet> {
    engine.store().packets_of(request_id).await.expect("packets")
}

/// The first error's code.
pub fn code(response: &ToolResponse) -> String {
    response.errors.first().map(|e| e.code.to_string()).unwrap_or_default()
}

/// The token of an approval that was granted (panics when it still needs more approvers).
pub fn granted(approval: jig_engine::Approval) -> String {
    match approval {
        jig_engine::Approval::Granted(token) => token,
        other => panic!("not granted: {other:?}"),
    }
}

/// The pending approval's id named in a response.
pub fn approval_id(response: &ToolResponse) -> String {
    response.errors[0]
        .details
        .as_ref()
        .and_then(|d| d["approval_id"].as_str())
        .expect("approval_id")
        .to_owned()
}

pub use jig_testkit::git;

/// A file's text (panics naming the path).
pub fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()))
}
