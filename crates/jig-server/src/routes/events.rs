//! `/api/events`: one WebSocket carrying the engine's events as seed 002's envelopes
//! (`EventMessage`, `Heartbeat`, `ToolResponse`) and Jig's registry and approval events.

use axum::extract::State;
use axum::extract::ws::{Message, WebSocket, WebSocketUpgrade};
use axum::response::Response;
use tokio::sync::broadcast::error::RecvError;

use crate::state::AppState;

/// Upgrade to the event stream.
#[utoipa::path(get, path = "/api/events", operation_id = "events", tag = "events",
    responses((status = 101, description = "WebSocket of JSON events")))]
pub async fn stream(State(state): State<AppState>, upgrade: WebSocketUpgrade) -> Response {
    let events = state.engine.subscribe();
    upgrade.on_upgrade(move |socket| forward(socket, events))
}

async fn forward(
    mut socket: WebSocket,
    mut events: tokio::sync::broadcast::Receiver<jig_engine::Event>,
) {
    loop {
        tokio::select! {
            event = events.recv() => match event {
                Ok(event) => {
                    let Ok(text) = serde_json::to_string(&event) else { continue };
                    if socket.send(Message::Text(text.into())).await.is_err() {
                        return;
                    }
                }
                // A slow client lost events: tell it, so it re-reads what it shows.
                Err(RecvError::Lagged(missed)) => {
                    let text = format!("{{\"event\":\"EventsLost\",\"missed\":{missed}}}");
                    if socket.send(Message::Text(text.into())).await.is_err() {
                        return;
                    }
                }
                Err(RecvError::Closed) => return,
            },
            incoming = socket.recv() => match incoming {
                Some(Ok(Message::Close(_)) | Err(_)) | None => return,
                Some(Ok(_)) => {}
            },
        }
    }
}
