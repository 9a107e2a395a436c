//! The runbook service's types as its callers see them: a runbook listed and detailed, a run
//! as people see it, what a person does to a step, and why the service refused.

use std::collections::BTreeMap;

use jig_model::ErrorCode;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::RunbookError;
use crate::outcome::Progress;

/// A runbook of the project, as listed.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct RunbookSummary {
    /// Its reference name.
    pub name: String,
    /// What it is for.
    pub description: Option<String>,
    /// `kernel/v0`, `runbook/v1` …
    pub api_version: String,
    /// Its file, relative to the project root.
    pub file: String,
    /// Its inputs: name → declaration.
    #[cfg_attr(feature = "openapi", schema(value_type = Object))]
    pub inputs: Value,
    /// How many steps, counting those inside branches and loops.
    pub steps: usize,
    /// Its recorded scenarios.
    pub scenarios: Vec<String>,
}

/// A run as people see it: where it stands and what it waits for.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct RunView {
    /// The run's id.
    pub id: String,
    /// The runbook.
    pub runbook: String,
    /// Who started it.
    pub started_by: Option<String>,
    /// When it began (µs since the epoch).
    pub created_us: i64,
    /// When it last moved.
    pub updated_us: i64,
    /// Where it stands.
    pub progress: Progress,
    /// What the policy will decide for each waiting tool step's call, by step instance: the
    /// reviewer sees the verdict before giving the go-ahead.
    pub verdicts: BTreeMap<String, jig_engine::Preview>,
    /// Who paused the run, while it holds for a pause (the latest pause when there were several).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paused_by: Option<String>,
}

/// A runbook with the graph of its steps.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct RunbookDetail {
    /// What the list shows.
    #[serde(flatten)]
    pub summary: RunbookSummary,
    /// Its steps and how control moves between them.
    pub graph: crate::graph::Graph,
}

/// What a person does to a waiting step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(tag = "action", rename_all = "snake_case")]
pub enum Action {
    /// Run the step (a go-ahead).
    Run,
    /// Skip it.
    Skip {
        /// Why, for the record.
        reason: String,
    },
    /// Supply a manual step's evidence.
    Evidence {
        /// Evidence name → value.
        #[cfg_attr(feature = "openapi", schema(value_type = Object))]
        values: Map<String, Value>,
    },
    /// Answer a step's choice.
    Choose {
        /// The option's value.
        value: String,
    },
    /// Approve the exact tool call the step waits to make.
    Approve,
    /// Deny it: the call is refused, and the run stops.
    Deny,
    /// Run a failed step again.
    Retry,
    /// Accept a failed step's failure: the run ends failed.
    Abort,
    /// Hold the run before its next step that would do something (the whole run's, whatever
    /// step it names); a go-ahead at the step where it holds resumes it.
    Pause,
    /// Continue an ended run with the runbook its outcome names (recorded by `Runbooks::follow`).
    Follow,
}

/// Why the service refused.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ServiceError {
    /// No such runbook or run.
    #[error("{0}")]
    NotFound(String),
    /// What a person gave is not what the step takes (an attachment that is not one).
    #[error("{0}")]
    Invalid(String),
    /// Someone else acted first, or the step does not wait for this.
    #[error("{0}")]
    Conflict(String),
    /// The policy refuses this person this action.
    #[error("{0}")]
    Forbidden(String),
    /// The runbook refuses to run (inputs, a parallel conflict, a changed runbook).
    #[error(transparent)]
    Runbook(#[from] RunbookError),
    /// The engine refused (an approval it would not grant).
    #[error(transparent)]
    Engine(#[from] jig_engine::EngineError),
    /// The audit store failed.
    #[error("audit store: {0}")]
    Store(#[from] jig_audit::AuditError),
}

impl ServiceError {
    /// The stable error code.
    pub fn code(&self) -> ErrorCode {
        match self {
            Self::NotFound(_) => ErrorCode::NotFound,
            Self::Invalid(_) => ErrorCode::ValidationFail,
            Self::Conflict(_) => ErrorCode::Conflict,
            Self::Forbidden(_) => ErrorCode::Policy,
            Self::Runbook(e) => e.code(),
            Self::Engine(e) => e.code(),
            Self::Store(_) => ErrorCode::Internal,
        }
    }
}
