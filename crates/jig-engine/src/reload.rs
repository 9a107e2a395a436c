//! Live reload: the project's files are watched; a valid reload is swapped in atomically (calls
//! in flight finish on the registry they started with), an invalid one is refused — the last
//! valid registry keeps serving — and both are announced on the event bus.

use std::sync::Arc;

use jig_load::Loader;
use jig_load::watch::{WatchHandle, WatchUpdate};

use crate::engine::Engine;
use crate::error::EngineError;
use crate::events::{Event, RegistryEvent};

impl Engine {
    /// Watch the project until the handle is dropped. An engine opened with
    /// [`EngineOptions::watch`](crate::EngineOptions::watch) began watching right after its
    /// load, and what changed since is delivered now. Otherwise the project is loaded again first
    /// (it may have changed since [`Engine::open`]); it must still be valid.
    pub fn watch(self: &Arc<Self>) -> Result<WatchHandle, EngineError> {
        let started = self.watching.lock().ok().and_then(|mut watching| watching.take());
        let watching = match started {
            Some(watching) => watching,
            None => {
                let (project, options) = &self.source;
                let mut loader = Loader::with_options(project, options.clone());
                let snapshot = loader.load()?;
                let watching = crate::engine::start_watching(loader, &snapshot)?;
                self.swap(snapshot)?;
                watching
            }
        };
        let engine = Arc::downgrade(self);
        Ok(watching.deliver(move |update| {
            if let Some(engine) = engine.upgrade() {
                engine.take_update(update);
            }
        }))
    }

    fn take_update(&self, update: WatchUpdate) {
        let changed: Vec<String> = update.changed.iter().map(|p| p.display().to_string()).collect();
        let event = match update.result {
            Ok(snapshot) => {
                let registry_hash = snapshot.registry_hash().to_owned();
                let tools = snapshot.len();
                match self.swap(snapshot) {
                    Ok(()) => RegistryEvent::RegistryReloaded { registry_hash, tools, changed },
                    Err(error) => {
                        tracing::warn!(%error, "a reloaded project's policy cannot be compiled; keeping the last one");
                        RegistryEvent::RegistryRejected { changed, diagnostics: Vec::new() }
                    }
                }
            }
            Err(failure) => {
                let first = failure.errors().next().map_or_else(String::new, |d| {
                    format!(
                        "{}:{}: {}",
                        d.file.as_deref().unwrap_or("?"),
                        d.line.unwrap_or(0),
                        d.message
                    )
                });
                tracing::warn!(
                    errors = failure.errors().count(),
                    changed = ?changed,
                    first = %first,
                    "the project has errors; the last valid registry keeps serving"
                );
                RegistryEvent::RegistryRejected { changed, diagnostics: failure.diagnostics }
            }
        };
        if let Ok(mut problems) = self.problems.lock() {
            *problems = match &event {
                RegistryEvent::RegistryRejected { diagnostics, .. } => diagnostics.clone(),
                RegistryEvent::RegistryReloaded { .. } => Vec::new(),
            };
        }
        self.events.publish(Event::Registry(event));
    }

    /// The diagnostics of the project's files as last seen by the watcher (empty while they
    /// load; while they do not, the last valid registry keeps serving and these say why), and
    /// what stands between the project and its upstream MCP servers' tools: one not asked yet,
    /// one that could not be asked (with what it said), tools left out.
    pub fn problems(&self) -> Vec<jig_model::Diagnostic> {
        let mut problems = self.problems.lock().map(|p| p.clone()).unwrap_or_default();
        let snapshot = self.snapshot();
        problems.extend(
            snapshot
                .warnings()
                .iter()
                .filter(|d| d.pointer.as_deref().is_some_and(|p| p.starts_with("/mcp_servers")))
                .cloned(),
        );
        problems
    }
}
