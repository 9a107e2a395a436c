//! Jig's executors: how a tool actually runs.
//!
//! Every way of running a tool implements [`Executor`]; the engine knows only the trait and asks
//! [`Executors`] for the one matching a tool's execution kind. An executor receives an
//! [`Invocation`] — the tool, its validated arguments, the sandboxed workspace, a time limit, a
//! [`Cancel`] token and an [`Events`] sink for progress and output — and returns data or a
//! [`ToolError`] with a stable code. Long jobs can be submitted and collected later
//! ([`Execution::Submitted`]).
//!
//! Here: the 27 built-ins of seed 002 §5, the `cli` ([`cli`]), `python`/`node`/`php`
//! ([`script`]) and `http` ([`http`]) kinds, gert's tool/v0 transports ([`gert`]), run
//! workspaces ([`rundir`]), and the sandbox every process starts in ([`confine`]).

mod builtin;
pub mod cli;
pub mod confine;
mod executor;
pub mod gert;
pub mod http;
pub mod http_client;
pub mod process;
mod registry;
pub mod rundir;
pub mod script;
mod template;

pub use executor::{Cancel, Events, Execution, Executor, Invocation, Output, ToolError};
pub use registry::Executors;
