//! Reads a Jig project strictly and fast.
//!
//! [`load`] (or a [`Loader`], which keeps what it parsed) finds the manifest by walking up from
//! a directory, follows `require` to every package, reads each `*.tool.yaml` (toolpack or gert
//! `tool/v0`), resolves `$ref` schemas inside each package, reads runbooks of all three formats
//! with their scenarios, and resolves references by seed 004's algorithm. The result is either
//! an immutable [`Snapshot`] of a fully valid project or a [`LoadFailure`] listing every
//! [`Diagnostic`](jig_model::Diagnostic) at once — never a partial registry.
//!
//! Hostile input is refused cheaply: size caps before reading, depth and alias budgets while
//! parsing, `$ref` confined to the package root. [`watch`] reloads on file changes.

mod auth_check;
mod buffer;
pub mod consent;
pub mod layers;
mod loader;
mod located;
mod package;
mod policy_check;
mod refs;
pub mod render;
mod resolve;
mod runbooks;
mod shape;
mod snapshot;
mod toolfile;
pub mod trust;
pub mod upstream;
mod vfs;
pub mod watch;
pub mod yaml;

pub use buffer::check_tool_source;
pub use loader::{LoadOptions, Loader, load, scenarios_beside};
pub use located::did_you_mean;
pub use package::{PackageRole, STD_PACKAGE, find_manifest, project_root};
pub use snapshot::{
    LoadFailure, PackageSummary, RunbookEntry, ScenarioEntry, Snapshot, UpstreamServer,
};
pub use vfs::STD_ROOT;
