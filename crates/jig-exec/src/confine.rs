//! Every process Jig starts for a tool is confined by the kernel: what it can see, reach and
//! signal is decided here, and nothing else starts processes.
//!
//! The boundary is a set of namespaces built by bubblewrap (`bwrap`, the sandbox Flatpak
//! uses), started from a thread that has first restricted itself with Landlock scopes:
//! - **filesystem** (mount namespace): the process sees a fresh root holding only the system
//!   directories (read-only, with the well-known secret files masked), the installation of the
//!   program it runs, what its declaration grants in the workspace, and a private `/tmp` (also
//!   its `HOME` and `TMPDIR`). Jig's state (`.jig/`) is an empty read-only directory; the
//!   manifests and the repository's code-loading configuration (its and its submodules'
//!   config and hooks; see `code_loading.rs`) are read-only even where the workspace is
//!   writable.
//! - **network** (network namespace): none at all — TCP, UDP, raw — unless the tool declares
//!   network *and* the policy grants processes the host's network (`sandbox.network:
//!   unfiltered`); the kernel cannot filter a process's traffic by host name, so the grant is
//!   explicit and documented instead of implied.
//! - **processes** (PID namespace, Landlock scopes): `/proc` holds the tool's own processes only
//!   (Jig's environment is out of sight), signals cannot leave the sandbox, abstract UNIX sockets
//!   outside it cannot be reached, and IPC and host name are private.
//! - **lifetime**: `--die-with-parent` and a PID namespace: when Jig dies, even by SIGKILL, the
//!   tool and everything it started die with it.
//! - **privileges**: every capability dropped, also when Jig runs as root (bwrap would keep them
//!   otherwise, and a capable process could unmount the protecting binds).
//! - **environment**: the process gets exactly the variables its caller passes, set by bwrap
//!   inside the sandbox (`--clearenv`, `--setenv`). bwrap itself runs with an empty
//!   environment and is found by absolute path in Jig's own (`crate::host`): a tool's
//!   `LD_PRELOAD` or `PATH` never reaches a process outside. The options travel through a
//!   memory file (`--args FD`), so variables stay out of the launcher's command line, which
//!   every local user can read.
//!
//! What a process may touch in the workspace (`caps.filesystem`, seed 000): read — the paths of
//! `caps.filesystem.read` (the whole workspace when a tool declares no filesystem caps and has no
//! run directory); write — the paths of `caps.filesystem.write` (a path that does not exist yet
//! is granted through its nearest existing directory), and its run directory. `shell_exec` and
//! the policy's helper commands (formatters, build commands) get the workspace read-write.
//!
//! Where the sandbox cannot be built (no `bwrap`, user namespaces disabled), the policy's
//! `sandbox.enforce` decides: refuse (`required`, the default) or run unconfined
//! (`best_effort`).

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use jig_model::ErrorCode;
use jig_model::policy::{ProcessNetwork, SandboxEnforcement};
use jig_policy::Policy;
use jig_policy::sandbox::{Access as Grant, Workspace};
use landlock::{AccessFs, LandlockStatus, Ruleset, RulesetAttr};
use serde_json::json;

use crate::executor::{Invocation, ToolError};
use crate::grants::Granted;

mod launch;
mod programs;
mod scratch;
#[cfg(test)]
mod tests;

use crate::host::{self, HostEnv, HostProgram};
pub use launch::Launch;
use launch::{SpawnJob, options_file, restrict_scopes, spawner};
use programs::{expand_home, prefixes};
pub use scratch::{Scratch, prepare, private_home};

/// Directories every program needs to read. Those that are symlinks on the host (`/lib` on a
/// merged-`/usr` system) are recreated as symlinks.
const SYSTEM: [&str; 9] =
    ["/usr", "/lib", "/lib64", "/lib32", "/bin", "/sbin", "/etc", "/opt", "/sys"];

/// Files under the system directories that hold secrets: masked with an empty file.
const MASKED: [&str; 8] = [
    "/etc/shadow",
    "/etc/shadow-",
    "/etc/gshadow",
    "/etc/gshadow-",
    "/etc/sudoers",
    "/etc/security/opasswd",
    "/etc/ssh",
    "/etc/ssl/private",
];

/// The sandbox program's name, looked up in Jig's own `PATH` ([`launcher`]).
const BWRAP: &str = "bwrap";

/// The sandbox program, by absolute path (`crate::host`).
fn launcher() -> Result<&'static HostProgram, String> {
    static FOUND: OnceLock<Result<HostProgram, String>> = OnceLock::new();
    FOUND
        .get_or_init(|| {
            HostProgram::find(BWRAP).map_err(|e| {
                format!("`{BWRAP}` cannot be started ({}); install bubblewrap", e.message)
            })
        })
        .as_ref()
        .map_err(Clone::clone)
}

/// What one process may touch.
#[derive(Debug, Clone, Default)]
pub struct Confinement {
    /// Readable trees (bound read-only).
    pub read: Vec<PathBuf>,
    /// Writable trees (bound read-write, after the readable ones).
    pub write: Vec<PathBuf>,
    /// Directories shown empty and read-only (Jig's state).
    pub hidden: Vec<PathBuf>,
    /// Files and directories bound read-only over whatever grant covers them.
    pub read_only: Vec<PathBuf>,
    /// The call's private scratch directory (its `TMPDIR` and `HOME`), writable at its own path.
    pub tmp: Option<PathBuf>,
    /// The host's network is shared.
    pub network: bool,
    /// Refuse if the sandbox cannot be built.
    pub required: bool,
    /// What the kernel resolved for a path of `read` or `write` (a workspace grant): bound as
    /// that descriptor (`--bind-fd`), never by its name again.
    pub fds: BTreeMap<PathBuf, Arc<OwnedFd>>,
}

/// How Jig confines processes on this machine: the sandbox's version, or why there is none.
pub fn sandbox_status() -> Result<String, String> {
    static PROBED: OnceLock<Result<String, String>> = OnceLock::new();
    PROBED.get_or_init(probe).clone()
}

/// Start the same sandbox a tool gets, around `true`: the verdict `jig doctor` reports is the
/// one confinement reaches.
fn probe() -> Result<String, String> {
    let bwrap = launcher()?;
    let version = host::spawn(|| host::command(bwrap, &HostEnv::empty()).arg("--version").output())
        .map_err(|e| {
            format!("`{}` cannot be started ({e}); install bubblewrap", bwrap.path().display())
        })?;
    let version = String::from_utf8_lossy(&version.stdout).trim().to_owned();
    let scratch = std::env::temp_dir();
    let confinement = Confinement {
        read: SYSTEM.iter().map(PathBuf::from).collect(),
        tmp: Some(scratch.clone()),
        ..Confinement::default()
    };
    let Some(program) = crate::program::find_program("true") else {
        return Err("`true` is not on PATH".to_owned());
    };
    let (mut command, launch) = confinement
        .sandboxed(bwrap, &program, &[], &scratch, &BTreeMap::new())
        .map_err(|e| e.message)?;
    let output = std::thread::spawn(move || {
        restrict_scopes();
        launch.start(|| command.output())
    })
    .join()
    .map_err(|_| "the probing thread panicked".to_owned())?
    .map_err(|e| format!("`{BWRAP}` cannot be started: {e}"))?;
    if output.status.success() {
        let scopes = landlock_abi()
            .ok()
            .filter(|abi| *abi >= 6)
            .map_or("no Landlock scopes", |_| "Landlock scopes for signals and abstract sockets");
        Ok(format!("{version}: mount, PID, network, IPC and UTS namespaces; {scopes}"))
    } else {
        Err(format!(
            "{version} cannot build a sandbox here: {}",
            String::from_utf8_lossy(&output.stderr).trim()
        ))
    }
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
    /// Every workspace path it is granted is resolved beneath the root by the kernel first
    /// (`Workspace::grant`): a grant that is or passes a symlink, or reaches `.jig`, a `.git` or
    /// (to write) a manifest, refuses the call instead of binding what it points to.
    pub fn for_tool(
        invocation: &Invocation<'_>,
        program: &Path,
        run_dir: Option<&Path>,
        temp: &Path,
    ) -> Result<Self, ToolError> {
        let tool = invocation.tool;
        let workspace = invocation.workspace;
        let root = workspace.root();
        let caps = tool.caps.clone().unwrap_or_default();
        let mut granted = Granted::default();
        granted.read.extend(prefixes(program));
        granted.source_dir(workspace, &tool.source.file, &tool.id)?;
        match &caps.filesystem {
            Some(fs) => {
                for (field, paths, access) in
                    [("read", &fs.read, Grant::Read), ("write", &fs.write, Grant::Write)]
                {
                    for (i, path) in paths.iter().enumerate() {
                        granted.add(workspace, path, access, &tool.id, &format!("{field}[{i}]"))?;
                    }
                }
            }
            None if run_dir.is_none() => granted.read.push(root.to_path_buf()),
            None => {}
        }
        if let Some(dir) = run_dir {
            granted.write.push(dir.to_path_buf());
        }
        // tool/v0 has no `caps`: its contract's `network` effect is the declaration.
        let declares_network = !caps.network.is_empty()
            || (tool.dialect == jig_model::tool_def::Dialect::GertV0
                && tool.side_effects.contains(&jig_model::SideEffect::Network));
        let network = network_grant(invocation.policy, declares_network, &tool.id)?;
        let Granted { read, write, fds } = granted;
        let mut confinement =
            Self::base(invocation.workspace, invocation.policy, read, write, temp, network);
        confinement.fds = fds;
        Ok(confinement)
    }

    /// A batch job's script on its node (seed 001's slurm plans), run from its run directory
    /// `dir`: the system read-only, `in/` and the script read-only, `out/` writable, `tmp/` its
    /// scratch, and no network. Nothing of the workspace or of Jig's state is visible.
    pub fn for_job(dir: &Path, script: &Path, required: bool) -> Self {
        let mut read: Vec<PathBuf> = SYSTEM.iter().map(PathBuf::from).collect();
        read.push(dir.join("in"));
        read.push(script.to_path_buf());
        Self {
            read,
            write: vec![dir.join("out")],
            hidden: Vec::new(),
            read_only: Vec::new(),
            tmp: Some(dir.join("tmp")),
            network: false,
            required,
            fds: BTreeMap::new(),
        }
    }

    /// A process that works on the whole workspace (`shell_exec`, a formatter, a build
    /// command): read-write, protected paths excepted.
    fn workspace_writer(
        workspace: &Workspace,
        policy: &Policy,
        program: &Path,
        temp: &Path,
        network: bool,
    ) -> Self {
        let mut read = prefixes(program);
        read.extend(policy.config().sandbox.read.iter().map(|p| expand_home(p)));
        let write = vec![workspace.root().to_path_buf()];
        Self::base(workspace, policy, read, write, temp, network)
    }

    /// A process that works over the whole workspace (`shell_exec`, a formatter, a build
    /// command, a language server) running `program`, with its scratch directory and an
    /// environment of `passthrough` plus its private `HOME` and `TMPDIR`; the host's network
    /// only when `network` was granted.
    pub fn helper(
        workspace: &Workspace,
        policy: &Policy,
        program: &Path,
        passthrough: &[&str],
        network: bool,
    ) -> Result<(Scratch, Self, std::collections::BTreeMap<String, String>), ToolError> {
        let label = program.file_name().map_or("helper".into(), |n| n.to_string_lossy());
        let scratch = Scratch::new(workspace.root(), &label)?;
        let confinement =
            Self::workspace_writer(workspace, policy, program, scratch.path(), network);
        let mut env = host::inherited(passthrough);
        private_home(&mut env, &scratch);
        Ok((scratch, confinement, env))
    }

    fn base(
        workspace: &Workspace,
        policy: &Policy,
        mut read: Vec<PathBuf>,
        write: Vec<PathBuf>,
        temp: &Path,
        network: bool,
    ) -> Self {
        read.extend(SYSTEM.iter().map(PathBuf::from));
        let root = workspace.root();
        let mut read_only: Vec<PathBuf> = workspace.read_only_paths().to_vec();
        read_only.extend(crate::code_loading::protected(root));
        Self {
            read,
            write,
            hidden: vec![root.join(".jig")],
            read_only,
            tmp: Some(temp.to_path_buf()),
            network,
            required: policy.config().sandbox.enforce == SandboxEnforcement::Required,
            fds: BTreeMap::new(),
        }
    }

    /// bwrap's options for a process in `cwd` inside this sandbox with exactly the variables
    /// `env` (the program and its arguments follow `--` on bwrap's command line). Refused: a
    /// variable whose name or value cannot be one.
    pub fn options(
        &self,
        cwd: &Path,
        env: &BTreeMap<String, String>,
    ) -> Result<Vec<OsString>, ToolError> {
        let mut out: Vec<OsString> = Vec::with_capacity(64 + 3 * env.len());
        out.push("--clearenv".into());
        for (name, value) in env {
            if name.is_empty() || name.contains(['=', '\0']) || value.contains('\0') {
                return Err(ToolError::new(
                    ErrorCode::ValidationFail,
                    format!("`{}` cannot be an environment variable", name.escape_debug()),
                ));
            }
            out.extend(["--setenv".into(), name.into(), value.into()]);
        }
        let mut push =
            |items: &[&std::ffi::OsStr]| out.extend(items.iter().map(|s| s.to_os_string()));
        push(&[
            // Run by root, bwrap would keep every capability inside: enough to unmount the
            // read-only binds that protect `.jig/` and the manifests. None, whoever runs Jig.
            "--cap-drop".as_ref(),
            "ALL".as_ref(),
            "--die-with-parent".as_ref(),
            "--new-session".as_ref(),
            "--unshare-pid".as_ref(),
            "--unshare-ipc".as_ref(),
            "--unshare-uts".as_ref(),
            "--unshare-cgroup-try".as_ref(),
            "--proc".as_ref(),
            "/proc".as_ref(),
            "--dev".as_ref(),
            "/dev".as_ref(),
        ]);
        if !self.network {
            push(&["--unshare-net".as_ref()]);
        }
        // A private, empty `/tmp` — unless something bound lies under the host's `/tmp` (a
        // workspace there): mount points bwrap makes inside a writable `/tmp` would be writable
        // too. Then `/tmp` stays part of the read-only root, and `TMPDIR` is the way to scratch.
        let under_tmp = |p: &PathBuf| p.starts_with("/tmp");
        if !self.read.iter().chain(&self.write).chain(&self.tmp).any(under_tmp) {
            push(&["--tmpfs".as_ref(), "/tmp".as_ref()]);
        }
        let mut bound: Vec<&Path> = Vec::new();
        for path in self.read.iter().filter(|path| path.is_absolute()) {
            // A tree inside one already bound read-only needs no mount of its own.
            if bound.iter().any(|b| path.starts_with(b)) {
                continue;
            }
            bound.push(path);
            match std::fs::symlink_metadata(path) {
                Ok(meta)
                    if meta.file_type().is_symlink() && path.parent() == Some(Path::new("/")) =>
                {
                    if let Ok(target) = std::fs::read_link(path) {
                        push(&["--symlink".as_ref(), target.as_os_str(), path.as_os_str()]);
                    }
                }
                Ok(_) => push(&self.bind(false, path).each_ref().map(OsString::as_os_str)),
                Err(_) => {}
            }
        }
        for path in MASKED.iter().map(Path::new).filter(|p| p.exists()) {
            if path.is_dir() {
                push(&[
                    "--tmpfs".as_ref(),
                    path.as_os_str(),
                    "--remount-ro".as_ref(),
                    path.as_os_str(),
                ]);
            } else {
                push(&["--ro-bind".as_ref(), "/dev/null".as_ref(), path.as_os_str()]);
            }
        }
        for path in self.write.iter().filter(|p| self.fds.contains_key(*p) || p.exists()) {
            push(&self.bind(true, path).each_ref().map(OsString::as_os_str));
        }
        let read_only: Vec<&PathBuf> = self.read_only.iter().filter(|p| p.exists()).collect();
        for dir in self.pinned(&read_only) {
            push(&["--bind".as_ref(), dir.as_os_str(), dir.as_os_str()]);
        }
        for path in read_only {
            push(&["--ro-bind".as_ref(), path.as_os_str(), path.as_os_str()]);
        }
        let hidden: Vec<&PathBuf> = self.hidden.iter().filter(|p| p.is_dir()).collect();
        for path in &hidden {
            push(&["--tmpfs".as_ref(), path.as_os_str()]);
        }
        // Run and scratch directories live under `.jig/`: bound again after the mask, so they
        // show through; the scratch directory wherever it is.
        for path in self.write.iter().filter(|p| hidden.iter().any(|h| p.starts_with(h))) {
            push(&["--bind".as_ref(), path.as_os_str(), path.as_os_str()]);
        }
        if let Some(tmp) = &self.tmp {
            push(&["--bind".as_ref(), tmp.as_os_str(), tmp.as_os_str()]);
        }
        for path in &hidden {
            push(&["--remount-ro".as_ref(), path.as_os_str()]);
        }
        // Nothing else is writable: the sandbox's own root is read-only, so a write outside the
        // grants fails instead of landing in a throwaway directory.
        push(&["--remount-ro".as_ref(), "/".as_ref()]);
        push(&["--chdir".as_ref(), cwd.as_os_str()]);
        Ok(out)
    }

    /// The options binding `path` onto itself: through the descriptor the kernel resolved for
    /// it (a workspace grant) when there is one, else by name (the system, a program's
    /// installation, Jig's own directories).
    fn bind(&self, writable: bool, path: &Path) -> [OsString; 3] {
        match self.fds.get(path) {
            Some(fd) => {
                let flag = if writable { "--bind-fd" } else { "--ro-bind-fd" };
                [flag.into(), fd.as_raw_fd().to_string().into(), path.into()]
            }
            None => {
                let flag = if writable { "--bind" } else { "--ro-bind" };
                [flag.into(), path.into(), path.into()]
            }
        }
    }

    /// The directories between a writable tree and each path of `read_only` inside it, shallow
    /// first: each is bound onto itself (writable, as it was) before the read-only binds, which
    /// makes it a mount point. A directory that merely *holds* a mount point can be renamed: a
    /// process could move `.git` aside, protections and all, and make a new one with hooks of
    /// its own. A mount point cannot be renamed or removed.
    fn pinned<'a>(&'a self, read_only: &[&'a PathBuf]) -> Vec<&'a Path> {
        let mut pinned: Vec<&Path> = Vec::new();
        for path in read_only {
            let Some(tree) = self
                .write
                .iter()
                .filter(|tree| path.starts_with(tree))
                .max_by_key(|tree| tree.components().count())
            else {
                continue;
            };
            let mut between: Vec<&Path> =
                path.ancestors().skip(1).take_while(|dir| *dir != tree.as_path()).collect();
            between.reverse();
            for dir in between {
                if !pinned.contains(&dir) {
                    pinned.push(dir);
                }
            }
        }
        pinned
    }

    /// A command running `program args…` in `cwd` inside this sandbox with exactly the
    /// variables `env`, and what starting it needs ([`Launch`]); the bare program when the
    /// sandbox is unavailable and the policy allows that. Start it with [`Confinement::spawn`].
    pub fn command(
        &self,
        program: &Path,
        args: &[String],
        cwd: &Path,
        env: &BTreeMap<String, String>,
    ) -> Result<(std::process::Command, Launch), ToolError> {
        if !self.available()? {
            // `best_effort` on a machine without the sandbox: the tool itself runs unconfined,
            // as the policy chose. Its program is found as the sandbox would find it.
            let program =
                if program.is_absolute() { program.to_path_buf() } else { cwd.join(program) };
            let mut command =
                host::command(&HostProgram::at(&program)?, &HostEnv::of_unconfined_tool(env));
            command.args(args).current_dir(cwd);
            return Ok((command, Launch::default()));
        }
        let bwrap = launcher().map_err(|why| unenforceable(&why))?;
        self.sandboxed(bwrap, program, args, cwd, env)
    }

    /// bwrap running `program args…` in this sandbox: its options in a memory file it reads
    /// (`--args`), its own environment empty.
    fn sandboxed(
        &self,
        bwrap: &HostProgram,
        program: &Path,
        args: &[String],
        cwd: &Path,
        env: &BTreeMap<String, String>,
    ) -> Result<(std::process::Command, Launch), ToolError> {
        let options = self.options(cwd, env)?;
        let file = options_file(&options).map_err(|e| {
            ToolError::new(ErrorCode::Internal, format!("the sandbox's options: {e}"))
        })?;
        let mut command = host::command(bwrap, &HostEnv::empty());
        command
            .arg("--args")
            .arg(file.as_raw_fd().to_string())
            .arg("--")
            .arg(program)
            .args(args)
            .current_dir(cwd);
        let fds = self.fds.values().cloned().collect();
        Ok((command, Launch { options: Some(file), fds }))
    }

    /// Start a command built by [`Confinement::command`] (`start` spawns it) on the spawner
    /// thread, or refuse when the sandbox is unavailable and the policy requires it.
    pub fn spawn<T, F>(&self, launch: Launch, start: F) -> Result<T, ToolError>
    where
        F: FnOnce() -> std::io::Result<T> + Send + 'static,
        T: Send + 'static,
    {
        self.available()?;
        let (reply, answer) = std::sync::mpsc::channel();
        let runtime = tokio::runtime::Handle::try_current().ok();
        let job: SpawnJob = Box::new(move || {
            // tokio's process driver must be reachable from the spawning thread.
            let _runtime = runtime.as_ref().map(tokio::runtime::Handle::enter);
            let _ = reply.send(launch.start(start));
        });
        let failed = || ToolError::new(ErrorCode::Internal, "the spawner thread is gone");
        spawner().lock().map_err(|_| failed())?.send(job).map_err(|_| failed())?;
        answer
            .recv()
            .map_err(|_| failed())?
            .map_err(|e| ToolError::new(ErrorCode::Shell, format!("cannot start the tool: {e}")))
    }

    /// Whether processes can be confined here; `Ok(false)` when they cannot and the policy
    /// accepts running them unconfined (`best_effort`).
    pub fn available(&self) -> Result<bool, ToolError> {
        match sandbox_status() {
            Ok(_) => Ok(true),
            Err(_) if !self.required => Ok(false),
            Err(why) => Err(unenforceable(&why)),
        }
    }
}

/// Whether a process that `declares` network gets the host's: only under the policy's explicit
/// `sandbox.network: unfiltered`.
pub fn network_grant(policy: &Policy, declares: bool, tool: &str) -> Result<bool, ToolError> {
    if !declares {
        return Ok(false);
    }
    match policy.config().sandbox.network {
        ProcessNetwork::Unfiltered => Ok(true),
        ProcessNetwork::None => Err(ToolError::new(
            ErrorCode::Policy,
            format!(
                "`{tool}` needs the network from its own process, which the kernel cannot filter by host; \
                 the policy grants it only with `sandbox.network: unfiltered`"
            ),
        )
        .with_details(json!({ "rule": "sandbox.network" }))),
    }
}

fn unenforceable(why: &str) -> ToolError {
    ToolError::new(
        ErrorCode::Policy,
        format!("the tool's process cannot be confined here: {why}; set the policy's `sandbox.enforce: best_effort` to run it anyway"),
    )
    .with_details(json!({ "rule": "sandbox.enforce" }))
}
