//! Seed 001 run workspaces: a tool that declares `outputs` runs in a directory of its own,
//! `.jig/runs/<request id>/`, and may use only what it is given there.
//!
//! - `in/`: every argument whose schema says `format: workspace-path` names a workspace file;
//!   the file is copied in read-only (through the sandbox) and the argument rewritten to
//!   `in/<name>`, so the tool never reads the workspace directly.
//! - `out/`: the tool writes its declared outputs there (`path`, or the role's name). After it
//!   exits, every declared output must exist and nothing else may: a missing or an extra file
//!   fails the run.
//! - Outputs, and the reserved `log` role (what the tool printed), are stored content-addressed
//!   under `.jig/artifacts/sha256/` and listed in the result's `artifacts`, which the audit
//!   records.
//!
//! The run directory is removed afterwards; the artifacts stay.
//!
//! Seed 001's plans place each input where the plan says (`in/<destName>`, `dest_relpath`)
//! instead ([`RunDir::prepare_plan`]); a batch job's directory outlives the call that submitted
//! it ([`RunDir::keep`]) and is reopened to collect the job ([`RunDir::reopen`]). A plan's run
//! identity hashes its inputs' contents, not their names ([`canonical_params`]).

use std::io::Write;
use std::path::{Path, PathBuf};

use jig_model::ErrorCode;
use jig_model::ToolDef;
use jig_model::canonical::Sha256Hash;
use serde_json::{Value, json};

use crate::executor::{Invocation, ToolError};

/// The JSON Schema `format` marking an argument as a workspace file to hand in.
pub const INPUT_FORMAT: &str = "workspace-path";

/// Largest input copied in.
const MAX_INPUT: u64 = 1024 * 1024 * 1024;

/// A prepared run directory.
#[derive(Debug)]
pub struct RunDir {
    dir: PathBuf,
    root: PathBuf,
    /// The arguments with input paths rewritten to `in/…`.
    pub args: Value,
    /// Removed when dropped (not once kept for a job that is still running).
    owned: bool,
}

/// Where a plan puts one input: the argument (`role`), its path in the run directory
/// (`in/…`), and what the argument becomes (the path the plan's program sees).
#[derive(Debug, Clone)]
pub struct Placement {
    /// The input argument.
    pub role: String,
    /// Relative to the run directory, under `in/`.
    pub relpath: String,
    /// The argument's new value.
    pub seen_as: String,
}

impl RunDir {
    /// A run directory for `invocation`, if its tool declares outputs.
    pub fn prepare(invocation: &Invocation<'_>) -> Result<Option<Self>, ToolError> {
        let tool = invocation.tool;
        if tool.outputs.is_empty() {
            return Ok(None);
        }
        let root = invocation.workspace.root().to_path_buf();
        let dir = root.join(".jig").join("runs").join(invocation.events.request_id());
        let io = |e: std::io::Error| {
            ToolError::new(ErrorCode::FileIo, format!("run directory `{}`: {e}", dir.display()))
        };
        for sub in ["in", "out", "tmp"] {
            fs_err::create_dir_all(dir.join(sub)).map_err(io)?;
        }
        let run = Self { dir, root, args: invocation.args.clone(), owned: true };
        let mut args = invocation.args.clone();
        let mut taken = std::collections::BTreeSet::new();
        let result: Result<(), ToolError> = (|| {
            for name in input_fields(tool) {
                match args.get_mut(&name) {
                    Some(Value::String(path)) => *path = run.link(invocation, path, &mut taken)?,
                    Some(Value::Array(items)) => {
                        for item in items {
                            if let Value::String(path) = item {
                                *path = run.link(invocation, path, &mut taken)?;
                            }
                        }
                    }
                    _ => {}
                }
            }
            Ok(())
        })();
        result?;
        let mut run = run;
        run.args = args;
        Ok(Some(run))
    }

    /// A run directory for a plan: each input argument copied (read-only) to its placement,
    /// and rewritten to what the plan's program sees. Created whether or not the tool declares
    /// outputs: the plan's log is collected from it too.
    pub fn prepare_plan(
        invocation: &Invocation<'_>,
        placements: &[Placement],
    ) -> Result<Self, ToolError> {
        let root = invocation.workspace.root().to_path_buf();
        let dir = root.join(".jig").join("runs").join(invocation.events.request_id());
        let io = |e: std::io::Error| {
            ToolError::new(ErrorCode::FileIo, format!("run directory `{}`: {e}", dir.display()))
        };
        for sub in ["in", "out"] {
            fs_err::create_dir_all(dir.join(sub)).map_err(io)?;
        }
        let mut run = Self { dir: dir.clone(), root, args: invocation.args.clone(), owned: true };
        for placement in placements {
            let Some(Value::String(path)) = invocation.args.get(&placement.role) else {
                continue;
            };
            let bytes = invocation.workspace.read(path, MAX_INPUT)?;
            let target = run.dir.join(&placement.relpath);
            if let Some(parent) = target.parent() {
                fs_err::create_dir_all(parent).map_err(io)?;
            }
            write_read_only(&target, &bytes)
                .map_err(|e| ToolError::new(ErrorCode::FileIo, format!("linking `{path}`: {e}")))?;
            run.args[&placement.role] = Value::String(placement.seen_as.clone());
        }
        Ok(run)
    }

    /// The run directory `dir` of a job submitted earlier, under the workspace `root`. Not
    /// removed when dropped: whoever records the job's end removes it, after recording (another
    /// process may be reading it until then).
    pub fn reopen(root: &Path, dir: &Path) -> Self {
        Self { dir: dir.to_path_buf(), root: root.to_path_buf(), args: Value::Null, owned: false }
    }

    /// Keep the directory after this handle is gone: a submitted job still uses it.
    pub fn keep(mut self) -> PathBuf {
        self.owned = false;
        self.dir.clone()
    }

    /// The directory the tool runs in.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Store `bytes` as an artifact (content-addressed); its hash and path under the root.
    pub fn store_artifact(&self, bytes: &[u8]) -> Result<(String, String), ToolError> {
        store(&self.root, bytes)
    }

    /// Check `out/` against the declared outputs, store them and the log, and add `artifacts`
    /// to `data`. The run directory is removed either way (when this handle owns it).
    ///
    /// What a tool left in `out/` is hostile until proven otherwise, and is looked at on a
    /// blocking thread, never on the async workers: only regular files and directories are
    /// accepted (a FIFO would block a reader forever, a device could be anything, a link could
    /// point anywhere), each file is opened without following links and without blocking and
    /// checked again on the open descriptor, and every size is checked before anything is read:
    /// the outputs together may hold at most the tool's `maxOutputBytes`, and never more than
    /// the project's `audit.max_artifact_bytes`.
    pub async fn collect(
        &self,
        tool: &ToolDef,
        policy: &jig_policy::Policy,
        log: &str,
        data: &mut Value,
    ) -> Result<(), ToolError> {
        let max = tool.limits.max_output_bytes.min(policy.config().audit.max_artifact_bytes());
        let job = Collection {
            out: self.dir.join("out"),
            root: self.root.clone(),
            tool: tool.id.clone(),
            declared: tool.outputs.iter().map(|d| (out_path(d), d.clone())).collect(),
            max,
            log: log.to_owned(),
        };
        let artifacts = tokio::task::spawn_blocking(move || job.run()).await.map_err(|e| {
            ToolError::new(ErrorCode::Internal, format!("collecting outputs: {e}"))
        })??;
        match data {
            Value::Object(map) => {
                map.insert("artifacts".to_owned(), Value::Array(artifacts));
            }
            other => *other = json!({ "result": other.take(), "artifacts": artifacts }),
        }
        Ok(())
    }

    /// Copy a workspace file into `in/` (read-only) and return its path there.
    fn link(
        &self,
        invocation: &Invocation<'_>,
        path: &str,
        taken: &mut std::collections::BTreeSet<String>,
    ) -> Result<String, ToolError> {
        let bytes = invocation.workspace.read(path, MAX_INPUT)?;
        let name = Path::new(path)
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "input".to_owned());
        if !taken.insert(name.clone()) {
            return Err(ToolError::new(
                ErrorCode::ValidationFail,
                format!(
                    "two inputs are named `{name}`; they would overwrite each other under `in/`"
                ),
            ));
        }
        let target = self.dir.join("in").join(&name);
        write_read_only(&target, &bytes)
            .map_err(|e| ToolError::new(ErrorCode::FileIo, format!("linking `{path}`: {e}")))?;
        Ok(format!("in/{name}"))
    }
}

/// One collection of a run's outputs, owned so that it can run on a blocking thread.
struct Collection {
    out: PathBuf,
    root: PathBuf,
    tool: String,
    declared: Vec<(String, jig_model::toolpack::OutputDecl)>,
    max: u64,
    log: String,
}

impl Collection {
    fn run(self) -> Result<Vec<Value>, ToolError> {
        let Self { out, root, tool, declared, max, log } = self;
        // The tool may have swapped `out/` or an output for a link to somewhere else.
        if !fs_err::symlink_metadata(&out).is_ok_and(|m| m.is_dir()) {
            return Err(ToolError::new(
                ErrorCode::Policy,
                format!("`{tool}` replaced its `out/` directory"),
            ));
        }
        let mut produced = Vec::new();
        list(&out, &out, &mut produced).map_err(|e| {
            ToolError::new(ErrorCode::Policy, format!("`{tool}`'s `out/`: {e}"))
                .with_details(json!({ "rule": "outputs.regular_files" }))
        })?;
        let missing: Vec<&str> = declared
            .iter()
            .filter(|(p, _)| !produced.iter().any(|(q, _)| q == p))
            .map(|(_, d)| d.role.as_str())
            .collect();
        let extra: Vec<&String> = produced
            .iter()
            .map(|(p, _)| p)
            .filter(|p| !declared.iter().any(|(d, _)| d == *p))
            .collect();
        if !missing.is_empty() || !extra.is_empty() {
            return Err(ToolError::new(
                ErrorCode::ValidationFail,
                format!(
                    "`{tool}` must produce exactly its declared outputs: missing {missing:?}, undeclared {extra:?}"
                ),
            )
            .with_details(json!({ "missing": missing, "undeclared": extra })));
        }
        // Sizes as listed, checked before anything is read; each file is checked again when
        // it is open.
        let total: u64 = produced.iter().map(|(_, size)| size).sum();
        if total > max {
            return Err(too_large(&tool, total, max));
        }
        let mut artifacts = Vec::new();
        let mut budget = max;
        for (path, decl) in &declared {
            let bytes = read_regular(&out.join(path), budget).map_err(|e| match e {
                Read::TooLarge(size) => too_large(&tool, max - budget + size, max),
                Read::Io(e) => {
                    ToolError::new(ErrorCode::FileIo, format!("output `{}`: {e}", decl.role))
                }
            })?;
            budget -= bytes.len() as u64;
            let stored = store(&root, &bytes)?;
            artifacts.push(json!({ "role": decl.role, "type": decl.artifact_type, "label": decl.label, "sha256": stored.0, "size": bytes.len(), "path": stored.1 }));
        }
        // The log is shown on screens as it is stored: secrets in it are redacted first, as
        // in every result.
        let log = jig_policy::redact::redact_text(&log);
        let stored = store(&root, log.as_bytes())?;
        artifacts.push(json!({ "role": "log", "type": "text/plain", "label": "what the tool printed", "sha256": stored.0, "size": log.len(), "path": stored.1 }));
        Ok(artifacts)
    }
}

fn too_large(tool: &str, size: u64, max: u64) -> ToolError {
    ToolError::new(
        ErrorCode::Limit,
        format!("`{tool}`'s outputs are {size} bytes; it may produce at most {max}"),
    )
    .with_details(json!({ "limit": "maxOutputBytes", "size": size, "max": max }))
}

/// Why a file was not read.
enum Read {
    /// It holds more than allowed (its size).
    TooLarge(u64),
    /// It could not be read, or is not a regular file.
    Io(std::io::Error),
}

/// The contents of the regular file at `path`, if it holds at most `max` bytes: opened without
/// following a link and without blocking (a FIFO swapped in after listing cannot stall the
/// read), and checked to be a regular file on the open descriptor.
fn read_regular(path: &Path, max: u64) -> Result<Vec<u8>, Read> {
    use rustix::fs::{Mode, OFlags};
    use std::io::Read as _;
    let fd = rustix::fs::open(
        path,
        OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC | OFlags::NOCTTY,
        Mode::empty(),
    )
    .map_err(|e| Read::Io(std::io::Error::from(e)))?;
    let file = std::fs::File::from(fd);
    let meta = file.metadata().map_err(Read::Io)?;
    if !meta.is_file() {
        return Err(Read::Io(std::io::Error::other("not a regular file")));
    }
    if meta.len() > max {
        return Err(Read::TooLarge(meta.len()));
    }
    // The file may still grow (a process outside that holds it open): read one byte past the
    // limit to tell.
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
    file.take(max + 1).read_to_end(&mut bytes).map_err(Read::Io)?;
    if bytes.len() as u64 > max {
        return Err(Read::TooLarge(bytes.len() as u64));
    }
    Ok(bytes)
}

/// At most the first `max` bytes of the regular file at `path` (opened as declared outputs are:
/// without following a link or blocking), and whether there was more: for a log a job wrote,
/// which may be any size.
pub fn read_head(path: &Path, max: u64) -> std::io::Result<(Vec<u8>, bool)> {
    use rustix::fs::{Mode, OFlags};
    use std::io::Read as _;
    let fd = rustix::fs::open(
        path,
        OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC | OFlags::NOCTTY,
        Mode::empty(),
    )?;
    let file = std::fs::File::from(fd);
    if !file.metadata()?.is_file() {
        return Err(std::io::Error::other("not a regular file"));
    }
    let mut bytes = Vec::new();
    file.take(max + 1).read_to_end(&mut bytes)?;
    let more = bytes.len() as u64 > max;
    bytes.truncate(usize::try_from(max).unwrap_or(usize::MAX));
    Ok((bytes, more))
}

/// Store `bytes` under `.jig/artifacts/sha256/<2>/<hash>`; (hash, path relative to root).
fn store(root: &Path, bytes: &[u8]) -> Result<(String, String), ToolError> {
    let hash = Sha256Hash::of_bytes(bytes).to_hex();
    let relative = artifact_relpath(&hash);
    let path = root.join(&relative);
    if !path.exists() {
        let io = |e: std::io::Error| {
            ToolError::new(ErrorCode::FileIo, format!("storing artifact {hash}: {e}"))
        };
        let parent = path.parent().unwrap_or(root);
        fs_err::create_dir_all(parent).map_err(io)?;
        // Unique per write: two collections of the same output may run at once.
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let temp = parent.join(format!(".{hash}.{}.{n}.tmp", std::process::id()));
        let mut file = fs_err::File::create(&temp).map_err(io)?;
        file.write_all(bytes).and_then(|()| file.sync_all()).map_err(io)?;
        fs_err::rename(&temp, &path).map_err(io)?;
    }
    Ok((hash, relative))
}

/// Where the artifact with this SHA-256 (64 lowercase hex digits) is stored under the project
/// root; `None` for anything else, so no name reaches the file system unchecked.
pub fn artifact_path(root: &Path, sha256: &str) -> Option<PathBuf> {
    let hex = sha256.len() == 64
        && sha256.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
    hex.then(|| root.join(artifact_relpath(sha256)))
}

fn artifact_relpath(hash: &str) -> String {
    format!(".jig/artifacts/sha256/{}/{hash}", &hash[..2])
}

impl Drop for RunDir {
    fn drop(&mut self) {
        // Inputs are read-only; the directory itself is ours.
        if self.owned {
            let _ = fs_err::remove_dir_all(&self.dir);
        }
    }
}

/// Where a declared output is found under `out/`: a plan's `srcRelpath` without its `out/`,
/// else `path`, else the role's name.
fn out_path(decl: &jig_model::toolpack::OutputDecl) -> String {
    if let Some(src) = &decl.src_relpath {
        return src.strip_prefix("out/").unwrap_or(src).to_owned();
    }
    decl.path.clone().unwrap_or_else(|| decl.role.clone())
}

fn write_read_only(target: &Path, bytes: &[u8]) -> std::io::Result<()> {
    fs_err::write(target, bytes)?;
    let mut permissions = fs_err::metadata(target)?.permissions();
    permissions.set_readonly(true);
    fs_err::set_permissions(target, permissions)
}

/// Seed 001's canonical params of a plan call: the arguments with every workspace-file input
/// replaced by the SHA-256 of its contents (an immutable input: a file's name says nothing
/// about what the job will read), plus `extra` (the plan's pinned image). The run id hashes
/// these, so an edited input is a new run, never a replay of the old one.
pub fn canonical_params(
    tool: &ToolDef,
    args: &Value,
    workspace: &jig_policy::sandbox::Workspace,
    extra: &Value,
) -> Result<Value, ToolError> {
    let mut params = args.clone();
    for name in input_fields(tool) {
        if let Some(Value::String(path)) = params.get(&name) {
            let bytes = workspace.read(path, MAX_INPUT)?;
            params[&name] = json!({ "sha256": Sha256Hash::of_bytes(&bytes).to_hex() });
        }
    }
    Ok(json!({ "args": params, "plan": extra }))
}

/// Top-level input properties marked as workspace files.
fn input_fields(tool: &ToolDef) -> Vec<String> {
    let Some(properties) = tool.input_schema.get("properties").and_then(Value::as_object) else {
        return Vec::new();
    };
    properties
        .iter()
        .filter(|(_, schema)| {
            schema.get("format").and_then(Value::as_str) == Some(INPUT_FORMAT)
                || schema.pointer("/items/format").and_then(Value::as_str) == Some(INPUT_FORMAT)
        })
        .map(|(name, _)| name.clone())
        .collect()
}

/// At most this many entries in `out/`: listing it must end.
const MAX_ENTRIES: usize = 10_000;

/// Regular files under `dir`, relative to `base`, `/`-separated, with their sizes. Anything
/// else but a directory is an error: a symbolic link could point anywhere (an artifact is what
/// the tool wrote, not what a link reaches), and a FIFO, socket or device is not an output.
fn list(base: &Path, dir: &Path, out: &mut Vec<(String, u64)>) -> std::io::Result<()> {
    for entry in fs_err::read_dir(dir)? {
        let entry = entry?;
        let kind = entry.file_type()?;
        let relative = entry
            .path()
            .strip_prefix(base)
            .map(|p| p.to_string_lossy().into_owned())
            .unwrap_or_default();
        if kind.is_dir() {
            list(base, &entry.path(), out)?;
        } else if kind.is_file() {
            out.push((relative, entry.metadata()?.len()));
        } else {
            let what = if kind.is_symlink() {
                "a symbolic link"
            } else if std::os::unix::fs::FileTypeExt::is_fifo(&kind) {
                "a FIFO"
            } else if std::os::unix::fs::FileTypeExt::is_socket(&kind) {
                "a socket"
            } else {
                "a device"
            };
            return Err(std::io::Error::other(format!(
                "`{relative}` is {what}; only regular files are collected"
            )));
        }
        if out.len() > MAX_ENTRIES {
            return Err(std::io::Error::other(format!(
                "more than {MAX_ENTRIES} files; only the declared outputs are collected"
            )));
        }
    }
    out.sort();
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_sha256_names_an_artifact() {
        let hash = "ab".repeat(32);
        let path = artifact_path(Path::new("/p"), &hash).expect("a hash");
        assert_eq!(path, Path::new("/p/.jig/artifacts/sha256/ab").join(&hash));
        for bad in [
            "",
            "../../etc/passwd",
            &"AB".repeat(32),
            &"ab".repeat(33),
            &format!("{}/x", "a".repeat(62)),
        ] {
            assert_eq!(artifact_path(Path::new("/p"), bad), None, "{bad}");
        }
    }
}
