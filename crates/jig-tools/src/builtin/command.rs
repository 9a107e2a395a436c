//! Running a helper program from a blocking built-in (a formatter, a policy's build command):
//! argv, a minimal environment, its own process group, a time limit.

use std::io::{Read, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

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

/// Run `argv` in `cwd` with `stdin`, killing its process group after `timeout`.
pub(super) fn run(
    argv: &[String],
    cwd: &Path,
    stdin: Option<&[u8]>,
    timeout: Duration,
) -> std::io::Result<Ran> {
    let (program, args) =
        argv.split_first().ok_or_else(|| std::io::Error::other("empty command"))?;
    let mut command = Command::new(program);
    command.args(args).current_dir(cwd).env_clear().envs(crate::process::inherited(&[
        "PATH",
        "HOME",
        "LANG",
        "RUSTUP_HOME",
        "CARGO_HOME",
    ]));
    std::os::unix::process::CommandExt::process_group(&mut command, 0);
    let mut child = command
        .stdin(if stdin.is_some() { Stdio::piped() } else { Stdio::null() })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()?;
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
            crate::process::kill_group(child.id());
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
