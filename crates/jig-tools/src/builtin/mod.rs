//! The built-in catalog (seed 002 §5), dispatched by name. Each tool's contract is its
//! definition in `toolpacks/std`.

mod file;

use async_trait::async_trait;
use jig_model::ErrorCode;
use jig_model::tool_def::ToolExecution;
use jig_model::toolpack::Execution as Kind;

use crate::executor::{Execution, Executor, Invocation, Output, ToolError};

/// Runs `builtin` tools.
#[derive(Debug, Default)]
pub struct BuiltinExecutor;

#[async_trait]
impl Executor for BuiltinExecutor {
    async fn execute(&self, invocation: Invocation<'_>) -> Result<Execution, ToolError> {
        let tool = invocation.tool;
        let ToolExecution::Toolpack(Kind::Builtin(builtin)) = &tool.execution else {
            return Err(ToolError::new(
                ErrorCode::Internal,
                format!("`{}` is not a built-in", tool.id),
            ));
        };
        let name = builtin.name.as_deref().unwrap_or(&tool.id);
        let output = match name {
            "file_read" => Output::data(file::read(&invocation)?),
            "file_write" => file::write(&invocation)?,
            other => {
                return Err(ToolError::new(
                    ErrorCode::Internal,
                    format!(
                        "the built-in `{other}` is defined but not implemented in this version of Jig"
                    ),
                ));
            }
        };
        Ok(Execution::Done(output))
    }
}
