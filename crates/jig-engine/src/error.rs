//! Errors of the engine's own operations (a call never fails with these: it answers with a
//! `ToolResponse` carrying an error code).

use jig_load::LoadFailure;
use jig_model::ErrorCode;
use jig_model::envelope::ErrorMessage;

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
    /// No tool with that id.
    #[error("no tool `{0}`")]
    NoTool(String),
    /// No approval with that id.
    #[error("no approval `{0}`")]
    NoApproval(String),
    /// The approval was already decided.
    #[error("approval `{id}` is already {state}")]
    AlreadyDecided {
        /// The approval.
        id: jig_model::ApprovalId,
        /// Its state.
        state: jig_audit::ApprovalState,
    },
    /// This person already approved this approval (several approvals are several people).
    #[error("`{principal}` has already approved `{id}`: it needs someone else's approval too")]
    ApprovedAlready {
        /// The approval.
        id: jig_model::ApprovalId,
        /// Who tried again.
        principal: String,
    },
    /// The approval changed while this person approved (decided, or approved by another at
    /// the same moment).
    #[error("approval `{id}` changed at the same moment: read it again and retry")]
    ApprovalMoved {
        /// The approval.
        id: jig_model::ApprovalId,
    },
    /// The policy forbids approving one's own request.
    #[error(
        "`{principal}` asked for this call and may not approve it (`approvals.self_approval: false`)"
    )]
    SelfApproval {
        /// Who tried.
        principal: String,
    },
    /// Every place for calls in the background stayed taken for as long as a start waits.
    #[error(
        "busy: all {running} places for calls in the background stayed taken for {} s; nothing of this call ran or was recorded — send it again later",
        waited.as_secs()
    )]
    Busy {
        /// How many calls were running.
        running: usize,
        /// How long the start waited.
        waited: std::time::Duration,
    },
    /// A selection could not be made.
    #[error("no tool fits the intent: {0}")]
    NoSelection(String),
    /// The project's files cannot be watched.
    #[error(transparent)]
    Watch(#[from] jig_load::watch::WatchError),
    /// A preset is not valid (its name, or its arguments).
    #[error("preset {0}")]
    BadPreset(String),
    /// No preset by that name.
    #[error("no preset `{0}`")]
    NoPreset(String),
    /// A preset file cannot be read or written.
    #[error("preset file `{path}`: {source}")]
    PresetIo {
        /// The file, relative to the project root.
        path: String,
        /// The cause.
        source: std::io::Error,
    },
    /// Someone asked to stop a call another person made.
    #[error("`{by}` may not stop `{request_id}`: only who made a call (or an admin) may stop it")]
    NotYours {
        /// The call.
        request_id: String,
        /// Who asked.
        by: String,
    },
    /// A draft policy cannot be read.
    #[error("draft policy: {0}")]
    BadDraft(String),
    /// A registration clashes with an existing tool.
    #[error("a tool `{0}` is already registered")]
    Duplicate(String),
    /// Not an artifact's name: artifacts are named by their SHA-256, 64 lowercase hex digits.
    #[error("`{0}` is not an artifact's SHA-256 (64 lowercase hex digits)")]
    BadArtifact(String),
    /// No artifact with that hash in this project.
    #[error("no artifact {0} in this project's `.jig/artifacts`")]
    NoArtifact(String),
    /// The stored file no longer has the hash it is stored under.
    #[error(
        "artifact {0} was changed on disk after it was stored: its content no longer matches its hash"
    )]
    ArtifactChanged(String),
    /// The artifact could not be read.
    #[error("artifact {sha256}: {source}")]
    ArtifactIo {
        /// The artifact.
        sha256: String,
        /// The cause.
        source: std::io::Error,
    },
    /// A running job's output could not be read.
    #[error("the output of `{request_id}`'s job: {source}")]
    JobLog {
        /// The call.
        request_id: String,
        /// The cause.
        source: std::io::Error,
    },
    /// A job's scheduler refused or failed a request (cancel).
    #[error("{message}")]
    Scheduler {
        /// The stable code.
        code: ErrorCode,
        /// What the scheduler said.
        message: String,
    },
}

impl From<LoadFailure> for EngineError {
    fn from(failure: LoadFailure) -> Self {
        Self::Invalid(Box::new(failure))
    }
}

impl EngineError {
    /// The stable code of this error: what every surface (CLI, HTTP, desktop, MCP) reports,
    /// so none maps errors by itself.
    pub fn code(&self) -> ErrorCode {
        match self {
            Self::Invalid(_) | Self::BadPreset(_) | Self::BadDraft(_) | Self::BadArtifact(_) => {
                ErrorCode::ValidationFail
            }
            Self::Audit(jig_audit::AuditError::BadQuery(_)) => ErrorCode::ValidationFail,
            Self::Audit(_) | Self::Watch(_) => ErrorCode::Internal,
            Self::Policy(_) | Self::SelfApproval { .. } | Self::NotYours { .. } => {
                ErrorCode::Policy
            }
            Self::Workspace(_)
            | Self::PresetIo { .. }
            | Self::ArtifactChanged(_)
            | Self::ArtifactIo { .. }
            | Self::JobLog { .. } => ErrorCode::FileIo,
            Self::NoTool(_)
            | Self::NoApproval(_)
            | Self::NoSelection(_)
            | Self::NoPreset(_)
            | Self::NoArtifact(_) => ErrorCode::NotFound,
            Self::AlreadyDecided { .. }
            | Self::Duplicate(_)
            | Self::ApprovedAlready { .. }
            | Self::ApprovalMoved { .. } => ErrorCode::Conflict,
            Self::Scheduler { code, .. } => *code,
            Self::Busy { .. } => ErrorCode::Limit,
        }
    }

    /// This error as seed 002's `ErrorMessage` envelope.
    pub fn to_message(&self, request_id: Option<&str>) -> ErrorMessage {
        ErrorMessage {
            kind: Default::default(),
            code: self.code(),
            message: self.to_string(),
            request_id: request_id.map(str::to_owned),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_error_has_its_code_and_envelope() {
        let cases = [
            (EngineError::NoApproval("a1".into()), ErrorCode::NotFound),
            (
                EngineError::AlreadyDecided {
                    id: jig_model::ApprovalId::new("a1"),
                    state: jig_audit::ApprovalState::Denied,
                },
                ErrorCode::Conflict,
            ),
            (EngineError::SelfApproval { principal: "alice".into() }, ErrorCode::Policy),
            (EngineError::NoSelection("x".into()), ErrorCode::NotFound),
            (EngineError::Duplicate("t".into()), ErrorCode::Conflict),
            (EngineError::BadPreset("name".into()), ErrorCode::ValidationFail),
            (EngineError::NoPreset("t/p".into()), ErrorCode::NotFound),
            (EngineError::BadArtifact("x".into()), ErrorCode::ValidationFail),
            (EngineError::NoArtifact("ab".into()), ErrorCode::NotFound),
            (EngineError::ArtifactChanged("ab".into()), ErrorCode::FileIo),
            (
                EngineError::Busy { running: 256, waited: std::time::Duration::from_secs(10) },
                ErrorCode::Limit,
            ),
        ];
        for (error, code) in cases {
            assert_eq!(error.code(), code, "{error}");
            let message = serde_json::to_value(error.to_message(Some("r1"))).expect("json");
            assert_eq!(message["type"], "ErrorMessage");
            assert_eq!(message["code"], code.as_str());
            assert_eq!(message["request_id"], "r1");
        }
    }
}
