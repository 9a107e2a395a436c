//! Settings merged from flags and environment, and the shared ways of printing.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::sync::Arc;

use jig_load::{LoadFailure, LoadOptions, Loader, Snapshot};

use crate::cli::{ColorChoice, GlobalArgs};

/// What every command needs to know.
#[derive(Debug, Clone)]
pub struct Settings {
    /// Where to start looking for the project.
    pub project: PathBuf,
    /// Colour diagnostics.
    pub color: bool,
}

impl Settings {
    /// Merge flags and environment.
    pub fn from_args(args: &GlobalArgs) -> Self {
        let project = args.project.clone().unwrap_or_else(|| PathBuf::from("."));
        let color = match args.color {
            ColorChoice::Always => true,
            ColorChoice::Never => false,
            ColorChoice::Auto => {
                std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none()
            }
        };
        Self { project, color }
    }

    /// A loader for the project, with extra runbook files.
    pub fn loader(&self, extra_runbooks: &[PathBuf]) -> Loader {
        let options =
            LoadOptions { extra_runbooks: extra_runbooks.to_vec(), ..LoadOptions::default() };
        Loader::with_options(&self.project, options)
    }

    /// Load the project; on failure print the diagnostics to stderr.
    pub fn load_or_report(&self) -> Result<Arc<Snapshot>, LoadFailure> {
        self.loader(&[]).load().inspect_err(|failure| {
            eprint!(
                "{}",
                jig_load::render::render(&failure.diagnostics, &failure.root, self.color)
            );
            eprintln!("{}", summary_of_failure(failure));
        })
    }
}

/// "2 errors, 1 warning".
pub fn summary_of_failure(failure: &LoadFailure) -> String {
    let errors = failure.errors().count();
    let warnings = failure.diagnostics.len() - errors;
    format!("invalid: {}, {}", plural(errors, "error"), plural(warnings, "warning"))
}

/// `n thing(s)`.
pub fn plural(n: usize, noun: &str) -> String {
    if n == 1 { format!("1 {noun}") } else { format!("{n} {noun}s") }
}
