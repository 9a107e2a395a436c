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
        self.store(bytes)
    }

    /// Check `out/` against the declared outputs, store them and the log, and add `artifacts`
    /// to `data`. The run directory is removed either way.
    pub fn collect(&self, tool: &ToolDef, log: &str, data: &mut Value) -> Result<(), ToolError> {
        let out = self.dir.join("out");
        // The tool may have swapped `out/` or an output for a link to somewhere else.
        if !fs_err::symlink_metadata(&out).is_ok_and(|m| m.is_dir()) {
            return Err(ToolError::new(
                ErrorCode::Policy,
                format!("`{}` replaced its `out/` directory", tool.id),
            ));
        }
        let mut produced = Vec::new();
        list(&out, &out, &mut produced)
            .map_err(|e| ToolError::new(ErrorCode::Policy, format!("reading `out/`: {e}")))?;
        let declared: Vec<(String, &jig_model::toolpack::OutputDecl)> =
            tool.outputs.iter().map(|d| (out_path(d), d)).collect();
        let missing: Vec<&str> = declared
            .iter()
            .filter(|(p, _)| !produced.contains(p))
            .map(|(_, d)| d.role.as_str())
            .collect();
        let extra: Vec<&String> =
            produced.iter().filter(|p| !declared.iter().any(|(d, _)| d == *p)).collect();
        if !missing.is_empty() || !extra.is_empty() {
            return Err(ToolError::new(
                ErrorCode::ValidationFail,
                format!(
                    "`{}` must produce exactly its declared outputs: missing {:?}, undeclared {:?}",
                    tool.id, missing, extra
                ),
            )
            .with_details(json!({ "missing": missing, "undeclared": extra })));
        }
        let mut artifacts = Vec::new();
        for (path, decl) in &declared {
            let bytes = fs_err::read(out.join(path)).map_err(|e| {
                ToolError::new(ErrorCode::FileIo, format!("output `{}`: {e}", decl.role))
            })?;
            let stored = self.store(&bytes)?;
            artifacts.push(json!({ "role": decl.role, "type": decl.artifact_type, "label": decl.label, "sha256": stored.0, "size": bytes.len(), "path": stored.1 }));
        }
        // The log is shown on screens as it is stored: secrets in it are redacted first, as
        // in every result.
        let log = jig_policy::redact::redact_text(log);
        let stored = self.store(log.as_bytes())?;
        artifacts.push(json!({ "role": "log", "type": "text/plain", "label": "what the tool printed", "sha256": stored.0, "size": log.len(), "path": stored.1 }));
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

    /// Store `bytes` under `.jig/artifacts/sha256/<2>/<hash>`; (hash, path relative to root).
    fn store(&self, bytes: &[u8]) -> Result<(String, String), ToolError> {
        let hash = Sha256Hash::of_bytes(bytes).to_hex();
        let relative = artifact_relpath(&hash);
        let path = self.root.join(&relative);
        if !path.exists() {
            let io = |e: std::io::Error| {
                ToolError::new(ErrorCode::FileIo, format!("storing artifact {hash}: {e}"))
            };
            let parent = path.parent().unwrap_or(&self.root);
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

/// Files under `dir`, relative to `base`, `/`-separated. A symbolic link is an error: it could
/// point anywhere, and an artifact is what the tool wrote, not what a link reaches.
fn list(base: &Path, dir: &Path, out: &mut Vec<String>) -> std::io::Result<()> {
    for entry in fs_err::read_dir(dir)? {
        let entry = entry?;
        let kind = entry.file_type()?;
        if kind.is_symlink() {
            return Err(std::io::Error::other(format!(
                "`{}` is a symbolic link",
                entry.path().display()
            )));
        }
        if kind.is_dir() {
            list(base, &entry.path(), out)?;
        } else {
            let relative = entry
                .path()
                .strip_prefix(base)
                .map(|p| p.to_string_lossy().into_owned())
                .unwrap_or_default();
            out.push(relative);
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
