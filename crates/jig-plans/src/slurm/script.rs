//! The batch script Jig submits for a slurm or hybrid plan.
//!
//! The tool's own script never runs bare. Jig's wrapper, written into the run directory next to
//! it, starts it inside the same kind of sandbox every tool process gets (bubblewrap: the
//! system read-only, `in/` read-only, `out/` writable, a private `tmp/`, no network, no
//! capabilities, an empty environment plus the plan's `env`); a hybrid plan's container is
//! started by the node's container engine with the engine's confinement instead. Either way the
//! wrapper then records the exit status in `exit` — a file the job cannot reach, which tells
//! Jig how the job ended even after the scheduler forgot it (there is no accounting database to
//! ask).
//!
//! Every value is quoted for the shell where it needs to be: arguments come from users.

use std::fmt::Write as _;
use std::path::Path;

use jig_exec::ToolError;
use jig_exec::confine::Confinement;
use jig_model::plan::{CONTAINER_IN, CONTAINER_OUT, HybridPlan, Resources};
use jig_policy::command::{quote, render as join};

/// Exit status of a job whose sandbox could not be built on its node.
pub const NO_SANDBOX: i32 = 125;

/// The directory's file holding the job's exit status.
pub const EXIT_FILE: &str = "exit";

/// The directory's file holding what the job printed.
pub const LOG_FILE: &str = "slurm.log";

/// The file in the run directory holding the sandbox's options (bwrap reads it: `--args`).
pub const SANDBOX_OPTIONS: &str = "sandbox.options";

/// A slurm plan's wrapper script, and the sandbox options it hands bwrap.
#[derive(Debug)]
pub struct Confined {
    /// The batch script.
    pub script: String,
    /// For [`SANDBOX_OPTIONS`]: NUL-separated.
    pub options: Vec<u8>,
}

/// The wrapper for a slurm plan: run `script` (in `dir`) with `args`, confined. The plan's
/// `env` is given inside the sandbox only (bwrap's `--setenv`, from the options file): bwrap
/// itself runs with an empty environment, found in the system's directories, so nothing of the
/// plan's reaches a process outside the sandbox on the node.
pub fn confined(
    dir: &Path,
    script: &Path,
    args: &[String],
    env: &std::collections::BTreeMap<String, String>,
    required: bool,
    header: &str,
) -> Result<Confined, ToolError> {
    let confinement = Confinement::for_job(dir, script, required);
    let tmp = dir.join("tmp");
    let mut environment = std::collections::BTreeMap::from([
        ("PATH".to_owned(), "/usr/local/bin:/usr/bin:/bin".to_owned()),
        ("HOME".to_owned(), tmp.display().to_string()),
        ("TMPDIR".to_owned(), tmp.display().to_string()),
        ("LANG".to_owned(), "C.UTF-8".to_owned()),
    ]);
    environment.extend(env.iter().map(|(k, v)| (k.clone(), v.clone())));
    let mut options = Vec::new();
    for option in confinement.options(dir, &environment)? {
        options.extend_from_slice(option.as_encoded_bytes());
        options.push(0);
    }
    let mut command = vec!["/bin/sh".to_owned(), script.display().to_string()];
    command.extend(args.iter().cloned());
    let mut text = prologue(dir, header);
    let run = format!(
        "env -i \"$bwrap\" --args 3 -- {} 3< {}",
        join(&command),
        quote(&dir.join(SANDBOX_OPTIONS).display().to_string())
    );
    if required {
        let _ = writeln!(
            text,
            "if bwrap=\"$(command -v bwrap)\"; then\n  {run}\n  status=$?\nelse\n  echo \"jig: bubblewrap (bwrap) is not installed on $(hostname); the job cannot be confined\" >&2\n  status={NO_SANDBOX}\nfi"
        );
    } else {
        // `best_effort`: the policy lets the script run unconfined where the node has no
        // sandbox; it is then the tool itself that gets the plan's variables.
        let bare = format!(
            "env -i {} {}",
            join(&environment.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>()),
            join(&command)
        );
        let _ = writeln!(
            text,
            "if bwrap=\"$(command -v bwrap)\"; then\n  {run}\nelse\n  {bare}\nfi\nstatus=$?"
        );
    }
    text.push_str(&epilogue(dir));
    Ok(Confined { script: text, options })
}

/// The wrapper for a hybrid plan: run `argv` in a container of `plan.image`, with the
/// variables `env` (the plan's, and Jig's), with the node's container engine `runtime`, named
/// `name`.
pub fn containerized(
    dir: &Path,
    plan: &HybridPlan,
    env: &std::collections::BTreeMap<String, String>,
    runtime: &[String],
    name: &str,
    argv: &[String],
    header: &str,
) -> String {
    let mut run: Vec<String> = runtime.to_vec();
    run.extend(
        ["run", "--name", name, "--network", "none", "--read-only", "--cap-drop", "all"]
            .map(str::to_owned),
    );
    run.extend(["--security-opt", "no-new-privileges"].map(str::to_owned));
    run.extend(limits(&plan.resources));
    run.extend(["--tmpfs", "/tmp:rw,nosuid,nodev,noexec,size=64m"].map(str::to_owned));
    run.push("-v".to_owned());
    run.push(format!("{}:{CONTAINER_IN}:ro", dir.join("in").display()));
    run.push("-v".to_owned());
    run.push(format!("{}:{CONTAINER_OUT}:rw", dir.join("out").display()));
    run.extend(["-w", "/work", "--entrypoint", ""].map(str::to_owned));
    for (key, value) in env {
        run.push("-e".to_owned());
        run.push(format!("{key}={value}"));
    }
    run.push(plan.image.clone());
    run.extend(argv.iter().cloned());
    let mut remove: Vec<String> = runtime.to_vec();
    remove.extend(["rm", "-f", name].map(str::to_owned));
    let mut text = prologue(dir, header);
    // Cancelled or out of time, Slurm signals every process of the job: the engine's client
    // stops the container, and the trap removes it.
    let _ = writeln!(
        text,
        "trap '{} >/dev/null 2>&1; exit 143' TERM INT",
        join(&remove).replace('\'', "'\\''")
    );
    // No `--rm`: some engines report the wrong exit code with it (Podman 4.3).
    let _ = writeln!(text, "{}\nstatus=$?\n{} >/dev/null 2>&1", join(&run), join(&remove));
    text.push_str(&epilogue(dir));
    text
}

fn limits(resources: &Resources) -> Vec<String> {
    let mut out = vec!["--pids-limit".to_owned(), resources.pids.unwrap_or(256).to_string()];
    if let Some(mb) = resources.memory_mb {
        out.extend([
            "--memory".to_owned(),
            format!("{mb}m"),
            "--memory-swap".to_owned(),
            format!("{mb}m"),
        ]);
    }
    if let Some(cpus) = resources.cpus {
        out.extend(["--cpus".to_owned(), cpus.to_string()]);
    }
    out
}

fn prologue(dir: &Path, header: &str) -> String {
    let mut text = String::from("#!/bin/sh\n");
    for line in header.lines() {
        let _ = writeln!(text, "# {line}");
    }
    // The programs the wrapper starts outside any sandbox (bwrap, env, the container engine)
    // are found in the system's directories only.
    text.push_str(
        "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin\nexport PATH\n",
    );
    let _ = writeln!(text, "cd {} || exit 120", quote(&dir.display().to_string()));
    text
}

fn epilogue(dir: &Path) -> String {
    let exit = dir.join(EXIT_FILE);
    let temp = dir.join(format!("{EXIT_FILE}.tmp"));
    format!(
        "printf '%s\\n' \"$status\" > {temp} && mv -f {temp} {exit}\nexit \"$status\"\n",
        temp = quote(&temp.display().to_string()),
        exit = quote(&exit.display().to_string()),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[allow(clippy::disallowed_methods, reason = "the test starts a shell to check its work")]
    fn quoting_keeps_hostile_arguments_one_word() {
        let output = std::process::Command::new("sh")
            .args([
                "-c",
                &format!(
                    "printf '%s|' {}",
                    join(&["a b".into(), "$(id)".into(), "it's".into(), "`x`;rm".into()])
                ),
            ])
            .output()
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(String::from_utf8_lossy(&output.stdout), "a b|$(id)|it's|`x`;rm|");
    }

    /// Issue #26: a plan's `env: {LD_PRELOAD: in/lib.so}` reached bwrap on the node
    /// (`env -i LD_PRELOAD=… bwrap …`). The plan's variables now travel in the options file,
    /// set by bwrap inside the sandbox; bwrap itself gets none.
    #[test]
    fn a_plans_variables_are_given_inside_the_sandbox_only() {
        let env =
            std::collections::BTreeMap::from([("GREETING".to_owned(), "hello-there".to_owned())]);
        let wrapper = confined(
            Path::new("/runs/r1"),
            Path::new("/runs/r1/script.sh"),
            &["a".to_owned()],
            &env,
            true,
            "job",
        )
        .expect("wrapper");
        assert!(!wrapper.script.contains("hello-there"), "{}", wrapper.script);
        assert!(
            wrapper.script.contains("env -i \"$bwrap\" --args 3 -- /bin/sh"),
            "{}",
            wrapper.script
        );
        assert!(wrapper.script.contains("PATH=/usr/local/sbin:"), "{}", wrapper.script);
        let options: Vec<&[u8]> = wrapper.options.split(|b| *b == 0).collect();
        let at = options.iter().position(|o| *o == b"GREETING").expect("set inside");
        assert_eq!(options[at - 1], b"--setenv");
        assert_eq!(options[at + 1], b"hello-there");
        assert_eq!(options[0], b"--clearenv");
    }
}
