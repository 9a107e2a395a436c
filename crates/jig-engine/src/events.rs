//! The event bus: progress, output and state changes of running calls, and heartbeats, to any
//! number of subscribers (the UI, the MCP server, a CLI watching a call).

use jig_model::envelope::{EventMessage, Heartbeat};
use serde::Serialize;
use tokio::sync::broadcast;

/// Something a subscriber may want to see.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Event {
    /// About a request: `TaskProgress`, `OutputChunk`, `RunStateChanged`.
    Message(EventMessage),
    /// A session with calls in flight is alive.
    Heartbeat(Heartbeat),
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
