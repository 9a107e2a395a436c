//! The event bus: progress, output and state changes of running calls, and heartbeats, to any
//! number of subscribers (the UI, the MCP server, a CLI watching a call).

use jig_model::Diagnostic;
use jig_model::envelope::{EventMessage, Heartbeat};
use serde::Serialize;
use tokio::sync::broadcast;

/// Something a subscriber may want to see.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub enum Event {
    /// About a request: `TaskProgress`, `OutputChunk`, `RunStateChanged`.
    Message(EventMessage),
    /// A session with calls in flight is alive.
    Heartbeat(Heartbeat),
    /// The registry changed, or a change was refused.
    Registry(RegistryEvent),
    /// A call started with [`crate::Engine::start`] finished: its response.
    Response(Box<jig_model::envelope::ToolResponse>),
    /// A pending call was approved or denied.
    Approval(ApprovalEvent),
}

/// An approval was decided.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "event", rename = "ApprovalDecided")]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ApprovalEvent {
    /// The approval.
    pub approval_id: String,
    /// `approved` or `denied`.
    pub verdict: String,
    /// Who decided.
    pub by: String,
    /// The request that now runs the approved call, when the engine kept it to run.
    pub resumed_as: Option<String>,
}

/// What live reload did with a change of the project's files.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "event")]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub enum RegistryEvent {
    /// A valid project was swapped in; calls from now on use it.
    RegistryReloaded {
        /// The new registry hash.
        registry_hash: String,
        /// How many tools it has.
        tools: usize,
        /// The files that changed.
        changed: Vec<String>,
    },
    /// The project is invalid now; the last valid registry keeps serving.
    RegistryRejected {
        /// The files that changed.
        changed: Vec<String>,
        /// Every diagnostic of the failed load.
        diagnostics: Vec<Diagnostic>,
    },
}

/// Fan-out of events; a slow subscriber loses the oldest events, never blocks a call.
#[derive(Debug, Clone)]
pub struct EventBus {
    sender: broadcast::Sender<Event>,
}

impl EventBus {
    /// A bus keeping up to `capacity` events per subscriber.
    pub fn new(capacity: usize) -> Self {
        Self { sender: broadcast::channel(capacity).0 }
    }

    /// Publish (nobody listening is fine).
    pub fn publish(&self, event: Event) {
        let _ = self.sender.send(event);
    }

    /// A new subscriber, seeing events from now on.
    pub fn subscribe(&self) -> broadcast::Receiver<Event> {
        self.sender.subscribe()
    }
}
