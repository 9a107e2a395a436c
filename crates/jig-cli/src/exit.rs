//! Exit codes (DESIGN.md §7).

use std::process::ExitCode;

/// How a command ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Code {
    /// Success.
    Ok = 0,
    /// Not found, or the operation failed.
    Failed = 1,
    /// The command line is wrong (clap uses 2 as well).
    Usage = 2,
    /// The project has errors.
    Invalid = 3,
    /// A runbook run ended `escalated`.
    Escalated = 4,
    /// A runbook run ended `needs_rca`.
    NeedsRca = 5,
    /// A runbook run waits for people.
    Waiting = 6,
}

impl From<Code> for ExitCode {
    fn from(code: Code) -> Self {
        ExitCode::from(code as u8)
    }
}
