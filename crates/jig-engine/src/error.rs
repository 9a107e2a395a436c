//! Errors of the engine's own operations (a call never fails with these: it answers with a
//! `ToolResponse` carrying an error code).

use jig_load::LoadFailure;

/// Why an engine operation failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum EngineError {
    /// The project has errors; the engine runs only on a valid registry (fail-closed).
    #[error("{0}")]
    Invalid(Box<LoadFailure>),
    /// The audit store failed.
    #[error(transparent)]
    Audit(#[from] jig_audit::AuditError),
    /// The policy cannot be compiled.
    #[error(transparent)]
    Policy(#[from] jig_policy::PolicyError),
    /// The workspace cannot be opened.
    #[error(transparent)]
    Workspace(#[from] jig_policy::sandbox::SandboxError),
    /// No approval with that id.
    #[error("no approval `{0}`")]
    NoApproval(String),
    /// The approval was already decided.
    #[error("approval `{id}` is already {state}")]
    AlreadyDecided {
        /// The approval.
        id: String,
        /// Its state.
        state: jig_audit::ApprovalState,
    },
    /// The policy forbids approving one's own request.
    #[error(
        "`{principal}` asked for this call and may not approve it (`approvals.self_approval: false`)"
    )]
    SelfApproval {
        /// Who tried.
        principal: String,
    },
    /// A selection could not be made.
    #[error("no tool fits the intent: {0}")]
    NoSelection(String),
    /// The project's files cannot be watched.
    #[error(transparent)]
    Watch(#[from] jig_load::watch::WatchError),
    /// A registration clashes with an existing tool.
    #[error("a tool `{0}` is already registered")]
    Duplicate(String),
}

impl From<LoadFailure> for EngineError {
    fn from(failure: LoadFailure) -> Self {
        Self::Invalid(Box::new(failure))
    }
}
