//! `resources/subscribe`: a client hears `notifications/resources/updated` for what it
//! subscribed to. A run (`jig://runs/{request_id}`) is updated when its state moves (it ran,
//! finished, or a person decided the approval it waits for — here or in another process on the
//! store); `jig://runs/recent` when any run moves; a
//! project resource when the project reloads (the tool that reads it may read otherwise now).
//! The notification says only that the URI changed: the client reads it again, through the
//! same checks as any read.

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex, PoisonError};

use jig_engine::{Engine, Event, RegistryEvent};
use rmcp::model::ResourceUpdatedNotificationParam;
use rmcp::service::{Peer, RoleServer};
use tokio::sync::broadcast::error::RecvError;

use crate::resources::{self, RECENT};

/// One session's subscriptions.
#[derive(Debug, Clone, Default)]
pub struct Subscriptions(Arc<Mutex<State>>);

#[derive(Debug, Default)]
struct State {
    uris: BTreeSet<String>,
    /// The watcher of this session is running.
    watching: bool,
}

impl Subscriptions {
    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Subscribe to `uri`; the first subscription starts watching `engine` for `peer`.
    pub fn add(&self, engine: &Arc<Engine>, peer: Peer<RoleServer>, uri: String) {
        let start = {
            let mut state = self.state();
            state.uris.insert(uri);
            !std::mem::replace(&mut state.watching, true)
        };
        if start {
            self.watch(engine, peer);
        }
    }

    /// Stop hearing about `uri` (not subscribed: nothing to do, as MCP allows).
    pub fn remove(&self, uri: &str) {
        self.state().uris.remove(uri);
    }

    /// What of this session's subscriptions `event` updates (`None`: events were missed, so
    /// anything may have changed).
    async fn updated(&self, engine: &Engine, event: Option<&Event>) -> Vec<String> {
        // A decision names its approval; the run it decides is the approval's request.
        let decided = match event {
            Some(Event::Approval(decision)) if self.watches_runs() => {
                // Only its request id is read: nobody's request is shown in clear.
                let reader = jig_engine::Reader { person: String::new(), may_approve: false };
                engine
                    .history()
                    .approval(decision.approval_id.as_str(), &reader)
                    .await
                    .ok()
                    .flatten()
            }
            _ => None,
        };
        let state = self.state();
        let Some(event) = event else { return state.uris.iter().cloned().collect() };
        let runs = |request_id: Option<&str>| -> Vec<String> {
            let run = request_id.map(|id| format!("jig://runs/{id}"));
            [Some(RECENT.to_owned()), run]
                .into_iter()
                .flatten()
                .filter(|uri| state.uris.contains(uri))
                .collect()
        };
        match event {
            Event::Message(message) if message.event == "RunStateChanged" => {
                runs(Some(&message.request_id))
            }
            Event::Approval(_) => runs(decided.as_ref().and_then(|a| a.request_id.as_deref())),
            Event::Registry(RegistryEvent::RegistryReloaded { .. }) => {
                state.uris.iter().filter(|uri| !resources::is_audit(uri)).cloned().collect()
            }
            _ => Vec::new(),
        }
    }

    /// Whether any subscription is to the audit's runs.
    fn watches_runs(&self) -> bool {
        self.state().uris.iter().any(|uri| resources::is_audit(uri))
    }

    fn watch(&self, engine: &Arc<Engine>, peer: Peer<RoleServer>) {
        let mut events = engine.subscribe();
        let engine = Arc::downgrade(engine);
        let this = self.clone();
        tokio::spawn(async move {
            loop {
                let event = match events.recv().await {
                    Ok(event) => Some(event),
                    Err(RecvError::Lagged(_)) => None,
                    Err(RecvError::Closed) => return,
                };
                let Some(engine) = engine.upgrade() else { return };
                for uri in this.updated(&engine, event.as_ref()).await {
                    let param = ResourceUpdatedNotificationParam::new(uri);
                    if peer.notify_resource_updated(param).await.is_err() {
                        return;
                    }
                }
                if peer.is_transport_closed() {
                    return;
                }
            }
        });
    }
}
