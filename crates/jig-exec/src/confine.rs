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
use landlock::{
    ABI, Access, AccessFs, CompatLevel, Compatible, LandlockStatus, Ruleset, RulesetAttr, Scope,
};
use serde_json::json;

use crate::executor::{Invocation, ToolError};
use crate::grants::Granted;
use crate::host::{self, HostEnv, HostProgram};

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
    let Some(program) = crate::process::find_program("true") else {
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

/// Work for the spawner thread.
type SpawnJob = Box<dyn FnOnce() + Send>;

/// The one thread that starts every tool process. It lives as long as Jig: a child's
/// parent-death signal (bwrap's `--die-with-parent`) fires when the *thread* that started it
/// ends, so a short-lived spawning thread would kill its children at once. It restricts itself
/// with Landlock's scopes first, which its children inherit; the rest of Jig stays unrestricted.
fn spawner() -> &'static std::sync::Mutex<std::sync::mpsc::Sender<SpawnJob>> {
    static SPAWNER: OnceLock<std::sync::Mutex<std::sync::mpsc::Sender<SpawnJob>>> = OnceLock::new();
    SPAWNER.get_or_init(|| {
        let (jobs, queue) = std::sync::mpsc::channel::<SpawnJob>();
        std::thread::Builder::new()
            .name("jig-spawner".to_owned())
            .spawn(move || {
                restrict_scopes();
                for job in queue {
                    job();
                }
            })
            .unwrap_or_else(|e| panic!("cannot start the spawner thread: {e}"));
        std::sync::Mutex::new(jobs)
    })
}

/// Restrict the calling thread (and what it starts) with Landlock's scopes: no signal to, and
/// no abstract UNIX socket of, a process outside. Scopes handle no filesystem access, so the
/// sandbox can still mount. Best effort: the PID and network namespaces already isolate both.
fn restrict_scopes() {
    let _ = Ruleset::default()
        .set_compatibility(CompatLevel::BestEffort)
        .scope(Scope::from_all(ABI::V6))
        .and_then(|ruleset| ruleset.create())
        .and_then(|ruleset| ruleset.restrict_self());
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
        let mut env = crate::process::inherited(passthrough);
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

/// What starting a sandboxed command needs besides the command: the memory file bwrap reads
/// its options from, and the descriptors of the grants it binds, inheritable only while that
/// one process starts.
#[derive(Debug, Default)]
pub struct Launch {
    options: Option<std::fs::File>,
    fds: Vec<Arc<OwnedFd>>,
}

impl Launch {
    /// Run `start` (which spawns the command) with the options file and the grants handed to
    /// it: made inheritable under `host::spawning`, so no other process started meanwhile gets
    /// them. The options file is closed afterwards; a grant's descriptor is made close-on-exec
    /// again before the lock is released (the confinement may start another process with it,
    /// and bwrap passes on whatever it inherits: a descriptor of a workspace directory in a
    /// sandboxed process is a way out of its mount namespace).
    pub fn start<T>(self, start: impl FnOnce() -> std::io::Result<T>) -> std::io::Result<T> {
        let _held = host::spawning();
        if let Some(file) = &self.options {
            rustix::io::fcntl_setfd(file, rustix::io::FdFlags::empty())?;
        }
        let mut inheritable = Vec::with_capacity(self.fds.len());
        let mut result = Ok(());
        for fd in &self.fds {
            result = rustix::io::fcntl_setfd(fd, rustix::io::FdFlags::empty());
            if result.is_err() {
                break;
            }
            inheritable.push(fd);
        }
        let started = match result {
            Ok(()) => start(),
            Err(e) => Err(e.into()),
        };
        for fd in inheritable {
            // F_SETFD fails only on a descriptor that is not open, which nothing can inherit.
            let _ = rustix::io::fcntl_setfd(fd, rustix::io::FdFlags::CLOEXEC);
        }
        started
    }
}

/// `options`, NUL-separated, in a memory file (close-on-exec until [`Launch::start`]).
fn options_file(options: &[OsString]) -> std::io::Result<std::fs::File> {
    use std::io::{Seek, Write};
    use std::os::unix::ffi::OsStrExt;
    let fd = rustix::fs::memfd_create("jig-sandbox-options", rustix::fs::MemfdFlags::CLOEXEC)?;
    let mut file = std::fs::File::from(fd);
    let mut bytes = Vec::with_capacity(options.iter().map(|o| o.len() + 1).sum());
    for option in options {
        bytes.extend_from_slice(option.as_bytes());
        bytes.push(0);
    }
    file.write_all(&bytes)?;
    file.rewind()?;
    Ok(file)
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

/// The scratch directory and confinement of a tool's process running `program`; the scratch
/// directory is the process's `/tmp`, and `TMPDIR` and `HOME` point there.
pub fn prepare(
    invocation: &Invocation<'_>,
    program: &str,
    run_dir: Option<&Path>,
    env: &mut std::collections::BTreeMap<String, String>,
) -> Result<(Scratch, Confinement), ToolError> {
    let scratch = Scratch::new(invocation.workspace.root(), invocation.events.request_id())?;
    let resolved = crate::process::find_program(program).unwrap_or_else(|| PathBuf::from(program));
    let confinement = Confinement::for_tool(invocation, &resolved, run_dir, scratch.path())?;
    private_home(env, &scratch);
    Ok((scratch, confinement))
}

/// Point `TMPDIR` and `HOME` at the call's private scratch directory: no user configuration
/// is read.
pub fn private_home(env: &mut std::collections::BTreeMap<String, String>, scratch: &Scratch) {
    let path = scratch.path().display().to_string();
    env.insert("TMPDIR".to_owned(), path.clone());
    env.insert("HOME".to_owned(), path);
}

/// A private temporary directory for one call (`.jig/tmp/<request id>`), removed afterwards.
#[derive(Debug)]
pub struct Scratch(PathBuf);

impl Scratch {
    /// Create it under `root`.
    pub fn new(root: &Path, request_id: &str) -> Result<Self, ToolError> {
        static COUNTER: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let unique = COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let name = format!("{}-{unique}", request_id.replace(['/', '.'], "_"));
        let dir = root.join(".jig").join("tmp").join(name);
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
/// `~/.pyenv` for a pyenv shim), for the path as found and as resolved; a rustup proxy also
/// needs its toolchains (`RUSTUP_HOME`).
fn prefixes(program: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    // A relative program (`./bin/report.sh`) is the workspace's, started from the sandbox's
    // working directory and visible through the workspace's grants. Resolving it here would
    // resolve it against Jig's own working directory, and its empty "prefix" would cover every
    // other grant.
    if !program.is_absolute() {
        return out;
    }
    let resolved = program.canonicalize().ok();
    for path in [Some(program.to_path_buf()), resolved.clone()].into_iter().flatten() {
        let Some(dir) = path.parent() else { continue };
        match dir.parent() {
            None => {}
            Some(prefix) if prefix == Path::new("/") => {}
            // `~/bin/tool`: its prefix would be the person's home, every key and history file
            // in it; the program's own directory is what it needs.
            Some(prefix) if holds_home(prefix) => out.push(dir.to_path_buf()),
            Some(prefix) => out.push(prefix.to_path_buf()),
        }
    }
    if resolved.as_deref().and_then(Path::file_name) == Some("rustup".as_ref()) {
        let home = std::env::var_os("RUSTUP_HOME")
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".rustup")));
        out.extend(home);
    }
    out
}

/// Whether `dir` is a home directory or holds one (`/home`, `/root`, `$HOME` and above).
fn holds_home(dir: &Path) -> bool {
    let home = std::env::var_os("HOME").map(PathBuf::from);
    home.is_some_and(|home| home.starts_with(dir))
        || [Path::new("/home"), Path::new("/root")].iter().any(|h| h.starts_with(dir))
}

/// `~/x` with the user's home directory.
fn expand_home(path: &str) -> PathBuf {
    match (path.strip_prefix("~/"), std::env::var_os("HOME")) {
        (Some(rest), Some(home)) => PathBuf::from(home).join(rest),
        _ => PathBuf::from(path),
    }
}

fn unenforceable(why: &str) -> ToolError {
    ToolError::new(
        ErrorCode::Policy,
        format!("the tool's process cannot be confined here: {why}; set the policy's `sandbox.enforce: best_effort` to run it anyway"),
    )
    .with_details(json!({ "rule": "sandbox.enforce" }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn protected_paths_are_bound_after_the_writable_workspace() {
        let dir = tempfile::tempdir().expect("tmp");
        let root = dir.path();
        fs_err::create_dir_all(root.join(".jig/runs/r1")).expect("mkdir");
        fs_err::write(root.join("jig.yaml"), "name: x\n").expect("write");
        let confinement = Confinement {
            write: vec![root.to_path_buf(), root.join(".jig/runs/r1")],
            hidden: vec![root.join(".jig")],
            read_only: vec![root.join("jig.yaml")],
            ..Confinement::default()
        };
        let argv: Vec<String> = confinement
            .options(root, &BTreeMap::new())
            .expect("options")
            .iter()
            .map(|s| s.to_string_lossy().into_owned())
            .collect();
        let at = |flag: &str, path: &Path| {
            argv.windows(2)
                .position(|w| w[0] == flag && w[1] == path.display().to_string())
                .unwrap_or_else(|| panic!("{flag} {} in {argv:?}", path.display()))
        };
        assert!(at("--bind", root) < at("--ro-bind", &root.join("jig.yaml")));
        assert!(at("--ro-bind", &root.join("jig.yaml")) < at("--tmpfs", &root.join(".jig")));
        assert!(at("--tmpfs", &root.join(".jig")) < at("--remount-ro", &root.join(".jig")));
        assert!(argv.contains(&"--unshare-net".to_owned()));
    }

    #[test]
    fn a_relative_program_adds_no_grant_and_hides_none() {
        assert!(prefixes(Path::new("./bin/report.sh")).is_empty());
        let usr = prefixes(Path::new("/usr/bin/true"));
        assert!(!usr.is_empty() && usr.iter().all(|p| p == Path::new("/usr")), "{usr:?}");
    }

    #[test]
    fn the_directories_above_a_protected_path_are_pinned_before_it_is_bound() {
        let dir = tempfile::tempdir().expect("tmp");
        let root = dir.path();
        fs_err::create_dir_all(root.join(".git/modules/sub/hooks")).expect("mkdir");
        fs_err::create_dir_all(root.join("work")).expect("mkdir");
        fs_err::write(root.join("jig.yaml"), "name: x\n").expect("write");
        let argv_of = |write: Vec<PathBuf>| -> Vec<String> {
            let confinement = Confinement {
                read: vec![root.to_path_buf()],
                write,
                read_only: vec![root.join(".git/modules/sub/hooks"), root.join("jig.yaml")],
                ..Confinement::default()
            };
            confinement
                .options(root, &BTreeMap::new())
                .expect("options")
                .iter()
                .map(|s| s.to_string_lossy().into_owned())
                .collect()
        };
        let argv = argv_of(vec![root.to_path_buf()]);
        let at = |flag: &str, path: &Path| {
            argv.windows(2)
                .position(|w| w[0] == flag && w[1] == path.display().to_string())
                .unwrap_or_else(|| panic!("{flag} {} in {argv:?}", path.display()))
        };
        let git = at("--bind", &root.join(".git"));
        let modules = at("--bind", &root.join(".git/modules"));
        let sub = at("--bind", &root.join(".git/modules/sub"));
        let hooks = at("--ro-bind", &root.join(".git/modules/sub/hooks"));
        assert!(git < modules && modules < sub && sub < hooks, "{argv:?}");
        // Nothing outside a writable tree is bound writable to pin it.
        let argv = argv_of(vec![root.join("work")]);
        let git = root.join(".git").display().to_string();
        assert!(!argv.windows(2).any(|w| w[0] == "--bind" && w[1] == git), "{argv:?}");
    }

    /// The red team's escape: a tool's `LD_PRELOAD` loaded its library into bwrap itself, and
    /// its `PATH` chose which program "bwrap" was. Both ran as Jig's user, outside any sandbox.
    #[tokio::test]
    #[allow(clippy::disallowed_methods, reason = "the test compiles a library with the C compiler")]
    async fn a_tools_variables_never_reach_the_launcher() {
        let dir = tempfile::tempdir().expect("tmp");
        let root = dir.path().canonicalize().expect("canonical");
        let marked = root.join("loaded-outside");
        fs_err::write(
            root.join("mark.c"),
            format!(
                "#include <stdio.h>\n__attribute__((constructor)) static void mark(void) {{ \
                 FILE *f = fopen(\"{}\", \"a\"); if (f) {{ fputs(\"constructor\\n\", f); fclose(f); }} }}\n",
                marked.display()
            ),
        )
        .expect("write");
        let compiled = std::process::Command::new("cc")
            .args(["-shared", "-fPIC", "-o", "libmark.so", "mark.c"])
            .current_dir(&root)
            .status()
            .expect("cc");
        assert!(compiled.success());
        fs_err::create_dir_all(root.join("vendor/bin")).expect("mkdir");
        let fake = root.join("vendor/bin/bwrap");
        fs_err::write(
            &fake,
            format!("#!/bin/sh\necho fake-bwrap >> {}\nexec \"$@\"\n", marked.display()),
        )
        .expect("write");
        fs_err::set_permissions(&fake, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .expect("chmod");
        let scratch = Scratch::new(&root, "launcher").expect("scratch");
        let confinement = Confinement {
            read: SYSTEM.iter().map(PathBuf::from).collect(),
            tmp: Some(scratch.path().to_path_buf()),
            required: true,
            ..Confinement::default()
        };
        let env = BTreeMap::from([
            ("LD_PRELOAD".to_owned(), root.join("libmark.so").display().to_string()),
            ("PATH".to_owned(), format!("{}:/usr/bin:/bin", root.join("vendor/bin").display())),
            ("JIG_PROBE".to_owned(), "inside".to_owned()),
        ]);
        let argv = ["sh".to_owned(), "-c".to_owned(), "echo \"$JIG_PROBE\"".to_owned()];
        let finished = crate::process::run(
            crate::process::Spawn {
                argv: &argv,
                cwd: &root,
                env,
                stdin: None,
                timeout: std::time::Duration::from_secs(20),
                max_output: 4096,
                confine: &confinement,
            },
            &crate::executor::Cancel::new(),
            &crate::executor::Events::discard("launcher"),
        )
        .await
        .expect("runs");
        // The variables reach the tool, inside.
        assert_eq!(finished.code, Some(0), "{finished:?}");
        assert_eq!(finished.stdout.trim(), "inside");
        // Nothing ran outside: not the library's constructor, not the planted "bwrap".
        assert!(!marked.exists(), "{}", fs_err::read_to_string(&marked).unwrap_or_default());
    }

    #[test]
    fn a_variable_that_cannot_be_one_is_refused() {
        let confinement = Confinement::default();
        for (name, value) in [("A=B", "x"), ("", "x"), ("A", "x\0y")] {
            let env = BTreeMap::from([(name.to_owned(), value.to_owned())]);
            assert!(confinement.options(Path::new("/"), &env).is_err(), "{name:?}");
        }
    }
}
