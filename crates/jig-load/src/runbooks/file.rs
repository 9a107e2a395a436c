//! Reading one runbook file (any of the three apiVersions) and its scenarios.

use std::path::{Path, PathBuf};

use jig_model::Diagnostic;
use jig_model::diagnostic::codes;
use jig_model::file_schemas::FileFormat;
use jig_model::runbook::kernel::KernelRunbook;
use jig_model::runbook::legacy::LegacyRunbook;
use jig_model::runbook::{Runbook, RunbookApi};
use jig_model::scenario::{Scenario, ScenarioTest};
use serde_json::Value;

use crate::located::{Located, Suggest};
use crate::refs::read_document;
use crate::shape;
use crate::vfs::Vfs;

/// A runbook file after parsing (not yet checked against other files).
#[derive(Debug, Clone)]
pub(crate) struct RunbookFile {
    /// Its path.
    pub path: PathBuf,
    /// The parsed runbook, when the file is structurally valid.
    pub runbook: Option<Runbook>,
    /// The file as read.
    pub located: Option<Located>,
    /// Problems found while parsing.
    pub diagnostics: Vec<Diagnostic>,
    /// Scenarios found beside it or at the package root.
    pub scenarios: Vec<ScenarioFiles>,
}

impl crate::resolve::AtPath for RunbookFile {
    fn path(&self) -> &std::path::Path {
        &self.path
    }
}

/// One scenario directory: `scenario.yaml` and/or `test.yaml`.
#[derive(Debug, Clone)]
pub(crate) struct ScenarioFiles {
    /// The directory name (the scenario's name).
    pub name: String,
    /// The directory.
    pub dir: PathBuf,
    /// `scenario.yaml`.
    pub scenario: Option<(Located, Scenario)>,
    /// `test.yaml`.
    pub test: Option<(Located, ScenarioTest)>,
}

/// Parse a runbook file of the package rooted at `root`.
pub(crate) fn load(vfs: &dyn Vfs, root: &Path, path: &Path, display: &str) -> RunbookFile {
    let mut file = RunbookFile {
        path: path.to_path_buf(),
        runbook: None,
        located: None,
        diagnostics: Vec::new(),
        scenarios: Vec::new(),
    };
    let located = match read_document(vfs, root, path, display) {
        Ok(located) => located,
        Err(diagnostic) => {
            file.diagnostics.push(diagnostic);
            return file;
        }
    };
    let api = located.doc.value.get("apiVersion").and_then(Value::as_str).map(str::to_owned);
    let converted = match api.as_deref() {
        Some("runbook/v0" | "runbook/v1") => {
            shape::check::<LegacyRunbook>(&located, FileFormat::LegacyRunbook)
                .map(Runbook::from_legacy)
        }
        Some("kernel/v0") => shape::check::<KernelRunbook>(&located, FileFormat::KernelRunbook)
            .map(Runbook::from_kernel),
        other => {
            let known: Vec<&str> = RunbookApi::ALL.iter().map(|a| a.as_str()).collect();
            let mut diagnostic = Diagnostic::error(
                codes::API_VERSION,
                match other {
                    Some(api) => format!("unknown runbook apiVersion `{api}`"),
                    None => "a runbook needs `apiVersion`".to_owned(),
                },
            );
            diagnostic = diagnostic.suggest_or(
                other.unwrap_or_default(),
                known.iter().copied(),
                format!("one of: {}", known.join(", ")),
            );
            Err(vec![located.at(diagnostic, "/apiVersion")])
        }
    };
    match converted {
        Ok((runbook, problems)) => {
            for problem in problems {
                file.diagnostics.push(
                    located
                        .at(Diagnostic::error(codes::RUNBOOK, problem.message), &problem.pointer),
                );
            }
            file.runbook = Some(runbook);
        }
        Err(mut found) => file.diagnostics.append(&mut found),
    }
    file.located = Some(located);
    file
}

/// Read the scenarios under `dir` (one sub-directory per scenario).
pub(crate) fn load_scenarios(
    vfs: &dyn Vfs,
    root: &Path,
    dir: &Path,
    display: &dyn Fn(&Path) -> String,
    out: &mut Vec<Diagnostic>,
) -> Vec<ScenarioFiles> {
    let mut dirs: Vec<PathBuf> = vfs
        .walk(dir, ".yaml")
        .into_iter()
        .filter_map(|file| {
            let name = file.file_name()?.to_str()?;
            (name == "scenario.yaml" || name == "test.yaml")
                .then(|| file.parent().map(Path::to_path_buf))
                .flatten()
        })
        .filter(|parent| parent.parent() == Some(dir))
        .collect();
    dirs.sort();
    dirs.dedup();
    dirs.into_iter()
        .map(|scenario_dir| {
            let name = scenario_dir
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            let scenario = read_part::<Scenario>(
                vfs,
                root,
                &scenario_dir.join("scenario.yaml"),
                FileFormat::Scenario,
                display,
                out,
            );
            let test = read_part::<ScenarioTest>(
                vfs,
                root,
                &scenario_dir.join("test.yaml"),
                FileFormat::ScenarioTest,
                display,
                out,
            );
            ScenarioFiles { name, dir: scenario_dir, scenario, test }
        })
        .collect()
}

fn read_part<T: serde::de::DeserializeOwned>(
    vfs: &dyn Vfs,
    root: &Path,
    path: &Path,
    format: FileFormat,
    display: &dyn Fn(&Path) -> String,
    out: &mut Vec<Diagnostic>,
) -> Option<(Located, T)> {
    if !vfs.is_file(path) {
        return None;
    }
    let located = match read_document(vfs, root, path, &display(path)) {
        Ok(located) => located,
        Err(diagnostic) => {
            out.push(diagnostic);
            return None;
        }
    };
    match shape::check::<T>(&located, format) {
        Ok(value) => Some((located, value)),
        Err(mut found) => {
            out.append(&mut found);
            None
        }
    }
}
