//! Session budgets: how many calls, bytes and milliseconds a session may spend. The engine
//! records usage; a Coordinator can ask what is left.

use jig_model::policy::SessionBudgets;
use serde::{Deserialize, Serialize};

use crate::decision::Denial;

/// What a session has spent so far.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct SessionUsage {
    /// Calls made.
    pub calls: u64,
    /// Bytes of arguments and results.
    pub bytes: u64,
    /// Milliseconds of tool execution.
    pub wall_ms: u64,
}

/// What a session has left (`None`: no limit).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Remaining {
    /// Calls left.
    pub calls: Option<u64>,
    /// Bytes left.
    pub bytes: Option<u64>,
    /// Milliseconds left.
    pub wall_ms: Option<u64>,
}

/// What is left of `budgets` after `usage`.
pub fn remaining(budgets: &SessionBudgets, usage: &SessionUsage) -> Remaining {
    Remaining {
        calls: budgets.max_calls.map(|max| max.saturating_sub(usage.calls)),
        bytes: budgets.max_bytes.map(|max| max.saturating_sub(usage.bytes)),
        wall_ms: budgets.max_wall_ms.map(|max| max.saturating_sub(usage.wall_ms)),
    }
}

/// Whether one more call with `request_bytes` of arguments fits.
pub fn check(
    budgets: &SessionBudgets,
    usage: &SessionUsage,
    request_bytes: u64,
) -> Result<(), Denial> {
    let left = remaining(budgets, usage);
    if left.calls == Some(0) {
        return Err(Denial::new(
            "budgets.max_calls",
            format!("the session has used its {} calls", usage.calls),
        ));
    }
    if left.bytes.is_some_and(|b| b < request_bytes) {
        return Err(Denial::new("budgets.max_bytes", "the session's byte budget is spent"));
    }
    if left.wall_ms == Some(0) {
        return Err(Denial::new("budgets.max_wall_ms", "the session's time budget is spent"));
    }
    Ok(())
}
