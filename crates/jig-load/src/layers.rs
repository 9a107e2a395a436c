//! Reading the policy layers above the project: the machine's (`$JIG_MANAGED_POLICY`, else
//! `/etc/jig/policy.yaml`) and the person's (`$XDG_CONFIG_HOME/jig/policy.yaml`, by default
//! `~/.config/jig/policy.yaml`). Both live outside the project, so nothing the governed
//! repository contains can write or choose them. A layer that is absent is no layer; one that
//! is there and cannot be read or is not valid stops Jig (fail closed): falling back to the
//! project's word would hand the governed the governor's pen.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use jig_model::Diagnostic;
use jig_model::diagnostic::codes;
use jig_model::file_schemas::FileFormat;
use jig_model::policy::{LAYER_KEYS, Layer, LayerKind, PolicyLayerFile};
use serde_json::Value;

use crate::located::Located;
use crate::vfs::{DiskFs, ReadError, Vfs};
use crate::yaml;

/// The variable naming the machine layer's file (tests, and machines that keep it elsewhere).
pub const MANAGED_POLICY_VAR: &str = "JIG_MANAGED_POLICY";

/// The machine layer's file when `$JIG_MANAGED_POLICY` is not set.
pub const MACHINE_POLICY: &str = "/etc/jig/policy.yaml";

/// Where this process finds each layer above the project, and whether it must be there.
pub fn layer_paths() -> Vec<(LayerKind, PathBuf, bool)> {
    let mut paths = Vec::new();
    match std::env::var_os(MANAGED_POLICY_VAR).filter(|v| !v.is_empty()) {
        // Named: it must be there — a machine that says where its policy is and lost it must
        // not run on the project's word.
        Some(named) => paths.push((LayerKind::Machine, PathBuf::from(named), true)),
        None => paths.push((LayerKind::Machine, PathBuf::from(MACHINE_POLICY), false)),
    }
    let config = std::env::var_os("XDG_CONFIG_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".config")));
    if let Some(config) = config {
        paths.push((LayerKind::Person, config.join("jig").join("policy.yaml"), false));
    }
    paths
}

/// Every layer above the project that this process is under, strongest first.
pub fn read_layers() -> Result<Vec<Layer>, Vec<Diagnostic>> {
    let mut layers = Vec::new();
    let mut problems = Vec::new();
    for (kind, path, required) in layer_paths() {
        match read_layer(kind, &path, required) {
            Ok(Some(layer)) => layers.push(layer),
            Ok(None) => {}
            Err(mut found) => problems.append(&mut found),
        }
    }
    if problems.is_empty() { Ok(layers) } else { Err(problems) }
}

/// The layer `kind` in `path`: `None` when the file is absent and not `required`.
pub fn read_layer(
    kind: LayerKind,
    path: &Path,
    required: bool,
) -> Result<Option<Layer>, Vec<Diagnostic>> {
    let display = path.display().to_string();
    let caps = yaml::Caps::DEFAULT;
    let problem = |message: String| {
        vec![Diagnostic::error(codes::POLICY, message).in_file(display.clone()).with_hint(format!(
            "the {kind} policy layer must be readable and valid, or absent; Jig does not run on the project's policy alone when a layer above cannot be read"
        ))]
    };
    // The file is the administrator's or the person's, outside any project: a link to where
    // their configuration management keeps it is followed, then read as every file the loader
    // reads (a regular file, capped, never blocking on a FIFO).
    let read = fs_err::canonicalize(path)
        .map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => ReadError::NotFound,
            _ => ReadError::Io(e.to_string()),
        })
        .and_then(|real| DiskFs.read(&real, caps.max_bytes));
    let text = match read {
        Ok(text) => text,
        Err(ReadError::NotFound) if !required => return Ok(None),
        Err(e) => {
            let why = crate::refs::read_error(e, &display, &caps).message;
            return Err(problem(format!("the {kind} policy layer cannot be read: {why}")));
        }
    };
    let doc = yaml::parse(&text, &caps).map_err(|e| {
        let mut diagnostic = Diagnostic::error(e.code, e.message).in_file(display.clone());
        if let Some(pos) = e.pos {
            diagnostic = diagnostic.at_line(pos.line, pos.column);
        }
        vec![diagnostic]
    })?;
    let located = Located { display: display.clone(), doc: Arc::new(doc) };
    let file: PolicyLayerFile = crate::shape::check(&located, FileFormat::PolicyLayer)?;
    let said = located.doc.value.get("policy").cloned().unwrap_or(Value::Null);
    let mut found = crate::policy_check::check(&file.policy, &located);
    if let Value::Object(keys) = &said {
        for key in keys.keys().filter(|key| !LAYER_KEYS.contains(&key.as_str())) {
            let message = format!(
                "`policy.{key}` is the project's to set; a layer above may set {}",
                LAYER_KEYS.map(|k| format!("`{k}`")).join(", ")
            );
            found.push(
                located
                    .at_key(Diagnostic::error(codes::POLICY, message), &format!("/policy/{key}")),
            );
        }
    }
    if found.iter().any(|d| d.severity == jig_model::Severity::Error) {
        return Err(found);
    }
    Ok(Some(Layer::new(kind, display, file, said)))
}
