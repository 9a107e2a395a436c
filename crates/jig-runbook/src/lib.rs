//! Jig's runbook engine: runs gert's `kernel/v0` runbooks (and `runbook/v0`, `v1` trees) step
//! by step, with every tool step an engine call.
//!
//! The engine is an [`Interpreter`] over a [`Journal`]: it walks the runbook from the start
//! each time it is asked to [`Interpreter::advance`], answering what already happened from the
//! journal and stopping where people are needed (evidence, a choice, an approval, a go-ahead).
//! A run's state is thus nothing but its journal, kept by the [`Host`] — in the audit store for
//! real runs, in memory for scenario tests — so a paused run resumes from any process.
//!
//! What lies outside is behind [`Host`]: resolving tool references, calling tools (through the
//! engine's policy, approvals and audit, or from a recorded scenario), recording journal
//! entries with first-writer-wins, and appending trace events once.

mod contract;
mod error;
mod governance;
pub mod graph;
mod host;
mod inputs;
mod interp;
pub mod journal;
mod outcome;
pub mod registry;
mod render;
pub mod scenario;
mod service;
mod trace;
mod vars;
mod visibility;

pub use contract::risk;
pub use error::RunbookError;
pub use governance::Verdict;
pub use host::{Contract, Host, HostError, ToolAnswer, ToolCall, ToolInfo};
pub use inputs::resolve as resolve_inputs;
pub use interp::{Interpreter, Run};
pub use journal::{Entry, Failure, Journal, StepStatus};
pub use outcome::{Need, Outcome, Progress, RunStatus, StepFailure, Waiting};
pub use service::{
    Action, Recorded, RunView, RunbookDetail, RunbookSummary, Runbooks, ServiceError,
};
pub use trace::{Actor, TraceEvent, TraceKind};

/// SHA-256 of a value's JSON, hex: how traces name a state without copying it.
pub(crate) fn hash_of(value: &serde_json::Value) -> String {
    jig_model::Sha256Hash::of_bytes(value.to_string().as_bytes()).to_hex()
}
