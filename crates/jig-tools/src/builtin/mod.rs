//! The built-in catalog (seed 002 §5), dispatched by name. Each tool's contract is its
//! definition in `toolpacks/std`.
//!
//! File, search and process-table work blocks, so it runs outside the async scheduler (in place
//! on a multi-threaded runtime, else on the blocking pool) with the call owned whole
//! ([`call::Call`]); such work checks its deadline and cancel token as it goes.

mod ast;
mod call;
mod command;
mod curl;
mod file;
mod fs_ops;
mod git;
mod grep;
mod list;
mod locks;
mod proc;
mod repo;
mod rules;
mod shell;
mod walk;

use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use jig_model::ErrorCode;
use jig_model::tool_def::ToolExecution;
use jig_model::toolpack::Execution as Kind;

use self::call::Call;
use self::locks::WriteLocks;
use jig_exec::{Execution, Executor, Invocation, Output, ToolError};

/// Built-ins cheap and bounded enough to run on the async worker itself: one read of at most
/// `max_bytes` (1 MiB by default) costs less than handing the worker over (measured with
/// `dispatch-bench`: about 5% more calls per second).
const INLINE: [&str; 1] = ["file_read"];

/// A built-in that runs on a blocking thread.
type Blocking = fn(&Call) -> Result<Output, ToolError>;

/// Runs `builtin` tools.
#[derive(Debug, Default)]
pub struct BuiltinExecutor {
    locks: Arc<WriteLocks>,
    index: Arc<Mutex<jig_ast::Index>>,
}

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
        let blocking: Blocking = match name {
            "file_read" => file::read,
            "file_write" => file::write,
            "file_patch" => file::patch,
            "fs_list" => list::list,
            "fs_move" => fs_ops::move_path,
            "fs_copy" => fs_ops::copy_path,
            "fs_delete" => fs_ops::delete_path,
            "grep" => grep::grep,
            "ast_generate" => ast::generate,
            "ast_query" => ast::query,
            "ast_edit" => ast::edit,
            "ast_validate" => ast::validate,
            "ast_external" => ast::external,
            "git_status" => git::status,
            "git_diff" => git::diff,
            "git_add" => git::add,
            "git_commit" => git::commit,
            "git_checkout" => git::checkout,
            "git_merge" => git::merge,
            "git_rebase" => git::rebase,
            "git_push" => git::push,
            "git_pull" => git::pull,
            "proc_list" => proc::list,
            "validate" => rules::validate,
            "curl" => return Ok(Execution::Done(curl::curl(&invocation).await?)),
            "shell_exec" => return Ok(Execution::Done(shell::exec(&invocation).await?)),
            other => {
                return Err(ToolError::new(
                    ErrorCode::Internal,
                    format!(
                        "the built-in `{other}` is defined but not implemented in this version of Jig"
                    ),
                ));
            }
        };
        let call = Call::new(&invocation, &self.locks, &self.index);
        let work = move || {
            let output = blocking(&call)?;
            // Seed 002 §8, sync: what a call wrote is re-parsed before anyone queries it.
            ast::sync(&call, &output.files_touched);
            Ok::<_, ToolError>(output)
        };
        // On a multi-threaded runtime the work runs right here, the worker handing its other
        // tasks to its peers (no thread hop: most built-ins take microseconds); elsewhere it
        // goes to the blocking pool.
        let output = if INLINE.contains(&name) {
            work()?
        } else if tokio::runtime::Handle::current().runtime_flavor()
            == tokio::runtime::RuntimeFlavor::MultiThread
        {
            tokio::task::block_in_place(work)?
        } else {
            tokio::task::spawn_blocking(work).await.map_err(|e| {
                ToolError::new(ErrorCode::Internal, format!("the built-in `{name}` failed: {e}"))
            })??
        };
        Ok(Execution::Done(output))
    }
}
