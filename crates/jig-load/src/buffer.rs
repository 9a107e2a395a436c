//! Checking one tool file's text on its own, without a project on disk: for editors that check
//! a buffer as it is typed, and for the fuzzer.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use jig_model::Diagnostic;

use crate::package::{Package, PackageRole};
use crate::refs::SchemaFiles;
use crate::toolfile::{self, ToolContext};
use crate::vfs::MemoryFs;

/// The diagnostics of a `*.tool.yaml` whose text is `text`, as if it were `tools/<name>` of a
/// package with nothing else in it (so a `$ref` to another file is reported as not found).
pub fn check_tool_source(name: &str, text: &str) -> Vec<Diagnostic> {
    let root = PathBuf::from("<buffer>");
    let rel = format!("tools/{name}");
    let package = Package {
        name: "buffer".to_owned(),
        role: PackageRole::Root,
        root: root.clone(),
        manifest_path: None,
        manifest: None,
        tools_dir: root.join("tools"),
        runbooks_dir: None,
        requires: BTreeMap::new(),
        exports: None,
        vfs: Arc::new(MemoryFs::from_files(&root, [(rel.as_str(), text)])),
    };
    let files = SchemaFiles::default();
    let display =
        |path: &Path| path.strip_prefix(&root).unwrap_or(path).to_string_lossy().into_owned();
    let ctx = ToolContext { package: &package, files: &files, display: &display };
    toolfile::load(&ctx, &root.join(rel)).diagnostics
}
