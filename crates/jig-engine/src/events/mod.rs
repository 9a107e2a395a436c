//! The event bus: progress, output and state changes of running calls, and heartbeats, to any
//! number of subscribers (the UI, the MCP server, a CLI watching a call).

#[cfg(feature = "openapi")]
mod schema;

use jig_model::envelope::{EventMessage, Heartbeat};
use jig_model::{ApprovalId, Diagnostic};
use serde::{Serialize, Serializer};
use std::sync::Arc;

use tokio::sync::broadcast;
use tokio::sync::broadcast::error::{RecvError, TryRecvError};

use crate::identity::canonical_principal;

/// Something a subscriber may want to see. On the wire every event names itself in `event`:
/// Jig's own events and seed 002's `EventMessage` (whose `event` is `TaskProgress`,
/// `OutputChunk` or `RunStateChanged`) already carry it, and a `Heartbeat` or `ToolResponse`
/// envelope gets it beside its `type` (`event: "Heartbeat"`, `event: "ToolResponse"`), so a
/// reader switches on one field. (Its OpenAPI union and that discriminator: `schema.rs`.)
#[derive(Debug, Clone, PartialEq)]
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

impl Serialize for Event {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Message(message) => message.serialize(serializer),
            Self::Heartbeat(envelope) => {
                Named { event: "Heartbeat", envelope }.serialize(serializer)
            }
            Self::Registry(registry) => registry.serialize(serializer),
            Self::Response(response) => {
                Named { event: "ToolResponse", envelope: response.as_ref() }.serialize(serializer)
            }
            Self::ApprovalAsked(asked) => asked.serialize(serializer),
            Self::Approval(decided) => decided.serialize(serializer),
            Self::Runbook(runbook) => runbook.serialize(serializer),
        }
    }
}

/// An envelope that does not name itself in `event`, with that name added.
#[derive(Serialize)]
struct Named<'a, T> {
    event: &'static str,
    #[serde(flatten)]
    envelope: &'a T,
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
    pub approval_id: ApprovalId,
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
    pub approval_id: ApprovalId,
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

#[cfg(test)]
mod tests {
    use jig_model::ErrorCode;
    use jig_model::envelope::ToolResponse;

    use super::*;

    /// Every event on the wire names itself in `event`; the envelopes keep their `type`.
    #[test]
    fn every_event_names_itself_in_event() {
        let message = EventMessage {
            kind: Default::default(),
            event: "TaskProgress".into(),
            request_id: "r1".into(),
            progress: None,
            data: None,
        };
        let heartbeat =
            Heartbeat { kind: Default::default(), session_id: "s".into(), timestamp: 1 };
        let response = ToolResponse::refused("file_read", "r1", ErrorCode::Policy, "no".into());
        let approval = jig_model::ApprovalId::new("a1");
        let events = [
            (Event::Message(message), "TaskProgress", Some("EventMessage")),
            (Event::Heartbeat(heartbeat), "Heartbeat", Some("Heartbeat")),
            (Event::Response(Box::new(response)), "ToolResponse", Some("ToolResponse")),
            (
                Event::Registry(RegistryEvent::RegistryRejected {
                    changed: vec![],
                    diagnostics: vec![],
                }),
                "RegistryRejected",
                None,
            ),
            (
                Event::ApprovalAsked(ApprovalAsk {
                    approval_id: approval.clone(),
                    tool: "file_write".into(),
                    asked_by: "alice".into(),
                    rule: "rules[0]".into(),
                }),
                "ApprovalRequested",
                None,
            ),
            (
                Event::Approval(ApprovalEvent {
                    approval_id: approval,
                    verdict: jig_model::Verdict::Denied,
                    by: "bob".into(),
                    reason: None,
                    resumed_as: None,
                }),
                "ApprovalDecided",
                None,
            ),
            (
                Event::Runbook(RunbookEvent {
                    run_id: "run".into(),
                    runbook: "deploy".into(),
                    status: "paused".into(),
                }),
                "RunbookRunChanged",
                None,
            ),
        ];
        for (event, name, envelope) in events {
            let wire = serde_json::to_value(&event).expect("serializes");
            assert_eq!(wire["event"], name, "{wire}");
            assert_eq!(wire["type"].as_str(), envelope, "{wire}");
        }
    }
}
