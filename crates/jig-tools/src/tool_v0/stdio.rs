//! The `stdio` transport: the action's argv run as a process per call.

use jig_model::ErrorCode;
use jig_model::tool_def::GertExecution;
use serde_json::json;

use super::{argv, extract};
use crate::redact::redact;
use jig_exec::process;
use jig_exec::rundir::RunDir;
use jig_exec::{Invocation, Output, ToolError};

pub(super) async fn run(
    invocation: &Invocation<'_>,
    gert: &GertExecution,
) -> Result<Output, ToolError> {
    let run = RunDir::prepare(invocation)?;
    let argv = argv(gert, run.as_ref().map_or(invocation.args, |r| &r.args))?;
    if process::find_program(&argv[0]).is_none() {
        return Err(ToolError::new(
            ErrorCode::Shell,
            format!("`{}` needs `{}`, which was not found on PATH", invocation.tool.id, argv[0]),
        )
        .with_details(json!({ "binary": argv[0] })));
    }
    let env = crate::cli::environment(invocation.tool);
    let finished =
        process::run_tool(invocation, run.as_ref(), &argv, env, None, &invocation.events).await?;
    if finished.code != Some(0) {
        return Err(ToolError::new(
            ErrorCode::Shell,
            match finished.code {
                Some(code) => format!("`{}` exited with code {code}", argv[0]),
                None => format!("`{}` was killed by a signal", argv[0]),
            },
        )
        .with_details(json!({ "exit_code": finished.code, "stdout": finished.stdout, "stderr": finished.stderr })));
    }
    let mut data = extract::outputs(gert, &finished, &invocation.tool.output_schema)?;
    redact(gert, &mut data)?;
    if let Some(run) = &run {
        run.collect(invocation.tool, invocation.policy, &finished.log(), &mut data).await?;
    }
    Ok(Output::data(data))
}
