//! What a tool's declaration grants its sandbox, gathered for [`crate::confine`]: host trees by
//! path (the program's installation, an upstream server's `programs`), workspace paths as the
//! kernel resolved them ([`Workspace::grant`]).
//!
//! A workspace grant is refused — and the call with it, naming the tool and the field — when it
//! is or passes a symlink, climbs out of the root, or reaches Jig's state, a repository's
//! internals or (to write) a manifest. Nothing is bound in its place: a tool that runs without
//! a grant it declared would fail later, and less clearly.

use std::collections::BTreeMap;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use jig_model::ErrorCode;
use jig_policy::sandbox::{Access, SandboxError, Workspace};
use serde_json::json;

use crate::executor::ToolError;

/// The trees one tool's process is granted.
#[derive(Debug, Default)]
pub(crate) struct Granted {
    /// Readable trees (absolute).
    pub read: Vec<PathBuf>,
    /// Writable trees (absolute).
    pub write: Vec<PathBuf>,
    /// The descriptor the kernel resolved for a workspace path of `read` or `write`.
    pub fds: BTreeMap<PathBuf, Arc<OwnedFd>>,
}

impl Granted {
    /// Grant `path` (a `caps.filesystem` entry of `tool`, shown as `field`) for `access`: an
    /// absolute path is a host tree (only an upstream server's `programs`, which the loader
    /// turns into read grants; a toolpack's absolute path is refused when loading), anything
    /// else a workspace path resolved by the kernel.
    pub fn add(
        &mut self,
        workspace: &Workspace,
        path: &str,
        access: Access,
        tool: &str,
        field: &str,
    ) -> Result<(), ToolError> {
        if Path::new(path).is_absolute() && access == Access::Read {
            self.read.push(PathBuf::from(path));
            return Ok(());
        }
        let granted = workspace
            .grant(path, access)
            .map_err(|e| refused(tool, &format!("caps.filesystem.{field}"), e))?;
        if let Some(grant) = granted {
            match access {
                Access::Read => self.read.push(grant.path.clone()),
                Access::Write => self.write.push(grant.path.clone()),
            }
            self.fds.insert(grant.path, Arc::new(grant.fd));
        }
        Ok(())
    }

    /// The directory of the tool's own file (`source`, relative to the root), readable so that
    /// its scripts are: resolved like a grant. Jig's own (an upstream server's discovery cache
    /// under `.jig/`) and the built-in package's (`<std>/…`) have nothing to show; a package
    /// required from outside the root (`../shared`) is the manifest's choice and bound by name.
    pub fn source_dir(
        &mut self,
        workspace: &Workspace,
        source: &str,
        tool: &str,
    ) -> Result<(), ToolError> {
        let Some(dir) = Path::new(source).parent() else { return Ok(()) };
        if source.starts_with('<') {
            return Ok(());
        }
        if dir.is_absolute() || dir.starts_with("..") {
            self.read.push(workspace.root().join(dir));
            return Ok(());
        }
        let shown = if dir.as_os_str().is_empty() { "." } else { &*dir.to_string_lossy() };
        match workspace.grant(shown, Access::Read) {
            Ok(Some(grant)) => {
                self.read.push(grant.path.clone());
                self.fds.insert(grant.path, Arc::new(grant.fd));
                Ok(())
            }
            Ok(None) | Err(SandboxError::Protected { .. }) => Ok(()),
            Err(e) => Err(refused(tool, "its own directory", e)),
        }
    }
}

/// The call's error for a grant the workspace refused.
fn refused(tool: &str, field: &str, error: SandboxError) -> ToolError {
    let base = ToolError::from(error);
    let rule = base
        .details
        .as_ref()
        .and_then(|d| d.get("rule"))
        .and_then(|r| r.as_str())
        .unwrap_or(jig_policy::sandbox::RULE)
        .to_owned();
    let path = base.details.as_ref().and_then(|d| d.get("path")).cloned();
    let code = if base.code == ErrorCode::FileIo { ErrorCode::FileIo } else { ErrorCode::Policy };
    ToolError::new(code, format!("`{tool}` cannot start: {field} {}", base.message))
        .with_details(json!({ "rule": rule, "path": path, "field": field }))
}
