//! What the interpreter needs from outside: tools to call (the engine, or a recorded scenario),
//! a durable journal to record into, and a trace to append to.

use async_trait::async_trait;
use jig_model::ApprovalId;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::journal::Entry;
use crate::trace::TraceEvent;

/// A runbook's tool reference resolved: the registry tool it calls and its contract.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolInfo {
    /// The registry id the engine dispatches (`health-check.check`, `acme.deploy`).
    pub id: String,
    /// The tool's contract, before the step tightens it.
    pub contract: Contract,
    /// The outputs the tool declares (empty: unknown, anything goes).
    pub outputs: Vec<String>,
    /// For a tool/v0 action, the inputs it takes (its contract's and its argv's): a step's
    /// other inputs are left out of the call, as gert leaves them out (the loader warns).
    /// `None`: the tool's schema decides.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub accepts: Option<Vec<String>>,
}

/// A step's contract, resolved (kernel-v0 §4).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Contract {
    /// Changes external state.
    pub side_effects: bool,
    /// Same inputs, same outputs.
    pub deterministic: bool,
    /// Safe to re-run.
    pub idempotent: bool,
    /// Jig's side-effect classes (`read`, `write`, `network`, `exec`), when known.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub effects: Vec<String>,
    /// Resource tags read.
    pub reads: Vec<String>,
    /// Resource tags written.
    pub writes: Vec<String>,
}

/// One tool step, ready to run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolCall {
    /// The run.
    pub run_id: String,
    /// The step instance (unique within the run, stable across replays).
    pub key: String,
    /// The step's id.
    pub step_id: String,
    /// The tool reference as the runbook wrote it.
    pub reference: String,
    /// The action (tool/v0).
    pub action: Option<String>,
    /// The registry tool.
    pub tool: String,
    /// The inputs, rendered.
    pub inputs: Map<String, Value>,
    /// Runbook governance asked for a person's approval even where the project's policy would
    /// not: the rule that did.
    pub approval_required_by: Option<String>,
    /// How many different people that rule asks to approve (`min_approvers`).
    pub approvers_required: u32,
    /// A one-time token a reviewer's approval produced for this exact call.
    pub approval_token: Option<String>,
    /// The person whose go-ahead runs the step, when a person gave one.
    pub by: Option<String>,
    /// The step's `timeout`, which tightens the tool's own limit.
    pub timeout_ms: Option<u64>,
}

/// How a tool step ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "answer", rename_all = "snake_case")]
pub enum ToolAnswer {
    /// It ran (or replayed) and succeeded.
    Succeeded {
        /// The contract outputs.
        outputs: Map<String, Value>,
    },
    /// It ran and failed: a non-zero exit, an error result.
    Failed {
        /// The error code (seed 002).
        code: String,
        /// What went wrong.
        message: String,
        /// What it produced before failing.
        #[serde(default)]
        outputs: Map<String, Value>,
    },
    /// It waits for a person's approval.
    PendingApproval {
        /// The approval to decide.
        approval_id: ApprovalId,
        /// The rule that asked.
        rule: String,
    },
    /// The policy refused it.
    Denied {
        /// The rule.
        rule: String,
        /// Why.
        reason: String,
    },
    /// It could not run at all (no such tool, the store failed).
    Error {
        /// The error code.
        code: String,
        /// What went wrong.
        message: String,
    },
}

impl ToolAnswer {
    /// The journal entry this answer records for its step; `None` while it waits for approval.
    pub fn entry(&self) -> Option<crate::journal::Entry> {
        use crate::journal::{Entry, Failure, StepStatus};
        let (status, outputs, failure) = match self {
            Self::Succeeded { outputs } => (StepStatus::Success, outputs.clone(), None),
            Self::Failed { code, message, outputs } => {
                let kind = if code == "E_SHELL" { "exit_code" } else { "tool" };
                (
                    StepStatus::Failed,
                    outputs.clone(),
                    Some(Failure::new(kind, format!("{code}: {message}"))),
                )
            }
            Self::PendingApproval { .. } => return None,
            Self::Denied { rule, reason } => (
                StepStatus::Skipped,
                Map::new(),
                Some(Failure::new("denied", format!("denied by {rule}: {reason}"))),
            ),
            Self::Error { code, message } => (
                StepStatus::Error,
                Map::new(),
                Some(Failure::new("tool", format!("{code}: {message}"))),
            ),
        };
        Some(Entry::Done { status, outputs, failure })
    }
}

/// Why the host could not do what the interpreter asked.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct HostError {
    /// The error code (seed 002's, or Jig's).
    pub code: String,
    /// What went wrong.
    pub message: String,
}

/// The outside world of a run.
#[async_trait]
pub trait Host: Send + Sync {
    /// Resolve a tool reference of the runbook (`health-check` + `check`).
    fn tool(&self, reference: &str, action: Option<&str>) -> Result<ToolInfo, String>;

    /// Run a tool step. The engine dispatches it with an idempotency key made of the run and
    /// the step instance, so that a replay after a crash never runs it twice.
    async fn call_tool(&self, call: &ToolCall) -> ToolAnswer;

    /// Record `entry` under `key` unless something is recorded there already; either way,
    /// return what is recorded (the first writer wins).
    async fn record(&self, key: &str, entry: Entry) -> Result<Entry, HostError>;

    /// Append a trace event, once: an event whose key was appended before is ignored (a replay
    /// walks the same steps again). A host may hold events back until the next [`Host::record`]
    /// or [`Host::flush`]: one lost in a crash is appended again by the next walk.
    async fn trace(&self, event: TraceEvent) -> Result<(), HostError>;

    /// Write what [`Host::trace`] held back.
    async fn flush(&self) -> Result<(), HostError> {
        Ok(())
    }

    /// The runbook an `invoke` step names, if the host knows runbooks.
    fn runbook(&self, reference: &str) -> Option<jig_model::runbook::Runbook> {
        let _ = reference;
        None
    }

    /// The registry tool that runs extension `name` (the manifest's `config.extensions`).
    fn extension_runner(&self, name: &str) -> Option<String> {
        let _ = name;
        None
    }

    /// The project's name for the runbook a `next_runbook` of the running runbook names (the
    /// loader resolved it); `None` when the host knows no such runbook.
    fn runbook_name(&self, reference: &str) -> Option<String> {
        let _ = reference;
        None
    }

    /// How many pauses people have asked for, counting those recorded while this walk was
    /// under way (its journal holds those from before); `0` when the host cannot tell.
    async fn pauses(&self) -> usize {
        0
    }

    /// Whether a step's `delay` is waited out (a host replaying a recorded run does not wait).
    fn waits(&self) -> bool {
        true
    }
}
