//! A call's private scratch directory (its `/tmp`, `HOME` and `TMPDIR`), and the confinement
//! of a tool's process around it.

use std::path::{Path, PathBuf};

use jig_model::ErrorCode;

use super::Confinement;
use crate::executor::{Invocation, ToolError};

/// The scratch directory and confinement of a tool's process running `program`; the scratch
/// directory is the process's `/tmp`, and `TMPDIR` and `HOME` point there.
pub fn prepare(
    invocation: &Invocation<'_>,
    program: &str,
    run_dir: Option<&Path>,
    env: &mut std::collections::BTreeMap<String, String>,
) -> Result<(Scratch, Confinement), ToolError> {
    let scratch = Scratch::new(invocation.workspace.root(), invocation.events.request_id())?;
    let resolved = crate::program::find_program(program).unwrap_or_else(|| PathBuf::from(program));
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
