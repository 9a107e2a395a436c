//! Caps (seed 000 `caps`) enforced by the kernel: a tool's process may read and write only
//! what its declaration allows, and reach the network only if it declares it — Landlock.
//!
//! Landlock restricts the calling thread and what it starts afterwards, so the child is
//! spawned from a short-lived thread that restricted itself first: the rest of Jig is never
//! confined, and no `unsafe` pre-exec hook is needed.
//!
//! What a process may touch:
//! - read (and execute): the system directories, the installation prefix of the program it
//!   runs, the tool's own directory (its scripts), and in the workspace the paths of
//!   `caps.filesystem.read` — the whole workspace when the tool declares no filesystem caps and
//!   has no run directory;
//! - write: the paths of `caps.filesystem.write` (a path that does not exist yet is granted
//!   through its nearest existing directory), its run directory, a private temporary
//!   directory, `/dev/null`;
//! - TCP: nothing, unless `caps.network` is declared.
//!
//! Where the kernel cannot enforce all of it, the policy's `sandbox.enforce` decides: refuse
//! (`required`, the default) or run with what is enforced (`best_effort`).

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use jig_model::ErrorCode;
use jig_model::policy::SandboxEnforcement;
use landlock::{
    ABI, Access, AccessFs, AccessNet, CompatLevel, Compatible, LandlockStatus, Ruleset,
    RulesetAttr, RulesetCreatedAttr, RulesetStatus, path_beneath_rules,
};
use serde_json::json;

use crate::executor::{Invocation, ToolError};

/// The rights Jig asks for: filesystem rights up to ABI 5, TCP rules from ABI 4.
const ABI_ASKED: ABI = ABI::V5;

/// Directories every program needs to read.
const SYSTEM: [&str; 12] = [
    "/usr", "/lib", "/lib64", "/lib32", "/bin", "/sbin", "/etc", "/opt", "/proc", "/sys", "/dev",
    "/run",
];

/// What one process may touch.
#[derive(Debug, Clone, Default)]
pub struct Confinement {
    /// Readable (and executable) trees.
    pub read: Vec<PathBuf>,
    /// Writable trees.
    pub write: Vec<PathBuf>,
    /// TCP allowed.
    pub network: bool,
    /// Filesystem left alone (only the network is restricted), as for `shell_exec`.
    pub network_only: bool,
    /// Refuse if not fully enforced.
    pub required: bool,
}

/// Landlock on this machine: the kernel's ABI version, or why there is none.
pub fn landlock_abi() -> Result<i32, String> {
    static PROBED: OnceLock<Result<i32, String>> = OnceLock::new();
    PROBED
        .get_or_init(|| {
            // Restricting a throwaway thread tells what the kernel offers; the thread then ends.
            std::thread::spawn(|| {
                let status = Ruleset::default()
                    .handle_access(AccessFs::Execute)
                    .and_then(|r| r.create())
                    .and_then(|r| r.restrict_self())
                    .map_err(|e| e.to_string())?;
                match status.landlock {
                    LandlockStatus::Available { effective_abi, kernel_abi } => {
                        Ok(kernel_abi.unwrap_or(effective_abi as i32))
                    }
                    LandlockStatus::NotEnabled => {
                        Err("Landlock is built into the kernel but not enabled at boot".to_owned())
                    }
                    LandlockStatus::NotImplemented => Err("the kernel has no Landlock".to_owned()),
                }
            })
            .join()
            .unwrap_or_else(|_| Err("probing Landlock failed".to_owned()))
        })
        .clone()
}

impl Confinement {
    /// The confinement of `invocation`'s tool running `program`, with `run_dir` when it has one.
    pub fn for_tool(
        invocation: &Invocation<'_>,
        program: &Path,
        run_dir: Option<&Path>,
        temp: &Path,
    ) -> Self {
        let tool = invocation.tool;
        let root = invocation.workspace.root();
        let caps = tool.caps.clone().unwrap_or_default();
        let mut read: Vec<PathBuf> = SYSTEM.iter().map(PathBuf::from).collect();
        read.extend(prefixes(program));
        if let Some(dir) = root.join(&tool.source.file).parent() {
            read.push(dir.to_path_buf());
        }
        let mut write = vec![PathBuf::from("/dev/null"), temp.to_path_buf()];
        match &caps.filesystem {
            Some(fs) => {
                read.extend(fs.read.iter().map(|p| root.join(p)));
                write.extend(fs.write.iter().map(|p| existing(&root.join(p))));
            }
            None if run_dir.is_none() => read.push(root.to_path_buf()),
            None => {}
        }
        if let Some(dir) = run_dir {
            write.push(dir.to_path_buf());
        }
        Self {
            read,
            write,
            // tool/v0 has no `caps`: its contract's `network` effect is the declaration.
            network: !caps.network.is_empty()
                || (tool.dialect == jig_model::tool_def::Dialect::GertV0
                    && tool.side_effects.contains(&jig_model::SideEffect::Network)),
            network_only: false,
            required: invocation.policy.config().sandbox.enforce == SandboxEnforcement::Required,
        }
    }

    /// Only the network: none unless `network`.
    pub fn network_only(network: bool, invocation: &Invocation<'_>) -> Self {
        Self {
            network,
            network_only: true,
            required: invocation.policy.config().sandbox.enforce == SandboxEnforcement::Required,
            ..Self::default()
        }
    }

    /// Restrict the calling thread (and what it starts afterwards).
    fn restrict(&self) -> Result<RulesetStatus, String> {
        let error = |e: landlock::RulesetError| e.to_string();
        let mut ruleset = Ruleset::default().set_compatibility(CompatLevel::BestEffort);
        if !self.network_only {
            ruleset = ruleset.handle_access(AccessFs::from_all(ABI_ASKED)).map_err(error)?;
        }
        if !self.network {
            ruleset =
                ruleset.handle_access(AccessNet::BindTcp | AccessNet::ConnectTcp).map_err(error)?;
        }
        let mut created = ruleset.create().map_err(error)?;
        if !self.network_only {
            created = created
                .add_rules(path_beneath_rules(&self.read, AccessFs::from_read(ABI_ASKED)))
                .and_then(|c| {
                    c.add_rules(path_beneath_rules(&self.write, AccessFs::from_all(ABI_ASKED)))
                })
                .map_err(error)?;
        }
        Ok(created.restrict_self().map_err(error)?.ruleset)
    }

    /// Spawn `command` under this confinement.
    pub fn spawn(
        &self,
        command: &mut tokio::process::Command,
    ) -> Result<tokio::process::Child, ToolError> {
        let handle = tokio::runtime::Handle::current();
        std::thread::scope(|scope| {
            scope
                .spawn(|| {
                    let _runtime = handle.enter();
                    let status = self.restrict().map_err(|why| unenforceable(&why))?;
                    verdict(&status, self.required)?;
                    command.spawn().map_err(|e| {
                        ToolError::new(ErrorCode::Shell, format!("cannot start the tool: {e}"))
                    })
                })
                .join()
                .unwrap_or_else(|_| {
                    Err(ToolError::new(ErrorCode::Internal, "the confining thread panicked"))
                })
        })
    }
}

/// The scratch directory and confinement of a tool's process running `program`; the scratch
/// directory is also the process's `TMPDIR`, added to `env`.
pub fn prepare(
    invocation: &Invocation<'_>,
    program: &str,
    run_dir: Option<&Path>,
    env: &mut std::collections::BTreeMap<String, String>,
) -> Result<(Scratch, Confinement), ToolError> {
    let scratch = Scratch::new(invocation.workspace.root(), invocation.events.request_id())?;
    let resolved = crate::process::find_program(program).unwrap_or_else(|| PathBuf::from(program));
    let confinement = Confinement::for_tool(invocation, &resolved, run_dir, scratch.path());
    env.insert("TMPDIR".to_owned(), scratch.path().display().to_string());
    Ok((scratch, confinement))
}

/// A private temporary directory for one call (`.jig/tmp/<request id>`), removed afterwards.
#[derive(Debug)]
pub struct Scratch(PathBuf);

impl Scratch {
    /// Create it under `root`.
    pub fn new(root: &Path, request_id: &str) -> Result<Self, ToolError> {
        let dir = root.join(".jig").join("tmp").join(request_id);
        std::fs::create_dir_all(&dir).map_err(|e| {
            ToolError::new(
                ErrorCode::FileIo,
                format!("temporary directory `{}`: {e}", dir.display()),
            )
        })?;
        Ok(Self(dir))
    }

    /// Its path.
    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Where a program is installed: its directory's parent (`/usr` for `/usr/bin/node`,
/// `~/.pyenv` for a pyenv shim), for the path as found and as resolved.
fn prefixes(program: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for path in [Some(program.to_path_buf()), program.canonicalize().ok()].into_iter().flatten() {
        if let Some(prefix) = path.parent().and_then(Path::parent) {
            out.push(prefix.to_path_buf());
        }
    }
    out
}

/// `path` if it exists, else its nearest existing ancestor (a file to be created is granted
/// through its directory).
fn existing(path: &Path) -> PathBuf {
    let mut current = path;
    while !current.exists() {
        match current.parent() {
            Some(parent) => current = parent,
            None => break,
        }
    }
    current.to_path_buf()
}

/// Whether a process may start under `status`: fully enforced always; less only when the
/// policy does not require it.
fn verdict(status: &RulesetStatus, required: bool) -> Result<(), ToolError> {
    if *status == RulesetStatus::FullyEnforced || !required {
        return Ok(());
    }
    let abi = landlock_abi().map_or_else(|why| why, |abi| format!("Landlock ABI {abi}"));
    Err(unenforceable(&format!("the kernel enforces it only {status:?} ({abi})")))
}

fn unenforceable(why: &str) -> ToolError {
    ToolError::new(
        ErrorCode::Policy,
        format!("the tool's caps cannot be enforced here: {why}; set the policy's `sandbox.enforce: best_effort` to run it anyway"),
    )
    .with_details(json!({ "rule": "sandbox.enforce" }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn partial_enforcement_is_refused_only_when_required() {
        assert!(verdict(&RulesetStatus::FullyEnforced, true).is_ok());
        for status in [RulesetStatus::PartiallyEnforced, RulesetStatus::NotEnforced] {
            let refused = verdict(&status, true).expect_err("required");
            assert_eq!(refused.code, ErrorCode::Policy);
            assert!(refused.message.contains("best_effort"), "{}", refused.message);
            assert!(verdict(&status, false).is_ok(), "best effort runs it");
        }
    }

    #[test]
    fn a_path_to_be_created_is_granted_through_its_nearest_directory() {
        let dir = tempfile::tempdir().expect("tmp");
        assert_eq!(existing(&dir.path().join("a/b/c.txt")), dir.path());
        assert_eq!(existing(dir.path()), dir.path());
    }
}
