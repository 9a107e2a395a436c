//! `shell_exec`: a command line tokenized and run as argv — never through `sh -c` — after the
//! policy's checks, in a directory beneath the workspace root, with a cleared environment,
//! inside the same kernel sandbox as every tool process ([`jig_exec::confine`]): the workspace
//! read-write (Jig's state hidden, manifests and `.git/config` read-only), a private `/tmp` and
//! `HOME`, the system read-only, no network unless granted. The argument rules of
//! `jig_policy::arguments` are a second layer, not the boundary.

use std::time::Duration;

use jig_model::ErrorCode;
use jig_policy::sandbox::SandboxError;
use serde_json::{Value, json};

use crate::cli::{self, MAX_CAPTURE};
use jig_exec::confine::{self, Confinement};
use jig_exec::process::{self, Spawn};
use jig_exec::{Invocation, Output, ToolError};

/// Variables a command gets from Jig's own environment (besides the tool's `env.passthrough`):
/// enough to find programs and speak the user's locale; nothing that carries credentials.
/// `HOME` and `TMPDIR` are the sandbox's private `/tmp`.
const PASSTHROUGH: [&str; 4] = ["PATH", "LANG", "LC_ALL", "TERM"];

/// Git options Jig adds when the command is `git`, so configuration cannot run code: hooks,
/// fsmonitor, pagers, external diff and text conversion, editors, ssh and credential helpers.
/// The repository's `.git/config` is also read-only inside the sandbox, and system and global
/// configuration are not read (`GIT_ENV`).
const GIT_GUARDS: [&str; 20] = [
    "-c",
    "core.hooksPath=/dev/null",
    "-c",
    "core.fsmonitor=false",
    "-c",
    "core.pager=cat",
    "-c",
    "core.sshCommand=false",
    "-c",
    "core.editor=false",
    "-c",
    "sequence.editor=false",
    "-c",
    "credential.helper=",
    "-c",
    "protocol.allow=never",
    "-c",
    "protocol.file.allow=always",
    "--no-pager",
    "--no-replace-objects",
];

/// Git's environment: no system or global configuration, no terminal prompts.
const GIT_ENV: [(&str, &str); 4] = [
    ("GIT_CONFIG_NOSYSTEM", "1"),
    ("GIT_CONFIG_GLOBAL", "/dev/null"),
    ("GIT_TERMINAL_PROMPT", "0"),
    ("GIT_PROTOCOL_FROM_USER", "0"),
];

pub(super) async fn exec(invocation: &Invocation<'_>) -> Result<Output, ToolError> {
    let args = invocation.args;
    let cmd = args.get("cmd").and_then(Value::as_str).unwrap_or_default();
    // The decision checked this already; checking again here means no path around it (e.g. a
    // policy edited between decision and run).
    let mut argv = invocation.policy.check_command(cmd).map_err(|denial| {
        ToolError::new(ErrorCode::Policy, denial.reason.clone())
            .with_details(json!({ "rule": denial.rule }))
    })?;
    // The network decision comes first: a refused grant starts nothing.
    let allow_network = args.get("allow_network").and_then(Value::as_bool).unwrap_or(false);
    let network = confine::network_grant(invocation.policy, allow_network, "shell_exec")?;
    let program = process::find_program(&argv[0]).unwrap_or_else(|| argv[0].clone().into());
    let (_scratch, confinement, mut env) = Confinement::helper(
        invocation.workspace,
        invocation.policy,
        &program,
        &PASSTHROUGH,
        network,
    )?;
    env.extend(cli::environment(invocation.tool));
    if let Some(set) = args.get("env").and_then(Value::as_object) {
        jig_policy::arguments::check_env(set.keys().map(String::as_str)).map_err(|denial| {
            ToolError::new(ErrorCode::Policy, denial.reason.clone())
                .with_details(json!({ "rule": denial.rule }))
        })?;
        env.extend(set.iter().filter_map(|(k, v)| v.as_str().map(|v| (k.clone(), v.to_owned()))));
    }
    if argv[0].rsplit('/').next() == Some("git") {
        super::git::config_guard::check(invocation.workspace.root())?;
        argv.splice(1..1, GIT_GUARDS.iter().map(|s| (*s).to_owned()));
        env.extend(GIT_ENV.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())));
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
    let finished = process::run(
        Spawn {
            argv: &argv,
            cwd: &cwd,
            env,
            stdin: args.get("stdin").and_then(Value::as_str),
            timeout,
            max_output,
            confine: &confinement,
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
