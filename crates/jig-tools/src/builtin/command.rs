//! Running a helper program from a blocking built-in (a formatter, a policy's build command):
//! argv, a minimal environment, its own process group, a time limit, and the same kernel
//! sandbox as `shell_exec` (the workspace read-write, protected paths excepted; no network).

use std::io::{Read, Write};
use std::process::Stdio;
use std::time::{Duration, Instant};

use super::call::Call;
use jig_exec::confine::Confinement;

/// How a helper ended.
#[derive(Debug)]
pub(super) struct Ran {
    /// Exit code; `None` when killed.
    pub code: Option<i32>,
    /// Standard output.
    pub stdout: Vec<u8>,
    /// Standard error.
    pub stderr: Vec<u8>,
}

/// Whether `program` is on PATH.
pub(super) fn installed(program: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|path| std::env::split_paths(&path).any(|dir| dir.join(program).is_file()))
}

/// Run `argv` in the workspace root with `stdin`, killing its process group after `timeout`.
pub(super) fn run(
    call: &Call,
    argv: &[String],
    stdin: Option<&[u8]>,
    timeout: Duration,
) -> std::io::Result<Ran> {
    let failed = |e: jig_exec::ToolError| std::io::Error::other(e.message);
    let (program, args) =
        argv.split_first().ok_or_else(|| std::io::Error::other("empty command"))?;
    let resolved = jig_exec::process::find_program(program)
        .ok_or_else(|| std::io::Error::other(format!("`{program}` was not found on PATH")))?;
    let (_scratch, confinement, mut env) = Confinement::helper(
        &call.workspace,
        &call.policy,
        &resolved,
        &["PATH", "LANG", "RUSTUP_HOME", "CARGO_HOME"],
        false,
    )
    .map_err(failed)?;
    // A toolchain found through the user's home (rustup's proxies) is still found once `HOME`
    // is the private scratch directory (and is readable: it is the program's installation).
    if let Some(home) = std::env::var_os("HOME").map(std::path::PathBuf::from) {
        for (name, dir) in [("RUSTUP_HOME", ".rustup"), ("CARGO_HOME", ".cargo")] {
            env.entry(name.to_owned()).or_insert_with(|| home.join(dir).display().to_string());
        }
    }
    let (mut command, launch) =
        confinement.command(&resolved, args, call.workspace.root(), &env).map_err(failed)?;
    command
        .stdin(if stdin.is_some() { Stdio::piped() } else { Stdio::null() })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = confinement.spawn(launch, move || command.spawn()).map_err(failed)?;
    let feeder = stdin.zip(child.stdin.take()).map(|(bytes, mut pipe)| {
        let bytes = bytes.to_vec();
        std::thread::spawn(move || {
            let _ = pipe.write_all(&bytes);
        })
    });
    let drain = |stream: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut out = Vec::new();
            if let Some(mut stream) = stream {
                let _ = stream.read_to_end(&mut out);
            }
            out
        })
    };
    let stdout = drain(child.stdout.take().map(|s| Box::new(s) as Box<dyn Read + Send>));
    let stderr = drain(child.stderr.take().map(|s| Box::new(s) as Box<dyn Read + Send>));
    let deadline = Instant::now() + timeout;
    let status = loop {
        if let Some(status) = child.try_wait()? {
            break Some(status);
        }
        if Instant::now() >= deadline {
            jig_exec::process::kill_group(child.id());
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    if let Some(feeder) = feeder {
        let _ = feeder.join();
    }
    Ok(Ran {
        code: status.and_then(|s| s.code()),
        stdout: stdout.join().unwrap_or_default(),
        stderr: stderr.join().unwrap_or_default(),
    })
}
