//! `shell_exec`: a command line tokenized and run as argv — never through `sh -c` — after the
//! policy's checks, in a directory beneath the workspace root, with a cleared environment.

use std::time::Duration;

use jig_model::ErrorCode;
use jig_policy::sandbox::SandboxError;
use serde_json::{Value, json};

use crate::cli::{self, MAX_CAPTURE};
use crate::confine::Confinement;
use crate::executor::{Invocation, Output, ToolError};
use crate::process::{self, Spawn};

/// Variables a command gets from Jig's own environment (besides the tool's `env.passthrough`):
/// enough to find programs and speak the user's locale; nothing that carries credentials.
const PASSTHROUGH: [&str; 5] = ["PATH", "HOME", "LANG", "LC_ALL", "TERM"];

/// Git options Jig adds so a repository's own configuration cannot run code (hooks, fsmonitor)
/// when the command is `git`.
const GIT_GUARDS: [&str; 6] =
    ["-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false", "-c", "core.pager=cat"];

pub(super) async fn exec(invocation: &Invocation<'_>) -> Result<Output, ToolError> {
    let args = invocation.args;
    let cmd = args.get("cmd").and_then(Value::as_str).unwrap_or_default();
    // The decision checked this already; checking again here means no path around it (e.g. a
    // policy edited between decision and run).
    let mut argv = invocation.policy.check_command(cmd).map_err(|denial| {
        ToolError::new(ErrorCode::Policy, denial.reason.clone())
            .with_details(json!({ "rule": denial.rule }))
    })?;
    let mut env = process::inherited(&PASSTHROUGH);
    env.extend(cli::environment(invocation.tool));
    if let Some(set) = args.get("env").and_then(Value::as_object) {
        jig_policy::arguments::check_env(set.keys().map(String::as_str)).map_err(|denial| {
            ToolError::new(ErrorCode::Policy, denial.reason.clone())
                .with_details(json!({ "rule": denial.rule }))
        })?;
        env.extend(set.iter().filter_map(|(k, v)| v.as_str().map(|v| (k.clone(), v.to_owned()))));
    }
    if argv[0].rsplit('/').next() == Some("git") {
        argv.splice(1..1, GIT_GUARDS.iter().map(|s| (*s).to_owned()));
    }
    let cwd_arg = args.get("cwd").and_then(Value::as_str).unwrap_or(".");
    // The kernel checks the directory lies beneath the root.
    invocation
        .workspace
        .dir()
        .open_dir(cwd_arg)
        .map_err(|e| ToolError::from(SandboxError::io(cwd_arg, e)))?;
    let cwd = invocation.workspace.root().join(cwd_arg);
    let timeout = args
        .get("timeout_ms")
        .and_then(Value::as_u64)
        .map_or(invocation.timeout, |ms| Duration::from_millis(ms).min(invocation.timeout));
    let max_output = usize::try_from(invocation.tool.limits.max_output_bytes / 2)
        .unwrap_or(usize::MAX)
        .min(MAX_CAPTURE);
    // `allow_network: false` (the default) is enforced by the kernel: no TCP at all.
    let allow_network = args.get("allow_network").and_then(Value::as_bool).unwrap_or(false);
    if allow_network && invocation.policy.config().network.allowed_domains.is_empty() {
        return Err(ToolError::new(
            ErrorCode::Policy,
            "`allow_network` needs a policy that allows some network (`network.allowed_domains`)",
        )
        .with_details(json!({ "rule": "sec.network.allowlist" })));
    }
    let confinement = Confinement::network_only(allow_network, invocation);
    let finished = process::run(
        Spawn {
            argv: &argv,
            cwd: &cwd,
            env,
            stdin: args.get("stdin").and_then(Value::as_str),
            timeout,
            max_output,
            confine: (!allow_network).then_some(&confinement),
        },
        &invocation.cancel,
        &invocation.events,
    )
    .await?;
    // A non-zero exit is an answer, not a failure: the caller asked what the command says.
    Ok(Output::data(json!({
        "code": finished.code,
        "stdout": finished.stdout,
        "stderr": finished.stderr,
        "truncated": finished.truncated,
    })))
}
