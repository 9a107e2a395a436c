//! `/api/events`: one WebSocket carrying the engine's events as seed 002's envelopes
//! (`EventMessage`, `Heartbeat`, `ToolResponse`) and Jig's registry and approval events.

use axum::extract::State;
use axum::extract::ws::{Message, WebSocket, WebSocketUpgrade};
use axum::response::Response;
use serde::Serialize;
use tokio::sync::broadcast::Receiver;
use tokio::sync::broadcast::error::RecvError;

use crate::state::AppState;

/// Upgrade to the event stream.
#[utoipa::path(get, path = "/api/events", operation_id = "events", tag = "events",
    responses((status = 101, description = "WebSocket of JSON events")))]
pub async fn stream(State(state): State<AppState>, upgrade: WebSocketUpgrade) -> Response {
    let events = state.engine.subscribe();
    upgrade.on_upgrade(move |socket| forward(socket, events))
}

/// What the stream carries: an engine event, or word that some were lost. The WebSocket and the
/// desktop app's window events send the same.
#[derive(Debug, Clone, Serialize)]
#[serde(untagged)]
pub enum Outgoing {
    /// One engine event.
    Event(jig_engine::Event),
    /// A slow listener lost events: it should re-read what it shows.
    Lost {
        /// Always `EventsLost`.
        event: &'static str,
        /// How many.
        missed: u64,
    },
}

/// The next thing to send, or `None` when the engine has gone.
pub async fn next(events: &mut Receiver<jig_engine::Event>) -> Option<Outgoing> {
    match events.recv().await {
        Ok(event) => Some(Outgoing::Event(event)),
        Err(RecvError::Lagged(missed)) => Some(Outgoing::Lost { event: "EventsLost", missed }),
        Err(RecvError::Closed) => None,
    }
}

async fn forward(mut socket: WebSocket, mut events: Receiver<jig_engine::Event>) {
    loop {
        tokio::select! {
            outgoing = next(&mut events) => {
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
