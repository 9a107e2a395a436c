//! `execution.kind: python | node | php` — a program in an interpreter, speaking Jig's tool
//! protocol (docs/protocol.md) over stdin and stdout.
//!
//! Jig writes the call's arguments to the program's stdin as one JSON object (and names the
//! call in the environment: `JIG_PROTOCOL=jig/1`, `JIG_TOOL`, `JIG_REQUEST_ID`,
//! `JIG_WORKSPACE`, `JIG_RUN_DIR`) and reads JSON lines from its stdout: `progress` and `log`
//! messages become events while it runs, and one `result` (or `error`) ends it. For the `module` forms
//! (`pkg.mod:callable`, `./lib/x.mjs:run`) Jig supplies the side of the protocol that calls the
//! function with the arguments and a context (`ctx.progress(pct, message)`, `ctx.log(text)`).
//! A script that prints one JSON value and exits 0 works too: that value is the result.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use async_trait::async_trait;
use jig_model::ErrorCode;
use jig_model::envelope::EventMessage;
use jig_model::tool_def::ToolExecution;
use jig_model::toolpack::Execution as Kind;
use serde_json::{Value, json};

use crate::cli;
use jig_exec::process;
use jig_exec::rundir::RunDir;
use jig_exec::{Events, Execution, Executor, Invocation, Output, ToolError};

/// Calls `module:callable` with the request's arguments (Python side of the protocol).
const PYTHON_SHIM: &str = r#"
import importlib, inspect, json, os, sys
args = json.load(sys.stdin)
def emit(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()
class Context:
    request_id = os.environ.get("JIG_REQUEST_ID")
    workspace = os.environ.get("JIG_WORKSPACE")
    def progress(self, pct=None, message=""):
        emit({"type": "progress", "pct": pct, "message": str(message)})
    def log(self, message):
        emit({"type": "log", "message": str(message)})
module, _, name = sys.argv[1].partition(":")
sys.path.insert(0, sys.argv[2])
try:
    function = getattr(importlib.import_module(module), name)
    takes_context = len(inspect.signature(function).parameters) >= 2
    result = function(args, Context()) if takes_context else function(args)
    emit({"type": "result", "data": result})
except Exception as error:
    emit({"type": "error", "code": "E_SHELL", "message": type(error).__name__ + ": " + str(error)})
    sys.exit(1)
"#;

/// Imports `specifier` and awaits its export `name` (Node side of the protocol).
const NODE_SHIM: &str = r#"
import path from "node:path";
import { pathToFileURL } from "node:url";
const [specifier, name, base] = process.argv.slice(1);
let input = "";
for await (const chunk of process.stdin) input += chunk;
const args = JSON.parse(input);
const emit = (message) => process.stdout.write(JSON.stringify(message) + "\n");
const context = {
  requestId: process.env.JIG_REQUEST_ID,
  workspace: process.env.JIG_WORKSPACE,
  progress: (pct, message = "") => emit({ type: "progress", pct, message: String(message) }),
  log: (message) => emit({ type: "log", message: String(message) }),
};
try {
  const module = await import(pathToFileURL(path.resolve(base, specifier)).href);
  const fn = module[name];
  if (typeof fn !== "function") throw new Error(`${specifier} exports no function ${name}`);
  emit({ type: "result", data: (await fn(args, context)) ?? null });
} catch (error) {
  emit({ type: "error", code: "E_SHELL", message: String(error && error.stack ? error.message : error) });
  process.exitCode = 1;
}
"#;

/// Runs `python`, `node` and `php` toolpacks.
#[derive(Debug, Default)]
pub struct ScriptExecutor;

#[async_trait]
impl Executor for ScriptExecutor {
    async fn execute(&self, invocation: Invocation<'_>) -> Result<Execution, ToolError> {
        let tool = invocation.tool;
        let base = invocation
            .workspace
            .root()
            .join(&tool.source.file)
            .parent()
            .map_or_else(|| invocation.workspace.root().to_path_buf(), Path::to_path_buf);
        let (interpreter, argv) = match &tool.execution {
            ToolExecution::Toolpack(Kind::Python(python)) => {
                let argv = match (&python.module, &python.script) {
                    (Some(module), _) => vec![
                        "-c".to_owned(),
                        PYTHON_SHIM.to_owned(),
                        module.clone(),
                        display(&base),
                    ],
                    (None, Some(script)) => vec![display(&base.join(script))],
                    (None, None) => return Err(contract(&tool.id)),
                };
                ("python3", argv)
            }
            ToolExecution::Toolpack(Kind::Node(node)) => {
                let argv = match (&node.module, &node.script, &node.node) {
                    (Some(module), _, _) => {
                        let (specifier, name) =
                            module.rsplit_once(':').unwrap_or((module.as_str(), "default"));
                        vec![
                            "--input-type=module".to_owned(),
                            "-e".to_owned(),
                            NODE_SHIM.to_owned(),
                            specifier.to_owned(),
                            name.to_owned(),
                            display(&base),
                        ]
                    }
                    (None, Some(script), _) => vec![display(&base.join(script))],
                    (None, None, Some(program)) => vec!["-e".to_owned(), program.clone()],
                    (None, None, None) => return Err(contract(&tool.id)),
                };
                ("node", argv)
            }
            ToolExecution::Toolpack(Kind::Php(php)) => {
                let argv = match (&php.script, &php.php) {
                    (Some(script), _) => vec![display(&base.join(script))],
                    (None, Some(program)) => vec!["-r".to_owned(), program.clone()],
                    (None, None) => return Err(contract(&tool.id)),
                };
                ("php", argv)
            }
            _ => {
                return Err(ToolError::new(
                    ErrorCode::Internal,
                    format!("`{}` is not a python, node or php tool", tool.id),
                ));
            }
        };
        let kind = tool.execution.kind();
        if process::find_program(interpreter).is_none() {
            return Err(ToolError::new(
                ErrorCode::Shell,
                format!("`{}` is a {kind} tool, and `{interpreter}` (its interpreter) is not installed: it was not found on PATH", tool.id),
            )
            .with_details(json!({ "interpreter": interpreter })));
        }
        let run = RunDir::prepare(&invocation)?;
        let args = run.as_ref().map_or(invocation.args, |r| &r.args);
        let mut full = vec![interpreter.to_owned()];
        full.extend(argv);
        let request = args.to_string();
        let protocol = Protocol::new(&invocation.events);
        let mut env = environment(tool);
        env.insert("JIG_PROTOCOL".to_owned(), "jig/1".to_owned());
        env.insert("JIG_TOOL".to_owned(), tool.id.clone());
        env.insert("JIG_REQUEST_ID".to_owned(), invocation.events.request_id().to_owned());
        env.insert("JIG_WORKSPACE".to_owned(), invocation.workspace.root().display().to_string());
        if let Some(run) = &run {
            env.insert("JIG_RUN_DIR".to_owned(), run.dir().display().to_string());
        }
        let finished = process::run_tool(
            &invocation,
            run.as_ref(),
            &full,
            env,
            Some(&request),
            &protocol.events,
        )
        .await?;
        let mut data = Protocol::outcome(&tool.id, &finished)?;
        if let Some(run) = &run {
            run.collect(tool, invocation.policy, &finished.log(), &mut data).await?;
        }
        Ok(Execution::Done(Output::data(data)))
    }
}

/// The interpreter's own needs (PATH, HOME, locale), then the tool's `env`.
fn environment(tool: &jig_model::ToolDef) -> BTreeMap<String, String> {
    let mut env = jig_exec::host::inherited(&["PATH", "HOME", "LANG", "PYENV_ROOT"]);
    env.extend(cli::environment(tool));
    env
}

/// Reads the protocol as the program writes it: `progress` and `log` lines become events at
/// once, other stdout lines pass through as output, `result` and `error` wait for the end.
struct Protocol {
    events: Events,
}

impl Protocol {
    fn new(events: &Events) -> Self {
        let inner = events.clone();
        let pending = Arc::new(Mutex::new(String::new()));
        let sink = move |message: EventMessage| {
            let stdout = message.event == "OutputChunk"
                && message.data.as_ref().is_some_and(|d| d["stream"] == "stdout");
            if !stdout {
                inner.emit(message);
                return;
            }
            let text = message.data.as_ref().and_then(|d| d["text"].as_str()).unwrap_or_default();
            let mut pending = pending.lock().unwrap_or_else(PoisonError::into_inner);
            pending.push_str(text);
            while let Some(end) = pending.find('\n') {
                let line: String = pending.drain(..=end).collect();
                live(&inner, &line);
            }
        };
        Self { events: Events::new(events.request_id(), Arc::new(sink)) }
    }

    /// The result, from the protocol lines of `finished`'s stdout (already streamed as events).
    fn outcome(tool: &str, finished: &process::Finished) -> Result<Value, ToolError> {
        let mut result = None;
        for line in finished.stdout.lines() {
            let Ok(Value::Object(message)) = serde_json::from_str::<Value>(line) else { continue };
            match message.get("type").and_then(Value::as_str) {
                Some("result") => {
                    result = Some(Ok(message.get("data").cloned().unwrap_or(Value::Null)))
                }
                Some("error") => {
                    let code = message
                        .get("code")
                        .and_then(Value::as_str)
                        .and_then(ErrorCode::from_wire)
                        .unwrap_or(ErrorCode::Shell);
                    let text = message
                        .get("message")
                        .and_then(Value::as_str)
                        .unwrap_or("the tool reported an error");
                    result = Some(Err(ToolError::new(code, format!("`{tool}`: {text}"))));
                }
                _ => {}
            }
        }
        if let Some(result) = result {
            return result;
        }
        if finished.code == Some(0) {
            // A plain script: its whole stdout is one JSON value.
            if let Ok(value) = serde_json::from_str::<Value>(finished.stdout.trim()) {
                return Ok(value);
            }
        }
        let tail: String = finished
            .stderr
            .lines()
            .rev()
            .take(10)
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect::<Vec<_>>()
            .join("\n");
        Err(ToolError::new(
            ErrorCode::Shell,
            match finished.code {
                Some(0) => format!(
                    "`{tool}` ended without a result (no `result` line, and stdout is not JSON)"
                ),
                Some(code) => format!("`{tool}` exited with code {code} without a result"),
                None => format!("`{tool}` was killed by a signal"),
            },
        )
        .with_details(json!({ "exit_code": finished.code, "stderr": tail })))
    }
}

/// One complete stdout line, as it arrives.
fn live(events: &Events, line: &str) {
    let message = match serde_json::from_str::<Value>(line.trim_end()) {
        Ok(Value::Object(message)) => message,
        _ => return events.output("stdout", line),
    };
    match message.get("type").and_then(Value::as_str) {
        Some("progress") => events.progress(
            message.get("pct").and_then(Value::as_f64),
            message.get("message").and_then(Value::as_str).unwrap_or_default(),
        ),
        Some("log") => {
            events.output("log", message.get("message").and_then(Value::as_str).unwrap_or_default())
        }
        Some("result" | "error") => {}
        _ => events.output("stdout", line),
    }
}

fn contract(id: &str) -> ToolError {
    ToolError::new(
        ErrorCode::Internal,
        format!("`{id}` has no program to run (the loader should have refused it)"),
    )
}

fn display(path: &Path) -> String {
    PathBuf::from(path).display().to_string()
}
