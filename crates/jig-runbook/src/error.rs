//! Why a run could not start or advance at all (as opposed to a step failing, which is a
//! result: [`crate::Progress`]).

use jig_model::ErrorCode;

/// A runbook error. Each names what it is about.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum RunbookError {
    /// An input is missing, of the wrong type, or not allowed.
    #[error("input `{name}`: {message}")]
    Input {
        /// The input.
        name: String,
        /// What is wrong.
        message: String,
    },
    /// Parallel arms would touch the same resource (kernel-v0 §8): refused before anything runs.
    #[error(
        "step `{step}`: parallel arms {first} and {second} both use {tags} and one of them writes it; run them in sequence"
    )]
    ParallelConflict {
        /// The parallel step.
        step: String,
        /// One arm.
        first: String,
        /// The other.
        second: String,
        /// The shared resource tags.
        tags: String,
    },
    /// The journal was written by a different runbook (it changed since the run began).
    #[error("the run began with runbook hash {recorded}, which is not this runbook ({current})")]
    Changed {
        /// The hash the run began with.
        recorded: String,
        /// The runbook's hash now.
        current: String,
    },
    /// The host failed (the audit store, the engine).
    #[error("{0}")]
    Host(#[from] crate::host::HostError),
}

impl RunbookError {
    /// The stable error code.
    pub fn code(&self) -> ErrorCode {
        match self {
            Self::Input { .. } | Self::ParallelConflict { .. } => ErrorCode::ValidationFail,
            Self::Changed { .. } => ErrorCode::Conflict,
            Self::Host(_) => ErrorCode::Internal,
        }
    }
}
