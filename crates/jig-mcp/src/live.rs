//! A call while it runs: the engine's events for it become MCP notifications (progress when
//! the client sent a progress token, the tool's log lines at the level the client set), and
//! the client's `notifications/cancelled` stops it through the engine, which records it.

#![allow(deprecated)] // MCP logging: deprecated by a later revision, current in 2025-11-25.

use std::sync::Arc;

use jig_engine::{CallContext, Engine, Event, Subscription, ToolRequest, ToolResponse};
use jig_model::envelope::EventMessage;
use rmcp::model::{
    LoggingLevel, LoggingMessageNotificationParam, ProgressNotificationParam, ProgressToken,
};
use rmcp::service::{Peer, RoleServer};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

/// What the client asked to hear about a call.
#[derive(Debug, Clone)]
pub struct Listener {
    /// Where notifications go.
    pub peer: Peer<RoleServer>,
    /// The request's progress token, when it sent one.
    pub progress: Option<ProgressToken>,
    /// The least severe log level the client wants, when it set one.
    pub log_level: Option<LoggingLevel>,
}

impl Listener {
    fn wants_events(&self) -> bool {
        self.progress.is_some() || self.log_level.is_some()
    }
}

/// Run `request` through the engine, forwarding its events to `listener` and stopping it when
/// `stop` fires (the client cancelled, or went away).
pub async fn dispatch(
    engine: &Arc<Engine>,
    request: ToolRequest,
    context: CallContext,
    stop: &CancellationToken,
    listener: &Listener,
) -> ToolResponse {
    // Subscribed before the call starts, so no event of it is missed.
    let mut events = listener.wants_events().then(|| engine.subscribe());
    let request_id = request.request_id.clone();
    let cancel = context.cancel.clone();
    let mut forwarder = Forwarder { listener, request_id, step: 0.0 };
    let call = engine.dispatch(request, context);
    tokio::pin!(call);
    let mut stopped = false;
    loop {
        tokio::select! {
            biased;
            response = &mut call => {
                // What the call emitted just before it answered is still queued: send it first.
                if let Some(events) = events.as_mut() {
                    while let Ok(event) = events.try_recv() {
                        forwarder.forward(event).await;
                    }
                }
                return response;
            }
            () = stop.cancelled(), if !stopped => {
                cancel.cancel();
                stopped = true;
            }
            Some(event) = next(&mut events) => forwarder.forward(event).await,
        }
    }
}

async fn next(events: &mut Option<Subscription>) -> Option<Event> {
    match events {
        Some(events) => loop {
            match events.recv().await {
                Ok(event) => return Some(event),
                // A slow client lost some events; later ones still come.
                Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {}
                Err(tokio::sync::broadcast::error::RecvError::Closed) => {
                    return std::future::pending().await;
                }
            }
        },
        None => std::future::pending().await,
    }
}

struct Forwarder<'a> {
    listener: &'a Listener,
    request_id: String,
    /// Progress without a percentage still has to increase.
    step: f64,
}

impl Forwarder<'_> {
    async fn forward(&mut self, event: Event) {
        let Event::Message(message) = event else { return };
        if message.request_id != self.request_id {
            return;
        }
        match message.event.as_str() {
            "TaskProgress" => self.progress(message).await,
            "OutputChunk" => self.log(message).await,
            _ => {}
        }
    }

    async fn progress(&mut self, message: EventMessage) {
        let Some(token) = &self.listener.progress else { return };
        let progress =
            message.progress.unwrap_or(jig_model::envelope::Progress { pct: None, message: None });
        let (value, total) = match progress.pct {
            Some(pct) => (pct.max(self.step), Some(100.0)),
            None => (self.step + 1.0, None),
        };
        self.step = value;
        let mut param = ProgressNotificationParam::new(token.clone(), value);
        param.total = total;
        param.message = progress.message.filter(|m| !m.is_empty());
        let _ = self.listener.peer.notify_progress(param).await;
    }

    async fn log(&self, message: EventMessage) {
        let Some(wanted) = self.listener.log_level else { return };
        let data = message.data.unwrap_or_default();
        // A tool's own log lines are info; what it printed besides is debug.
        let level = match data.get("stream").and_then(Value::as_str) {
            Some("log") => LoggingLevel::Info,
            _ => LoggingLevel::Debug,
        };
        if severity(level) < severity(wanted) {
            return;
        }
        let text = data.get("text").and_then(Value::as_str).unwrap_or_default();
        let param = LoggingMessageNotificationParam::new(level, Value::String(text.to_owned()))
            .with_logger(self.request_id.clone());
        let _ = self.listener.peer.notify_logging_message(param).await;
    }
}

/// RFC 5424's order of MCP's levels, least severe first.
pub fn severity(level: LoggingLevel) -> u8 {
    match level {
        LoggingLevel::Debug => 0,
        LoggingLevel::Info => 1,
        LoggingLevel::Notice => 2,
        LoggingLevel::Warning => 3,
        LoggingLevel::Error => 4,
        LoggingLevel::Critical => 5,
        LoggingLevel::Alert => 6,
        LoggingLevel::Emergency => 7,
    }
}
