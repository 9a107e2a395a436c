//! `/api/events`: one WebSocket carrying the engine's events as seed 002's envelopes
//! (`EventMessage`, `Heartbeat`, `ToolResponse`) and Jig's registry and approval events.

use axum::Extension;
use axum::extract::State;
use axum::extract::ws::{Message, WebSocket, WebSocketUpgrade};
use axum::response::Response;
use jig_engine::{Subscription, Viewer};
use serde::Serialize;
use tokio::sync::broadcast::error::RecvError;

use crate::auth::{Person, Role};
use crate::state::AppState;

/// Upgrade to the event stream.
#[utoipa::path(get, path = "/api/events", operation_id = "events", tag = "events",
    responses((status = 101, description = "WebSocket of JSON events")))]
pub async fn stream(
    State(state): State<AppState>,
    Extension(person): Extension<Person>,
    upgrade: WebSocketUpgrade,
) -> Response {
    let events = state.engine.subscribe();
    let viewer = viewer_of(&person);
    upgrade.on_upgrade(move |socket| forward(socket, events, viewer))
}

/// Whose events `person` receives: an administrator every call's, anyone else their own calls'
/// (another person's output may hold what only the audit's redaction should show).
pub fn viewer_of(person: &Person) -> Viewer {
    if person.role == Role::Admin { Viewer::All } else { Viewer::Principal(person.name.clone()) }
}

/// What the stream carries: an engine event, or word that some were lost. The WebSocket and the
/// desktop app's window events send the same.
#[derive(Debug, Clone, Serialize)]
#[serde(untagged)]
pub enum Outgoing {
    /// One engine event.
    Event(jig_engine::Event),
    /// A slow listener lost events: it should re-read what it shows.
    Lost(EventsLost),
}

/// Sent instead of the events a slow listener lost: whatever it shows must be read again.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, utoipa::ToSchema)]
pub struct EventsLost {
    /// Always `EventsLost`.
    pub event: EventsLostName,
    /// How many events were lost.
    pub missed: u64,
}

/// The one name a lost-events notice carries in `event`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, utoipa::ToSchema)]
pub enum EventsLostName {
    /// `"EventsLost"`.
    EventsLost,
}

/// The next thing `viewer` may be sent, or `None` when the engine has gone.
pub async fn next(events: &mut Subscription, viewer: &Viewer) -> Option<Outgoing> {
    match events.recv_as(viewer).await {
        Ok(event) => Some(Outgoing::Event(event)),
        Err(RecvError::Lagged(missed)) => {
            Some(Outgoing::Lost(EventsLost { event: EventsLostName::EventsLost, missed }))
        }
        Err(RecvError::Closed) => None,
    }
}

async fn forward(mut socket: WebSocket, mut events: Subscription, viewer: Viewer) {
    loop {
        tokio::select! {
            outgoing = next(&mut events, &viewer) => {
                let Some(outgoing) = outgoing else { return };
                let Ok(text) = serde_json::to_string(&outgoing) else { continue };
                if socket.send(Message::Text(text.into())).await.is_err() {
                    return;
                }
            }
            incoming = socket.recv() => match incoming {
                Some(Ok(Message::Close(_)) | Err(_)) | None => return,
                Some(Ok(_)) => {}
            },
        }
    }
}
