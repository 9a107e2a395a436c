//! Seed 004's resolution algorithm for tool and runbook references, with its error texts and
//! its ambiguity rule.
//!
//! Tools: an unqualified name is a file in the package's own tools directory; `pkg/name` looks
//! `pkg` up in the package's `require`, then the name in that package's `exports.tools`, then
//! its tools directory. `std/name` names a built-in from any package. Runbooks: an unqualified name, or a `group/name` whose first segment is
//! not a required package, is local; otherwise it is a runbook of the required package. When a
//! local runbook group has the same name as a required package, the local path wins and a
//! warning says so.

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::package::{Package, normalize_stem};
use crate::toolfile::ToolFile;

/// A file the index finds by its path. Runbook files implement it; resolution needs nothing else
/// of them, so it does not depend on the runbook module that uses it.
pub(crate) trait AtPath {
    /// Where the file is, as the loader normalised it.
    fn path(&self) -> &std::path::Path;
}

/// Every package's tools and runbooks (of type `R`), by their names.
pub(crate) struct Index<'a, R> {
    /// The packages, as in the layout.
    pub packages: &'a [Package],
    /// Per package: tool-file name → file.
    pub tools: &'a [BTreeMap<String, Arc<ToolFile>>],
    /// Per package: runbook name → file.
    pub runbooks: Vec<BTreeMap<String, Arc<R>>>,
}

/// Why a reference did not resolve.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ResolveError {
    /// The package has no such tool or runbook (seed 004's message).
    NotFound(String),
    /// The qualifier names no required package.
    UnknownPackage(String),
}

impl ResolveError {
    /// The message, in seed 004's words.
    pub fn message(&self) -> &str {
        match self {
            Self::NotFound(m) | Self::UnknownPackage(m) => m,
        }
    }
}

impl<R: AtPath> Index<'_, R> {
    /// Resolve a tool reference made from package `from`.
    pub fn tool(
        &self,
        from: usize,
        reference: &str,
    ) -> Result<(usize, Arc<ToolFile>), ResolveError> {
        let package = &self.packages[from];
        match reference.split_once('/') {
            None => self.tools[from]
                .get(reference)
                .map(|file| (from, Arc::clone(file)))
                .ok_or_else(|| {
                    ResolveError::NotFound(format!(
                        "tool '{reference}' not found in package '{}'",
                        package.name
                    ))
                }),
            Some((prefix, name)) => {
                // Every package may name the built-ins as `std/<tool>` without requiring them.
                let implicit = || {
                    (prefix == crate::package::STD_PACKAGE)
                        .then(|| self.packages.iter().position(Package::is_std))
                        .flatten()
                };
                let Some(target) = package.requires.get(prefix).copied().or_else(implicit) else {
                    return Err(ResolveError::UnknownPackage(format!(
                        "unknown package '{prefix}'"
                    )));
                };
                let stem = self.packages[target]
                    .exports
                    .as_ref()
                    .and_then(|exports| exports.get(name))
                    .map_or(name, |path| normalize_stem(path));
                self.tools[target].get(stem).map(|file| (target, Arc::clone(file))).ok_or_else(
                    || {
                        ResolveError::NotFound(format!(
                            "tool '{name}' not found in package '{prefix}'"
                        ))
                    },
                )
            }
        }
    }

    /// The tool file a runbook/v0 `tools` map names by path (relative to the runbook file at
    /// `runbook`), if it is a tool file of some package of the project.
    pub fn tool_file_at(&self, runbook: &std::path::Path, raw: &str) -> Option<Arc<ToolFile>> {
        let base = runbook.parent().unwrap_or(std::path::Path::new(""));
        let wanted = crate::vfs::normalize(&base.join(raw));
        self.tools.iter().flat_map(BTreeMap::values).find(|file| file.path == wanted).cloned()
    }

    /// The package and name of the runbook a runbook/v0 reference names by path (relative to
    /// the runbook file at `runbook`, with or without its suffix).
    pub fn runbook_file_at(&self, runbook: &std::path::Path, raw: &str) -> Option<(usize, &str)> {
        let base = runbook.parent().unwrap_or(std::path::Path::new(""));
        let wanted: Vec<std::path::PathBuf> = ["", ".runbook.yaml", ".yaml"]
            .iter()
            .map(|suffix| crate::vfs::normalize(&base.join(format!("{raw}{suffix}"))))
            .collect();
        self.runbooks.iter().enumerate().find_map(|(p, runbooks)| {
            runbooks
                .iter()
                .find(|(_, file)| wanted.iter().any(|w| w == file.path()))
                .map(|(name, _)| (p, name.as_str()))
        })
    }

    /// Resolve a runbook reference (`invoke`, `next_runbook`) made from package `from`. On
    /// success, returns the ambiguity warning when seed 004's rule applied.
    pub fn runbook(&self, from: usize, reference: &str) -> Result<Option<String>, ResolveError> {
        let package = &self.packages[from];
        let local = |ambiguity: Option<String>| {
            self.runbooks[from].get(reference).map(|_| ambiguity).ok_or_else(|| {
                ResolveError::NotFound(format!(
                    "runbook '{reference}' not found in package '{}'",
                    package.name
                ))
            })
        };
        let Some((prefix, rest)) = reference.split_once('/') else { return local(None) };
        let Some(&target) = package.requires.get(prefix) else { return local(None) };
        if self.has_local_group(from, prefix) {
            let warning = format!(
                "`{reference}`: the local runbook group `{prefix}/` and the required package `{prefix}` share a name; the local runbook is used"
            );
            return local(Some(warning));
        }
        self.runbooks[target].get(rest).map(|_| None).ok_or_else(|| {
            ResolveError::NotFound(format!("runbook '{rest}' not found in package '{prefix}'"))
        })
    }

    fn has_local_group(&self, package: usize, group: &str) -> bool {
        let prefix = format!("{group}/");
        self.runbooks[package].keys().any(|name| name.starts_with(&prefix))
            || self.packages[package]
                .runbooks_dir
                .as_ref()
                .is_some_and(|dir| self.packages[package].vfs.is_dir(&dir.join(group)))
    }
}
