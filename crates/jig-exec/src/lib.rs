//! Jig's executor contract: what every way of running a tool implements and is given.
//!
//! Every way of running a tool implements [`Executor`]; the engine knows only the trait and asks
//! [`Executors`] for the one matching a tool's execution kind. An executor receives an
//! [`Invocation`] — the tool, its validated arguments, the sandboxed workspace, a time limit, a
//! [`Cancel`] token and an [`Events`] sink for progress and output — and returns data or a
//! [`ToolError`] with a stable code. Long jobs can be submitted and collected later
//! ([`Execution::Submitted`], [`Executor::poll`]).
//!
//! Here too is what executors share: the process runner ([`process`]), the sandbox every process
//! starts in ([`confine`]), the one path that starts a process outside it ([`host`]), run workspaces ([`rundir`]) and argv templating ([`template`]). The
//! built-ins and the standard kinds live in `jig-tools`; a new executor (docker, slurm) needs
//! only this crate.

mod code_loading;
pub mod confine;
mod executor;
mod grants;
pub mod host;
pub mod process;
mod program;
mod registry;
pub mod rundir;
pub mod template;

pub use executor::{
    Cancel, Events, Execution, Executor, Invocation, Job, JobStatus, Output, ToolError,
};
pub use registry::Executors;
