//! The one trait every way of running a tool implements, and what it is given.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use async_trait::async_trait;
use jig_model::envelope::{EventMessage, Progress};
use jig_model::prepared::PreparedJson;
use jig_model::{ErrorCode, ToolDef};
use jig_policy::Policy;
use jig_policy::sandbox::{SandboxError, Workspace};
use serde_json::{Value, json};
use tokio::sync::Notify;

/// Why a tool did not produce a result.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolError {
    /// The stable code.
    pub code: ErrorCode,
    /// A sentence for people.
    pub message: String,
    /// Structured details.
    pub details: Option<Value>,
}

impl ToolError {
    /// An error with a code and message.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Self { code, message: message.into(), details: None }
    }

    /// Attach details.
    #[must_use]
    pub fn with_details(mut self, details: Value) -> Self {
        self.details = Some(details);
        self
    }
}

impl From<SandboxError> for ToolError {
    fn from(error: SandboxError) -> Self {
        let message = error.to_string();
        match error {
            SandboxError::Escape { path } | SandboxError::Link { path } => {
                ToolError::new(ErrorCode::Policy, message)
                    .with_details(json!({ "rule": jig_policy::sandbox::RULE, "path": path }))
            }
            SandboxError::TooLarge { path, size, max } => ToolError::new(ErrorCode::Limit, message)
                .with_details(json!({ "path": path, "size": size, "max": max })),
            SandboxError::Protected { path, .. } => ToolError::new(ErrorCode::Policy, message)
                .with_details(json!({ "rule": jig_policy::sandbox::PROTECTED_RULE, "path": path })),
            SandboxError::NotFound { path }
            | SandboxError::NotRegular { path }
            | SandboxError::Io { path, .. } => {
                ToolError::new(ErrorCode::FileIo, message).with_details(json!({ "path": path }))
            }
            _ => ToolError::new(ErrorCode::FileIo, message),
        }
    }
}

/// A request to stop, shared between the engine and a running tool.
#[derive(Debug, Clone, Default)]
pub struct Cancel(Arc<(AtomicBool, Notify)>);

impl Cancel {
    /// A token that has not fired.
    pub fn new() -> Self {
        Self::default()
    }

    /// Ask the tool to stop.
    pub fn cancel(&self) {
        self.0.0.store(true, Ordering::SeqCst);
        self.0.1.notify_waiters();
    }

    /// Whether stopping was asked for.
    pub fn is_cancelled(&self) -> bool {
        self.0.0.load(Ordering::SeqCst)
    }

    /// Resolves when stopping is asked for.
    pub async fn cancelled(&self) {
        loop {
            let notified = self.0.1.notified();
            if self.is_cancelled() {
                return;
            }
            notified.await;
        }
    }
}

/// Where a running tool reports progress and output.
#[derive(Clone)]
pub struct Events {
    request_id: String,
    sink: Arc<dyn Fn(EventMessage) + Send + Sync>,
}

impl std::fmt::Debug for Events {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Events").field("request_id", &self.request_id).finish_non_exhaustive()
    }
}

impl Events {
    /// Events for `request_id`, delivered to `sink`.
    pub fn new(
        request_id: impl Into<String>,
        sink: Arc<dyn Fn(EventMessage) + Send + Sync>,
    ) -> Self {
        Self { request_id: request_id.into(), sink }
    }

    /// Events that go nowhere.
    pub fn discard(request_id: impl Into<String>) -> Self {
        Self::new(request_id, Arc::new(|_| {}))
    }

    /// The request these events belong to.
    pub fn request_id(&self) -> &str {
        &self.request_id
    }

    /// Send `message` as it is.
    pub fn emit(&self, message: EventMessage) {
        (self.sink)(message);
    }

    /// A `TaskProgress` event.
    pub fn progress(&self, pct: Option<f64>, message: impl Into<String>) {
        (self.sink)(EventMessage {
            kind: Default::default(),
            event: "TaskProgress".to_owned(),
            request_id: self.request_id.clone(),
            progress: Some(Progress { pct, message: Some(message.into()) }),
            data: None,
        });
    }

    /// An `OutputChunk` event: text a tool wrote on `stream` (`stdout`, `stderr`).
    pub fn output(&self, stream: &str, text: &str) {
        (self.sink)(EventMessage {
            kind: Default::default(),
            event: "OutputChunk".to_owned(),
            request_id: self.request_id.clone(),
            progress: None,
            data: Some(json!({ "stream": stream, "text": text })),
        });
    }
}

/// Everything an executor needs for one call.
#[derive(Debug)]
pub struct Invocation<'a> {
    /// The tool.
    pub tool: &'a Arc<ToolDef>,
    /// Its arguments, already valid against the input schema.
    pub args: &'a Value,
    /// The workspace the tool may touch.
    pub workspace: &'a Arc<Workspace>,
    /// The project's policy (built-ins re-check what they enforce at run time, e.g. every
    /// redirect hop of `curl`).
    pub policy: &'a Arc<Policy>,
    /// Time allowed.
    pub timeout: Duration,
    /// Stop when this fires.
    pub cancel: Cancel,
    /// Progress and output.
    pub events: Events,
    /// The W3C `traceparent` of the span that stands for the tool's process, when Jig exports
    /// traces: its process gets it as `TRACEPARENT`, so its own spans join the caller's trace.
    pub traceparent: Option<String>,
}

/// A finished call's data and the files it changed.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Output {
    /// The result, to be checked against the tool's output schema.
    pub data: Value,
    /// Workspace-relative paths the call wrote.
    pub files_touched: Vec<String>,
    /// The result written as canonical JSON by a producer that promises what
    /// [`PreparedJson`] asks (`data` is then null): a large result skips the engine's value
    /// tree.
    pub prepared: Option<PreparedJson>,
}

impl Output {
    /// Data that touched no file.
    pub fn data(data: Value) -> Self {
        Self { data, ..Self::default() }
    }

    /// A prepared result that touched no file.
    pub fn prepared(prepared: PreparedJson) -> Self {
        Self { prepared: Some(prepared), ..Self::default() }
    }
}

/// What an executor did with a call.
#[derive(Debug, Clone, PartialEq)]
pub enum Execution {
    /// It ran and produced this.
    Done(Output),
    /// It was handed to a scheduler (seed 001's slurm and hybrid plans);
    /// [`Executor::poll`] follows the job and collects its result.
    Submitted(Job),
}

/// A job handed to a scheduler, as the engine keeps it across restarts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Job {
    /// The scheduler (`slurm`).
    pub engine: String,
    /// The job's id there.
    pub handle: String,
    /// Its run directory (inputs, outputs, the job's log), absolute.
    pub dir: std::path::PathBuf,
}

/// Where a submitted job stands.
#[derive(Debug, Clone, PartialEq)]
pub enum JobStatus {
    /// Waiting for the scheduler (its reason, e.g. `Resources`, when it gives one).
    Queued(Option<String>),
    /// Running.
    Running,
    /// Stopped on request.
    Cancelled,
    /// Over: its result, collected (outputs stored as artifacts), or why it failed.
    Finished(Result<Output, ToolError>),
}

/// A way of running tools: an execution kind, or the built-in catalog.
#[async_trait]
pub trait Executor: Send + Sync {
    /// Run (or submit) one call.
    async fn execute(&self, invocation: Invocation<'_>) -> Result<Execution, ToolError>;

    /// The command line a call with `args` will start, as a person asked to approve it should
    /// see it: the program and its arguments after templating. `None` when the executor starts
    /// no program from a template (the arguments then say what runs).
    fn command_line(&self, tool: &ToolDef, args: &Value) -> Option<Vec<String>> {
        let _ = (tool, args);
        None
    }

    /// Whether a call's work is handed to a scheduler as a job ([`Execution::Submitted`]) that
    /// outlives the call and is collected later, perhaps by another process.
    fn submits_jobs(&self) -> bool {
        false
    }

    /// Where a job this executor submitted stands; once it is over, its collected result.
    /// `root` is the workspace's root (artifacts are stored under it). Called again after a
    /// restart, so it may rely only on `job` and the run directory.
    async fn poll(
        &self,
        tool: &ToolDef,
        policy: &Policy,
        root: &std::path::Path,
        job: &Job,
    ) -> Result<JobStatus, ToolError> {
        let _ = (tool, policy, root);
        Err(ToolError::new(
            ErrorCode::Internal,
            format!("this executor submits no jobs (job {})", job.handle),
        ))
    }

    /// The file a job this executor submitted writes its output to while it runs (shown
    /// before the job is collected), if it has one.
    fn job_log(&self, job: &Job) -> Option<std::path::PathBuf> {
        let _ = job;
        None
    }

    /// Stop a job this executor submitted.
    async fn cancel_job(&self, policy: &Policy, job: &Job) -> Result<(), ToolError> {
        let _ = policy;
        Err(ToolError::new(
            ErrorCode::Internal,
            format!("this executor submits no jobs (job {})", job.handle),
        ))
    }
}
