//! The application layer: what a person (or an agent acting for one) can do with Jig, each
//! operation written once, for every surface to call — the CLI, the HTTP API (and through it
//! the desktop app), and MCP. A surface turns its transport into an [`Actor`] and a request,
//! calls one method, and turns the typed answer back; none assembles a lifecycle itself.
//!
//! - Calls ([`App::call`], [`App::start`], [`App::cancel`]): one place builds what the engine
//!   needs to know about a call (its [`jig_engine::CallContext`]).
//! - Approvals ([`App::approve`], [`App::deny`], [`App::decide_many`], [`App::approvals`]): a
//!   decision is recorded, the waiting call runs where it waits (this process, another
//!   instance, or the caller's next identical call), a runbook step waiting for it walks on,
//!   and nobody but the asker is handed a token.
//!
//! - Runbook runs ([`App::start_run`], [`App::act_on_run`], [`App::pause_run`] …): in an
//!   actor's name, with the roles checked here; the runbook service's types come through
//!   [`runbooks`], so no surface depends on the service itself.
//!
//! - A long-running process's duties ([`App::open_resident`]): started in one place for
//!   `jig serve`, `jig mcp` and the desktop app.
//!
//! Below it, the engine records (it alone writes the audit) and the runbook service walks runs.

mod actor;
mod approvals;
mod calls;
mod decide_many;
mod error;
mod resident;
pub mod runbooks;

use std::sync::Arc;

use jig_engine::Engine;
use jig_runbook::Runbooks;

pub use actor::Actor;
pub use approvals::{Approved, Denied, Walked};
pub use calls::{CallSpec, Called};
pub use decide_many::{Choice, MOST_AT_ONCE, Outcome};
pub use error::AppError;
pub use resident::{Level, Resident, Said};

/// The application over one engine.
#[derive(Clone)]
pub struct App {
    engine: Arc<Engine>,
    runbooks: Runbooks,
}

impl std::fmt::Debug for App {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("App")
    }
}

impl App {
    /// The application over `engine`.
    pub fn new(engine: Arc<Engine>) -> Self {
        Self { runbooks: Runbooks::new(Arc::clone(&engine)), engine }
    }

    /// The engine (reads: the registry, previews, the audit's history).
    pub fn engine(&self) -> &Arc<Engine> {
        &self.engine
    }

    /// The runbook service.
    pub fn runbooks(&self) -> &Runbooks {
        &self.runbooks
    }
}
