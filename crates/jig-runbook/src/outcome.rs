//! Where an advance left a run: finished with an outcome, stopped by a failure, or waiting for
//! people — and what each waiting step shows them.

use jig_model::ApprovalId;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use jig_model::runbook::OutcomeCategory;
use jig_model::runbook::legacy::{ChoiceOption, EvidenceRequirement};
pub use jig_model::scenario::RunStatus;

use crate::host::Contract;
use crate::journal::Failure;

/// The structured outcome an `end` step declares (kernel-v0 §5).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Outcome {
    /// The fixed category.
    pub category: OutcomeCategory,
    /// Domain-specific meaning.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
    /// Details, rendered.
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    #[cfg_attr(feature = "openapi", schema(value_type = Object))]
    pub meta: Map<String, Value>,
    /// The `end` step (instance key).
    pub step: String,
}

/// What a waiting step needs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(tag = "need", rename_all = "snake_case")]
pub enum Need {
    /// A reviewer's go-ahead: run or skip (step-by-step runs, and steps governance asks a
    /// person about).
    Go {
        /// Why: `stepwise`, or the governance rule that asks for approval.
        reason: String,
        /// How many different people must say go (a rule's `min_approvers`, a v0/v1 step's
        /// `approvals.min`); 1 for a plain go-ahead.
        #[serde(default = "one")]
        required: u32,
        /// Who has said go so far, when more than one must.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        approved_by: Vec<String>,
    },
    /// Evidence for a manual step (none listed: an acknowledgement).
    Evidence {
        /// What to supply.
        required: Vec<EvidenceRequirement>,
    },
    /// A choice between options.
    Choice {
        /// The question.
        prompt: Option<String>,
        /// The options.
        options: Vec<ChoiceOption>,
    },
    /// A person's approval of the exact tool call (the engine's approval queue).
    Approval {
        /// The approval to decide.
        approval_id: ApprovalId,
        /// The rule that asked.
        rule: String,
    },
    /// The step failed: retry it, or accept the failure.
    Failed {
        /// What went wrong.
        failure: Failure,
    },
    /// A person paused the run before this step.
    Paused,
}

fn one() -> u32 {
    1
}

impl Need {
    /// A go-ahead one person gives.
    pub fn go(reason: impl Into<String>) -> Self {
        Self::Go { reason: reason.into(), required: 1, approved_by: Vec::new() }
    }
}

/// A step the run waits at.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Waiting {
    /// The step instance.
    pub key: String,
    /// The step's id.
    pub step_id: String,
    /// The step's type (`tool`, `manual` …).
    pub step_type: String,
    /// Its title, if it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What it needs.
    pub need: Need,
    /// Instructions, rendered (manual steps).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
    /// The registry tool (tool steps).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// The inputs as they will be sent, rendered (tool steps).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<Object>))]
    pub inputs: Option<Map<String, Value>>,
    /// The step's resolved contract.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub contract: Option<Contract>,
}

/// Where an advance left the run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Progress {
    /// Completed, failed, error, denied, or paused (waiting).
    pub status: RunStatus,
    /// The outcome, when an `end` step was reached.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outcome: Option<Outcome>,
    /// The steps waiting for people.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub waiting: Vec<Waiting>,
    /// Why the run stopped, when it failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure: Option<StepFailure>,
    /// Step ids executed (not skipped by `when`), in order.
    pub visited: Vec<String>,
    /// The variables at the end: inputs, constants and outputs.
    #[cfg_attr(feature = "openapi", schema(value_type = Object))]
    pub variables: Value,
}

impl Progress {
    /// A run whose first walk is still under way: nothing visited yet that anyone saved.
    pub fn not_walked() -> Self {
        Self {
            status: RunStatus::Paused,
            outcome: None,
            waiting: Vec::new(),
            failure: None,
            visited: Vec::new(),
            variables: Value::Object(serde_json::Map::new()),
        }
    }
}

/// The step that stopped a run, and why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct StepFailure {
    /// The step instance.
    pub key: String,
    /// Why.
    pub failure: Failure,
}
