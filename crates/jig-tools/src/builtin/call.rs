//! What a built-in running on a blocking thread owns: its arguments, the workspace, the policy, its deadline and cancel token, and the shared write locks.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use jig_model::{ErrorCode, ToolDef};
use jig_policy::Policy;
use jig_policy::sandbox::Workspace;
use serde_json::Value;

use super::locks::WriteLocks;
use jig_exec::{Cancel, Invocation, ToolError};

/// One built-in call, owned so it can move to a blocking thread.
#[derive(Debug)]
pub(crate) struct Call {
    pub tool: Arc<ToolDef>,
    pub args: Value,
    pub workspace: Arc<Workspace>,
    pub policy: Arc<Policy>,
    pub cancel: Cancel,
    pub timeout: Duration,
    pub deadline: Instant,
    pub locks: Arc<WriteLocks>,
    pub index: Arc<Mutex<jig_ast::Index>>,
}

impl Call {
    pub fn new(
        invocation: &Invocation<'_>,
        locks: &Arc<WriteLocks>,
        index: &Arc<Mutex<jig_ast::Index>>,
    ) -> Self {
        Self {
            tool: Arc::clone(invocation.tool),
            args: invocation.args.clone(),
            workspace: Arc::clone(invocation.workspace),
            policy: Arc::clone(invocation.policy),
            cancel: invocation.cancel.clone(),
            timeout: invocation.timeout,
            deadline: Instant::now() + invocation.timeout,
            locks: Arc::clone(locks),
            index: Arc::clone(index),
        }
    }

    /// An error when the call was cancelled or ran out of time; long loops ask this often so
    /// that a blocking thread never outlives its call by much.
    pub fn check_time(&self) -> Result<(), ToolError> {
        if self.cancel.is_cancelled() {
            return Err(ToolError::new(
                ErrorCode::Timeout,
                format!("`{}` was cancelled", self.tool.id),
            ));
        }
        if Instant::now() >= self.deadline {
            return Err(ToolError::new(
                ErrorCode::Timeout,
                format!("`{}` did not finish within {} ms", self.tool.id, self.timeout.as_millis()),
            ));
        }
        Ok(())
    }

    /// Whether the call should stop now.
    pub fn should_stop(&self) -> bool {
        self.check_time().is_err()
    }

    /// A required string argument.
    pub fn str(&self, name: &str) -> Result<&str, ToolError> {
        self.args.get(name).and_then(Value::as_str).ok_or_else(|| {
            ToolError::new(ErrorCode::ValidationFail, format!("argument `{name}` must be a string"))
        })
    }

    /// An optional string argument.
    pub fn opt_str(&self, name: &str) -> Option<&str> {
        self.args.get(name).and_then(Value::as_str)
    }

    /// An array-of-strings argument (empty when absent).
    pub fn strings(&self, name: &str) -> Vec<&str> {
        self.args
            .get(name)
            .and_then(Value::as_array)
            .map(|items| items.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default()
    }

    /// A boolean argument with its default.
    pub fn bool(&self, name: &str, default: bool) -> bool {
        self.args.get(name).and_then(Value::as_bool).unwrap_or(default)
    }

    /// A count argument with its default.
    pub fn count(&self, name: &str, default: usize) -> usize {
        self.args
            .get(name)
            .and_then(Value::as_u64)
            .map_or(default, |n| usize::try_from(n).unwrap_or(usize::MAX))
    }
}
