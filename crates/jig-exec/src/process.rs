//! Running a program as argv: no shell, a cleared environment, its own process group (so a
//! timeout or cancel kills everything it started), confined by [`Confinement`], and output
//! capped while it streams.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use jig_model::ErrorCode;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::process::Command;

use crate::confine::Confinement;
use crate::executor::{Cancel, Events, ToolError};

/// Re-exported where callers outside the crate have always found it.
pub use crate::program::find_program;

/// Default cap on each output stream (seed 002 §9: 5 MiB).
pub const MAX_CAPTURE: usize = 5 * 1024 * 1024;

/// What to run.
#[derive(Debug, Clone)]
pub struct Spawn<'a> {
    /// The program and its arguments.
    pub argv: &'a [String],
    /// Working directory.
    pub cwd: &'a Path,
    /// The whole environment of the program (nothing is inherited).
    pub env: BTreeMap<String, String>,
    /// Text for standard input.
    pub stdin: Option<&'a str>,
    /// Time allowed.
    pub timeout: Duration,
    /// Bytes kept of each of stdout and stderr.
    pub max_output: usize,
    /// Kernel confinement of the process (its caps).
    pub confine: &'a Confinement,
}

/// How it ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finished {
    /// Exit code; `None` when killed by a signal.
    pub code: Option<i32>,
    /// Standard output (at most `max_output` bytes, decoded lossily).
    pub stdout: String,
    /// Standard error (likewise).
    pub stderr: String,
    /// Whether either stream was cut.
    pub truncated: bool,
}

impl Finished {
    /// What the program printed, both streams: a run's `log` artifact.
    pub fn log(&self) -> String {
        format!("{}{}", self.stdout, self.stderr)
    }
}

/// Run `spawn` to completion, or kill its process group at the timeout or on cancel.
pub async fn run(
    spawn: Spawn<'_>,
    cancel: &Cancel,
    events: &Events,
) -> Result<Finished, ToolError> {
    let (program, args) = spawn
        .argv
        .split_first()
        .ok_or_else(|| ToolError::new(ErrorCode::Shell, "empty command"))?;
    let resolved = find_program(program).ok_or_else(|| {
        ToolError::new(ErrorCode::Shell, format!("program `{program}` was not found on PATH"))
    })?;
    let (command, launch) = spawn.confine.command(&resolved, args, spawn.cwd, &spawn.env)?;
    let mut command = Command::from(command);
    command
        .stdin(if spawn.stdin.is_some() { Stdio::piped() } else { Stdio::null() })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    let mut child = spawn.confine.spawn(launch, move || command.spawn()).map_err(|mut e| {
        e.message = format!("cannot start `{program}`: {}", e.message);
        e
    })?;
    let pid = child.id();
    if let (Some(text), Some(mut stdin)) = (spawn.stdin, child.stdin.take()) {
        let text = text.to_owned();
        tokio::spawn(async move {
            let _ = stdin.write_all(text.as_bytes()).await;
        });
    }
    let stdout =
        tokio::spawn(capture(child.stdout.take(), spawn.max_output, events.clone(), "stdout"));
    let stderr =
        tokio::spawn(capture(child.stderr.take(), spawn.max_output, events.clone(), "stderr"));

    let ended = tokio::select! {
        status = child.wait() => Ok(status),
        () = tokio::time::sleep(spawn.timeout) => Err(ToolError::new(
            ErrorCode::Timeout,
            format!("`{program}` did not finish within {} ms", spawn.timeout.as_millis()),
        )),
        () = cancel.cancelled() => Err(ToolError::new(ErrorCode::Timeout, format!("`{program}` was cancelled"))),
    };
    let status = match ended {
        Ok(status) => status.map_err(|e| {
            ToolError::new(ErrorCode::Shell, format!("waiting for `{program}`: {e}"))
        })?,
        Err(error) => {
            // The whole group: a shell script's children die with it.
            if let Some(pid) = pid {
                kill_group(pid);
            }
            let _ = child.wait().await;
            return Err(error);
        }
    };
    let (stdout, out_cut) = stdout.await.unwrap_or_default();
    let (stderr, err_cut) = stderr.await.unwrap_or_default();
    Ok(Finished { code: status.code(), stdout, stderr, truncated: out_cut || err_cut })
}

/// Run `argv` as `invocation`'s tool: confined by its caps (`crate::confine`), in its run
/// directory or else the workspace root, with its time limit and output cap; `env` gains the
/// private `HOME` and `TMPDIR`. The one way the external kinds start their process.
pub async fn run_tool(
    invocation: &crate::executor::Invocation<'_>,
    run_dir: Option<&crate::rundir::RunDir>,
    argv: &[String],
    mut env: BTreeMap<String, String>,
    stdin: Option<&str>,
    events: &Events,
) -> Result<Finished, ToolError> {
    let program = argv.first().ok_or_else(|| ToolError::new(ErrorCode::Shell, "empty command"))?;
    if let Some(traceparent) = &invocation.traceparent {
        env.insert("TRACEPARENT".to_owned(), traceparent.clone());
    }
    let dir = run_dir.map(crate::rundir::RunDir::dir);
    let (_scratch, confinement) = crate::confine::prepare(invocation, program, dir, &mut env)?;
    let max_output = usize::try_from(invocation.tool.limits.max_output_bytes)
        .unwrap_or(usize::MAX)
        .min(MAX_CAPTURE);
    run(
        Spawn {
            argv,
            cwd: dir.unwrap_or(invocation.workspace.root()),
            env,
            stdin,
            timeout: invocation.timeout,
            max_output,
            confine: &confinement,
        },
        &invocation.cancel,
        events,
    )
    .await
}

/// Read a stream to its end, keeping the first `max` bytes and reporting chunks as events.
async fn capture(
    stream: Option<impl AsyncRead + Unpin>,
    max: usize,
    events: Events,
    name: &'static str,
) -> (String, bool) {
    let Some(mut stream) = stream else { return (String::new(), false) };
    let mut kept = Vec::new();
    let mut truncated = false;
    let mut buffer = [0u8; 8192];
    loop {
        match stream.read(&mut buffer).await {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                events.output(name, &String::from_utf8_lossy(&buffer[..n]));
                let room = max.saturating_sub(kept.len());
                kept.extend_from_slice(&buffer[..n.min(room)]);
                // Keep draining past the cap so the program never blocks on a full pipe.
                truncated |= n > room;
            }
        }
    }
    (String::from_utf8_lossy(&kept).into_owned(), truncated)
}

/// Kill the process group led by `pid` (a child started with `process_group(0)`), so whatever
/// it started dies with it.
pub fn kill_group(pid: u32) {
    if let Some(group) = rustix::process::Pid::from_raw(i32::try_from(pid).unwrap_or(0)) {
        let _ = rustix::process::kill_process_group(group, rustix::process::Signal::KILL);
    }
}
