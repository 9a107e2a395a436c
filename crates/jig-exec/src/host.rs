//! The one path that starts a process outside the sandbox.
//!
//! Jig starts a few programs of its own that are not confined: the sandbox launcher (`bwrap`)
//! and the scheduler's client commands (`sbatch`, `squeue`, `scancel`). They run as Jig's user
//! before any namespace exists, so nothing of a tool's may reach them — not its variables (a
//! `LD_PRELOAD` runs a library's constructor in the launcher; a `PATH` chooses which program
//! "bwrap" is), not its paths, not its output. Here:
//! - a program is found by absolute path, in the directories of Jig's own `PATH` (absolute ones
//!   only: `.` or an empty entry would resolve against the working directory, which may be a
//!   workspace), or given as an absolute path by the policy;
//! - its environment is built by Jig ([`HostEnv`]): empty, plus what the caller names from
//!   Jig's own environment and fixed settings; a tool's variables go into the sandbox only,
//!   through the launcher's own options (`crate::confine`);
//! - every start holds [`spawning`], so a descriptor made inheritable for one start (the
//!   launcher's options, `crate::confine`) reaches that process and no other.
//!
//! clippy.toml forbids `Command::new` everywhere else (`disallowed-methods`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

use jig_model::ErrorCode;

use crate::executor::ToolError;

/// The variables `names` from Jig's own environment (those that are set): what a tool's
/// otherwise empty environment inherits.
pub fn inherited(names: &[&str]) -> BTreeMap<String, String> {
    names
        .iter()
        .filter_map(|name| std::env::var(name).ok().map(|value| ((*name).to_owned(), value)))
        .collect()
}

/// A program of Jig's own, by absolute path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostProgram {
    path: PathBuf,
}

impl HostProgram {
    /// `name` (no `/`) in the absolute directories of Jig's own `PATH`.
    pub fn find(name: &str) -> Result<Self, ToolError> {
        if name.is_empty() || name.contains('/') {
            return Err(ToolError::new(
                ErrorCode::Internal,
                format!("`{name}` is not a program name"),
            ));
        }
        search_path(name).map(|path| Self { path }).ok_or_else(|| {
            ToolError::new(ErrorCode::NotFound, format!("`{name}` was not found on Jig's PATH"))
        })
    }

    /// The program at `path`, which must be absolute (a policy setting such as `plans.slurm.bin`).
    pub fn at(path: &Path) -> Result<Self, ToolError> {
        if !path.is_absolute() {
            return Err(ToolError::new(
                ErrorCode::Policy,
                format!("`{}` is not an absolute path", path.display()),
            ));
        }
        Ok(Self { path: path.to_path_buf() })
    }

    /// Its absolute path.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// The environment of a process Jig starts outside the sandbox: only what is put here.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HostEnv(BTreeMap<String, String>);

impl HostEnv {
    /// No variables at all.
    pub fn empty() -> Self {
        Self::default()
    }

    /// Also `names`, as Jig's own environment has them (those that are set).
    #[must_use]
    pub fn inherit(mut self, names: &[&str]) -> Self {
        for name in names {
            if let Ok(value) = std::env::var(name) {
                self.0.insert((*name).to_owned(), value);
            }
        }
        self
    }

    /// A tool's own variables, for the one case where the tool's process runs outside the
    /// sandbox: the policy's `sandbox.enforce: best_effort` on a machine without one. The
    /// process is then the tool itself, not a launcher acting for it.
    pub fn of_unconfined_tool(env: &BTreeMap<String, String>) -> Self {
        Self(env.clone())
    }

    /// Also `name=value`, a setting of Jig's (the policy's `SLURM_CONF`).
    #[must_use]
    pub fn set(mut self, name: &str, value: &str) -> Self {
        self.0.insert(name.to_owned(), value.to_owned());
        self
    }
}

/// A command for `program` with exactly `env`, its own process group, and stdin closed
/// unless the caller sets it.
pub fn command(program: &HostProgram, env: &HostEnv) -> std::process::Command {
    #[allow(clippy::disallowed_methods, reason = "this is the one place that may")]
    let mut command = std::process::Command::new(&program.path);
    command.env_clear().envs(&env.0).stdin(std::process::Stdio::null());
    std::os::unix::process::CommandExt::process_group(&mut command, 0);
    command
}

/// [`command`] for tokio, killed when dropped.
pub fn async_command(program: &HostProgram, env: &HostEnv) -> tokio::process::Command {
    let mut command = tokio::process::Command::from(command(program, env));
    command.kill_on_drop(true);
    command
}

/// Held while a process starts: a descriptor made inheritable for one start reaches only that
/// process.
pub fn spawning() -> MutexGuard<'static, ()> {
    static SPAWNING: Mutex<()> = Mutex::new(());
    SPAWNING.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Start `command` (built by [`command`] or [`async_command`]) while holding [`spawning`].
pub fn spawn<T>(start: impl FnOnce() -> std::io::Result<T>) -> std::io::Result<T> {
    let _held = spawning();
    start()
}

/// The first executable `name` in the absolute directories of Jig's own `PATH`.
fn search_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .filter(|dir| dir.is_absolute())
        .map(|dir| dir.join(name))
        .find(|candidate| crate::program::is_executable(candidate))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_program_is_an_absolute_path_from_jigs_own_path() {
        let sh = HostProgram::find("sh").expect("sh on PATH");
        assert!(sh.path().is_absolute(), "{sh:?}");
        assert!(HostProgram::find("../sh").is_err());
        assert!(HostProgram::find("").is_err());
        assert!(HostProgram::at(Path::new("bin/sbatch")).is_err());
    }

    #[test]
    fn a_host_process_gets_only_the_environment_jig_builds() {
        let env = HostEnv::empty().set("JIG_CHECK", "1");
        let program = HostProgram::find("env").expect("env on PATH");
        let output = spawn(|| command(&program, &env).output()).expect("run env");
        assert_eq!(String::from_utf8_lossy(&output.stdout), "JIG_CHECK=1\n");
    }
}
