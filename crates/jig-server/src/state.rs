//! What every handler gets: the engine and who may reach it.

use std::sync::Arc;

use jig_engine::Engine;

use crate::auth::{Access, Person, Role};

/// The server's state.
#[derive(Debug, Clone)]
pub struct AppState {
    /// The one engine (reads).
    pub engine: Arc<Engine>,
    /// The application layer over it (everything a person does).
    pub app: jig_app::App,
    /// The sign-in provider's metadata, as last discovered.
    pub sso: Arc<crate::provider::Discovery>,
    /// Tokens, people, and allowed hosts.
    pub access: Access,
    /// The project's name, for the UI's title.
    pub project: String,
}

impl AppState {
    /// The state for `engine`.
    pub fn new(engine: Arc<Engine>, access: Access, project: String) -> Self {
        Self {
            app: jig_app::App::new(Arc::clone(&engine)),
            engine,
            access,
            project,
            sso: Arc::default(),
        }
    }
}

/// Who acts in the application, as the API's person: their role says what they may do.
pub fn actor(person: &Person) -> jig_app::Actor {
    jig_app::Actor {
        principal: person.name.clone(),
        asserted_by: None,
        may_run: person.role >= Role::Runner,
        may_approve: person.role >= Role::Approver,
        admin: person.role >= Role::Admin,
    }
}
