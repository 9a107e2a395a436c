//! Trace events (kernel-v0 §11): what a run did, in order, each attributed to who did it.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The kinds of trace event.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TraceKind {
    /// The run began.
    RunStart,
    /// A step is about to run.
    StepStart,
    /// A step finished.
    StepComplete,
    /// A branch arm was taken.
    BranchEnter,
    /// It was left.
    BranchExit,
    /// Parallel arms began.
    ParallelFork,
    /// They all finished.
    ParallelMerge,
    /// An `end` step was reached.
    OutcomeResolved,
    /// A step's contract was resolved.
    ContractEvaluated,
    /// Governance decided about a step.
    GovernanceDecision,
    /// A `for_each` began.
    ForEachStart,
    /// One of its items.
    ForEachItem,
    /// A `repeat` began.
    RepeatStart,
    /// One of its rounds.
    RepeatIteration,
    /// A step's visibility was applied.
    VisibilityApplied,
    /// Outputs were exported to the global namespace.
    ScopeExport,
    /// A person supplied evidence.
    Evidence,
    /// A person decided an approval, a go-ahead, a choice, a retry.
    Approval,
    /// The run stopped to wait for a person.
    Paused,
    /// The run finished.
    RunComplete,
}

impl TraceKind {
    /// The wire spelling (`step_start`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::RunStart => "run_start",
            Self::StepStart => "step_start",
            Self::StepComplete => "step_complete",
            Self::BranchEnter => "branch_enter",
            Self::BranchExit => "branch_exit",
            Self::ParallelFork => "parallel_fork",
            Self::ParallelMerge => "parallel_merge",
            Self::OutcomeResolved => "outcome_resolved",
            Self::ContractEvaluated => "contract_evaluated",
            Self::GovernanceDecision => "governance_decision",
            Self::ForEachStart => "for_each_start",
            Self::ForEachItem => "for_each_item",
            Self::RepeatStart => "repeat_start",
            Self::RepeatIteration => "repeat_iteration",
            Self::VisibilityApplied => "visibility_applied",
            Self::ScopeExport => "scope_export",
            Self::Evidence => "evidence",
            Self::Approval => "approval",
            Self::Paused => "paused",
            Self::RunComplete => "run_complete",
        }
    }
}

/// Who did what a trace event records (kernel-v0 §11).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Actor {
    /// `system`, `human` or `agent`.
    pub kind: String,
    /// A stable id: the principal, or `kernel`.
    pub id: String,
    /// A functional role.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<String>,
}

impl Actor {
    /// The kernel itself.
    pub fn system() -> Self {
        Self { kind: "system".to_owned(), id: "kernel".to_owned(), role: None }
    }

    /// A person.
    pub fn human(id: &str) -> Self {
        Self { kind: "human".to_owned(), id: id.to_owned(), role: None }
    }
}

/// One trace event.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TraceEvent {
    /// Unique within the run and the same on every replay, so each is recorded once.
    pub key: String,
    /// What happened.
    pub kind: TraceKind,
    /// The step instance it is about, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step: Option<String>,
    /// Who did it.
    pub actor: Actor,
    /// The details.
    pub data: Value,
}
