//! What every handler gets: the engine and who may reach it.

use std::sync::Arc;

use jig_engine::Engine;

use crate::auth::Access;

/// The server's state.
#[derive(Debug, Clone)]
pub struct AppState {
    /// The one engine.
    pub engine: Arc<Engine>,
    /// Tokens, people, and allowed hosts.
    pub access: Access,
    /// The project's name, for the UI's title.
    pub project: String,
}
