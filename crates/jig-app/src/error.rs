//! What went wrong, with the stable code every surface answers with.

use jig_model::ErrorCode;

/// An operation refused or failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AppError {
    /// The actor may not do this here (a viewer running, a runner approving).
    #[error("{0}")]
    Forbidden(String),
    /// No such tool, call or approval.
    #[error("{0}")]
    NotFound(String),
    /// The request itself is wrong (it names what and why).
    #[error("{0}")]
    Invalid(String),
    /// The engine refused or failed.
    #[error(transparent)]
    Engine(#[from] jig_engine::EngineError),
    /// The runbook service refused or failed.
    #[error(transparent)]
    Runbook(#[from] jig_runbook::ServiceError),
}

impl AppError {
    /// The stable error code.
    pub fn code(&self) -> ErrorCode {
        match self {
            Self::Forbidden(_) => ErrorCode::Policy,
            Self::NotFound(_) => ErrorCode::NotFound,
            Self::Invalid(_) => ErrorCode::ValidationFail,
            Self::Engine(error) => error.code(),
            Self::Runbook(error) => error.code(),
        }
    }
}
