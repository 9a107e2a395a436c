//! The command line, as clap types. Command bodies live in `commands/`.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

/// Jig: browse, validate and run tools safely.
///
/// Jig reads a project (a directory with a `jig.yaml` or `gert.yaml` manifest, or any directory
/// of `tools/*.tool.yaml`), checks every tool, runbook and scenario strictly, and lists what it
/// offers. Every project also has the built-in catalog (`fs_list`, `file_read`, `git_status`, …).
#[derive(Debug, Parser)]
#[command(name = "jig", version, about, long_about = None, propagate_version = true)]
#[command(
    after_help = "Exit codes: 0 success, 1 not found or failed, 2 usage error, 3 invalid project."
)]
pub struct Cli {
    #[command(flatten)]
    pub global: GlobalArgs,
    #[command(subcommand)]
    pub command: Command,
}

/// Options every command takes.
#[derive(Debug, Args)]
pub struct GlobalArgs {
    /// Project directory; the manifest is found by walking up from it [default: current directory]
    #[arg(long, global = true, value_name = "DIR")]
    pub project: Option<PathBuf>,
    /// Audit store URL (sqlite path or postgres://…); used by commands that record calls
    #[arg(long, global = true, value_name = "URL")]
    pub db: Option<String>,
    /// When to colour diagnostics
    #[arg(long, global = true, value_enum, default_value_t = ColorChoice::Auto)]
    pub color: ColorChoice,
}

/// `--color`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ColorChoice {
    /// Colour when stderr is a terminal and NO_COLOR is unset.
    Auto,
    /// Always colour.
    Always,
    /// Never colour.
    Never,
}

/// The commands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Load and check the whole project; diagnostics go to stderr
    ///
    /// Exit 0 when the project is valid (warnings allowed), 3 when it has errors.
    Validate(ValidateArgs),
    /// List the project's tools, sorted by id
    List(ListArgs),
    /// Show one tool's definition with its resolved schemas
    Show(ShowArgs),
}

/// `jig validate`.
#[derive(Debug, Args)]
pub struct ValidateArgs {
    /// Extra runbook files to check with the project (any .yaml file)
    #[arg(value_name = "RUNBOOK")]
    pub files: Vec<PathBuf>,
    /// Print a JSON report on stdout instead of text
    #[arg(long)]
    pub json: bool,
    /// Keep watching the project and report after every change
    #[arg(long)]
    pub watch: bool,
}

/// `jig list`.
#[derive(Debug, Args)]
pub struct ListArgs {
    /// Print JSON instead of a table
    #[arg(long)]
    pub json: bool,
    /// Only tools with this tag
    #[arg(long, value_name = "T")]
    pub tag: Option<String>,
}

/// `jig show`.
#[derive(Debug, Args)]
pub struct ShowArgs {
    /// The tool id, e.g. `file_read` or `acme.deploy`
    pub tool: String,
    /// Print the full definition as JSON
    #[arg(long)]
    pub json: bool,
}
