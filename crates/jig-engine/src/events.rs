//! The event bus: progress, output and state changes of running calls, and heartbeats, to any
//! number of subscribers (the UI, the MCP server, a CLI watching a call).

use jig_model::Diagnostic;
use jig_model::envelope::{EventMessage, Heartbeat};
use serde::Serialize;
use std::sync::Arc;

use tokio::sync::broadcast;
use tokio::sync::broadcast::error::{RecvError, TryRecvError};

use crate::identity::canonical_principal;

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
    /// A call asks for a person's approval.
    ApprovalAsked(ApprovalAsk),
    /// A pending call was approved or denied.
    Approval(ApprovalEvent),
    /// A runbook run moved: a step ran, a person acted, it finished.
    Runbook(RunbookEvent),
}

/// A runbook run moved; read it again for where it stands. Everyone may see that a run moved
/// (the run itself is read through the API, which checks who asks).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "event", rename = "RunbookRunChanged")]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct RunbookEvent {
    /// The run.
    pub run_id: String,
    /// Its runbook.
    pub runbook: String,
    /// `paused` (waiting for people), `completed`, `failed`, `error` or `denied`.
    pub status: String,
}

/// A call asks for a person's approval. Everyone may see that one was asked (what it asks is
/// read through the API, which shows the request in clear only to who may decide it).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "event", rename = "ApprovalRequested")]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ApprovalAsk {
    /// The approval.
    pub approval_id: String,
    /// The tool.
    pub tool: String,
    /// Who asked.
    pub asked_by: String,
    /// The rule that asks.
    pub rule: String,
}

/// An approval was decided.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "event", rename = "ApprovalDecided")]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ApprovalEvent {
    /// The approval.
    pub approval_id: String,
    /// How it came out (`seconded`: one approval of several, the call still waits;
    /// `refused`: someone who may not decide it tried to).
    pub verdict: jig_model::Verdict,
    /// Who decided.
    pub by: String,
    /// Why, when a denial gave a reason.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
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

/// Who may see an event on a shared stream. A call's progress, output and response belong to
/// the person who made it; registry changes and approval decisions are everyone's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Audience {
    /// Every subscriber.
    Everyone,
    /// The named principal (and those who may see every call).
    Principal(Arc<str>),
}

/// An event with its audience, as the bus carries it.
#[derive(Debug, Clone)]
struct Published {
    audience: Audience,
    event: Event,
}

/// Fan-out of events; a slow subscriber loses the oldest events, never blocks a call.
#[derive(Debug, Clone)]
pub struct EventBus {
    sender: broadcast::Sender<Published>,
}

impl EventBus {
    /// A bus keeping up to `capacity` events per subscriber.
    pub fn new(capacity: usize) -> Self {
        Self { sender: broadcast::channel(capacity).0 }
    }

    /// Publish to every subscriber (nobody listening is fine).
    pub fn publish(&self, event: Event) {
        let _ = self.sender.send(Published { audience: Audience::Everyone, event });
    }

    /// Publish what only `principal` (and those who see every call) may see.
    pub fn publish_to(&self, principal: &str, event: Event) {
        let audience = Audience::Principal(Arc::from(canonical_principal(principal)));
        let _ = self.sender.send(Published { audience, event });
    }

    /// A new subscriber, seeing events from now on.
    pub fn subscribe(&self) -> Subscription {
        Subscription { receiver: self.sender.subscribe() }
    }
}

/// Whose events a subscriber on a shared stream receives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Viewer {
    /// Every event: an in-process surface acting for the one person at the machine, or an
    /// administrator.
    All,
    /// Events for everyone, and those of this principal's own calls.
    Principal(String),
}

/// One subscriber's events.
#[derive(Debug)]
pub struct Subscription {
    receiver: broadcast::Receiver<Published>,
}

impl Subscription {
    /// The next event, whoever it is for.
    pub async fn recv(&mut self) -> Result<Event, RecvError> {
        self.receiver.recv().await.map(|published| published.event)
    }

    /// The next event, if one is waiting.
    pub fn try_recv(&mut self) -> Result<Event, TryRecvError> {
        self.receiver.try_recv().map(|published| published.event)
    }

    /// The next event `viewer` may see; others are skipped.
    pub async fn recv_as(&mut self, viewer: &Viewer) -> Result<Event, RecvError> {
        let mine = match viewer {
            Viewer::All => None,
            Viewer::Principal(name) => Some(canonical_principal(name)),
        };
        loop {
            let published = self.receiver.recv().await?;
            let visible = match (&published.audience, &mine) {
                (Audience::Everyone, _) | (_, None) => true,
                (Audience::Principal(owner), Some(me)) => **owner == **me,
            };
            if visible {
                return Ok(published.event);
            }
        }
    }
}
