//! `execution.kind: cli` — a program run as argv, each element templated.
//!
//! The environment starts empty: only `env.passthrough` variables (from Jig's own environment)
//! and `env.set` reach the program. It runs in the workspace root. Its result is
//! `{exit_code, stdout, stderr}` (plus `truncated` when output was cut); a non-zero exit is an
//! `E_SHELL` failure carrying the same fields.

use std::collections::BTreeMap;

use async_trait::async_trait;
use jig_model::ErrorCode;
use jig_model::tool_def::ToolExecution;
use jig_model::toolpack::Execution as Kind;
use serde_json::{Value, json};

use jig_exec::process;
use jig_exec::rundir::RunDir;
use jig_exec::template;
use jig_exec::{Execution, Executor, Invocation, Output, ToolError};

pub use jig_exec::process::MAX_CAPTURE;

/// Runs `cli` toolpacks.
#[derive(Debug, Default)]
pub struct CliExecutor;

#[async_trait]
impl Executor for CliExecutor {
    fn command_line(&self, tool: &jig_model::ToolDef, args: &Value) -> Option<Vec<String>> {
        let ToolExecution::Toolpack(Kind::Cli(cli)) = &tool.execution else { return None };
        command(cli, tool, args).ok()
    }

    async fn execute(&self, invocation: Invocation<'_>) -> Result<Execution, ToolError> {
        let tool = invocation.tool;
        let ToolExecution::Toolpack(Kind::Cli(cli)) = &tool.execution else {
            return Err(ToolError::new(
                ErrorCode::Internal,
                format!("`{}` is not a cli tool", tool.id),
            ));
        };
        let run = RunDir::prepare(&invocation)?;
        let args = run.as_ref().map_or(invocation.args, |r| &r.args);
        let argv = command(cli, tool, args)?;
        let finished = process::run_tool(
            &invocation,
            run.as_ref(),
            &argv,
            environment(tool),
            None,
            &invocation.events,
        )
        .await?;
        let mut data = json!({
            "exit_code": finished.code,
            "stdout": finished.stdout,
            "stderr": finished.stderr,
        });
        if finished.truncated {
            data["truncated"] = json!(true);
        }
        match finished.code {
            Some(0) => {
                if let Some(run) = &run {
                    run.collect(tool, invocation.policy, &finished.log(), &mut data).await?;
                }
                Ok(Execution::Done(Output::data(data)))
            }
            Some(code) => Err(ToolError::new(
                ErrorCode::Shell,
                format!("`{}` exited with code {code}", argv[0]),
            )
            .with_details(data)),
            None => Err(ToolError::new(
                ErrorCode::Shell,
                format!("`{}` was killed by a signal", argv[0]),
            )
            .with_details(data)),
        }
    }
}

/// The command a call starts: `cmd` rendered with `args`, a value that would become an option
/// refused. What runs and what a reviewer is shown ([`Executor::command_line`]) are both this.
fn command(
    cli: &jig_model::toolpack::CliExecution,
    tool: &jig_model::ToolDef,
    args: &Value,
) -> Result<Vec<String>, ToolError> {
    let argv = template::render_all(&cli.cmd, args, tool.templating.as_ref())?;
    template::check_positional(&cli.cmd, &argv)?;
    Ok(argv)
}

/// `env.passthrough` from Jig's environment, then `env.set`.
pub fn environment(tool: &jig_model::ToolDef) -> BTreeMap<String, String> {
    let mut env = BTreeMap::new();
    if let Some(spec) = &tool.env {
        for name in &spec.passthrough {
            if let Ok(value) = std::env::var(name) {
                env.insert(name.clone(), value);
            }
        }
        env.extend(spec.set.iter().map(|(k, v)| (k.clone(), v.clone())));
    }
    env
}
