//! One person's event stream (`/api/events`), as the workbench keeps it: a WebSocket that is
//! opened again when it drops (an instance killed and restarted), each gap marked so that the
//! reader knows which events it may have missed and re-reads what it follows.

use std::time::Duration;

use futures_util::StreamExt;
use serde_json::Value;
use tokio::sync::mpsc;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;

/// What the stream delivers.
#[derive(Debug)]
pub enum Delivery {
    /// An event.
    Event(Value),
    /// The socket dropped: events from here until `Connected` may be lost.
    Gap,
    /// Open (the first time, or again after a gap).
    Connected,
}

/// Follow `addr`'s events as the person of `token` until the receiver is dropped.
pub fn follow(addr: String, token: String) -> mpsc::UnboundedReceiver<Delivery> {
    let (tx, rx) = mpsc::unbounded_channel();
    tokio::spawn(async move {
        let mut backoff = Duration::from_millis(50);
        loop {
            let Ok(mut request) = format!("ws://{addr}/api/events").into_client_request() else {
                return;
            };
            let Ok(header) = format!("Bearer {token}").parse() else { return };
            request.headers_mut().insert("Authorization", header);
            match tokio_tungstenite::connect_async(request).await {
                Ok((mut socket, _)) => {
                    backoff = Duration::from_millis(50);
                    if tx.send(Delivery::Connected).is_err() {
                        return;
                    }
                    while let Some(message) = socket.next().await {
                        let Ok(message) = message else { break };
                        if let Message::Text(text) = message {
                            let value = serde_json::from_str(&text).unwrap_or(Value::Null);
                            if tx.send(Delivery::Event(value)).is_err() {
                                return;
                            }
                        }
                    }
                    if tx.send(Delivery::Gap).is_err() {
                        return;
                    }
                }
                Err(_) => {
                    if tx.is_closed() {
                        return;
                    }
                    tokio::time::sleep(backoff).await;
                    backoff = (backoff * 2).min(Duration::from_secs(1));
                }
            }
        }
    });
    rx
}
